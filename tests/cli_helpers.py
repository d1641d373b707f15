"""Helpers for tests that drive the command line: write input files, run `juge ...` in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import typer


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run_cli(monkeypatch, capsys, *args: str, columns: int = 300) -> tuple[int, str, str]:
    """Run `juge ...` through the real entry point (so input errors exit 2); (exit code, stdout, stderr).
    The default width is wide enough that tables do not wrap the figures tests look for."""
    from juge import cli

    monkeypatch.setattr(sys, "argv", ["juge", *args])
    monkeypatch.setenv("COLUMNS", str(columns))
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def tiny_pairwise_study(tmp_path: Path, n: int = 20) -> list[str]:
    """A small pairwise study on disk: n items (the first half dev, the rest holdout), two raters who
    both say A, and a judge that flips with the order on every item. Returns the common CLI options."""
    items = write_jsonl(
        tmp_path / "items.jsonl",
        [
            {
                "item_id": f"i{k}",
                "question_id": k,
                "category": "writing",
                "split": "dev" if k < n // 2 else "holdout",
                "question": "q",
                "answer_1": "a",
                "answer_2": "bb",
                "reference": None,
                "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A"}],
            }
            for k in range(n)
        ],
    )
    calls = write_jsonl(
        tmp_path / "judgments.jsonl",
        [
            {
                "item_id": f"i{k}",
                "judge": "j",
                "model": "m",
                "prompt": "p",
                "order": o,
                "letter": letter,
                "outcome": "ok",
                "text": "x",
            }
            for k in range(n)
            for o, letter in (("12", "A"), ("21", "B"))
        ],
    )
    return ["--items", str(items), "--judgments", str(calls), "--db", str(tmp_path / "j.db"), "--resamples", "100"]


def _entry_point() -> typer.Typer:
    from juge import cli

    app = typer.Typer(add_completion=False)

    @app.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []})
    def juge(ctx: typer.Context) -> None:
        cli.main(list(ctx.args))

    return app


# `juge` through its real entry point, `juge.cli.main` (the one handler: an InputError exits 2, a Fault 3), for
# `CliRunner().invoke(juge_main, [...])`; `juge.cli.app` alone lets the error through (exit 1, `result.exception`).
juge_main = _entry_point()
