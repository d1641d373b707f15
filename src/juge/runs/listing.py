"""Stored runs as `juge runs` lists them (filtered by eval, status and recency, with progress), and
`juge runs rm`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.errors import InputError
from juge.runs.results import RunRow, RunRowJudge, RunRowSystem

if TYPE_CHECKING:
    from juge.store import Store

RUN_STATUSES = ("running", "done")  # a run is running until its summary is stored


def list_runs(
    *,
    db: str | Path | None = None,
    eval_name: str | None = None,
    status: str | None = None,
    last: int | None = None,
    all_kinds: bool = False,
) -> list[RunRow]:
    """The runs stored in ``db`` (``juge runs``), newest first: each with its kind, versions, summary
    figures and, while it runs, judgments ``done`` of ``total``. Only runs of an eval (``juge run``)
    unless ``all_kinds`` (``--all``): also those tune, probes, live routing and the live demo made.
    ``eval_name`` keeps the runs of an eval (its name, or its file as given), ``status`` those with that
    status (``running``, ``done``), ``last`` the newest N.
    ``[r.to_dict() for r in list_runs()]`` is what ``juge runs --json`` writes.

    >>> import juge
    >>> [r.id for r in juge.list_runs(db=".juge/juge.db", status="running")]  # doctest: +SKIP
    []
    """
    from juge.store import open_store

    if last is not None and last < 1:
        raise InputError(f"--last {last}: give 1 or more")
    if status is not None and status not in RUN_STATUSES:
        raise InputError(f"--status {status}: a run is {' or '.join(RUN_STATUSES)}")
    with open_store(db, must_exist=True) as store:
        runs = select_runs(store, eval_name=eval_name, status=status, last=last, all_kinds=all_kinds)
        return [run_row(r) for r in runs]


def select_runs(
    store: Store,
    *,
    eval_name: str | None = None,
    status: str | None = None,
    last: int | None = None,
    all_kinds: bool = True,
) -> list[dict[str, Any]]:
    """The stored runs (as the store gives them) that the filters keep, newest first; a running run gets
    ``done`` and ``total`` judgments. Without `all_kinds`, only runs of an eval."""
    from juge.runs.status import run_done_total

    runs = store.list_runs()
    if not all_kinds:
        runs = [r for r in runs if run_kind(r["config"] or {}) == "eval"]
    if eval_name is not None:
        runs = [r for r in runs if eval_name in (r["name"], (r["config"] or {}).get("eval_file"))]
    if status is not None:
        runs = [r for r in runs if r["status"] == status]
    if last is not None:
        runs = runs[:last]
    for r in runs:
        if r["status"] == "running" and not r["summary"]:
            r["done"], r["total"] = run_done_total(store, r)
    return runs


def run_kind(config: dict[str, Any]) -> str:
    """What made a run (its config's ``kind``; runs stored before it was written are known by their keys,
    except a live route's, which reads as an eval's)."""
    if config.get("kind"):
        return str(config["kind"])
    if config.get("tune"):
        return "tune"
    if config.get("tune_holdout"):
        return "tune-holdout"
    if config.get("probe"):
        return "probe"
    return "demo" if config.get("command") == "juge demo --live" else "eval"


def run_row(r: dict[str, Any]) -> RunRow:
    """One stored run as a :class:`RunRow`. A pass rate only for a run of an eval: the cases of a tune
    or a probe are judged by several judges or in parts, and a route's by the policy, not a gate."""
    s = r["summary"] or {}
    config = r["config"] or {}
    system = config.get("system")
    kind = run_kind(config)
    gated = kind == "eval"
    return RunRow(
        run_id=r["id"],
        id=r["id"],
        kind=kind,
        name=r["name"],
        status=r["status"],
        started_at=r["started_at"],
        ended_at=r["ended_at"],
        eval_file=config.get("eval_file"),
        n_cases=s.get("n_cases"),
        pass_rate=s.get("pass_rate") if gated else None,
        cases_passed=s.get("cases_passed") if gated else None,
        done=r.get("done"),
        total=r.get("total"),
        judges=[
            RunRowJudge.model_validate(j) for j in config.get("judges") or [] if isinstance(j, dict) and j.get("name")
        ],
        system=RunRowSystem(model=system["model"], template_hash=system.get("template_hash"))
        if isinstance(system, dict) and system.get("model")
        else None,
        dataset_hash=r["dataset_hash"],
        juge_version=r["juge_version"],
    )


def delete_runs(run_ids: Sequence[str], *, db: str | Path | None = None) -> list[RunRow]:
    """Delete runs (ids or unique prefixes) with everything stored under them (``juge runs rm``); the
    response cache stays. Every id is resolved first: an unknown one, or a run another juge process is
    judging right now, is an InputError and nothing is deleted. Returns the runs deleted."""
    from juge.arguments import refuse_text
    from juge.store import RunNotFound, is_database_url, open_store

    refuse_text("run_ids", run_ids, "list")
    if not run_ids:
        raise InputError("give the id of at least one run to delete")
    with open_store(db, must_exist=True) as store:
        runs: dict[str, dict[str, Any]] = {}
        for given in run_ids:
            try:
                run = store.get_run(given)
            except RunNotFound as exc:
                raise RunNotFound(f"{exc}; nothing was deleted") from None
            runs[run["id"]] = run
        if not is_database_url(store.path):
            for run in runs.values():
                _refuse_if_judged_now(Path(store.path), run)
        for run_id in runs:
            store.delete_run(run_id)
    return [run_row(r) for r in runs.values()]


def _refuse_if_judged_now(db_path: Path, run: dict[str, Any]) -> None:
    """A run being judged holds its eval's file lock beside a SQLite store (a PostgreSQL store has no
    such file and is not checked)."""
    import fcntl

    from juge.runs.execute import run_lock_path

    if run["status"] != "running" or not run.get("eval_hash"):
        return
    lock = run_lock_path(db_path, run["eval_hash"])
    if not lock.exists():
        return
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(handle, fcntl.LOCK_UN)
        except BlockingIOError:
            raise InputError(
                f"run {run['id']} is being judged by another juge process right now; nothing was deleted"
            ) from None
