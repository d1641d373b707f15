"""`juge tune`: improve a judge against people, and report how much of the gain is real.

    >>> from juge.tune import tune_judge
    >>> result = tune_judge("judge.toml", items="items.jsonl", labels="labels.jsonl", out="tuned/")  # doctest: +SKIP
    >>> result.chosen, result.in_sample["value"], result.out_of_fold["value"]  # doctest: +SKIP

See :mod:`juge.tune.selection` for the figures and :mod:`juge.tune.variants` for the candidates.
"""

from __future__ import annotations

from juge.tune.api import labelled_items, tune_judge
from juge.tune.models import CandidateResult, HoldoutFigure, TuneResult

tune = tune_judge  # the name this package's callers and tests have used

__all__ = ["CandidateResult", "HoldoutFigure", "TuneResult", "labelled_items", "tune", "tune_judge"]
