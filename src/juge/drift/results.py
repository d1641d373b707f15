"""The result of ``juge drift``: the old and the new judge on the anchor set, and the optional attribution of a
score change between two system runs."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from juge.calibration.results import BootstrapInfo
from juge.judges.identity import IdentityCheck, JudgeIdentity
from juge.parts import Part, Result
from juge.stats.estimate import Estimate


class DriftJudge(Part):
    """One judge on the anchor set."""

    judge_file: str | None = None
    """The judge file it was called from (none: its judgments came from a stored run)."""
    run_id: str
    """The run its anchor judgments are stored in."""
    identity: JudgeIdentity
    """Its identity as its calls show it: model version as answered, template hash."""
    agreement: Estimate
    """Agreement with people (judge vs each person, pooled over votes; a missing verdict agrees with nobody)."""
    missing: int
    """Anchor items with no readable verdict (refused, unparsed, error or not judged): counted as disagreeing."""


class DriftItem(Part):
    """One anchor item whose verdict changed."""

    item_id: str
    """The item."""
    old: Any = None
    """The old judge's verdict (in the labels' terms; null: none)."""
    new: Any = None
    """The new judge's verdict."""
    people: dict[str, int] = {}
    """The people's labels and how many gave each."""


class Attribution(Part):
    """A score change between two system runs judged by different judges, split into the judge's part (the old
    run's outputs re-judged by the new judge on the anchor items) and the rest (the system's)."""

    old_run: str
    """The old system run (judged by the old judge)."""
    new_run: str
    """The new system run (judged by the new judge)."""
    rejudged_run: str
    """The run of the new judge on the old run's outputs of the anchor items."""
    judge: str
    """The judge whose PASS rate is the score."""
    score_old: Estimate
    """The old run's score: the share of its cases the judge passes (a missing verdict does not pass)."""
    score_new: Estimate
    """The new run's score, on the same cases."""
    total_change: Estimate
    """New minus old score, on the cases of both runs, with a paired clustered bootstrap interval."""
    judge_part: Estimate
    """The new judge's score minus the old judge's on the old run's outputs of the anchor items: the part of the
    change that comes from the judge."""
    system_part: Estimate
    """total_change minus judge_part (its interval from the same resamples)."""
    words: str
    """The split in a sentence."""


class DriftResult(Result):
    """``juge drift --json``: the old and the new judge on a fixed, human-labelled anchor set."""

    schema_name: ClassVar[str] = "drift"

    kind: Literal["pairwise", "passfail", "score"]
    """The judges' kind (as the labels are read)."""
    old: DriftJudge
    """The old judge."""
    new: DriftJudge
    """The new judge."""
    moved: list[IdentityCheck] = []
    """What differs between the two judges (the new one checked against the old one's identity)."""
    n_items: int
    """Anchor items with at least one human label (the ones measured)."""
    n_votes: int
    """Human labels on them."""
    n_changed: int
    """Anchor items whose verdict changed."""
    changed_share: Estimate
    """The share of anchor items whose verdict changed, with its clustered bootstrap interval."""
    difference: Estimate
    """New minus old agreement with people, paired (the same resampled items for both), clustered bootstrap."""
    conclusion: Literal["moved", "within noise", "too few items"]
    """moved (the paired interval excludes 0), within noise, or too few items (below min_items)."""
    direction: Literal["better", "worse"] | None = None
    """When moved: whether the new judge agrees with people better or worse."""
    reason: str
    """The conclusion in words."""
    min_items: int
    """The fewest labelled anchor items that can conclude."""
    changed: list[DriftItem] = []
    """Every anchor item whose verdict changed, with both verdicts and the people's labels."""
    attribution: Attribution | None = None
    """With --old-run and --new-run: how much of a score change comes from the judge."""
    bootstrap: BootstrapInfo
    """How the intervals were computed."""
    notes: list[str] = []
    """Remarks on the inputs for the reader."""
    warnings: list[str] = []
    """What the reader must know before using the figures."""
