"""Old path of `juge.engine.progress`, kept for one release."""

from juge.engine.progress import *  # noqa: F403
