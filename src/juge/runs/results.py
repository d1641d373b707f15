"""Typed results of runs and stored runs: a run and its summary (``juge run``), two runs compared, a corrected
pass rate (``juge estimate``), ``juge runs``/``show``/``export``, and what a judge is sent (``juge prompt``,
``juge run --dry-run``)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from juge.data.results import KindGuess
from juge.parts import Part, Result
from juge.stats.estimate import Estimate, PlugInEstimate, TunedEstimate


class CheckRate(Part):
    passed: int
    n: int
    rate: float | None = None


class RunJudge(Part):
    """One judge's calls in a run: setup, versions, outcomes and verdicts."""

    setup: str | None = None
    n: int
    model: list[str] = []
    template: str | None = None
    template_hash: str | None = None
    outcomes: dict[str, int] = {}
    verdicts: dict[str, int] = {}
    pair_verdicts: dict[str, int] | None = None


class Cost(Part):
    judges: float = 0.0
    system: float = 0.0
    total: float = 0.0
    unpriced: int = 0


class RunSummary(Result):
    """A run's summary (``juge run --json``): check pass rates, judges' verdicts, pass/fail/missing cases."""

    schema_name: ClassVar[str] = "run_summary"

    run_id: str
    n_cases: int
    checks: dict[str, CheckRate] = {}
    judges: dict[str, RunJudge] = {}
    cases_passed: int = 0
    cases_failed: int = 0
    cases_missing: int = 0
    pass_rate: float | None = None
    min_score: float | None = None
    not_counted: list[str] = []
    system_errors: int = 0
    cost: Cost | None = None
    calls: int | None = None
    engine: dict[str, Any] | None = None


class Gate(Part):
    """The eval's ``[gate] min_pass_rate`` against the run's pass rate (``juge run`` exits 1 when not passed)."""

    min_pass_rate: float
    pass_rate: float
    passed: bool


class Run(Part):
    """A finished run (``juge.run``): where it is stored, whether it resumed, and its summary."""

    run_id: str
    db: str
    resumed: bool = False
    stored_now: int = 0
    engine_stats: dict[str, int] = {}
    summary: RunSummary | None = None  # None while batches are pending
    pending: list[dict[str, Any]] | None = None  # batch mode: the batches still being answered
    first_error: str | None = None  # set when no judgment could be made (every call failed)
    warnings: list[str] = []  # e.g. a judge with over 20 % of its answers unparsed, with one raw answer
    # Answered wholly from the cache and equal to an earlier run: that run (run_id) is kept, no new one.
    reused: bool = False
    gate: Gate | None = None  # set when the eval has a [gate] min_pass_rate and the run finished

    @property
    def pass_rate(self) -> float | None:
        return self.summary.pass_rate if self.summary is not None else None


class RunRef(Part):
    id: str
    name: str | None = None
    dataset_hash: str | None = None
    started_at: str | None = None
    n_cases: int


class Transitions(Part):
    pass_to_fail: int
    fail_to_pass: int
    unchanged_pass: int
    unchanged_fail: int


class CaseSide(Part):
    verdict: str
    reasons: list[str] = []
    outputs: dict[str, str | None] = {}
    judgments: list[dict[str, Any]] = []


class ChangedCase(Part):
    item_id: str
    transition: str
    question: str | None = None
    a: CaseSide
    b: CaseSide


class Comparison(Result):
    """Two runs of the same cases (``juge compare --json``): transitions, paired difference, McNemar."""

    schema_name: ClassVar[str] = "comparison"

    run_a: RunRef
    run_b: RunRef
    judges: list[dict[str, Any]] | dict[str, list[dict[str, Any]]]
    comparable: bool
    forced: bool
    warnings: list[str] = []
    n_shared_cases: int
    n_only_in_a: int
    n_only_in_b: int
    n_inputs_differ: int
    n_missing_verdict: int
    n_paired: int
    pass_rate_a: Estimate
    pass_rate_b: Estimate
    difference_b_minus_a: Estimate
    transitions: Transitions
    mcnemar_p: float | None = None
    changed: list[ChangedCase] = []


class EstimateResult(Result):
    """A run's corrected pass rate (``juge estimate --json``): judge-only, human-only, PPI++ and plug-in."""

    schema_name: ClassVar[str] = "estimate"

    n_cases: int
    n_labelled: int
    n_missing_verdict: int
    judge_only: Estimate
    human_only: Estimate
    ppi: TunedEstimate
    rogan_gladen: PlugInEstimate
    confidence: float
    recommended: str
    why: str
    notes: list[str] = []
    run_id: str | None = None
    dataset_hash: str | None = None
    warnings: list[str] = []
    kind_guess: KindGuess | None = None


class RunRowJudge(Part):
    """A judge as a run's config names it (runs written by other commands may lack some fields)."""

    name: str
    setup: str | None = None
    template: str | None = None
    template_hash: str | None = None
    model: str | None = None


class RunRowSystem(Part):
    model: str
    template_hash: str | None = None


class RunRow(Part):
    """One stored run as ``juge runs`` lists it (``juge runs --json`` writes a list of these)."""

    run_id: str
    id: str  # deprecated: the same as run_id (the key ``juge runs --json`` wrote before 0.2)
    kind: str = "eval"  # what made the run: eval (juge run), tune, tune-holdout, probe, route, demo
    name: str | None = None
    status: str
    started_at: str
    ended_at: str | None = None
    eval_file: str | None = None
    n_cases: int | None = None
    pass_rate: float | None = None
    cases_passed: int | None = None
    done: int | None = None  # a running run: judgments stored so far
    total: int | None = None  # ... of the judgments it needs (None when its config does not say)
    judges: list[RunRowJudge] = []
    system: RunRowSystem | None = None
    dataset_hash: str
    juge_version: str


class ShownRun(Part):
    id: str
    name: str | None = None
    dataset_hash: str
    juge_version: str


class CheckOutcome(Part):
    passed: bool
    reason: str | None = None


class ShownJudgment(Part):
    """One judgment as stored: the raw text whole, the verdict parsed (a word, a number, or per criterion)."""

    judge: str
    model: str
    order: str | None = None
    repeat: int = 0
    outcome: str
    verdict: str | int | float | dict[str, Any] | None = None
    reason: str | None = None
    text: str


class CombinedVerdict(Part):
    """A pairwise judge's verdict over both orders (the letters mapped back to the fixed order)."""

    judge: str
    repeat: int = 0
    verdict: str  # A, B, tie, inconsistent or missing
    meaning: str


class ShownCase(Part):
    id: str
    category: str | None = None
    checks: dict[str, CheckOutcome] = {}
    judgments: list[ShownJudgment] = []
    pair_verdicts: list[CombinedVerdict] = []


class ShowResult(Result):
    """The cases of a stored run (``juge show --json``), filtered by outcome, judge and case, at most ``limit``."""

    schema_name: ClassVar[str] = "show"

    run: ShownRun
    outcome: str | None = None
    judge: str | None = None
    case: str | None = None
    limit: int | None = None
    n_cases: int  # in the run
    n_matching: int  # cases the filters keep, before the limit
    cases: list[ShownCase] = []


class ExportResult(Result):
    """What ``juge export`` wrote (``--json``): the file, its format, its rows and columns."""

    schema_name: ClassVar[str] = "export"

    run_id: str
    path: str
    format: Literal["jsonl", "csv", "parquet"]
    wide: bool = False
    rows: int
    columns: list[str] = []


class RenderedPrompt(Part):
    """One call's messages, exactly as the provider receives them: ``step`` is "verdict", or "solve" for a
    solve-first judge's first call; ``allowed`` the answers a constrained judge may give, ``json_schema``
    what a structured judge is asked for."""

    judge: str
    setup: str
    template: str
    template_hash: str
    model: str
    case_id: str
    order: str | None = None
    step: str
    messages: list[dict[str, str]]
    allowed: list[str] | None = None
    json_schema: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)  # every key, set or not


class DryRun(Result):
    """What ``juge run`` would do (``juge run --dry-run --json``): the calls per judge (before the cache)
    and the first prompt of each; nothing is called or stored."""

    schema_name: ClassVar[str] = "dry_run"

    source: str  # the eval file, or "command line"
    n_cases: int
    calls: dict[str, int] = {}
    system: bool = False  # a system under test generates the outputs first
    system_calls: int = 0
    examples: list[RenderedPrompt] = []

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, **self.model_dump(mode="json", by_alias=True)}
