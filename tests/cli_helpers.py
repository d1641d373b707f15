"""Helpers for tests that drive the command line: write input files, run `juge ...` in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run `juge ...` through the real entry point (so input errors exit 2); (exit code, stdout, stderr)."""
    from juge import cli

    monkeypatch.setattr(sys, "argv", ["juge", *args])
    monkeypatch.setenv("COLUMNS", "300")  # wide enough that tables do not wrap the figures tests look for
    with pytest.raises(SystemExit) as exc:
        cli.main()
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err
