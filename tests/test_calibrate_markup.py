"""Judge names, categories and labels are data: `juge calibrate` prints them literally, never as rich markup."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

MARKUP = "judge[/]x[bold]"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    from juge import cli

    monkeypatch.setattr(sys, "argv", ["juge", *args])
    monkeypatch.setenv("COLUMNS", "250")
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_pairwise_tables_print_a_judge_name_with_markup_literally(tmp_path: Path, monkeypatch, capsys) -> None:
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"item_id": f"i{k}", "question_id": k, "category": "[red]cat", "split": "dev", "question": "q",
         "answer_1": "a", "answer_2": "bb", "reference": None,
         "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A" if k % 2 else "B"}]}
        for k in range(6)])
    calls = write_jsonl(tmp_path / "judgments.jsonl", [
        {"item_id": f"i{k}", "judge": MARKUP, "model": "m[/]", "prompt": "p", "order": o, "letter": letter,
         "outcome": "ok", "text": "[/] x"} for k in range(6) for o, letter in (("12", "A"), ("21", "B"))])
    code, out, err = run_cli(monkeypatch, capsys, "calibrate", "--items", str(items), "--judgments", str(calls),
                             "--resamples", "20")
    assert code == 0, err
    assert f"{MARKUP}/p" in out  # in the rows and as the per-category column header
    assert out.count(f"{MARKUP}/p") >= 4 and "[red]cat" in out


def test_score_tables_print_a_judge_name_with_markup_literally(tmp_path: Path, monkeypatch, capsys) -> None:
    items = write_jsonl(tmp_path / "items.jsonl", [{"id": f"i{k}", "output": "x", "r1": k % 4 + 1, "r2": (k + 1) % 4 + 1}
                                                   for k in range(8)])
    calls = write_jsonl(tmp_path / "judgments.jsonl", [
        {"item_id": f"i{k}", "judge": MARKUP, "model": "m", "prompt": "p", "verdict": k % 4 + 1, "outcome": "ok",
         "text": "x"} for k in range(8)])
    code, out, err = run_cli(monkeypatch, capsys, "calibrate", "--items", str(items), "--label-cols", "r1,r2",
                             "--judgments", str(calls), "--resamples", "20")
    assert code == 0, err
    assert f"{MARKUP}/p" in out
