"""Typed result of ``juge init``."""

from __future__ import annotations

from juge.parts import Part


class InitResult(Part):
    """What ``juge init`` wrote: the folder, the judge's kind and name, each file (relative) and the cases."""

    directory: str
    kind: str
    judge: str
    files: list[str]
    n_cases: int
