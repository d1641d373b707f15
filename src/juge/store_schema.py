"""Old path of `juge.store.layout`, kept for one release."""

from juge.store.layout import *  # noqa: F403
