"""The parts every policy's Markdown shares, written from its one decision per category (so the prose
cannot contradict the table): "In short", a decision's cell, the too-few paragraph, and safe table cells."""

from __future__ import annotations

from typing import Any

from juge.policy.decision import MIN_ITEMS, MIN_PAIRS, TOO_FEW
from juge.policy.results import PolicyResult


def table_cell(text: Any) -> str:
    """A Markdown table cell: data text may not break the table or inject markup."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def in_short(p: PolicyResult) -> list[str]:
    """The "In short" lines on categories, written from the policy's decisions (so they match the table)."""
    decisions = p.decisions.values()
    judge = [d.category for d in decisions if d.route == "judge"]
    person = [d.category for d in decisions if d.route == "person"]
    thin = [d.category for d in decisions if d.ruling == "too_few"]
    lines = [
        f"- The judge decides alone in: {table_cell(', '.join(judge)) or 'no category'}.",
        f"- A person decides in: {table_cell(', '.join(person)) or 'no category'}.",
    ]
    if thin:
        lines.append(
            f"- Too few items to decide in: {table_cell(', '.join(thin))}, so a person decides there until more labels "
            "are in (see the table)."
        )
    return lines


def decision_cell(p: PolicyResult, category: str) -> str:
    """A category's decision in a Markdown table: where its items go, and why when there are too few items."""
    d = p.decision(category)
    if d is None:
        return ""
    return f"**{d.route}**" + (f" ({TOO_FEW}: {table_cell(d.too_few)})" if d.ruling == "too_few" else "")


def too_few_paragraph(p: PolicyResult) -> list[str]:
    thin = [d.category for d in p.decisions.values() if d.ruling == "too_few"]
    if not thin:
        return []
    return [
        "",
        f"**Too few items to decide** in {table_cell(', '.join(thin))}: a figure rests on fewer than {MIN_PAIRS} pairs or "
        f"{MIN_ITEMS} judged items, so one vote more or less can flip the decision. A person decides there, "
        "whatever the figures say, until more labels are in; then derive again.",
    ]


def weighting_lines(p: PolicyResult) -> list[str]:
    """The policy's line on how its dev labels count, when they are weighted (:mod:`juge.data.draw`)."""
    if p.weighting != "inverse-probability":
        return []
    return [
        "- The dev labels come from a draw with unequal chances (juge label init --select): every agreement and "
        "rate below counts each item 1 / its chance (a Hajek ratio); counts are of the items labelled."
    ]
