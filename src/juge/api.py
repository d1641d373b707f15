"""The public Python API: what each `juge` command does, as a function returning a typed result.

Every CLI command parses its options, calls one function here, and prints or writes what it returns;
the functions raise :class:`juge.errors.InputError` (the CLI's exit 2) on bad input and never print.
They are re-exported by :mod:`juge` (``juge.run``, ``juge.calibrate``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

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
from juge.calibration.results import Calibration
from juge.policy.results import HoldoutTest, PolicyResult

# isort: split
# API functions that live in their domain modules, re-exported (``x as x``) one line each.
from juge.calibration.api import Rows as Rows
from juge.calibration.api import calibrate as calibrate
from juge.calibration.api import calibration_inputs as calibration_inputs
from juge.calibration.api import demo as demo
from juge.calibration.api import demo_path as demo_path
from juge.config import eval_config as eval_config
from juge.data.split import split as split
from juge.policy.api import audit_sample as audit_sample
from juge.policy.api import policy_derive as policy_derive
from juge.policy.api import policy_test as policy_test
from juge.policy.api import route as route
from juge.probes.probe import probe_injection as probe_injection
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
from juge.tune.api import tune_judge as tune_judge


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
    items_map: Mapping[str, str] | None = None,
) -> Path:
    """Write a calibration report (``juge report``): self-contained HTML, Markdown or normalised JSON.

    ``result`` is a :class:`Calibration` (or its JSON, or the path of one); ``fmt`` defaults to the
    path's suffix (``.md``, ``.json``; else HTML); ``items_map`` reads the columns of ``items`` (``--map``).
    Returns the path written.
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
        items_map=items_map,
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
    from juge.store import DEFAULT_DB, RunNotFound, is_database_url, open_store

    if (run is None) == (compare is None):
        raise InputError("give exactly one of: --run RUN_ID, or --compare OLD NEW")
    if max_cases < 0:
        raise InputError("--max-cases must be 0 or more")
    store_path = db if db is not None else DEFAULT_DB
    if not is_database_url(store_path) and not Path(store_path).is_file():
        raise InputError(f"{store_path}: no juge database here; give --db PATH (the one `juge run` wrote to)")
    with open_store(store_path) as store:
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
