"""Human labels in the shapes people keep them, turned into HumanLabels of one kind.

- wide: one column per rater on the item rows (``--label-cols r1,r2``), one set of columns per
  criterion (``--criterion coherence=c_r1,c_r2``);
- long: one row per rater per item (``--labels FILE --labels-map item_id=doc+system,rater_id=worker``);
- nested: a field of the item holding one object per rater, each key a criterion
  (``--labels-nested annotations``).

Raw values are read first (:class:`RawVote`, with the file, line and field they came from), then
converted all at once for the study's kind: the whole set of values decides what is wrong with them
(``values 0, 1, 2 look like pairwise codes``). A ``--scale`` maps raw values to A/B/tie, PASS/FAIL or
numbers; ``--missing`` markers (and empty cells) are left out and counted; the same vote twice is
counted once. Every left-out value is counted in :class:`LabelCounts`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import ValidationError

from juge.data.paths import PathError, is_path, parse_path, resolve
from juge.data.records import HumanLabel
from juge.errors import InputError, input_error, pydantic_field

Kind = Literal["pairwise", "score", "passfail"]
PAIR_ALIASES = {"a": "A", "b": "B", "tie": "tie", "c": "tie", "model_a": "A", "model_b": "B"}
#: A long label file's columns beside item_id, rater_id and label that travel with each label (HumanLabel's).
LABEL_EXTRAS = ("explanation", "output_hash", "selection", "selection_probability")
RATER_KEYS = ("rater_id", "rater", "worker_id", "worker", "annotator_id", "annotator", "user_id")


@dataclass(frozen=True, slots=True)
class RawVote:
    """One rater's value on one item as read, before it is converted for the study's kind."""

    item_id: str
    rater_id: str
    value: Any
    path: str
    line: int
    field: str
    extra: tuple[tuple[str, Any], ...] = ()  # LABEL_EXTRAS a long file's row gives


@dataclass
class LabelCounts:
    """What happened to every label value read: kept, missing, on an unknown item, or a duplicate."""

    values_read: int = 0
    missing_values: int = 0
    unknown_item: int = 0
    duplicate_votes: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def split_list(text: str) -> list[str]:
    """Comma-separated parts, commas inside quotes kept; quotes around a part removed (``""`` is empty)."""
    out = []
    for part in (p.strip() for p in _comma_parts(text)):
        if len(part) >= 2 and part[0] == part[-1] and part[0] in "'\"":
            part = part[1:-1]
        out.append(part)
    return out


def _comma_parts(text: str) -> list[str]:
    """`text` cut at each comma outside quotes (the quotes kept)."""
    parts, current, quote = [], "", None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            parts.append(current)
            current = ""
            continue
        current += ch
    parts.append(current)
    return parts


def parse_missing(text: str | None) -> frozenset[str]:
    """``--missing NULL,NA,""`` -> the raw texts that mean "no label" (an empty cell always does). An entry
    ending in ``*`` is a prefix (``N/A*``), one starting ``re:`` a regular expression the whole value must
    match (``re:(?i)n/?a\b.*``); a pattern holding a comma is quoted (``'re:a,b'``)."""
    if not text:
        return frozenset()
    markers = frozenset(split_list(text))
    _patterns(markers)  # a bad regular expression is refused here, naming it
    return markers


@functools.lru_cache(maxsize=64)
def _patterns(markers: frozenset[str]) -> tuple[tuple[str, ...], tuple[re.Pattern[str], ...]]:
    """The prefixes (``N/A*``) and the regular expressions (``re:...``) among `markers`."""
    prefixes = tuple(m[:-1] for m in markers if m.endswith("*") and len(m) > 1 and not m.startswith("re:"))
    regexes = []
    for source in sorted(m[3:] for m in markers if m.startswith("re:")):
        try:
            regexes.append(re.compile(source))
        except re.error as exc:
            raise InputError(f"--missing re:{source}: not a regular expression ({exc})") from None
    return prefixes, tuple(regexes)


def missing_by_pattern(values: Iterable[Any], missing: frozenset[str]) -> dict[str, int]:
    """The values that are missing only by a pattern of `missing` (not listed as they are), with their counts:
    what a prefix or regular expression matched, for the output to show."""
    prefixes, regexes = _patterns(missing)
    if not prefixes and not regexes:
        return {}
    found: dict[str, int] = {}
    for value in values:
        if value is None or isinstance(value, float) and value != value:
            continue
        key = raw_key(value)
        if key and key not in missing and is_missing(value, missing):
            found[key] = found.get(key, 0) + 1
    return found


def raw_key(value: Any) -> str:
    """The text a raw value is looked up by in a scale or a missing list (``1.0`` from a float column is ``1``)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def is_missing(value: Any, missing: frozenset[str]) -> bool:
    if value is None or (isinstance(value, float) and value != value):
        return True
    key = raw_key(value)
    if key == "" or key in missing:
        return True
    if not missing:
        return False
    prefixes, regexes = _patterns(missing)
    return (bool(prefixes) and key.startswith(prefixes)) or any(r.fullmatch(key) for r in regexes)


def target_kind(value: Any) -> Kind | None:
    """The kind a converted value belongs to: A/B/tie pairwise, PASS/FAIL passfail, a number score."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "score"
    text = str(value).strip()
    if text.lower() in PAIR_ALIASES:
        return "pairwise"
    if text.upper() in ("PASS", "FAIL"):
        return "passfail"
    try:
        float(text)
    except ValueError:
        return None
    return "score"


def parse_scale(text: str | None, option: str = "--scale", kind: Kind | None = None) -> dict[str, Any] | None:
    """``RAW=TARGET,...`` -> {raw text: target}. Targets are numbers (``Bad=1``), A/B/tie (``0=tie,1=A,2=B``)
    or PASS/FAIL (``yes=PASS``), all of one kind (`kind` when the study's kind is known)."""
    if not text:
        return None
    scale: dict[str, Any] = {}
    kinds: set[Kind] = set()
    for part in _split_pairs(text):
        raw, sep, target = part.rpartition("=")
        raw = raw.strip().strip("'\"")
        target = target.strip().strip("'\"")
        if not sep:
            raise InputError(f"{option}: {part!r} is not RAW=TARGET (e.g. Bad=1, 0=tie,1=A,2=B or yes=PASS)")
        found = target_kind(target)
        if found is None:
            raise InputError(f"{option}: {target!r} in {part!r} is not a number, A, B, tie, PASS or FAIL")
        kinds.add(found)
        if found == "score":
            scale[raw] = float(target)
        elif found == "pairwise":
            scale[raw] = PAIR_ALIASES[target.lower()]
        else:
            scale[raw] = target.upper()
    if len(kinds) > 1:
        raise InputError(f"{option}: mixes {' and '.join(sorted(kinds))} values; give one kind of target")
    found_kind = next(iter(kinds))
    if kind is not None and found_kind != kind:
        expected = {"pairwise": "A, B or tie", "passfail": "PASS or FAIL", "score": "numbers"}[kind]
        raise InputError(f"{option}: a {kind} study needs targets that are {expected}, got {text!r}")
    return scale


def _split_pairs(text: str) -> list[str]:
    return [p for p in (s.strip() for s in _comma_parts(text)) if p]


def scale_kind(scale: Mapping[str, Any] | None) -> Kind | None:
    if not scale:
        return None
    return target_kind(next(iter(scale.values())))


# ---- reading raw votes ---------------------------------------------------------------------------


def wide_votes(
    path: str, rows: Iterable[tuple[int, dict[str, Any]]], columns: Sequence[str], option: str = "--label-cols"
) -> list[RawVote]:
    """One vote per item row and label column (the rater is the column); the id is the row's `id`."""
    votes: list[RawVote] = []
    header: set[str] = set()
    for line, row in rows:
        header.update(row)
        item_id = id_text(row.get("id"))
        for col in columns:
            if col in row:
                votes.append(RawVote(item_id, col, row[col], path, line, col))
    for col in columns:
        if col not in header:
            raise input_error(
                path, f"{option}: no column {col!r} (columns: {', '.join(sorted(header))})", line=1, field=col
            )
    return votes


def nested_top(nested: str) -> str:
    """The top-level field a --labels-nested field or path (``annotations``, ``review.ratings``) starts at."""
    return parse_path(nested, "--labels-nested").first if is_path(nested) else nested


def _nested_value(path: str, line: int, row: Mapping[str, Any], nested: str) -> Any:
    """The nested field of a row: the column so named, else the path (an error says how far it resolved)."""
    if nested in row or not is_path(nested):
        return row.get(nested)
    try:
        return resolve(row, parse_path(nested, "--labels-nested"))
    except PathError as exc:
        raise input_error(path, f"--labels-nested {nested}: {exc}", line=line, field=nested) from None


def nested_votes(
    path: str, rows: Iterable[tuple[int, dict[str, Any]]], nested: str, *, raters_by: str = "key"
) -> dict[str, list[RawVote]]:
    """Votes per criterion from a field (or a path, see :mod:`juge.data.paths`) holding the raters' labels:

    - one object per rater (``[{"worker": "w1", "coherence": 4}, ...]``): the rater is the object's
      rater_id/rater/worker/annotator key when it has one (``raters_by="key"``), else its position;
    - one list per criterion (``{"coherence": [4, 3, 5], ...}``): the position in each list is the rater.

    ``raters_by="position"`` names raters by their position in both shapes (``annotations[0]`` is the same
    person on every item)."""
    by_criterion: dict[str, list[RawVote]] = {}
    any_field = False
    for line, row in rows:
        value = _nested_value(path, line, row, nested)
        if value is None:
            continue
        any_field = True
        if isinstance(value, str):
            import json

            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise input_error(
                    path, "--labels-nested: not a JSON list of objects", line=line, field=nested
                ) from None
        item_id = id_text(row.get("id"))
        if isinstance(value, dict) and value and all(isinstance(v, list) for v in value.values()):
            for criterion, ratings in value.items():  # criterion -> one rating per rater, by position
                for k, raw in enumerate(ratings):
                    if isinstance(raw, dict | list):
                        raise input_error(
                            path,
                            "--labels-nested: a criterion's list must hold one rating per rater",
                            line=line,
                            field=f"{nested}.{criterion}[{k}]",
                        )
                    by_criterion.setdefault(criterion, []).append(
                        RawVote(item_id, f"{nested}[{k}]", raw, path, line, f"{nested}.{criterion}[{k}]")
                    )
            continue
        if isinstance(value, dict):
            value = list(value.values()) if all(isinstance(v, dict) for v in value.values()) else [value]
        if not isinstance(value, list):
            raise input_error(
                path,
                f"--labels-nested: expected a list of objects, got {type(value).__name__}",
                line=line,
                field=nested,
            )
        for k, vote in enumerate(value):
            where = f"{nested}[{k}]"
            if not isinstance(vote, dict):
                raise input_error(path, "--labels-nested: each rater's entry must be an object", line=line, field=where)
            rater_key = next((key for key in RATER_KEYS if vote.get(key) not in (None, "")), None)
            rater = str(vote[rater_key]) if rater_key and raters_by == "key" else f"{nested}[{k}]"
            for criterion, raw in vote.items():
                if criterion == rater_key:
                    continue
                by_criterion.setdefault(criterion, []).append(
                    RawVote(item_id, rater, raw, path, line, f"{where}.{criterion}")
                )
    if not any_field:
        raise input_error(path, f"--labels-nested: no row has a field {nested!r}", field=nested)
    return by_criterion


def long_votes(path: str, rows: Iterable[tuple[int, dict[str, Any]]]) -> list[RawVote]:
    """One vote per row of a long file whose columns are mapped to item_id, rater_id and label."""
    votes: list[RawVote] = []
    for line, row in rows:
        check_label_row(path, line, row)
        extra = tuple((k, row[k]) for k in LABEL_EXTRAS if row.get(k) not in (None, ""))
        votes.append(RawVote(id_text(row["item_id"]), str(row["rater_id"]), row["label"], path, line, "label", extra))
    return votes


@dataclass(frozen=True)
class WeightRule:
    """One ``--label-weight`` rule: the columns whose values (joined by "/") are the key, and each key's weight."""

    columns: tuple[str, ...]
    weights: Mapping[str, Decimal]


def parse_label_weights(text: str | None) -> list[WeightRule]:
    """``severity+category=Minor/Fluency/Punctuation:0.1;severity=Major:5,Minor:1`` -> rules, tried in order
    (the first whose key a row has gives its weight). Weights are decimals, kept exact."""
    if not text:
        return []
    rules = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        cols, sep, pairs = part.partition("=")
        columns = tuple(c.strip() for c in cols.split("+") if c.strip())
        if not sep or not columns or not pairs.strip():
            raise InputError(f"--label-weight: {part!r} is not COLUMN=KEY:WEIGHT,... (e.g. severity=Major:5,Minor:1)")
        weights: dict[str, Decimal] = {}
        for pair in split_list(pairs):
            key, colon, number = pair.rpartition(":")
            try:
                weight = Decimal(number.strip())
            except InvalidOperation:
                weight = Decimal("NaN")
            if not colon or not key.strip() or not weight.is_finite():
                raise InputError(f"--label-weight: {pair!r} in {part!r} is not KEY:WEIGHT (a number, e.g. Minor:1)")
            weights[key.strip()] = weight
        rules.append(WeightRule(columns, weights))
    return rules


def aggregate_votes(
    path: str, rows: Iterable[tuple[int, dict[str, Any]]], rules: Sequence[WeightRule]
) -> tuple[list[RawVote], str]:
    """One score per (item, rater) from rows of error annotations (``--labels-aggregate sum``): the sum of
    each row's weight (its first matching ``--label-weight`` rule; without rules, its label as a number).
    Sums are decimal, so 0.1 + 0.2 is 0.3. A row of weight 0 (e.g. a "no error" marker) adds nothing but
    says the rater saw the item: that item scores 0 for them. Returns the votes and a note on what was read."""
    totals: dict[tuple[str, str], Decimal] = {}
    first_line: dict[tuple[str, str], int] = {}
    n_rows = 0
    for line, row in rows:
        for name in ("item_id", "rater_id"):
            if row.get(name) in (None, ""):
                raise input_error(path, f"required field is missing; map it with --labels-map {name}=COLUMN",
                                  line=line, field=name)  # fmt: skip
        weight = _row_weight(path, line, row, rules)
        key = (id_text(row["item_id"]), str(row["rater_id"]))
        totals[key] = totals.get(key, Decimal(0)) + weight
        first_line.setdefault(key, line)
        n_rows += 1
    votes = [RawVote(item, rater, str(total), path, first_line[(item, rater)], "label")
             for (item, rater), total in totals.items()]  # fmt: skip
    note = (
        f"--labels-aggregate sum: {n_rows} rows of {path} read as {len(votes)} (item, rater) scores, each the sum "
        "of its rows' weights (a rater's item with only weight-0 rows scores 0)"
    )
    return votes, note


def _row_weight(path: str, line: int, row: Mapping[str, Any], rules: Sequence[WeightRule]) -> Decimal:
    if not rules:
        value = row.get("label")
        try:
            return Decimal(raw_key(value))
        except InvalidOperation:
            raise input_error(
                path, f"{value!r} is not a number to sum; give --label-weight COLUMN=KEY:WEIGHT,...", line=line,
                field="label",
            ) from None  # fmt: skip
    for rule in rules:
        missing = [c for c in rule.columns if c not in row]
        if missing:
            raise input_error(path, f"--label-weight: no column {missing[0]!r}", line=line, field=missing[0])
        key = "/".join("" if row[c] is None else raw_key(row[c]) for c in rule.columns)
        if key in rule.weights:
            return rule.weights[key]
    keys = "; ".join("+".join(r.columns) + "=" + "/".join(
        "" if row.get(c) is None else raw_key(row.get(c)) for c in r.columns) for r in rules)  # fmt: skip
    raise input_error(
        path,
        f"--label-weight gives no weight for {keys}; add it (KEY:0 to leave such rows out of the sum)",
        line=line,
    )


def check_label_row(path: str, line: int, row: Mapping[str, Any], option: str | None = "--labels-map") -> None:
    """An error naming the field when a row of a long labels file has no item_id, rater_id or label column,
    or an empty item_id or rater_id (a row of a labels template nobody filled in). Every reader of long
    labels (calibrate, estimate) checks its rows here, so a half-filled template reads the same everywhere.
    `option` is the option that maps columns, named in the hint when the reader has one."""
    for name in ("item_id", "rater_id", "label"):
        if name not in row:  # no such column: the file names it otherwise
            hint = f"; map it with {option} {name}=COLUMN" if option else ""
            raise input_error(path, f"required field is missing{hint}", line=line, field=name)
        if name != "label" and row[name] in (None, ""):  # the column is there, this cell is empty
            raise input_error(path, _EMPTY[name](row), line=line, field=name)


def _empty_rater(row: dict[str, Any]) -> str:
    if row.get("label") in (None, ""):
        return "this row has no rater and no label: fill in rater_id and label, or delete the row if nobody labelled it"
    return "rater_id is empty: put the name (or any id) of the person who gave this label, the same on all their rows"


_EMPTY = {
    "item_id": lambda row: "item_id is empty: put the id of the case this label is for (its `id` in the cases)",
    "rater_id": _empty_rater,
}


def id_text(value: Any) -> str:
    """An id as text: a float that is a whole number (a Parquet or pandas column) without its .0."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


# ---- converting them for a kind ---------------------------------------------------------------------


def judge_kinds(verdicts: Iterable[Any]) -> frozenset[Kind]:
    """The kinds of the judges' answered verdicts (A/B/tie pairwise, PASS/FAIL, a score), to guess the labels' by."""
    found: set[Kind] = set()
    for verdict in verdicts:
        if isinstance(verdict, dict):
            verdict = verdict.get("score")
        if verdict is None or isinstance(verdict, bool):
            continue
        kind = target_kind(verdict)
        if kind is not None:
            found.add(kind)
    return frozenset(found)


def decide_kind(
    votes: Sequence[RawVote],
    *,
    kind: Kind | None,
    scale: Mapping[str, Any] | None,
    pairs: bool,
    missing: frozenset[str],
    judges: frozenset[Kind] = frozenset(),
) -> Kind:
    """The study's kind: as given, else the scale's targets, else :func:`guess_kind` from the values."""
    if kind is not None:
        return kind
    if scale:
        return scale_kind(scale) or "score"
    return guess_kind([v.value for v in votes if not is_missing(v.value, missing)], pairs=pairs, judges=judges)[0]


def guess_kind(values: Iterable[Any], *, pairs: bool, judges: frozenset[Kind] = frozenset()) -> tuple[Kind, str]:
    """The kind of study these label values and judges make, and what it was guessed from (said to the user).

    Pairs -> pairwise. Values that all read as PASS/FAIL (pass/fail, yes/no, true/false, 1/0, any case) are
    PASS/FAIL unless they are numbers and the judges give scores (and none PASS/FAIL): 1/0 labels are a
    PASS/FAIL study beside a PASS/FAIL judge, a score study only beside a score judge (or with --kind score).
    Mostly PASS/FAIL words and no number is PASS/FAIL too, so a typo (PASSS) is named as one, on its line.
    Anything else is a score study."""
    if pairs:
        return "pairwise", "the items hold two answers each"
    keys = sorted({raw_key(v) for v in values})
    shown = ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "")
    numbers = [k for k in keys if _number(k) is not None]
    readable = sum(normalise_passfail(k) is not None for k in keys)
    if keys and readable == len(keys):
        if not numbers:
            return "passfail", f"the labels ({shown}) are PASS/FAIL words"
        if "passfail" in judges:
            return "passfail", f"the labels ({shown}) read as PASS/FAIL and the judge gives PASS/FAIL"
        if "score" in judges:
            return "score", f"the labels ({shown}) are numbers and the judge gives scores"
        return "passfail", f"the labels ({shown}) read as PASS/FAIL and no judge gives scores"
    if keys and not numbers and 2 * readable >= len(keys):
        return "passfail", f"the labels ({shown}) are mostly PASS/FAIL words"
    return "score", f"the labels ({shown}) are numbers" if numbers else f"the labels ({shown}) are not PASS/FAIL"


def convert_votes(
    votes: Sequence[RawVote],
    *,
    kind: Kind,
    scale: Mapping[str, Any] | None,
    missing: frozenset[str],
    counts: LabelCounts,
    kind_given: bool = True,
) -> list[HumanLabel]:
    """HumanLabels of `kind` from raw votes: a value in `scale` is what the scale says, any other is read as the
    kind reads it (A/B/tie, PASS/FAIL, a number). Missing values are counted and left out; the same vote twice
    is counted once; the same rater with two different labels on one item is an error naming both lines.
    A value that cannot be read is an error naming its file, line and field and the option to use."""
    present = [v for v in votes if not is_missing(v.value, missing)]
    counts.values_read += len(votes)
    counts.missing_values += len(votes) - len(present)
    bad = [v for v in present if _convert(v.value, kind, scale) is None]
    if bad:
        raise _conversion_error(bad, present, kind, scale, kind_given, missing)
    labels: list[HumanLabel] = []
    first: dict[tuple[str, str], tuple[RawVote, Any]] = {}
    for vote in present:
        value = _convert(vote.value, kind, scale)
        key = (vote.item_id, vote.rater_id)
        if key in first:
            earlier, earlier_value = first[key]
            if earlier_value != value:
                raise input_error(
                    vote.path,
                    f"rater {vote.rater_id!r} labelled item {vote.item_id!r} twice with different labels "
                    f"({earlier_value!r} on line {earlier.line}, {value!r} here); keep one",
                    line=vote.line,
                    field="rater_id" if vote.field == "label" else vote.field,
                )
            counts.duplicate_votes += 1
            continue
        first[key] = (vote, value)
        try:
            labels.append(HumanLabel(item_id=vote.item_id, rater_id=vote.rater_id, label=value, **dict(vote.extra)))
        except ValidationError as exc:  # its message, not pydantic's last line (a link to its docs)
            raise input_error(vote.path, pydantic_field(exc)[1], line=vote.line, field=vote.field) from None
        except ValueError as exc:
            raise input_error(vote.path, str(exc).splitlines()[-1], line=vote.line, field=vote.field) from None
    return labels


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def normalise_passfail(value: Any) -> str | None:
    """PASS/FAIL from the usual spellings (pass/fail, yes/no, true/false, 1/0); None if unreadable."""
    if isinstance(value, bool):
        return "PASS" if value else "FAIL"
    word = str(value).strip().lower()
    if word in {"pass", "passed", "yes", "true", "1", "1.0", "ok"}:
        return "PASS"
    if word in {"fail", "failed", "no", "false", "0", "0.0"}:
        return "FAIL"
    return None


def _convert(value: Any, kind: Kind, scale: Mapping[str, Any] | None) -> Any:
    """The value as `kind` reads it: a `scale` key is what the scale says; any other value is read by the kind's
    standard spellings (A/B/tie, PASS/FAIL words and 1/0, a number), and with a scale a number must be one of
    its points: the scale extends the accepted words and never lets an unlisted value through."""
    key = raw_key(value)
    if scale is not None and key in scale:
        return scale[key]
    if kind == "pairwise":
        return PAIR_ALIASES.get(key.lower())
    if kind == "passfail":
        return normalise_passfail(key)
    number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else _number(key)
    if scale is not None and number not in {v for v in scale.values() if isinstance(v, int | float)}:
        return None
    return number


def unlisted(votes: Sequence[RawVote], scale: Mapping[str, Any] | None, missing: frozenset[str]) -> list[str]:
    """The values a `scale` does not list that were read by the kind's standard spellings (said to the user)."""
    if not scale:
        return []
    return sorted({raw_key(v.value) for v in votes if not is_missing(v.value, missing)} - set(scale))


def _standard(kind: Kind) -> str:
    """The spellings a kind reads besides a scale's words, as the error names them."""
    return {
        "passfail": " nor a PASS/FAIL spelling (pass/fail, yes/no, true/false, 1/0)",
        "pairwise": " nor A, B or tie",
        "score": " nor one of its points",
    }[kind]


def _conversion_error(
    bad: Sequence[RawVote],
    present: Sequence[RawVote],
    kind: Kind,
    scale: Mapping[str, Any] | None,
    kind_given: bool,
    missing: frozenset[str],
) -> InputError:
    first = bad[0]
    values = sorted({raw_key(v.value) for v in present}, key=lambda t: (_number(t) is None, _number(t) or 0, t))
    shown = ", ".join(values[:8]) + (", ..." if len(values) > 8 else "")
    unknown = sorted({raw_key(v.value) for v in bad})
    looks_missing = [u for u in unknown if u.upper() in ("NULL", "NA", "N/A", "NAN", "NONE", "-", "?")]
    markers = ("NULL", "NA", "N/A", "NAN", "NONE")
    # "N/A (no errors)": a missing answer written as free text, left out by a prefix
    free_text = sorted({u[: len(m)] for u in unknown for m in markers if u.upper().startswith(m + " ")})
    if looks_missing or free_text:
        prefixes = tuple(m + " " for m in free_text)
        first = next(v for v in bad if raw_key(v.value) in looks_missing or raw_key(v.value).startswith(prefixes))
        listed = ",".join([*looks_missing, *(m + "*" for m in free_text)])
        return input_error(
            first.path,
            f"value {first.value!r} looks like a missing label: give --missing {repr(listed) if free_text else listed}"
            + (" (N/A* is a prefix; re:EXPRESSION a regular expression)" if free_text else ""),
            line=first.line,
            field=first.field,
        )
    if scale is not None:
        return input_error(
            first.path,
            f"value {first.value!r} is not in --scale (it maps {', '.join(sorted(scale))}){_standard(kind)}; "
            f"add it to --scale, or list it in --missing if it means no label",
            line=first.line,
            field=first.field,
        )
    kind_option = "" if kind_given else f"--kind {kind} "
    if kind == "pairwise":
        numbers = [n for n in (_number(v) for v in values) if n is not None]
        if numbers and len(values) <= 4:
            codes = ",".join(f"{v}={t}" for v, t in zip(values, ("tie", "A", "B", "?")))
            message = f'values {shown} look like pairwise codes: give {kind_option}--scale "{codes}" (your codes)'
        else:
            message = (
                f"{first.value!r} is not one of A, B, tie (values: {shown}); give {kind_option}--scale mapping "
                f'your values, e.g. --scale "{values[0]}=A,..."'
            )
    elif kind == "passfail":
        message = (
            f"{first.value!r} is not PASS or FAIL (nor yes/no, true/false, 1/0; values: {shown}): correct it, or map "
            f'your values with {kind_option}--scale "{raw_key(first.value)}=PASS,..."'
        )
    else:
        pair_like = set(values) <= {"A", "B", "tie", "a", "b", "Tie", "TIE"}
        if pair_like:
            message = f"values {shown} look like pairwise labels: give --kind pairwise (and map the two answers)"
        else:
            message = f'values {shown} are not numbers: give --scale mapping them to numbers, e.g. "{values[0]}=1,..."'
    return input_error(first.path, message, line=first.line, field=first.field)
