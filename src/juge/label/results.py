"""Typed results of the `juge label` commands (``juge.label_status`` ...): what each command prints,
and what its ``--json`` writes (schemas in ``docs/schema/label_*.json``).

Unlike the older result files, these always write every field (no file of theirs predates them).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from juge.parts import Part, Result
from juge.stats.estimate import Estimate


class LabelResult(Result):
    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, **self.model_dump(mode="json", by_alias=True)}


class LabelInit(LabelResult):
    """A new labelling project (``juge label init``)."""

    schema_name: ClassVar[str] = "label_init"

    project: str
    """The project's name."""
    task: str
    """pairwise, score or passfail."""
    items: int
    """Items to label."""
    overlap_items: int
    """Items labelled by overlap_raters raters (for person-vs-person agreement)."""
    overlap_raters: int
    """Raters per overlap item."""
    notes: list[str] = []
    """Remarks on the items read, for the reader."""
    selection: LabelSelection | None = None
    """With --select and --budget: how the items to label were drawn from the cases read, and each one's chance."""


class SelectionStratum(Part):
    """One stratum of a selection: its cases, how many were drawn, and each one's chance of being drawn."""

    stratum: str
    """The category (``(all)`` for a random selection, ``(none)`` for cases without a category)."""
    population: int
    """Cases of the stratum read."""
    selected: int
    """Cases drawn to label."""
    probability: float
    """Each case's chance of being drawn (recorded in its meta.juge_selection): selected / population for random and
    stratified; for decisive, the chance of each case of the group (decisive or other), drawn on its own."""
    spread: float | None = None
    """Stratified with a run: sigma_k, the spread the allocation is proportional to (with the cases)."""
    spread_from: str | None = None
    """Where the spread was measured: labels (10 or more in the category) or judge verdicts."""


class LabelSelection(Part):
    """How the items to label were drawn (``juge label init --select --budget``)."""

    method: str
    """random, stratified (by category) or decisive (the cases that would settle something drawn more often)."""
    budget: int
    """Items to draw (decisive: on average; each case is drawn on its own)."""
    population: int
    """Cases read, the items were drawn from."""
    strata: list[SelectionStratum]
    """Per stratum: cases, drawn, probability."""
    allocation: str = "proportional"
    """How the budget was spread: random, proportional (to the categories' sizes), neyman (to size times spread) or
    decisive (by inclusion probabilities)."""
    why: str = ""
    """The allocation in words: what it was measured from, and why."""
    run_id: str | None = None
    """The run whose judge verdicts the allocation read (--run)."""
    probabilities: dict[str, float] | None = None
    """Decisive: each drawn case's chance of being drawn, by case id (``juge estimate --selection`` weights each
    label by its inverse)."""


class RaterLink(Part):
    """A rater's login link (``juge label add-rater``/``rotate-link``): the token is shown only this once."""

    project: str
    """The project."""
    rater: str
    """The rater's name."""
    adjudicator: bool = False
    """True for an adjudicator (sees disagreements and sets final labels)."""
    token: str
    """The rater's sign-in token: shown only this once."""

    @property
    def path(self) -> str:
        return f"/login?token={self.token}"

    def link(self, base_url: str) -> str:
        """The full link on the address `juge label serve` runs at."""
        return f"{base_url.rstrip('/')}{self.path}"


class RaterRevoked(Part):
    """A rater who can no longer sign in (``juge label revoke-rater``); their labels stay."""

    project: str
    """The project."""
    rater: str
    """The rater who can no longer sign in."""


class RaterCount(Part):
    rater: str
    """The rater's name."""
    adjudicator: bool
    """True for an adjudicator."""
    labels: int
    """Labels given."""
    seconds: float | None = None
    """Time spent on labelled items, summed."""
    sessions: int
    """Sign-in sessions."""
    timed_labels: int = 0
    """Labels with a time (the item was shown and labelled in one session)."""
    median_seconds: float | None = None
    """Median seconds per timed label, from the item shown to the label; null without a timed label."""
    too_fast: bool = False
    """True when the median is under the status's ``too_fast_seconds`` (over at least ``MIN_TIMED_LABELS`` timed
    labels): labels given faster than anyone reads the item."""

    @property
    def mean_seconds(self) -> float | None:
        return self.seconds / self.labels if self.labels and self.seconds else None


class LabelStatus(LabelResult):
    """Progress and person-vs-person agreement so far (``juge label status``).

    Agreement is pooled over every pair of raters on every item with two or more labels: the share of
    equal pairs, and Cohen's kappa on the same pairs; None while no item has two labels.
    ``agreement_estimate`` and ``kappa_estimate`` are the same figures with a percentile bootstrap interval
    clustered by item (``n``: rater pairs); None in files written before they existed.
    """

    schema_name: ClassVar[str] = "label_status"

    project: str
    """The project."""
    task: str
    """pairwise, score or passfail."""
    items: int
    """Items in the project."""
    items_closed: int
    """Items with every label they need."""
    items_left: int
    """Items still needing a label."""
    overlap_items: int
    """Items meant for several raters."""
    labels: int
    """Labels given."""
    raters: list[RaterCount]
    """Each rater's count."""
    pairs: int
    """Pairs of raters' labels on the same item."""
    agreement: float | None
    """The share of equal pairs; null while no item has two labels."""
    kappa: float | None
    """Cohen's kappa on the same pairs; null while no item has two labels."""
    disagreements: int
    """Closed items where raters disagree."""
    agreement_estimate: Estimate | None = None
    """agreement with a bootstrap interval clustered by item (n: rater pairs)."""
    kappa_estimate: Estimate | None = None
    """kappa with a bootstrap interval clustered by item (n: rater pairs)."""
    too_fast_seconds: float | None = None
    """The median seconds per label under which a rater is flagged ``too_fast``."""


class LabelRelease(LabelResult):
    """Open assignments given back to the pool (``juge label release``), by rater."""

    schema_name: ClassVar[str] = "label_release"

    project: str
    """The project."""
    dry_run: bool
    """True when nothing was given back (what would be freed is listed)."""
    rater: str | None
    """Only this rater's items; null for every rater."""
    idle_hours: float | None
    """Only items handed out longer ago than this; null for any."""
    freed: dict[str, int]
    """Items freed (or that would be, in a dry run), by rater."""

    @property
    def total(self) -> int:
        return sum(self.freed.values())


class LabelExport(LabelResult):
    """Labels written for ``juge calibrate --labels`` (``juge label export``)."""

    schema_name: ClassVar[str] = "label_export"

    project: str
    """The project."""
    output: str
    """The labels file written (one row per rater per item)."""
    labels: int
    """Labels written."""
    adjudications_output: str | None = None
    """The file of final labels set by adjudicators, if asked for."""
    adjudications: int | None = None
    """Final labels written to adjudications_output."""


class LabelAttach(LabelResult):
    """A run's judge verdicts copied into the review (``juge label attach-run``)."""

    schema_name: ClassVar[str] = "label_attach"

    project: str
    """The project."""
    run_id: str
    """The run whose verdicts were copied."""
    db: str
    """The juge store holding the run."""
    attached: int
    """Verdicts stored."""
    judges: list[str]
    """The run's judges."""
    shared_items: int
    """Items of the project the run judged."""
    left_out: list[str]
    """Items whose judged answers differ from the labelled ones (left out with allow_changed_outputs)."""


class FinalLabel(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    label: str
    """The final label."""
    reason: str
    """Why, as the adjudicator wrote it."""
    adjudicator: str
    """Who set it."""


class LabelDisagreement(Part):
    item_id: str
    """The item's id."""
    reasons: list[str]
    """Who disagrees: raters among themselves, or a judge with the raters."""
    labels: dict[str, str]
    """Each rater's label, by rater."""
    judges: dict[str, str]
    """Each judge's verdict in the labels' terms, by judge."""
    final: FinalLabel | None = None
    """The final label an adjudicator set, if any."""


class LabelDisagreements(LabelResult):
    """Closed items where raters, or a judge and the raters, disagree (``juge label disagreements``).

    From a saved list (``from_list``), only the ids are known: ``items`` is empty then.
    """

    schema_name: ClassVar[str] = "label_disagreements"

    project: str
    """The project."""
    from_list: str | None = None
    """The saved list read; then only the ids are known and items is empty."""
    item_ids: list[str]
    """The items' ids."""
    items: list[LabelDisagreement] = []
    """Each item with its labels and verdicts."""
    saved_as: str | None = None
    """The name the list was saved under, if saved."""
    output: str | None = None
    """The file written, if any."""


LABEL_RESULTS: tuple[type[Result], ...] = (
    LabelInit,
    LabelStatus,
    LabelRelease,
    LabelExport,
    LabelAttach,
    LabelDisagreements,
)
