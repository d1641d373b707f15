"""Typed results of judge policies (``juge.policy``): the policy file ``PolicyResult``, its one holdout test
``HoldoutTest``, routed items (``juge route``) and the audit sample (``juge audit-sample``).

A policy file is hashed (``policy_hash``) over the keys it was written with, so these models read it and
write back exactly those keys (``to_dict``: the fields that were set, and any key a model does not
declare), never coerce a number (an int stays an int) and never add ``schema_version`` to a file that had
none: a pairwise policy of schema 1 loads and writes back unchanged, its hash intact.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, model_validator

from juge.calibration.results import Agreement, BootstrapInfo, Caught, JudgeVersion
from juge.errors import validation_error
from juge.files import write_json
from juge.parts import Part, Result
from juge.policy.decision import CategoryDecision, Route, Ruling, category_decision
from juge.policy.status import PolicyStatus, StatusName, policy_status
from juge.stats.estimate import Estimate

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


HoldoutTest.model_rebuild()
