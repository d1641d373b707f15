"""Panels: several judges voting as one (a jury; Verga et al. 2024, "Replacing Judges with Juries", PoLL).

A panel ``jury`` of members ``a``, ``b``, ``c`` is one judge ``jury/AGGREGATE`` whose calls are its members'
calls: for every (item, order, repeat) the members answered, one call whose verdict is the members' verdicts
aggregated, whose tokens (and cost) are their sum. Its ``model`` lists the members
(``panel: a/t (model) + b/t (model) + ...``), which :func:`panel_members` reads back. Built from recorded calls
(``--panel`` on calibrate, policy and tune) and by ``juge run`` from an eval file's ``[[panels]]``.

Aggregations (fail closed: no verdict means a person decides, counted as unparsed, never a PASS):

- ``majority``: the verdict more than half the members gave (pairwise letters A/B/C, PASS/FAIL, or a score).
- ``unanimous``: every member gave the same verdict.
- ``mean`` / ``median``: scores, every member's score needed.

When every member gave a verdict and they do not settle it, ``ties = "person"`` (the default) leaves no verdict
(a person decides); ``ties = "tie"`` (pairwise only) makes the panel's verdict a tie (``C``).
"""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from juge.data.records import Judgment, RecordedCall
from juge.errors import InputError

AGGREGATIONS = ("majority", "unanimous", "mean", "median")
SCORE_AGGREGATIONS = ("mean", "median")
TIES = ("person", "tie")
TIE_VERDICT = "C"  # a pairwise tie, as the judges' own letter
PANEL_MODEL = "panel: "  # a panel call's model: this, then its members as `judge/template (model)` joined by " + "
UNSETTLED = "panel_unsettled"  # the reason of a panel call whose members do not settle it


def panel_members(model: str) -> list[str] | None:
    """The member keys (``judge/template``) a panel call's model names, None for a call of one judge."""
    if not model.startswith(PANEL_MODEL):
        return None
    return [part.rsplit(" (", 1)[0] for part in model[len(PANEL_MODEL) :].split(" + ")]


def members_of(models: Iterable[str]) -> dict[str, list[str]]:
    """``{"members": [...]}`` for a judge whose models are a panel's (its members' keys, once each, in order), else
    ``{}``: what a study's record of a judge's versions adds for a panel."""
    found = [m for model in models for m in panel_members(model) or ()]
    return {"members": list(dict.fromkeys(found))} if found else {}


@dataclass(frozen=True)
class Panel:
    """A named panel: its members (judge names or ``judge/template`` keys), how their verdicts combine, and what a
    split among them does (``person``: no verdict; ``tie``: a pairwise tie)."""

    name: str
    members: tuple[str, ...]
    aggregate: str = "majority"
    ties: Literal["person", "tie"] = "person"

    @property
    def key(self) -> str:
        """The panel as a judge key: ``NAME/AGGREGATE`` (its aggregation stands for a template)."""
        return f"{self.name}/{self.aggregate}"


def aggregate_verdicts(verdicts: Sequence[Any], n_members: int, how: str, ties: str = "person") -> Any:
    """The panel's verdict from its members' (None: a member without one), or None when they do not settle it
    (with ``ties="tie"``, members who all answered and split give :data:`TIE_VERDICT`)."""
    given = [v for v in verdicts if v is not None]
    if how in SCORE_AGGREGATIONS:
        if len(given) < n_members or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in given):
            return None
        return statistics.fmean(given) if how == "mean" else statistics.median(given)
    if not given:
        return None
    if how == "unanimous":
        settled = given[0] if len(given) == n_members and all(v == given[0] for v in given) else None
    else:
        (top, count), *_ = Counter(given).most_common()
        settled = top if count * 2 > n_members else None
    if settled is None and ties == "tie" and len(given) == n_members:
        return TIE_VERDICT
    return settled


def member_keys(panel: Panel, keys: Iterable[str]) -> list[str]:
    """Each member's ``judge/template`` key among ``keys`` (a member named by its judge alone must have one)."""
    keys = set(keys)
    members: list[str] = []
    for m in panel.members:
        found = [m] if m in keys else sorted(k for k in keys if k.split("/", 1)[0] == m)
        if not found:
            raise InputError(f"panel {panel.name}: no judgment by {m!r} (judges: {', '.join(sorted(keys)) or 'none'})")
        if len(found) > 1:
            raise InputError(f"panel {panel.name}: {m!r} has several templates ({', '.join(found)}); name one")
        members.append(found[0])
    return members


@dataclass(frozen=True)
class PanelCall:
    """One panel call, the fields a RecordedCall and a Judgment share, plus the members' summed cost."""

    item_id: str
    order: Any
    repeat: int
    text: str
    verdict: Any
    outcome: str
    reason: str | None
    tokens_in: int | None
    tokens_out: int | None
    cost: float | None


def _sum(values: Sequence[Any]) -> Any:
    return None if any(v is None for v in values) else sum(values)


def panel_model(members: Sequence[str], models: dict[str, Sequence[str]]) -> str:
    """A panel call's model: its members with the models they answered as (:func:`panel_members` reads it)."""
    return PANEL_MODEL + " + ".join(f"{m} ({', '.join(sorted(models.get(m, ())))})" for m in members)


def panel_hash(panel: Panel, members: Sequence[str], template_hashes: Iterable[str]) -> str:
    """A panel's version: its aggregation, its tie rule, its members and their templates' hashes."""
    rule = [panel.aggregate] + ([f"ties={panel.ties}"] if panel.ties != "person" else [])
    return hashlib.sha256("\n".join([*rule, *members, *sorted(set(template_hashes))]).encode()).hexdigest()


def aggregate_slots(
    calls: Iterable[Judgment | RecordedCall], panel: Panel, members: Sequence[str], *, whole: bool = False
) -> list[PanelCall]:
    """The panel's calls over ``calls``: one per (item, order, repeat) a member answered (``whole``: only those
    every member answered, so a run stores a panel call once its members' are all in). A member refused, unparsed
    or failed has no vote; a call every member failed is an error."""
    by_slot: dict[tuple[str, Any, int], dict[str, Judgment | RecordedCall]] = {}
    for j in calls:
        key = f"{j.judge}/{j.template}"
        if key in members:
            by_slot.setdefault((j.item_id, j.order, j.repeat), {})[key] = j
    out = []
    for (item_id, order, repeat), got in by_slot.items():
        if whole and len(got) < len(members):
            continue
        votes = [got[m].verdict if m in got and got[m].outcome == "ok" else None for m in members]
        text = "; ".join(f"{m}: {'no verdict' if v is None else v}" for m, v in zip(members, votes))
        verdict = aggregate_verdicts(votes, len(members), panel.aggregate, panel.ties)
        if verdict is None and all(j.outcome == "error" for j in got.values()):
            outcome, reason = "error", f"every member failed ({', '.join(got)})"
        elif verdict is None:
            outcome, reason = "unparsed", f"{UNSETTLED}: the members do not settle it, a person decides"
            text += " (the panel does not settle it: a person decides)"
        else:
            outcome, reason = "ok", None
        cost = _sum([getattr(got.get(m), "cost", None) for m in members])
        out.append(
            PanelCall(
                item_id,
                order,
                repeat,
                text,
                verdict,
                outcome,
                reason,
                _sum([getattr(got.get(m), "tokens_in", None) for m in members]),
                _sum([getattr(got.get(m), "tokens_out", None) for m in members]),
                cost,
            )
        )
    return out


def _check_rule(panel: Panel, verdicts: Sequence[Any]) -> None:
    """Recorded calls carry no setup (an eval file's [[panels]] check theirs at load): the members' verdicts say
    whether the aggregation and the tie rule suit them, as mean of letters or a PASS/FAIL "tie" would leave every
    call unsettled or a verdict no member could give."""
    if panel.aggregate in SCORE_AGGREGATIONS:
        bad = next((v for v in verdicts if isinstance(v, bool) or not isinstance(v, int | float)), None)
        if bad is not None:
            raise InputError(
                f"panel {panel.name}: {panel.aggregate} needs score judges; its members' verdicts are not scores "
                f"(e.g. {bad!r}): use majority or unanimous"
            )
    if panel.ties == "tie":
        bad = next((v for v in verdicts if v not in ("A", "B", TIE_VERDICT)), None)
        if bad is not None:
            raise InputError(
                f"panel {panel.name}: :tie is for pairwise judges (verdicts A, B, C); its members' verdicts are not "
                f"(e.g. {bad!r})"
            )


def panel_calls(judgments: Iterable[Judgment | RecordedCall], panel: Panel) -> list[RecordedCall]:
    """The panel's calls as recorded calls: one per (item, order, repeat) any member answered (see the module)."""
    calls = list(judgments)
    if any(j.judge == panel.name for j in calls):  # NAME/majority would read as one more template of that judge
        raise InputError(f"panel {panel.name}: a judge already has that name; name the panel otherwise")
    members = member_keys(panel, (f"{j.judge}/{j.template}" for j in calls))
    mine = [j for j in calls if f"{j.judge}/{j.template}" in members]
    _check_rule(panel, [j.verdict for j in mine if j.outcome == "ok" and j.verdict is not None])
    models: dict[str, set[str]] = {}
    for j in mine:
        models.setdefault(f"{j.judge}/{j.template}", set()).add(j.model)
    model = panel_model(members, {m: sorted(v) for m, v in models.items()})
    template_hash = panel_hash(panel, members, (j.template_hash for j in mine))
    return [
        RecordedCall(
            c.item_id,
            panel.name,
            model,
            panel.aggregate,
            template_hash,
            c.order,
            c.repeat,
            c.text,
            c.verdict,
            c.outcome,  # type: ignore[arg-type]
            tokens_in=c.tokens_in,
            tokens_out=c.tokens_out,
        )
        for c in aggregate_slots(mine, panel, members)
    ]
