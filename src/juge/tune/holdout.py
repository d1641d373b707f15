"""`juge tune --test`: the chosen judge, once, on the holdout, through the machine's holdout registry.

The same test-once rule as a policy's holdout (:mod:`juge.policy.registry`): items are known by a
content fingerprint, so a second test of any of them, from any store, directory or renamed copy, is
refused unless forced, and a forced test is recorded and shown as FORCED.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from juge.errors import InputError
from juge.policy.registry import Registry, case_fingerprint, fingerprint_set_hash, fingerprints_to_look_up
from juge.providers.base import Provider
from juge.tune.models import HoldoutFigure
from juge.tune.variants import LabelledItem, build


def _refuse(previous: Sequence[dict[str, Any]], n: int) -> None:
    first = previous[0]
    shared = sum(t["shared_items"] for t in previous)
    raise InputError(
        f"the holdout was tested before: {shared} of its {n} items were used by an earlier test "
        f"({first['test_id']} on {first['used_at']}, store {first['store']}, from {first['cwd']}); a holdout is "
        "tested once per machine. --force tests it again, and the result is marked FORCED"
    )


def test_on_holdout(
    tuned: dict[str, Any],
    base_dir: Path,
    hold: Sequence[LabelledItem],
    *,
    provider: Provider,
    store: Any,
    threshold: float | None,
    force: bool,
    seed: int,
    n_resamples: int,
    concurrency: int,
) -> HoldoutFigure:
    from juge.engine import Engine, EngineOptions
    from juge.runs.execute import judged_run
    from juge.tune.search import comparable, figure_fields, human_votes, label_order, table_kind, verdicts_of
    from juge.tune.selection import Table, estimates

    judge = build(tuned, str(tuned["name"]), base_dir, "tuned judge")
    fingerprints = [case_fingerprint(it.case) for it in hold]
    look_up = fingerprints_to_look_up(it.case for it in hold)
    with Registry() as registry:
        previous = registry.tests_sharing(look_up)
        if previous and not force:
            _refuse(previous, len(hold))  # before any call is paid for
        cases = [it.case for it in hold]
        data_hash = fingerprint_set_hash(fingerprints)
        eval_hash = (
            "tune-holdout:"
            + hashlib.sha256(
                json.dumps([judge.template_hash, judge.model, data_hash, provider.cache_identity]).encode()
            ).hexdigest()[:24]
        )
        engine = Engine(store, EngineOptions(concurrency=concurrency, progress=False))

        with judged_run(store, engine, [judge], cases, provider=provider, eval_hash=eval_hash,
                        dataset_hash=data_hash, name="tune --test", config={"kind": "tune-holdout", "tune_holdout": True},
                        description="holdout") as run:  # fmt: skip
            verdicts = verdicts_of(store.judgments(run.id), judge.setup)
            run_id = run.id
        with registry.locked():
            previous = registry.tests_sharing(look_up)
            if previous and not force:
                _refuse(previous, len(hold))
            registry.record(
                test_id=f"tune:{judge.name}:{judge.template_hash}", policy_hash=judge.template_hash, split="holdout",
                data_hash=data_hash, forced=bool(previous), fingerprints=fingerprints, store=str(store.path),
            )  # fmt: skip
    votes = human_votes(hold, judge.setup, threshold)
    said = [comparable(judge.setup, verdicts.get(it.case.id), threshold) for it in hold]
    groups = [it.case.group or it.case.id for it in hold]
    kind = table_kind(judge.setup)
    table = Table.from_items(kind, label_order(judge.setup), ["chosen"], {"chosen": said}, votes, groups,
                             dict.fromkeys(groups, 0), {"chosen": 0.0})  # fmt: skip
    figures = estimates(table.counts[0], kind, table.labels, n_resamples=n_resamples, seed=seed)
    return HoldoutFigure(**figure_fields(figures), n_items=len(hold), run_id=run_id, forced=bool(previous))
