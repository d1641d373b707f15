"""Typed results of a calibration study (``juge calibrate --json``, ``juge demo``'s calibration.json): the
ceiling, each judge's figures against people, and the parts the policy files reuse."""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any, ClassVar

from pydantic import BaseModel, Field, PrivateAttr

from juge.data.results import KindGuess
from juge.parts import Part, Result
from juge.stats.estimate import Estimate, format_estimate


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


for _model in (Ceiling, JudgeFigures, Calibration):
    _model.model_rebuild()
