"""`juge route --eval` with `--base-url`, `--model` and `--api-key-env` (the options `run` and `probe` share):
the judge is called at the server named on the command line or by OPENAI_BASE_URL, with no API key, and the
model named replaces the eval file's (and must still be the policy's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_policy_json_schemas import validate

from cli_helpers import run_cli, write_jsonl
from juge.testing.mockserver import MockConfig, serve_in_thread

MODEL = "mock-judge-2026-01"
NOWHERE = "http://127.0.0.1:9/v1"  # nothing listens on the discard port


@pytest.fixture
def no_keys(monkeypatch, tmp_path):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUGE_HOME", str(tmp_path / "home"))


def write_eval(folder: Path, *, model: str, base_url: str | None) -> Path:
    options = f'options = {{ base_url = "{base_url}", retries = 0 }}' if base_url else ""
    path = folder / f"eval-{model}-{'url' if base_url else 'env'}.toml"
    path.write_text(
        f'name = "routing"\ncases = "cases.jsonl"\n[engine]\nretries = 0\n[provider]\nname = "openai"\n{options}\n'
        f'[[judges]]\nname = "grader"\nsetup = "passfail"\nmodel = "{model}"\ndescription = "The answer is right."\n'
    )
    return path


def case(item_id: str, category: str, split: str | None = None) -> dict:
    row = {"id": item_id, "group": item_id, "category": category, "question": f"Q {item_id}?", "output": "A."}
    return row | ({"split": split} if split else {})


def policy_from_a_run(monkeypatch, capsys, tmp_path: Path, server_url: str) -> Path:
    """A PASS/FAIL policy derived from a run of the judge at the mock server (people agree with it on easy items;
    30 items of each category: enough to decide, juge.policy.decision)."""
    db = str(tmp_path / "j.db")
    write_jsonl(tmp_path / "cases.jsonl", [case(f"d{k}", "easy" if k % 2 else "hard", "dev") for k in range(60)])
    eval_file = write_eval(tmp_path, model=MODEL, base_url=NOWHERE)
    code, out, err = run_cli(
        monkeypatch, capsys, "run", str(eval_file), "--base-url", server_url, "--db", db, "--no-progress",
        "--json", str(tmp_path / "run.json"),
    )  # fmt: skip
    assert code == 0, err
    run_id = json.loads((tmp_path / "run.json").read_text())["run_id"]
    from juge.store import Store

    with Store(tmp_path / "j.db") as store:
        verdicts = {j.item_id: j.verdict for j in store.judgments(run_id)}
    flip = {"PASS": "FAIL", "FAIL": "PASS"}
    labels = [
        {"item_id": i, "rater_id": r, "label": v if int(i[1:]) % 2 else flip[v]} for i, v in verdicts.items()
        for r in ("r1", "r2")
    ]  # fmt: skip
    write_jsonl(tmp_path / "labels.jsonl", labels)
    policy = tmp_path / "policy.json"
    code, out, err = run_cli(
        monkeypatch, capsys, "policy", "derive", "--run", run_id, "--labels", str(tmp_path / "labels.jsonl"),
        "--db", db, "-o", str(tmp_path / "P.md"), "--json", str(policy), "--resamples", "100",
    )  # fmt: skip
    assert code == 0, err
    return policy


def test_route_with_base_url_model_and_environment(monkeypatch, capsys, tmp_path, no_keys):
    new = write_jsonl(tmp_path / "new.jsonl", [case(f"n{k}", ["easy", "hard"][k % 2]) for k in range(6)])
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        policy = policy_from_a_run(monkeypatch, capsys, tmp_path, server.url)
        db = str(tmp_path / "j.db")

        # The eval file points nowhere and names another model: --base-url and --model put the calls right.
        other = write_eval(tmp_path, model="some-other-model", base_url=NOWHERE)
        before = server.stats()["answered"]
        code, out, err = run_cli(
            monkeypatch, capsys, "route", "--policy", str(policy), "--eval", str(other), "--items", str(new),
            "--base-url", server.url, "--model", MODEL, "--db", db, "--json", str(tmp_path / "r.json"),
        )  # fmt: skip
        assert code == 0, err
        routed = json.loads((tmp_path / "r.json").read_text())
        validate("route", routed)
        assert server.stats()["answered"] - before == routed["calls"] == 6
        assert [json.loads(line) for line in out.splitlines()] == routed["decisions"]
        assert {(d["category"], d["route"]) for d in routed["decisions"]} == {("easy", "judge"), ("hard", "person")}

        # Without --model the eval file's model is not the policy's: refused before any call.
        before = server.stats()["requests"]
        code, _, err = run_cli(
            monkeypatch, capsys, "route", "--policy", str(policy), "--eval", str(other), "--items", str(new),
            "--base-url", server.url, "--db", db,
        )  # fmt: skip
        assert code == 2 and "some-other-model" in err and server.stats()["requests"] == before

        # OPENAI_BASE_URL names the server when neither the eval file nor the command line does; no key needed.
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        plain = write_eval(tmp_path, model=MODEL, base_url=None)
        more = write_jsonl(tmp_path / "more.jsonl", [case(f"m{k}", "easy") for k in range(3)])
        code, out, err = run_cli(
            monkeypatch, capsys, "route", "--policy", str(policy), "--eval", str(plain), "--items", str(more),
            "--db", db,
        )  # fmt: skip
        assert code == 0, err
        assert [json.loads(line)["route"] for line in out.splitlines()] == ["judge"] * 3

        # --api-key-env names the variable the key is read from: with no server named anywhere, its absence is
        # what the error names (before any call).
        monkeypatch.delenv("OPENAI_BASE_URL")
        before = server.stats()["requests"]
        code, _, err = run_cli(
            monkeypatch, capsys, "route", "--policy", str(policy), "--eval", str(plain), "--items", str(more),
            "--api-key-env", "JUGE_TEST_NO_SUCH_KEY", "--db", db,
        )  # fmt: skip
        assert code == 2 and "JUGE_TEST_NO_SUCH_KEY" in err and server.stats()["requests"] == before


def test_endpoint_options_need_eval(monkeypatch, capsys, tmp_path, no_keys):
    policy = Path(__file__).parent / "missing.json"
    code, _, err = run_cli(
        monkeypatch, capsys, "route", "--policy", str(policy), "--item", "x.json", "--base-url", NOWHERE
    )  # fmt: skip
    assert code == 2 and "--eval" in err


def test_audit_of_a_passfail_run_shows_the_answer_and_the_judges_text(monkeypatch, capsys, tmp_path, no_keys):
    # A PASS/FAIL judgment has no order: the audit used to show "(none)" for the answer and the judge's text.
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        policy = policy_from_a_run(monkeypatch, capsys, tmp_path, server.url)
    run_id = json.loads((tmp_path / "run.json").read_text())["run_id"]
    code, out, err = run_cli(
        monkeypatch, capsys, "audit-sample", "--policy", str(policy), "--run", run_id, "--db", str(tmp_path / "j.db"),
        "-n", "3", "--seed", "1", "--json", str(tmp_path / "a.json"),
    )  # fmt: skip
    assert code == 0, err
    audit = json.loads((tmp_path / "a.json").read_text())
    validate("audit_sample", audit)
    assert len(audit["sample"]) == 3 and {s["category"] for s in audit["sample"]} == {"easy"}
    from juge.store import Store

    with Store(tmp_path / "j.db") as store:
        texts = {j.item_id: j.text for j in store.judgments(run_id)}
    for s in audit["sample"]:
        assert s["answer"] == "A." and s["judge_texts"] == {"text": texts[s["item_id"]]} and texts[s["item_id"]]
        assert f"judge: {texts[s['item_id']].splitlines()[0]}" in out
    assert "(none)" not in out


def test_juge_route_in_python_also_inside_a_running_event_loop(monkeypatch, capsys, tmp_path, no_keys):
    import asyncio

    import juge

    new = write_jsonl(tmp_path / "new.jsonl", [case(f"n{k}", ["easy", "hard"][k % 2]) for k in range(4)])
    with serve_in_thread(MockConfig(latency=0.0)) as server:
        policy = policy_from_a_run(monkeypatch, capsys, tmp_path, server.url)
        eval_file = write_eval(tmp_path, model=MODEL, base_url=NOWHERE)
        options = {"eval_file": eval_file, "items": new, "base_url": server.url, "db": tmp_path / "j.db"}

        async def in_a_notebook() -> juge.RouteResult:
            return juge.route(juge.PolicyResult.load(policy), **options)  # the engine runs in a worker thread

        first = asyncio.run(in_a_notebook())
        again = juge.route(str(policy), **options)
    assert isinstance(first, juge.RouteResult) and first.calls == 4 and again.calls == 0 and again.cache_hits == 4
    assert [d.route for d in first.decisions] == ["judge", "person"] * 2
    assert again.to_dict()["decisions"] == first.to_dict()["decisions"]
