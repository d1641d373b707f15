"""Moved to :mod:`juge.runs` (plan, execute, providers, system); this name is kept for one release."""

from juge.runs.execute import *  # noqa: F403
from juge.runs.plan import *  # noqa: F403
from juge.runs.providers import *  # noqa: F403
