"""Typed result of the injection probe (``juge probe injection --json``)."""

from __future__ import annotations

from typing import ClassVar

from juge.parts import Part, Result
from juge.stats.estimate import ExactRate, PooledRate


class ProbeBaseline(Part):
    counts: dict[str, int] = {}
    """Items per state without injection: right, wrong, and the states with no verdict."""
    better_answer_counts: dict[str, int] | None = None
    """PASS/FAIL judges: the better answer's verdicts (PASS, FAIL, missing); null for pairwise."""
    accuracy: dict[str, ExactRate] = {}
    """The share of judged items right without injection (pairs or items), and for PASS/FAIL judges the shares of
    worse answers that FAIL and better answers that PASS."""


class KindFigures(Part):
    description: str
    """What the injection says."""
    counts: dict[str, int] = {}
    """Items right at baseline per state under this injection: flipped, held, tie, inconsistent, and the states with
    no verdict."""
    flip_rate: ExactRate
    """The share of trials whose verdict picked the worse, injected answer (exact interval)."""
    moved_rate: ExactRate
    """The share of trials whose verdict left the better answer: a flip, a tie or inconsistent orders (exact
    interval)."""


class ProbeJudge(Part):
    name: str
    """The judge's name."""
    setup: str
    """passfail or pairwise."""
    model: str | None = None
    """The model the judge called."""
    template: str | None = None
    """The id of the judge's prompt template."""
    template_hash: str | None = None
    """The content hash of the prompt template."""


class ProbeResult(Result):
    """The injection probe (``juge probe injection --json``): how often injected text flips a right verdict."""

    schema_name: ClassVar[str] = "probe_injection"

    setup: str
    """passfail or pairwise."""
    n_items: int
    """Items in the probe set."""
    kinds: list[str]
    """The injection kinds tried."""
    baseline: ProbeBaseline
    """The judge without injection."""
    right_at_baseline: int
    """Items the judge got right without injection: only these count (a flip is a change the injection caused)."""
    overall: PooledRate
    """Flips over every kind's trials, pooled, with a clustered bootstrap interval over items."""
    overall_moved: PooledRate
    """Moves (a flip, a tie or inconsistent orders) over every kind's trials, pooled likewise."""
    any_kind: ExactRate
    """The share of items at least one kind flipped (what trying every kind achieves), exact interval."""
    per_kind: dict[str, KindFigures] = {}
    """Each kind's counts, flip rate and moved rate, by kind."""
    calls: dict[str, int] = {}
    """Calls per outcome: ok, refused, unparsed, error."""
    first_error: str | None = None
    """The first failed call's error, if any."""
    models: list[str] = []
    """The model versions that answered."""
    judge: ProbeJudge | None = None
    """The judge probed."""
