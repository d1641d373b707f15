"""Old path of `juge.engine.limits`, kept for one release."""

from juge.engine.limits import *  # noqa: F403
