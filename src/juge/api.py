"""The public Python API: what each `juge` command does, as a function returning a typed result.

Every CLI command parses its options, calls one function here, and prints or writes what it returns;
the functions raise :class:`juge.errors.InputError` (the CLI's exit 2) on bad input and never print.
They are re-exported by :mod:`juge` (``juge.run``, ``juge.calibrate``, ...).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.errors import InputError
from juge.label.api import (  # noqa: F401 - re-exported: `juge label ...`, one function per command
    label_add_rater,
    label_attach_run,
    label_disagreements,
    label_export,
    label_init,
    label_release,
    label_revoke_rater,
    label_rotate_link,
    label_server,
    label_status,
)
from juge.results import (
    Calibration,
    HoldoutTest,
    PolicyResult,
)

# isort: split
# API functions that live in their domain modules, re-exported (``x as x``) one line each.
from juge.config import eval_config as eval_config
from juge.data.split import split as split
from juge.policy.api import audit_sample as audit_sample
from juge.policy.api import policy_derive as policy_derive
from juge.policy.api import policy_test as policy_test
from juge.policy.api import route as route
from juge.probes.probe import probe_injection as probe_injection
from juge.runs.api import _store
from juge.runs.api import compare as compare
from juge.runs.api import delete_runs as delete_runs
from juge.runs.api import dry_run as dry_run
from juge.runs.api import estimate as estimate
from juge.runs.api import export as export
from juge.runs.api import get_provider as get_provider
from juge.runs.api import list_runs as list_runs
from juge.runs.api import load_judge as load_judge
from juge.runs.api import prompt as prompt
from juge.runs.api import run as run
from juge.runs.api import run_async as run_async
from juge.runs.api import show as show
from juge.scaffold import init_project as init_project


def tune_judge(judge: str | Path, **options: Any) -> TuneResult:
    """Search for a better judge against people (``juge tune``): see :func:`juge.tune.tune` for the options.

    Imported on call: the search pulls in the engine and numpy, which ``import juge.api`` does not need.
    """
    from juge.tune import tune

    return tune(judge, **options)


if TYPE_CHECKING:
    from rich.console import Console

    from juge.calibration.inputs import StudyInputs
    from juge.data.judgments import JudgmentsSource
    from juge.tune.models import TuneResult

DEFAULT_DB = Path(".juge") / "juge.db"

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
    from juge.arguments import refuse_text
    from juge.calibration.inputs import load_inputs
    from juge.data.judgments import JudgmentsSource
    from juge.data.readers import named_records

    if kind not in (None, "pairwise", "score", "passfail"):
        raise InputError(f"--kind must be pairwise, score or passfail, got {kind!r}")
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

    return load_inputs(
        items=None if items is None else named("items", items),
        judgments=[named(f"judgments[{k}]" if len(sources) > 1 else "judgments", t) for k, t in enumerate(sources)],
        labels=None if labels is None else named("labels", labels),
        from_hf=Path(from_hf) if from_hf is not None else None,
        turn=turn,
        run=run,
        db=db,
        kind=kind,
        label_cols=list(label_cols),
        scale=dict(scale) if scale else None,
        id_col=id_col,
        output_col=output_col,
        baseline_cols=list(baseline_cols),
        judges=list(judges),
        templates=list(templates),
        lean=lean,
        format=format,
        mapping=mapping,
        labels_map=labels_map,
        missing=missing,
        criteria=criteria,
        labels_nested=labels_nested,
    )


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
    truth: Literal["each", "mean", "agree"] = "each",
    threshold: float | None = None,
    resamples: int = 2000,
    seed: int = 0,
    progress: Progress | None = None,
    inputs: StudyInputs | None = None,
) -> Calibration:
    """Measure judges against people (``juge calibrate``): the person-vs-person ceiling, each judge's
    agreement and kappa with intervals, order and length bias, per category.

    ``items``, ``judgments`` and ``labels`` are each a file path, a pandas DataFrame or a list of dicts
    with the columns the CLI reads (``judgments`` may also be a list of paths); ``run`` takes the
    judgments (and cases) of a stored run from ``db``. ``split`` defaults to ``dev`` when the items
    carry splits, else ``all``. ``mapping``/``labels_map`` read other column names as juge's fields,
    ``format`` names the files' format, ``missing`` the label values that mean no label, ``criteria``
    several label columns to study one by one (``{name: [columns]}``), ``labels_nested`` a field holding
    labels inside each item (see ``juge calibrate --help`` for each). ``inputs`` (from :func:`calibration_inputs`) skips reading them again.
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

    if resamples < 1:
        raise InputError("--resamples must be at least 1")
    if inputs is None:
        inputs = calibration_inputs(
            items=items,
            judgments=judgments,
            labels=labels,
            run=run,
            db=db,
            from_hf=from_hf,
            turn=turn,
            kind=kind,
            judges=judges,
            templates=templates,
            label_cols=label_cols,
            scale=scale,
            id_col=id_col,
            output_col=output_col,
            baseline_cols=baseline_cols,
            format=format,
            mapping=mapping,
            labels_map=labels_map,
            missing=missing,
            criteria=criteria,
            labels_nested=labels_nested,
        )
    study = run_study(
        inputs,
        split=default_split(inputs, split),
        boot=Bootstrap(n_resamples=resamples, seed=seed),
        truth=truth,
        threshold=threshold,
        progress=progress,
    )
    return _with_headline(study)


def _with_headline(study: Calibration) -> Calibration:
    """The study with its one-line answers (``headline``), as ``--json`` writes it and the report opens."""
    from juge.reports.model import calibration_headlines

    study.headlines = calibration_headlines(study)
    return study


def demo(
    out: str | Path | None = None,
    *,
    split: Literal["dev", "all"] = "dev",
    resamples: int = 2000,
    seed: int = 0,
    live: bool = False,
    limit: int = 40,
    db: str | Path | None = None,
    progress: Progress | None = None,
    console: Console | None = None,
) -> Calibration:
    """The calibration study on the embedded MT-Bench sample (``juge demo``): no network, no key.

    With ``out``, writes ``out/calibration.json`` and ``out/report.html``. ``live`` also runs the
    local judge (needs ``juge[local]``) on ``limit`` pairs, storing its calls in ``db`` (default
    ``out/juge.db``); with ``console``, the local judge's progress and a line about its run go there.

    >>> import juge
    >>> juge.demo(resamples=100).n_votes
    404
    """
    from juge.calibration.demo import demo_file, study_of_demo
    from juge.calibration.pairwise import Bootstrap
    from juge.files import write_json

    if split not in ("dev", "all"):
        raise InputError(f"--split must be dev or all (holdout is kept for the final test), got {split!r}")
    if db is not None and not live:
        raise InputError("--db is used only with --live (it stores the local judge's calls)")
    if live and out is None and db is None:
        raise InputError("live: give out (or db) for the local judge's store")
    extra: list[Any] = []
    if live:
        from juge.live_demo import live_demo_run
        from juge.providers.base import ProviderError

        store_path = Path(db) if db is not None else Path(out or ".") / "juge.db"
        try:
            live_run = live_demo_run(
                store_path, split=split, limit=limit, seed=seed, console=console, progress=console is not None
            )
        except ProviderError as exc:
            raise InputError(f"--live: {exc}") from None
        extra = live_run.judgments
        if console is not None:
            calls, cached = live_run.stats.get("calls", 0), live_run.stats.get("cache_hits", 0)
            console.print(
                f"local judge: run {live_run.run_id}{' (resumed)' if live_run.resumed else ''} in {store_path}: "
                f"{len(extra)} judgments, {calls} model calls, {cached} answered from the cache "
                f"(juge show {live_run.run_id} --db {store_path})",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
    boot = Bootstrap(n_resamples=resamples, seed=seed)
    study = _with_headline(study_of_demo(split=split, boot=boot, progress=progress, extra_judgments=extra))
    if out is not None:
        json_path = write_json(Path(out) / "calibration.json", study.to_dict())
        report(study, Path(out) / "report.html", items=demo_file("items.jsonl"), source=json_path.name)
    return study


# ---- reports --------------------------------------------------------------------------------------


def report(
    result: Calibration | Mapping[str, Any] | str | Path,
    path: str | Path,
    fmt: Literal["html", "md", "json"] | None = None,
    *,
    policy: PolicyResult | Mapping[str, Any] | str | Path | None = None,
    policy_test: HoldoutTest | Mapping[str, Any] | str | Path | None = None,
    items: Any = None,
    top: int = 3,
    source: str | None = None,
) -> Path:
    """Write a calibration report (``juge report``): self-contained HTML, Markdown or normalised JSON.

    ``result`` is a :class:`Calibration` (or its JSON, or the path of one); ``fmt`` defaults to the
    path's suffix (``.md``, ``.json``; else HTML). Returns the path written.
    """
    from juge.reports import format_for, read_calibration, read_result, write_report

    if top < 0:
        raise InputError("--top must be 0 or more")
    chosen = format_for(path, fmt)
    if isinstance(result, str | Path):
        source = source or Path(result).name
        data = read_calibration(result)
    else:
        data = result if isinstance(result, Calibration) else Calibration.model_validate(dict(result))

    def as_model(obj: Any, model: type[Any], what: str) -> Any:
        if obj is None or isinstance(obj, model):
            return obj
        if isinstance(obj, str | Path):
            return read_result(obj, model, what)
        return model.model_validate(dict(obj))

    return write_report(
        data,
        path,
        chosen,
        policy=as_model(policy, PolicyResult, "policy"),
        policy_test=as_model(policy_test, HoldoutTest, "policy test"),
        items=items,
        top=top,
        source=source,
    )


def run_report(
    run: str | None = None,
    compare: tuple[str, str] | None = None,
    *,
    db: str | Path | None = None,
    path: str | Path | None = None,
    fmt: Literal["html", "md", "json"] | None = None,
    threshold: float | None = None,
    allow_different_judges: bool = False,
    max_cases: int = 200,
    seed: int = 0,
    resamples: int = 2000,
) -> Path:
    """Write the report of a stored run, or of two runs compared (``juge report --run`` / ``--compare``).

    ``path`` defaults to ``run-ID.html`` or ``compare-OLD-NEW.html`` (the format's suffix); ``fmt`` defaults
    to the path's suffix (``.md``, ``.json``; else HTML). Nothing is written on an error. Returns the path written.
    """
    from juge.reports import SUFFIXES, format_for, render_report, write_atomic

    chosen = format_for(path, fmt)
    from juge.reports.runs import build_compare_data, build_run_data
    from juge.store import RunNotFound

    if (run is None) == (compare is None):
        raise InputError("give exactly one of: --run RUN_ID, or --compare OLD NEW")
    if max_cases < 0:
        raise InputError("--max-cases must be 0 or more")
    from juge.store import is_database_url

    store_path = db if db is not None else DEFAULT_DB
    if not is_database_url(store_path) and not Path(store_path).is_file():
        raise InputError(f"{store_path}: no juge database here; give --db PATH (the one `juge run` wrote to)")
    with _store(store_path) as store:
        try:
            if run is not None:
                data = build_run_data(store, run, max_cases=max_cases)
                default = f"run-{data['run']['id']}"
            else:
                assert compare is not None
                data = build_compare_data(
                    store,
                    *compare,
                    threshold=threshold,
                    allow_different_judges=allow_different_judges,
                    n_resamples=resamples,
                    seed=seed,
                )
                default = f"compare-{data['compare']['run_a']['id']}-{data['compare']['run_b']['id']}"
        except RunNotFound as exc:
            raise RunNotFound(f"{exc}; list the stored runs with `juge runs --db {store_path}`") from None
    return write_atomic(
        Path(path) if path is not None else Path(default + SUFFIXES[chosen]), render_report(data, chosen)
    )
