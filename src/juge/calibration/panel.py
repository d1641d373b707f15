"""``--panel NAME=a,b,c[:AGGREGATION]``: panels made from recorded calls on calibrate, policy and tune.

The panel itself (members, aggregation, its calls) is :mod:`juge.judges.panel`, which ``juge run`` uses too.
"""

from __future__ import annotations

from juge.errors import InputError
from juge.judges.panel import AGGREGATIONS, Panel, aggregate_verdicts, panel_calls, panel_members

__all__ = ["Panel", "aggregate_verdicts", "panel_calls", "panel_members", "parse_panels"]


def parse_panels(text: str) -> tuple[Panel, ...]:
    """``NAME=a,b,c[:AGGREGATION[:tie]]``, several separated by ``;`` (default aggregation: majority; ``:tie``
    makes a pairwise split a tie instead of a person's item)."""
    panels = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        name, sep, rest = part.partition("=")
        members_text, _, rule = rest.partition(":")
        aggregate, _, ties = rule.partition(":")
        members = tuple(m.strip() for m in members_text.split(",") if m.strip())
        aggregate, ties = aggregate.strip() or "majority", ties.strip() or "person"
        if not sep or not name.strip() or "/" in name:
            raise InputError(f"--panel {part!r}: write NAME=judge1,judge2,judge3[:majority] (a name without /)")
        if len(members) < 2 or len(set(members)) != len(members):
            raise InputError(f"--panel {part!r}: a panel needs two or more different members")
        if aggregate not in AGGREGATIONS:
            raise InputError(f"--panel {part!r}: aggregation {aggregate!r} is not one of {', '.join(AGGREGATIONS)}")
        if ties not in ("person", "tie"):
            raise InputError(f"--panel {part!r}: after the aggregation, only ':tie' (a split is a pairwise tie)")
        panels.append(Panel(name.strip(), members, aggregate, "tie" if ties == "tie" else "person"))
    if len({p.name for p in panels}) != len(panels):
        raise InputError(f"--panel {text!r}: two panels share a name")
    return tuple(panels)
