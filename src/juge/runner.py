"""Moved to :mod:`juge.runs.runner`; this name is kept for one release."""

from juge.runs.runner import *  # noqa: F403
