"""The one description of a study's inputs: where its items, judgments and human labels come from, and how
to read them. Built once (from the command line's shared input options, or from the API's keywords) and
read by :func:`read_study` for calibrate, the policy functions, tune and estimate alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.errors import InputError

if TYPE_CHECKING:
    from juge.calibration.inputs import StudyInputs

StudyKind = Literal["pairwise", "score", "passfail"]
KINDS: tuple[StudyKind, ...] = ("pairwise", "score", "passfail")


@dataclass(frozen=True)
class StudySource:
    """A study's inputs as given: the sources (``items``, ``judgments``, ``labels``, a stored ``run`` in ``db``,
    an MT-Bench export ``from_hf``) and how to read them (the shared input options: ``mapping`` is ``--map``,
    ``labels_map``, ``labels_nested``, ``label_cols``, ``criteria``, ``scale``, ``kind``, ``missing``,
    ``format``; ``id_col``/``output_col``/``baseline_cols`` for rated items; ``judges``/``templates`` to keep).
    Tables are file paths, DataFrames or lists of rows; ``judgments`` is one entry per source."""

    items: Any = None
    judgments: tuple[Any, ...] = ()
    labels: Any = None
    run: str | None = None
    db: str | Path | None = None
    from_hf: Path | None = None
    turn: int = 1
    mapping: Mapping[str, str] | None = None
    labels_map: Mapping[str, str] | None = None
    labels_nested: str | None = None
    raters_by: str = "key"  # with labels_nested: "key" (a rater key, else the position) or "position"
    labels_aggregate: str | None = None  # "sum": rows of error annotations -> one score per (item, rater)
    label_weights: tuple[Any, ...] = ()  # WeightRules for labels_aggregate
    labels_seen_by: str | None = None  # an items column naming the raters who saw each item (score 0 if no row)
    label_cols: tuple[str, ...] = ()
    criteria: Mapping[str, Sequence[str]] | None = None
    scale: Mapping[str, Any] | None = None
    kind: StudyKind | None = None
    missing: frozenset[str] = frozenset()
    format: str | None = None
    member: str | None = None  # --member: the member of an archive given as items
    id_col: str = "id"
    output_col: str = "output"
    baseline_cols: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    panels: tuple[Any, ...] = ()  # juge.calibration.panel.Panel: judges voting as one (--panel)
    selection: str | Path | None = None  # --selection: label init --select's --json, the draw the labels come from


def study_source(
    *,
    items: Any = None,
    judgments: Any = None,
    labels: Any = None,
    run: str | None = None,
    db: str | Path | None = None,
    from_hf: str | Path | None = None,
    turn: int = 1,
    mapping: Mapping[str, str] | None = None,
    labels_map: Mapping[str, str] | None = None,
    labels_nested: str | None = None,
    raters_by: str = "key",
    labels_aggregate: str | None = None,
    label_weights: Sequence[Any] = (),
    labels_seen_by: str | None = None,
    label_cols: Sequence[str] = (),
    criteria: Mapping[str, Sequence[str]] | None = None,
    scale: Mapping[str, Any] | None = None,
    kind: str | None = None,
    missing: Iterable[str] = (),
    format: str | None = None,
    member: str | None = None,
    id_col: str = "id",
    output_col: str = "output",
    baseline_cols: Sequence[str] = (),
    judges: Sequence[str] | None = (),
    templates: Sequence[str] = (),
    panels: str | Sequence[Any] | None = None,
    selection: str | Path | None = None,
) -> StudySource:
    """A :class:`StudySource` from the API's arguments: a list or mapping given as the command line's text is
    a TypeError naming it, an unknown kind an InputError; tables in memory are named for errors (``items[3]``)."""
    from juge.arguments import refuse_text
    from juge.calibration.panel import parse_panels
    from juge.data.judgments import JudgmentsSource
    from juge.data.readers import named_records

    if kind not in (None, *KINDS):
        raise InputError(f"--kind must be pairwise, score or passfail, got {kind!r}")
    if labels_aggregate not in (None, "sum"):
        raise InputError(f"--labels-aggregate must be sum, got {labels_aggregate!r}")
    if (label_weights or labels_seen_by) and labels_aggregate is None:
        raise InputError("--label-weight weighs rows for --labels-aggregate sum; give it too")
    if raters_by not in ("key", "position"):
        raise InputError(f"--raters-by must be key or position, got {raters_by!r}")
    for name, value, form in (
        ("judges", judges, "list"),
        ("templates", templates, "list"),
        ("label_cols", label_cols, "list"),
        ("baseline_cols", baseline_cols, "list"),
        ("missing", missing, "list"),
        ("scale", scale, "scale"),
        ("mapping", mapping, "mapping"),
        ("labels_map", labels_map, "mapping"),
        ("criteria", criteria, "criteria"),
    ):
        refuse_text(name, value, form)  # type: ignore[arg-type]
    sources: list[Any]
    if judgments is None or (isinstance(judgments, Sequence) and not isinstance(judgments, str) and not judgments):
        sources = []
    elif isinstance(judgments, str | Path | JudgmentsSource) or hasattr(judgments, "columns"):
        sources = [judgments]
    elif isinstance(judgments, Sequence) and all(isinstance(j, str | Path | JudgmentsSource) for j in judgments):
        sources = list(judgments)
    else:
        sources = [judgments]  # one table of rows

    def named(name: str, table: Any) -> Any:  # rows in memory are read as they are; errors say `items[3].id`
        if isinstance(table, JudgmentsSource):
            return dataclasses.replace(table, source=named_records(name, table.source))
        return named_records(name, table)

    return StudySource(
        items=None if items is None else named("items", items),
        judgments=tuple(
            named(f"judgments[{k}]" if len(sources) > 1 else "judgments", t) for k, t in enumerate(sources)
        ),
        labels=None if labels is None else named("labels", labels),
        run=run,
        db=db,
        from_hf=Path(from_hf) if from_hf is not None else None,
        turn=turn,
        mapping=dict(mapping) if mapping else None,
        labels_map=dict(labels_map) if labels_map else None,
        labels_nested=labels_nested,
        raters_by=raters_by,
        labels_aggregate=labels_aggregate,
        label_weights=tuple(label_weights),
        labels_seen_by=labels_seen_by,
        label_cols=tuple(label_cols),
        criteria={k: tuple(v) for k, v in criteria.items()} if criteria else None,
        scale=dict(scale) if scale else None,
        kind=kind,
        missing=frozenset(missing),
        format=format,
        member=member,
        id_col=id_col,
        output_col=output_col,
        baseline_cols=tuple(baseline_cols),
        judges=tuple(judges or ()),
        templates=tuple(templates),
        panels=parse_panels(panels) if isinstance(panels, str) else tuple(panels or ()),
        selection=selection,
    )


def read_study(source: StudySource, *, lean: bool = False) -> StudyInputs:
    """Read the study `source` describes: items, labels (converted for the study's kind) and judgments.
    ``lean``: keep no texts of items a study does not need (a policy needs them)."""
    from juge.calibration.inputs import load_inputs
    from juge.data.readers import member_path

    fields = {f.name: getattr(source, f.name) for f in dataclasses.fields(source)}  # load_inputs's keywords
    member = fields.pop("member")
    if member:
        if source.items is None or not isinstance(source.items, str | Path):
            raise InputError(f"--member {member}: give an archive file as --items")
        fields["items"] = member_path(source.items, member)
    return load_inputs(**fields, lean=lean)
