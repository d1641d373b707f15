"""Statistics for judge calibration: pure functions over numpy arrays.

Point statistics take ``(y1, y2, *, ...)`` like scikit-learn's metrics; interval
estimates use a vectorised clustered bootstrap over items and return
:class:`Estimate` objects (``{"value", "low", "high", "n"}``).

Names are imported on first use, so the result models can import ``juge.stats.estimate`` (``Estimate`` and
its one formatter) without loading numpy.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from juge.lazy import lazy_names

if TYPE_CHECKING:
    from juge.stats.agreement import (
        agreement,
        cohen_kappa,
        confusion_table,
        kappa_from_tables,
        kappa_weight_matrix,
        pair_tables,
    )
    from juge.stats.alpha import coincidence_matrix, krippendorff_alpha
    from juge.stats.bootstrap import (
        cluster_resample_indices,
        kappa_estimate,
        paired_ratio_difference,
        percentile_interval,
        ratio_estimate,
        resample_weights,
        statistic_estimate,
    )
    from juge.stats.correlation import pearson, spearman
    from juge.stats.estimate import Estimate, finite_or_none
    from juge.stats.exact import binomial_upper_bound, clopper_pearson, mcnemar_exact

_LAZY = {
    "Estimate": "juge.stats.estimate",
    "agreement": "juge.stats.agreement",
    "binomial_upper_bound": "juge.stats.exact",
    "clopper_pearson": "juge.stats.exact",
    "cluster_resample_indices": "juge.stats.bootstrap",
    "cohen_kappa": "juge.stats.agreement",
    "coincidence_matrix": "juge.stats.alpha",
    "confusion_table": "juge.stats.agreement",
    "finite_or_none": "juge.stats.estimate",
    "kappa_estimate": "juge.stats.bootstrap",
    "kappa_from_tables": "juge.stats.agreement",
    "kappa_weight_matrix": "juge.stats.agreement",
    "krippendorff_alpha": "juge.stats.alpha",
    "mcnemar_exact": "juge.stats.exact",
    "pair_tables": "juge.stats.agreement",
    "paired_ratio_difference": "juge.stats.bootstrap",
    "pearson": "juge.stats.correlation",
    "percentile_interval": "juge.stats.bootstrap",
    "ratio_estimate": "juge.stats.bootstrap",
    "resample_weights": "juge.stats.bootstrap",
    "spearman": "juge.stats.correlation",
    "statistic_estimate": "juge.stats.bootstrap",
}

__all__ = [
    "Estimate",
    "agreement",
    "binomial_upper_bound",
    "clopper_pearson",
    "cluster_resample_indices",
    "cohen_kappa",
    "coincidence_matrix",
    "confusion_table",
    "finite_or_none",
    "kappa_estimate",
    "kappa_from_tables",
    "kappa_weight_matrix",
    "krippendorff_alpha",
    "mcnemar_exact",
    "pair_tables",
    "paired_ratio_difference",
    "pearson",
    "percentile_interval",
    "ratio_estimate",
    "resample_weights",
    "spearman",
    "statistic_estimate",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


class _Stats(ModuleType):
    """``juge.stats.agreement`` is the function, as it was when this package imported every name at once, not
    the submodule of the same name that the import system binds here when a module imports it first."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "agreement" and isinstance(value, ModuleType):
            value = value.agreement
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Stats
