"""`juge report` as functions: a calibration's report (:func:`report`) and a stored run's, or two runs compared
(:func:`run_report`). The renderers (jinja2, the plots) and the store are imported on call: ``import juge.api``
does not need them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from juge.calibration.results import Calibration
from juge.errors import InputError
from juge.policy.results import AuditStatus, HoldoutTest, PolicyResult


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
    items_map: Mapping[str, str] | None = None,
    audit: AuditStatus | Mapping[str, Any] | str | Path | None = None,
    db: str | Path | None = None,
) -> Path:
    """Write a calibration report (``juge report``): self-contained HTML, Markdown or normalised JSON.

    ``result`` is a :class:`Calibration` (or its JSON, or the path of one); ``fmt`` defaults to the
    path's suffix (``.md``, ``.json``; else HTML); ``items_map`` reads the columns of ``items`` (``--map``);
    ``audit`` (an :class:`AuditStatus`, or the ``juge audit status --json`` file) adds the weekly audit's section
    with its chart. Without ``items``, a study of a stored run (``calibrate --run``) shows its disagreements'
    texts from that run's cases, in ``db`` (default: the store the calibration names).
    Returns the path written.
    """
    from juge.reports.write import RUN_ONLY, format_for, read_calibration, read_result, write_report

    if top < 0:
        raise InputError("--top must be 0 or more")
    chosen = format_for(path, fmt)
    if chosen in RUN_ONLY:
        raise InputError(f"--format {chosen} summarises a stored run: give --run RUN_ID or --compare OLD NEW")
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
        items_map=items_map,
        audit=as_model(audit, AuditStatus, "audit status"),
        db=db,
    )


def run_report(
    run: str | None = None,
    compare: tuple[str, str] | None = None,
    *,
    db: str | Path | None = None,
    path: str | Path | None = None,
    fmt: Literal["html", "md", "json", "md-summary"] | None = None,
    threshold: float | None = None,
    allow_different_judges: bool = False,
    max_cases: int = 200,
    seed: int = 0,
    resamples: int = 2000,
) -> Path:
    """Write the report of a stored run, or of two runs compared (``juge report --run`` / ``--compare``).

    ``path`` defaults to ``run-ID.html`` or ``compare-OLD-NEW.html`` (the format's suffix); ``fmt`` defaults
    to the path's suffix (``.md``, ``.json``; else HTML). ``md-summary`` is a short Markdown for a pull-request
    comment: the pass rate, the gate and the cases whose verdict changed since the previous run of the same eval
    (with ``compare``: since OLD). Nothing is written on an error. Returns the path written.
    """
    from juge.reports.render import render_report
    from juge.reports.runs import build_compare_data, build_run_data
    from juge.reports.write import SUFFIXES, format_for, write_atomic
    from juge.store import DEFAULT_DB, RunNotFound, is_database_url, open_store

    chosen = format_for(path, fmt)

    if (run is None) == (compare is None):
        raise InputError("give exactly one of: --run RUN_ID, or --compare OLD NEW")
    if max_cases < 0:
        raise InputError("--max-cases must be 0 or more")
    store_path = db if db is not None else DEFAULT_DB
    if not is_database_url(store_path) and not Path(store_path).is_file():
        raise InputError(f"{store_path}: no juge database here; give --db PATH (the one `juge run` wrote to)")
    with open_store(store_path) as store:
        try:
            if chosen == "md-summary":
                from juge.reports.summary_md import md_summary

                target = run if run is not None else compare[1]  # type: ignore[index]
                text = md_summary(store, target, db=store_path, baseline=compare[0] if compare else None)
                default = f"run-{store.get_run(target)['id']}.summary"
                return write_atomic(Path(path) if path is not None else Path(default + ".md"), text)
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
