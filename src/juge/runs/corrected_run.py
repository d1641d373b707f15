"""`juge estimate`: a stored run's pass rate corrected by human labels on a random subset of its cases. Reads
the run and the labels; the statistics are in :mod:`juge.runs.corrected` (imported on call: numpy)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from juge.data.readers import Source
    from juge.results import EstimateResult, Run


def estimate(
    run: str | Run,
    labels: Source,
    *,
    db: str | Path | None = None,
    threshold: float | None = None,
    label_threshold: float | None = None,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> EstimateResult:
    """The corrected pass rate of a stored run (``juge estimate``): judge-only, human-only, PPI++ and the
    sensitivity/specificity plug-in, from human ``labels`` (path, DataFrame or rows) on a random subset."""
    from juge.calibration.inputs import labels_on_these_outputs, with_run_outputs
    from juge.data.readers import named_records, read_labels
    from juge.runs.corrected import corrected_pass_rate, human_pass_shares
    from juge.runs.verdicts import run_outcomes, run_threshold
    from juge.store import open_existing_store

    with open_existing_store(db) as store:
        run_row = store.get_run(run if isinstance(run, str) else run.run_id)
        threshold = run_threshold(run_row["config"], threshold)
        cases = store.run_cases(run_row["id"])
        outcomes, _ = run_outcomes(
            cases,
            store.judgments(run_row["id"]),
            store.check_results(run_row["id"]),
            run_row["config"],
            threshold=threshold,
        )
        judged = with_run_outputs(cases, store.outputs(run_row["id"]))
    source = f"--labels {labels}" if isinstance(labels, str | Path) else "labels"
    kept, warnings, unhashed = labels_on_these_outputs(
        read_labels(named_records("labels", labels)), judged, source=source
    )
    warnings = [w + " (the labels left may not be a random sample of the run's cases)" for w in warnings]
    # People's scores (other than 0/1) pass at the judge's threshold unless told otherwise, as in juge tune.
    human = human_pass_shares(kept, threshold=label_threshold, judge_threshold=threshold)
    result = corrected_pass_rate(outcomes, human, confidence=confidence, n_resamples=resamples, seed=seed)
    return result.model_copy(
        update={
            "run_id": run_row["id"],
            "dataset_hash": run_row["dataset_hash"],
            "warnings": warnings,
            "notes": [*unhashed, *result.notes],
        }
    )
