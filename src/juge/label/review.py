"""What the review needs from outside the labelling tables: judge verdicts and agreement so far.

Judge verdicts come from a run in the juge store. For pairs, the two orders are
combined with the both-orders rule (`juge.judges.pairwise`) and an inconsistent
pair counts as a tie, as in every agreement figure. A call that was refused,
unparsed or failed gives no verdict: it is left out, never turned into a label.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.judges.pairwise import as_agreement_label, combine_orders
from juge.label.db import LabelStore, Project, label_columns_by_rater_pair
from juge.label.rubric import canonical_label
from juge.store import Store

if TYPE_CHECKING:
    from juge.label.results import LabelStatus
    from juge.stats.estimate import Estimate


def judge_verdicts(store_path: str | Path, run_id: str, task: str) -> dict[str, dict[str, str]]:
    """{item_id: {judge: verdict}} for a run, in the labels' terms (A/B/tie for pairs)."""
    with Store(store_path) as store:
        run = store.get_run(run_id)
        judgments = [j for j in store.judgments(run["id"]) if j.repeat == 0]
    out: dict[str, dict[str, str]] = defaultdict(dict)
    if task == "pairwise":
        letters: dict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
        for j in judgments:
            if j.order is not None:
                letters[(j.item_id, j.judge)][j.order] = j.verdict if j.outcome == "ok" else None
        for (item, judge), by_order in letters.items():
            verdict = as_agreement_label(combine_orders(by_order.get("12"), by_order.get("21")))
            if verdict is not None:
                out[item][judge] = verdict
        return dict(out)
    for j in judgments:
        if j.outcome == "ok" and j.verdict is not None and not isinstance(j.verdict, dict):
            out[j.item_id][j.judge] = canonical_label(task, j.verdict)
    return dict(out)


def run_output_hashes(store_path: str | Path, run_id: str) -> dict[str, str]:
    """{item_id: Case.output_hash()} of the answers a run judged: each case's output, or the output
    the run's system generated for it (`Store.outputs`), or output_1/output_2 for pairs."""
    from juge.calibration.inputs import with_run_outputs

    with Store(store_path) as store:
        run = store.get_run(run_id)
        cases = with_run_outputs(store.run_cases(run["id"]), store.outputs(run["id"]))
    return {case.id: case.output_hash() for case in cases}


def changed_outputs(labelled: dict[str, str | None], judged: dict[str, str]) -> list[str]:
    """Items in both whose judged answer is not the one people labelled (their output hashes differ)."""
    return sorted(i for i, h in labelled.items() if i in judged and judged[i] != h)


# A label given in under a second (median over a rater's timed labels) is faster than anyone reads a question and
# its answers: flag the rater. A few timed labels at least, so one quick click after a reload flags nobody.
TOO_FAST_SECONDS = 1.0
MIN_TIMED_LABELS = 3


def too_fast(median_seconds: float | None, timed_labels: int) -> bool:
    """True when a rater's median seconds per label is under TOO_FAST_SECONDS over MIN_TIMED_LABELS or more."""
    return median_seconds is not None and timed_labels >= MIN_TIMED_LABELS and median_seconds < TOO_FAST_SECONDS


def status(store: LabelStore, project: Project, *, resamples: int = 2000, seed: int = 0) -> LabelStatus:
    """Counts per rater, items done and left, and person-vs-person agreement on overlap items.

    Agreement is pooled over every pair of raters on every item with two or more labels:
    the share of equal pairs, and Cohen's kappa on the same pairs (Cohen 1960), via juge.stats,
    each with a percentile bootstrap interval that resamples those items (`resamples`, `seed`).
    A rater whose median seconds per label is under TOO_FAST_SECONDS is flagged `too_fast`.
    """
    from juge.label.results import LabelStatus, RaterCount
    from juge.stats.agreement import agreement, cohen_kappa
    from juge.stats.estimate import finite_or_none

    table = store.item_table(project)
    # Items in the cases' order (the order they were stored in), as juge calibrate reads them: the seeded
    # resamples then draw the same items, so both commands give one interval.
    by_case = sorted(table, key=lambda it: it["pk"])
    first, second = label_columns_by_rater_pair(by_case)
    agreement_est, kappa_est = _agreement_estimates(
        by_case, first, second, task=project.task, resamples=resamples, seed=seed
    )
    return LabelStatus(
        project=project.name,
        task=project.task,
        items=len(table),
        items_closed=sum(it["closed"] for it in table),
        items_left=sum(not it["closed"] for it in table),
        overlap_items=sum(it["needed"] > 1 for it in table),
        labels=sum(len(it["labels"]) for it in table),
        raters=[
            RaterCount(**r, too_fast=too_fast(r["median_seconds"], r["timed_labels"]))
            for r in store.rater_counts(project)
        ],
        pairs=len(first),
        agreement=agreement(first, second) if first else None,
        kappa=finite_or_none(cohen_kappa(first, second)) if first else None,
        agreement_estimate=agreement_est,
        kappa_estimate=kappa_est,
        disagreements=len(store.disagreements(project)),
        too_fast_seconds=TOO_FAST_SECONDS,
    )


def _agreement_estimates(
    table: list[dict[str, Any]], first: list[str], second: list[str], *, task: str, resamples: int, seed: int
) -> tuple[Estimate | None, Estimate | None]:
    """Agreement and kappa of the pooled pairs, each with an interval clustered by item (an item's pairs
    share its difficulty, so they are resampled together); (None, None) without pairs."""
    import numpy as np

    from juge.stats.agreement import pair_tables
    from juge.stats.bootstrap import kappa_estimate, ratio_estimate

    if not first:
        return None, None
    # label_columns_by_rater_pair lists an item's k*(k-1)/2 pairs together, items in table order.
    per_item = [len(it["labels"]) * (len(it["labels"]) - 1) // 2 for it in table]
    per_item = [k for k in per_item if k]
    item_index = np.repeat(np.arange(len(per_item)), per_item)
    # The task's labels in calibrate's order (a label nobody gave keeps its place), so the tables, and
    # with them the seeded resamples, are calibrate's: one figure, one interval in both commands.
    from juge.calibration.grades import PASSFAIL
    from juge.calibration.pairtable import LABELS

    fixed = {"pairwise": list(LABELS), "passfail": list(PASSFAIL)}.get(task, [])
    labels = fixed + sorted((set(first) | set(second)) - set(fixed))
    tables = pair_tables(first, second, item_index, labels, n_items=len(per_item))
    equal = np.trace(tables, axis1=1, axis2=2)
    agreement_est = ratio_estimate(equal, tables.sum(axis=(1, 2)), n_resamples=resamples, seed=seed)
    return agreement_est, kappa_estimate(tables, n_resamples=resamples, seed=seed)
