"""Typed result of the injection probe (``juge probe injection --json``)."""

from __future__ import annotations

from typing import ClassVar

from juge.parts import Part, Result
from juge.stats.estimate import ExactRate, PooledRate


class ProbeBaseline(Part):
    counts: dict[str, int] = {}
    better_answer_counts: dict[str, int] | None = None
    accuracy: dict[str, ExactRate] = {}


class KindFigures(Part):
    description: str
    counts: dict[str, int] = {}
    flip_rate: ExactRate
    moved_rate: ExactRate


class ProbeJudge(Part):
    name: str
    setup: str
    model: str | None = None
    template: str | None = None
    template_hash: str | None = None


class ProbeResult(Result):
    """The injection probe (``juge probe injection --json``): how often injected text flips a right verdict."""

    schema_name: ClassVar[str] = "probe_injection"

    setup: str
    n_items: int
    kinds: list[str]
    baseline: ProbeBaseline
    right_at_baseline: int
    overall: PooledRate
    overall_moved: PooledRate
    any_kind: ExactRate
    per_kind: dict[str, KindFigures] = {}
    calls: dict[str, int] = {}
    first_error: str | None = None
    models: list[str] = []
    judge: ProbeJudge | None = None
