"""Readers for cases and human labels (JSONL and CSV) with errors that name file, line and field.

A column mapping renames the file's fields to juge's (`{"id": "item_id", "output": "answer"}`
reads the file's `item_id` column as the case id). Unknown fields go to `meta` for cases.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import random
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from juge.data.records import Case, HumanLabel
from juge.errors import InputError, input_error

T = TypeVar("T", bound=BaseModel)

CASE_FIELDS = set(Case.model_fields)


def file_hash(path: str | Path) -> str:
    """sha256 of a file's bytes: the dataset hash stored with every run."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def records_hash(records: Iterable[BaseModel]) -> str:
    """sha256 over the canonical JSON of records, for data that did not come from one file."""
    h = hashlib.sha256()
    for r in records:
        h.update(r.model_dump_json().encode())
        h.update(b"\n")
    return h.hexdigest()


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; give a JSONL or CSV file")


def _read_text(path: Path) -> str:
    _check_file(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise input_error(path, f"not UTF-8 (byte {exc.start}); re-save the file as UTF-8", line=line) from None
    if not text.strip():
        raise input_error(path, "file is empty")
    return text


def _jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a UTF-8 text file as (line number, text), read one at a time.

    Lines end at ``\n`` (a ``\r`` before it is whitespace to JSON); a UTF-8 BOM is dropped. A byte
    that is not UTF-8 is reported with its offset after the BOM, as by a whole-file decode; a file
    with no non-blank line is empty.
    """
    _check_file(path)
    offset, any_text = 0, False
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]  # offsets count from after it, as in a whole-file decode
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                where = offset + exc.start
                raise input_error(path, f"not UTF-8 (byte {where}); re-save the file as UTF-8", line=lineno) from None
            offset += len(raw)
            if line.strip():
                any_text = True
                yield lineno, line
    if not any_text:
        raise input_error(path, "file is empty")


def iter_rows(path: str | Path) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """Rows of a JSONL or CSV file as (line number, dict), one at a time: a JSONL file is never held whole.

    The same rows and errors as :func:`read_rows`; a later row's error is raised when that row is reached.
    """
    path = Path(path)
    if path.suffix.lower() not in {".jsonl", ".ndjson", ".json"}:
        yield from read_rows(path)
        return
    for lineno, line in _jsonl_lines(path):
        yield lineno, _json_object(path, lineno, line)


def _json_object(path: Path, lineno: int, line: str) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise input_error(path, f"malformed JSON: {exc.msg} (column {exc.colno})", line=lineno) from None
    if not isinstance(obj, dict):
        raise input_error(path, f"expected a JSON object, got {type(obj).__name__}", line=lineno)
    return obj


def read_rows(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """Rows of a JSONL or CSV file as (line number, dict). The format follows the suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in {".jsonl", ".ndjson", ".json"}:
        return list(iter_rows(path))
    text = _read_text(path)
    if suffix in {".csv", ".tsv"}:
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if suffix == ".tsv" else ",", strict=True)
        rows = []
        try:
            if not reader.fieldnames:
                raise input_error(path, "no header row")
            for row in reader:
                lineno = reader.line_num
                if None in row:
                    raise input_error(path, f"more values than header columns ({len(reader.fieldnames)})", line=lineno)
                if None in row.values():  # the columns a short row lacks (a cell read is always a str)
                    raise input_error(
                        path,
                        f"fewer values than header columns ({len(reader.fieldnames)}); "
                        "an empty cell still needs its comma",
                        line=lineno,
                    )
                rows.append((lineno, {k: (v if v != "" else None) for k, v in row.items()}))
        except csv.Error as exc:
            # line_num is the last line read cleanly; the bad row starts on the next one.
            raise input_error(
                path, f"malformed CSV in the row starting here: {exc} (an unclosed quote?)", line=reader.line_num + 1
            ) from None
        if not rows:
            raise input_error(path, "header only, no rows")
        return rows
    raise InputError(f"{path}: unknown format {suffix!r}; use .jsonl or .csv")


def parse_mapping(text: str | None, option: str = "--map") -> dict[str, str] | None:
    """`ours=theirs,...` (a command-line column mapping) -> {ours: theirs}."""
    if not text:
        return None
    mapping = {}
    for part in text.split(","):
        ours, sep, theirs = part.partition("=")
        if not sep or not ours.strip() or not theirs.strip():
            raise InputError(f"{option}: expected juge_field=column pairs separated by commas, got {part!r}")
        mapping[ours.strip()] = theirs.strip()
    return mapping


def check_mapping(
    path: Path, rows: Sequence[tuple[int, dict[str, Any]]], mapping: Mapping[str, str] | None, fields: Iterable[str]
) -> None:
    """A mapping may only name juge's fields, and only columns the file has: a typo is an error, not a no-op."""
    if not mapping:
        return
    known = set(fields)
    for ours, theirs in mapping.items():
        if ours not in known:
            raise input_error(
                path,
                f"column mapping names {ours!r}, which is not a juge field (fields: {', '.join(sorted(known))})",
                field=ours,
            )
        if not any(theirs in row for _, row in rows):
            raise input_error(
                path, f"column mapping reads {ours!r} from column {theirs!r}, which no row of the file has", field=ours
            )


def _apply_mapping(row: dict[str, Any], mapping: Mapping[str, str] | None) -> dict[str, Any]:
    if not mapping:
        return dict(row)
    out = dict(row)
    for ours, theirs in mapping.items():
        if theirs in out:
            out[ours] = out.pop(theirs)
    return out


def case_line(path: str | Path, case_id: str, mapping: Mapping[str, str] | None = None) -> int | None:
    """The line of case `case_id` in its cases file, for a message about that case (None if absent)."""
    for lineno, row in read_rows(path):
        if str(_apply_mapping(row, mapping).get("id")) == case_id:
            return lineno
    return None


def _validation_error(path: Path, line: int, exc: ValidationError) -> InputError:
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    msg = err["msg"]
    if err["type"] == "missing":
        msg = "required field is missing"
    return input_error(path, msg, line=line, field=field)


def _parse_json_fields(row: dict[str, Any], fields: Sequence[str]) -> None:
    # CSV cells that should hold structures (messages, meta) are JSON text.
    for name in fields:
        value = row.get(name)
        if isinstance(value, str):
            try:
                row[name] = json.loads(value)
            except json.JSONDecodeError:
                pass


def read_cases(path: str | Path, mapping: Mapping[str, str] | None = None) -> list[Case]:
    """Read cases from JSONL or CSV. Fields juge does not know go to `meta`.

    Raises InputError naming file, line and field for malformed rows, a missing or
    duplicate id, wrong types, an empty or non-UTF-8 file.
    """
    path = Path(path)
    cases: list[Case] = []
    seen: dict[str, int] = {}
    rows = read_rows(path)
    check_mapping(path, rows, mapping, CASE_FIELDS)
    for lineno, case in _cases_of(path, rows, mapping):
        if case.id in seen:
            raise duplicate_case(path, case.id, lineno, seen[case.id])
        seen[case.id] = lineno
        cases.append(case)
    return cases


def iter_cases(path: str | Path, mapping: Mapping[str, str] | None = None) -> Iterator[tuple[int, Case]]:
    """The cases of a file as (line number, Case), one at a time (a JSONL file is never held whole).

    The same errors as :func:`read_cases` but two: duplicate ids are the caller's to find (see
    `duplicate_case`), and a mapping naming a column no row has is found by a first pass over the
    rows (only when there is a mapping), so it is reported before any row's error, as there.
    """
    path = Path(path)
    if mapping:
        check_mapping_streamed(path, mapping, CASE_FIELDS)
    yield from _cases_of(path, iter_rows(path), mapping)


def duplicate_case(path: Path, case_id: str, line: int, first: int) -> InputError:
    return input_error(path, f"duplicate id {case_id!r} (first on line {first})", line=line, field="id")


def check_mapping_streamed(path: Path, mapping: Mapping[str, str], fields: Iterable[str]) -> None:
    """`check_mapping` (the same first error) over the rows read one at a time."""
    unseen = set(mapping.values())
    for _, row in iter_rows(path):
        unseen -= row.keys()
        if not unseen:
            break
    # Only whether a column occurs matters: one stand-in row holding every column seen.
    check_mapping(path, [(0, dict.fromkeys(set(mapping.values()) - unseen))], mapping, fields)


def _cases_of(
    path: Path, rows: Iterable[tuple[int, dict[str, Any]]], mapping: Mapping[str, str] | None
) -> Iterator[tuple[int, Case]]:
    for lineno, row in rows:
        row = _apply_mapping(row, mapping)
        _parse_json_fields(row, ("messages", "meta"))
        if row.get("id") in (None, ""):
            raise input_error(path, "required field is missing", line=lineno, field="id")
        meta = row.pop("meta", None) or {}
        if not isinstance(meta, dict):
            raise input_error(path, "must be a JSON object", line=lineno, field="meta")
        meta = dict(meta)
        known = {k: v for k, v in row.items() if k in CASE_FIELDS}
        meta.update({k: v for k, v in row.items() if k not in CASE_FIELDS})
        try:
            case = Case.model_validate({**known, "meta": meta})
        except ValidationError as exc:
            raise _validation_error(path, lineno, exc) from None
        yield lineno, case


def read_labels(
    path: str | Path,
    mapping: Mapping[str, str] | None = None,
    allowed: Iterable[str | int | float] | None = None,
) -> list[HumanLabel]:
    """Read one human label per row. `allowed` is the declared label set; any other label is an error."""
    path = Path(path)
    allowed_set = {str(a) for a in allowed} if allowed is not None else None
    labels: list[HumanLabel] = []
    seen: dict[tuple[str, str], int] = {}
    rows = read_rows(path)
    check_mapping(path, rows, mapping, HumanLabel.model_fields)
    for lineno, row in rows:
        row = _apply_mapping(row, mapping)
        try:
            label = HumanLabel.model_validate(row)
        except ValidationError as exc:
            raise _validation_error(path, lineno, exc) from None
        if allowed_set is not None and str(label.label) not in allowed_set:
            raise input_error(
                path, f"label {label.label!r} is not one of {sorted(allowed_set)}", line=lineno, field="label"
            )
        key = (label.item_id, label.rater_id)
        if key in seen:
            raise input_error(
                path,
                f"rater {label.rater_id!r} labelled item {label.item_id!r} twice (first on line {seen[key]})",
                line=lineno,
                field="rater_id",
            )
        seen[key] = lineno
        labels.append(label)
    return labels


def sample(items: Sequence[T], n: int | None, *, seed: int = 0) -> list[T]:
    """A seeded random sample of `n` items (all of them, shuffled, when n is None or >= len)."""
    rng = random.Random(seed)
    chosen = list(items)
    rng.shuffle(chosen)
    return chosen if n is None else chosen[:n]


def _group_bucket(group: str, seed: int) -> float:
    digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_of(group: str, *, holdout: float = 0.5, seed: int = 0) -> str:
    """'holdout' when a hash of (seed, group) falls below `holdout`, else 'dev'.

    A function of the group alone, so the split is stable: adding items never moves an
    existing group, and every item of a group lands on the same side.
    """
    if not 0.0 < holdout < 1.0:
        raise ValueError("holdout share must be between 0 and 1")
    return "holdout" if _group_bucket(group, seed) < holdout else "dev"


def split_by_group(cases: Sequence[Case], *, holdout: float = 0.5, seed: int = 0) -> dict[str, list[Case]]:
    """Split into dev and holdout so that no group is on both sides (see `split_of`)."""
    out: dict[str, list[Case]] = {"dev": [], "holdout": []}
    for case in cases:
        out[split_of(case.group, holdout=holdout, seed=seed)].append(case)
    return out
