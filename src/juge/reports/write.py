"""Writing a report: the format a path asks for, a calibration rendered and written atomically, and the result
files a report reads.

`write_report(calibration, path, fmt="html")` is the one call other commands need (`juge demo` uses it).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib.resources import as_file
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from juge.calibration.results import Calibration
from juge.data.records import Case
from juge.errors import InputError, input_error, pydantic_field
from juge.files import read_json_object, write_atomic
from juge.parts import check_schema_version
from juge.policy.results import AuditStatus, HoldoutTest, PolicyResult
from juge.reports.criteria import render_criteria
from juge.reports.disagreements import read_items
from juge.reports.model import as_calibration, build_report_data
from juge.reports.render import FORMATS, render_report

ResultModel = TypeVar("ResultModel", bound=BaseModel)
SUFFIXES = {"html": ".html", "md": ".md", "json": ".json", "md-summary": ".md"}
RUN_ONLY = ("md-summary",)  # formats of a stored run or a comparison only


def format_for(path: str | Path | None, fmt: str | None) -> str:
    """The report format: `fmt` when given, else the output's suffix (.md, .json; anything else is HTML).
    The one rule for ``juge report``, ``juge.report`` and ``run_report``; an unknown `fmt` is an input error."""
    if fmt is not None:
        if fmt not in FORMATS and fmt not in RUN_ONLY:
            known = ", ".join([*FORMATS, *RUN_ONLY])
            raise InputError(f"--format must be one of {known} (fmt= in Python), got {fmt!r}")
        return fmt
    suffix = Path(path).suffix.lower() if path is not None else ""
    return {".md": "md", ".json": "json"}.get(suffix, "html")


def write_report(
    calibration: Calibration | dict[str, Any],
    path: str | Path,
    fmt: str = "html",
    *,
    policy: PolicyResult | dict[str, Any] | None = None,
    policy_test: HoldoutTest | dict[str, Any] | None = None,
    items: str | Path | Traversable | None = None,
    top: int = 3,
    source: str | None = None,
    items_map: Mapping[str, str] | None = None,
    audit: AuditStatus | dict[str, Any] | None = None,
    db: str | Path | None = None,
) -> Path:
    """Render a calibration result and write it atomically to `path`; returns the path.

    `items` (the study's items file, its columns read with `items_map` when given) adds the question, both
    answers and each rater's vote to the disagreement examples; without it, a study of a stored run
    (``calibrate --run``) has them from that run's cases, in `db` or the store the calibration names. `top` is
    how many examples per judge; `audit` (`juge audit status --json`) adds the weekly audit's section.
    """
    cases = None
    calibration = as_calibration(calibration)
    if items is not None:
        # A packaged file (importlib.resources Traversable, e.g. the demo's items) is read through a real path.
        with as_file(Path(items) if isinstance(items, str) else items) as items_path:
            cases = read_items(items_path, items_map)
    note = None
    if items is None and calibration.run is not None:
        where = db or calibration.run.db
        cases = stored_cases(calibration.run.id, where)
        if cases is None:
            note = f"run {calibration.run.id} is not in {where or 'the default store'}; pass --items or --db"

    def build(study: Calibration) -> dict[str, Any]:
        data = build_report_data(
            study, policy=policy, policy_test=policy_test, cases=cases, top=top, source=source, audit=audit
        )
        data["items_note"] = note  # why the disagreements' texts are missing, when a stored run was named
        return data

    if calibration.kind == "criteria":  # several criteria: one report each, side by side first
        return write_atomic(path, render_criteria(calibration, fmt, build))
    return write_atomic(path, render_report(build(calibration), fmt))


def stored_cases(run_id: str, db: str | Path | None) -> dict[str, Case] | None:
    """A stored run's cases by id, or None when its store or the run is no longer there (the report then
    says the texts are not in the calibration file)."""
    from juge.store import RunNotFound, open_store

    try:
        with open_store(db, must_exist=True) as store:
            return {c.id: c for c in store.run_cases(store.get_run(run_id)["id"])}
    except (InputError, RunNotFound):
        return None


def read_result(path: str | Path, model: type[ResultModel], what: str) -> ResultModel:
    """A result file validated into its model; a bad value is refused naming the file and the field."""
    obj = read_json_object(path, what)
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        field, message = pydantic_field(exc)
        raise input_error(path, f"not a valid {what}: {message}", field=field) from None


def read_calibration(path: str | Path) -> Calibration:
    """A calibration result written by `juge calibrate --json`; refuses files that are not one."""
    obj = read_json_object(path, "calibration")
    check_schema_version(obj, path, "calibration")
    if obj.get("kind") != "criteria" and not isinstance(obj.get("judges"), dict):
        raise input_error(
            path,
            "not a calibration result: no 'judges' object; make one with `juge calibrate ... --json FILE`",
            field="judges",
        )
    return read_result(path, Calibration, "calibration")
