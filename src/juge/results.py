"""Typed results: every figure juge computes and every result JSON it writes, as pydantic models.

One ``Estimate`` (value, interval, n) with one formatter, :func:`format_estimate`; one model per
result file (``Calibration``, ``RunSummary``, ``Comparison``, ``EstimateResult``, ``ProbeResult``,
``RouteResult``, ``AuditSample``; the policy file ``PolicyResult`` and its test ``HoldoutTest``).

The files keep the keys juge always wrote, and gain ``schema_version``. A result remembers which
keys it was built or loaded with, and ``to_dict()`` writes exactly those (so an older file read
and written again keeps its shape); keys a model does not declare are kept too (``extra="allow"``).
``to_dict()`` is what the CLI's ``--json`` writes.

The JSON Schemas in ``docs/schema/`` are generated from these models::

    python -m juge.results docs/schema
"""

from __future__ import annotations

import html
import json
import math
import numbers
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError, model_validator

from juge.errors import input_error, validation_error
from juge.policy.decision import CategoryDecision, Route, Ruling, category_decision
from juge.policy.status import PolicyStatus, StatusName, policy_status

SCHEMA_VERSION = 1


def finite_or_none(x: Any) -> float | None:
    """Return ``float(x)``, or None when ``x`` is None, NaN or infinite (keeps NaN out of JSON)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def check_schema_version(data: dict[str, Any], source: str | Path, what: str) -> None:
    """Refuse a result file written by a newer juge (as the stores refuse a newer schema): its keys may mean
    something this version does not know."""
    version = data.get("schema_version", 1)
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise input_error(
            source,
            f"{what} schema_version {version}; this juge reads up to {SCHEMA_VERSION} (upgrade juge)",
            field="schema_version",
        )


def _is_number(x: Any) -> bool:
    """A real number, numpy's too, but not a bool (JSON's true is no figure)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class Part(BaseModel):
    """A piece of a result: keeps unknown keys, writes back the keys it was given."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of this part (the keys it was built or loaded with, in the model's order)."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)

    # Read access as in the JSON (``result["judges"]``), for code written against the dicts.
    def _field(self, key: str) -> str | None:
        fields = type(self).model_fields
        if key in fields and fields[key].alias in (None, key):
            return key
        alias = next((name for name, f in fields.items() if f.alias == key), None)
        if alias is not None:
            return alias
        return key if key in (self.model_extra or {}) else None

    def __getitem__(self, key: str) -> Any:
        name = self._field(key)
        if name is None or name not in self.model_fields_set | set(self.model_extra or {}):
            raise KeyError(key)
        return self.model_dump(mode="json", include={name}, exclude_unset=True, by_alias=True)[key]

    def __contains__(self, key: object) -> bool:
        name = self._field(key) if isinstance(key, str) else None
        return name is not None and name in self.model_fields_set | set(self.model_extra or {})

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default


class Result(Part):
    """A whole result file: a ``schema_version`` first, ``load``/``save``, ``to_dict`` for ``--json``."""

    schema_name: ClassVar[str] = "result"
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, **super().to_dict()}

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """Read a result file written by juge (any earlier version: keys it lacks stay unset); a file that is
        not one is an :class:`~juge.errors.InputError` naming the file and the dotted field."""
        from juge.files import read_json_object

        return cls.from_json(read_json_object(path, cls.schema_name.replace("_", " ")), path)

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str | Path) -> Self:
        """The result in `data` (a result file's JSON, read from `source`), checked field by field."""
        check_schema_version(data, source, cls.schema_name.replace("_", " "))
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise validation_error(source, exc) from None

    def save(self, path: str | Path) -> Path:
        """Write the result atomically as the CLI's ``--json`` does."""
        from juge.files import write_json

        return write_json(Path(path), self.to_dict())


# ---- Estimate ------------------------------------------------------------------------------


def estimate_parts(
    est: Estimate | dict[str, Any] | None, digits: int = 3, *, percent: bool = False, signed: bool = False
) -> tuple[str, str, str]:
    """The three pieces :func:`format_estimate` joins: value, interval and n (an absent piece is ``""``).

    For a report cell that wraps each piece in its own markup; the rounding and the ``n/a`` rule live here.

    >>> estimate_parts(Estimate(0.71234, 0.65, 0.7701, n=155), 1, percent=True)
    ('71.2 %', '[65.0, 77.0]', 'n=155')
    >>> estimate_parts(Estimate(None, n=0))
    ('n/a', '', 'n=0')
    """
    if not est:
        return "n/a", "", ""
    if isinstance(est, dict):
        try:
            est = Estimate(est.get("value"), est.get("low"), est.get("high"), n=est.get("n") or 0)
        except (TypeError, ValueError):
            return "n/a", "", ""
    n_text = f"n={est.n}"
    if est.value is None:
        return "n/a", "", n_text
    scale, unit = (100.0, " %") if percent else (1.0, "")
    sign = "+" if signed else ""  # a difference shows its direction
    interval = ""
    if est.low is not None and est.high is not None:
        interval = f"[{scale * est.low:{sign}.{digits}f}, {scale * est.high:{sign}.{digits}f}]"
    return f"{scale * est.value:{sign}.{digits}f}{unit}", interval, n_text


def format_estimate(
    est: Estimate | dict[str, Any] | None,
    digits: int = 3,
    *,
    with_n: bool = True,
    percent: bool = False,
    signed: bool = False,
) -> str:
    """The one text form of an estimate: ``0.712 [0.650, 0.770] n=155``.

    ``percent=True`` gives ``71.2 % [65.0, 77.0] n=155``; an undefined figure is ``n/a n=0`` and an
    absent one ``n/a``. Accepts an :class:`Estimate` or its JSON dict (reports read stored files).

    >>> format_estimate(Estimate(0.71234, 0.65, 0.7701, n=155))
    '0.712 [0.650, 0.770] n=155'
    >>> format_estimate({"value": 0.5, "low": None, "high": None, "n": 4}, 2, percent=True)
    '50.00 % n=4'
    >>> format_estimate(Estimate(-0.02, -0.08, 0.031, n=40), signed=True)  # a difference
    '-0.020 [-0.080, +0.031] n=40'
    """
    value, interval, n_text = estimate_parts(est, digits, percent=percent, signed=signed)
    return " ".join(part for part in (value, interval, n_text if with_n else "") if part)


class Estimate(Part):
    """A point estimate with a confidence interval and the count it rests on.

    ``value`` is None when the statistic is undefined (for example ``n == 0``); ``low``/``high`` are
    None when no interval could be formed. NaN and infinities become None, so ``to_dict()`` is always
    valid JSON. ``n`` counts the pooled units the value is computed from (pairs, votes, items: each
    producing function documents which). ``n_items`` is the number of resampled clusters (items) of a
    clustered bootstrap: an attribute only, not part of the JSON.

    >>> e = Estimate(0.71234, 0.65, 0.7701, n=155)
    >>> e.to_dict()
    {'value': 0.71234, 'low': 0.65, 'high': 0.7701, 'n': 155}
    >>> str(e)
    '0.712 [0.650, 0.770] n=155'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # strict: a string ("0.7") or a bool is not a number, nor a float a count
    value: float | None = Field(strict=True)
    low: float | None = Field(default=None, strict=True)
    high: float | None = Field(default=None, strict=True)
    n: int = Field(default=0, ge=0, strict=True)
    _n_items: int | None = PrivateAttr(default=None)

    def __init__(
        self,
        value: Any = None,
        low: Any = None,
        high: Any = None,
        n: Any = 0,
        n_items: int | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(**{"value": value, "low": low, "high": high, "n": n}, **extra)
        self._n_items = n_items

    @model_validator(mode="before")
    @classmethod
    def _finite(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # Numbers of any kind (numpy's too) become floats, NaN None; anything else (text in a file, a bool)
        # is left for the strict fields to refuse with the field's name.
        for name in ("value", "low", "high"):
            if _is_number(data.get(name)):
                data[name] = finite_or_none(data[name])
        if data.get("value") is None:
            for name in ("low", "high"):
                if name in data:
                    data[name] = None
        if isinstance(data.get("n"), numbers.Integral) and not isinstance(data["n"], bool):
            data["n"] = int(data["n"])  # numpy's integers
        return data

    @property
    def n_items(self) -> int | None:
        return self._n_items

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used everywhere: ``{"value", "low", "high", "n"}`` (plus a subclass's keys)."""
        return super().to_dict()

    def fmt(self, digits: int = 3, *, with_n: bool = True, percent: bool = False) -> str:
        """Human form, e.g. ``"0.712 [0.650, 0.770] n=155"``; ``"n/a n=0"`` when undefined."""
        return format_estimate(self, digits, with_n=with_n, percent=percent)

    def __str__(self) -> str:
        return self.fmt()


class TunedEstimate(Estimate):
    """The PPI++ estimate: an Estimate and its power-tuning weight ``lambda``."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    lambda_: float = Field(alias="lambda")


class PlugInEstimate(Estimate):
    """The Rogan-Gladen plug-in: an Estimate, the judge's sensitivity and specificity, and why it has no value."""

    sensitivity: float | None = None
    specificity: float | None = None
    why_not: str | None = None


class ExactRate(Estimate):
    """A rate ``k / n`` with an exact (Clopper-Pearson) interval."""

    k: int
    method: str


class PooledRate(Part):
    """A pooled rate ``k / n`` over items with a clustered bootstrap interval (the probe's overall rates)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    n: int
    k: int
    n_items: int
    method: str
    resamples: int
    seed: int
    too_few: str | None = None  # why there is no interval: too few items to resample (low/high are null)

    def fmt(self, digits: int = 3, *, with_n: bool = True, percent: bool = False) -> str:
        return format_estimate(self.to_dict(), digits, with_n=with_n, percent=percent)


# ---- Calibration ---------------------------------------------------------------------------


class Ceiling(Part):
    """Person vs person (all pairs of distinct raters on an item, pooled)."""

    agreement: Estimate | None = None
    kappa: Estimate | None = None
    weighted_kappa: Estimate | None = None
    pearson: Estimate | None = None
    spearman: Estimate | None = None
    krippendorff_alpha: Estimate | None = None
    krippendorff_alpha_interval: Estimate | None = None
    agreement_without_ties: Estimate | None = None
    n_pairs: int | None = None
    at_threshold: AtThreshold | None = None
    failures_caught: Caught | None = None  # PASS/FAIL: one person's FAIL votes another also called FAIL
    false_flags: Caught | None = None


class AtThreshold(Part):
    """Agreement and kappa on ``score >= threshold``."""

    threshold: float
    agreement: Estimate | None = None
    kappa: Estimate | None = None


class Agreement(Part):
    """Agreement and Cohen's kappa of a judge against the majority or against each person."""

    agreement: Estimate | None = None
    kappa: Estimate | None = None


class InconsistentPatterns(Part):
    n: int
    shown_first_won_both: int
    shown_second_won_both: int
    tie_in_one_order: int


class Disagreement(Part):
    """An item where the judge's label differs from the majority, with the raw text of each order."""

    item_id: str
    category: str | None = None
    majority: str | None = None
    verdict: str | None = None
    votes: dict[str, int] = {}
    letters: dict[str, str | None] | None = None
    texts: dict[str, str | None] | None = None
    text: str | None = None  # a single answer (PASS/FAIL): the one call's raw text


class Confusion(Part):
    """Counts with people as rows and the judge as columns."""

    labels: list[Any]
    rows: str = "people"
    columns: str = "judge"
    matrix: list[list[int]]


class ReliabilityPoint(Part):
    judge_score: float
    mean_human_score: Estimate


class Caught(Part):
    """Among comparisons where people said one label, how many the judge called FAIL: k of n, and the rate."""

    k: int
    n: int
    rate: Estimate


class JudgeFigures(Part):
    """Every figure of one judge key (pairwise, score or PASS/FAIL: the keys of its kind are set)."""

    n_items: int
    verdict_counts: dict[str, int] = {}
    outcomes: dict[str, int] | None = None
    vs_majority: Agreement | None = None
    vs_people: Agreement | None = None
    order_flip_rate: Estimate | None = None
    inconsistent_patterns: InconsistentPatterns | None = None
    picks_longer: Estimate | None = None
    picks_longer_against_majority: Estimate | None = None
    self_consistency: Estimate | None = None
    agreement: Estimate | None = None
    kappa: Estimate | None = None
    weighted_kappa: Estimate | None = None
    pearson: Estimate | None = None
    spearman: Estimate | None = None
    krippendorff_alpha: Estimate | None = None
    confusion: Confusion | None = None
    reliability: list[ReliabilityPoint] | None = None
    at_threshold: AtThreshold | None = None
    failures_caught: Caught | None = None
    false_flags: Caught | None = None
    ceiling: Ceiling | None = None
    per_category: dict[str, JudgeFigures] | None = None
    disagreements: list[Disagreement] | None = None


class PeopleFigures(Part):
    """Counts and the person-vs-person figures of one subset (a category of a pairwise study)."""

    n_items: int
    n_votes: int
    n_raters: int
    ceiling: Ceiling
    n_without_majority: int | None = None
    majority_picks_longer: Estimate | None = None


class ReferenceComparison(Part):
    """A judge's agreement with people with and without a reference answer, on the same items, paired."""

    with_reference: str
    without_reference: str
    n_items: int
    vs_people_with: Estimate
    vs_people_without: Estimate
    difference: Estimate


class JudgeDifference(Part):
    """Two judges with the same template: agreement with people on the same items, paired."""

    a: str
    b: str
    n_items: int
    vs_people_a: Estimate
    vs_people_b: Estimate
    difference: Estimate


class Truth(Part):
    mode: str
    n_items: int | None = None


class BootstrapInfo(Part):
    n_resamples: int
    seed: int
    level: float
    unit: str = "item"


class JudgeVersion(Part):
    judge: str | None = None
    template: str | None = None
    models: list[str] = []
    template_hashes: list[str] = []
    baseline: bool = False


class Versions(Part):
    juge: str | None = None
    sources_sha256: dict[str, str] = {}
    judges: dict[str, JudgeVersion] = {}


class Dataset(Part):
    name: str
    attribution: str | None = None
    license: str | None = None


class InputCounts(Part):
    """Every item and label value accounted for: read, without a label, missing, on an unknown item, duplicate."""

    items_read: int | None = None
    items_without_label: int | None = None
    label_values_read: int | None = None
    missing_values: int | None = None
    labels_unknown_item: int | None = None
    duplicate_votes: int | None = None


class KindGuess(Part):
    """The study's kind when no ``--kind`` (nor ``--scale``) said it: what juge guessed, and from what."""

    kind: str
    guessed_from: str


class Calibration(Result):
    """A calibration study (``juge calibrate --json``, ``juge demo``'s calibration.json).

    ``kind`` is ``pairwise``, ``score`` or ``passfail``, or ``criteria`` for several criteria (one study
    per criterion under ``criteria``, each of ``criterion_kind``, and a ``side_by_side`` table); the ceiling is person vs person, compare it
    with each judge's ``vs_people`` (pairs) or its figures under truth ``each`` (grades).

    >>> import juge
    >>> cal = juge.calibrate(items=juge.demo_path("items.jsonl"), judgments=juge.demo_path("judgments.jsonl"),
    ...                      resamples=200)
    >>> cal.ceiling.agreement.value > 0.5
    True
    """

    schema_name: ClassVar[str] = "calibration"

    kind: str
    criterion_kind: str | None = None
    split: str
    n_items: int | None = None
    n_votes: int | None = None
    n_raters: int | None = None
    truth: Truth | None = None
    scale: list[Any] | None = None
    ceiling: Ceiling = Ceiling()
    n_without_majority: int | None = None
    majority_picks_longer: Estimate | None = None
    per_category: dict[str, PeopleFigures] | None = None
    judges: dict[str, JudgeFigures] = {}
    reference: list[ReferenceComparison] | None = None
    differences: list[JudgeDifference] | None = None
    criteria: dict[str, Calibration] | None = None
    side_by_side: list[dict[str, Any]] | None = None
    bootstrap: BootstrapInfo | None = None
    versions: Versions | None = None
    notes: list[str] = []
    counts: InputCounts | None = None
    kind_guess: KindGuess | None = None
    dataset: Dataset | None = None
    # The one-line answers ("Judge X can stand in for a person on ..."), one per judge; none for criteria.
    headlines: list[dict[str, Any]] | None = Field(default=None, alias="headline")
    _input_warnings: list[str] = PrivateAttr(default_factory=list)

    @property
    def input_warnings(self) -> list[str]:
        """The notes that are warnings about the inputs (e.g. labels left out), for a terminal to stress."""
        return self._input_warnings

    def headline(self) -> list[dict[str, Any]]:
        """The headline table: the ceiling, then each judge against people (one row each)."""
        if self.criteria:
            return [
                {**row, "who": f"{name}: {row['who']}"} for name, c in self.criteria.items() for row in c.headline()
            ]
        rows = [{"who": "people (ceiling)", "agreement": self.ceiling.agreement, "kappa": self.ceiling.kappa}]
        for key, judge in self.judges.items():
            if self.kind == "pairwise":
                vs = judge.vs_people or Agreement()
                rows.append({"who": key, "agreement": vs.agreement, "kappa": vs.kappa})
            else:
                rows.append({"who": key, "agreement": judge.agreement, "kappa": judge.kappa})
        return rows

    def figures(self) -> Iterator[dict[str, Any]]:
        """Every estimate as one row: who (``ceiling``, ``people`` or a judge key), category, figure
        (dotted for nested ones, e.g. ``vs_people.agreement``), value, low, high and n."""
        for name, study in (self.criteria or {}).items():
            yield from ({**row, "who": f"{name}: {row['who']}"} for row in study.figures())
        yield from _estimate_rows("ceiling", "all", "", self.ceiling)
        if self.majority_picks_longer is not None:
            yield _row("people", "all", "majority_picks_longer", self.majority_picks_longer)
        for category, people in (self.per_category or {}).items():
            yield from _estimate_rows("ceiling", category, "", people.ceiling)
        for key, judge in self.judges.items():
            yield from _estimate_rows(key, "all", "", judge)
            for category, figures in (judge.per_category or {}).items():
                yield from _estimate_rows(key, category, "", figures)

    def to_frame(self) -> Any:
        """Every figure as a long pandas DataFrame (who, category, figure, value, low, high, n).

        Needs pandas (``pip install 'juge[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("Calibration.to_frame() needs pandas: pip install 'juge[pandas]'") from None
        return pd.DataFrame(list(self.figures()), columns=["who", "category", "figure", "value", "low", "high", "n"])

    def _repr_html_(self) -> str:
        esc = html.escape
        head = (
            f"<p><b>juge calibration</b> ({esc(self.kind)}, split {esc(self.split)}): {self.n_items} items, "
            f"{self.n_votes} human votes from {self.n_raters} people</p>"
        )
        rows = "".join(
            f"<tr><td>{esc(r['who'])}</td><td>{esc(format_estimate(r['agreement']))}</td>"
            f"<td>{esc(format_estimate(r['kappa']))}</td></tr>"
            for r in self.headline()
        )
        return (
            head + "<table><thead><tr><th>vs people</th><th>agreement [95 % interval] n</th>"
            f"<th>Cohen's kappa</th></tr></thead><tbody>{rows}</tbody></table>"
        )


def _row(who: str, category: str, figure: str, est: Estimate) -> dict[str, Any]:
    return {
        "who": who,
        "category": category,
        "figure": figure,
        "value": est.value,
        "low": est.low,
        "high": est.high,
        "n": est.n,
    }


def _estimate_rows(who: str, category: str, prefix: str, part: BaseModel | None) -> Iterator[dict[str, Any]]:
    """The estimates of a part, its nested agreement/threshold/caught parts included (not its categories)."""
    if part is None:
        return
    for name in type(part).model_fields:
        value = getattr(part, name)
        if isinstance(value, Estimate):
            yield _row(who, category, prefix + name, value)
        elif isinstance(value, Caught):
            yield _row(who, category, f"{prefix}{name}.rate", value.rate)
        elif isinstance(value, Agreement | AtThreshold):
            yield from _estimate_rows(who, category, f"{prefix}{name}.", value)


# ---- runs ----------------------------------------------------------------------------------


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


# ---- policies (juge.policy; issue 14) -------------------------------------------------------
# A policy file is hashed (``policy_hash``) over the keys it was written with, so these models read it and
# write back exactly those keys (``to_dict``: the fields that were set, and any key a model does not
# declare), never coerce a number (an int stays an int) and never add ``schema_version`` to a file that had
# none: a pairwise policy of schema 1 loads and writes back unchanged, its hash intact.

Number = int | float


class _Loose(BaseModel):
    """Keeps unknown keys and writes back the keys it was given."""

    model_config = ConfigDict(extra="allow")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)


class Coverage(Part):
    """The share of dev items on which a candidate judge has a verdict."""

    value: Number | None = None
    n_with_verdict: int | None = None
    n_items: int | None = None


class PeopleAgreement(Agreement):
    """A judge against each person, or the people among themselves, on the same items: agreement and kappa; for
    a score judge also the weighted kappa and the figures at the threshold, for a PASS/FAIL judge the failures
    caught and the false flags."""

    weighted_kappa: Estimate | None = None
    at_threshold: Agreement | None = None
    failures_caught: Caught | None = None
    false_flags: Caught | None = None


class PolicyCandidate(Part):
    """A candidate judge of rule 1 on the shared dev items (``vs_majority`` for pairwise judges only)."""

    key: str
    coverage: Coverage | None = None
    vs_majority: Agreement | None = None
    vs_people: PeopleAgreement | None = None


class PairedDifference(Part):
    """Agreement with the majority of template ``a`` minus ``b`` on the same items, paired."""

    a: str
    b: str
    n_items: int
    agreement_a: Number | None = None
    agreement_b: Number | None = None
    difference: Estimate | None = None


class ReferenceChoice(PairedDifference):
    """Rule 2 in one category: ``a`` with the reference answer against ``b`` without it, and the template used."""

    use_reference: bool = False
    template: str | None = None


class PolicySelection(Part):
    """Rule 1: the candidates compared on the shared dev items, the judge chosen and the runner-up (pairwise
    judges: the paired difference from it; grade judges: ``by``, the figure they are ranked by)."""

    by: str | None = None
    candidates: list[PolicyCandidate] = []
    references: list[PolicyCandidate] = []  # person vs person and a trivial judge, on the same items (no call)
    n_shared_items: int | None = None
    chosen: str
    runner_up: str | None = None
    difference: PairedDifference | None = None


class GuaranteeStep(Part):
    """One threshold of the fixed-sequence walk: the items at or above it, their disagreements, the bound."""

    threshold: Number
    n: int
    disagreements: int
    upper_bound: Number
    accepted: bool


class PolicyGuarantee(Part):
    """Rule 6 on dev (``rule="guarantee"``): the confidence threshold, the walk that chose it, its coverage."""

    threshold: Number | None = None
    target: Number
    confidence: Number
    n_items: int
    n_covered: int
    disagreements: int | None = None
    upper_bound: Number | None = None
    steps: list[GuaranteeStep] = []
    coverage: Number | None = None
    n_calibration: int | None = None
    n_calibration_covered: int | None = None
    coverage_denominator: str | None = None
    confidence_source: str | None = None


class ThresholdCandidate(Part):
    threshold: Number
    kappa: Estimate | None = None
    agreement: Estimate | None = None


class ThresholdChoice(Part):
    """A score policy's threshold chosen on dev from the labels alone, and the points it was chosen among."""

    chosen: Number
    how: str | None = None
    candidates: list[ThresholdCandidate] = []


class PolicyCheck(Part):
    """One figure a grade policy's category decision rests on: judge, people, the gap and whether it passed."""

    judge: Number | None = None
    people: Number | None = None
    gap: Number | None = None
    min_recall: Number | None = None
    ok: bool


class PolicyCategory(_Loose):
    """One category's decision on dev: the figures behind it and the reason in words. ``vs_people`` and
    ``ceiling`` are judge vs person and person vs person (for a score judge at the threshold); a grade policy
    also keeps every figure of the judge and of the people (``judge``, ``people``) and the ``checks``."""

    template: str | None = None
    n_items: int | None = None
    n_with_verdict: int | None = None
    judge: PeopleAgreement | None = None
    people: PeopleAgreement | None = None
    n_votes: int | None = None
    checks: dict[str, PolicyCheck] | None = None
    vs_people: Estimate | None = None
    ceiling: Estimate | None = None
    gap: Number | None = None
    difference: Estimate | None = None
    too_few: str | None = None
    by_figures: Route | None = None  # what the figures alone say (absent in files written before it)
    ruling: Ruling | None = None  # judge, person, or too_few (a person): :mod:`juge.policy.decision`
    decision: Literal["judge", "person"]
    reason: str


class PolicyDev(_Loose):
    """The dev data a policy was derived on."""

    split: str | None = None
    data_hash: str | None = None
    n_items: int | None = None
    n_votes: int | None = None
    n_without_majority: int | None = None
    groups: list[str] = []
    sources_sha256: dict[str, str] = {}


class PolicyAudit(_Loose):
    """How many of the judge's decisions a person re-checks, and how often."""

    n: int | None = None
    every: str | None = None


class HoldoutRecord(_Loose):
    """One holdout test as the policy file keeps it, with the content fingerprints of the items it used."""

    test_id: str | None = None
    used_at: str
    split: str
    data_hash: str
    n_items: int
    forced: bool
    held: bool | None = None
    conclusion: str | None = None
    fingerprints_hash: str | None = None
    fingerprints: list[str] = []


class ForcedUse(_Loose):
    """A use of a policy that did not hold, forced with ``--force`` (``route``, ``audit-sample``)."""

    used_at: str
    command: str
    test_id: str | None = None


class PolicyResult(_Loose):
    """A judge policy (``juge policy derive --json``) for a pairwise, PASS/FAIL or score judge: the judge, its
    template per category, which categories it decides alone and why, and the holdout tests it went through."""

    schema_name: ClassVar[str] = "policy"

    schema_version: int = 1  # a file without the key is schema 1 (pairwise only)
    kind: Literal["juge-policy"] = "juge-policy"
    format: int = 1
    judge_kind: Literal["pairwise", "passfail", "score"] = "pairwise"
    created_at: str | None = None
    juge_version: str | None = None
    rule: str
    margin: Number
    min_recall: Number | None = None
    threshold: Number | None = None
    threshold_choice: ThresholdChoice | None = None
    scale: list[Number | str] | None = None
    judge: str
    templates_by_category: dict[str, str] = {}
    judges: dict[str, JudgeVersion] = {}
    dev: PolicyDev = PolicyDev()
    selection: PolicySelection | None = None
    reference: dict[str, ReferenceChoice] = {}
    categories: dict[str, PolicyCategory] = {}
    guarantee: PolicyGuarantee | None = None
    audit: PolicyAudit = PolicyAudit()
    bootstrap: BootstrapInfo | None = None
    policy_hash: str
    holdout_tests: list[HoldoutRecord] = []
    forced_uses: list[ForcedUse] = []
    status: StatusName = "untested"  # from holdout_tests and forced_uses (juge.policy.status), whatever the file says

    _input_warnings: list[str] = PrivateAttr(default_factory=list)
    _input_notices: list[str] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _status(self) -> Self:
        # Worked out from the records, whatever the file says; written back only by a file that had the key (a
        # policy derived now has it), so a file read and written again keeps its keys.
        self.__dict__["status"] = self.standing.status
        return self

    def to_dict(self) -> dict[str, Any]:
        """The policy file. One written before ``schema_version`` (schema 1) gains the key after ``format``;
        its hash still holds (``juge.policy.derivation.policy_hash`` leaves schema 2's keys out of a schema 1
        hash)."""
        data = super().to_dict()
        if "schema_version" in data:
            return data
        keys = list(data)
        at = keys.index("format") + 1 if "format" in keys else 0
        return {**dict(list(data.items())[:at]), "schema_version": self.schema_version, **dict(list(data.items())[at:])}

    @classmethod
    def of(cls, policy: PolicyResult | Mapping[str, Any]) -> PolicyResult:
        """The policy as this model: as it is, or from its JSON (a file's content, already read and checked)."""
        return policy if isinstance(policy, PolicyResult) else cls.model_validate(dict(policy))

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """Read a policy file, checking it is one juge wrote and nobody edited (its hash)."""
        from juge.policy.derivation import read_policy

        try:
            return cls.model_validate(read_policy(path))
        except ValidationError as exc:
            raise validation_error(path, exc) from None

    def save(self, path: str | Path) -> Path:
        """Write the policy file atomically, as ``juge policy derive --json`` does."""
        from juge.files import write_json

        return write_json(Path(path), self.to_dict())

    @property
    def input_warnings(self) -> list[str]:
        """What the readers warned about the inputs (e.g. labels left out): shown, never in the file."""
        return self._input_warnings

    @property
    def input_notices(self) -> list[str]:
        return self._input_notices

    def decision(self, category: str) -> CategoryDecision | None:
        """The category's decision (judge, person, or too few items: a person), None for a category the policy
        has no dev figures for: the one object route, the holdout test, the audit, the report and the Markdown
        read."""
        row = self.categories.get(category)
        if row is None:
            return None
        return category_decision(
            category, decision=row.decision, reason=row.reason, too_few=row.too_few, by_figures=row.by_figures
        )

    @property
    def decisions(self) -> dict[str, CategoryDecision]:
        """Every category's decision, in the policy's order."""
        return {c: d for c in self.categories if (d := self.decision(c)) is not None}

    def judge_decides(self, category: str) -> bool:
        """Whether the judge decides this category alone (rule 3; too few items: a person)."""
        d = self.decision(category)
        return d is not None and d.route == "judge"

    @property
    def standing(self) -> PolicyStatus:
        """The status with the holdout test it rests on (``status`` is its name)."""
        return policy_status(self.holdout_tests, self.forced_uses)

    @property
    def tested(self) -> bool:
        """Whether the policy file records a holdout test."""
        return bool(self.holdout_tests)


class MarginGap(Part):
    """Judge vs person minus person vs person on all the items the judge decided, against the margin."""

    judge_vs_person: Number | None = None
    person_vs_person: Number | None = None
    gap: Number | None = None
    within_margin: bool | None = None
    reason: str | None = None


class Conclusion(_Loose):
    """Whether the policy held on holdout, and why (``held`` None: untested); overall, with the gap on every
    item the judge decided (``on_judged_items``)."""

    held: bool | None = None
    reason: str
    on_judged_items: MarginGap | None = None


class CategoryConclusion(Conclusion):
    dev_decision: Literal["judge", "person"] = "person"
    dev_gap: Number | None = None
    holdout_gap: Number | None = None
    holdout_decision: str | None = None
    holdout_reason: str | None = None


class PreviousTest(_Loose):
    """An earlier test that used some of these items, and where it was found."""

    test_id: str | None = None
    used_at: str
    policy_hash: str
    forced: bool
    shared_items: int = 0
    shared_groups: int = 0
    found_in: list[str] = []


class HoldoutFigures(Part):
    """Judge vs people on holdout items: on the items the judge decided (``on_judged_items``) or on all
    of them, as if there were no policy (``no_policy``). A grade policy's test adds every figure of the
    people among themselves (``people``) beside the judge's (``vs_people``)."""

    vs_people: PeopleAgreement | None = None
    vs_majority: Agreement | None = None
    ceiling: Estimate | None = None
    people: PeopleAgreement | None = None
    n_without_majority: int | None = None


class HoldoutGuarantee(Part):
    """Rule 6 on holdout: the judge's disagreement with the majority on the items it decided alone, against
    the disagreement the guarantee allows."""

    threshold: Number | None = None
    n_items: int
    n_covered: int
    coverage: Number | None = None
    n_covered_without_majority: int | None = None
    disagreement: Estimate | None = None
    allowed_disagreement: Number | None = None
    held: bool | None = None


class HoldoutGap(Part):
    """A category's rule 3 figures measured on holdout as on dev (pairwise: judge vs person, person vs person and
    their paired difference; PASS/FAIL and score: every figure of the judge and the people, and the checks)."""

    n_with_verdict: int | None = None
    vs_people: Estimate | None = None
    ceiling: Estimate | None = None
    judge: PeopleAgreement | None = None
    people: PeopleAgreement | None = None
    checks: dict[str, PolicyCheck] | None = None
    gap: Number | None = None
    difference: Estimate | None = None


class HoldoutCategory(_Loose):
    n_items: int | None = None
    judge_decides: Estimate | None = None
    on_judged_items: HoldoutFigures | None = None
    no_policy: HoldoutFigures | None = None
    decisions: dict[str, int] = {}
    holdout_gap: HoldoutGap | None = None
    conclusion: CategoryConclusion | None = None


class HoldoutTest(_Loose):
    """The one test of a policy on held-out items (``juge policy test --json``): decisions, figures and the
    conclusion per category and overall; ``forced`` (FORCED) when the items were tested before."""

    schema_name: ClassVar[str] = "policy_test"

    schema_version: int = 2
    kind: Literal["juge-policy-test"] = "juge-policy-test"
    test_id: str | None = None
    tested_at: str | None = None
    policy_hash: str
    judge_kind: Literal["pairwise", "passfail", "score"] = "pairwise"
    judges: dict[str, JudgeVersion] = {}
    rule: str | None = None
    margin: Number | None = None
    split: str
    data_hash: str
    forced: bool = False
    previous_uses: list[PreviousTest] = []
    warning: str | None = None
    status: Literal["held", "not held", "untested"] | None = None  # the policy's status after this test
    n_items: int | None = None
    decisions: dict[str, int] = {}
    judge_decides: Estimate | None = None
    on_judged_items: HoldoutFigures | None = None
    no_policy: HoldoutFigures | None = None
    conclusion: Conclusion | None = None
    per_category: dict[str, HoldoutCategory] = {}
    threshold: Number | None = None
    items: list[RoutedItem] = []
    guarantee: HoldoutGuarantee | None = None

    _input_warnings: list[str] = PrivateAttr(default_factory=list)
    _input_notices: list[str] = PrivateAttr(default_factory=list)

    @property
    def held(self) -> bool | None:
        return None if self.conclusion is None else self.conclusion.held

    @property
    def input_warnings(self) -> list[str]:
        """What the readers warned about the inputs: shown, never in the file."""
        return self._input_warnings

    @property
    def input_notices(self) -> list[str]:
        return self._input_notices


class RoutedItem(Part):
    """Where one new item goes, and why (one line of ``juge route --eval`` output)."""

    item_id: str
    category: str
    route: Literal["judge", "person"]
    reason: str
    detail: str
    verdict: str | None = None
    template: str | None = None
    confidence: float | None = None
    passes: bool | None = None
    decision: str  # "judge" or "person: <reason>"


class RouteResult(Result):
    """New items routed by a policy (``juge route --json``): one decision per item; with ``--eval`` (the
    judge called live) also the run and what it cost in calls."""

    schema_name: ClassVar[str] = "route"

    policy_hash: str | None = None
    run_id: str | None = None
    calls: int | None = None
    cache_hits: int | None = None
    retries: int | None = None
    policy_status: StatusName | None = (
        None  # the policy's status; "forced" when --force used a policy that did not hold
    )
    forced: bool = False
    warning: str | None = None  # FORCED: which test did not hold
    decisions: list[RoutedItem] = []
    notes: list[str] = []

    @property
    def n_to_judge(self) -> int:
        return sum(d.route == "judge" for d in self.decisions)


class AuditedDecision(RoutedItem):
    """A decision the judge made alone, with the item and the judge's raw texts, for a person to read."""

    question: str | None = None
    context: str | None = None
    answer: str | None = None  # the graded answer (PASS/FAIL and score judges)
    answer_1: str | None = None  # a pair's answers
    answer_2: str | None = None
    reference: str | None = None
    judge_texts: dict[str, str | None] = {}  # by order ("12", "21") for a pair; "text" for a single grade


class AuditSample(Result):
    """The weekly audit (``juge audit-sample --json``): ``n`` random decisions the judge made alone in a run."""

    schema_name: ClassVar[str] = "audit_sample"

    run_id: str
    seed: int
    policy_hash: str
    policy_status: StatusName | None = None  # as on RouteResult
    forced: bool = False
    warning: str | None = None
    sample: list[AuditedDecision] = []


# ---- probes --------------------------------------------------------------------------------


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


# ---- stored runs: juge runs, show, export; juge split ---------------------------------------


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


# ---- juge init ----------------------------------------------------------------------------


class InitResult(Part):
    """What ``juge init`` wrote: the folder, the judge's kind and name, each file (relative) and the cases."""

    directory: str
    kind: str
    judge: str
    files: list[str]
    n_cases: int


# ---- what a judge is sent: juge prompt, juge run --dry-run ----------------------------------


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


RESULTS: tuple[type[Result], ...] = (
    Calibration,
    RunSummary,
    Comparison,
    EstimateResult,
    ProbeResult,
    RouteResult,
    AuditSample,
    ShowResult,
    ExportResult,
    SplitResult,
    DryRun,
)
# The policy file and its test keep the exact keys their hash and readers expect (see _Loose).
POLICY_FILES: tuple[type[PolicyResult] | type[HoldoutTest], ...] = (PolicyResult, HoldoutTest)
#: Outputs that are a JSON list of parts (``juge runs --json``, ``juge prompt --json``), by schema name.
LISTS: dict[str, type[Part]] = {"runs": RunRow, "prompt": RenderedPrompt}

for _model in (Ceiling, JudgeFigures, Calibration, HoldoutTest):
    _model.model_rebuild()


def schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every result file, by name (``docs/schema/<name>.json``)."""
    from juge.label.results import LABEL_RESULTS  # its models build on Result: imported here, not at the top

    out = {}
    for model in (*RESULTS, *POLICY_FILES, *LABEL_RESULTS):
        schema = model.model_json_schema(by_alias=True, mode="serialization")
        out[model.schema_name] = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    for name, part in LISTS.items():
        schema = TypeAdapter(list[part]).json_schema(by_alias=True, mode="serialization")  # type: ignore[valid-type]
        out[name] = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return out


def write_schemas(folder: str | Path) -> list[Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas().items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_schemas(sys.argv[1] if len(sys.argv) > 1 else "docs/schema"):
        print(f"wrote {written_path}")
