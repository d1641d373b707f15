"""Which draw a set of labels comes from, and whether its items had equal chances of being labelled.

``juge label init --select random|stratified|decisive`` records each drawn item's chance; ``juge label export``
writes it beside every label (``selection``, ``selection_probability``), and the command's ``--json`` (the
``--selection FILE`` every study command takes) holds the whole draw. Labels from an unequal-probability draw
(decisive; stratified with unequal shares per category) over-represent the items drawn more often: a figure over
them is unbiased only if each label counts ``1 / chance`` (:func:`label_draw` says so, one rule for every command).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from juge.data.records import HumanLabel
from juge.errors import InputError

METHODS = ("random", "stratified", "decisive")
FROM_LABELS = "the labels' selection fields"
#: How a result's figures count the labels: ``none`` (no draw recorded: the labels as a random sample),
#: ``equal-probability`` (a draw where every item had the same chance: nothing to weight), ``inverse-probability``
#: (each item's labels count 1 / its chance).
Weighting = Literal["none", "equal-probability", "inverse-probability"]


@dataclass(frozen=True)
class LabelDraw:
    """The draw labels come from: its ``method``, where it was read (``source``: the ``--selection`` file or the
    labels' own fields), each labelled item's chance where known, and whether the chances differ."""

    method: str
    source: str
    unequal: bool
    low: float  # the smallest and largest chance of the draw
    high: float
    probabilities: dict[str, float] = field(default_factory=dict)

    @property
    def weighting(self) -> Weighting:
        return "inverse-probability" if self.unequal else "equal-probability"

    def weights(self, items: Sequence[str]) -> list[float]:
        """``1 / chance`` of each item (an InputError names an item with no recorded chance)."""
        missing = [i for i in items if i not in self.probabilities]
        if missing:
            raise InputError(
                f"{self.source}: labelled item {missing[0]!r} ({len(missing)} in all) has no recorded chance of being "
                "drawn: these labels are not all of this draw"
            )
        return [1.0 / self.probabilities[i] for i in items]


def label_draw(
    labels: Sequence[HumanLabel],
    *,
    selection: str | Path | Mapping[str, Any] | None = None,
    categories: Mapping[str, str | None] | None = None,
) -> LabelDraw | None:
    """The draw ``labels`` come from (None: no draw recorded, the labels are taken as a random sample).

    ``selection``: ``juge label init --select ... --json`` (the file, or its dict), which wins over the labels'
    own ``selection`` / ``selection_probability`` fields; ``categories`` (item id -> category) gives a stratified
    draw's items their category's chance."""
    if selection is not None:
        return _from_selection(selection, labels, categories or {})
    carrying = [lab for lab in labels if lab.selection_probability is not None]
    if not carrying:
        return None
    methods = sorted({str(lab.selection) for lab in carrying})
    if len(methods) > 1:
        raise InputError(
            f"{FROM_LABELS}: the labels come from several draws ({', '.join(methods)}); read one draw's labels at a "
            "time"
        )
    probabilities = {lab.item_id: float(lab.selection_probability) for lab in carrying}  # type: ignore[arg-type]
    chances = set(probabilities.values())
    unequal = max(chances) - min(chances) > 1e-9
    if unequal and len(carrying) < len(labels):
        bare = next(lab.item_id for lab in labels if lab.selection_probability is None)
        raise InputError(
            f"{FROM_LABELS}: {len(labels) - len(carrying)} labels (item {bare!r} first) carry no selection_probability "
            f"beside {len(carrying)} drawn by a {methods[0]} draw with unequal chances: labels of another draw cannot "
            "be weighted with them; read the draw's labels alone"
        )
    return LabelDraw(methods[0], FROM_LABELS, unequal, min(chances), max(chances), probabilities)


def read_selection(selection: str | Path | Mapping[str, Any], option: str) -> tuple[str, Mapping[str, Any]]:
    """What ``juge label init --select ... --json`` recorded, from its file (read for `option`) or as given, its
    ``selection`` unwrapped: (where it came from, the record with a known ``method``); anything else is refused."""
    from juge.files import read_json_object

    where = str(selection) if isinstance(selection, str | Path) else "selection"
    data: Any = read_json_object(selection, option) if isinstance(selection, str | Path) else selection
    data = data.get("selection", data) if isinstance(data, Mapping) else data
    if not isinstance(data, Mapping) or data.get("method") not in METHODS:
        raise InputError(
            f"{where}: no selection (method {', '.join(METHODS)}) in it; give the --json file of juge label init "
            "--select ... --budget N"
        )
    return where, data


def _from_selection(
    selection: str | Path | Mapping[str, Any], labels: Sequence[HumanLabel], categories: Mapping[str, str | None]
) -> LabelDraw:
    where, data = read_selection(selection, "--selection")
    method = str(data["method"])
    probabilities: dict[str, float] = {}
    recorded = data.get("probabilities")
    if isinstance(recorded, Mapping):
        probabilities = {str(k): float(v) for k, v in recorded.items() if isinstance(v, int | float) and v > 0}
    by_stratum = {
        str(s.get("stratum")): float(s["probability"])
        for s in data.get("strata") or []
        if isinstance(s, Mapping) and isinstance(s.get("probability"), int | float) and s["probability"] > 0
    }
    if method != "decisive":  # every item of a stratum had its stratum's chance
        for lab in labels:
            stratum = "(all)" if method == "random" else categories.get(lab.item_id) or "(none)"
            if stratum in by_stratum:
                probabilities.setdefault(lab.item_id, by_stratum[stratum])
    chances = set(probabilities.values()) | set(by_stratum.values())
    if not chances:
        raise InputError(f"{where}: a {method} selection without its probabilities (each drawn case's chance)")
    unequal = max(chances) - min(chances) > 1e-9
    return LabelDraw(method, where, unequal, min(chances), max(chances), probabilities)


def weighted_note(draw: LabelDraw) -> str:
    """What a result over labels of ``draw`` weighted by 1 / chance says of its figures."""
    return (
        f"The labels come from a {draw.method} draw with unequal chances ({draw.source}): every agreement, kappa and "
        "share is a Hajek ratio, each item counting 1 / its chance, and the bootstrap resamples items with their "
        "weights; counts are of the items labelled."
    )


def weighting_of(draw: LabelDraw | None) -> Weighting:
    """A result's ``weighting`` for labels of ``draw``."""
    return "none" if draw is None else draw.weighting


def unweighted_figures(draw: LabelDraw | None, command: str) -> Weighting:
    """The ``weighting`` of ``command``'s result, whose figures count every label alike: labels of an
    unequal-probability draw are refused (an InputError, exit 2), as those figures would lean toward the items
    drawn more often; a draw with one chance for every item needs nothing."""
    if draw is None or not draw.unequal:
        return weighting_of(draw)
    raise InputError(
        f"{draw.source}: these labels come from a {draw.method} draw (juge label init --select {draw.method}), whose "
        f"items had unequal chances of being labelled ({draw.low:.3g} to {draw.high:.3g}); {command} counts every "
        "label alike, so its figures would lean toward the items drawn more often, and it does not weight them by "
        "1 / chance. Estimate the pass rate from these labels with juge estimate --selection FILE (inverse-"
        f"probability weighted), or label a random draw (--select random) for {command}"
    )
