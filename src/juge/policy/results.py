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

from pydantic import ConfigDict, PrivateAttr, ValidationError, model_validator

from juge.calibration.results import Agreement, BootstrapInfo, Caught, JudgeVersion
from juge.data.draw import Weighting
from juge.errors import validation_error
from juge.files import write_json
from juge.judges.identity import IdentityCheck, IdentityUse, JudgeIdentity
from juge.parts import Part, Result, Shown
from juge.policy.decision import CategoryDecision, Route, Ruling, category_decision
from juge.policy.file import read_policy
from juge.policy.status import PolicyStatus, StatusName, policy_status
from juge.stats.estimate import Estimate

Number = int | float


class _Loose(Shown):
    """Keeps unknown keys and writes back the keys it was given."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)


class Coverage(Part):
    """The share of dev items on which a candidate judge has a verdict."""

    value: Number | None = None
    """n_with_verdict / n_items."""
    n_with_verdict: int | None = None
    """Dev items the judge has a verdict on."""
    n_items: int | None = None
    """Dev items."""


class PeopleAgreement(Agreement):
    """A judge against each person, or the people among themselves, on the same items: agreement and kappa; for
    a score judge also the weighted kappa and the figures at the threshold, for a PASS/FAIL judge the failures
    caught and the false flags."""

    weighted_kappa: Estimate | None = None
    """Scores: Cohen's kappa with quadratic weights over the scale's points."""
    at_threshold: Agreement | None = None
    """Scores: agreement and kappa on score >= threshold."""
    failures_caught: Caught | None = None
    """PASS/FAIL: human FAIL votes called FAIL (by the judge, or by the other person), k of n."""
    false_flags: Caught | None = None
    """PASS/FAIL: human PASS votes called FAIL (by the judge, or by the other person), k of n."""


class PolicyCandidate(Part):
    """A candidate judge of rule 1 on the shared dev items (``vs_majority`` for pairwise judges only)."""

    key: str
    """The candidate judge's key (judge/template)."""
    coverage: Coverage | None = None
    """The share of dev items it has a verdict on."""
    vs_majority: Agreement | None = None
    """Pairwise: against the majority label on the shared dev items."""
    vs_people: PeopleAgreement | None = None
    """Against every human vote on the shared dev items."""


class PairedDifference(Part):
    """Agreement with the majority of template ``a`` minus ``b`` on the same items, paired."""

    a: str
    """The first template."""
    b: str
    """The second template."""
    n_items: int
    """Items both judged (the difference is paired on them)."""
    agreement_a: Number | None = None
    """a's agreement with the majority."""
    agreement_b: Number | None = None
    """b's agreement with the majority."""
    difference: Estimate | None = None
    """a minus b, with a paired bootstrap interval."""


class ReferenceChoice(PairedDifference):
    """Rule 2 in one category: ``a`` with the reference answer against ``b`` without it, and the template used."""

    use_reference: bool = False
    """True when the template with the reference answer is used in this category."""
    template: str | None = None
    """The template used in this category."""


class PolicySelection(Part):
    """Rule 1: the candidates compared on the shared dev items, the judge chosen and the runner-up (pairwise
    judges: the paired difference from it; grade judges: ``by``, the figure they are ranked by)."""

    by: str | None = None
    """Grade judges: the figure the candidates are ranked by."""
    candidates: list[PolicyCandidate] = []
    """The candidates, each with its figures on the shared dev items."""
    references: list[PolicyCandidate] = []
    """Person vs person and a trivial judge on the same items, beside the candidates (they make no call)."""
    n_shared_items: int | None = None
    """Dev items every candidate has a verdict on."""
    chosen: str
    """The judge chosen."""
    runner_up: str | None = None
    """The next best candidate."""
    difference: PairedDifference | None = None
    """Pairwise: the chosen judge minus the runner-up, paired."""


class GuaranteeStep(Part):
    """One threshold of the fixed-sequence walk: the items at or above it, their disagreements, the bound."""

    threshold: Number
    """The confidence threshold tried."""
    n: int
    """Dev items whose confidence is at or above it."""
    disagreements: int
    """Of those, items where the judge disagrees with the majority."""
    upper_bound: Number
    """The upper confidence bound of the disagreement rate."""
    accepted: bool
    """True when the bound is within the target (the walk goes on to the next threshold)."""


class PolicyGuarantee(Part):
    """Rule 6 on dev (``rule="guarantee"``): the confidence threshold, the walk that chose it, its coverage."""

    threshold: Number | None = None
    """The confidence threshold chosen; null when none meets the target."""
    target: Number
    """The highest disagreement rate with the majority allowed on the items the judge decides."""
    confidence: Number
    """The confidence level of the bound."""
    n_items: int
    """Dev items."""
    n_covered: int
    """Dev items at or above the threshold (the judge decides them)."""
    disagreements: int | None = None
    """Of those, items where the judge disagrees with the majority."""
    upper_bound: Number | None = None
    """The upper confidence bound of the disagreement rate at the threshold."""
    steps: list[GuaranteeStep] = []
    """The fixed-sequence walk over thresholds that chose it."""
    coverage: Number | None = None
    """The share of items the judge decides."""
    n_calibration: int | None = None
    """Items the threshold was calibrated on."""
    n_calibration_covered: int | None = None
    """Of those, items at or above the threshold."""
    coverage_denominator: str | None = None
    """What coverage is a share of."""
    confidence_source: str | None = None
    """Where the judge's confidence comes from (e.g. the answer's probabilities)."""
    repeats: int | None = None
    """How many times the judge was asked per item (and order) on dev: the confidence read that many calls, so
    routing needs as many (``route --eval`` asks as many; an item with fewer goes to a person)."""


class ThresholdCandidate(Part):
    threshold: Number
    """A scale point tried as the pass threshold."""
    kappa: Estimate | None = None
    """Person vs person kappa at it, on dev."""
    agreement: Estimate | None = None
    """Person vs person agreement at it, on dev."""


class ThresholdChoice(Part):
    """A score policy's threshold chosen on dev from the labels alone, and the points it was chosen among."""

    chosen: Number
    """The threshold chosen: the scale point (above the lowest) with the highest person-vs-person kappa on dev; ties
    to the lower point."""
    how: str | None = None
    """How it was chosen, in words."""
    candidates: list[ThresholdCandidate] = []
    """The points it was chosen among, with their figures."""


class PolicyCheck(Part):
    """One figure a grade policy's category decision rests on: judge, people, the gap and whether it passed."""

    judge: Number | None = None
    """The judge's figure."""
    people: Number | None = None
    """The people's figure (person vs person)."""
    gap: Number | None = None
    """judge minus people, as printed (3 decimals)."""
    min_recall: Number | None = None
    """Failures caught: the --min-recall floor, if given."""
    ok: bool
    """True when the figure lets the judge decide (the gap within the margin, failures caught not below the people's
    nor the floor)."""


class PolicyCategory(_Loose):
    """One category's decision on dev: the figures behind it and the reason in words. ``vs_people`` and
    ``ceiling`` are judge vs person and person vs person (for a score judge at the threshold); a grade policy
    also keeps every figure of the judge and of the people (``judge``, ``people``) and the ``checks``."""

    template: str | None = None
    """The template used in this category."""
    n_items: int | None = None
    """Dev items in the category."""
    n_with_verdict: int | None = None
    """Of those, items the judge has a verdict on."""
    judge: PeopleAgreement | None = None
    """Grade policies: every figure of the judge against each person."""
    people: PeopleAgreement | None = None
    """Grade policies: every figure of the people among themselves."""
    n_votes: int | None = None
    """Human votes in the category."""
    checks: dict[str, PolicyCheck] | None = None
    """Grade policies: each figure the decision rests on, by figure."""
    vs_people: Estimate | None = None
    """Judge vs person (scores: at the threshold)."""
    ceiling: Estimate | None = None
    """Person vs person (scores: at the threshold)."""
    gap: Number | None = None
    """vs_people minus ceiling, as printed (3 decimals)."""
    difference: Estimate | None = None
    """Pairwise: judge vs person minus person vs person with a paired interval (--rule lower-bound reads its lower
    bound)."""
    too_few: str | None = None
    """Why the category has too few items to decide (then a person decides)."""
    by_figures: Route | None = None
    """What the figures alone say: judge or person (absent in files written before it)."""
    ruling: Ruling | None = None
    """judge, person, or too_few (a person decides): the one decision route, test and the report read."""
    decision: Literal["judge", "person"]
    """Who decides the category's items: judge or person."""
    reason: str
    """Why, in words."""


class PolicyDev(_Loose):
    """The dev data a policy was derived on."""

    split: str | None = None
    """The split the policy was derived on (dev)."""
    data_hash: str | None = None
    """The hash of the dev data."""
    n_items: int | None = None
    """Dev items."""
    n_votes: int | None = None
    """Human votes on them."""
    n_without_majority: int | None = None
    """Pairwise: dev items with no majority label."""
    groups: list[str] = []
    """The groups (e.g. questions) in dev: the holdout test refuses items of these groups."""
    sources_sha256: dict[str, str] = {}
    """The SHA-256 of every input file, by file."""


class PolicyAudit(_Loose):
    """How many of the judge's decisions a person re-checks, and how often."""

    n: int | None = None
    """Decisions a person re-checks each time."""
    every: str | None = None
    """How often (e.g. week)."""


class HoldoutRecord(_Loose):
    """One holdout test as the policy file keeps it, with the content fingerprints of the items it used."""

    test_id: str | None = None
    """The test's id."""
    used_at: str
    """When the holdout was tested (ISO 8601, UTC)."""
    split: str
    """The split tested."""
    data_hash: str
    """The hash of the holdout data."""
    n_items: int
    """Holdout items tested."""
    forced: bool
    """True when items tested before were tested again with --force."""
    held: bool | None = None
    """Whether the policy held; null when untested."""
    conclusion: str | None = None
    """The conclusion in words."""
    fingerprints_hash: str | None = None
    """The hash of the items' content fingerprints."""
    fingerprints: list[str] = []
    """The content fingerprint of each item tested (a second test of any of them is refused unless forced)."""


class ForcedUse(_Loose):
    """A use of a policy that did not hold, forced with ``--force`` (``route``, ``audit-sample``)."""

    used_at: str
    """When the policy was used anyway (ISO 8601, UTC)."""
    command: str
    """The command that used it (route, audit-sample)."""
    test_id: str | None = None
    """The test that did not hold."""


class AuditedItem(_Loose):
    """One decision an audit drew, as the policy file keeps it: enough to compare with the people's labels later."""

    item_id: str
    """The item."""
    category: str
    """Its category (whose bar it is held to)."""
    verdict: str | None = None
    """The judge's verdict (pairs: A, B or tie in the fixed order; scores: the score)."""


class AuditRecord(_Loose):
    """One ``juge audit-sample`` draw (a batch) as the policy file keeps it; ``juge audit status`` reads them all."""

    drawn_at: str
    """When the sample was drawn (ISO 8601, UTC)."""
    week: str
    """The ISO week of the draw (e.g. 2026-W49): the audit's time axis."""
    run_id: str
    """The run sampled."""
    seed: int
    """The draw's seed."""
    label_project: str | None = None
    """The labelling project the items went to (``--label-project``); none: read in the terminal only."""
    items: list[AuditedItem] = []
    """The decisions drawn."""


class CascadeStage(Part):
    """One stage of a cascade on dev: its judge, prompts and category rows, and the threshold walk that chose
    the confidence above which it decides (on the dev items that reach it)."""

    name: str
    """The judge's name as given to --cascade."""
    judge: str
    """Its judge key (judge/template)."""
    templates_by_category: dict[str, str] = {}
    """The template it uses in each category."""
    reference: dict[str, ReferenceChoice] = {}
    """Per category, with or without the reference answer."""
    categories: dict[str, PolicyCategory] = {}
    """The category rule for this judge: the categories it may decide (the others pass to the next stage)."""
    guarantee: PolicyGuarantee | None = None
    """The fixed-sequence walk on the dev items that reach the stage in its categories."""
    n_reaching: int
    """Dev items no earlier stage decided."""
    n_in_its_categories: int | None = None
    """Of those, items in a category the stage may decide."""
    n_decided: int
    """Dev items the stage decides."""


class CascadeAlternative(Part):
    """On dev: the items a configuration decides and its agreement with the majority on them."""

    name: str | None = None
    """The judge's name (a stage alone)."""
    judge: str | None = None
    """Its judge key."""
    threshold: Number | None = None
    """Its confidence threshold alone, at the cascade's target and confidence (null: none met it)."""
    n_decided: int
    """Dev items it decides."""
    coverage: Number | None = None
    """n_decided / dev items."""
    agreement_with_majority: Number | None = None
    """Agreement with the majority on the decided items that have one (dev: optimistic)."""
    n_with_majority: int | None = None
    """Decided items with a majority."""


class ConfigurationCost(Part):
    """What a configuration's calls cost per item: an item pays every stage it reached that may decide it."""

    usd_per_item: Number | None = None
    """US$ per item from the recorded tokens and the prices; null when a call's model has no price or its tokens
    were not recorded (see ``warning``)."""
    tokens_per_item: Number
    """Tokens (in + out) per item."""
    calls: int
    """Calls paid on these items (a panel's call counts as its members' calls)."""
    unpriced_models: list[str] = []
    """Models with no price (give --prices)."""
    calls_without_tokens: int = 0
    """Calls with no recorded token counts."""
    warning: str | None = None
    """Why ``usd_per_item`` is null."""


class ConfigurationFigures(Part):
    """A configuration on one split: what it decides without a person, how well, at what cost."""

    n_items: int
    """Items of the split."""
    n_decided: int
    """Items some stage decided (no person needed)."""
    n_person: int
    """Items left to a person; with n_decided they sum to n_items."""
    decided_by_stage: list[int] = []
    """Items each stage decided, in order."""
    coverage: Number
    """n_decided / n_items."""
    vs_majority: Estimate | None = None
    """Agreement with the majority on the decided items (clustered bootstrap interval)."""
    vs_people: Estimate | None = None
    """Agreement with each person on the decided items (every vote; clustered bootstrap interval)."""
    cost: ConfigurationCost
    """Cost per item of its calls."""
    minutes_per_label: Number
    """Person-minutes one label takes (--minutes-per-label)."""
    person_minutes_saved: Number
    """n_decided x minutes_per_label: the people's time the configuration saves on these items."""
    person_minutes_saved_per_item: Number
    """person_minutes_saved / n_items."""


class ConfigurationStage(Part):
    """One stage of a configuration: the judge and the confidence threshold it has in this configuration."""

    name: str
    """The judge's name."""
    judge: str
    """Its judge key (judge/template)."""
    threshold: Number | None = None
    """Its confidence threshold here, from the walk on the dev items that reach it (null: it decides nothing)."""


class CascadeConfiguration(Part):
    """A configuration considered on dev: a judge alone, a panel, a prefix of the cascade or the cascade, walked
    at the same target and confidence; its figures and where it stands in the choice."""

    name: str
    """Its stages joined by an arrow."""
    kind: Literal["judge", "panel", "prefix", "cascade"]
    """judge or panel (one stage), prefix (the cascade's first stages) or cascade."""
    stages: list[ConfigurationStage]
    """Its stages in order."""
    meets_guarantee: bool
    """A threshold met the target on dev, so it decides some item with the guarantee."""
    dev: ConfigurationFigures
    """Its figures on dev (optimistic: its thresholds were chosen on these items)."""
    difference_to_best: Estimate | None = None
    """Its agreement with the majority on decided items minus the best configuration's, paired bootstrap interval
    over the dev items (null: it does not meet the guarantee)."""
    within_noise: bool = False
    """The best, or ``difference_to_best``'s interval includes 0."""
    ranking_cost: Number | None = None
    """The cost per item it was ranked by (in the choice's ``cost_basis``)."""
    chosen: bool = False
    """True for the chosen configuration."""


class ConfigurationChoice(Part):
    """The configuration chosen on dev, and why, as fields."""

    rule: str
    """The rule, in words."""
    chosen: str | None = None
    """The chosen configuration (null: none meets the guarantee)."""
    best: str | None = None
    """The configuration with the highest agreement with the majority on the items it decides."""
    cost_basis: Literal["USD", "USD with people", "tokens"]
    """What "cheapest" was measured in: US$ per item of the calls; with --minute-price, plus the people's minutes
    on the items left to them; tokens per item when a configuration has no price."""
    eligible: list[str] = []
    """The configurations that meet the guarantee."""
    within_noise: list[str] = []
    """Of those, the ones within noise of the best: the chosen one is the cheapest of these."""
    derive_with: str | None = None
    """The --cascade argument that derives the chosen configuration as the policy."""
    routes_with_choice: bool = False
    """True when this policy's stages are the chosen configuration's (the cascade given was the choice, or
    --choose derived the choice)."""
    given: str | None = None
    """--choose: the --cascade given, among whose configurations the choice was made (null: the stages are the
    cascade given)."""
    warning: str | None = None
    """Why the choice could not read everything asked (e.g. --minute-price without a US$ cost for every one)."""


class PolicyCascade(Part):
    """A cascade (``--cascade small,strong``): stages tried in order, the rest to a person."""

    stages: list[CascadeStage]
    """The stages, cheapest first."""
    target: Number
    """The agreement with the majority required on the items the cascade decides."""
    confidence: Number
    """The probability with which the guarantee holds (over the draw of dev items)."""
    stage_confidence: Number | None = None
    """The level each stage is tested at: 1 - (1 - confidence) / stages."""
    category_rule: str | None = None
    """margin or lower-bound: the category rule applied per stage."""
    n_items: int
    """Dev items."""
    n_person: int
    """Dev items no stage decides."""
    coverage: Number | None = None
    """The share of dev items some stage decides."""
    method: str | None = None
    """How the thresholds were chosen, with the reference."""
    cascade_on_dev: CascadeAlternative | None = None
    """The cascade on dev: items decided, agreement with the majority on them."""
    alone: list[CascadeAlternative] = []
    """Each stage's judge alone (a one-stage cascade at the same target and confidence), to compare with."""
    considered: list[CascadeStage] = []
    """The other judges in the data (panels too) as one-stage cascades: the configurations route them so."""
    configurations: list[CascadeConfiguration] = []
    """Every configuration considered, with its figures on dev."""
    choice: ConfigurationChoice | None = None
    """The configuration chosen: the cheapest within noise of the best that meets the guarantee."""
    minutes_per_label: Number | None = None
    """Person-minutes one label takes (--minutes-per-label)."""
    minute_price: Number | None = None
    """US$ one person-minute costs (--minute-price): the choice adds the people's minutes to each cost."""
    prices: dict[str, dict[str, Number]] | None = None
    """The prices given at derive (--prices), US$ per million tokens; policy test uses them when given none."""


class PolicyResult(_Loose):
    """A judge policy (``juge policy derive --json``) for a pairwise, PASS/FAIL or score judge: the judge, its
    template per category, which categories it decides alone and why, and the holdout tests it went through."""

    schema_name: ClassVar[str] = "policy"

    schema_version: int = 1
    """The file's schema version; a file without the key is schema 1 (pairwise only)."""
    kind: Literal["juge-policy"] = "juge-policy"
    """Always juge-policy."""
    format: int = 1
    """The policy format's version."""
    judge_kind: Literal["pairwise", "passfail", "score"] = "pairwise"
    """pairwise, passfail or score."""
    created_at: str | None = None
    """When the policy was derived (ISO 8601, UTC)."""
    juge_version: str | None = None
    """The juge version that derived it."""
    rule: str
    """The rule a category's decision follows (e.g. margin, lower-bound, guarantee)."""
    weighting: Weighting = "none"
    """How the dev labels count: ``inverse-probability`` when they come from an unequal-probability draw (juge
    label init --select decisive or stratified) and every figure is a Hajek ratio, each item counting 1 / its
    chance (a pairwise or PASS/FAIL margin or lower-bound policy); ``none`` otherwise (written only when it is
    not)."""
    margin: Number
    """How far below person vs person the judge may be and still decide."""
    min_recall: Number | None = None
    """PASS/FAIL: the floor on failures caught, if given (--min-recall)."""
    threshold: Number | None = None
    """Scores: the score at which an answer passes."""
    threshold_choice: ThresholdChoice | None = None
    """Scores: how the threshold was chosen on dev, when it was."""
    scale: list[Number | str] | None = None
    """Scores: the ordered scale points."""
    judge: str
    """The judge chosen."""
    templates_by_category: dict[str, str] = {}
    """The template the judge uses in each category."""
    judges: dict[str, JudgeVersion] = {}
    """The judge's identity (model versions, templates and their hashes): a changed identity is measured again
    before it is trusted."""
    dev: PolicyDev = PolicyDev()
    """The dev data the policy was derived on."""
    selection: PolicySelection | None = None
    """How the judge was chosen among the candidates."""
    reference: dict[str, ReferenceChoice] = {}
    """Pairwise: per category, with or without the reference answer."""
    categories: dict[str, PolicyCategory] = {}
    """Each category's decision and the figures behind it."""
    guarantee: PolicyGuarantee | None = None
    """--rule guarantee: the confidence threshold and how it was chosen."""
    cascade: PolicyCascade | None = None
    """--cascade: the stages, each with its threshold; ``judge`` is the first stage."""
    audit: PolicyAudit = PolicyAudit()
    """How many of the judge's decisions a person re-checks, and how often (`juge audit-sample` draws them)."""
    bootstrap: BootstrapInfo | None = None
    """How the intervals were computed."""
    policy_hash: str
    """The hash of the policy's decisions: a test, a route and an audit name the policy by it."""
    holdout_tests: list[HoldoutRecord] = []
    """The holdout tests the policy went through."""
    forced_uses: list[ForcedUse] = []
    """Uses of the policy after it did not hold, forced with --force."""
    audits: list[AuditRecord] = []
    """The weekly audits drawn so far (``juge audit-sample``), oldest first."""
    status: StatusName = "untested"
    """untested, held, not held, forced or expired: from holdout_tests and forced_uses, whatever the file says."""

    _input_warnings: list[str] = PrivateAttr(default_factory=list)
    _input_notices: list[str] = PrivateAttr(default_factory=list)

    def _headline(self) -> str | None:
        return f"judge {self.judge}, rule {self.rule}, {len(self.categories)} categories"

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
    """Judge vs person on the items the judge decided."""
    person_vs_person: Number | None = None
    """Person vs person on the same items."""
    gap: Number | None = None
    """judge_vs_person minus person_vs_person, as printed (3 decimals)."""
    within_margin: bool | None = None
    """True when the gap is within the margin."""
    reason: str | None = None
    """Why there is no gap, if there is none."""


class Conclusion(_Loose):
    """Whether the policy held on holdout, and why (``held`` None: untested); overall, with the gap on every
    item the judge decided (``on_judged_items``)."""

    held: bool | None = None
    """True when the policy held on holdout, false when not; null when untested."""
    reason: str
    """Why, in words."""
    on_judged_items: MarginGap | None = None
    """The gap on every holdout item the judge decided."""


class CategoryConclusion(Conclusion):
    dev_decision: Literal["judge", "person"] = "person"
    """Who decided the category on dev."""
    dev_gap: Number | None = None
    """The category's gap on dev."""
    holdout_gap: Number | None = None
    """The same gap on holdout."""
    holdout_decision: str | None = None
    """What the same rule decides on the holdout items."""
    holdout_reason: str | None = None
    """Why, in words."""


class PreviousTest(_Loose):
    """An earlier test that used some of these items, and where it was found."""

    test_id: str | None = None
    """The earlier test's id."""
    used_at: str
    """When it ran (ISO 8601, UTC)."""
    policy_hash: str
    """The policy it tested."""
    forced: bool
    """True when it was itself forced."""
    shared_items: int = 0
    """Items (by content fingerprint) it shares with this test."""
    shared_groups: int = 0
    """Groups it shares with this test."""
    found_in: list[str] = []
    """Where it was found: the store, this machine's registry, the policy file."""


class HoldoutFigures(Part):
    """Judge vs people on holdout items: on the items the judge decided (``on_judged_items``) or on all
    of them, as if there were no policy (``no_policy``). A grade policy's test adds every figure of the
    people among themselves (``people``) beside the judge's (``vs_people``)."""

    vs_people: PeopleAgreement | None = None
    """The judge against every human vote."""
    vs_majority: Agreement | None = None
    """Pairwise: the judge against the majority label."""
    ceiling: Estimate | None = None
    """Person vs person on the same items."""
    people: PeopleAgreement | None = None
    """Grade policies: every figure of the people among themselves."""
    n_without_majority: int | None = None
    """Pairwise: items with no majority label."""


class HoldoutGuarantee(Part):
    """Rule 6 on holdout: the judge's disagreement with the majority on the items it decided alone, against
    the disagreement the guarantee allows."""

    threshold: Number | None = None
    """The policy's confidence threshold."""
    n_items: int
    """Holdout items."""
    n_covered: int
    """Items at or above the threshold (the judge decided them alone)."""
    coverage: Number | None = None
    """n_covered / n_items."""
    n_covered_without_majority: int | None = None
    """Covered items with no majority label (left out of the disagreement)."""
    disagreement: Estimate | None = None
    """The judge's disagreement with the majority on the covered items."""
    allowed_disagreement: Number | None = None
    """The disagreement the guarantee allows."""
    held: bool | None = None
    """True when the disagreement is within what the guarantee allows."""


class HoldoutGap(Part):
    """A category's rule 3 figures measured on holdout as on dev (pairwise: judge vs person, person vs person and
    their paired difference; PASS/FAIL and score: every figure of the judge and the people, and the checks)."""

    n_with_verdict: int | None = None
    """Holdout items in the category with a judge verdict."""
    vs_people: Estimate | None = None
    """Judge vs person."""
    ceiling: Estimate | None = None
    """Person vs person."""
    judge: PeopleAgreement | None = None
    """Grade policies: every figure of the judge against each person."""
    people: PeopleAgreement | None = None
    """Grade policies: every figure of the people among themselves."""
    checks: dict[str, PolicyCheck] | None = None
    """Grade policies: each figure the decision rests on."""
    gap: Number | None = None
    """vs_people minus ceiling, as printed (3 decimals)."""
    difference: Estimate | None = None
    """Pairwise: the paired difference with its interval."""


class HoldoutCategory(_Loose):
    n_items: int | None = None
    """Holdout items in the category."""
    judge_decides: Estimate | None = None
    """The share of them the judge decides alone."""
    on_judged_items: HoldoutFigures | None = None
    """The figures on the items the judge decided."""
    no_policy: HoldoutFigures | None = None
    """The figures on every item, as if there were no policy."""
    decisions: dict[str, int] = {}
    """Items per decision: judge, person."""
    holdout_gap: HoldoutGap | None = None
    """The category's dev figures measured again on holdout."""
    conclusion: CategoryConclusion | None = None
    """Whether the category's decision held."""


class HoldoutCascadeStage(Part):
    """One cascade stage on holdout."""

    name: str
    """The judge's name."""
    judge: str
    """Its judge key."""
    n_decided: int
    """Holdout items it decided."""


class HoldoutConfiguration(Part):
    """One configuration of the policy routed on holdout with its dev thresholds."""

    name: str
    """Its stages joined by an arrow."""
    kind: Literal["judge", "panel", "prefix", "cascade"]
    """judge, panel, prefix or cascade."""
    chosen: bool = False
    """True for the configuration chosen on dev."""
    holdout: ConfigurationFigures
    """Its figures on holdout."""
    guarantee_held: bool | None = None
    """Its disagreement with the majority on the items it decided is within 1 - target (null: none decided)."""
    disagreement: Estimate | None = None
    """Its disagreement with the majority on the decided items (exact Clopper-Pearson interval)."""


class HoldoutCascade(Part):
    """A cascade on holdout: the items each stage decided (with the person's, they sum to the items), the
    agreement with the majority and with each person on the decided items, and the cost per item."""

    stages: list[HoldoutCascadeStage]
    """Per stage, the items it decided."""
    n_person: int
    """Items no stage decided."""
    n_items: int
    """Holdout items."""
    coverage: Number | None = None
    """The share of items some stage decided."""
    vs_majority: Estimate | None = None
    """Agreement with the majority on the decided items."""
    vs_people: Estimate | None = None
    """Agreement with each person on the decided items."""
    guarantee: HoldoutGuarantee | None = None
    """The disagreement with the majority on the decided items, against what the guarantee allows."""
    cost: dict[str, Any] | None = None
    """Cost per item of the cascade and of the last stage alone (unit: USD or tokens), and the models without a
    price."""
    configurations: list[HoldoutConfiguration] = []
    """Every configuration the policy considered, on holdout."""
    chosen: str | None = None
    """The configuration chosen on dev."""


class HoldoutTest(_Loose):
    """The one test of a policy on held-out items (``juge policy test --json``): decisions, figures and the
    conclusion per category and overall; ``forced`` (FORCED) when the items were tested before."""

    schema_name: ClassVar[str] = "policy_test"

    schema_version: int = 2
    """The file's schema version."""
    kind: Literal["juge-policy-test"] = "juge-policy-test"
    """Always juge-policy-test."""
    test_id: str | None = None
    """The test's id."""
    tested_at: str | None = None
    """When the test ran (ISO 8601, UTC)."""
    weighting: Weighting = "none"
    """How the labels count: ``none`` (no draw recorded: taken as a random sample), ``equal-probability`` (drawn by
    juge label init with one chance for every item), ``inverse-probability`` (a pairwise or PASS/FAIL margin or
    lower-bound policy tested on labels of an unequal-probability draw: each item counts 1 / its chance)."""
    policy_hash: str
    """The policy tested."""
    judge_kind: Literal["pairwise", "passfail", "score"] = "pairwise"
    """pairwise, passfail or score."""
    judges: dict[str, JudgeVersion] = {}
    """The judge's identity in the judgments tested."""
    rule: str | None = None
    """The policy's rule."""
    margin: Number | None = None
    """The policy's margin."""
    split: str
    """The split tested (holdout)."""
    data_hash: str
    """The hash of the holdout data."""
    forced: bool = False
    """True (FORCED) when items tested before were tested again with --force."""
    previous_uses: list[PreviousTest] = []
    """Earlier tests that used some of these items."""
    warning: str | None = None
    """Why the result may mislead (e.g. FORCED: the items were tested before)."""
    status: Literal["held", "not held", "untested"] | None = None
    """The policy's status after this test: held, not held or untested."""
    n_items: int | None = None
    """Holdout items."""
    decisions: dict[str, int] = {}
    """Items per decision: judge, person."""
    judge_decides: Estimate | None = None
    """The share of items the judge decides alone."""
    on_judged_items: HoldoutFigures | None = None
    """The figures on the items the judge decided."""
    no_policy: HoldoutFigures | None = None
    """The figures on every item, as if there were no policy."""
    conclusion: Conclusion | None = None
    """Whether the policy held overall, and why."""
    per_category: dict[str, HoldoutCategory] = {}
    """Each category's figures and conclusion."""
    threshold: Number | None = None
    """Scores: the policy's threshold."""
    items: list[RoutedItem] = []
    """Where each holdout item went, and why."""
    guarantee: HoldoutGuarantee | None = None
    """--rule guarantee: the guarantee measured on holdout."""
    cascade: HoldoutCascade | None = None
    """--cascade: per stage the items decided, the agreement on decided items, the cost per item."""

    _input_warnings: list[str] = PrivateAttr(default_factory=list)
    _input_notices: list[str] = PrivateAttr(default_factory=list)

    @property
    def held(self) -> bool | None:
        return None if self.conclusion is None else self.conclusion.held

    def _headline(self) -> str | None:
        decided = ", ".join(f"{k} {v}" for k, v in self.decisions.items())
        return f"{(self.status or 'untested').upper()} on {self.n_items} {self.split} items" + (
            f" ({decided})" if decided else ""
        )

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
    """The item's id."""
    category: str
    """The item's category (the policy's decision for it applies)."""
    route: Literal["judge", "person"]
    """judge or person."""
    reason: str
    """Why, as a short key."""
    detail: str
    """Why, in words."""
    verdict: str | None = None
    """The judge's verdict, when the judge decides."""
    template: str | None = None
    """The template that judged it."""
    confidence: float | None = None
    """--rule guarantee: the judge's confidence."""
    stage: int | None = None
    """--cascade: the stage that decided (1 = the first), when one did."""
    passes: bool | None = None
    """PASS/FAIL and scores: whether the answer passes, when the judge decides."""
    decision: str
    """judge, or person: <reason>."""


class RouteResult(Result):
    """New items routed by a policy (``juge route --json``): one decision per item; with ``--eval`` (the
    judge called live) also the run and what it cost in calls."""

    schema_name: ClassVar[str] = "route"

    policy_hash: str | None = None
    """The policy that routed the items."""
    run_id: str | None = None
    """With --eval: the run the judge's calls are stored in (a cascade: the first stage's)."""
    runs: list[str] | None = None
    """With --eval and a cascade: one run per stage called, in order (a stage is called only on the items that
    reach it and that it may decide)."""
    calls: int | None = None
    """With --eval: calls made."""
    cache_hits: int | None = None
    """With --eval: answers from the cache."""
    retries: int | None = None
    """With --eval: calls retried."""
    policy_status: StatusName | None = None
    """The policy's status; forced when --force used a policy that did not hold."""
    forced: bool = False
    """True when --force used a policy that did not hold (recorded in the policy file)."""
    warning: str | None = None
    """FORCED: which test did not hold."""
    identity: IdentityUse | None = None
    """The judge's identity checked against the policy's (expired, forced, each judge's mismatches)."""
    decisions: list[RoutedItem] = []
    """One decision per item."""
    notes: list[str] = []
    """Remarks on the inputs for the reader."""

    @property
    def n_to_judge(self) -> int:
        return sum(d.route == "judge" for d in self.decisions)


class AuditedDecision(RoutedItem):
    """A decision the judge made alone, with the item and the judge's raw texts, for a person to read."""

    question: str | None = None
    """The item's question."""
    context: str | None = None
    """The item's context, if any."""
    answer: str | None = None
    """PASS/FAIL and scores: the graded answer."""
    answer_1: str | None = None
    """Pairwise: the first answer."""
    answer_2: str | None = None
    """Pairwise: the second answer."""
    reference: str | None = None
    """The reference answer, if any."""
    judge_texts: dict[str, str | None] = {}
    """The judge's raw texts: by order (12, 21) for a pair, under text for a single grade."""


class AuditSample(Result):
    """The weekly audit (``juge audit-sample --json``): ``n`` random decisions the judge made alone in a run."""

    schema_name: ClassVar[str] = "audit_sample"

    run_id: str
    """The run sampled."""
    seed: int
    """The draw's seed (default: the ISO year and week, a new sample each week)."""
    policy_hash: str
    """The policy whose decisions are sampled."""
    policy_status: StatusName | None = None
    """The policy's status, as on RouteResult."""
    forced: bool = False
    """True when --force used a policy that did not hold."""
    warning: str | None = None
    """FORCED: which test did not hold."""
    identity: IdentityUse | None = None
    """The judge's identity in the run checked against the policy's (expired, forced, each judge's mismatches)."""
    sample: list[AuditedDecision] = []
    """The decisions drawn, each with the item and the judge's raw texts."""
    week: str | None = None
    """The ISO week the draw is recorded under (in the policy file's ``audits``, when the policy is a file)."""
    recorded: bool = False
    """True when the draw was recorded in the policy file (``juge audit status`` reads it back)."""
    label_project: str | None = None
    """--label-project: the blind labelling project the decisions went to (their verdicts stay out of it)."""
    label_items_added: int | None = None
    """--label-project: items added to it (an item already there keeps its labels and is not added again)."""


AuditOutcome = Literal["holding", "drifted", "too few labels yet"]


class AuditBatch(Part):
    """One audit draw, and how many of its items people have labelled so far."""

    week: str
    """The ISO week of the draw."""
    drawn_at: str
    """When it was drawn (ISO 8601, UTC)."""
    run_id: str
    """The run sampled."""
    seed: int
    """The draw's seed."""
    label_project: str | None = None
    """The labelling project its items went to; none: they were read in the terminal, and have no labels here."""
    n_items: int
    """Decisions drawn."""
    n_labelled: int
    """Of those, items with at least one person's label (an item drawn again later counts once, at its first draw)."""


class AuditWeek(Part):
    """One week of the audit: that week's agreement, and the cumulative agreement with its anytime-valid band."""

    week: str
    """The ISO week."""
    n_items: int
    """Labelled items drawn that week."""
    agreement: Number | None = None
    """Judge vs person that week alone: the mean over items of the share of people the judge agrees with."""
    cumulative: Estimate
    """Judge vs person on every labelled item so far, with the anytime-valid band (low, high) at 1 - alpha."""
    bar: Number | None = None
    """The bar so far (the mean of the items' category bars)."""
    evidence: Number
    """The drift test's e-value at the end of the week (drift when it reaches 1/alpha)."""


class AuditGroup(Part):
    """The audit of one category (or of all of them): figures, the bar the policy was derived against, and the
    outcome."""

    ceiling: Number | None = None
    """Person vs person on dev (a category; none for all categories together)."""
    margin: Number | None = None
    """The policy's margin."""
    bar: Number | None = None
    """ceiling less margin (all categories: the mean of the items' bars): the lowest agreement at which the policy
    would still let the judge decide."""
    n_items: int
    """Labelled audited items."""
    n_labels: int
    """People's labels on them."""
    agreement: Estimate
    """Judge vs person on every labelled item so far, with the anytime-valid band (low, high) at 1 - alpha."""
    level: Number
    """The error level this group's decision is taken at (alpha, split across categories)."""
    evidence: Number
    """The drift test's largest e-value so far (drift when it reaches 1/level)."""
    outcome: AuditOutcome
    """holding, drifted or too few labels yet."""
    drifted_in: str | None = None
    """The week the drift alarm went off."""
    items_to_decide: int | None = None
    """Too few labels yet: labelled items that would decide if the agreement stayed where it is (none: more than
    juge projects, or no bar)."""
    reason: str
    """The outcome in words."""
    weeks: list[AuditWeek] = []
    """Week by week."""


class AuditStatus(Result):
    """``juge audit status --json``: every audit of a policy so far read against the people's labels, per week and
    cumulatively, per category and overall, with an anytime-valid drift test."""

    schema_name: ClassVar[str] = "audit_status"

    policy_hash: str
    """The policy audited."""
    judge: str
    """Its judge."""
    judge_kind: str
    """pairwise, passfail or score."""
    alpha: Number
    """The chance of a false drift alarm, over every look (default 0.05)."""
    method: str
    """The test and band in words, with their reference (docs/calibration.md)."""
    outcome: AuditOutcome
    """Overall: drifted when any category (or all together) drifted; holding when all together hold and no
    category drifted; else too few labels yet."""
    reason: str
    """The outcome in words, with what to run next."""
    overall: AuditGroup
    """Every judge-alone category together."""
    categories: dict[str, AuditGroup] = {}
    """Each category the audits drew from."""
    batches: list[AuditBatch] = []
    """Every audit draw, oldest first."""
    notes: list[str] = []
    """Remarks (items without labels, categories without a bar, labels the audit could not read)."""

    @property
    def drifted(self) -> bool:
        return self.outcome == "drifted"


class PolicyStatusReport(Result):
    """Where a policy stands (``juge policy status --json``): derived on what, tested when and whether it held,
    its audits, its judge's identity, whether it has expired and why, and what to run next."""

    schema_name: ClassVar[str] = "policy_status"

    policy: str
    """The policy file (or ``policy`` for one given as a model)."""
    policy_hash: str
    """The policy's hash."""
    judge_kind: str
    """pairwise, passfail or score."""
    judge: str
    """The judge chosen."""
    created_at: str | None = None
    """When the policy was derived (ISO 8601, UTC)."""
    juge_version: str | None = None
    """The juge version that derived it."""
    dev: PolicyDev = PolicyDev()
    """The dev data it was derived on."""
    status: StatusName
    """untested, held, not held, forced, or expired (its judge changed: that outranks the test)."""
    test_id: str | None = None
    """The last holdout test (None: untested)."""
    tested_at: str | None = None
    """When it was tested (ISO 8601, UTC)."""
    test_split: str | None = None
    """The split it was tested on."""
    test_items: int | None = None
    """Items in the holdout test."""
    test_forced: bool = False
    """True when the test reused items tested before (--force)."""
    held: bool | None = None
    """Whether the policy held on its last holdout test (None: untested)."""
    test_conclusion: str | None = None
    """The last test's conclusion in words."""
    forced_uses: int = 0
    """Uses after it did not hold, forced with --force."""
    identity: dict[str, JudgeIdentity] = {}
    """The judge's identity the policy was derived with, per ``judge/template``."""
    checked_against: list[str] = []
    """What the identity was checked against: a judge file (before any call) and a stored run (as answered)."""
    expired: bool | None = None
    """True when the judge checked is not the one the policy was derived with; None: nothing to check against."""
    why_expired: list[str] = []
    """Each judge's parts that moved."""
    identity_checks: list[IdentityCheck] = []
    """Each comparison, with its mismatches."""
    audit_every: str | None = None
    """How often a person re-checks the judge's decisions (e.g. week)."""
    audit_n: int | None = None
    """Decisions a person re-checks each time."""
    audits: list[dict[str, Any]] = []
    """The audit draws so far, from the policy file (week, drawn_at, run_id, n_items, label_project)."""
    audit_outcome: str | None = None
    """What the audits conclude (holding, drifted, too few labels yet): read by juge audit status, which has the
    people's labels; None here."""
    next: list[str] = []
    """What to run next."""
    notes: list[str] = []
    """Remarks for the reader."""


HoldoutTest.model_rebuild()


class DecisionPlan(Part):
    """How many items would settle one category's policy decision (``juge plan``)."""

    category: str
    """The category, or ``(overall)`` for every category pooled."""
    n_items: int
    """Dev items of the category where the judge has a verdict: what the rule reads now."""
    ruling: str | None = None
    """The policy's decision now (judge, person, too_few); null for overall."""
    gap: float | None = None
    """Judge-vs-person minus person-vs-person agreement now (null for overall)."""
    settled_now: float
    """Share of simulated studies of the current size whose interval is clear of -margin (settled)."""
    n_needed: int | None = None
    """The fewest items settled in at least the stated share of simulated studies; null: not within ``cap``."""
    n_more: int | None = None
    """n_needed - n_items: how many more labelled items (each with as many raters as now)."""
    settled_at_needed: float | None = None
    """Share of simulated studies of n_needed items that are settled."""
    judge_share: float | None = None
    """Of those studies, the share settled as judge (within the margin of a person)."""
    person_share: float | None = None
    """Of those studies, the share settled as person (clearly below the margin)."""
    cap: int
    """The largest size searched (max_factor times n_items)."""
    on_margin: bool = False
    """No number of labels would decide it: not settled within ``cap`` and the figure the decision turns on sits
    within 0.02 of its bar (``distance``), so more labels barely narrow the question; a person should decide."""
    binding: str | None = None
    """The figure the decision turns on: for pairs ``agreement``; for PASS/FAIL and scores the rule's check failing
    most clearly, else the one closest to failing (agreement, kappa, failures caught, weighted kappa, ...)."""
    distance: float | None = None
    """How far that figure is from its bar now: gap + margin for a margin check, judge - bar for failures caught
    (negative: below the bar). Null for overall."""
    note: str
    """The plan in words."""


class PassRatePlan(Part):
    """How many labels a corrected pass rate needs for an interval of a given width (``juge plan --width``)."""

    width: float
    """The target width of the interval (high - low)."""
    confidence: float
    """The interval's confidence level."""
    n_cases: int
    """Cases in the run."""
    n_labelled: int
    """Cases labelled now."""
    labels_alone: int | None = None
    """Labels needed using the labels alone (null: more than the run's cases)."""
    ppi: int | None = None
    """Labels needed under PPI++ (null: more than the run's cases)."""
    stratified: int | None = None
    """Labels needed under stratified PPI++ with the Neyman allocation below (null: more than the run's cases)."""
    allocation: dict[str, int] = {}
    """Stratified PPI++: labels per category at that total (in proportion to size times rectifier spread)."""
    saving_ppi: int | None = None
    """labels_alone - ppi: labels PPI++ saves against labels alone."""
    saving_stratified: int | None = None
    """labels_alone - stratified."""
    label_variance: float
    """Variance of people's PASS (0/1 or share) on the labelled cases."""
    rectifier_variance: float
    """Variance of (people's PASS - the judge's PASS) on the labelled cases: plain PPI (lambda = 1) helps only when
    it is below label_variance."""
    ppi_helps: bool
    """Whether the judge is good enough for PPI++ to help: ``ppi_variance_ratio < 1``."""
    ppi_variance_ratio: float | None = None
    """The finite-sample condition: PPI++'s variance over the labels' alone at ``ratio_at`` labels, with lambda
    tuned and the cost of estimating it from those labels (``1 + 1 / (n - 3)``, Cochran's regression estimator);
    roughly ``(1 - correlation^2) (1 + 1 / (n - 3))`` for a large run. Null with under 4 labels."""
    ratio_at: int | None = None
    """The labels the ratio is read at: those PPI++ needs for the width, else those labelled now."""
    correlation: float | None = None
    """Pearson correlation of people's PASS and the judge's on the labelled cases."""
    most_saved: float | None = None
    """``1 / (1 - correlation^2)``: the most PPI++ can cut the labels by (as a factor) with unlimited judged cases."""
    agreement: float | None = None
    """How often the judge's PASS matches people's on the labelled cases (``mean(1 - |y - f|)``)."""
    labelled_pass_rate: float | None = None
    """People's pass rate on the labelled cases."""
    at_the_frontier: bool | None = None
    """The judge agrees with people no more often than the model passes (its accuracy on the labelled cases): Dorner,
    Nastl & Hardt (ICLR 2025, Theorem 6) prove correlation^2 <= 1/2 then, so no debiasing saves more than half the
    labels."""


class PlanResult(Result):
    """``juge plan --json``: how many more labels would settle each policy decision, or reach an interval width."""

    schema_name: ClassVar[str] = "plan"

    probability: float
    """The stated share of simulated studies that must be settled."""
    margin: float
    """The policy's margin (judge-vs-person may fall this far below person-vs-person)."""
    level: float
    """Confidence level of the interval the rule reads."""
    reps: int
    """Simulated studies per size."""
    split: str | None = None
    """The split the policy study reads (dev)."""
    judge: str | None = None
    """The judge the policy chose."""
    decisions: list[DecisionPlan] = []
    """Per category, then overall."""
    pass_rate: PassRatePlan | None = None
    """With --width: labels for a corrected pass rate of that width."""
    weighting: Weighting = "none"
    """How the labels count: ``none`` (no draw recorded: taken as a random sample), ``equal-probability`` (drawn by
    juge label init with one chance for every item); labels of an unequal-probability draw are refused."""
    notes: list[str] = []
    """What the figures rest on, in words."""
    warnings: list[str] = []
    """What the inputs' readers warned about."""
