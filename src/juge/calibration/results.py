"""Typed results of a calibration study (``juge calibrate --json``, ``juge demo``'s calibration.json): the
ceiling, each judge's figures against people, and the parts the policy files reuse."""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any, ClassVar

from pydantic import BaseModel, Field, PrivateAttr

from juge.data.draw import Weighting
from juge.data.results import KindGuess
from juge.parts import Part, Result
from juge.stats.estimate import Estimate, format_estimate


class Ceiling(Part):
    """Person vs person (all pairs of distinct raters on an item, pooled)."""

    agreement: Estimate | None = None
    """The share of equal labels over every pair of distinct raters on an item, pooled over items."""
    kappa: Estimate | None = None
    """Cohen's kappa on the pooled pairs of raters."""
    weighted_kappa: Estimate | None = None
    """Scores: quadratic-weighted kappa over the ordered scale points."""
    pearson: Estimate | None = None
    """Scores: Pearson correlation over the pooled pairs of raters."""
    spearman: Estimate | None = None
    """Scores: Spearman correlation over the pooled pairs of raters."""
    krippendorff_alpha: Estimate | None = None
    """Krippendorff's alpha of the raters alone: nominal for pairwise and PASS/FAIL, ordinal for scores."""
    krippendorff_alpha_interval: Estimate | None = None
    """Scores: Krippendorff's alpha of the raters, interval metric."""
    agreement_without_ties: Estimate | None = None
    """Pairwise: agreement over the pairs of raters where neither said tie."""
    n_pairs: int | None = None
    """Pairs of raters pooled."""
    at_threshold: AtThreshold | None = None
    """Scores with --threshold: agreement and kappa on score >= threshold."""
    failures_caught: Caught | None = None
    """PASS/FAIL: one person's FAIL votes another person also called FAIL, k of n."""
    false_flags: Caught | None = None
    """PASS/FAIL: one person's PASS votes another person called FAIL, k of n."""


class AtThreshold(Part):
    """Agreement and kappa on ``score >= threshold``."""

    threshold: float
    """The score at which an answer passes."""
    agreement: Estimate | None = None
    """Agreement on pass/fail at the threshold."""
    kappa: Estimate | None = None
    """Cohen's kappa on pass/fail at the threshold."""


class Agreement(Part):
    """Agreement and Cohen's kappa of a judge against the majority or against each person."""

    agreement: Estimate | None = None
    """The share of equal labels."""
    kappa: Estimate | None = None
    """Cohen's kappa."""


class InconsistentPatterns(Part):
    n: int
    """Items whose two orders gave different verdicts."""
    shown_first_won_both: int
    """Of those, items where the answer shown first won in both orders (A both times)."""
    shown_second_won_both: int
    """Of those, items where the answer shown second won in both orders (B both times)."""
    tie_in_one_order: int
    """Of those, items with a tie in one order."""


class Disagreement(Part):
    """An item where the judge's label differs from the majority, with the raw text of each order."""

    item_id: str
    """The item's id."""
    category: str | None = None
    """The item's category, if any."""
    majority: str | None = None
    """The people's majority label."""
    verdict: str | None = None
    """The judge's verdict."""
    votes: dict[str, int] = {}
    """The people's votes per label."""
    letters: dict[str, str | None] | None = None
    """Pairwise: the judge's letter in each order (12, 21)."""
    texts: dict[str, str | None] | None = None
    """Pairwise: the judge's raw text in each order."""
    text: str | None = None
    """A single answer (PASS/FAIL, score): the one call's raw text."""


class Confusion(Part):
    """Counts with people as rows and the judge as columns."""

    labels: list[Any]
    """The labels, in the order of the rows and columns."""
    rows: str = "people"
    """Who the rows are (people)."""
    columns: str = "judge"
    """Who the columns are (the judge)."""
    matrix: list[list[int]]
    """Counts: matrix[i][j] = comparisons where people said labels[i] and the judge labels[j]."""


class ReliabilityPoint(Part):
    judge_score: float
    """A score the judge gave."""
    mean_human_score: Estimate
    """The mean human score on the items the judge gave that score."""


class Caught(Part):
    """Among comparisons where people said one label, how many the judge called FAIL: k of n, and the rate."""

    k: int
    """Comparisons the judge called FAIL."""
    n: int
    """Comparisons where people said the label (FAIL for failures caught, PASS for false flags)."""
    rate: Estimate
    """k / n, with its interval."""


class JudgeFigures(Part):
    """Every figure of one judge key (pairwise, score or PASS/FAIL: the keys of its kind are set)."""

    n_items: int
    """Items the judge has a verdict on."""
    verdict_counts: dict[str, int] = {}
    """Verdicts per value (pairwise: A, B, tie, inconsistent, missing)."""
    outcomes: dict[str, int] | None = None
    """Calls per outcome: ok, refused, unparsed, error; null for a baseline."""
    vs_majority: Agreement | None = None
    """Pairwise: the judge against the majority label (not comparable with the ceiling)."""
    vs_people: Agreement | None = None
    """Pairwise: the judge against every human vote, pooled: compare this with the ceiling."""
    order_flip_rate: Estimate | None = None
    """Pairwise: inconsistent verdicts / items with a verdict."""
    inconsistent_patterns: InconsistentPatterns | None = None
    """Pairwise: how the inconsistent items split (first shown won both, second shown won both, a tie in one order)."""
    picks_longer: Estimate | None = None
    """Pairwise: among decisive verdicts on answers of unequal length, the share that picks the longer answer."""
    picks_longer_against_majority: Estimate | None = None
    """Pairwise: where a decisive verdict contradicts a decisive majority, the share that took the longer answer."""
    self_consistency: Estimate | None = None
    """Among items asked again in the same order (repeat > 0), the share whose verdict changed; null without repeats."""
    agreement: Estimate | None = None
    """Scores and PASS/FAIL: the judge against every human vote, pooled: compare with the ceiling."""
    kappa: Estimate | None = None
    """Scores and PASS/FAIL: Cohen's kappa against every human vote."""
    weighted_kappa: Estimate | None = None
    """Scores: quadratic-weighted kappa against every human vote."""
    pearson: Estimate | None = None
    """Scores: Pearson correlation with the human scores."""
    spearman: Estimate | None = None
    """Scores: Spearman correlation with the human scores."""
    krippendorff_alpha: Estimate | None = None
    """Krippendorff's alpha of the raters with the judge as one more rater."""
    confusion: Confusion | None = None
    """Scores and PASS/FAIL: people (rows) against the judge (columns)."""
    reliability: list[ReliabilityPoint] | None = None
    """Scores: the mean human score for each score the judge gave."""
    at_threshold: AtThreshold | None = None
    """Scores with --threshold: agreement and kappa on score >= threshold."""
    failures_caught: Caught | None = None
    """PASS/FAIL: of the comparisons people marked FAIL, those the judge called FAIL; null when people marked no
    FAIL."""
    false_flags: Caught | None = None
    """PASS/FAIL: of the comparisons people marked PASS, those the judge called FAIL."""
    ceiling: Ceiling | None = None
    """In a category: the people's ceiling on the same items."""
    per_category: dict[str, JudgeFigures] | None = None
    """The same figures per category."""
    disagreements: list[Disagreement] | None = None
    """Items where the judge's label differs from the majority, with the raw texts."""


class PeopleFigures(Part):
    """Counts and the person-vs-person figures of one subset (a category of a pairwise study)."""

    n_items: int
    """Items in the subset."""
    n_votes: int
    """Human votes on them."""
    n_raters: int
    """Distinct people who voted."""
    ceiling: Ceiling
    """Person vs person on the subset."""
    n_without_majority: int | None = None
    """Items with a tie for the top label (no majority)."""
    majority_picks_longer: Estimate | None = None
    """Among decisive majorities on answers of unequal length, the share that picks the longer answer."""


class ReferenceComparison(Part):
    """A judge's agreement with people with and without a reference answer, on the same items, paired."""

    with_reference: str
    """The judge key whose template saw a reference answer."""
    without_reference: str
    """The same judge's key without one."""
    n_items: int
    """Items both judged (the comparison is paired on them)."""
    vs_people_with: Estimate
    """Agreement with people with the reference."""
    vs_people_without: Estimate
    """Agreement with people without it."""
    difference: Estimate
    """with minus without, with a paired bootstrap interval."""


class JudgeDifference(Part):
    """Two judges with the same template: agreement with people on the same items, paired."""

    a: str
    """The first judge key."""
    b: str
    """The second judge key (same template)."""
    n_items: int
    """Items both judged (the comparison is paired on them)."""
    vs_people_a: Estimate
    """Agreement of a with people."""
    vs_people_b: Estimate
    """Agreement of b with people."""
    difference: Estimate
    """b minus a, with a paired bootstrap interval."""


class Truth(Part):
    mode: str
    """What the judge is compared with (--truth): each rater, the mean of raters, only items where raters agree,
    or gold (one label per item: judge vs gold, no person-vs-person ceiling)."""
    n_items: int | None = None
    """Items left under that truth (with agree: the items where raters agree)."""


class BootstrapInfo(Part):
    n_resamples: int
    """Bootstrap resamples behind every interval."""
    seed: int
    """The bootstrap's seed."""
    level: float
    """The intervals' confidence level."""
    unit: str = "item"
    """What is resampled: items (all votes and pairs of an item move together)."""


class JudgeVersion(Part):
    judge: str | None = None
    """The judge's name."""
    template: str | None = None
    """The id of its prompt template."""
    models: list[str] = []
    """The model versions as the provider answered them."""
    template_hashes: list[str] = []
    """The content hashes of the template seen in the judgments."""
    baseline: bool = False
    """True for a trivial baseline (e.g. longer answer), not a model."""
    members: list[str] = []
    """A panel (several judges voting as one): its members' keys (`judge/template`), read from its model; empty
    for a single judge."""


class Versions(Part):
    juge: str | None = None
    """The juge version that computed the study."""
    sources_sha256: dict[str, str] = {}
    """The SHA-256 of every input file, by file."""
    judges: dict[str, JudgeVersion] = {}
    """Each judge key's versions."""


class StudyRun(Part):
    """The stored run a study read (``calibrate --run``): `juge report` reads its cases from there."""

    id: str
    """The run's id."""
    db: str | None = None
    """The store it is in, a SQLite file's absolute path (none for a PostgreSQL URL, which may hold a password)."""
    dataset_hash: str | None = None
    """The SHA-256 of the run's cases."""


class Dataset(Part):
    name: str
    """The dataset's name."""
    attribution: str | None = None
    """Who made it, to be cited with it."""
    license: str | None = None
    """Its license."""


class InputCounts(Part):
    """Every item and label value accounted for: read, without a label, missing, on an unknown item, duplicate."""

    items_read: int | None = None
    """Items read."""
    items_without_label: int | None = None
    """Items read with no human label (left out)."""
    label_values_read: int | None = None
    """Label values read."""
    missing_values: int | None = None
    """Label cells left empty (left out)."""
    labels_unknown_item: int | None = None
    """Labels on an item that is not among the items (left out)."""
    duplicate_votes: int | None = None
    """A rater's second vote on the same item (left out)."""


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
    """pairwise, score, passfail, or criteria for several criteria (one study each under criteria)."""
    criterion_kind: str | None = None
    """With several criteria: the kind of each criterion's study."""
    split: str
    """The split studied (dev, holdout, or all)."""
    n_items: int | None = None
    """Items with a human label."""
    n_votes: int | None = None
    """Human votes."""
    n_raters: int | None = None
    """Distinct people who voted."""
    truth: Truth | None = None
    """Scores and PASS/FAIL: what the judge is compared with; any kind: gold when each item holds one label."""
    scale: list[Any] | None = None
    """Scores: the ordered scale points."""
    ceiling: Ceiling = Ceiling()
    """Person vs person: the bar a judge is measured against."""
    n_without_majority: int | None = None
    """Pairwise: items with a tie for the top label (no majority)."""
    majority_picks_longer: Estimate | None = None
    """Pairwise: among decisive majorities on answers of unequal length, the share that picks the longer answer."""
    per_category: dict[str, PeopleFigures] | None = None
    """Pairwise: the people's figures per category."""
    judges: dict[str, JudgeFigures] = {}
    """Each judge's figures, by key (judge/template, or a baseline's name)."""
    reference: list[ReferenceComparison] | None = None
    """One judge with and without a reference answer, paired."""
    differences: list[JudgeDifference] | None = None
    """Two judges with the same template, paired."""
    criteria: dict[str, Calibration] | None = None
    """With several criteria: one study per criterion."""
    side_by_side: list[dict[str, Any]] | None = None
    """With several criteria: the ceiling and each judge's agreement and kappa, one row per criterion."""
    bootstrap: BootstrapInfo | None = None
    """How the intervals were computed."""
    versions: Versions | None = None
    """The versions that produced the study: juge, the input files' hashes, each judge's models and templates."""
    notes: list[str] = []
    """Remarks on the inputs for the reader (e.g. labels left out and why)."""
    counts: InputCounts | None = None
    """Every item and label value accounted for."""
    kind_guess: KindGuess | None = None
    """The study's kind when no --kind said it: what juge guessed, and from what."""
    dataset: Dataset | None = None
    """The dataset's name and attribution (juge demo)."""
    run: StudyRun | None = None
    """The stored run the study read (``--run``): its id and store, where the report finds its cases."""
    weighting: Weighting = "none"
    """How the labels count: ``none`` (no draw recorded: taken as a random sample), ``equal-probability`` (drawn by
    juge label init with one chance for every item), ``inverse-probability`` (an unequal-probability draw: each
    item counts 1 / its chance; pairwise and PASS/FAIL studies, a score study of such labels is refused)."""
    headlines: list[dict[str, Any]] | None = Field(default=None, alias="headline")
    """The one-line answers ("Judge X can stand in for a person on ..."), one per judge; none for criteria."""
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


for _model in (Ceiling, JudgeFigures, Calibration):
    _model.model_rebuild()
