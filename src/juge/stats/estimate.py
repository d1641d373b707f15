"""The one result type every interval-producing statistic returns: :class:`juge.results.Estimate`."""

from juge.results import Estimate, finite_or_none

__all__ = ["Estimate", "finite_or_none"]
