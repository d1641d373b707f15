"""Old path of `juge.store.migrations`, kept for one release."""

from juge.store.migrations import *  # noqa: F403
