"""The calibration API: ``juge calibrate`` and ``juge demo`` as functions returning a typed
:class:`~juge.results.Calibration`, and :func:`calibration_inputs`, the one reader of a study's items,
judgments and labels that calibrate, the policy functions and tune share.

Re-exported by :mod:`juge.api` and :mod:`juge` (``juge.calibrate``, ``juge.demo``, ...). The functions raise
:class:`juge.errors.InputError` (the CLI's exit 2) on bad input and never print.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.calibration.results import Calibration, StudyRun
from juge.errors import InputError

if TYPE_CHECKING:
    from juge.calibration.inputs import StudyInputs
    from juge.calibration.source import StudySource
    from juge.data.draw import Weighting
    from juge.data.judgments import JudgmentsSource

#: What a table argument may be: a file path, a pandas DataFrame, or a list of row dicts.
Rows = str | Path | Sequence[Mapping[str, Any]] | Any
Progress = Callable[[str, int, int], None]


def demo_path(name: str) -> Path:
    """The path of a file of the embedded MT-Bench sample (``items.jsonl``, ``judgments.jsonl``, ``DATA.md``).

    >>> demo_path("items.jsonl").name
    'items.jsonl'
    """
    from juge.calibration.demo import DEMO_FILES

    if name not in DEMO_FILES:
        raise ValueError(f"no demo file {name!r}; there are {DEMO_FILES}")
    return Path(str(files("juge").joinpath("demo_data", name)))


# ---- calibrate ---------------------------------------------------------------------------------


def calibration_inputs(
    *,
    items: Rows | None = None,
    judgments: Rows | Sequence[str | Path | JudgmentsSource] | None = None,
    labels: Rows | None = None,
    run: str | None = None,
    db: str | Path | None = None,
    from_hf: str | Path | None = None,
    turn: int = 1,
    kind: Literal["pairwise", "score", "passfail"] | None = None,
    judges: Sequence[str] = (),
    templates: Sequence[str] = (),
    label_cols: Sequence[str] = (),
    scale: Mapping[str, Any] | None = None,
    id_col: str = "id",
    output_col: str = "output",
    baseline_cols: Sequence[str] = (),
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    labels_map: Mapping[str, str] | None = None,
    missing: Iterable[str] = (),
    criteria: Mapping[str, Sequence[str]] | None = None,
    labels_nested: str | None = None,
    lean: bool = True,
) -> StudyInputs:
    """Read a study's items, labels and judgments (see :func:`calibrate` for the arguments). ``lean``: keep
    no texts of items a study does not need (a policy needs them: ``lean=False``)."""
    from juge.calibration.source import read_study, study_source

    source = study_source(
        items=items, judgments=judgments, labels=labels, run=run, db=db, from_hf=from_hf, turn=turn, kind=kind,
        judges=judges, templates=templates, label_cols=label_cols, scale=scale, id_col=id_col, output_col=output_col,
        baseline_cols=baseline_cols, format=format, mapping=mapping, labels_map=labels_map, missing=missing,
        criteria=criteria, labels_nested=labels_nested,
    )  # fmt: skip
    return read_study(source, lean=lean)


def calibrate(
    *,
    items: Rows | None = None,
    judgments: Rows | Sequence[str | Path | JudgmentsSource] | None = None,
    labels: Rows | None = None,
    run: str | None = None,
    split: str | None = None,
    db: str | Path | None = None,
    from_hf: str | Path | None = None,
    turn: int = 1,
    kind: Literal["pairwise", "score", "passfail"] | None = None,
    judges: Sequence[str] = (),
    templates: Sequence[str] = (),
    label_cols: Sequence[str] = (),
    scale: Mapping[str, float] | None = None,
    id_col: str = "id",
    output_col: str = "output",
    baseline_cols: Sequence[str] = (),
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    labels_map: Mapping[str, str] | None = None,
    missing: Iterable[str] = (),
    criteria: Mapping[str, Sequence[str]] | None = None,
    labels_nested: str | None = None,
    truth: Literal["each", "mean", "agree", "gold"] = "each",
    threshold: float | None = None,
    resamples: int = 2000,
    seed: int = 0,
    progress: Progress | None = None,
    inputs: StudyInputs | None = None,
    source: StudySource | None = None,
) -> Calibration:
    """Measure judges against people (``juge calibrate``): the person-vs-person ceiling, each judge's
    agreement and kappa with intervals, order and length bias, per category.

    ``items``, ``judgments`` and ``labels`` are each a file path, a pandas DataFrame or a list of dicts
    with the columns the CLI reads (``judgments`` may also be a list of paths); ``run`` takes the
    judgments (and cases) of a stored run from ``db``. ``split`` defaults to ``dev`` when the items
    carry splits, else ``all``. ``mapping``/``labels_map`` read other column names as juge's fields,
    ``format`` names the files' format, ``missing`` the label values that mean no label, ``criteria``
    several label columns to study one by one (``{name: [columns]}``), ``labels_nested`` a field holding
    labels inside each item (see ``juge calibrate --help`` for each). ``source`` (a :class:`StudySource`) describes
    them all at once instead; ``inputs`` (from :func:`calibration_inputs`) skips reading them again.
    ``to_dict()`` of the result is what ``juge calibrate --json`` writes.

    >>> import juge
    >>> cal = juge.calibrate(items=juge.demo_path("items.jsonl"),
    ...                      judgments=juge.demo_path("judgments.jsonl"), resamples=100)
    >>> cal.kind, cal.split, cal.n_items
    ('pairwise', 'dev', 155)
    >>> round(cal.ceiling.agreement.value, 3)
    0.638
    """
    from juge.calibration.inputs import default_split, run_study
    from juge.calibration.pairwise import Bootstrap
    from juge.calibration.source import read_study

    if resamples < 1:
        raise InputError("--resamples must be at least 1")
    if inputs is None and source is not None:
        inputs = read_study(source, lean=True)
    if inputs is None:
        inputs = calibration_inputs(
            items=items, judgments=judgments, labels=labels, run=run, db=db, from_hf=from_hf, turn=turn, kind=kind,
            judges=judges, templates=templates, label_cols=label_cols, scale=scale, id_col=id_col,
            output_col=output_col, baseline_cols=baseline_cols, format=format, mapping=mapping, labels_map=labels_map,
            missing=missing, criteria=criteria, labels_nested=labels_nested,
        )  # fmt: skip
    weighting, item_weights = study_weights(inputs)
    study = run_study(
        inputs,
        split=default_split(inputs, split),
        boot=Bootstrap(n_resamples=resamples, seed=seed, item_weights=item_weights),
        truth=truth,
        threshold=threshold,
        progress=progress,
    )
    stored = source.run if source is not None else run
    if stored is not None:
        study.run = study_run(stored, source.db if source is not None else db)
    study.weighting = weighting
    if item_weights is not None and inputs.draw is not None:
        from juge.data.draw import weighted_note

        study.notes.append(weighted_note(inputs.draw) + " Krippendorff's alpha is left out.")
    return with_headline(study)


def study_weights(inputs: StudyInputs) -> tuple[Weighting, dict[str, float] | None]:
    """How calibrate counts the labels of ``inputs``: a pairwise or PASS/FAIL study of an unequal-probability draw
    weights each item by 1 / its chance (each of its figures is a ratio of per-item sums or the kappa of a pooled
    table; alpha is left out); a score study of one (correlations, alpha) or one of several criteria is refused
    (:func:`juge.data.draw.unweighted_figures`)."""
    from juge.data.draw import unweighted_figures

    draw = inputs.draw
    if draw is None or not draw.unequal or inputs.kind == "score" or inputs.criteria is not None:
        what = "juge calibrate (a score study)" if inputs.kind == "score" else "juge calibrate"
        return unweighted_figures(draw, what), None
    ids = sorted({lab.item_id for lab in inputs.data.labels})
    return "inverse-probability", dict(zip(ids, draw.weights(ids)))


def study_run(run: str, db: str | Path | None) -> StudyRun:
    """The stored run a study read, by its full id, with the store's absolute path (a URL is left out)."""
    from juge.store import DEFAULT_DB, open_store

    where = db or DEFAULT_DB
    with open_store(where) as store:
        info = store.get_run(run)
    path = None if "://" in str(where) else str(Path(where).resolve())
    return StudyRun(id=info["id"], db=path, dataset_hash=info["dataset_hash"])


def with_headline(study: Calibration) -> Calibration:
    """The study with its one-line answers (``headline``), as ``--json`` writes it and the report opens."""
    from juge.reports.model import calibration_headlines

    study.headlines = calibration_headlines(study)
    return study
