"""Errors that reach the user. Every error juge raises on purpose is a JugeError; the CLI (`juge.cli.main`,
the one handler) prints its message and exits 2 for an InputError, 3 for a Fault.

    JugeError
    ├── InputError                  exit 2: bad input or configuration; says what, where, what to do
    │   ├── RunNotFound             (also LookupError) no stored run with this id, or an ambiguous prefix
    │   ├── CaseLacksField          a case lacks a field the judge's template uses
    │   ├── NotPairs                a pairwise study of items that do not hold two answers each
    │   ├── HoldoutAlreadyUsed      a holdout split tested before, without force
    │   ├── NewerStoreError         a store written by a newer juge
    │   ├── UnknownProvider         (also ValueError) a provider name that is not registered
    │   ├── CheckConfigError        (also ValueError) a check's options are wrong
    │   ├── LabelError              (also ValueError) a request the label store refuses
    │   │   └── ReleasedError       a label for an assignment that was released
    │   ├── ChooseProject           the label app cannot tell which project a request is for
    │   └── _BadJSON, _DuplicateKey (also ValueError) private: a repeated key in JSON (parsers, readers)
    └── Fault                       exit 3: nothing could be measured, or the store could not be written
        ├── ProviderError           a call that did not return an answer
        │   └── DuplicateKeyError   (also ValueError) a server's JSON with a key twice
        └── ProviderClosed          (also RuntimeError) a call on a provider that was closed
            └── BatchPending        requests still in a provider's batches (`juge run` exits 75)

The built-in base each class had before (LookupError, ValueError, RuntimeError) stays beside it, so code
that catches those keeps working. The same mistake raises the same class from every API function: an
unknown run id is a RunNotFound from `juge.show`, `juge.compare`, `juge.export`, `juge.calibrate(run=...)` alike.
"""

from __future__ import annotations

import difflib
import re
import tomllib
import typing
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError


class JugeError(Exception):
    """An error juge raises on purpose: its message is for the user (see the tree above). Raised only as
    one of its subclasses; `exit_code` is what `juge` exits with when it reaches the command line."""

    exit_code = 1


class InputError(JugeError):
    """Bad input or configuration: says what was wrong, where, and what to do.

    Build it with `input_error()` so every message names the file, line and field; the
    parts stay on the error (`path`, `line`, `field`, `detail`) so a caller that knows
    more (the line of a TOML key) can say it again with that added.
    """

    exit_code = 2
    path: str | None = None
    line: int | None = None
    field: str | None = None
    detail: str | None = None


class Fault(JugeError):
    """Nothing could be measured (every call failed), or the store could not be written (disk full,
    permissions): says what failed first and what to do. Exit code 3."""

    exit_code = 3


class RowsName(str):
    """The name of records held in memory (the API argument, e.g. ``items``). A place in them reads as
    Python would index them, ``items[3].question`` (the row counted from 0), not ``file:line: field``."""


def where(path: str | Path, line: int | None = None, field: str | None = None) -> str:
    if isinstance(path, RowsName):
        return str(path) + (f"[{line - 1}]" if line is not None else "") + (f".{field}" if field else "")
    loc = str(path)
    if line is not None:
        loc += f":{line}"
    if field:
        loc += f": field '{field}'"
    return loc


def input_error(path: str | Path, message: str, *, line: int | None = None, field: str | None = None) -> InputError:
    exc = InputError(f"{where(path, line, field)}: {message}")
    exc.path, exc.line, exc.field, exc.detail = str(path), line, field, message
    return exc


# --- pydantic validation: the one place its errors become InputErrors -------------------

_MESSAGES = {"missing": "required field is missing", "extra_forbidden": "unknown key (check its spelling)"}


def pydantic_field(
    exc: ValidationError, prefix: str = "", known: Iterable[str] | type[BaseModel] = ()
) -> tuple[str | None, str]:
    """The first error of a pydantic validation as (dotted field, message in juge's words).

    An unknown key is reported before a missing one: a misspelt required key is both, and the key the user
    wrote is the one to name (with the closest missing or known key as a suggestion). `known` is the
    top-level keys, or the model validated, whose nested tables then suggest their own keys too
    (``engine.concurency`` -> ``concurrency``).
    """
    errors = exc.errors()
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    err = unknown[0] if unknown else errors[0]
    loc = [str(p) for p in err["loc"] if p != "[key]"]  # a bad dict key: its name is the field
    field = ".".join([prefix, *loc] if prefix else loc) or None
    message = _MESSAGES.get(err["type"]) or err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if unknown and loc:
        siblings = [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and e["loc"][:-1] == err["loc"][:-1]]
        if isinstance(known, type):
            keys = _keys_at(known, err["loc"][:-1])
        else:
            keys = list(known) if len(loc) == 1 else []
        close = difflib.get_close_matches(loc[-1], siblings or keys, n=1)
        if close:
            message = f"unknown key (did you mean '{close[0]}'?)"
    return field, message


def _keys_at(model: type[BaseModel], loc: Sequence[int | str]) -> list[str]:
    """The keys of the table at `loc` in `model` (list indexes and dict keys skipped), or none when the
    path leaves the models."""
    current: type[BaseModel] | None = model
    for part in loc:
        if current is None or isinstance(part, int):
            continue
        info = current.model_fields.get(part)
        if info is None:  # a dict's key: its values' model is the next table
            continue
        current = next(_model_types(info.annotation), None)
    if current is None:
        return []
    return [info.alias or name for name, info in current.model_fields.items()]


def _model_types(annotation: Any) -> Iterator[type[BaseModel]]:
    """The pydantic models an annotation holds (in an Optional, a list, a dict's values)."""
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):  # pydantic stays unimported here
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _model_types(arg)


def validation_error(
    path: str | Path,
    exc: ValidationError,
    *,
    line: int | None = None,
    prefix: str = "",
    known: Iterable[str] | type[BaseModel] = (),
) -> InputError:
    """An InputError naming `path`, `line` and the dotted field of the first error of `exc`."""
    field, message = pydantic_field(exc, prefix, known)
    return input_error(path, message, line=line, field=field)


# --- TOML files: where a key is ---------------------------------------------------------

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column \d+\)$")


MAX_TOML_DEPTH = 64  # arrays and inline tables inside each other; juge's files need a handful


def parse_toml(path: str | Path, raw: bytes) -> tuple[dict[str, Any], str]:
    """(the TOML document, its text) of a file's bytes; every failure is one InputError naming the file (and the
    line where it can): not UTF-8, invalid TOML, or arrays and inline tables nested deeper than MAX_TOML_DEPTH
    (which would exhaust Python's recursion). A UTF-8 byte order mark, which some editors write, is read as
    nothing (TOML forbids it, but it changes nothing in the document)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise input_error(path, "not UTF-8", line=raw[: exc.start].count(b"\n") + 1) from None
    text = text.removeprefix("\ufeff")
    too_deep = _line_deeper_than(text, MAX_TOML_DEPTH)
    if too_deep is not None:
        raise input_error(path, _TOO_DEEP, line=too_deep)
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise toml_syntax_error(path, exc, text) from None
    except RecursionError:  # nesting the bracket count above missed (it skips strings roughly)
        raise input_error(path, _TOO_DEEP) from None


_TOO_DEEP = f"arrays or inline tables nested more than {MAX_TOML_DEPTH} deep; juge's files need a few levels"


def _line_deeper_than(text: str, limit: int) -> int | None:
    """The 1-based line where brackets (``[``, ``{``) outside strings and comments first nest deeper than
    `limit`, or None. A quick scan, not a TOML parser: enough to name the line of a hostile file."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth, line, quote, i = 0, 1, "", 0
    while i < len(text):
        ch = text[i]
        if ch == "\n":
            line += 1
        if quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def toml_syntax_error(path: str | Path, exc: tomllib.TOMLDecodeError, text: str) -> InputError:
    """`path:line: invalid TOML: ...` from tomllib's message, which ends '(at line L, column C)' or
    '(at end of document)' (then the last line)."""
    message = str(exc)
    found = _TOML_POSITION.search(message)
    if found:
        return input_error(path, f"invalid TOML: {message[: found.start()]}", line=int(found.group(1)))
    if message.endswith("(at end of document)"):
        return input_error(
            path,
            f"invalid TOML: {message.removesuffix(' (at end of document)')} at the end of the file",
            line=max(1, len(text.splitlines())),
        )
    return input_error(path, f"invalid TOML: {message}")


def _key_lines(lines: list[str], key: str) -> list[int]:
    """1-based numbers of the lines that set `key` (`key = ...`, also inside an inline table)."""
    pattern = re.compile(rf"(^|[{{,]\s*)[\"']?{re.escape(key)}[\"']?\s*=")
    return [n for n, line in enumerate(lines, start=1) if pattern.search(line.strip())]


def _headers(lines: list[str], name: str, array: bool) -> list[int]:
    """Lines of the `[[name]]` headers (array) or the `[name]` / `[parent.name]` header."""
    pattern = rf"^\[\[\s*{re.escape(name)}\s*\]\]" if array else rf"^\[\s*(?:[\w.-]+\.)?{re.escape(name)}\s*\]"
    header = re.compile(pattern)
    return [n for n, line in enumerate(lines, start=1) if header.match(line.strip())]


def _section(lines: list[str], name: str, index: str) -> tuple[int, int] | None:
    """The lines (first, end) of table `name` (its `index`-th entry for an array of tables)."""
    starts = _headers(lines, name, array=bool(index))
    k = int(index) if index else 0
    if k >= len(starts):
        return None
    following = [n for n, line in enumerate(lines, start=1) if n > starts[k] and line.strip().startswith("[")]
    return starts[k], (following[0] if following else len(lines) + 1)


def toml_key_line(text: str, field: str) -> int | None:
    """The line of a dotted field (`engine.concurrency`, `judges[1].setup`, `checks[0]`) in a TOML
    file's text, or None when it cannot be told for sure.

    A field ending in an index is the header of that `[[table]]`. Otherwise the one line that sets
    the key inside the table the field belongs to (its `[table]` section, or the line that gives it
    inline as `table = { key = ... }`; for a top-level key, the lines before the first table). A
    key set elsewhere in the file never counts: a missing key has no line.
    """
    lines = text.splitlines()
    parts = re.findall(r"([^.\[\]]+)(?:\[(\d+)\])?", field)
    if not parts:
        return None
    key, index = parts[-1]
    if index:
        section = _section(lines, key, index)
        return section[0] if section else None
    found = _key_lines(lines, key)
    if len(parts) == 1:  # a top-level key: only lines before the first table header
        headers = [n for n, line in enumerate(lines, start=1) if line.strip().startswith("[")]
        top = re.compile(rf"^[\"']?{re.escape(key)}[\"']?\s*=")
        inside = [
            n for n in found if n < (headers[0] if headers else len(lines) + 1) and top.match(lines[n - 1].strip())
        ]
        if not inside:  # a top-level table: its first `[key]` or `[[key]]` header (`[[judge]]` for `[[judges]]`)
            tables = [n for n in headers if re.match(rf"^\[\[?\s*{re.escape(key)}\s*\]", lines[n - 1].strip())]
            return tables[0] if tables else None
    else:
        table, table_index = parts[-2]
        section = _section(lines, table, table_index)
        if section:
            inside = [n for n in found if section[0] < n < section[1]]
        else:
            inside = [n for n in found if n in _key_lines(lines, table)]
    return inside[0] if len(inside) == 1 else None


def with_toml_line(exc: InputError, path: str | Path, text: str, prefix: str = "") -> InputError:
    """The same error with the line of its field in the TOML file `path`, when it is about this file
    (`exc.path` is `path`) and has no line yet; `prefix` (e.g. `judges[0]`) goes before the field."""
    if exc.detail is None or exc.path != str(path):
        return exc
    field = ".".join(part for part in (prefix, exc.field) if part) or None
    line = exc.line if exc.line is not None or field is None else toml_key_line(text, field)
    return input_error(path, exc.detail, line=line, field=field)
