"""A run's panels (an eval file's ``[[panels]]``): once the members' judgments are stored, the panel's.

A panel is judged by its members (each an ordinary judge of the run: cached, stored, resumable); its
judgments are then made from theirs by :func:`juge.judges.panel.aggregate_slots` and stored as one more judge,
``NAME`` with template ``AGGREGATE``, whose model lists the members and whose tokens and cost are their sum.
Only a slot (item, order, repeat) every member answered gets a panel judgment, so a resumed run adds the rest and
a rerun adds nothing (a stored member judgment never changes, so neither does the panel's).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from operator import attrgetter
from typing import Any

from juge.data.records import Judgment
from juge.judges.judge import Judge
from juge.judges.panel import Panel, aggregate_slots, panel_hash, panel_model
from juge.store import Store


def panel_config(panels: Sequence[Panel], judges: Sequence[Judge]) -> list[dict[str, Any]]:
    """What a run's config records of each panel: name, members (``judge/template``), aggregation, tie rule,
    setup."""
    by_name = {j.name: j for j in judges}
    return [
        {
            "name": p.name,
            "members": [f"{m}/{by_name[m].template_id}" for m in p.members],
            "aggregate": p.aggregate,
            "ties": p.ties,
            "setup": by_name[p.members[0]].setup,
        }
        for p in panels
    ]


def store_panel_judgments(store: Store, run_id: str, panels: Sequence[Panel], judges: Sequence[Judge]) -> int:
    """Store each panel's judgments for the slots all its members have answered; returns how many are new."""
    if not panels:
        return 0
    by_name = {j.name: j for j in judges}
    members = {p.name: [f"{m}/{by_name[m].template_id}" for m in p.members] for p in panels}
    # The model and version of a panel's judgment: what its members answered as, over the whole run.
    models: dict[str, set[str]] = {}
    hashes: dict[str, set[str]] = {}
    stored = 0
    for j in store.iter_judgments_by_item(run_id):  # streamed twice: a run's judgments are never held whole
        key = f"{j.judge}/{j.template}"
        models.setdefault(key, set()).add(j.model)
        if j.template_hash:
            hashes.setdefault(key, set()).add(j.template_hash)
    made = {
        p.name: (
            panel_model(members[p.name], {k: sorted(models.get(k, ())) for k in members[p.name]}),
            panel_hash(p, members[p.name], (h for k in members[p.name] for h in hashes.get(k, ()))),
        )
        for p in panels
    }
    for _, group in groupby(store.iter_judgments_by_item(run_id), key=attrgetter("item_id")):
        js = list(group)
        done = {(j.judge, j.order, j.repeat) for j in js}
        for panel in panels:
            model, version = made[panel.name]
            for call in aggregate_slots(js, panel, members[panel.name], whole=True):
                if (panel.name, call.order, call.repeat) in done:
                    continue
                stored += store.save_judgment(
                    run_id,
                    Judgment(
                        item_id=call.item_id,
                        judge=panel.name,
                        model=model,
                        template=panel.aggregate,
                        template_hash=version,
                        order=call.order,
                        repeat=call.repeat,
                        text=call.text,
                        verdict=call.verdict,
                        outcome=call.outcome,  # type: ignore[arg-type]
                        reason=call.reason,
                        tokens_in=call.tokens_in,
                        tokens_out=call.tokens_out,
                        cost=call.cost,
                        attempts=0,  # no call of its own: its members' calls are counted as theirs
                    ),
                )
    store.commit()
    return stored
