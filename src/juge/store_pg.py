"""Old path of `juge.store.postgres`, kept for one release."""

from juge.store.postgres import *  # noqa: F403
