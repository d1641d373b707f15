"""Typed records that flow through juge: cases, human labels and judgments.

A model verdict is never a human label: `Judgment` and `HumanLabel` are distinct
types and nothing converts one into the other.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

Outcome = Literal["ok", "refused", "unparsed", "error"]
OUTCOMES: tuple[str, ...] = ("ok", "refused", "unparsed", "error")
Order = Literal["12", "21"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_at(value: Any, where: str = "") -> str | None:
    """The place (``""``, ``"[2]"``, ``".note"``) of the first string in `value` holding a lone surrogate.

    JSON allows ``"\\ud800"`` escapes that decode to half of a UTF-16 pair: not a character, and
    not writable as UTF-8, so no store or output file could keep such text. None when there is none.
    """
    if isinstance(value, str):  # an ASCII string (known without a scan) holds none
        return where if not value.isascii() and _LONE_SURROGATE.search(value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = lone_surrogate_at(key, where) if isinstance(key, str) else None
        if found is None:
            found = lone_surrogate_at(item, f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}")
        if found is not None:
            return found
    return None


_LONE_SURROGATE_MESSAGE = (
    "holds a lone surrogate escape (\\ud800-\\udfff without its pair){place}: not text, "
    "cannot be stored as UTF-8; remove it or replace it with the character meant"
)


def refuse_lone_surrogates(value: Any) -> Any:
    """A field validator: a value holding a lone surrogate is an input error naming where it is."""
    at = lone_surrogate_at(value)
    if at is not None:
        raise PydanticCustomError("lone_surrogate", _LONE_SURROGATE_MESSAGE, {"place": _place(at)})
    return value


def lone_surrogate_message(value: Any) -> str | None:
    """The message :func:`refuse_lone_surrogates` gives for `value`; None when it holds no lone surrogate."""
    at = lone_surrogate_at(value)
    return None if at is None else _LONE_SURROGATE_MESSAGE.format(place=_place(at))


def _place(at: str) -> str:
    return f" at {at.lstrip('.')}" if at else ""


MAX_ID_LENGTH = 256
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def clean_id(value: Any) -> Any:
    """An id as juge keeps it: text (a JSON number becomes its digits), NFC-normalised, so ids that
    differ only in Unicode composition are one id. Refused (ValueError): a boolean, leading or trailing
    spaces, a control or invisible character (a newline would break a file of ids), over MAX_ID_LENGTH
    characters. Anything but text and integers is left for the field's type check."""
    if isinstance(value, bool):
        raise ValueError("must be a string, not a boolean")
    if isinstance(value, int):
        value = str(value)
    if not isinstance(value, str):
        return value
    if value.isascii():
        bad = _ASCII_CONTROL.search(value)
        at = bad.group() if bad else None
    else:
        value = unicodedata.normalize("NFC", value)
        at = next((c for c in value if unicodedata.category(c) in _INVISIBLE), None)
    if at is not None:
        raise ValueError(f"holds a control or invisible character (U+{ord(at):04X}); ids must be plain text")
    if value != value.strip():
        raise ValueError("has leading or trailing spaces; remove them (ids are compared exactly)")
    if len(value) > MAX_ID_LENGTH:
        raise ValueError(f"is {len(value)} characters long; ids are at most {MAX_ID_LENGTH}")
    return value


class Message(BaseModel):
    """One turn of a conversation."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "user", "assistant"]
    content: str


class Case(BaseModel):
    """One item to evaluate.

    `question` is the user's request; a multi-turn input is given as `messages`
    (the whole conversation up to the answer under test). `output` is the answer
    for single grading; `output_1`/`output_2` are a pair, in a fixed order.
    """

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    group: str = ""
    category: str | None = None
    question: str | None = None
    messages: list[Message] | None = None
    context: str | None = None
    source: str | None = None
    reference: str | None = None
    output: str | None = None
    output_1: str | None = None
    output_2: str | None = None
    split: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    _no_lone_surrogates = field_validator("*", mode="before")(refuse_lone_surrogates)

    # Numeric ids in JSON/CSV are common; they are kept as their text form.
    _ids_are_text = field_validator("id", "group", mode="before")(clean_id)

    @model_validator(mode="after")
    def _default_group(self) -> Case:
        if (self.output_1 is None) != (self.output_2 is None):
            given, missing = ("output_1", "output_2") if self.output_2 is None else ("output_2", "output_1")
            raise ValueError(
                f"{given} is given without {missing}: a pair needs both answers (use `output` for a single answer)"
            )
        if not self.group:
            self.group = self.id
        return self

    @property
    def is_pair(self) -> bool:
        return self.output_1 is not None and self.output_2 is not None

    def output_hash(self) -> str:
        """A short hash of the answer(s) under test, so a label can be tied to what was labelled."""
        payload = [self.output_1, self.output_2] if self.is_pair else [self.output]
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()[:16]

    def conversation(self) -> list[Message]:
        """The input as a list of messages (a single question becomes one user turn)."""
        if self.messages:
            return list(self.messages)
        if self.question is not None:
            return [Message(role="user", content=self.question)]
        return []


@dataclass(frozen=True, slots=True)
class PairSummary:
    """What a pairwise study reads of a checked :class:`Case` holding a pair: its ids, split and the
    length of each answer, without the texts (a study of a large file keeps one per labelled item)."""

    id: str
    group: str
    category: str | None
    split: str | None
    has_reference: bool
    len_1: int
    len_2: int

    is_pair = True

    @classmethod
    def of(cls, case: Case) -> PairSummary:
        if case.output_1 is None or case.output_2 is None:
            raise ValueError(f"item {case.id!r} is not a pair (needs output_1 and output_2)")
        return cls(
            case.id, case.group, case.category, case.split, bool(case.reference), len(case.output_1), len(case.output_2)
        )


# A numeric label is a point of a rating scale: finite, and far inside what arithmetic on it can hold
# (1e308 squared is infinite, and every agreement figure with it).
MAX_NUMERIC_LABEL = 1e6


def check_label_value(value: Any) -> Any:
    """A field validator: a numeric label must be finite and within +-MAX_NUMERIC_LABEL (ValueError)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"label {value!r} is not a finite number")
        if abs(value) > MAX_NUMERIC_LABEL:
            raise ValueError(f"label {float(value):g} is beyond +-{MAX_NUMERIC_LABEL:g}: not a point of a rating scale")
    return value


class HumanLabel(BaseModel):
    """One rater's label on one item."""

    model_config = ConfigDict(extra="forbid")
    item_id: str = Field(min_length=1)
    rater_id: str = Field(min_length=1)
    label: str | int | float
    explanation: str | None = None
    # Which answer(s) the person saw: `Case.output_hash()` at labelling time. A label whose
    # hash differs from a run's output for the same item was about another answer.
    output_hash: str | None = None
    # The draw the item was labelled from (`juge label init --select`): its method and the item's chance of
    # being drawn, so a figure over these labels can tell an unequal-probability draw and weight by 1 / chance.
    selection: str | None = None
    selection_probability: float | None = Field(default=None, gt=0, le=1)

    _no_lone_surrogates = field_validator("*", mode="before")(refuse_lone_surrogates)

    _ids_are_text = field_validator("item_id", "rater_id", mode="before")(clean_id)

    _label_is_a_point = field_validator("label")(check_label_value)


class Vote(NamedTuple):
    """One rater's label on one item as a lean study read keeps it (``read_pairwise_items(lean=True)``):
    the fields of a :class:`HumanLabel` of the same names, checked as it checks them, in a quarter of
    its memory. A human label too: no judgment becomes one."""

    item_id: str
    rater_id: str
    label: str | int | float
    explanation: str | None = None
    output_hash: str | None = None


def utcnow() -> datetime:
    return datetime.now(UTC)


class Judgment(BaseModel):
    """One judge call on one item, with the raw text always kept.

    `verdict` is what the strict parser read (None unless `outcome == "ok"`).
    For pairs, `order` is the order shown to the judge and `verdict` is the
    letter the judge wrote (A/B/C), not yet mapped back to the fixed order.
    """

    model_config = ConfigDict(extra="forbid")
    item_id: str
    judge: str
    model: str
    template: str
    template_hash: str = ""
    order: Order | None = None
    repeat: int = 0
    text: str = ""
    verdict: str | int | float | dict[str, Any] | None = None
    outcome: Outcome
    reason: str | None = None
    distribution: dict[str, float] | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    latency: float | None = None
    attempts: int | None = None  # provider calls it took, retries included; 0 = from the cache
    timestamp: datetime = Field(default_factory=utcnow)
    run_id: str | None = None

    _item_id_is_clean = field_validator("item_id", mode="before")(clean_id)

    @model_validator(mode="after")
    def _fail_closed(self) -> Judgment:
        if self.outcome != "ok" and self.verdict is not None:
            raise ValueError(f"a judgment with outcome {self.outcome!r} cannot carry a verdict")
        if self.outcome == "ok" and self.verdict is None:
            raise ValueError("a judgment with outcome 'ok' must carry the verdict its parser read")
        return self


class RecordedCall(NamedTuple):
    """One recorded judge call as a study or policy reads it: the fields of a :class:`Judgment` of the same
    names, without its timestamp, tokens, cost and the like, in a tuple of a tenth of a Judgment's memory.

    Only a reader that checked the call as a Judgment would be checked makes one
    (``juge.data.adapters.iter_recorded_calls``); a pairwise study keeps up to a call per line of a
    million-line file in memory.
    """

    item_id: str
    judge: str
    model: str
    template: str
    template_hash: str
    order: Order | None
    repeat: int
    text: str
    verdict: str | int | float | dict[str, Any] | None
    outcome: Outcome
    distribution: dict[str, float] | None = None  # a recorded file carries none; a stored run's judgments do
    tokens_in: int | None = None  # what a call cost (a cascade's price per item)
    tokens_out: int | None = None
