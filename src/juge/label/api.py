"""Blind human labelling from Python: what each `juge label` command does, returning a typed result.

Re-exported by :mod:`juge.api` and :mod:`juge` (``juge.label_init``, ``juge.label_status``, ...). Every
function opens the label store at ``db_url`` (a SQLAlchemy URL; default: ``JUGE_LABEL_DB_URL``, else the juge
SQLite file ``.juge/juge.db``), names the project with ``project`` (default: the only one), raises
:class:`juge.errors.InputError` on bad input (the CLI's exit 2) and never prints:

>>> import juge
>>> from juge.scaffold import init_project
>>> _ = init_project("support", "passfail")  # starter cases and rubric, as `juge init` writes them
>>> db = "sqlite:///labels.db"
>>> juge.label_init("support", cases="support/cases.jsonl", task="passfail", rubric="support/rubric.toml", db_url=db)
LabelInit(project='support', task='passfail', items=30, overlap_items=6, overlap_raters=2)
>>> link = juge.label_add_rater("ann", project="support", db_url=db)
>>> link.link("http://127.0.0.1:8765")  # send it privately: the token is shown only this once
'http://127.0.0.1:8765/login?token=...'
>>> juge.label_status("support", db_url=db).labels  # .agreement: person vs person, once two labels meet
0
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.data.records import HumanLabel
from juge.errors import InputError
from juge.files import staged_output
from juge.label.results import (
    FinalLabel,
    LabelAttach,
    LabelDisagreement,
    LabelDisagreements,
    LabelExport,
    LabelInit,
    LabelRelease,
    LabelStatus,
    RaterLink,
    RaterRevoked,
)

if TYPE_CHECKING:
    from juge.data.records import Case
    from juge.label.db import LabelStore, Project

DEFAULT_RUN_DB = Path(".juge") / "juge.db"


def open_label_store(db_url: str | None = None) -> LabelStore:
    """The label store at `db_url`; a URL that does not parse or a database that cannot be reached is InputError."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, DBAPIError

    from juge.label.db import LabelStore

    db_url = db_url or os.environ.get("JUGE_LABEL_DB_URL") or None
    try:
        return LabelStore(db_url)
    except ArgumentError as exc:
        raise InputError(
            f"--db-url {db_url!r} is not a database URL ({exc}); expected e.g. "
            "sqlite:///labels.db or postgresql+psycopg://user@host/db"
        ) from None
    except ImportError as exc:
        raise InputError(
            f"--db-url: the database driver is not installed ({exc}); juge ships sqlite and postgresql+psycopg"
        ) from None
    except DBAPIError as exc:
        shown = make_url(db_url).render_as_string(hide_password=True) if db_url else "the default store"
        reason = str(exc.orig or exc).strip().splitlines()[0] if str(exc.orig or exc).strip() else type(exc).__name__
        raise InputError(f"--db-url {shown}: cannot open the label database: {reason}") from None


@contextmanager
def _opened(db_url: str | None) -> Iterator[LabelStore]:
    store = open_label_store(db_url)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def _refused(prefix: str = "") -> Iterator[None]:
    """The store's refusals (LabelError) as InputError: exit 2 on the command line."""
    from juge.label.db import LabelError

    try:
        yield
    except LabelError as exc:
        raise InputError(f"{prefix}{exc}") from None


def _project(store: LabelStore, project: str | None) -> Project:
    with _refused():
        return store.project(project)


# ---- init ----------------------------------------------------------------------------------------


JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")


def _read_label_cases(path: Path, field_map: str | None, notes: list[str], format: str | None = None) -> list[Case]:
    """Cases to label; the MT-Bench sample layout through its adapter (model names and provenance go to meta)."""
    from juge.data.adapters import read_pairwise_items
    from juge.data.readers import as_text_note, file_format, parse_mapping, read_cases, read_rows, row_id_note

    sample_like = file_format(path, format) in ("jsonl", "json") if format else path.suffix.lower() in JSON_SUFFIXES
    rows = read_rows(path, format=format) if sample_like else []
    if rows and "human_ratings" in rows[0][1]:
        if field_map:
            notes.append(f"{path} is in the MT-Bench sample layout, read as such; --map is not used")
        return read_pairwise_items(path, baseline_fields=()).full_cases()
    mapping = parse_mapping(field_map)
    note = row_id_note(path, mapping)
    if note:
        notes.append(note)
    as_text: dict[str, int] = {}
    cases = read_cases(path, mapping=mapping, format=format, as_text=as_text)
    note = as_text_note(path, as_text)
    if note:
        notes.append(note)
    return cases


def label_init(
    name: str,
    *,
    cases: str | Path,
    task: str,
    rubric: str | Path,
    overlap: float = 0.2,
    overlap_raters: int = 2,
    break_after: int = 25,
    seed: int = 0,
    field_map: str | None = None,
    db_url: str | None = None,
    format: str | None = None,
    select: Literal["random", "stratified", "decisive"] | None = None,
    budget: int | None = None,
    run: str | None = None,
    run_db: str | Path | None = None,
    judgments: str | Path | None = None,
    judge: str | None = None,
    pilot_labels: str | Path | None = None,
    policy: str | Path | None = None,
    plan: str | Path | None = None,
    threshold: float | None = None,
) -> LabelInit:
    """Create labelling project `name` from cases (JSONL or CSV) and a rubric TOML or judge file.

    ``overlap`` is the share of items labelled by ``overlap_raters`` raters (for person-vs-person
    agreement); ``field_map`` reads other column names (``"id=item_id,output=answer"``); ``format`` names the
    cases' format when the suffix does not. ``select`` with ``budget``: label only ``budget`` of the cases, drawn
    at random, by category or by what would settle something (:mod:`juge.label.selection`), each one's probability
    recorded in its meta. ``run`` (in the juge store ``run_db``, at ``threshold``): the judge's verdicts on these
    cases, which the stratified allocation measures each category's spread from (with ``pilot_labels``, labels in
    hand on some of the cases, where a category has 10 or more) and a decisive draw reads (order-dependent pairs, scores near the
    threshold); ``judgments``: recorded judge calls instead of a run (of ``judge`` only when given, else of the
    policy's or plan's judge, else every judge's); ``policy``: a policy file whose open categories a decisive draw
    favours; ``plan``: the ``--json`` of ``juge plan``, whose categories not settled now are open.
    """
    from juge.data.readers import case_line, parse_mapping
    from juge.errors import input_error
    from juge.label.db import check_rater_name
    from juge.label.rubric import TASKS, read_rubric

    cases, rubric = Path(cases), Path(rubric)
    if task not in TASKS:
        raise InputError(f"--task: unknown task {task!r} ({', '.join(TASKS)})")
    parsed_rubric = read_rubric(rubric, task)
    notes: list[str] = []
    records = _read_label_cases(cases, field_map, notes, format)
    if not records:
        raise input_error(cases, "no cases to label")
    for i, case in enumerate(records, start=1):
        lacks = "output_1" if task == "pairwise" and not case.is_pair else None
        lacks = "output" if task != "pairwise" and case.output is None else lacks
        if lacks is not None:
            line = case_line(cases, case.id, parse_mapping(field_map))
            what = "output_1/output_2 pair for a pairwise task" if lacks == "output_1" else "output to grade"
            raise input_error(
                cases, f"case {case.id!r}{'' if line else f' (row {i})'} has no {what}", line=line, field=lacks
            )
    if not 0 <= overlap <= 1:
        raise InputError(f"--overlap must be a share between 0 and 1, got {overlap}")
    selection = None
    if (select is None) != (budget is None):
        raise InputError("--select and --budget go together: --select random|stratified|decisive --budget N")
    if select is None and (run or judgments or pilot_labels or policy or plan):
        raise InputError(
            "--run, --judgments, --pilot-labels, --policy and --plan inform --select: give --select "
            "stratified|decisive --budget N"
        )
    # An input the method does not read would be taken and ignored without a word.
    if select == "random" and (run or judgments or pilot_labels or policy or plan):
        raise InputError(
            "--select random gives every case the same chance: --run, --judgments, --pilot-labels, --policy and "
            "--plan inform stratified or decisive"
        )
    if select == "stratified" and (policy or plan):
        raise InputError("--policy and --plan inform --select decisive (the open categories), not stratified")
    if pilot_labels is not None and run is None:
        raise InputError("--pilot-labels: give --run RUN_ID too (the labels are read beside the run's verdicts)")
    if run is not None and judgments is not None:
        raise InputError("--run and --judgments: give one source of the judge's verdicts")
    if judge is not None and judgments is None:
        raise InputError("--judge names a judge of --judgments FILE (a run's verdicts are all its judges')")
    if select is not None and budget is not None:
        records, selection = _select(
            records, select, budget, seed, (run, run_db, judgments, judge), pilot_labels, policy, plan, threshold
        )  # fmt: skip
    with _refused():  # before the store is opened, so a refused name leaves no database file behind
        check_rater_name(name, "project")
    with _opened(db_url) as store, _refused():
        made = store.create_project(
            name,
            task,
            parsed_rubric,
            records,
            overlap=overlap,
            overlap_raters=overlap_raters,
            break_after=break_after,
            seed=seed,
        )
        shared = sum(it["needed"] > 1 for it in store.item_table(made))
    return LabelInit(
        project=made.name,
        task=task,
        items=len(records),
        overlap_items=shared,
        overlap_raters=overlap_raters,
        notes=notes,
        selection=selection,
    )


def _select(
    records: list[Case],
    select: str,
    budget: int,
    seed: int,
    verdicts: tuple[str | None, str | Path | None, str | Path | None, str | None],
    labels: str | Path | None,
    policy: str | Path | None,
    plan: str | Path | None,
    threshold: float | None,
) -> tuple[list[Case], Any]:
    from juge.label.selection import select_cases

    run, run_db, judgments, judge = verdicts
    signals, human, rules = None, None, None
    if run is not None:
        from juge.runs.corrected_run import read_pass_rate
        from juge.runs.judge_signals import judge_signals

        signals = judge_signals(run, db=run_db, threshold=threshold)
        if labels is not None:
            human = read_pass_rate(run, labels, db=run_db, threshold=threshold).human
    if policy is not None:
        from juge.policy.inputs import load_policy

        rules = load_policy(policy)
    planned = None
    if plan is not None:
        from pydantic import ValidationError

        from juge.errors import validation_error
        from juge.files import read_json_object
        from juge.policy.results import PlanResult

        data = read_json_object(plan, "--plan")
        if not isinstance(data.get("decisions"), list):  # another JSON (a run's, a --width plan): say which is asked
            from juge.errors import input_error

            raise input_error(
                plan,
                "--plan: not the --json of a juge plan of a policy study (no decisions); write one with juge plan "
                "--items ... --judgments ... --json FILE (without --width)",
                field="decisions",
            )
        try:
            planned = PlanResult.model_validate(data)
        except ValidationError as exc:
            raise validation_error(str(plan), exc) from None
    if judgments is not None:
        from juge.runs.judge_signals import recorded_signals

        # The judge whose decisions are open, unless named: the policy's (or the plan's) own.
        judge = judge or (rules.judge if rules is not None else None) or (planned.judge if planned else None)
        signals = recorded_signals(judgments, judge=judge, threshold=threshold)
    return select_cases(
        records, method=select, budget=budget, seed=seed, signals=signals, labels=human, policy=rules, plan=planned
    )  # fmt: skip


# ---- raters --------------------------------------------------------------------------------------


def label_add_rater(
    name: str, *, project: str | None = None, adjudicator: bool = False, db_url: str | None = None
) -> RaterLink:
    """Add a rater; returns their login token (stored only as a hash: this is the one chance to send it).
    ``adjudicator``: may review disagreements and record final labels."""
    with _opened(db_url) as store:
        proj = _project(store, project)
        with _refused():
            token = store.add_rater(proj, name, adjudicator=adjudicator)
    return RaterLink(project=proj.name, rater=name, adjudicator=adjudicator, token=token)


def label_rotate_link(name: str, *, project: str | None = None, db_url: str | None = None) -> RaterLink:
    """A new login token for a rater: the old one stops working, every browser they signed in is signed out."""
    with _opened(db_url) as store:
        proj = _project(store, project)
        with _refused():
            token = store.rotate_link(proj, name)
            adjudicator = store.rater(proj, name).adjudicator
    return RaterLink(project=proj.name, rater=name, adjudicator=adjudicator, token=token)


def label_revoke_rater(name: str, *, project: str | None = None, db_url: str | None = None) -> RaterRevoked:
    """Stop a rater from signing in (link and signed-in browsers); their labels stay."""
    with _opened(db_url) as store:
        proj = _project(store, project)
        with _refused():
            store.revoke_rater(proj, name)
    return RaterRevoked(project=proj.name, rater=name)


# ---- progress, release, export ---------------------------------------------------------------------


def label_status(
    project: str | None = None, *, db_url: str | None = None, resamples: int = 2000, seed: int = 0
) -> LabelStatus:
    """Who labelled how much, items done and left, and agreement between raters so far (with 95 %
    bootstrap intervals over items: ``resamples`` resamples, seeded with ``seed``)."""
    from juge.label.review import status

    if resamples < 1:
        raise InputError(f"--resamples must be 1 or more, got {resamples}")
    with _opened(db_url) as store:
        return status(store, _project(store, project), resamples=resamples, seed=seed)


def label_release(
    project: str | None = None,
    *,
    rater: str | None = None,
    idle_hours: float | None = None,
    dry_run: bool = False,
    db_url: str | None = None,
) -> LabelRelease:
    """Give back to the pool the items a rater was handed but never labelled.

    ``rater``: all open items of that rater; ``idle_hours``: items handed out longer ago than that
    (both: the rater's older ones; neither: ``idle_hours=24``). ``dry_run``: only count them.
    """
    if idle_hours is not None and idle_hours < 0:
        raise InputError(f"--idle-hours must be 0 or more, got {idle_hours}")
    with _opened(db_url) as store:
        proj = _project(store, project)
        with _refused("--rater: "):
            who = None if rater is None else store.rater(proj, rater)
        if who is None and idle_hours is None:
            idle_hours = 24.0
        older_than = None if idle_hours is None else idle_hours * 3600
        freed = store.release_assignments(proj, rater=who, older_than=older_than, dry_run=dry_run)
    return LabelRelease(project=proj.name, dry_run=dry_run, rater=rater, idle_hours=idle_hours, freed=freed)


def label_export(
    project: str | None = None,
    *,
    output: str | Path,
    adjudications: str | Path | None = None,
    db_url: str | None = None,
) -> LabelExport:
    """Write one row per rater per item (item_id, rater_id, label, explanation) to `output`, for
    ``juge.calibrate(labels=...)``; with ``adjudications``, the final labels (item_id, label, reason,
    adjudicator) to that file too. Each file is JSONL (``.jsonl``, ``.ndjson``) or CSV (``.csv``) by its
    suffix; any other suffix is refused. Pairwise labels are A, B or tie in the cases' fixed order."""
    formats = {"-o": _table_format(output, "-o")}
    if adjudications is not None:
        formats["--adjudications"] = _table_format(adjudications, "--adjudications")
    with staged_output(output, "-o") as out_tmp, staged_output(adjudications, "--adjudications") as adj_tmp:
        with _opened(db_url) as store:
            proj = _project(store, project)
            rows = store.export_labels(proj)
            finals = store.adjudicated(proj) if adjudications is not None else None
        assert out_tmp is not None
        labels = [r.model_dump() for r in rows]
        out_tmp.write_text(_table_text(labels, formats["-o"], list(HumanLabel.model_fields)), encoding="utf-8")
        if adj_tmp is not None and finals is not None:
            adj_tmp.write_text(_table_text(finals, formats["--adjudications"], FINAL_COLUMNS), encoding="utf-8")
    return LabelExport(
        project=proj.name,
        output=str(output),
        labels=len(rows),
        adjudications_output=None if adjudications is None else str(adjudications),
        adjudications=None if finals is None else len(finals),
    )


_TABLE_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def _table_format(path: str | Path, option: str) -> str:
    """The format `path`'s suffix names (jsonl or csv); any other suffix is an InputError, so a `.csv` never
    holds JSONL and a `.json` or `.xlsx` is not written in a format its name does not say."""
    suffix = Path(path).suffix.lower()
    if suffix not in _TABLE_SUFFIXES:
        raise InputError(
            f"{option} {path}: the suffix says the format; use .jsonl (JSON lines) or .csv, not {suffix or 'none'}"
        )
    return _TABLE_SUFFIXES[suffix]


FINAL_COLUMNS = ["item_id", "label", "reason", "adjudicator"]  # of LabelStore.adjudicated's rows


def _table_text(rows: list[dict[str, Any]], fmt: str, columns: list[str]) -> str:
    """`rows` as JSONL, or as CSV with these `columns` (a header even when there is no row; text a
    spreadsheet would run as a formula made inert)."""
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    import csv
    import io

    from juge.runs.export import spreadsheet_safe

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: spreadsheet_safe(v) for k, v in r.items()} for r in rows)
    return buf.getvalue()


# ---- review --------------------------------------------------------------------------------------


def _examples(ids: list[str], k: int = 3) -> str:
    return ", ".join(repr(i) for i in ids[:k]) + (", ..." if len(ids) > k else "") if ids else "none"


def label_attach_run(
    project: str | None,
    run_id: str,
    *,
    db: str | Path = DEFAULT_RUN_DB,
    allow_changed_outputs: bool = False,
    db_url: str | None = None,
) -> LabelAttach:
    """Copy the judge verdicts of run `run_id` (in the juge store `db`) into the project's review, so
    judge-vs-people disagreements are listed (to adjudicators, on closed items only).

    Refused when no case of the run is an item of the project, and when the run judged other answers
    than people labelled on some items, unless ``allow_changed_outputs`` (those items are left out).
    """
    from juge.label.review import changed_outputs, judge_verdicts, run_output_hashes
    from juge.store import RunNotFound

    db = Path(db)
    with _opened(db_url) as store:
        proj = _project(store, project)
        try:
            verdicts = judge_verdicts(db, run_id, proj.task)
            judged = run_output_hashes(db, run_id)
        except RunNotFound as exc:
            raise RunNotFound(f"{db}: {exc}") from None
        table = store.item_table(proj)
        item_ids = [it["item_id"] for it in table]
        if not set(verdicts) & set(item_ids):
            found = (
                f"its verdicts are on {_examples(sorted(verdicts))}"
                if verdicts
                else f"it has no usable {proj.task} verdict"
            )
            raise InputError(
                f"run {run_id} ({db}): no case id matches an item of project {proj.name} "
                f"({_examples(item_ids)}); {found}. Attach a run over the project's cases."
            )
        changed = changed_outputs({it["item_id"]: it["output_hash"] for it in table}, judged)
        shared = len(set(judged) & set(item_ids))
        if changed and not allow_changed_outputs:
            raise InputError(
                f"run {run_id} ({db}) judged other answers than people labelled on {len(changed)} "
                f"of the {shared} items it shares with project {proj.name} ({_examples(changed)}): "
                "its verdicts there are not about what people saw. Attach a run over the labelled "
                "outputs, or pass --allow-changed-outputs to leave those items out of the comparison."
            )
        n = store.attach_judge_verdicts(proj, run_id, verdicts, leave_out=changed)
    return LabelAttach(
        project=proj.name,
        run_id=run_id,
        db=str(db),
        attached=n,
        judges=sorted({judge for by_judge in verdicts.values() for judge in by_judge}),
        shared_items=shared,
        left_out=changed,
    )


def label_disagreements(
    project: str | None = None,
    *,
    from_list: str | None = None,
    save: str | None = None,
    output: str | Path | None = None,
    db_url: str | None = None,
) -> LabelDisagreements:
    """Closed items where raters, or a judge and the raters, disagree (or the items of saved list
    ``from_list``); ``save`` keeps them as a named list, ``output`` writes their ids one a line
    (for ``juge run --only``)."""
    with staged_output(output or None, "-o") as out_tmp:  # an unwritable -o fails before a list is saved
        with _opened(db_url) as store:
            proj = _project(store, project)
            found: list[LabelDisagreement] = []
            if from_list:
                with _refused():
                    ids = store.list_items(proj, from_list)
            else:
                found = [_disagreement(r) for r in store.disagreements(proj)]
                ids = [d.item_id for d in found]
            if save:
                store.save_list(proj, save, ids)
        if out_tmp is not None:
            out_tmp.write_text("".join(i + "\n" for i in ids), encoding="utf-8")
    return LabelDisagreements(
        project=proj.name,
        from_list=from_list or None,
        item_ids=ids,
        items=found,
        saved_as=save or None,
        output=None if not output else str(output),
    )


def _disagreement(row: dict[str, Any]) -> LabelDisagreement:
    final = row["final"]
    return LabelDisagreement(
        item_id=row["item_id"],
        reasons=row["reasons"],
        labels=row["labels"],
        judges=row["judges"],
        final=None if final is None else FinalLabel(**final),
    )


# ---- serve ---------------------------------------------------------------------------------------


@dataclass
class LabelServer:
    """The labelling app bound to its socket (``juge label serve``): print `url`, then `run()` until Ctrl-C."""

    url: str  # where raters reach it: the login link is url + "/login?token=..."
    host: str
    port: int
    warnings: list[str] = field(default_factory=list)
    _app: Any = None
    _sock: socket.socket | None = None

    def run(self) -> None:
        from juge.webapp import serve

        serve(self._app, self.host, self.port, self._sock)


def label_server(
    host: str = "127.0.0.1", port: int = 8765, *, db_url: str | None = None, trusted_proxy: str | None = None
) -> LabelServer:
    """The labelling app (all projects; each rater sees their own), bound to host:port (0: any free port).
    A port in use is an InputError here, before anything is announced. Failed sign-ins are counted per
    socket peer; `trusted_proxy` (an IP address) names a reverse proxy whose X-Forwarded-For is read instead."""
    from juge.label.app import create_app
    from juge.webapp import is_loopback, listening_socket, shown_host, trusted_proxy_address

    proxy = trusted_proxy_address(trusted_proxy)
    app = create_app(open_label_store(db_url), trusted_proxy=proxy)
    sock = listening_socket(host, port)
    warnings = [] if is_loopback(host) else [f"binding {host}: login tokens travel in cookies; use HTTPS in front."]
    bound = sock.getsockname()[1]
    return LabelServer(shown_host(host, bound), host, bound, warnings, app, sock)
