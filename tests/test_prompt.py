"""`juge prompt` and `juge run --dry-run` print what the provider really receives; `juge show` filters."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[1]
BAKERY = REPO / "examples" / "bakery" / "eval.toml"


def _sent(db: Path, item_id: str, judge: str, order: str | None = None) -> list[dict]:
    """The messages of the call logged for (item, judge, order) in the store."""
    rows = sqlite3.connect(db).execute("SELECT request FROM calls").fetchall()
    for (raw,) in rows:
        request = json.loads(raw)
        meta = request.get("meta") or {}
        if meta.get("item_id") == item_id and meta.get("judge") == judge and meta.get("order") == order:
            return request["messages"]
    raise AssertionError(f"no call logged for {item_id} {judge} {order}")


def test_prompt_prints_what_the_run_sends(tmp_path, monkeypatch, capsys):
    project = tmp_path / "p"
    run_cli(monkeypatch, capsys, "init", str(project), "--kind", "pairwise")
    monkeypatch.chdir(project)
    assert run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress")[0] == 0
    for order in ("12", "21"):
        code, out, _ = run_cli(
            monkeypatch, capsys, "prompt", "better", "--case", "shipping-03", "--order", order, "--json", "-"
        )
        assert code == 0
        (shown,) = json.loads(out)
        assert shown["order"] == order and shown["case_id"] == "shipping-03"
        assert shown["messages"] == _sent(project / ".juge" / "juge.db", "shipping-03", "better", order)
    # The terminal form prints the same text, with no line break of its own even in a narrow terminal.
    code, out, _ = run_cli(monkeypatch, capsys, "prompt", "better", "--case", "shipping-03", columns=40)
    assert "How fast is express delivery?" in out and "<response_b>" in out
    lines = set(out.splitlines())
    sent = [line for m in shown["messages"] for line in m["content"].splitlines()]
    assert max(map(len, sent)) > 40 and all(line in lines for line in sent)


def test_prompt_with_a_judge_file_and_bad_names(tmp_path, monkeypatch, capsys):
    judge = REPO / "examples" / "bakery" / "judges" / "faithful.toml"
    cases = REPO / "examples" / "bakery" / "cases.jsonl"
    code, out, _ = run_cli(monkeypatch, capsys, "prompt", str(judge), "--cases", str(cases), "--json", "-")
    assert code == 0
    (shown,) = json.loads(out)
    assert shown["case_id"] == "hours-1" and shown["judge"] == "faithful"
    assert run_cli(monkeypatch, capsys, "prompt", str(judge), "--cases", str(cases), "--case", "nope")[0] == 2
    assert run_cli(monkeypatch, capsys, "prompt", "missing", "--eval", str(BAKERY))[0] == 2
    assert run_cli(monkeypatch, capsys, "prompt", "faithful", "--eval", str(BAKERY), "--order", "12")[0] == 2


def test_dry_run_counts_the_calls_a_run_makes_and_writes_nothing(tmp_path, monkeypatch, capsys):
    db = tmp_path / "juge.db"
    dry = tmp_path / "dry.json"
    code, _, _ = run_cli(monkeypatch, capsys, "run", str(BAKERY), "--dry-run", "--json", str(dry), "--db", str(db))
    assert code == 0 and not db.exists()
    planned = json.loads(dry.read_text())
    summary = tmp_path / "summary.json"
    run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", str(db), "--json", str(summary))
    made = json.loads(summary.read_text())
    assert sum(planned["calls"].values()) == made["calls"]
    for name, n in planned["calls"].items():
        assert made["judges"][name]["n"] == n
    first = planned["examples"][0]
    assert first["messages"] == _sent(db, first["case_id"], first["judge"])


def test_show_filters(tmp_path, monkeypatch, capsys):
    db = tmp_path / "juge.db"
    summary = tmp_path / "s.json"
    run_cli(monkeypatch, capsys, "run", str(BAKERY), "--no-progress", "--db", str(db), "--json", str(summary))
    run_id = json.loads(summary.read_text())["run_id"]
    rows = sqlite3.connect(db).execute("SELECT item_id, judge, outcome, verdict FROM judgments").fetchall()
    unparsed = {(i, j) for i, j, o, _ in rows if o == "unparsed"}
    assert unparsed  # the example has one on purpose

    def shown(*extra: str) -> tuple[list[str], str]:
        code, out, err = run_cli(monkeypatch, capsys, "show", run_id, "--db", str(db), *extra)
        assert code == 0, err
        return [line.strip() for line in out.splitlines() if line.strip().startswith("judge ")], out

    judged, _ = shown("--outcome", "unparsed")
    assert len(judged) == len(unparsed) and all("unparsed" in line for line in judged)

    failing = {i for i, _, o, v in rows if o == "ok" and v == '"FAIL"'}
    _, out = shown("--outcome", "fail", "--judge", "faithful")
    assert {c for c in failing if f" {c} " in out} == failing
    judged, _ = shown("--outcome", "fail", "--judge", "faithful")
    assert all(line.startswith("judge faithful") for line in judged)

    judged, _ = shown("--judge", "quality", "--limit", "2")
    assert len(judged) == 2 and all(line.startswith("judge quality") for line in judged)
    assert run_cli(monkeypatch, capsys, "show", run_id, "--db", str(db), "--outcome", "weird")[0] == 2
    assert run_cli(monkeypatch, capsys, "show", run_id, "--db", str(db), "--judge", "nobody")[0] == 2


def test_prompt_and_dry_run_from_python_equal_the_cli_json(tmp_path, monkeypatch, capsys):
    import jsonschema
    import pytest

    import juge

    schemas = REPO / "docs" / "schema"
    code, out, err = run_cli(
        monkeypatch, capsys, "prompt", "quality", "--eval", str(BAKERY), "--case", "hours-1", "--json", "-"
    )
    assert code == 0, err
    written = json.loads(out)
    jsonschema.validate(written, json.loads((schemas / "prompt.json").read_text()))
    prompts = juge.prompt("quality", eval_file=BAKERY, case="hours-1")
    assert all(isinstance(p, juge.RenderedPrompt) for p in prompts)
    assert [p.to_dict() for p in prompts] == written
    assert prompts[-1].case_id == "hours-1" and prompts[-1].step == "verdict"
    assert any("Are you open on Sunday morning?" in m["content"] for m in prompts[-1].messages)

    dry = tmp_path / "dry.json"
    code, _, err = run_cli(monkeypatch, capsys, "run", str(BAKERY), "--dry-run", "--repeat", "2", "--json", str(dry))
    assert code == 0, err
    written = json.loads(dry.read_text())
    jsonschema.validate(written, json.loads((schemas / "dry_run.json").read_text()))
    planned = juge.dry_run(BAKERY, repeat=2)
    assert isinstance(planned, juge.DryRun) and planned.to_dict() == written
    assert planned.n_cases == 8 and set(planned.calls.values()) == {16}  # 8 single answers, twice each
    assert juge.dry_run(BAKERY, only=["hours-1"]).calls == {"faithful": 1, "quality": 1}

    with pytest.raises(juge.InputError):
        juge.prompt("nobody", eval_file=BAKERY)
    with pytest.raises(juge.InputError):
        juge.prompt("quality", eval_file=BAKERY, case="no-such-case")
    with pytest.raises(juge.InputError):
        juge.dry_run(BAKERY, repeat=0)
