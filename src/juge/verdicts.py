"""Moved to :mod:`juge.runs.verdicts`; this name is kept for one release."""

from juge.runs.verdicts import *  # noqa: F403
