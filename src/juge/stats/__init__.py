"""Statistics for judge calibration: pure functions over numpy arrays.

Point statistics take ``(y1, y2, *, ...)`` like scikit-learn's metrics; interval
estimates use a vectorised clustered bootstrap over items and return
:class:`Estimate` objects (``{"value", "low", "high", "n"}``).
"""

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
