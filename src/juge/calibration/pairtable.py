"""The per-item table of a pairwise calibration study.

One row per item: its group, category, split, the human votes, the majority, the
answer lengths, and for every judge key (``"<judge>/<template>"``, or a baseline
name such as ``"longer answer"`` or ``"gpt4_2023"``) the letters and outcomes of
each order, the raw texts, and the verdict combined from both orders
(:func:`juge.judges.pairwise.combine_orders`). Every figure of the study is
computed from this table; policy and reports reuse it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from juge.data.records import Case, HumanLabel, Judgment, PairSummary, RecordedCall, Vote
from juge.judges.pairwise import PairVerdict, as_agreement_label, combine_orders, to_fixed_order
from juge.judges.panel import members_of

LABELS = ("A", "B", "tie")
ORDERS = ("12", "21")
LONGER_ANSWER = "longer answer"


def judge_key(judge: str, template: str) -> str:
    """The key a judge is reported under: ``"<judge>/<template>"``."""
    return f"{judge}/{template}"


def majority_label(labels: Iterable[str]) -> str | None:
    """The label with strictly the most votes; None when two labels tie for the top (or no votes)."""
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def longer_answer_verdict(len_1: int, len_2: int) -> str:
    """The "longer answer" baseline: the answer with more characters wins; equal lengths are a tie."""
    if len_1 == len_2:
        return "tie"
    return "A" if len_1 > len_2 else "B"


@dataclass(frozen=True, slots=True)
class Call:
    """One judge call in one order, as recorded (letter as written, not yet mapped back)."""

    letter: str | None
    outcome: str
    text: str
    model: str
    repeat: int = 0


@dataclass(slots=True)
class JudgeOnItem:
    """What one judge key said about one item.

    ``calls[order]`` lists the calls in that order by repeat. ``verdict`` combines the
    first call (repeat 0) of each order; it is None (missing) when either order is
    absent or has no letter. Baselines have no calls, only a verdict.
    """

    verdict: PairVerdict | None
    calls: dict[str, list[Call]] = field(default_factory=dict)

    @property
    def label(self) -> str | None:
        """The label used in agreement figures: inconsistent counts as tie; None when missing."""
        return as_agreement_label(self.verdict)

    def letter(self, order: str) -> str | None:
        calls = self.calls.get(order) or []
        return calls[0].letter if calls else None

    def text(self, order: str) -> str | None:
        calls = self.calls.get(order) or []
        return calls[0].text if calls else None


@dataclass(slots=True)
class PairItem:
    """One row of the table; ``majority`` (of its votes, which are fixed) is counted once, as a study asks
    for it many times."""

    item_id: str
    group: str
    category: str
    split: str | None
    has_reference: bool
    len_1: int
    len_2: int
    votes: tuple[tuple[str, str], ...]
    judges: dict[str, JudgeOnItem] = field(default_factory=dict)
    majority: str | None = field(init=False)

    def __post_init__(self) -> None:
        self.majority = majority_label(label for _, label in self.votes)

    @property
    def longer(self) -> str | None:
        """A or B, whichever answer has more characters; None when equal."""
        return None if self.len_1 == self.len_2 else ("A" if self.len_1 > self.len_2 else "B")


@dataclass
class JudgeInfo:
    """Versions behind a judge key: judge name, template id, model versions and template hashes."""

    judge: str
    template: str | None
    models: list[str] = field(default_factory=list)
    template_hashes: list[str] = field(default_factory=list)
    baseline: bool = False
    both_orders: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "template": self.template,
            "models": sorted(self.models),
            "template_hashes": sorted(h for h in self.template_hashes if h),
            "baseline": self.baseline,
            **members_of(self.models),
        }


@dataclass
class PairTable:
    """All items of a pairwise study, with every judge key's verdicts."""

    items: list[PairItem]
    judges: dict[str, JudgeInfo]
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def keys(self) -> list[str]:
        return list(self.judges)

    def where(self, keep: Callable[[PairItem], bool]) -> PairTable:
        """The same table restricted to the items for which ``keep`` is true."""
        return replace(self, items=[it for it in self.items if keep(it)])

    def split(self, name: str | None) -> PairTable:
        """Items of one split (``None`` or ``"all"``: every item)."""
        if name in (None, "all"):
            return self
        return self.where(lambda it: it.split == name)

    def category(self, name: str) -> PairTable:
        return self.where(lambda it: it.category == name)

    def categories(self) -> list[str]:
        return sorted({it.category for it in self.items})

    def judged_by(self, key: str) -> list[PairItem]:
        """The items this key has any call or verdict on (its own universe of items)."""
        return [it for it in self.items if key in it.judges]


def add_judgments(table: PairTable, judgments: Iterable[Judgment | RecordedCall]) -> PairTable:
    """Add recorded or live pairwise judgments (both orders) as judge keys, in place; returns the table.

    Judgments on items not in the table are ignored (but checked). A key's calls on an item replace what
    the item held under that key. This is the hook for extra judges (e.g. a local model run during
    ``juge demo --live``).
    """
    by_id = {it.item_id: it for it in table.items}
    keys: dict[tuple[str, str], str] = {}
    judged: dict[str, set[str]] = {}  # key -> ids of the items given calls by this key here
    for j in judgments:
        key = keys.get((j.judge, j.template))
        if key is None:
            key = keys[(j.judge, j.template)] = judge_key(j.judge, j.template)  # one string per key, not per call
        info = table.judges.setdefault(key, JudgeInfo(judge=j.judge, template=j.template))
        if j.model not in info.models:
            info.models.append(j.model)
        if j.template_hash and j.template_hash not in info.template_hashes:
            info.template_hashes.append(j.template_hash)
        call = _pair_call(j)
        item = by_id.get(j.item_id)
        if item is None:
            continue
        on_items = judged.setdefault(key, set())
        if j.item_id not in on_items:
            on_items.add(j.item_id)
            item.judges[key] = JudgeOnItem(verdict=None)
        item.judges[key].calls.setdefault(j.order, []).append(call)  # type: ignore[arg-type]
    for key, item_ids in judged.items():
        orders = {order for item_id in item_ids for order in by_id[item_id].judges[key].calls}
        one_order = orders if len(orders) == 1 else None
        if one_order:  # asked in one order only: that order's verdict, and no order-flip rate
            table.judges[key].both_orders = False
        for item_id in item_ids:
            _combine(by_id[item_id].judges[key], one_order=next(iter(one_order)) if one_order else None)
    return table


def _pair_call(j: Judgment | RecordedCall) -> Call:
    """The call of a pairwise judgment; ValueError when it has no order or its letter is not A/B/C."""
    if j.order not in ORDERS:
        raise ValueError(f"judgment of {j.judge!r} on item {j.item_id!r} has no order: not a pairwise call")
    letter = j.verdict if j.outcome == "ok" else None
    if letter is not None and letter not in ("A", "B", "C"):
        raise ValueError(f"judgment of {j.judge!r} on item {j.item_id!r} has letter {letter!r}, not A/B/C")
    return Call(letter, j.outcome, j.text, j.model, j.repeat)


def _combine(on: JudgeOnItem, one_order: str | None = None) -> None:
    """Order each order's calls by repeat (file order among equal repeats) and combine the first of each
    (a judge asked in `one_order` only: that order's letter, mapped to the fixed order)."""
    for calls in on.calls.values():
        calls.sort(key=lambda call: call.repeat)
    if one_order is not None:
        on.verdict = to_fixed_order(on.letter(one_order), one_order)  # type: ignore[assignment]
        return
    on.verdict = combine_orders(on.letter("12"), on.letter("21"))


def add_baseline(table: PairTable, name: str, verdicts: Mapping[str, str], *, both_orders: bool = True) -> PairTable:
    """Add verdicts recorded with the items (A/B/tie/inconsistent in the fixed order) as a baseline key."""
    table.judges[name] = JudgeInfo(judge=name, template=None, baseline=True, both_orders=both_orders)
    for item in table.items:
        if item.item_id in verdicts:
            item.judges[name] = JudgeOnItem(verdict=verdicts[item.item_id])  # type: ignore[arg-type]
    return table


def build_pair_table(
    cases: Iterable[Case | PairSummary],
    labels: Iterable[HumanLabel | Vote],
    judgments: Iterable[Judgment | RecordedCall] = (),
    *,
    baselines: Mapping[str, Mapping[str, str]] | None = None,
    sources: Mapping[str, str] | None = None,
) -> PairTable:
    """The per-item table from pairs, human votes (A/B/tie), judgments and baseline verdicts.

    Adds the "longer answer" baseline (more characters wins, equal lengths tie).
    Items without any human vote are dropped: nothing can be measured on them.
    """
    votes: dict[str, list[tuple[str, str]]] = {}
    for lab in labels:
        votes.setdefault(lab.item_id, []).append((lab.rater_id, str(lab.label)))
    items = []
    for case in cases:
        if case.id not in votes:
            continue
        pair = case if isinstance(case, PairSummary) else PairSummary.of(case)
        items.append(
            PairItem(
                item_id=pair.id,
                group=pair.group,
                category=pair.category or "(none)",
                split=pair.split,
                has_reference=pair.has_reference,
                len_1=pair.len_1,
                len_2=pair.len_2,
                votes=tuple(votes[pair.id]),
            )
        )
    table = PairTable(items=items, judges={}, sources=dict(sources or {}))
    add_judgments(table, judgments)
    for name, verdicts in (baselines or {}).items():
        add_baseline(table, name, verdicts)
    add_baseline(
        table, LONGER_ANSWER, {it.item_id: longer_answer_verdict(it.len_1, it.len_2) for it in items}, both_orders=False
    )
    return table
