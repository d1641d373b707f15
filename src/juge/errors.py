"""Errors that reach the user. The CLI turns these into a message and exit code 2."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input or configuration: says what was wrong, where, and what to do.

    Build it with `where()` so every message names the file, line and field.
    """


def where(path: str | Path, line: int | None = None, field: str | None = None) -> str:
    loc = str(path)
    if line is not None:
        loc += f":{line}"
    if field:
        loc += f": field '{field}'"
    return loc


def input_error(path: str | Path, message: str, *, line: int | None = None, field: str | None = None) -> InputError:
    return InputError(f"{where(path, line, field)}: {message}")
