"""Recorded verdicts in other shapes: a table of another tool's answers, an Inspect AI log, a promptfoo file.

A plain ``--judgments FILE`` is juge's own recorded-call layout (:func:`juge.data.adapters.iter_recorded_calls`).
With ``--judgments-map item_id=row,verdict=answer`` the file is any table with one verdict per row; the
judge is ``--judge-name`` (else a ``judge`` column, else the file's name) and ``--judgments-scale`` maps
raw values to A/B/tie, PASS/FAIL or numbers. A value the scale (or, without one, the usual spellings)
cannot read is ``unparsed``: counted on its own line, never a verdict. A pairwise verdict without an
``order`` column was asked in one order only: it is stored as order ``12`` (the fixed order) and the judge
gets no order-flip rate. A single-quoted value in the mapping is the same for every row (``order='21'``: a
file of one order). With ``verdict_order="fixed"`` (``--verdict-order fixed``) A/B name answer 1/answer 2
of the item in both orders (a tool that records the winner, not the letter shown); the default ``shown``
reads them as the letter shown, so in order 21 A is answer 2.

``inspect:PATH`` and ``promptfoo:PATH`` read those tools' files (:mod:`juge.data.importers`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from juge.data.labels import PAIR_ALIASES, is_missing, raw_key
from juge.data.readers import Source, as_path, is_in_memory, mapped_rows, repeat_of, source_hash, source_name
from juge.data.records import RecordedCall
from juge.errors import InputError, input_error

FIELDS = ("item_id", "verdict", "judge", "model", "template", "order", "text", "repeat")
_LETTER = {"A": "A", "B": "B", "tie": "C"}  # a fixed-order verdict as the letter of order 12


@dataclass(frozen=True)
class JudgmentsSource:
    """One ``--judgments`` source read through a column mapping (another tool's verdicts)."""

    source: Source
    mapping: Mapping[str, str] | None = None
    judge_name: str | None = None
    scale: Mapping[str, Any] | None = None
    format: str | None = None
    verdict_order: str = "shown"  # "fixed": A/B name answer 1/answer 2 of the item, whatever order was shown


def read_judgments_source(
    source: Path | str | JudgmentsSource, *, pair_ids: Collection[str] = ()
) -> tuple[Iterable[RecordedCall], Callable[[], str]]:
    """The calls of one ``--judgments`` source and a function giving its sha256 (read after the calls)."""
    from juge.data.adapters import iter_recorded_calls
    from juge.data.importers import importer_for

    if isinstance(source, JudgmentsSource):
        plain = source.verdict_order == "shown"
        if source.mapping is None and source.judge_name is None and source.scale is None and plain:
            return read_judgments_source(source.source, pair_ids=pair_ids)  # type: ignore[arg-type]
        return foreign_calls(source, pair_ids=pair_ids), lambda: source_hash(source.source)
    imported = importer_for(str(source)) if isinstance(source, str | Path) else None
    if imported is not None:
        return imported(pair_ids)
    return iter_recorded_calls(source, pair_ids=pair_ids), lambda: source_hash(source)


def foreign_calls(spec: JudgmentsSource, *, pair_ids: Collection[str] = ()) -> Iterator[RecordedCall]:
    """One RecordedCall per row of a mapped table of verdicts (see the module's docstring)."""
    name = source_name(spec.source)
    mapping = dict(spec.mapping or {})
    default_judge = spec.judge_name or (as_path(spec.source).stem if not is_in_memory(spec.source) else "judge")
    seen: dict[tuple[str, str, str, str, int], int] = {}
    for line, row in mapped_rows(spec.source, mapping, FIELDS, format=spec.format, option="--judgments-map"):
        if row.get("item_id") in (None, ""):
            raise input_error(
                name,
                "required field is missing; map it with --judgments-map item_id=COLUMN",
                line=line,
                field="item_id",
            )
        if "verdict" not in row:
            raise input_error(
                name,
                "required field is missing; map it with --judgments-map verdict=COLUMN",
                line=line,
                field="verdict",
            )
        item_id = sys.intern(_text(row["item_id"]))
        judge = sys.intern(str(row.get("judge") or default_judge))
        template = sys.intern(str(row.get("template") or "recorded"))
        order = None if row.get("order") in (None, "") else _text(row["order"])
        repeat = repeat_of(name, line, row)
        is_pair = item_id in pair_ids
        if order is not None and order not in ("12", "21"):
            raise input_error(name, f"order {order!r} is not '12' or '21'", line=line, field="order")
        if is_pair and order is None:
            order = "12"  # one order only: the verdict is in the fixed order, the letter of order 12
        key = (item_id, judge, template, order or "", repeat)
        if key in seen:
            raise input_error(
                name,
                f"a second verdict of judge {judge!r} on item {item_id!r} (first on line {seen[key]}); "
                "map a repeat or order column, or give each judge its own --judge-name",
                line=line,
            )
        seen[key] = line
        raw = row["verdict"]
        verdict = _read_verdict(raw, spec.scale, pair=is_pair)
        if spec.verdict_order == "fixed" and order == "21" and verdict in ("A", "B"):
            verdict = "B" if verdict == "A" else "A"  # answer 1 of the item was shown second: letter B
        text = row.get("text")
        yield RecordedCall(
            item_id,
            judge,
            sys.intern(str(row.get("model") or judge)),
            template,
            "",
            order,  # type: ignore[arg-type]
            repeat,
            str(text if text is not None else ("" if raw is None else raw)),
            verdict,
            "ok" if verdict is not None else "unparsed",
        )


def _text(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _read_verdict(raw: Any, scale: Mapping[str, Any] | None, *, pair: bool) -> Any:
    """The verdict of a raw value, or None (unparsed) when it cannot be read exactly."""
    if is_missing(raw, frozenset()):
        return None
    key = raw_key(raw)
    if scale is not None:
        value = scale.get(key)
        if value is None:
            return None
        return _LETTER.get(value, value) if pair else value
    if pair:
        fixed = PAIR_ALIASES.get(key.lower())
        return None if fixed is None else _LETTER[fixed]
    from juge.data.labels import normalise_passfail

    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    try:
        return float(key)
    except ValueError:
        return normalise_passfail(key)


def parse_judgments_options(
    paths: list[str],
    maps: list[str],
    names: list[str],
    scales: list[str],
    verdict_orders: list[str] | None = None,
) -> list[Path | str | JudgmentsSource]:
    """Pair each ``--judgments`` with its ``--judgments-map``, ``--judge-name``, ``--judgments-scale`` and
    ``--verdict-order``: an option given once applies to every file, given once per file it pairs in order."""
    orders = verdict_orders or []
    bad = next((o for o in orders if o not in ("shown", "fixed")), None)
    if bad is not None:
        raise InputError(f"--verdict-order must be shown or fixed, got {bad!r}")
    from juge.data.labels import parse_scale
    from juge.data.readers import parse_mapping

    def per_file(values: list[str], option: str) -> list[str | None]:
        if not values:
            return [None] * len(paths)
        if len(values) == 1:
            return values * len(paths)  # type: ignore[return-value]
        if len(values) != len(paths):
            raise InputError(
                f"{option}: given {len(values)} times for {len(paths)} --judgments; give it once (for all) "
                "or once per --judgments, in the same order"
            )
        return values  # type: ignore[return-value]

    if (maps or names or scales or orders) and not paths:
        raise InputError("--judgments-map, --judge-name, --judgments-scale and --verdict-order need --judgments FILE")
    out: list[Path | str | JudgmentsSource] = []
    for path, m, n, sc, vo in zip(
        paths,
        per_file(maps, "--judgments-map"),
        per_file(names, "--judge-name"),
        per_file(scales, "--judgments-scale"),
        per_file(orders, "--verdict-order"),
    ):
        if m is None and n is None and sc is None and vo in (None, "shown"):
            out.append(path if ":" in path and not Path(path).exists() else Path(path))
            continue
        out.append(
            JudgmentsSource(
                Path(path),
                parse_mapping(m, "--judgments-map"),
                n,
                parse_scale(sc, "--judgments-scale"),
                verdict_order=vo or "shown",
            )
        )
    return out
