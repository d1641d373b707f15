"""Typed results of runs and stored runs: a run and its summary (``juge run``), two runs compared, a corrected
pass rate (``juge estimate``), ``juge runs``/``show``/``export``, and what a judge is sent (``juge prompt``,
``juge run --dry-run``)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from juge.data.results import KindGuess
from juge.judges.identity import IdentityUse
from juge.parts import Part, Result
from juge.stats.estimate import Estimate, PlugInEstimate, TunedEstimate


class CheckRate(Part):
    passed: int
    """Cases that passed the check."""
    n: int
    """Cases the check ran on."""
    rate: float | None = None
    """passed / n; null when the check ran on no case."""


class RunJudge(Part):
    """One judge's calls in a run: setup, versions, outcomes and verdicts."""

    setup: str | None = None
    """The judge's setup: passfail, score or pairwise."""
    n: int
    """Calls the judge made in this run (both orders of a pair count as two)."""
    model: list[str] = []
    """The model versions as the provider answered them (more than one if the version changed during the run)."""
    template: str | None = None
    """The id of the judge's prompt template."""
    template_hash: str | None = None
    """The content hash of the prompt template (a changed template is another judge)."""
    outcomes: dict[str, int] = {}
    """Calls per outcome: ok, refused, unparsed, error."""
    verdicts: dict[str, int] = {}
    """Parsed verdicts per value (PASS/FAIL, a score, or A/B/tie per order)."""
    pair_verdicts: dict[str, int] | None = None
    """A pairwise judge's verdicts over both orders: A, B, tie, inconsistent or missing; null for other setups."""
    unparsed_reasons: dict[str, int] = {}
    """Unparsed answers per reason code, i.e. how often each rule of the parser contract fired (second_verdict,
    negated_verdict, opposite_word, format, ...; see docs/security.md, "Parser contract")."""


class Cost(Part):
    judges: float = 0.0
    """What the judges' calls cost, in US dollars at the listed prices."""
    system: float = 0.0
    """What the system under test's calls cost, in US dollars."""
    total: float = 0.0
    """judges + system."""
    unpriced: int = 0
    """Calls to models with no listed price (not in the totals)."""
    judge_tokens_in: int | None = None
    """Prompt tokens of the judges' calls, as the providers counted them; null in summaries stored before it."""
    judge_tokens_out: int | None = None
    """Answer tokens of the judges' calls, as the providers counted them; null in summaries stored before it."""


class RunSummary(Result):
    """A run's summary (``juge run --json``): check pass rates, judges' verdicts, pass/fail/missing cases."""

    schema_name: ClassVar[str] = "run_summary"

    run_id: str
    """The run's id in the store."""
    n_cases: int
    """Cases in the run."""
    checks: dict[str, CheckRate] = {}
    """Each deterministic check's pass rate, by check name."""
    judges: dict[str, RunJudge] = {}
    """Each judge's calls, versions, outcomes and verdicts, by judge name."""
    cases_passed: int = 0
    """Cases that passed every check and every judge that counts."""
    cases_failed: int = 0
    """Cases that failed a check or a judge that counts."""
    cases_missing: int = 0
    """Cases with no verdict to count (every call unparsed, refused or failed); never counted as passed."""
    pass_rate: float | None = None
    """cases_passed / (cases_passed + cases_failed); null when no case could be counted."""
    min_score: float | None = None
    """The score at which a score judge's case passes ([gate] min_score, or --threshold), if any."""
    not_counted: list[str] = []
    """Judges whose verdicts do not decide pass or fail (a pairwise judge, a score judge without min_score)."""
    system_errors: int = 0
    """Cases whose output the system under test did not give (the call failed): not judged."""
    cost: Cost | None = None
    """What the run's calls cost; null when nothing was priced."""
    calls: int | None = None
    """Calls made to providers in this run (answers from the cache not counted)."""
    engine: dict[str, Any] | None = None
    """The engine's counters (requests, retries, cache hits, ...), for diagnosis."""

    def _headline(self) -> str | None:
        missing = f", {self.cases_missing} without a verdict" if self.cases_missing else ""
        if self.pass_rate is None:
            return f"{self.n_cases} cases{missing}"
        return f"{self.n_cases} cases, {self.pass_rate:.1%} passing ({self.cases_passed}){missing}"


class Gate(Part):
    """The eval's ``[gate]`` against the run's pass rate (``juge run`` exits 1 when not passed): the point figure
    (``min_pass_rate``) and its lower bound (``min_pass_rate_lower``), either or both."""

    min_pass_rate: float | None = None
    """The eval's [gate] min_pass_rate; null when only the lower bound is gated."""
    pass_rate: float
    """The run's pass rate (cases passing every check and counted judge, of all cases)."""
    min_pass_rate_lower: float | None = None
    """The eval's [gate] min_pass_rate_lower; null when only the point figure is gated."""
    pass_rate_lower: float | None = None
    """The lower bound of the pass rate's 95 % interval (set with min_pass_rate_lower): PPI++'s (the judge's rate
    corrected by [gate] labels) when the eval gives labels, else the exact (Clopper-Pearson) interval's."""
    lower_from: Literal["exact", "ppi"] | None = None
    """Where pass_rate_lower comes from: "exact" (the judge's verdicts alone, Clopper-Pearson) or "ppi" (PPI++ with
    the eval's human labels, as `juge estimate`)."""
    n_labelled: int | None = None
    """With [gate] labels: the run's cases that carry a human label."""
    passed: bool
    """Every bound set holds: pass_rate >= min_pass_rate and pass_rate_lower >= min_pass_rate_lower (juge run
    exits 1 when false)."""

    @property
    def failures(self) -> list[str]:
        """What failed, one line per bound (empty when passed)."""
        out = []
        if self.min_pass_rate is not None and self.pass_rate < self.min_pass_rate:
            out.append(f"pass rate {self.pass_rate:.1%} < min_pass_rate {self.min_pass_rate:.1%}")
        low, floor = self.pass_rate_lower, self.min_pass_rate_lower
        if floor is not None and (low is None or low < floor):
            shown = "n/a" if low is None else f"{low:.1%}"
            what = "corrected pass rate's" if self.lower_from == "ppi" else "pass rate's"
            out.append(f"the {what} 95 % lower bound {shown} < min_pass_rate_lower {floor:.1%}")
        return out


class Run(Part):
    """A finished run (``juge.run``): where it is stored, whether it resumed, and its summary."""

    run_id: str
    """The run's id in the store (juge show, juge export and juge compare take it)."""
    db: str
    """The store the run is in: a SQLite file or a PostgreSQL URL."""
    resumed: bool = False
    """True when an unfinished run of the same eval and cases was resumed instead of starting anew."""
    stored_now: int = 0
    """Judgments stored by this call and kept (the rest were stored before it, by the run it resumed); 0 when an
    earlier identical run was reused (``reused``)."""
    engine_stats: dict[str, int] = {}
    """The engine's counters for this call: requests, retries, cache hits, ..."""
    summary: RunSummary | None = None
    """The run's summary; null while batches are pending."""
    pending: list[dict[str, Any]] | None = None
    """Batch mode: the batches still being answered (collect them with a later run); null otherwise."""
    first_error: str | None = None
    """The first error, set when no judgment could be made (every call failed)."""
    warnings: list[str] = []
    """What the run found worth a look, e.g. a judge with over 20 % of its answers unparsed (with one raw answer),
    or the system and a judge from the same model family."""
    reused: bool = False
    """True when the run was answered wholly from the cache and equals an earlier run: that run (run_id) is kept, no
    new one."""
    gate: Gate | None = None
    """The pass-rate gate, set when the eval has a [gate] min_pass_rate or min_pass_rate_lower and the run finished."""

    @property
    def pass_rate(self) -> float | None:
        return self.summary.pass_rate if self.summary is not None else None

    def _headline(self) -> str | None:
        if self.pending:
            return f"{len(self.pending)} batch(es) still being answered"
        said = self.summary._headline() if self.summary is not None else None
        gate = None if self.gate is None else ("gate passed" if self.gate.passed else "gate FAILED")
        reused = f"answered from the cache: equals run {self.run_id}" if self.reused else None
        return "; ".join(
            x for x in (said, gate, reused, f"{len(self.warnings)} warnings" if self.warnings else None) if x
        )


class RunRef(Part):
    id: str
    """The run's id."""
    name: str | None = None
    """The run's name (the eval's name), if any."""
    dataset_hash: str | None = None
    """The hash of the run's cases."""
    started_at: str | None = None
    """When the run started (ISO 8601, UTC)."""
    n_cases: int
    """Cases in the run."""


class Transitions(Part):
    pass_to_fail: int
    """Paired cases that passed in run A and fail in run B."""
    fail_to_pass: int
    """Paired cases that failed in run A and pass in run B."""
    unchanged_pass: int
    """Paired cases that pass in both runs."""
    unchanged_fail: int
    """Paired cases that fail in both runs."""


class CaseSide(Part):
    verdict: str
    """The case's verdict in this run: pass or fail."""
    reasons: list[str] = []
    """Why it failed: the checks and judges that failed it."""
    outputs: dict[str, str | None] = {}
    """The answers judged in this run, by slot (output, or output_1/output_2 for a pair)."""
    judgments: list[dict[str, Any]] = []
    """The judgments of the case in this run, as stored."""


class ChangedCase(Part):
    item_id: str
    """The case's id."""
    transition: str
    """pass_to_fail or fail_to_pass."""
    question: str | None = None
    """The case's question, if it has one."""
    a: CaseSide
    """The case in run A."""
    b: CaseSide
    """The case in run B."""


class Comparison(Result):
    """Two runs of the same cases (``juge compare --json``): transitions, paired difference, McNemar."""

    schema_name: ClassVar[str] = "comparison"

    run_a: RunRef
    """The old run."""
    run_b: RunRef
    """The new run."""
    judges: list[dict[str, Any]] | dict[str, list[dict[str, Any]]]
    """The judges of both runs (name, model, template and its hash), to see whether they differ."""
    comparable: bool
    """False when the runs used different judge models, templates or template hashes."""
    forced: bool
    """True when runs that are not comparable were compared anyway (--allow-different-judges)."""
    warnings: list[str] = []
    """Why the comparison may mislead, e.g. NOT COMPARABLE with the judges that differ."""
    n_shared_cases: int
    """Cases (by id) in both runs."""
    n_only_in_a: int
    """Cases only in run A (left out)."""
    n_only_in_b: int
    """Cases only in run B (left out)."""
    n_inputs_differ: int
    """Shared cases whose inputs differ between the runs (left out)."""
    n_missing_verdict: int
    """Shared cases with no verdict in one of the runs (left out)."""
    n_paired: int
    """Cases compared: shared, same inputs, a verdict in both runs."""
    pass_rate_a: Estimate
    """Run A's pass rate on the paired cases."""
    pass_rate_b: Estimate
    """Run B's pass rate on the paired cases."""
    difference_b_minus_a: Estimate
    """B's pass rate minus A's, with a paired bootstrap interval."""
    transitions: Transitions
    """How the paired cases moved between the runs."""
    mcnemar_p: float | None = None
    """The exact McNemar test's p-value on the discordant pairs; null with no discordant pair."""
    changed: list[ChangedCase] = []
    """The cases whose verdict changed, each with both runs' verdict, reasons and answers."""
    identity: IdentityUse | None = None
    """With --against: both runs' judges checked against the policy or calibration (expired, forced, mismatches)."""


class StratumEstimate(TunedEstimate):
    """PPI++ within one stratum of a stratified estimate (``n`` counts the stratum's cases)."""

    stratum: str
    """The stratum (a category, or several pooled when each had too few labels)."""
    n_labelled: int
    """Labelled cases in the stratum."""
    weight: float
    """The stratum's share of the run's cases: its weight in the combined estimate."""


class StratifiedEstimate(Estimate):
    """Stratified PPI++ (Fisch et al. 2024): PPI++ within each stratum, combined by the strata's shares."""

    by: str
    """What the cases are stratified by (e.g. category)."""
    strata: list[StratumEstimate]
    """Each stratum's estimate, weight and lambda."""
    pooled: list[str] = []
    """Strata with fewer than 2 labelled cases, pooled into one stratum."""


class EstimateResult(Result):
    """A run's corrected pass rate (``juge estimate --json``): judge-only, human-only, PPI++ and plug-in."""

    schema_name: ClassVar[str] = "estimate"

    n_cases: int
    """Cases in the run."""
    n_labelled: int
    """Cases with a human label (a random subset of the run's cases)."""
    n_missing_verdict: int
    """Cases with no judge verdict (left out of the judge's figures)."""
    judge_only: Estimate
    """The pass rate by the judge alone, on every case."""
    human_only: Estimate
    """The pass rate by people alone, on the labelled cases."""
    ppi: TunedEstimate
    """Prediction-powered inference (PPI++): the judge on every case, corrected by its errors on the labelled ones."""
    rogan_gladen: PlugInEstimate
    """The Rogan-Gladen plug-in: the judge's rate corrected by its sensitivity and specificity on the labelled cases."""
    stratified: StratifiedEstimate | None = None
    """Stratified PPI++ (``--strata category``): PPI++ within each stratum, combined; null unless asked for."""
    confidence: float
    """The intervals' confidence level (e.g. 0.95)."""
    recommended: str
    """The estimate to report: the key of one of the figures above."""
    why: str
    """Why that estimate is the one to report."""
    notes: list[str] = []
    """Remarks on the inputs (e.g. labels on answers the run did not judge), for the reader."""
    run_id: str | None = None
    """The run estimated."""
    dataset_hash: str | None = None
    """The hash of the run's cases."""
    warnings: list[str] = []
    """What may make the figures mislead, e.g. few labelled cases."""
    kind_guess: KindGuess | None = None
    """The study's kind when no --kind said it: what juge guessed, and from what."""
    identity: IdentityUse | None = None
    """With --against: the run's judge checked against the policy or calibration (expired, forced, mismatches)."""
    weighting: str | None = None
    """With --selection: how the labels are weighted, as the selection's draw requires: ``simple`` (one random
    sample), ``stratified`` (by category: stratified PPI++) or ``inverse-probability`` (each label by 1 / its chance:
    the human-only, PPI++ and plug-in figures are weighted)."""


class RunRowJudge(Part):
    """A judge as a run's config names it (runs written by other commands may lack some fields)."""

    name: str
    """The judge's name."""
    setup: str | None = None
    """passfail, score or pairwise."""
    template: str | None = None
    """The id of the judge's prompt template."""
    template_hash: str | None = None
    """The content hash of the prompt template."""
    model: str | None = None
    """The model the run's config asked for."""


class RunRowSystem(Part):
    model: str
    """The model of the system under test."""
    template_hash: str | None = None
    """The content hash of the system's prompt template."""


class RunRow(Part):
    """One stored run as ``juge runs`` lists it (``juge runs --json`` writes a list of these)."""

    run_id: str
    """The run's id (what juge show, export and compare take)."""
    id: str
    """The run's id (as run_id; kept for readers written before run_id)."""
    kind: str = "eval"
    """What made the run: eval (juge run), tune, tune-holdout, probe, route, demo."""
    name: str | None = None
    """The run's name (the eval's name), if any."""
    status: str
    """running or done."""
    started_at: str
    """When the run started (ISO 8601, UTC)."""
    ended_at: str | None = None
    """When the run finished; null while it runs."""
    eval_file: str | None = None
    """The eval file the run was started from, as given."""
    n_cases: int | None = None
    """Cases in the run."""
    pass_rate: float | None = None
    """The run's pass rate, when finished and countable."""
    cases_passed: int | None = None
    """Cases that passed, when finished."""
    done: int | None = None
    """A running run: judgments stored so far."""
    total: int | None = None
    """A running run: the judgments it needs (null when its config does not say)."""
    judges: list[RunRowJudge] = []
    """The judges as the run's config names them."""
    system: RunRowSystem | None = None
    """The system under test, when the run generated the outputs."""
    dataset_hash: str
    """The hash of the run's cases."""
    juge_version: str
    """The juge version that made the run."""


class ShownRun(Part):
    id: str
    """The run's id."""
    name: str | None = None
    """The run's name, if any."""
    dataset_hash: str
    """The hash of the run's cases."""
    juge_version: str
    """The juge version that made the run."""


class CheckOutcome(Part):
    passed: bool
    """Whether the case passed the check."""
    reason: str | None = None
    """Why it failed, if it did."""


class ShownJudgment(Part):
    """One judgment as stored: the raw text whole, the verdict parsed (a word, a number, or per criterion)."""

    judge: str
    """The judge's name."""
    model: str
    """The model version as the provider answered it."""
    order: str | None = None
    """12 or 21: the order a pair's answers were shown in; null for a single answer."""
    repeat: int = 0
    """Which repeat of the same call (0 for the first)."""
    outcome: str
    """ok, refused, unparsed or error."""
    verdict: str | int | float | dict[str, Any] | None = None
    """The verdict parsed from the text: a word, a number, or one per criterion; null when none could be read."""
    reason: str | None = None
    """Why there is no verdict (the parser's or the provider's message), if there is none."""
    text: str
    """The judge's raw answer, whole."""


class CombinedVerdict(Part):
    """A pairwise judge's verdict over both orders (the letters mapped back to the fixed order)."""

    judge: str
    """The judge's name."""
    repeat: int = 0
    """Which repeat (0 for the first)."""
    verdict: str
    """A, B, tie, inconsistent (the two orders disagree) or missing."""
    meaning: str
    """The verdict in words (which answer is better)."""


class ShownCase(Part):
    id: str
    """The case's id."""
    category: str | None = None
    """The case's category, if any."""
    checks: dict[str, CheckOutcome] = {}
    """Each check's outcome on the case, by check name."""
    judgments: list[ShownJudgment] = []
    """The case's judgments, as stored."""
    pair_verdicts: list[CombinedVerdict] = []
    """Each pairwise judge's verdict over both orders."""


class ShowResult(Result):
    """The cases of a stored run (``juge show --json``), filtered by outcome, judge and case, at most ``limit``."""

    schema_name: ClassVar[str] = "show"

    run: ShownRun
    """The run shown."""
    outcome: str | None = None
    """The outcome filter: unparsed, refused, error, or fail (cases that fail); null for all."""
    judge: str | None = None
    """The judge filter; null for every judge."""
    case: str | None = None
    """The case filter; null for every case."""
    limit: int | None = None
    """At most this many cases; null for all."""
    n_cases: int
    """Cases in the run."""
    n_matching: int
    """Cases the filters keep, before the limit."""
    cases: list[ShownCase] = []
    """The cases shown."""


class ExportResult(Result):
    """What ``juge export`` wrote (``--json``): the file, its format, its rows and columns."""

    schema_name: ClassVar[str] = "export"

    run_id: str
    """The run exported."""
    path: str
    """The file written."""
    format: Literal["jsonl", "csv", "parquet", "inspect", "promptfoo", "otel"]
    """jsonl, csv or parquet (a table); inspect, promptfoo or otel (another tool's format)."""
    wide: bool = False
    """True for one row per case (a column per judge's verdict); false for one row per judgment."""
    rows: int
    """Rows written; for inspect, promptfoo and otel the judgments written."""
    columns: list[str] = []
    """The columns written, in order (tables only)."""
    lost: list[str] = []
    """inspect, promptfoo, otel: what of the run the format cannot carry."""
    linked: int | None = None
    """otel: cases whose span went into the trace the case was imported from (``meta.trace_id``)."""
    decisions: int | None = None
    """otel with --route: the policy decisions read (each on its case's span)."""


class RenderedPrompt(Part):
    """One call's messages, exactly as the provider receives them: ``step`` is "verdict", or "solve" for a
    solve-first judge's first call; ``allowed`` the answers a constrained judge may give, ``json_schema``
    what a structured judge is asked for."""

    judge: str
    """The judge's name."""
    setup: str
    """passfail, score or pairwise."""
    template: str
    """The id of the judge's prompt template."""
    template_hash: str
    """The content hash of the prompt template."""
    model: str
    """The model the call goes to."""
    case_id: str
    """The case the prompt is for."""
    order: str | None = None
    """12 or 21 for a pair (the order the answers are shown in); null for a single answer."""
    step: str
    """verdict, or solve for a solve-first judge's first call."""
    messages: list[dict[str, str]]
    """The messages as the provider receives them (role and content)."""
    allowed: list[str] | None = None
    """The answers a constrained judge may give; null when unconstrained."""
    json_schema: dict[str, Any] | None = None
    """What a structured judge is asked to answer with; null otherwise."""

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)  # every key, set or not


class DryRun(Result):
    """What ``juge run`` would do (``juge run --dry-run --json``): the calls per judge (before the cache)
    and the first prompt of each; nothing is called or stored."""

    schema_name: ClassVar[str] = "dry_run"

    source: str
    """The eval file, or "command line"."""
    n_cases: int
    """Cases the run would judge."""
    calls: dict[str, int] = {}
    """Calls each judge would make, before the cache."""
    system: bool = False
    """True when a system under test generates the outputs first."""
    system_calls: int = 0
    """Calls the system under test would make."""
    examples: list[RenderedPrompt] = []
    """The first prompt of each judge, as it would be sent."""
    warnings: list[str] = []
    """What the run would warn about before its first call (cases without a field a judge reads, empty
    answers, a judge of the system's model family)."""

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, **self.model_dump(mode="json", by_alias=True)}
