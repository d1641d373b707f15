"""Typed results of the data readers: the kind of study they guessed (``KindGuess``), and what ``juge split``
wrote (``--json``)."""

from __future__ import annotations

from typing import ClassVar

from juge.parts import Part, Result


class KindGuess(Part):
    """The study's kind when no ``--kind`` (nor ``--scale``) said it: what juge guessed, and from what."""

    kind: str
    """The kind guessed: pairwise, score or passfail."""
    guessed_from: str
    """What it was guessed from (the labels' values, the judgments' verdicts)."""


class SplitSide(Part):
    rows: int
    """Rows on this side."""
    groups: int
    """Groups on this side (a group is never on both sides)."""


class SplitResult(Result):
    """What ``juge split`` wrote (``--json``): rows and groups on each side of a split by ``by``."""

    schema_name: ClassVar[str] = "split"

    source: str
    """The file split."""
    path: str
    """The file written (the rows with a split column)."""
    by: str
    """The column whose values are the groups kept together."""
    holdout_share: float
    """The share of groups sent to holdout."""
    seed: int
    """The seed of the group draw."""
    dev: SplitSide
    """The dev side."""
    holdout: SplitSide
    """The holdout side."""
