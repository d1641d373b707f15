"""Loaders for calibration data layouts: what a study reads besides juge's own records.

- The shared MT-Bench sample (`items.jsonl` with votes inside each item, and the recorded
  `judgments.jsonl` layout: judge, model, prompt, order, letter, outcome, text).
- The official MT-Bench human-judgments export (`--from-hf DIR`: the `human` and
  `gpt4_pair` splits as JSON, JSONL or Parquet files; no network).
- Single-score and PASS/FAIL items in CSV/JSONL with human ratings in columns
  (`--label-cols rating_1,rating_2 --scale Bad=1,Good=2`).

Every loader returns typed records (Case, HumanLabel, Judgment) plus "baselines":
verdicts recorded in the items themselves (e.g. GPT-4's 2023 verdict), kept apart
from human labels. Errors name the file, line and field (exit code 2 in the CLI).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from juge.data.labels import (
    Kind,
    LabelCounts,
    RawVote,
    convert_votes,
    id_text,
    nested_top,
    nested_votes,
    wide_votes,
)
from juge.data.labels import parse_scale as parse_labels_scale
from juge.data.paths import EACH, FieldPath, PathError, is_path, joined_path, parse_path, resolve
from juge.data.readers import (
    CASE_FIELDS,
    Source,
    apply_mapping,
    cases_from_rows,
    file_hash,
    iter_rows,
    mapped_rows,
    read_labels,
    read_rows,
    repeat_of,
    source_hash,
    source_name,
)
from juge.data.records import (
    OUTCOMES,
    Case,
    HumanLabel,
    Judgment,
    PairSummary,
    RecordedCall,
    Vote,
    clean_id,
    lone_surrogate_message,
)
from juge.errors import InputError, input_error, validation_error

PAIR_LABELS = ("A", "B", "tie")
BASELINE_PAIR_LABELS = ("A", "B", "tie", "inconsistent")

# MT-Bench question ids 81-160 come in blocks of ten per category (FastChat question.jsonl).
MTBENCH_CATEGORIES = ("writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities")


@dataclass
class LeftOut:
    """Pairs that were read and checked but not kept as cases (they carry no human vote, and the reader
    was asked to drop those): their ids and splits, so that item counts, split lists and id checks see them."""

    ids: set[str] = field(default_factory=set)
    splits: set[str] = field(default_factory=set)


@dataclass
class CalibrationData:
    """Items, human labels and in-item baseline verdicts for one study.

    ``baselines[name][item_id]`` is a verdict recorded with the item (pairwise:
    A/B/tie/inconsistent in the fixed order; scores: a number or PASS/FAIL).
    ``sources`` maps a role ("items", "judgments", ...) to the sha256 of the file read.
    ``left_out`` lists the items read but not kept in ``cases``, whose pairs a lean read keeps as
    PairSummary (see ``read_pairwise_items``).
    """

    cases: Sequence[Case | PairSummary]
    labels: Sequence[HumanLabel | Vote]
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    left_out: LeftOut = field(default_factory=LeftOut)

    def full_cases(self) -> list[Case]:
        """The items as Cases; an item read lean (a PairSummary, without its texts) is a TypeError."""
        lean = next((c.id for c in self.cases if not isinstance(c, Case)), None)
        if lean is not None:
            raise TypeError(f"item {lean!r} was read without its texts (a lean read)")
        return [c for c in self.cases if isinstance(c, Case)]

    def full_labels(self) -> list[HumanLabel]:
        """The labels as HumanLabels; a label read lean (a Vote) is a TypeError."""
        lean = next((lab.item_id for lab in self.labels if not isinstance(lab, HumanLabel)), None)
        if lean is not None:
            raise TypeError(f"the labels of item {lean!r} were read lean (as Votes)")
        return [lab for lab in self.labels if isinstance(lab, HumanLabel)]


def _pair_label(value: Any, path: str | Path, line: int, fieldname: str, allowed: Sequence[str]) -> str:
    text = str(value).strip() if value is not None else ""
    aliases = {
        "a": "A",
        "b": "B",
        "tie": "tie",
        "c": "tie",
        "inconsistent": "inconsistent",
        "model_a": "A",
        "model_b": "B",
    }
    label = aliases.get(text.lower())
    if label is None or label not in allowed:
        raise input_error(path, f"label {value!r} is not one of {list(allowed)}", line=line, field=fieldname)
    return label


def _shared(value: Any) -> Any:
    """One copy of a string that many rows repeat (a model name, a category), so a large file is held once."""
    return sys.intern(value) if type(value) is str else value


def read_pairwise_items(
    source: Source, *, baseline_fields: Sequence[str] = ("gpt4_2023",), lean: bool = False
) -> CalibrationData:
    """Read the shared sample's `items.jsonl` (or its rows in memory): one pair per line with its human votes.

    Fields: item_id, question_id (the group), category, split, question, answer_1,
    answer_2, reference, model_1, model_2, human_ratings (list of {rater_id, label}),
    and optional baseline verdict fields (a label, or an object with a `label`).
    A label is A (answer 1 better), B (answer 2 better) or tie.

    A `lean` read keeps what a study reads and no more: an item without votes is checked like any other
    but kept only in ``left_out`` (id and split), since a study measures nothing on it (on a large file
    most items are unlabelled), an item with votes as a :class:`PairSummary` (answer lengths, no texts), and
    its votes as :class:`Vote` tuples.
    """
    path = source_name(source)
    cases: list[Case | PairSummary] = []
    left_out = LeftOut()
    labels: list[HumanLabel | Vote] = []
    baselines: dict[str, dict[str, Any]] = {name: {} for name in baseline_fields}
    seen: dict[str, int] = {}
    for line, row in iter_rows(source):
        item_id = row.get("item_id", row.get("id"))
        if item_id in (None, ""):
            raise input_error(path, "required field is missing", line=line, field="item_id")
        item_id = _clean_id(path, line, "item_id", item_id)
        if item_id in seen:
            raise input_error(
                path, f"duplicate item {item_id!r} (first on line {seen[item_id]})", line=line, field="item_id"
            )
        seen[item_id] = line
        for name in ("answer_1", "answer_2"):
            if not isinstance(row.get(name), str):
                raise input_error(path, "required text field is missing", line=line, field=name)
        meta = {k: _shared(row[k]) for k in ("model_1", "model_2", "source", "question_id") if row.get(k) is not None}
        try:
            case = Case(
                id=item_id,
                group=_shared(str(row.get("question_id") or row.get("group") or item_id)),
                category=_shared(row.get("category")),
                question=row.get("question"),
                reference=row.get("reference"),
                output_1=row["answer_1"],
                output_2=row["answer_2"],
                split=_shared(row.get("split")),
                meta=meta,
            )
        except ValidationError as exc:
            raise validation_error(path, exc, line=line) from None
        ratings = row.get("human_ratings") or []
        if not isinstance(ratings, list):
            raise input_error(path, "must be a list of {rater_id, label}", line=line, field="human_ratings")
        if not lean:
            cases.append(case)
        elif ratings:
            cases.append(PairSummary.of(case))
        else:
            left_out.ids.add(item_id)
            if case.split:
                left_out.splits.add(case.split)
        raters: set[str] = set()
        for k, vote in enumerate(ratings):
            where = f"human_ratings[{k}]"
            if not isinstance(vote, dict) or not vote.get("rater_id"):
                raise input_error(path, "each vote needs a rater_id and a label", line=line, field=where)
            rater = sys.intern(str(vote["rater_id"]))
            surrogate = lone_surrogate_message(rater)
            if surrogate is not None:
                raise input_error(path, surrogate, line=line, field=f"{where}.rater_id")
            if rater in raters:
                raise input_error(path, f"rater {rater!r} voted twice on this item", line=line, field=where)
            raters.add(rater)
            label = _pair_label(vote.get("label"), path, line, f"{where}.label", PAIR_LABELS)
            labels.append(
                Vote(item_id, rater, label) if lean else HumanLabel(item_id=item_id, rater_id=rater, label=label)
            )
        for name in baseline_fields:
            value = row.get(name)
            if isinstance(value, dict):
                value = value.get("label")
            if value is not None:
                baselines[name][item_id] = _pair_label(value, path, line, name, BASELINE_PAIR_LABELS)
    return CalibrationData(
        cases, labels, {k: v for k, v in baselines.items() if v}, {"items": source_hash(source)}, left_out
    )


def read_recorded_judgments(path: Source, *, pair_ids: Collection[str] = ()) -> list[Judgment]:
    """Read recorded judge calls: one JSON object per line (see :func:`iter_recorded_judgments`)."""
    return list(iter_recorded_judgments(path, pair_ids=pair_ids))


def iter_recorded_judgments(path: Source, *, pair_ids: Collection[str] = ()) -> Iterator[Judgment]:
    """Recorded judge calls, one JSON object per line, checked and yielded one at a time.

    Fields: item_id, judge, model, prompt (or template), order (`12`/`21`, absent for
    single grading), letter (or verdict), outcome (ok/refused/unparsed/error), text,
    optional repeat, tokens_in, tokens_out, at (ISO timestamp). A call whose outcome is
    not `ok` must not carry a letter (fail closed). A call on an item in `pair_ids` (a pair of
    answers) must say its order.
    """
    for line, fields in _checked_calls(path, pair_ids):
        yield _judgment(source_name(path), line, fields)


def iter_recorded_calls(path: Source, *, pair_ids: Collection[str] = ()) -> Iterator[RecordedCall]:
    """The calls of :func:`iter_recorded_judgments`, with the same checks and errors, as compact records.

    A call whose verdict is text (or absent) and whose token counts are whole numbers (or absent) holds
    nothing a Judgment would convert or refuse beyond the checks made here, so no Judgment is built for
    it (most of the time spent reading); any other call is checked by building its Judgment.
    """
    for line, fields in _checked_calls(path, pair_ids):
        verdict, tokens = fields["verdict"], (fields["tokens_in"], fields["tokens_out"])
        if (verdict is None or type(verdict) is str) and all(n is None or type(n) is int for n in tokens):
            yield RecordedCall(
                fields["item_id"],
                fields["judge"],
                fields["model"],
                fields["template"],
                fields["template_hash"],
                fields["order"],
                fields["repeat"],
                fields["text"],
                verdict,
                fields["outcome"],
                tokens_in=tokens[0],
                tokens_out=tokens[1],
            )
        else:
            judgment = _judgment(source_name(path), line, fields)
            yield RecordedCall(*(getattr(judgment, name) for name in RecordedCall._fields))


def _judgment(path: str, line: int, fields: dict[str, Any]) -> Judgment:
    try:
        return Judgment(**fields)
    except ValidationError as exc:
        raise validation_error(path, exc, line=line) from None


CallKey = tuple[str, str, str, int]  # (judge, template, order or "", repeat): one call per item


def _checked_calls(path: Source, pair_ids: Collection[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, the Judgment's fields) of each recorded call, after the checks that name the field at fault.

    Duplicates are found by :class:`_CallsSeen`; the first line of a duplicate is looked up again.
    """
    name = source_name(path)
    seen = _CallsSeen()
    for line, row in iter_rows(path):
        _check_call_row(name, line, row, pair_ids)
        repeat = repeat_of(name, line, row)
        item_id = sys.intern(_clean_id(name, line, "item_id", row["item_id"]))
        key = _call_key(row, repeat)
        if not seen.add(item_id, key):
            raise input_error(
                name,
                f"duplicate call for item {item_id!r}, judge {key[0]!r}, template {key[1]!r}, "
                f"order {key[2] or None!r} "
                f"(first on line {_first_line(path, item_id, key)})",
                line=line,
            )
        fields: dict[str, Any] = {
            "item_id": item_id,
            "judge": key[0],
            "model": sys.intern(str(row.get("model") or "unknown")),
            "template": key[1],
            "template_hash": sys.intern(str(row.get("template_hash") or "")),
            "order": key[2] or None,
            "repeat": repeat,
            "text": str(row.get("text") or ""),
            "verdict": row.get("letter", row.get("verdict")),
            "outcome": sys.intern(row["outcome"]),
            "tokens_in": row.get("tokens_in"),
            "tokens_out": row.get("tokens_out"),
        }
        if row.get("at"):
            try:
                fields["timestamp"] = datetime.fromisoformat(str(row["at"]))
            except ValueError:
                raise input_error(name, f"not an ISO timestamp: {row['at']!r}", line=line, field="at") from None
        yield line, fields


class _CallsSeen:
    """The (item, call key) pairs seen so far, in little more memory than the item ids.

    Each distinct call key gets a number; an item holds a bit mask of the first 64 key numbers seen on
    it (a small int), and pairs with a later key number (a file with many judges, templates or repeats)
    are kept as pairs, so a mask never grows past 64 bits.
    """

    MASK_BITS = 64

    def __init__(self) -> None:
        self.key_numbers: dict[CallKey, int] = {}
        self.masks: dict[str, int] = {}
        self.pairs: set[tuple[str, int]] = set()

    def add(self, item_id: str, key: CallKey) -> bool:
        """Record the pair; False when it was seen already."""
        number = self.key_numbers.setdefault(key, len(self.key_numbers))
        if number >= self.MASK_BITS:
            pair = (item_id, number)
            if pair in self.pairs:
                return False
            self.pairs.add(pair)
            return True
        mask, bit = self.masks.get(item_id, 0), 1 << number
        self.masks[item_id] = mask | bit
        return not mask & bit


def _check_call_row(path: str, line: int, row: dict[str, Any], pair_ids: Collection[str]) -> None:
    for name in ("item_id", "judge", "outcome"):
        if row.get(name) in (None, ""):
            raise input_error(path, "required field is missing", line=line, field=name)
    template = row.get("prompt", row.get("template"))
    if template in (None, ""):
        raise input_error(path, "required field is missing (the prompt/template id)", line=line, field="prompt")
    if row["outcome"] not in OUTCOMES:
        raise input_error(
            path, f"outcome {row['outcome']!r} is not one of {list(OUTCOMES)}", line=line, field="outcome"
        )
    verdict = row.get("letter", row.get("verdict"))
    order = row.get("order")
    order = str(order) if order is not None else None
    if order is None and str(row["item_id"]) in pair_ids:
        raise input_error(
            path,
            f"item {row['item_id']!r} is a pair: its call must say which answer came first ('12' or '21')",
            line=line,
            field="order",
        )
    if order is not None and order not in ("12", "21"):
        raise input_error(path, f"order {order!r} is not '12' or '21'", line=line, field="order")
    if order is not None and verdict is not None and verdict not in ("A", "B", "C"):
        raise input_error(path, f"letter {verdict!r} is not A, B or C", line=line, field="letter")
    if row["outcome"] != "ok" and verdict is not None:
        raise input_error(
            path, f"a call with outcome {row['outcome']!r} cannot carry a verdict", line=line, field="letter"
        )
    if row["outcome"] == "ok" and verdict is None:
        raise input_error(path, "outcome is 'ok' but there is no letter/verdict", line=line, field="letter")


def _call_key(row: dict[str, Any], repeat: int) -> CallKey:
    """The key of a checked row's call on its item, with shared strings."""
    order = row.get("order")
    return (
        sys.intern(str(row["judge"])),
        sys.intern(str(row.get("prompt", row.get("template")))),
        "" if order is None else sys.intern(str(order)),
        repeat,
    )


def _first_line(path: Source, item_id: str, key: CallKey) -> int:
    """The line of the first call with this key on this item (the rows before it were checked already)."""
    return next(
        line
        for line, row in iter_rows(path)
        if str(row["item_id"]) == item_id and _call_key(row, int(row.get("repeat") or 0)) == key
    )


def _clean_id(path: str | Path, line: int, field: str, value: Any) -> str:
    try:
        return str(clean_id(value))
    except ValueError as exc:
        raise input_error(path, str(exc), line=line, field=field) from None


def read_label_rows(path: str | Path, *, pairwise: bool) -> list[HumanLabel]:
    """Human labels from a separate file (one row per rater per item: item_id, rater_id, label)."""
    labels = read_labels(path)
    if not pairwise:
        return labels
    path = Path(path)
    rows = read_rows(path)
    return [
        HumanLabel(
            item_id=lab.item_id,
            rater_id=lab.rater_id,
            label=_pair_label(lab.label, path, line, "label", PAIR_LABELS),
            output_hash=lab.output_hash,
            selection=lab.selection,
            selection_probability=lab.selection_probability,
        )
        for lab, (line, _) in zip(labels, rows)
    ]


# ---- official MT-Bench human judgments (lmsys/mt_bench_human_judgments) -----------------


def _hf_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Rows of one exported split: a JSON list, JSON lines, or Parquet."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise input_error(path, "reading Parquet needs pyarrow: pip install 'juge[parquet]'") from None
        return list(enumerate(pq.read_table(path).to_pylist(), start=1))
    text = path.read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise input_error(path, f"malformed JSON: {exc.msg}", line=exc.lineno) from None
        return [(k, row) for k, row in enumerate(data, start=1)]
    return read_rows(path)


def _find_split(directory: Path, stem: str) -> Path | None:
    candidates = sorted(
        p
        for p in directory.rglob("*")
        if p.is_file()
        and p.suffix.lower() in (".json", ".jsonl", ".ndjson", ".parquet")
        and p.name.lower().startswith(stem)
    )
    return candidates[0] if candidates else None


def _answer(conversation: Any, turn: int, path: Path, line: int, fieldname: str) -> tuple[str, str]:
    """(question of that turn, assistant answer of that turn) from a [{role, content}, ...] list."""
    if not isinstance(conversation, list):
        raise input_error(path, "must be a list of {role, content} messages", line=line, field=fieldname)
    users = [m.get("content", "") for m in conversation if isinstance(m, dict) and m.get("role") == "user"]
    answers = [m.get("content", "") for m in conversation if isinstance(m, dict) and m.get("role") == "assistant"]
    if len(users) < turn or len(answers) < turn:
        raise input_error(path, f"has no turn {turn}", line=line, field=fieldname)
    return users[turn - 1], answers[turn - 1]


def _hf_winner(value: Any, swapped: bool, path: Path, line: int) -> str:
    """The fixed-order label of a `winner` value; ties of any flavour are ties, except inconsistent."""
    text = str(value)
    if text == "tie (inconsistent)":
        return "inconsistent"
    if text.startswith("tie"):
        return "tie"
    if text not in ("model_a", "model_b"):
        raise input_error(path, f"winner {value!r} is not model_a, model_b or tie", line=line, field="winner")
    a_wins = text == "model_a"
    return "B" if a_wins == swapped else "A"


def read_mtbench_human_judgments(directory: str | Path, *, turn: int = 1) -> CalibrationData:
    """Read the official MT-Bench human-judgments dataset as exported (no network).

    `directory` holds the `human` split (a file whose name starts with `human`) and,
    optionally, the `gpt4_pair` split (name starts with `gpt4_pair`), as a JSON list
    (e.g. `human_judgments.json`), JSON lines (`Dataset.to_json`) or Parquet. Columns:
    question_id, model_a, model_b, winner (model_a / model_b / tie / tie (bothbad) /
    tie (inconsistent)), judge, conversation_a, conversation_b, turn.

    One item per (question, pair of models, turn), with the models in alphabetical
    order (answer 1 = the alphabetically first model), so a vote for `model_a` on a row
    where model_a is the second model becomes B. Category follows the question id
    (81-90 writing, ..., 151-160 humanities). GPT-4's verdicts become the baseline
    `gpt4_2023` (its own both-orders rule: "tie (inconsistent)" is inconsistent).
    A rater with several votes on one item keeps the first. No split is assigned: use `--split all`, or split by question yourself.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory (expected the exported mt_bench_human_judgments files)")
    human_path = _find_split(directory, "human")
    if human_path is None:
        raise InputError(f"{directory}: no file starting with 'human' (.json, .jsonl or .parquet) found")
    cases: dict[str, Case] = {}
    labels: list[HumanLabel] = []
    voted: dict[tuple[str, str], int] = {}

    def item_for(row: dict[str, Any], path: Path, line: int) -> tuple[str, bool]:
        for name in ("question_id", "model_a", "model_b", "winner", "conversation_a", "conversation_b"):
            if row.get(name) is None:
                raise input_error(path, "required field is missing", line=line, field=name)
        row_turn = int(row.get("turn") or 1)
        model_a, model_b = str(row["model_a"]), str(row["model_b"])
        swapped = model_b < model_a
        m1, m2 = sorted((model_a, model_b))
        qid = int(row["question_id"])
        item_id = f"mtb-q{qid}-{m1}-vs-{m2}" + (f"-t{row_turn}" if row_turn != 1 else "")
        if item_id not in cases:
            question, ans_a = _answer(row["conversation_a"], row_turn, path, line, "conversation_a")
            _, ans_b = _answer(row["conversation_b"], row_turn, path, line, "conversation_b")
            ans_1, ans_2 = (ans_b, ans_a) if swapped else (ans_a, ans_b)
            block = (qid - 81) // 10
            category = MTBENCH_CATEGORIES[block] if 0 <= block < len(MTBENCH_CATEGORIES) else None
            cases[item_id] = Case(
                id=item_id,
                group=str(qid),
                category=category,
                question=question,
                output_1=ans_1,
                output_2=ans_2,
                meta={"model_1": m1, "model_2": m2, "question_id": qid, "turn": row_turn},
            )
        return item_id, swapped

    for line, row in _hf_rows(human_path):
        if int(row.get("turn") or 1) != turn:
            continue
        item_id, swapped = item_for(row, human_path, line)
        rater = str(row.get("judge") or "")
        if not rater:
            raise input_error(human_path, "required field is missing", line=line, field="judge")
        label = _hf_winner(row["winner"], swapped, human_path, line)
        if label == "inconsistent":
            raise input_error(human_path, "a human vote cannot be 'tie (inconsistent)'", line=line, field="winner")
        if (item_id, rater) in voted:
            continue  # one vote per rater per item, as in the shared sample: the first one counts
        voted[(item_id, rater)] = line
        labels.append(HumanLabel(item_id=item_id, rater_id=rater, label=label))

    baselines: dict[str, dict[str, Any]] = {}
    sources = {"human": file_hash(human_path)}
    gpt4_path = _find_split(directory, "gpt4_pair")
    if gpt4_path is not None:
        sources["gpt4_pair"] = file_hash(gpt4_path)
        gpt4: dict[str, Any] = {}
        for line, row in _hf_rows(gpt4_path):
            if int(row.get("turn") or 1) != turn:
                continue
            item_id, swapped = item_for(row, gpt4_path, line)
            gpt4.setdefault(item_id, _hf_winner(row["winner"], swapped, gpt4_path, line))
        baselines["gpt4_2023"] = gpt4
    if not labels:
        raise input_error(human_path, f"no human votes for turn {turn}")
    voted_items = {lab.item_id for lab in labels}
    kept = [c for c in cases.values() if c.id in voted_items]
    baselines = {name: {k: v for k, v in b.items() if k in voted_items} for name, b in baselines.items()}
    return CalibrationData(kept, labels, baselines, sources)


# ---- single-score and PASS/FAIL items with ratings in columns ---------------------------


def parse_scale(text: str | None) -> dict[str, Any] | None:
    """`Bad=1,'Could be Improved'=2,Acceptable=3` -> {"Bad": 1.0, "Could be Improved": 2.0, ...}; targets may
    also be A/B/tie or PASS/FAIL (see :func:`juge.data.labels.parse_scale`)."""
    return parse_labels_scale(text)


@dataclass
class LabelledItems:
    """Items whose human labels sit in their own rows, as read (labels not yet converted for a kind)."""

    cases: list[Case]
    votes: dict[str | None, list[RawVote]]  # per criterion; None when there is one
    baselines: dict[str, list[RawVote]]  # per baseline column: a verdict recorded with the item
    source: str
    as_text: dict[str, int] = field(default_factory=dict)  # numbers/booleans read as text, per field


def each_element_rows(
    source: Source, nested: str, mapping: Mapping[str, str] | None, format: str | None
) -> tuple[list[tuple[int, dict[str, Any]]], str] | None:
    """Rows whose items are the elements of a list, for a --labels-nested path with ``[]`` before its raters
    (``sentences[].responses``): each element of ``sentences`` is an item, its id the row's id (as --map or
    --id give it) and the element's position (``doc7/0``); the element's own fields (``text``, ``output``,
    ...) join the row's others, and --map (but its id) reads the joined row. The raters are then read from
    each element's ``responses``. None for any other path (the rows are read as usual)."""
    if not is_path(nested):
        return None
    steps = parse_path(nested, "--labels-nested").steps
    cut = next((k for k, step in enumerate(steps) if step is EACH), None)
    if cut is None or cut == len(steps) - 1:
        return None
    name = source_name(source)
    outer = FieldPath(joined_path(steps[:cut]), steps[:cut])
    inner = FieldPath(joined_path(steps[cut + 1 :]), steps[cut + 1 :])
    # the raters' field in each new row: the path's last key (``responses``), so messages read naturally
    field = next((str(s) for s in reversed(inner.steps) if isinstance(s, str)), "labels")
    id_map = {"id": mapping["id"]} if mapping and "id" in mapping else None
    rest = {k: v for k, v in (mapping or {}).items() if k != "id"} or None
    out: list[tuple[int, dict[str, Any]]] = []
    for (line, row), (_, doc) in zip(iter_rows(source, format=format), mapped_rows(source, id_map, CASE_FIELDS,
                                                                                     format=format)):  # fmt: skip
        try:
            elements = resolve(row, outer)
        except PathError as exc:
            raise input_error(name, f"--labels-nested {nested}: {exc}", line=line, field=nested) from None
        if elements is None:
            continue
        if not isinstance(elements, list):
            raise input_error(name, f"--labels-nested {nested}: {outer.text} is not a list", line=line, field=nested)
        base = {k: v for k, v in row.items() if k != outer.first}
        for j, element in enumerate(elements):
            merged = dict(base)
            if isinstance(element, dict):
                merged.update({k: v for k, v in element.items() if not isinstance(v, dict | list) and k != "id"})
            try:
                item = apply_mapping(merged, rest)
                item[field] = resolve(element, inner)
            except PathError as exc:
                where = f"{outer.text}[{j}]"
                raise input_error(
                    name, f"--labels-nested {nested}: in {where}: {exc}", line=line, field=nested
                ) from None
            item["id"] = f"{id_text(doc.get('id'))}/{j}"
            out.append((line, item))
    return out, field


def read_labelled_items(
    items: Source,
    *,
    mapping: Mapping[str, str] | None = None,
    format: str | None = None,
    label_cols: Sequence[str] = (),
    criteria: Mapping[str, Sequence[str]] | None = None,
    labels_nested: str | None = None,
    baseline_cols: Sequence[str] = (),
    raters_by: str = "key",
) -> LabelledItems:
    """Items (any shape, columns mapped) with human labels in columns (``label_cols``, one set per criterion
    in ``criteria``) or in a nested field (``labels_nested``). The label and baseline columns do not go to
    a case's meta."""
    name = source_name(items)
    exploded = each_element_rows(items, labels_nested, mapping, format) if labels_nested else None
    if exploded is not None:
        rows, labels_nested = exploded
    else:
        rows = list(mapped_rows(items, mapping, CASE_FIELDS, format=format))
    header = set().union(*(row.keys() for _, row in rows))
    for col in baseline_cols:
        if col not in header:
            raise input_error(
                name, f"--baseline-col: no column {col!r} (columns: {', '.join(sorted(header))})", line=1, field=col
            )
    columns = [*label_cols, *(c for cols in (criteria or {}).values() for c in cols)]
    as_text: dict[str, int] = {}
    cases = cases_from_rows(
        name,
        rows,
        drop=[*columns, *baseline_cols, *([nested_top(labels_nested)] if labels_nested else [])],
        id_mapped=bool(mapping and "id" in mapping),
        as_text=as_text,
    )
    votes: dict[str | None, list[RawVote]] = {}
    if label_cols:
        votes[None] = wide_votes(name, rows, label_cols)
    for criterion, cols in (criteria or {}).items():
        votes[criterion] = wide_votes(name, rows, cols, option=f"--criterion {criterion}")
    if labels_nested:
        votes.update(nested_votes(name, rows, labels_nested, raters_by=raters_by))
    baselines = {col: wide_votes(name, rows, [col], option="--baseline-col") for col in baseline_cols}
    return LabelledItems(cases, votes, baselines, name, as_text)


def read_rated_items(
    path: str | Path,
    *,
    label_cols: Sequence[str],
    kind: str = "score",
    scale: Mapping[str, Any] | None = None,
    id_col: str = "id",
    output_col: str = "output",
    baseline_cols: Sequence[str] = (),
) -> CalibrationData:
    """Single-answer items (any shape) whose human ratings sit in columns, one column per rater.

    `kind` is "score" (ordinal numbers; `scale` maps words to numbers) or "passfail".
    An empty cell is a missing rating. `baseline_cols` hold a verdict recorded with
    the item (e.g. an earlier judge's score) and become baselines, never labels.
    """

    if not label_cols:
        raise InputError("--label-cols: name the columns that hold the human ratings (e.g. rating_1,rating_2)")
    mapping = {k: v for k, v in (("id", id_col), ("output", output_col)) if v != k}
    read = read_labelled_items(path, mapping=mapping, label_cols=label_cols, baseline_cols=baseline_cols)
    counts = LabelCounts()
    chosen: Kind = "passfail" if kind == "passfail" else "score"
    labels = convert_votes(read.votes[None], kind=chosen, scale=scale, missing=frozenset(), counts=counts)
    baselines = {
        col: {
            lab.item_id: lab.label
            for lab in convert_votes(v, kind=chosen, scale=scale, missing=frozenset(), counts=counts)
        }
        for col, v in read.baselines.items()
    }
    return CalibrationData(list(read.cases), list(labels), baselines, {"items": source_hash(path)})
