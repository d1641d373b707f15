"""Panels: several judges voting as one (a jury; Verga et al. 2024, "Replacing Judges with Juries", PoLL).

``--panel jury=chat-small,chat-strong,other:majority`` makes one judge ``jury/majority`` whose calls are its
members' calls: for every (item, order, repeat) the members answered, one call whose verdict is the members'
verdicts aggregated, and whose tokens are their sum (its cost is theirs). Calibrate, policy and tune then
measure it like any judge; its ``model`` lists the members (``panel: a + b + c``).

Aggregations (fail closed: no verdict means a person decides, counted as unparsed, never a PASS):

- ``majority``: the verdict more than half the members gave (pairwise letters A/B/C, PASS/FAIL, or a score);
  none (a tie among votes, or too many members without a verdict) gives no verdict.
- ``unanimous``: every member gave the same verdict; else none.
- ``mean`` / ``median``: scores, every member's score needed.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from juge.data.records import Judgment, RecordedCall
from juge.errors import InputError

AGGREGATIONS = ("majority", "unanimous", "mean", "median")
PANEL_MODEL = "panel: "  # a panel call's model: this, then its members as `judge/template (model)` joined by " + "


def panel_members(model: str) -> list[str] | None:
    """The member keys (``judge/template``) a panel call's model names, None for a call of one judge."""
    if not model.startswith(PANEL_MODEL):
        return None
    return [part.rsplit(" (", 1)[0] for part in model[len(PANEL_MODEL) :].split(" + ")]


@dataclass(frozen=True)
class Panel:
    """A named panel: its members (judge names or ``judge/template`` keys) and how their verdicts combine."""

    name: str
    members: tuple[str, ...]
    aggregate: str = "majority"


def parse_panels(text: str) -> tuple[Panel, ...]:
    """``NAME=a,b,c[:AGGREGATION]``, several separated by ``;`` (default aggregation: majority)."""
    panels = []
    for part in (p.strip() for p in text.split(";")):
        if not part:
            continue
        name, sep, rest = part.partition("=")
        members_text, _, aggregate = rest.partition(":")
        members = tuple(m.strip() for m in members_text.split(",") if m.strip())
        aggregate = aggregate.strip() or "majority"
        if not sep or not name.strip() or "/" in name:
            raise InputError(f"--panel {part!r}: write NAME=judge1,judge2,judge3[:majority] (a name without /)")
        if len(members) < 2 or len(set(members)) != len(members):
            raise InputError(f"--panel {part!r}: a panel needs two or more different members")
        if aggregate not in AGGREGATIONS:
            raise InputError(f"--panel {part!r}: aggregation {aggregate!r} is not one of {', '.join(AGGREGATIONS)}")
        panels.append(Panel(name.strip(), members, aggregate))
    if len({p.name for p in panels}) != len(panels):
        raise InputError(f"--panel {text!r}: two panels share a name")
    return tuple(panels)


def aggregate_verdicts(verdicts: Sequence[Any], n_members: int, how: str) -> Any:
    """The panel's verdict from its members' (None: a member without one), or None when they do not settle it."""
    given = [v for v in verdicts if v is not None]
    if how in ("mean", "median"):
        if len(given) < n_members or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in given):
            return None
        return statistics.fmean(given) if how == "mean" else statistics.median(given)
    if not given:
        return None
    if how == "unanimous":
        return given[0] if len(given) == n_members and all(v == given[0] for v in given) else None
    (top, count), *rest = Counter(given).most_common()
    return top if count * 2 > n_members else None


def panel_calls(judgments: Iterable[Judgment | RecordedCall], panel: Panel) -> list[RecordedCall]:
    """The panel's calls: one per (item, order, repeat) any member answered, aggregated (see the module)."""
    calls = list(judgments)
    keys = {f"{j.judge}/{j.template}" for j in calls}
    members: list[str] = []
    for m in panel.members:
        found = [m] if m in keys else sorted(k for k in keys if k.split("/", 1)[0] == m)
        if not found:
            raise InputError(
                f"--panel {panel.name}: no judgment by {m!r} (judges: {', '.join(sorted(keys)) or 'none'})"
            )
        if len(found) > 1:
            raise InputError(f"--panel {panel.name}: {m!r} has several templates ({', '.join(found)}); name one")
        members.append(found[0])
    by_slot: dict[tuple[str, Any, int], dict[str, Judgment | RecordedCall]] = {}
    for j in calls:
        key = f"{j.judge}/{j.template}"
        if key in members:
            by_slot.setdefault((j.item_id, j.order, j.repeat), {})[key] = j
    models = {m: sorted({j.model for j in calls if f"{j.judge}/{j.template}" == m}) for m in members}
    model = PANEL_MODEL + " + ".join(f"{m} ({', '.join(models[m])})" for m in members)
    hashes = sorted({j.template_hash for j in calls if f"{j.judge}/{j.template}" in members})
    template_hash = hashlib.sha256("\n".join([panel.aggregate, *members, *hashes]).encode()).hexdigest()
    out = []
    for (item_id, order, repeat), got in by_slot.items():
        votes = [got[m].verdict if m in got and got[m].outcome == "ok" else None for m in members]
        verdict = aggregate_verdicts(votes, len(members), panel.aggregate)
        text = "; ".join(f"{m}: {'no verdict' if v is None else v}" for m, v in zip(members, votes))
        tokens_in = [getattr(got.get(m), "tokens_in", None) for m in members]
        tokens_out = [getattr(got.get(m), "tokens_out", None) for m in members]
        out.append(
            RecordedCall(
                item_id,
                panel.name,
                model,
                panel.aggregate,
                template_hash,
                order,
                repeat,
                text if verdict is not None else f"{text} (the panel does not settle it: a person decides)",
                verdict,
                "ok" if verdict is not None else "unparsed",
                tokens_in=None if None in tokens_in else sum(tokens_in),  # type: ignore[arg-type]
                tokens_out=None if None in tokens_out else sum(tokens_out),  # type: ignore[arg-type]
            )
        )
    return out
