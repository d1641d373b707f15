"""Typed results of the data readers: the kind of study they guessed (``KindGuess``), what ``juge split``
wrote and what ``juge import traces`` wrote (``--json``)."""

from __future__ import annotations

from typing import ClassVar, Literal

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


class TracesImport(Result):
    """What ``juge import traces`` wrote (``--json``): traces read, skipped and written as cases."""

    schema_name: ClassVar[str] = "import_traces"

    source: str
    """The trace export read."""
    format: Literal["otel", "langfuse", "phoenix"]
    """The export's format: otel (OTLP JSON), langfuse or phoenix."""
    path: str
    """The cases file written (JSONL, one case per trace)."""
    spans: int
    """Spans (Langfuse: traces and observations) read."""
    traces: int
    """Distinct traces read."""
    skipped: dict[str, int] = {}
    """Traces not written as cases, by reason (without a question, without an output)."""
    cases: int
    """Cases written, after sampling."""
    per_day: int | None = None
    """At most this many traces of each UTC day were kept; null for no cap."""
    sample: int | None = None
    """At most this many traces were kept in all; null for no cap."""
    seed: int = 0
    """The seed of the draws."""
    days: dict[str, int] = {}
    """Cases written per UTC day the trace started (``unknown`` without a start time)."""
