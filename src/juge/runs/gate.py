"""The eval's ``[gate]`` on a run's pass rate: the one rule `juge run` exits by and the reports show.

``min_pass_rate`` bounds the point figure; ``min_pass_rate_lower`` bounds the 95 % interval's lower end: PPI++'s
(the judge's rate corrected by ``labels``, people's PASS/FAIL on a random subset, as `juge estimate`) when the gate
gives labels, else the exact (Clopper-Pearson) interval's that the run report shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from juge.runs.results import Gate, RunSummary
from juge.runs.summary import pass_rate_estimate


def gate_record(min_pass_rate: float | None, min_pass_rate_lower: float | None, labels: Path | None) -> dict[str, Any]:
    """The gate as a stored run's config keeps it (labels as an absolute path), so a report can show it later."""
    return {
        "min_pass_rate": min_pass_rate,
        "min_pass_rate_lower": min_pass_rate_lower,
        "labels": str(labels) if labels is not None else None,
    }


def evaluate_gate(record: Mapping[str, Any], summary: RunSummary, *, db: str | Path | None = None) -> Gate | None:
    """The gate (`gate_record`'s shape) on a finished run's summary; None when it bounds nothing or no case
    passes or fails (the caller says why that is an error)."""
    minimum, floor, labels = record.get("min_pass_rate"), record.get("min_pass_rate_lower"), record.get("labels")
    if (minimum is None and floor is None) or summary.pass_rate is None:
        return None
    lower: float | None = None
    lower_from: Literal["exact", "ppi"] | None = None
    n_labelled = None
    if floor is not None and labels is not None:
        from juge.runs.corrected_run import estimate

        corrected = estimate(summary.run_id, Path(labels), db=db)
        lower, lower_from, n_labelled = corrected.ppi.low, "ppi", corrected.n_labelled
    elif floor is not None:
        exact = pass_rate_estimate(summary.cases_passed, summary.n_cases)
        lower, lower_from = (exact.low if exact is not None else None), "exact"
    passed = (minimum is None or summary.pass_rate >= minimum) and (
        floor is None or (lower is not None and lower >= floor)
    )
    return Gate(
        min_pass_rate=minimum,
        pass_rate=summary.pass_rate,
        min_pass_rate_lower=floor,
        pass_rate_lower=lower,
        lower_from=lower_from,
        n_labelled=n_labelled,
        passed=passed,
    )
