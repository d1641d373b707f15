"""The files ``juge view`` opens beside the store (calibrations, policies, holdout tests, people's labels)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from juge.calibration.results import Calibration
from juge.data.records import HumanLabel
from juge.policy.results import HoldoutTest, PolicyResult


@dataclass(frozen=True)
class Shown:
    """The files `juge view` opens beside the store, read and checked before the server starts."""

    calibrations: list[tuple[str, Calibration]] = field(default_factory=list)
    policies: list[tuple[str, PolicyResult]] = field(default_factory=list)
    tests: list[tuple[str, HoldoutTest]] = field(default_factory=list)
    labels: dict[str, list[HumanLabel]] = field(default_factory=dict)
    labels_file: str | None = None


def read_shown(
    calibrations: Sequence[str | Path] = (),
    policies: Sequence[str | Path] = (),
    tests: Sequence[str | Path] = (),
    labels: str | Path | None = None,
    *,
    labels_map: Mapping[str, str] | None = None,
    labels_format: str | None = None,
) -> Shown:
    """Each file read as its result (a file that is not one is an InputError naming it and the field)."""
    from juge.data.readers import read_labels
    from juge.reports.write import read_calibration, read_result

    by_item: dict[str, list[HumanLabel]] = {}
    if labels is not None:
        for label in read_labels(labels, labels_map, format=labels_format):
            by_item.setdefault(label.item_id, []).append(label)
    return Shown(
        calibrations=[(str(p), read_calibration(p)) for p in calibrations],
        policies=[(str(p), read_result(p, PolicyResult, "policy")) for p in policies],
        tests=[(str(p), read_result(p, HoldoutTest, "policy test")) for p in tests],
        labels=by_item,
        labels_file=None if labels is None else str(labels),
    )
