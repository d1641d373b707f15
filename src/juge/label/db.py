"""Storage for the labelling app: one SQLAlchemy Core schema for SQLite and PostgreSQL.

By default the tables live in the same SQLite file as runs (`.juge/juge.db`, WAL,
busy timeout 30 s, every transaction `BEGIN IMMEDIATE` so two raters never race on
an upgrade from read to write). Pass a `postgresql+psycopg://` URL for a team server.
All tables are prefixed ``label_`` so they never meet `juge.store`'s tables.

Invariants kept by UNIQUE keys rather than by locks, so they hold on both databases
and under any number of concurrent raters:

- one label per rater per item (``label_labels``: UNIQUE(item, rater));
- an item goes to exactly ``needed`` raters (``label_assignments``: UNIQUE(item, slot),
  slot < needed, and UNIQUE(item, rater)).

`release_assignments` gives back unlabelled assignments of raters who stopped coming: the row
stays (so the rater never gets that item again) with ``released_at`` set and its slot moved to
``-id``, which frees the slot for another rater without breaking UNIQUE(item, slot).

Raters are identified by the sha256 of a random token; the raw token is never stored.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import statistics
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, CursorResult, Engine, make_url
from sqlalchemy.exc import IntegrityError

from juge.data.records import Case, HumanLabel
from juge.errors import InputError
from juge.judges.rubric import Rubric
from juge.label.rubric import canonical_label, export_value
from juge.store import DEFAULT_DB
from juge.store.migrations import Migration, latest_version, pending, use_wal

SESSION_IDLE_SECONDS = 30 * 60  # a gap this long starts a new labelling session
LOGIN_SECONDS = 12 * 3600  # a browser's sign-in lasts a working day; then the rater opens their link again
MAX_RATER_NAME = 64
REVOKED = "revoked-"  # a token hash of revoked raters: no sha256 (hex) ever equals it

metadata = MetaData()

projects = Table(
    "label_projects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("task", String(20), nullable=False),
    Column("rubric", Text, nullable=False),  # the judge rubric as JSON
    Column("overlap", Float, nullable=False),
    Column("overlap_raters", Integer, nullable=False),
    Column("break_after", Integer, nullable=False),
    Column("seed", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
)
items = Table(
    "label_items",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("label_projects.id"), nullable=False),
    Column("item_id", String(500), nullable=False),
    Column("position", Integer, nullable=False),  # seeded shuffle: the order items are handed out
    Column("needed", Integer, nullable=False),  # how many raters label it (1, or overlap_raters)
    Column("record", Text, nullable=False),  # the Case as JSON
    Column("output_hash", String(64)),  # Case.output_hash() of the answer(s) raters see, fixed at init
    UniqueConstraint("project_id", "item_id"),
)
raters = Table(
    "label_raters",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("label_projects.id"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("csrf", String(64), nullable=False),
    Column("adjudicator", Boolean, nullable=False, default=False),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("project_id", "name"),
)
sessions = Table(
    "label_sessions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("rater_id", Integer, ForeignKey("label_raters.id"), nullable=False),
    Column("started_at", Float, nullable=False),
    Column("last_at", Float, nullable=False),
    Column("ended_at", Float),
    Column("end_reason", String(20)),  # "break" | "idle"
)
assignments = Table(
    "label_assignments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("item_pk", Integer, ForeignKey("label_items.id"), nullable=False),
    Column("rater_id", Integer, ForeignKey("label_raters.id"), nullable=False),
    Column("slot", Integer, nullable=False),
    Column("swapped", Boolean, nullable=False),  # pairs: answer 2 shown on the left
    Column("assigned_at", Float, nullable=False),
    Column("shown_at", Float),
    Column("shown_session", Integer),
    Column("priority", Integer, nullable=False, default=0),  # raised by undo so the item comes back first
    Column("released_at", Float),  # set by release: the slot went back to the pool, slot = -id
    UniqueConstraint("item_pk", "slot"),
    UniqueConstraint("item_pk", "rater_id"),
)
labels = Table(
    "label_labels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("item_pk", Integer, ForeignKey("label_items.id"), nullable=False),
    Column("rater_id", Integer, ForeignKey("label_raters.id"), nullable=False),
    Column("label", String(100), nullable=False),  # pairs: A/B/tie in the fixed order
    Column("shown_order", String(2), nullable=False, default=""),  # pairs: "12" or "21" as shown
    Column("explanation", Text),
    Column("session_id", Integer, ForeignKey("label_sessions.id")),
    Column("seconds", Float),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("item_pk", "rater_id"),
)
adjudications = Table(
    "label_adjudications",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("item_pk", Integer, ForeignKey("label_items.id"), nullable=False, unique=True),
    Column("rater_id", Integer, ForeignKey("label_raters.id"), nullable=False),
    Column("label", String(100), nullable=False),
    Column("reason", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)
judge_verdicts = Table(
    "label_judge_verdicts",
    metadata,
    Column("item_pk", Integer, ForeignKey("label_items.id"), nullable=False),
    Column("judge", String(200), nullable=False),
    Column("run_id", String(100), nullable=False),
    Column("verdict", String(100), nullable=False),
    UniqueConstraint("item_pk", "judge"),
)
lists = Table(
    "label_lists",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("label_projects.id"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("project_id", "name"),
)
web_logins = Table(  # signed-in browsers: the cookie holds a random session id, stored here as its sha256
    "label_web_logins",
    metadata,
    Column("id_hash", String(64), primary_key=True),
    Column("rater_id", Integer, ForeignKey("label_raters.id"), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
)
list_items = Table(
    "label_list_items",
    metadata,
    Column("list_id", Integer, ForeignKey("label_lists.id"), primary_key=True),
    Column("item_id", String(500), primary_key=True),
)


def default_url() -> str:
    return f"sqlite:///{DEFAULT_DB}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def make_engine(url: str | None = None) -> Engine:
    """An engine for `url` (default: the juge SQLite file) with the schema created."""
    url = url or default_url()
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            from pathlib import Path

            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # let BEGIN below drive transactions
            cur = dbapi_conn.cursor()
            use_wal(cur)  # two label stores opened at once: see juge.store.migrations.use_wal
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)
    try:
        _upgrade(engine, url)
    except BaseException:
        engine.dispose()
        raise
    return engine


# Before schema versions, juge upgraded a label store on every open; migrations 1-2 are those upgrades
# and tolerate a store that already had them (version 0).
def _add_output_hashes(c: Connection) -> None:
    """Items keep `output_hash`, filled from each item's stored case: what raters were shown."""
    if "output_hash" not in {col["name"] for col in inspect(c).get_columns("label_items")}:
        c.exec_driver_sql("ALTER TABLE label_items ADD COLUMN output_hash VARCHAR(64)")
    missing = c.execute(select(items.c.id, items.c.record).where(items.c.output_hash.is_(None))).all()
    for row in missing:
        c.execute(
            update(items)
            .where(items.c.id == row.id)
            .values(output_hash=Case.model_validate_json(row.record).output_hash())
        )


def _add_released_at(c: Connection) -> None:
    """Assignments can be released: an empty `released_at` leaves every existing assignment open."""
    if "released_at" not in {col["name"] for col in inspect(c).get_columns("label_assignments")}:
        c.exec_driver_sql("ALTER TABLE label_assignments ADD COLUMN released_at FLOAT")


def _add_web_logins(c: Connection) -> None:
    """Browsers sign in with server-side session ids (before, the cookie held the raw token)."""
    web_logins.create(c, checkfirst=True)


MIGRATIONS: tuple[Migration[Connection], ...] = (
    Migration(1, "items keep the output hash of what raters saw", _add_output_hashes),
    Migration(2, "assignments can be released", _add_released_at),
    Migration(3, "browsers sign in with server-side sessions", _add_web_logins),
)
SCHEMA_VERSION = latest_version(MIGRATIONS)

version_table = Table("label_schema_version", MetaData(), Column("version", Integer, nullable=False))


def _schema_version(c: Connection) -> int | None:
    """The stored version: None for a database without label tables, 0 for a store made before versions."""
    found = inspect(c)
    if found.has_table(version_table.name):
        return c.execute(select(version_table.c.version)).scalar_one_or_none() or 0
    return 0 if found.has_table(projects.name) else None


def _upgrade(engine: Engine, url: str) -> None:
    """Create the tables of a new store, or run the migrations an older store lacks (see juge.store.migrations)."""
    where = (
        make_url(url).render_as_string(hide_password=True) if not url.startswith("sqlite") else url.split("///", 1)[-1]
    )
    with engine.begin() as c:  # on SQLite, BEGIN IMMEDIATE: a second upgrader waits for this one
        found = _schema_version(c)
        if found == SCHEMA_VERSION:
            return
        pending(MIGRATIONS, found or 0, where, "label store")  # a newer store: refused before any write
        if c.dialect.name == "postgresql":
            c.execute(text("SELECT pg_advisory_xact_lock(hashtext('juge label store schema'))"))
            found = _schema_version(c)  # another process may have upgraded it while we waited
        if found is None:
            metadata.create_all(c)
        else:
            for migration in pending(MIGRATIONS, found, where, "label store"):
                migration.apply(c)
        version_table.create(c, checkfirst=True)
        c.execute(delete(version_table))
        c.execute(insert(version_table).values(version=SCHEMA_VERSION))


class LabelError(InputError, ValueError):
    """A request the store refuses (unknown project, foreign assignment, bad label)."""


def check_rater_name(name: str, what: str = "rater") -> None:
    """1 to MAX_RATER_NAME printable characters, no spaces at either end (names are shown, typed back and
    exported); `what` names the kind of name in the error (rater, project)."""
    if not name or not name.strip():
        raise LabelError(f"a {what} name cannot be empty")
    if len(name) > MAX_RATER_NAME:
        raise LabelError(f"a {what} name is at most {MAX_RATER_NAME} characters (this one has {len(name)})")
    if not name.isprintable() or name != name.strip():
        raise LabelError(
            f"a {what} name must be printable characters without spaces at either end "
            "(no control, invisible or direction characters)"
        )


class ReleasedError(LabelError):
    """A label for an assignment that was released and whose item no longer needs this rater."""


@dataclass(frozen=True)
class Project:
    id: int
    name: str
    task: str
    rubric: Rubric
    overlap: float
    overlap_raters: int
    break_after: int


@dataclass(frozen=True)
class Rater:
    id: int
    project_id: int
    name: str
    csrf: str
    adjudicator: bool


@dataclass(frozen=True)
class Assignment:
    id: int
    item_pk: int
    case: Case
    swapped: bool


def _project(row: Any) -> Project:
    return Project(
        row.id,
        row.name,
        row.task,
        Rubric.model_validate_json(row.rubric),
        row.overlap,
        row.overlap_raters,
        row.break_after,
    )


def _rater(row: Any) -> Rater:
    return Rater(row.id, row.project_id, row.name, row.csrf, bool(row.adjudicator))


def _new_id(result: CursorResult[Any]) -> int:
    """The primary key of the row an INSERT just made."""
    key = result.inserted_primary_key
    if key is None:
        raise RuntimeError("the database returned no key for the inserted row")
    return int(key[0])


def overlap_count(n: int, share: float) -> int:
    """How many of n items go to several raters: round(share * n), at least 1 if share > 0."""
    return 0 if share <= 0 or n == 0 else min(n, max(1, round(share * n)))


class LabelStore:
    """All reads and writes of the labelling app. Thread-safe: each call takes its own connection."""

    def __init__(self, url: str | None = None):
        self.url = url or default_url()
        self.engine = make_engine(self.url)

    def close(self) -> None:
        self.engine.dispose()

    # ---- projects, items, raters ----------------------------------------------------------
    def create_project(
        self,
        name: str,
        task: str,
        rubric: Rubric,
        cases: Sequence[Case],
        *,
        overlap: float = 0.2,
        overlap_raters: int = 2,
        break_after: int = 25,
        seed: int = 0,
    ) -> Project:
        check_rater_name(name, "project")
        if not 0 <= overlap <= 1:
            raise LabelError(f"overlap must be a share between 0 and 1, got {overlap}")
        if overlap_raters < 2:
            raise LabelError("overlap raters must be 2 or more")
        rng = random.Random(seed)
        order = list(range(len(cases)))
        rng.shuffle(order)
        shared = set(rng.sample(range(len(cases)), overlap_count(len(cases), overlap)))
        with self.engine.begin() as c:
            if c.execute(select(projects.c.id).where(projects.c.name == name)).first():
                raise LabelError(f"a labelling project named {name!r} already exists")
            pid = _new_id(
                c.execute(
                    insert(projects).values(
                        name=name,
                        task=task,
                        rubric=rubric.model_dump_json(),
                        overlap=overlap,
                        overlap_raters=overlap_raters,
                        break_after=break_after,
                        seed=seed,
                        created_at=time.time(),
                    )
                )
            )
            c.execute(
                insert(items),
                [
                    {
                        "project_id": pid,
                        "item_id": case.id,
                        "position": order[i],
                        "needed": overlap_raters if i in shared else 1,
                        "record": case.model_dump_json(),
                        "output_hash": case.output_hash(),
                    }
                    for i, case in enumerate(cases)
                ],
            )
        return self.project(name)

    def add_items(self, project: Project, cases: Sequence[Case], *, seed: int = 0) -> list[str]:
        """Append cases to a project (e.g. a new week's audit), after the items it has; ids it has already are
        skipped (their labels stand). The share of items shared by several raters follows the project's overlap.
        Returns the ids added."""
        rng = random.Random(seed)
        with self.engine.begin() as c:
            present = set(c.execute(select(items.c.item_id).where(items.c.project_id == project.id)).scalars())
            new = [case for case in dict((case.id, case) for case in cases).values() if case.id not in present]
            if not new:
                return []
            last = c.execute(select(func.max(items.c.position)).where(items.c.project_id == project.id)).scalar()
            start = -1 if last is None else int(last)
            order = list(range(len(new)))
            rng.shuffle(order)
            shared = set(rng.sample(range(len(new)), overlap_count(len(new), project.overlap)))
            c.execute(
                insert(items),
                [
                    {
                        "project_id": project.id,
                        "item_id": case.id,
                        "position": start + 1 + order[i],
                        "needed": project.overlap_raters if i in shared else 1,
                        "record": case.model_dump_json(),
                        "output_hash": case.output_hash(),
                    }
                    for i, case in enumerate(new)
                ],
            )
        return [case.id for case in new]

    def project_names(self) -> list[str]:
        """The names of the projects in the store."""
        with self.engine.connect() as c:
            return sorted(c.execute(select(projects.c.name)).scalars())

    def project(self, name: str | None = None) -> Project:
        """The project called `name`; with no name, the only project (an error if there are several)."""
        with self.engine.connect() as c:
            if name is None:
                rows = c.execute(select(projects)).all()
                if len(rows) != 1:
                    names = ", ".join(r.name for r in rows) or "none"
                    raise LabelError(f"name the labelling project (projects: {names})")
                return _project(rows[0])
            row = c.execute(select(projects).where(projects.c.name == name)).first()
        if row is None:
            raise LabelError(f"no labelling project named {name!r} in {self.url}")
        return _project(row)

    def project_by_id(self, project_id: int) -> Project:
        with self.engine.connect() as c:
            return _project(c.execute(select(projects).where(projects.c.id == project_id)).one())

    def add_rater(self, project: Project, name: str, *, adjudicator: bool = False) -> str:
        """Create a rater and return their login token (shown once, stored only as a hash)."""
        check_rater_name(name)
        token = secrets.token_urlsafe(24)
        try:
            with self.engine.begin() as c:
                c.execute(
                    insert(raters).values(
                        project_id=project.id,
                        name=name,
                        token_hash=hash_token(token),
                        csrf=secrets.token_urlsafe(24),
                        adjudicator=adjudicator,
                        created_at=time.time(),
                    )
                )
        except IntegrityError:
            raise LabelError(f"rater {name!r} already exists in project {project.name!r}") from None
        return token

    def rater(self, project: Project, name: str) -> Rater:
        with self.engine.connect() as c:
            row = c.execute(select(raters).where(raters.c.project_id == project.id, raters.c.name == name)).first()
        if row is None:
            raise LabelError(f"no rater {name!r} in project {project.name!r}")
        return _rater(row)

    def rotate_link(self, project: Project, name: str) -> str:
        """A new login token for rater `name` (the old link stops working, every browser is signed out)."""
        token = secrets.token_urlsafe(24)
        self._replace_token(project, name, hash_token(token))
        return token

    def revoke_rater(self, project: Project, name: str) -> None:
        """Rater `name` can no longer sign in (link and browsers); their labels stay."""
        self._replace_token(project, name, REVOKED + secrets.token_hex(28))

    def _replace_token(self, project: Project, name: str, token_hash: str) -> None:
        rater = self.rater(project, name)
        with self.engine.begin() as c:
            # A new CSRF token too: a page (or a copy of its form) from before no longer posts.
            c.execute(
                update(raters)
                .where(raters.c.id == rater.id)
                .values(token_hash=token_hash, csrf=secrets.token_urlsafe(24))
            )
            c.execute(delete(web_logins).where(web_logins.c.rater_id == rater.id))

    def is_revoked(self, rater: Rater) -> bool:
        with self.engine.connect() as c:
            token_hash = c.execute(select(raters.c.token_hash).where(raters.c.id == rater.id)).scalar_one()
        return token_hash.startswith(REVOKED)

    def open_login(self, rater: Rater, now: float | None = None) -> str:
        """Sign a browser in: a new random session id for its cookie (the token never goes into one)."""
        now = time.time() if now is None else now
        session = secrets.token_urlsafe(32)
        with self.engine.begin() as c:
            c.execute(delete(web_logins).where(web_logins.c.expires_at < now))
            c.execute(
                insert(web_logins).values(
                    id_hash=hash_token(session), rater_id=rater.id, created_at=now, expires_at=now + LOGIN_SECONDS
                )
            )
        return session

    def rater_by_login(self, session: str | None, now: float | None = None) -> Rater | None:
        """The rater a browser's session id signs in, while it has not expired or been closed."""
        if not session:
            return None
        now = time.time() if now is None else now
        with self.engine.connect() as c:
            row = c.execute(
                select(raters)
                .join(web_logins, web_logins.c.rater_id == raters.c.id)
                .where(web_logins.c.id_hash == hash_token(session), web_logins.c.expires_at > now)
            ).first()
        return _rater(row) if row else None

    def close_login(self, session: str) -> None:
        """Sign a browser out; the rater's CSRF token is replaced, so a form from before no longer posts."""
        with self.engine.begin() as c:
            rater_id = c.execute(
                select(web_logins.c.rater_id).where(web_logins.c.id_hash == hash_token(session))
            ).scalar_one_or_none()
            if rater_id is not None:
                c.execute(update(raters).where(raters.c.id == rater_id).values(csrf=secrets.token_urlsafe(24)))
            c.execute(delete(web_logins).where(web_logins.c.id_hash == hash_token(session)))

    def rater_by_token(self, token: str | None) -> Rater | None:
        if not token:
            return None
        with self.engine.connect() as c:
            row = c.execute(select(raters).where(raters.c.token_hash == hash_token(token))).first()
        return _rater(row) if row else None

    # ---- handing out items ------------------------------------------------------------------
    def _open_assignment(self, c: Any, rater: Rater) -> Any:
        labelled = (
            select(labels.c.id)
            .where(labels.c.item_pk == assignments.c.item_pk, labels.c.rater_id == assignments.c.rater_id)
            .exists()
        )
        return c.execute(
            select(assignments.c.id, assignments.c.item_pk, assignments.c.swapped, items.c.record)
            .join(items, items.c.id == assignments.c.item_pk)
            .where(assignments.c.rater_id == rater.id, assignments.c.released_at.is_(None), ~labelled)
            .order_by(assignments.c.priority.desc(), assignments.c.id)
            .limit(1)
        ).first()

    @staticmethod
    def _free_items_query(rater: Rater) -> Any:
        taken = (
            select(func.count())
            .where(assignments.c.item_pk == items.c.id, assignments.c.released_at.is_(None))
            .scalar_subquery()
        )
        mine = select(assignments.c.item_pk).where(assignments.c.rater_id == rater.id)
        return select(items.c.id, items.c.needed).where(
            items.c.project_id == rater.project_id, items.c.id.not_in(mine), taken < items.c.needed
        )

    def next_assignment(self, rater: Rater) -> Assignment | None:
        """The item this rater should label now: an open one, else a newly assigned free slot.

        On PostgreSQL the candidate item row is locked (FOR UPDATE SKIP LOCKED, the job-queue
        pattern) so concurrent raters spread over different items instead of colliding; its
        slot count is then re-read under the lock. SQLite serialises writers with BEGIN IMMEDIATE.
        """
        for _attempt in range(50):
            with self.engine.begin() as c:
                row = self._open_assignment(c, rater)
                if row is None:
                    free = c.execute(
                        self._free_items_query(rater)
                        .order_by(items.c.position)
                        .limit(1)
                        .with_for_update(skip_locked=True, of=items)
                    ).first()
                    if free is None:
                        if self._free_items_exist(c, rater):
                            continue  # all free items are being assigned to others right now
                        return None
                    slot = _free_slot(c, free.id, free.needed)
                    if slot is None:
                        continue  # filled between the query and the lock
                    try:
                        with c.begin_nested():
                            c.execute(
                                insert(assignments).values(
                                    item_pk=free.id,
                                    rater_id=rater.id,
                                    slot=slot,
                                    swapped=secrets.randbelow(2) == 1,
                                    assigned_at=time.time(),
                                    priority=0,
                                )
                            )
                    except IntegrityError:
                        continue  # the slot went to another rater at the same moment; look again
                    row = self._open_assignment(c, rater)
            return Assignment(row.id, row.item_pk, Case.model_validate_json(row.record), bool(row.swapped))
        raise LabelError("could not assign an item after 50 attempts; try again")

    def _free_items_exist(self, c: Any, rater: Rater) -> bool:
        return c.execute(self._free_items_query(rater).limit(1)).first() is not None

    def assignment_swapped(self, rater: Rater, assignment_id: int) -> bool | None:
        """Whether the pair was shown swapped in this rater's assignment; None if it is not theirs."""
        with self.engine.connect() as c:
            row = c.execute(
                select(assignments.c.swapped).where(
                    assignments.c.id == assignment_id, assignments.c.rater_id == rater.id
                )
            ).first()
        return None if row is None else bool(row.swapped)

    def mark_shown(self, assignment_id: int, session_id: int) -> None:
        """Start the clock for an item, once per session (a reload does not restart it)."""
        with self.engine.begin() as c:
            c.execute(
                update(assignments)
                .where(
                    assignments.c.id == assignment_id,
                    (assignments.c.shown_session.is_(None)) | (assignments.c.shown_session != session_id),
                )
                .values(shown_at=time.time(), shown_session=session_id)
            )

    def progress(self, rater: Rater) -> tuple[int, int]:
        """(labelled by this rater, still available to this rater)."""
        with self.engine.connect() as c:
            done = c.execute(select(func.count()).select_from(labels).where(labels.c.rater_id == rater.id)).scalar_one()
            free = c.execute(select(func.count()).select_from(self._free_items_query(rater).subquery())).scalar_one()
            opened = c.execute(
                select(func.count())
                .select_from(assignments)
                .where(assignments.c.rater_id == rater.id, assignments.c.released_at.is_(None))
            ).scalar_one()
        return done, free + (opened - done)

    # ---- sessions ---------------------------------------------------------------------------
    def current_session(self, rater: Rater, now: float | None = None) -> int:
        """The rater's open session, touched; a new one after a break or an idle gap."""
        now = time.time() if now is None else now
        with self.engine.begin() as c:
            row = c.execute(
                select(sessions)
                .where(sessions.c.rater_id == rater.id, sessions.c.ended_at.is_(None))
                .order_by(sessions.c.id.desc())
                .limit(1)
            ).first()
            if row is not None and now - row.last_at < SESSION_IDLE_SECONDS:
                c.execute(update(sessions).where(sessions.c.id == row.id).values(last_at=now))
                return row.id
            if row is not None:
                c.execute(
                    update(sessions).where(sessions.c.id == row.id).values(ended_at=row.last_at, end_reason="idle")
                )
            return _new_id(c.execute(insert(sessions).values(rater_id=rater.id, started_at=now, last_at=now)))

    def end_session(self, rater: Rater, reason: str = "break") -> None:
        with self.engine.begin() as c:
            c.execute(
                update(sessions)
                .where(sessions.c.rater_id == rater.id, sessions.c.ended_at.is_(None))
                .values(ended_at=time.time(), end_reason=reason)
            )

    def labels_in_session(self, session_id: int) -> int:
        with self.engine.connect() as c:
            return c.execute(
                select(func.count()).select_from(labels).where(labels.c.session_id == session_id)
            ).scalar_one()

    # ---- labels -----------------------------------------------------------------------------
    def save_label(
        self,
        rater: Rater,
        assignment_id: int,
        label: str,
        *,
        shown_order: str = "",
        explanation: str | None = None,
        session_id: int | None = None,
    ) -> bool:
        """Store the rater's label for an assigned item; False if it was already stored (a double submit).

        A released assignment (the rater left a page open past `release_assignments`) takes its
        label only if the item still has a free slot: the assignment is then reclaimed into the
        lowest free slot. Otherwise ReleasedError, and nothing is stored, so an item never gets
        more than `needed` labels. The assignment row is locked (FOR UPDATE on PostgreSQL) so a
        release running at the same moment either sees this label or is seen by it.
        """
        now = time.time()
        with self.engine.begin() as c:
            a = c.execute(select(assignments).where(assignments.c.id == assignment_id).with_for_update()).first()
            if a is None or a.rater_id != rater.id:
                raise LabelError("this item is not assigned to you")
            if a.released_at is not None and not self._reclaim(c, a):
                raise ReleasedError(
                    "this item was handed to another rater while you were away and needs no "
                    "label from you any more; your label for it was not stored"
                )
            seconds = now - a.shown_at if a.shown_at is not None and a.shown_session == session_id else None
            try:
                with c.begin_nested():
                    c.execute(
                        insert(labels).values(
                            item_pk=a.item_pk,
                            rater_id=rater.id,
                            label=label,
                            shown_order=shown_order,
                            explanation=explanation or None,
                            session_id=session_id,
                            seconds=seconds,
                            created_at=now,
                        )
                    )
            except IntegrityError:
                return False
        return True

    @staticmethod
    def _reclaim(c: Any, a: Any) -> bool:
        """Give a released assignment back to its rater if its item still has a free slot."""
        needed = c.execute(select(items.c.needed).where(items.c.id == a.item_pk).with_for_update()).scalar_one()
        slot = _free_slot(c, a.item_pk, needed)
        if slot is None:
            return False
        try:
            with c.begin_nested():
                c.execute(update(assignments).where(assignments.c.id == a.id).values(slot=slot, released_at=None))
        except IntegrityError:
            return False  # another rater took that slot at the same moment
        return True

    def release_assignments(
        self,
        project: Project,
        *,
        rater: Rater | None = None,
        older_than: float | None = None,
        now: float | None = None,
        dry_run: bool = False,
    ) -> dict[str, int]:
        """Give back open (unlabelled, unreleased) assignments so other raters get their items.

        Chooses the assignments of `rater` (all of them), those handed out more than
        `older_than` seconds before `now`, or both conditions together. A labelled assignment
        is never chosen. Returns {rater name: items freed} (what would be freed, if dry_run).
        The chosen rows are locked first, then released by a second statement that re-checks
        "no label", so a label saved meanwhile keeps its assignment (on both databases).
        """
        now = time.time() if now is None else now
        labelled = (
            select(labels.c.id)
            .where(labels.c.item_pk == assignments.c.item_pk, labels.c.rater_id == assignments.c.rater_id)
            .exists()
        )
        conditions = [items.c.project_id == project.id, assignments.c.released_at.is_(None), ~labelled]
        if rater is not None:
            conditions.append(assignments.c.rater_id == rater.id)
        if older_than is not None:
            conditions.append(assignments.c.assigned_at < now - older_than)
        with self.engine.begin() as c:
            chosen = c.execute(
                select(assignments.c.id, raters.c.name)
                .join(items, items.c.id == assignments.c.item_pk)
                .join(raters, raters.c.id == assignments.c.rater_id)
                .where(*conditions)
                .order_by(assignments.c.id)
                .with_for_update(of=assignments)
            ).all()
            freed: dict[str, int] = defaultdict(int)
            if dry_run:
                for row in chosen:
                    freed[row.name] += 1
                return dict(sorted(freed.items()))
            names = {row.id: row.name for row in chosen}
            for row in chosen:
                done = c.execute(
                    update(assignments)
                    .where(assignments.c.id == row.id, assignments.c.released_at.is_(None), ~labelled)
                    .values(released_at=now, slot=-row.id, shown_at=None, shown_session=None)
                ).rowcount
                if done == 1:
                    freed[names[row.id]] += 1
        return dict(sorted(freed.items()))

    def last_label_id(self, rater: Rater) -> int | None:
        """The id of the rater's most recent label (what the Undo button on their page undoes)."""
        with self.engine.connect() as c:
            return c.execute(select(func.max(labels.c.id)).where(labels.c.rater_id == rater.id)).scalar_one()

    def undo_label(self, rater: Rater, label_id: int) -> str | None:
        """Delete label `label_id` if it is the rater's own most recent one; bring its item back first.

        Returns the item id, or None when nothing changed: the label is not this rater's latest (already
        gone after a double click or a second tab, labelled since, another rater's, or no such label).
        The answer depends on the rater's own labels only, never on other raters' labels or a judge's
        verdicts: undo is no oracle for "did the others agree?" (docs/security.md). So an item whose
        labels are all in and disagree can be undone too; it reopens, leaves the review until the
        rater labels it again, and keeps any final label an adjudicator gave it. The delete re-checks
        owner and "still last" in its WHERE clause and counts deleted rows, so two racing undos delete
        at most one label on either database.
        """
        with self.engine.begin() as c:
            row = c.execute(
                select(labels.c.id, labels.c.item_pk, items.c.item_id)
                .join(items, items.c.id == labels.c.item_pk)
                .where(labels.c.rater_id == rater.id)
                .order_by(labels.c.id.desc())
                .limit(1)
            ).first()
            if row is None or row.id != label_id:
                return None
            later = labels.alias("later")  # an alias, so the subquery is not correlated to the deleted row
            newer = select(later.c.id).where(later.c.rater_id == rater.id, later.c.id > label_id).exists()
            deleted = c.execute(
                delete(labels).where(labels.c.id == label_id, labels.c.rater_id == rater.id, ~newer)
            ).rowcount
            if deleted != 1:
                return None
            top = (
                c.execute(
                    select(func.max(assignments.c.priority)).where(assignments.c.rater_id == rater.id)
                ).scalar_one()
                or 0
            )
            c.execute(
                update(assignments)
                .where(assignments.c.item_pk == row.item_pk, assignments.c.rater_id == rater.id)
                .values(priority=top + 1, shown_at=None, shown_session=None)
            )
        return row.item_id

    def label_rows(self, project: Project) -> list[dict[str, Any]]:
        """Every label with its item and rater, in item order then rater name; labels in canonical form."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(
                    items.c.item_id,
                    items.c.position,
                    items.c.output_hash,
                    raters.c.name.label("rater"),
                    labels.c.label,
                    labels.c.explanation,
                    labels.c.shown_order,
                    labels.c.seconds,
                    labels.c.session_id,
                    labels.c.created_at,
                )
                .join(items, items.c.id == labels.c.item_pk)
                .join(raters, raters.c.id == labels.c.rater_id)
                .where(items.c.project_id == project.id)
                .order_by(items.c.position, raters.c.name)
            ).all()
        return [r._asdict() | {"label": canonical_label(project.task, r.label)} for r in rows]

    def attached_projects(self, run_id: str) -> list[Project]:
        """The projects a run's verdicts were attached to (``juge label attach-run``), by name."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(projects)
                .where(
                    projects.c.id.in_(
                        select(items.c.project_id)
                        .join(judge_verdicts, judge_verdicts.c.item_pk == items.c.id)
                        .where(judge_verdicts.c.run_id == run_id)
                    )
                )
                .order_by(projects.c.name)
            ).all()
        return [_project(r) for r in rows]

    def export_labels(self, project: Project) -> list[HumanLabel]:
        """One HumanLabel per rater per item; pairs as A/B/tie in the fixed order of the case.

        `output_hash` is the hash of the answer(s) the rater saw, so `juge calibrate` can tell a
        label on this answer from a label on an answer the system has since changed.
        """
        drawn = self.item_selections(project)
        return [
            HumanLabel(
                item_id=r["item_id"],
                rater_id=r["rater"],
                label=export_value(project.task, r["label"]),
                explanation=r["explanation"],
                output_hash=r["output_hash"],
                **drawn.get(r["item_id"], {}),
            )
            for r in self.label_rows(project)
        ]

    def item_selections(self, project: Project) -> dict[str, dict[str, Any]]:
        """Per item drawn by ``label init --select``: its ``selection`` (the method) and ``selection_probability``
        (its chance of being drawn), from the case's ``meta.juge_selection``."""
        with self.engine.connect() as c:
            rows = c.execute(select(items.c.item_id, items.c.record).where(items.c.project_id == project.id)).all()
        out: dict[str, dict[str, Any]] = {}
        for r in rows:
            drawn = Case.model_validate_json(r.record).meta.get("juge_selection")
            if isinstance(drawn, dict) and isinstance(drawn.get("probability"), int | float):
                out[r.item_id] = {"selection": drawn.get("method"), "selection_probability": drawn["probability"]}
        return out

    # ---- status and review ------------------------------------------------------------------
    def item_table(self, project: Project) -> list[dict[str, Any]]:
        """Per item: id, needed raters, output hash, labels by rater name, closed (all needed labels in)."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(items.c.id, items.c.item_id, items.c.needed, items.c.record, items.c.output_hash)
                .where(items.c.project_id == project.id)
                .order_by(items.c.position)
            ).all()
        by_item: dict[str, dict[str, Any]] = {}
        for r in rows:
            by_item[r.item_id] = {
                "pk": r.id,
                "item_id": r.item_id,
                "needed": r.needed,
                "record": r.record,
                "output_hash": r.output_hash,
                "labels": {},
                "explanations": {},
            }
        for lab in self.label_rows(project):
            by_item[lab["item_id"]]["labels"][lab["rater"]] = lab["label"]
            by_item[lab["item_id"]]["explanations"][lab["rater"]] = lab["explanation"]
        for it in by_item.values():
            it["closed"] = len(it["labels"]) >= it["needed"]
        return list(by_item.values())

    def rater_counts(self, project: Project) -> list[dict[str, Any]]:
        with self.engine.connect() as c:
            rows = c.execute(
                select(
                    raters.c.name,
                    raters.c.adjudicator,
                    func.count(labels.c.id).label("labels"),
                    func.sum(labels.c.seconds).label("seconds"),
                )
                .select_from(raters.outerjoin(labels, labels.c.rater_id == raters.c.id))
                .where(raters.c.project_id == project.id)
                .group_by(raters.c.id, raters.c.name, raters.c.adjudicator)
                .order_by(raters.c.name)
            ).all()
            n_sessions: dict[str, int] = dict(
                c.execute(
                    select(raters.c.name, func.count(sessions.c.id))
                    .join(sessions, sessions.c.rater_id == raters.c.id)
                    .where(raters.c.project_id == project.id)
                    .group_by(raters.c.name)
                ).all()
            )
            # Each timed label's seconds (SQL has no portable median): the status flags a too-fast median.
            timed: dict[str, list[float]] = defaultdict(list)
            for name, seconds in c.execute(
                select(raters.c.name, labels.c.seconds)
                .join(labels, labels.c.rater_id == raters.c.id)
                .where(raters.c.project_id == project.id, labels.c.seconds.is_not(None))
            ).all():
                timed[name].append(float(seconds))
        return [
            {
                "rater": r.name,
                "adjudicator": bool(r.adjudicator),
                "labels": r.labels,
                "seconds": r.seconds,
                "sessions": n_sessions.get(r.name, 0),
                "timed_labels": len(timed.get(r.name, ())),
                "median_seconds": statistics.median(timed[r.name]) if timed.get(r.name) else None,
            }
            for r in rows
        ]

    def attach_judge_verdicts(
        self, project: Project, run_id: str, verdicts: dict[str, dict[str, str]], leave_out: Iterable[str] = ()
    ) -> int:
        """Store judge verdicts {item_id: {judge: verdict}} (fixed order for pairs) for the review view.

        Items in `leave_out` (judged on other answers than people labelled) get no verdict from
        these judges: one stored earlier by the same judge is removed too.
        """
        leave_out = set(leave_out)
        with self.engine.begin() as c:
            pks = dict(c.execute(select(items.c.item_id, items.c.id).where(items.c.project_id == project.id)).all())
            rows = [
                {"item_pk": pks[item], "judge": judge, "run_id": run_id, "verdict": str(v)}
                for item, by_judge in verdicts.items()
                if item in pks and item not in leave_out
                for judge, v in by_judge.items()
            ]
            judges = {judge for by_judge in verdicts.values() for judge in by_judge}
            if leave_out and judges:
                c.execute(
                    delete(judge_verdicts).where(
                        judge_verdicts.c.item_pk.in_([pks[i] for i in leave_out if i in pks]),
                        judge_verdicts.c.judge.in_(judges),
                    )
                )
            if rows:
                c.execute(
                    delete(judge_verdicts).where(
                        judge_verdicts.c.item_pk.in_([r["item_pk"] for r in rows]),
                        judge_verdicts.c.judge.in_({r["judge"] for r in rows}),
                    )
                )
                c.execute(insert(judge_verdicts), rows)
        return len(rows)

    def disagreements(self, project: Project, *, reviewer: Rater | None = None) -> list[dict[str, Any]]:
        """Closed items where raters disagree, or where a judge's verdict differs from the people's label.

        Only closed items (all needed labels in) are listed, so nothing here can leak into a
        rater's view of an item still being labelled. Each row carries `reasons`. With a `reviewer`,
        the items that reviewer labelled are left out: an adjudicator who also labels never sees the
        other raters' labels on their own items (another adjudicator reviews those).
        """
        table = [it for it in self.item_table(project) if it["closed"]]
        if reviewer is not None:
            table = [it for it in table if reviewer.name not in it["labels"]]
        pks = [it["pk"] for it in table]
        with self.engine.connect() as c:
            judged: dict[int, dict[str, str]] = defaultdict(dict)
            for r in c.execute(select(judge_verdicts).where(judge_verdicts.c.item_pk.in_(pks))).all():
                judged[r.item_pk][r.judge] = canonical_label(project.task, r.verdict)
            final = {
                r.item_pk: r
                for r in c.execute(
                    select(
                        adjudications.c.item_pk,
                        adjudications.c.label,
                        adjudications.c.reason,
                        raters.c.name.label("adjudicator"),
                    )
                    .join(raters, raters.c.id == adjudications.c.rater_id)
                    .where(adjudications.c.item_pk.in_(pks))
                ).all()
            }
        out = []
        for it in table:
            people = set(it["labels"].values())
            reasons = ["raters disagree"] if len(people) > 1 else []
            if len(people) == 1:
                reasons += [f"judge {j} says {v}" for j, v in sorted(judged[it["pk"]].items()) if v not in people]
            if reasons:
                adj = final.get(it["pk"])
                out.append(
                    {
                        **it,
                        "reasons": reasons,
                        "judges": dict(judged[it["pk"]]),
                        "final": None
                        if adj is None
                        else {
                            "label": canonical_label(project.task, adj.label),
                            "reason": adj.reason,
                            "adjudicator": adj.adjudicator,
                        },
                    }
                )
        return out

    def adjudicate(self, rater: Rater, item: str | int, label: str, reason: str) -> None:
        """Record the final label of `item`: its item id, or its handle on the review page (the row number,
        an int). Only items in this adjudicator's review list; any other gets the same refusal."""
        if not rater.adjudicator:
            raise LabelError("only an adjudicator can record a final label")
        if not reason.strip():
            raise LabelError("a final label needs a reason")
        rows = self.disagreements(self.project_by_id(rater.project_id), reviewer=rater)
        listed = {it["pk" if isinstance(item, int) else "item_id"]: it["pk"] for it in rows}
        if item not in listed:
            raise LabelError(
                "that item is not in your review list (only closed items whose labels disagree, "
                "and none you labelled yourself, can get a final label)"
            )
        with self.engine.begin() as c:
            pk = listed[item]
            c.execute(delete(adjudications).where(adjudications.c.item_pk == pk))
            c.execute(
                insert(adjudications).values(
                    item_pk=pk, rater_id=rater.id, label=label, reason=reason.strip(), created_at=time.time()
                )
            )

    def adjudicated(self, project: Project) -> list[dict[str, Any]]:
        """Final labels recorded by adjudicators: item_id, label (export form), reason, adjudicator."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(
                    items.c.item_id, adjudications.c.label, adjudications.c.reason, raters.c.name.label("adjudicator")
                )
                .join(items, items.c.id == adjudications.c.item_pk)
                .join(raters, raters.c.id == adjudications.c.rater_id)
                .where(items.c.project_id == project.id)
                .order_by(items.c.position)
            ).all()
        return [{**r._asdict(), "label": export_value(project.task, r.label)} for r in rows]

    def save_list(self, project: Project, name: str, item_ids: Iterable[str]) -> int:
        """Keep a named list of item ids (replacing a list of the same name); returns its size."""
        ids = sorted(set(item_ids))
        with self.engine.begin() as c:
            old = c.execute(select(lists.c.id).where(lists.c.project_id == project.id, lists.c.name == name)).first()
            if old is not None:
                c.execute(delete(list_items).where(list_items.c.list_id == old.id))
                c.execute(delete(lists).where(lists.c.id == old.id))
            lid = _new_id(c.execute(insert(lists).values(project_id=project.id, name=name, created_at=time.time())))
            if ids:
                c.execute(insert(list_items), [{"list_id": lid, "item_id": i} for i in ids])
        return len(ids)

    def list_names(self, project: Project) -> list[str]:
        with self.engine.connect() as c:
            return list(
                c.execute(select(lists.c.name).where(lists.c.project_id == project.id).order_by(lists.c.name)).scalars()
            )

    def list_items(self, project: Project, name: str) -> list[str]:
        with self.engine.connect() as c:
            lid = c.execute(
                select(lists.c.id).where(lists.c.project_id == project.id, lists.c.name == name)
            ).scalar_one_or_none()
            if lid is None:
                raise LabelError(f"no list {name!r} in project {project.name!r}")
            return list(
                c.execute(
                    select(list_items.c.item_id).where(list_items.c.list_id == lid).order_by(list_items.c.item_id)
                ).scalars()
            )


def _free_slot(c: Any, item_pk: int, needed: int) -> int | None:
    """The lowest slot of the item (0 .. needed-1) that no active assignment holds, or None."""
    used = set(
        c.execute(
            select(assignments.c.slot).where(assignments.c.item_pk == item_pk, assignments.c.released_at.is_(None))
        ).scalars()
    )
    return next((s for s in range(needed) if s not in used), None)


def label_columns_by_rater_pair(table: Iterable[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Every pair of raters on every item, as two aligned label lists (raters sorted by name).

    An item with k labels contributes k*(k-1)/2 pairs; this is the pooled person-vs-person
    comparison that `agreement` and Cohen's kappa are computed on.
    """
    first: list[str] = []
    second: list[str] = []
    for it in table:
        names = sorted(it["labels"])
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                first.append(it["labels"][a])
                second.append(it["labels"][b])
    return first, second
