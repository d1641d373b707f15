"""What a policy reads: the study data (pairs, or PASS/FAIL and score grades), and the policy document itself.

Shared by ``juge.policy.derive`` and ``juge.policy.test`` so that both read their inputs the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.errors import InputError

if TYPE_CHECKING:
    from juge.calibration.source import StudySource
    from juge.data.draw import Weighting
    from juge.policy.derivation import PairStudyData
    from juge.policy.grades import GradeStudyData
    from juge.policy.results import PolicyResult


@dataclass
class PolicyStudy:
    """A policy's inputs, with the readers' warnings and notices (about labels left out, files without a
    hash, ...) for the caller to show; they never enter the policy file (its hash covers every key)."""

    data: PairStudyData | GradeStudyData
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    weighting: Weighting = "none"  # how the labels count (juge.data.draw)
    item_weights: dict[str, float] | None = None  # 1 / chance of each labelled item of an unequal-probability draw


def policy_study(
    *,
    items: Any = None,
    judgments: Any = None,
    run: str | None = None,
    labels: Any = None,
    db: str | Path | None = None,
    mapping: Mapping[str, str] | None = None,
    labels_map: Mapping[str, str] | None = None,
    kind: str | None = None,
    source: StudySource | None = None,
    command: str = "juge policy derive",
    weighable: bool = False,
) -> PolicyStudy:
    """Read a policy's items, labels and judgments (paths, DataFrames or rows, as :func:`juge.calibrate`), or
    those `source` describes (with every shared input option: --scale, --missing, --label-cols, ...).

    ``kind``: the policy's judge kind (pairwise, passfail, score); None guesses it from the items and labels.
    ``command``: the command reading them, named when labels of an unequal-probability draw are refused.
    ``weighable``: the figures the caller computes from them can weight labels (:func:`study_item_weights`).
    """
    from juge.calibration.inputs import NotPairs
    from juge.calibration.source import read_study, study_source
    from juge.data.draw import unweighted_figures, weighted_note
    from juge.policy.derivation import pair_study_data
    from juge.policy.grades import grade_study_data

    if source is None:
        source = study_source(
            items=items, judgments=None if _empty(judgments) else judgments, labels=labels, run=run, db=db,
            mapping=mapping, labels_map=labels_map,
        )  # fmt: skip
    if kind is not None and source.kind is not None and source.kind != kind:
        raise InputError(f"--kind {source.kind}: the policy is for a {kind} judge")
    if kind is not None:
        source = dataclasses.replace(source, kind=kind)  # type: ignore[arg-type]
    if not source.judgments and source.run is None:
        raise InputError("no judgments: give --judgments FILE (recorded calls) or --run RUN_ID (a stored run)")
    try:
        inputs = read_study(source, lean=False)  # a policy keeps the items' texts (fingerprints, audit samples)
    except NotPairs as exc:
        raise InputError(f"the policy is for a pairwise judge (two answers per item, votes A/B/tie): {exc}") from None
    if kind is not None and inputs.kind != kind:
        raise InputError(f"the policy is for a {kind} judge, but these items and labels are a {inputs.kind} study")
    draw = inputs.draw
    item_weights = None
    if weighable and draw is not None and draw.unequal and inputs.kind != "score" and inputs.criteria is None:
        weighting: Weighting = "inverse-probability"
        ids = sorted({lab.item_id for lab in inputs.data.labels})
        item_weights = dict(zip(ids, draw.weights(ids)))
    else:
        weighting = unweighted_figures(draw, command)
    data = pair_study_data(inputs) if inputs.kind == "pairwise" else grade_study_data(inputs)
    notices = [*inputs.notices, *([weighted_note(draw)] if item_weights is not None and draw is not None else [])]
    return PolicyStudy(data, list(inputs.warnings), notices, weighting, item_weights)


def weighs_labels(rule: str, cascade: object) -> bool:
    """Whether a policy's figures can weight labels of an unequal-probability draw: the margin and lower-bound
    rules' category rows (pairwise, PASS/FAIL) are Hajek ratios and kappas of weighted tables; a guarantee's or a
    cascade's confidence thresholds and a score policy's correlations count every item alike, so their labels are
    refused (:func:`juge.data.draw.unweighted_figures`)."""
    return rule in ("margin", "lower-bound") and not cascade


def _empty(judgments: Any) -> bool:
    return judgments is None or (
        isinstance(judgments, Sequence) and not isinstance(judgments, str | bytes) and len(judgments) == 0
    )


def load_policy(policy: PolicyResult | Mapping[str, Any] | str | Path) -> PolicyResult:
    """A policy read (and checked) from a file, or given as a PolicyResult or its dict."""
    from pydantic import ValidationError

    from juge.errors import validation_error
    from juge.policy.file import read_policy
    from juge.policy.results import PolicyResult

    if isinstance(policy, PolicyResult):
        return policy
    if not isinstance(policy, str | Path | Mapping):
        raise InputError(f"policy: give a policy file, a PolicyResult or its dict, not {type(policy).__name__}")
    source = str(policy) if isinstance(policy, str | Path) else "policy"
    try:
        return PolicyResult.model_validate(read_policy(Path(policy)) if isinstance(policy, str | Path) else policy)
    except ValidationError as exc:
        raise validation_error(source, exc) from None
