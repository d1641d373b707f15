"""The run store's layout: the tables of a new store and the migrations that bring an older one to it.

See juge.store.migrations for the rules. A store made before schema versions (version 0) may have any layout
an earlier juge left, so migrations 1-6 tolerate a store that already has some of their changes:
1 creates what the first juge store had and this store lacks, 2-6 are the upgrades juge used to make
on every open, in the order they were released. Migrations from 7 on run exactly once.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from juge.store.migrations import Migration, latest_version

#: Where every command keeps its runs unless told otherwise (--db).
DEFAULT_DB = Path(".juge") / "juge.db"

# The layout of a new store, at SCHEMA_VERSION; an older store reaches it through MIGRATIONS.
SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    name TEXT,
    status TEXT NOT NULL DEFAULT 'running',
    started_at TEXT NOT NULL,
    ended_at TEXT,
    juge_version TEXT NOT NULL,
    dataset_hash TEXT NOT NULL,
    eval_hash TEXT,
    config TEXT NOT NULL DEFAULT '{}',
    summary TEXT
);
CREATE TABLE IF NOT EXISTS run_cases (
    run_id TEXT NOT NULL REFERENCES runs(id),
    position INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, item_id)
);
CREATE TABLE IF NOT EXISTS outputs (
    run_id TEXT NOT NULL REFERENCES runs(id),
    item_id TEXT NOT NULL,
    slot TEXT NOT NULL DEFAULT 'output',
    text TEXT,
    model TEXT,
    outcome TEXT NOT NULL,
    reason TEXT,
    tokens_in INTEGER,
    tokens_out INTEGER,
    cost REAL,
    latency REAL,
    PRIMARY KEY (run_id, item_id, slot)
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    cache_key TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    request TEXT NOT NULL,
    response TEXT,
    error TEXT,
    status INTEGER,
    latency REAL,
    created_at TEXT NOT NULL,
    payer TEXT
);
CREATE INDEX IF NOT EXISTS calls_payer ON calls(run_id, payer);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    model TEXT NOT NULL,
    template TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    ord TEXT NOT NULL DEFAULT '',
    repeat INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL,
    verdict TEXT,
    outcome TEXT NOT NULL,
    reason TEXT,
    distribution TEXT,
    tokens_in INTEGER,
    tokens_out INTEGER,
    cost REAL,
    latency REAL,
    attempts INTEGER,
    timestamp TEXT NOT NULL,
    UNIQUE (run_id, item_id, judge, ord, repeat)
);
CREATE INDEX IF NOT EXISTS judgments_run ON judgments(run_id);
CREATE TABLE IF NOT EXISTS check_results (
    run_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    name TEXT NOT NULL,
    passed INTEGER NOT NULL,
    reason TEXT,
    PRIMARY KEY (run_id, item_id, name)
);
CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL DEFAULT '',
    item_id TEXT NOT NULL,
    rater_id TEXT NOT NULL,
    label TEXT NOT NULL,
    explanation TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (dataset, item_id, rater_id)
);
CREATE TABLE IF NOT EXISTS holdout_uses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    data_hash TEXT NOT NULL,
    policy_hash TEXT NOT NULL,
    forced INTEGER NOT NULL,
    used_at TEXT NOT NULL,
    result TEXT
);
CREATE TABLE IF NOT EXISTS holdout_use_items (
    use_id INTEGER NOT NULL REFERENCES holdout_uses(id),
    item_id TEXT NOT NULL,
    grp TEXT NOT NULL,
    fingerprint TEXT
);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    requests INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'submitted',
    submitted_at TEXT NOT NULL,
    ended_at TEXT,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS batches_run ON batches(run_id);
CREATE TABLE IF NOT EXISTS batch_requests (
    batch_id TEXT NOT NULL REFERENCES batches(id),
    key TEXT NOT NULL,
    PRIMARY KEY (batch_id, key)
);
"""

# Every table of the run store: a database holding any of them without a version is a store from
# before schema versions, not a new one.
TABLES = (
    "runs",
    "run_cases",
    "outputs",
    "calls",
    "cache",
    "judgments",
    "check_results",
    "labels",
    "holdout_uses",
    "holdout_use_items",
    "batches",
    "batch_requests",
)

# The first juge store (frozen: what migration 1 creates when an old store lacks it).
_FIRST_LAYOUT = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    name TEXT,
    status TEXT NOT NULL DEFAULT 'running',
    started_at TEXT NOT NULL,
    ended_at TEXT,
    juge_version TEXT NOT NULL,
    dataset_hash TEXT NOT NULL,
    eval_hash TEXT,
    config TEXT NOT NULL DEFAULT '{}',
    summary TEXT
);
CREATE TABLE IF NOT EXISTS run_cases (
    run_id TEXT NOT NULL REFERENCES runs(id),
    position INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, item_id)
);
CREATE TABLE IF NOT EXISTS outputs (
    run_id TEXT NOT NULL REFERENCES runs(id),
    item_id TEXT NOT NULL,
    slot TEXT NOT NULL DEFAULT 'output',
    text TEXT,
    model TEXT,
    outcome TEXT NOT NULL,
    PRIMARY KEY (run_id, item_id, slot)
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    cache_key TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    request TEXT NOT NULL,
    response TEXT,
    error TEXT,
    status INTEGER,
    latency REAL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_run ON calls(run_id);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS judgments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    judge TEXT NOT NULL,
    model TEXT NOT NULL,
    template TEXT NOT NULL,
    template_hash TEXT NOT NULL,
    ord TEXT NOT NULL DEFAULT '',
    repeat INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL,
    verdict TEXT,
    outcome TEXT NOT NULL,
    reason TEXT,
    distribution TEXT,
    tokens_in INTEGER,
    tokens_out INTEGER,
    cost REAL,
    latency REAL,
    timestamp TEXT NOT NULL,
    UNIQUE (run_id, item_id, judge, ord, repeat)
);
CREATE INDEX IF NOT EXISTS judgments_run ON judgments(run_id);
CREATE TABLE IF NOT EXISTS check_results (
    run_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    name TEXT NOT NULL,
    passed INTEGER NOT NULL,
    reason TEXT,
    PRIMARY KEY (run_id, item_id, name)
);
CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL DEFAULT '',
    item_id TEXT NOT NULL,
    rater_id TEXT NOT NULL,
    label TEXT NOT NULL,
    explanation TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (dataset, item_id, rater_id)
);
CREATE TABLE IF NOT EXISTS holdout_uses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    data_hash TEXT NOT NULL,
    policy_hash TEXT NOT NULL,
    forced INTEGER NOT NULL,
    used_at TEXT NOT NULL,
    result TEXT
);
"""

_HOLDOUT_USE_ITEMS = """
CREATE TABLE IF NOT EXISTS holdout_use_items (
    use_id INTEGER NOT NULL REFERENCES holdout_uses(id),
    item_id TEXT NOT NULL,
    grp TEXT NOT NULL
)"""


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Each statement of `script` in the open transaction (`executescript` would commit it)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _add_columns(conn: sqlite3.Connection, table: str, columns: tuple[tuple[str, str], ...]) -> None:
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    for column, kind in columns:
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


_BATCHES = """
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    requests INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'submitted',
    submitted_at TEXT NOT NULL,
    ended_at TEXT,
    detail TEXT
);
CREATE INDEX IF NOT EXISTS batches_run ON batches(run_id);
CREATE TABLE IF NOT EXISTS batch_requests (
    batch_id TEXT NOT NULL REFERENCES batches(id),
    key TEXT NOT NULL,
    PRIMARY KEY (batch_id, key)
)"""


MIGRATIONS: tuple[Migration[sqlite3.Connection], ...] = (
    Migration(1, "the tables of the first juge store", lambda c: run_script(c, _FIRST_LAYOUT)),
    Migration(2, "holdout uses keep their item ids and groups", lambda c: run_script(c, _HOLDOUT_USE_ITEMS)),
    Migration(
        3,
        "a system output keeps why it failed, its tokens, cost and latency",
        lambda c: _add_columns(
            c,
            "outputs",
            (
                ("reason", "TEXT"),
                ("tokens_in", "INTEGER"),
                ("tokens_out", "INTEGER"),
                ("cost", "REAL"),
                ("latency", "REAL"),
            ),
        ),
    ),
    Migration(4, "a judgment counts its attempts", lambda c: _add_columns(c, "judgments", (("attempts", "INTEGER"),))),
    Migration(5, "a call names what it was made for (payer)", lambda c: _add_columns(c, "calls", (("payer", "TEXT"),))),
    Migration(6, "provider batches and the requests each carried", lambda c: run_script(c, _BATCHES)),
    # From 7 on, each migration runs exactly once, on the layout of the version before it.
    Migration(
        7,
        "a tested holdout item keeps its content fingerprint (tested once per machine, whatever its id)",
        lambda c: run_script(c, "ALTER TABLE holdout_use_items ADD COLUMN fingerprint TEXT"),  # SQLite and PostgreSQL
    ),
    Migration(
        8,
        "a run's calls are indexed by what they were made for (`juge view` finds a case's prompts without a scan)",
        lambda c: run_script(
            c, "CREATE INDEX IF NOT EXISTS calls_payer ON calls(run_id, payer); DROP INDEX IF EXISTS calls_run"
        ),
    ),
)
SCHEMA_VERSION = latest_version(MIGRATIONS)
