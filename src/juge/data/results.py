"""Typed results of the data readers: the kind of study they guessed (``KindGuess``), and what ``juge split``
wrote (``--json``)."""

from __future__ import annotations

from typing import ClassVar

from juge.parts import Part, Result


class KindGuess(Part):
    """The study's kind when no ``--kind`` (nor ``--scale``) said it: what juge guessed, and from what."""

    kind: str
    guessed_from: str


class SplitSide(Part):
    rows: int
    groups: int


class SplitResult(Result):
    """What ``juge split`` wrote (``--json``): rows and groups on each side of a split by ``by``."""

    schema_name: ClassVar[str] = "split"

    source: str
    path: str
    by: str
    holdout_share: float
    seed: int
    dev: SplitSide
    holdout: SplitSide
