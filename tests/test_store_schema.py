"""Run store schema: a store written by an earlier juge upgrades in place and keeps its data; one written
by a newer juge is refused with exit 2 before anything is written."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from juge.errors import InputError
from juge.schema import use_wal
from juge.store import MIGRATIONS, SCHEMA_VERSION, Store

# The layout of the first juge store, before any column was added, with one row in each table the
# upgrade touches (what `Store` of that juge wrote: JSON text columns, ISO timestamps).
FIRST_LAYOUT = """
CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT, status TEXT NOT NULL DEFAULT 'running',
    started_at TEXT NOT NULL, ended_at TEXT, juge_version TEXT NOT NULL, dataset_hash TEXT NOT NULL,
    eval_hash TEXT, config TEXT NOT NULL DEFAULT '{}', summary TEXT);
CREATE TABLE run_cases (run_id TEXT NOT NULL REFERENCES runs(id), position INTEGER NOT NULL,
    item_id TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (run_id, item_id));
CREATE TABLE outputs (run_id TEXT NOT NULL REFERENCES runs(id), item_id TEXT NOT NULL,
    slot TEXT NOT NULL DEFAULT 'output', text TEXT, model TEXT, outcome TEXT NOT NULL,
    PRIMARY KEY (run_id, item_id, slot));
CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, cache_key TEXT NOT NULL,
    provider TEXT NOT NULL, model TEXT NOT NULL, attempt INTEGER NOT NULL, request TEXT NOT NULL,
    response TEXT, error TEXT, status INTEGER, latency REAL, created_at TEXT NOT NULL);
CREATE INDEX calls_run ON calls(run_id);
CREATE TABLE cache (key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,
    response TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE judgments (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, item_id TEXT NOT NULL,
    judge TEXT NOT NULL, model TEXT NOT NULL, template TEXT NOT NULL, template_hash TEXT NOT NULL,
    ord TEXT NOT NULL DEFAULT '', repeat INTEGER NOT NULL DEFAULT 0, text TEXT NOT NULL, verdict TEXT,
    outcome TEXT NOT NULL, reason TEXT, distribution TEXT, tokens_in INTEGER, tokens_out INTEGER,
    cost REAL, latency REAL, timestamp TEXT NOT NULL, UNIQUE (run_id, item_id, judge, ord, repeat));
CREATE INDEX judgments_run ON judgments(run_id);
CREATE TABLE check_results (run_id TEXT NOT NULL, item_id TEXT NOT NULL, name TEXT NOT NULL,
    passed INTEGER NOT NULL, reason TEXT, PRIMARY KEY (run_id, item_id, name));
CREATE TABLE labels (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL DEFAULT '',
    item_id TEXT NOT NULL, rater_id TEXT NOT NULL, label TEXT NOT NULL, explanation TEXT,
    created_at TEXT NOT NULL, UNIQUE (dataset, item_id, rater_id));
CREATE TABLE holdout_uses (id INTEGER PRIMARY KEY AUTOINCREMENT, data_hash TEXT NOT NULL,
    policy_hash TEXT NOT NULL, forced INTEGER NOT NULL, used_at TEXT NOT NULL, result TEXT);

INSERT INTO runs (id, name, status, started_at, ended_at, juge_version, dataset_hash, eval_hash, config, summary)
    VALUES ('r1', 'old run', 'done', '2026-11-29T10:00:00.000+00:00', '2026-11-29T10:01:00.000+00:00',
            '0.1.0', 'd1', 'e1', '{"judges": ["j"]}', '{"n": 1}');
INSERT INTO run_cases VALUES ('r1', 0, 'c1', '{"id": "c1", "question": "Q?", "output": "A."}');
INSERT INTO outputs VALUES ('r1', 'c1', 'output', 'A.', 'sys-1', 'ok');
INSERT INTO calls (run_id, cache_key, provider, model, attempt, request, response, error, status, latency, created_at)
    VALUES ('r1', 'k1', 'openai', 'm-1', 0, '{"messages": []}', '{"text": "PASS"}', NULL, 200, 0.5,
            '2026-11-29T10:00:30.000+00:00');
INSERT INTO judgments (run_id, item_id, judge, model, template, template_hash, ord, repeat, text, verdict,
    outcome, timestamp)
    VALUES ('r1', 'c1', 'j', 'm-1', 'passfail-v1', 'h1', '', 0, 'PASS', '"PASS"', 'ok',
            '2026-11-29T10:00:30+00:00');
"""

# What later juge versions added, in the order they were released (see juge.store.MIGRATIONS).
LATER_ADDITIONS = (
    "CREATE TABLE holdout_use_items (use_id INTEGER NOT NULL REFERENCES holdout_uses(id), item_id TEXT NOT NULL,"
    " grp TEXT NOT NULL);"
    "ALTER TABLE outputs ADD COLUMN reason TEXT; ALTER TABLE outputs ADD COLUMN tokens_in INTEGER;"
    " ALTER TABLE outputs ADD COLUMN tokens_out INTEGER; ALTER TABLE outputs ADD COLUMN cost REAL;"
    " ALTER TABLE outputs ADD COLUMN latency REAL;",
    "ALTER TABLE judgments ADD COLUMN attempts INTEGER;",
    "ALTER TABLE calls ADD COLUMN payer TEXT;",
    "CREATE TABLE batches (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, provider TEXT NOT NULL,"
    " requests INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'submitted', submitted_at TEXT NOT NULL,"
    " ended_at TEXT, detail TEXT); CREATE INDEX batches_run ON batches(run_id);"
    " CREATE TABLE batch_requests (batch_id TEXT NOT NULL REFERENCES batches(id), key TEXT NOT NULL,"
    " PRIMARY KEY (batch_id, key));",
)


def layout(path: Path) -> dict[str, list[tuple[str, str, int]]]:
    """Each table's columns (name, type, not null), sorted: the layout, whatever the column order."""
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {
            t: sorted((r[1], r[2], r[3]) for r in conn.execute(f"PRAGMA table_info({t})"))
            for t in tables
            if t != "sqlite_sequence"
        }


def stored_version(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_version")]


def old_store(path: Path, additions: int) -> Path:
    """A store as a juge before schema versions left it, with the first `additions` later changes."""
    with sqlite3.connect(path) as conn:
        conn.executescript(FIRST_LAYOUT + "".join(LATER_ADDITIONS[:additions]))
    return path


@pytest.mark.parametrize("additions", range(len(LATER_ADDITIONS) + 1))
def test_a_store_from_before_schema_versions_upgrades_and_keeps_its_data(tmp_path: Path, additions: int) -> None:
    path = old_store(tmp_path / "old.db", additions)
    fresh = tmp_path / "fresh.db"
    Store(fresh).close()
    with Store(path) as store:
        run = store.get_run("r1")
        assert (run["name"], run["config"], run["summary"]) == ("old run", {"judges": ["j"]}, {"n": 1})
        assert [c.id for c in store.run_cases("r1")] == ["c1"]
        assert store.outputs("r1")[("c1", "output")]["text"] == "A."
        (judgment,) = store.judgments("r1")
        assert (judgment.verdict, judgment.attempts) == ("PASS", None)
        assert store.unsettled_calls("r1") == {("k1", None): (1, 0.5)}  # a call from before payers
        store.log_call(
            run_id="r1",
            cache_key="k2",
            provider="openai",
            model="m-1",
            attempt=0,
            request={},
            response={"text": "x"},
            error=None,
            status=200,
            latency=0.1,
            payer="c1|j||0",
        )
        assert store.unsettled_calls("r1")[("k2", "c1|j||0")] == (1, 0.1)
    assert layout(path) == layout(fresh)  # the migrations end where a new store starts
    assert stored_version(path) == stored_version(fresh) == [SCHEMA_VERSION]


def test_migrations_are_numbered_in_order() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, SCHEMA_VERSION + 1))


def test_an_up_to_date_store_opens_without_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "juge.db"
    Store(path).close()
    statements: list[str] = []
    connect = sqlite3.connect

    def traced(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        conn = connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr("juge.store.sqlite.sqlite3.connect", traced)
    Store(path).conn.close()
    writes = [s for s in statements if s.split()[0].upper() in {"BEGIN", "CREATE", "ALTER", "INSERT", "DELETE"}]
    assert statements and writes == []


def test_stores_opened_at_once_are_created_once(tmp_path: Path) -> None:
    path, errors = tmp_path / "juge.db", []

    def open_it() -> None:
        try:
            Store(path).close()
        except Exception as exc:  # noqa: BLE001 - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and stored_version(path) == [SCHEMA_VERSION]


def test_a_new_store_waits_for_a_writer_before_turning_to_wal(tmp_path: Path) -> None:
    """SQLite refuses `PRAGMA journal_mode=WAL` at once, without its busy handler, while another
    connection writes to a file not yet in WAL mode: stores opened at the same moment met that now and
    then ("database is locked"). The store waits for the writer instead, like for any busy lock."""
    path = tmp_path / "juge.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE other (x INTEGER)")
    writer.execute("BEGIN IMMEDIATE")
    done = threading.Timer(0.2, writer.execute, ("COMMIT",))
    done.start()
    try:
        Store(path).close()
    finally:
        done.join()
        writer.close()
    assert stored_version(path) == [SCHEMA_VERSION]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_use_wal_retries_only_a_busy_database_and_only_until_its_timeout(monkeypatch) -> None:
    class FakeTime:  # its pauses advance this clock alone: a loaded machine cannot eat the timeout
        now = 0.0

        def monotonic(self) -> float:
            return self.now

        def sleep(self, seconds: float) -> None:
            self.now += seconds

    monkeypatch.setattr("juge.store.migrations.time", FakeTime())

    def busy(code: int) -> sqlite3.OperationalError:
        exc = sqlite3.OperationalError("database is locked")
        exc.sqlite_errorcode = code  # type: ignore[attr-defined]
        return exc

    class Refusing:
        def __init__(self, refusals: int, code: int = sqlite3.SQLITE_BUSY) -> None:
            self.refusals, self.code, self.calls = refusals, code, 0

        def execute(self, sql: str) -> sqlite3.Cursor:
            self.calls += 1
            if self.calls <= self.refusals:
                raise busy(self.code)
            return sqlite3.connect(":memory:").execute("SELECT 'wal'")

    conn = Refusing(3)
    use_wal(conn, timeout=10)
    assert conn.calls == 4
    with pytest.raises(sqlite3.OperationalError):  # not a lock: no retry
        use_wal(conn := Refusing(1, code=sqlite3.SQLITE_IOERR), timeout=10)
    assert conn.calls == 1
    with pytest.raises(sqlite3.OperationalError):  # still busy after the timeout
        use_wal(conn := Refusing(10**6), timeout=0.2)
    assert 0.2 / 0.05 <= conn.calls <= 0.2 / 0.005 + 1  # pauses of 5 to 50 ms for 0.2 s


def newer_store(path: Path) -> Path:
    Store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    return path


def test_a_store_from_a_newer_juge_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = newer_store(tmp_path / "juge.db")
    before = layout(path)
    with pytest.raises(InputError) as caught:
        Store(path)
    assert str(path) in str(caught.value) and f"schema version {SCHEMA_VERSION + 1}" in str(caught.value)
    assert layout(path) == before and stored_version(path) == [SCHEMA_VERSION + 1]


def test_juge_runs_on_a_newer_store_exits_2_with_one_line(tmp_path: Path) -> None:
    path = newer_store(tmp_path / "juge.db")
    done = subprocess.run(
        [sys.executable, "-m", "juge.cli", "runs", "--db", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "newer juge" in lines[0]
