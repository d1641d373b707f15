"""The model a run, its dry run and `juge prompt` name is the one that answers: the eval's scripted stand-in
answers as its own `model`, whatever the judge file asks for (QA: runs showed the judge file's model)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli, write_jsonl


def write_eval(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "cases.jsonl", [{"id": f"c{k}", "question": "q", "output": f"answer {k}"} for k in range(3)])
    (tmp_path / "judge.toml").write_text(
        'name = "correct"\nsetup = "passfail"\ndescription = "Right?"\nmodel = "gpt-4o-mini"\n', encoding="utf-8"
    )
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n\n[[judges]]\nfile = "judge.toml"\n\n[provider]\nname = "scripted"\n\n'
        '[provider.options]\nmodel = "stand-in"\ndefault = "PASS\\nFine."\n',
        encoding="utf-8",
    )
    return tmp_path / "eval.toml"


def test_run_runs_dry_run_and_prompt_name_the_model_that_answers(monkeypatch, capsys, tmp_path: Path) -> None:
    path, db = write_eval(tmp_path), str(tmp_path / "j.db")
    code, _, _ = run_cli(monkeypatch, capsys, "run", str(path), "--db", db, "--json", str(tmp_path / "s.json"))
    assert code == 0
    summary = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert summary["judges"]["correct"]["model"] == ["stand-in"]  # what the judgments record
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--db", db, "--json", "-")
    assert code == 0
    (run,) = json.loads(out)
    assert [j["model"] for j in run["judges"]] == ["stand-in"], run
    code, _, _ = run_cli(monkeypatch, capsys, "run", str(path), "--dry-run", "--json", str(tmp_path / "d.json"))
    assert code == 0
    assert [p["model"] for p in json.loads((tmp_path / "d.json").read_text())["examples"]] == ["stand-in"]
    code, out, _ = run_cli(monkeypatch, capsys, "prompt", "correct", "--eval", str(path), "--json", "-")
    assert code == 0 and [p["model"] for p in json.loads(out)] == ["stand-in"]
    # a provider named on the command line answers as the model asked for (or its own, for a stand-in)
    code, _, _ = run_cli(
        monkeypatch, capsys, "run", str(path), "--dry-run", "--provider", "openai", "--json", str(tmp_path / "o.json")
    )
    assert code == 0
    assert [p["model"] for p in json.loads((tmp_path / "o.json").read_text())["examples"]] == ["gpt-4o-mini"]
    code, _, _ = run_cli(
        monkeypatch, capsys, "run", str(path), "--dry-run", "--provider", "scripted", "--json", str(tmp_path / "t.json")
    )
    assert code == 0
    assert [p["model"] for p in json.loads((tmp_path / "t.json").read_text())["examples"]] == ["scripted-1"]


STAND_IN = '\n[provider_options]\nmodel = "stand-in"\ndefault = "{answer}\\nFine."\n'


def write_judge(tmp_path: Path, name: str, setup: str, answer: str) -> Path:
    """A judge file asking for gpt-4o-mini from the scripted stand-in, which answers as 'stand-in'."""
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nsetup = "{setup}"\nmodel = "gpt-4o-mini"\nprovider = "scripted"\n'
        f'description = "Good?"\n' + STAND_IN.format(answer=answer),
        encoding="utf-8",
    )
    return path


def recorded_models(monkeypatch, capsys, db: str) -> dict[str, tuple[list[str], set[str]]]:
    """Per run name: the models its stored config names, and the models its judgments record."""
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--all", "--db", db, "--json", "-")  # tune and probe runs too
    assert code == 0
    found = {}
    for run in json.loads(out):
        code, shown, _ = run_cli(monkeypatch, capsys, "show", run["id"], "--db", db, "--json", "-")
        assert code == 0
        judged = {j["model"] for case in json.loads(shown)["cases"] for j in case["judgments"]}
        found[run["name"]] = ([j["model"] for j in run["judges"]], judged)
    return found


def test_tune_its_holdout_test_and_the_probe_record_the_model_that_answers(monkeypatch, capsys, tmp_path: Path) -> None:
    rows = [{"id": f"i{k}", "group": f"q{k}", "split": "dev" if k < 12 else "holdout", "question": f"Q{k}?",
             "output": f"A{k}"} for k in range(18)]  # fmt: skip
    write_jsonl(tmp_path / "items.jsonl", rows)
    labels = [{"item_id": r["id"], "rater_id": who, "label": "PASS"} for r in rows for who in ("ann", "bob")]
    write_jsonl(tmp_path / "labels.jsonl", labels)
    db = str(tmp_path / "j.db")
    code, _, err = run_cli(
        monkeypatch, capsys, "tune", "--judge", str(write_judge(tmp_path, "helpful", "passfail", "PASS")),
        "--items", str(tmp_path / "items.jsonl"), "--labels", str(tmp_path / "labels.jsonl"),
        "--out", str(tmp_path / "tuned"), "--db", db, "--test", "--folds", "2", "--shots", "", "--resamples", "100",
    )  # fmt: skip
    assert code == 0, err
    pair = write_judge(tmp_path, "pair", "pairwise", "A")
    code, _, err = run_cli(
        monkeypatch, capsys, "probe", "injection", "--judge", str(pair), "--db", db, "--limit", "2",
        "--json", str(tmp_path / "probe.json"),
    )  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "probe.json").read_text(encoding="utf-8"))["judge"]["model"] == "stand-in"
    found = recorded_models(monkeypatch, capsys, db)
    assert set(found) == {"tune", "tune --test", "probe injection: pair"}, found
    listed = run_cli(monkeypatch, capsys, "runs", "--all", "--db", db, "--json", "-")[1]
    kinds = {r["name"]: r["kind"] for r in json.loads(listed)}
    assert kinds == {"tune": "tune", "tune --test": "tune-holdout", "probe injection: pair": "probe"}
    assert json.loads(run_cli(monkeypatch, capsys, "runs", "--db", db, "--json", "-")[1]) == []  # none is an eval's
    for name, (config, judged) in found.items():
        assert set(config) == {"stand-in"} and judged == {"stand-in"}, (name, config, judged)


def test_a_failed_call_records_the_model_that_was_to_answer(monkeypatch, capsys, tmp_path: Path) -> None:
    path, db = write_eval(tmp_path), str(tmp_path / "j.db")
    # every first call fails with a 400 (not retried): each judgment is an error
    path.write_text(path.read_text(encoding="utf-8") + "\n[provider.options.fail]\ntimes = 1\nstatus = 400\n")
    run_cli(monkeypatch, capsys, "run", str(path), "--db", db)
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--db", db, "--json", "-")
    (run,) = json.loads(out)
    code, shown, _ = run_cli(monkeypatch, capsys, "show", run["id"], "--db", db, "--json", "-")
    judgments = [j for case in json.loads(shown)["cases"] for j in case["judgments"]]
    assert {j["outcome"] for j in judgments} == {"error"}, judgments
    assert {j["model"] for j in judgments} == {"stand-in"} and [j["model"] for j in run["judges"]] == ["stand-in"]
