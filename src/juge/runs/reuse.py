"""A re-run answered wholly from the cache repeats an earlier run: keep that one, not a twin.

`juge run` on an unchanged eval makes no call, and without this each such re-run added a near
identical run to `juge runs`. When the new run's judgments, checks and outputs equal those of the
newest finished run of the same eval and data, the new run is removed and the earlier one reused.
"""

from __future__ import annotations

import json
from typing import Any

from juge.store import Store


def _fingerprint(store: Store, run_id: str) -> tuple[Any, ...]:
    judgments = sorted(
        (
            j.item_id, j.judge, j.order or "", j.repeat, j.model, j.template_hash, j.outcome,
            json.dumps(j.verdict, sort_keys=True), j.text,
        )
        for j in store.judgments(run_id)
    )  # fmt: skip
    checks = sorted(
        (item, name, ok, why) for item, results in store.check_results(run_id).items()
        for name, (ok, why) in results.items()
    )  # fmt: skip
    outputs = sorted((k, o["text"], o["outcome"]) for k, o in store.outputs(run_id).items())
    cases = [c.id for c in store.run_cases(run_id)]
    return tuple(judgments), tuple(checks), tuple(outputs), tuple(cases)


def reuse_earlier_run(store: Store, run_id: str) -> str | None:
    """The id of the newest finished run identical to `run_id` (which is then deleted), else None."""
    new = store.get_run(run_id)
    earlier = [
        r
        for r in store.list_runs()
        if r["id"] != run_id
        and r["status"] == "done"
        and r["eval_hash"] == new["eval_hash"]
        and r["dataset_hash"] == new["dataset_hash"]
    ]
    if not earlier or not new["eval_hash"]:
        return None
    mine = _fingerprint(store, run_id)
    for run in earlier:  # newest first
        if _fingerprint(store, run["id"]) == mine:
            store.delete_run(run_id)
            return str(run["id"])
    return None
