"""A policy's decision for one category, the one object every command reads.

Each category is exactly one of: ``judge`` (the judge decides alone), ``person``, or ``too_few`` (too few
items to decide: a person decides). :func:`category_decision` makes it from a category row of the policy
file, an old one or a new one alike, so derive, the holdout test, route, the audit sample, the report, the
terminal tables and the Markdown cannot disagree.

A row written before this module kept the figures' decision in ``decision`` beside a ``too_few`` flag (a
thin category could say ``judge``); a row written now keeps the figures' decision in ``by_figures`` and the
decision that routes in ``decision``; in both, ``reason`` is the figures' reason. Both read the same here:
too few items is a person, whatever the figures say.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

TOO_FEW = "too few items to decide: treat as person until more labels"

Route = Literal["judge", "person"]
Ruling = Literal["judge", "person", "too_few"]
RULING_WORDS = {"judge": "judge", "person": "person", "too_few": "person (too few items to decide)"}


class CategoryDecision(BaseModel):
    """Where a category's items go (``route``), and why: the ruling (judge, person, or too few items, which
    routes to a person), what the figures alone say, and the reason in words."""

    model_config = ConfigDict(frozen=True)

    category: str
    ruling: Ruling
    by_figures: Route
    too_few: str | None = None
    reason: str

    @property
    def route(self) -> Route:
        """``judge`` only when the judge decides alone; a thin category goes to a person."""
        return "judge" if self.ruling == "judge" else "person"

    @property
    def words(self) -> str:
        """The decision as a reader sees it: ``judge``, ``person`` or ``person (too few items to decide)``."""
        return RULING_WORDS[self.ruling]


def category_decision(
    category: str, *, decision: str, reason: str, too_few: str | None = None, by_figures: str | None = None
) -> CategoryDecision:
    """The one rule: too few items go to a person; otherwise the figures decide.

    ``reason`` is the figures' reason in words. A row written now carries ``by_figures`` (the figures' decision);
    a row written before kept it in ``decision``.
    """
    figures: Route = "judge" if (by_figures or decision) == "judge" else "person"
    ruling: Ruling = "too_few" if too_few else figures
    if ruling == "too_few":
        reason = f"{TOO_FEW} ({too_few}); the figures alone say {figures}: {reason}"
    return CategoryDecision(
        category=category, ruling=ruling, by_figures=figures, too_few=too_few or None, reason=reason
    )


def decided_row(row: dict[str, Any], *, figures: str, reason: str, too_few: str | None) -> dict[str, Any]:
    """A category row as derive writes it: the decision that routes (``decision``, ``ruling``), what the figures
    alone say (``by_figures``) and why (``reason``), and the shortage of items (``too_few``)."""
    d = category_decision("", decision=figures, reason=reason, too_few=too_few, by_figures=figures)
    return {**row, "too_few": d.too_few, "by_figures": d.by_figures, "ruling": d.ruling, "decision": d.route,
            "reason": reason}  # fmt: skip


MIN_PAIRS = 30

MIN_ITEMS = 10


def too_few(n_judged: int, jp: dict[str, Any], pp: dict[str, Any]) -> str | None:
    """Why a category's figures are too thin to decide on (None when they are not): fewer than MIN_ITEMS
    judged items, or a judge-vs-person or person-vs-person agreement on fewer than MIN_PAIRS pairs."""
    thin = [f"{n_judged} judged items (< {MIN_ITEMS})"] if n_judged < MIN_ITEMS else []
    thin += [
        f"{what} on {e.get('n') or 0} pairs (< {MIN_PAIRS})"
        for what, e in (("judge vs person", jp), ("person vs person", pp))
        if (e.get("n") or 0) < MIN_PAIRS
    ]
    return "; ".join(thin) or None


def still_open(*, too_few: str | None, low: float | None, high: float | None, margin: float) -> str | None:
    """Why a category's decision is still open (None when it is settled): too few items to decide, or the paired
    interval of judge-vs-person minus person-vs-person (``low``, ``high``) still holds ``-margin``, so more items
    could settle it either way. Settled means the interval is clear of ``-margin``, as ``juge plan`` counts it."""
    if too_few:
        return f"too few items to decide ({too_few})"
    if low is not None and high is not None and low <= -margin <= high:
        return f"its interval [{low:+.3f}, {high:+.3f}] still holds -{margin:g}"
    return None
