"""Typed result of ``juge init``."""

from __future__ import annotations

from juge.parts import Part


class InitResult(Part):
    """What ``juge init`` wrote: the folder, the judge's kind and name, each file (relative) and the cases."""

    directory: str
    """The project folder written."""
    kind: str
    """The judge's setup: passfail, score or pairwise."""
    judge: str
    """The judge's name."""
    files: list[str]
    """The files written, relative to the folder."""
    n_cases: int
    """The starter cases written."""
