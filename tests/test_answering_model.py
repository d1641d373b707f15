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
