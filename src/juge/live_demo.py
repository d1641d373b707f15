"""Moved to :mod:`juge.demos.live`; this path stays for one release."""

from juge.demos.live import *  # noqa: F403
