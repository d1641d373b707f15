"""Typed results of the `juge label` commands (``juge.label_status`` ...): what each command prints,
and what its ``--json`` writes (schemas in ``docs/schema/label_*.json``).

Unlike the older result files, these always write every field (no file of theirs predates them).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel

from juge.parts import Part, Result
from juge.stats.estimate import Estimate


class LabelResult(Result):
    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, **self.model_dump(mode="json", by_alias=True)}


class LabelInit(LabelResult):
    """A new labelling project (``juge label init``)."""

    schema_name: ClassVar[str] = "label_init"

    project: str
    task: str
    items: int
    overlap_items: int  # items labelled by `overlap_raters` raters (person-vs-person agreement)
    overlap_raters: int
    notes: list[str] = []


class RaterLink(Part):
    """A rater's login link (``juge label add-rater``/``rotate-link``): the token is shown only this once."""

    project: str
    rater: str
    adjudicator: bool = False
    token: str

    @property
    def path(self) -> str:
        return f"/login?token={self.token}"

    def link(self, base_url: str) -> str:
        """The full link on the address `juge label serve` runs at."""
        return f"{base_url.rstrip('/')}{self.path}"


class RaterRevoked(Part):
    """A rater who can no longer sign in (``juge label revoke-rater``); their labels stay."""

    project: str
    rater: str


class RaterCount(Part):
    rater: str
    adjudicator: bool
    labels: int
    seconds: float | None = None  # time spent on labelled items, summed
    sessions: int

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
    task: str
    items: int
    items_closed: int
    items_left: int
    overlap_items: int
    labels: int
    raters: list[RaterCount]
    pairs: int
    agreement: float | None
    kappa: float | None
    disagreements: int
    agreement_estimate: Estimate | None = None
    kappa_estimate: Estimate | None = None


class LabelRelease(LabelResult):
    """Open assignments given back to the pool (``juge label release``), by rater."""

    schema_name: ClassVar[str] = "label_release"

    project: str
    dry_run: bool
    rater: str | None  # only this rater's items
    idle_hours: float | None  # only items handed out longer ago than this
    freed: dict[str, int]  # rater name -> items freed (would be freed, in a dry run)

    @property
    def total(self) -> int:
        return sum(self.freed.values())


class LabelExport(LabelResult):
    """Labels written for ``juge calibrate --labels`` (``juge label export``)."""

    schema_name: ClassVar[str] = "label_export"

    project: str
    output: str
    labels: int
    adjudications_output: str | None = None
    adjudications: int | None = None  # final labels written to adjudications_output


class LabelAttach(LabelResult):
    """A run's judge verdicts copied into the review (``juge label attach-run``)."""

    schema_name: ClassVar[str] = "label_attach"

    project: str
    run_id: str
    db: str  # the juge store holding the run
    attached: int  # verdicts stored
    judges: list[str]
    shared_items: int  # items of the project the run judged
    left_out: list[str]  # items whose judged answers differ from the labelled ones (allow_changed_outputs)


class FinalLabel(BaseModel):
    label: str
    reason: str
    adjudicator: str


class LabelDisagreement(Part):
    item_id: str
    reasons: list[str]
    labels: dict[str, str]  # rater -> label
    judges: dict[str, str]  # judge -> verdict, in the labels' terms
    final: FinalLabel | None = None


class LabelDisagreements(LabelResult):
    """Closed items where raters, or a judge and the raters, disagree (``juge label disagreements``).

    From a saved list (``from_list``), only the ids are known: ``items`` is empty then.
    """

    schema_name: ClassVar[str] = "label_disagreements"

    project: str
    from_list: str | None = None
    item_ids: list[str]
    items: list[LabelDisagreement] = []
    saved_as: str | None = None
    output: str | None = None


LABEL_RESULTS: tuple[type[Result], ...] = (
    LabelInit,
    LabelStatus,
    LabelRelease,
    LabelExport,
    LabelAttach,
    LabelDisagreements,
)
