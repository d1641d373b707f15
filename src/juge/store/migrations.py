"""Schema versions of juge's databases: one version number and an ordered list of migrations per store.

Each store (the run store, the label store) keeps its version in a one-row table of its own and
lists its migrations in order, numbered from 1. Opening a store:

- a new database gets the current layout at once and is stamped with the latest version;
- a store at an older version runs the migrations above its version, in order, in one transaction,
  then is stamped;
- a store made before versions existed counts as version 0 (the migrations up to the first stamped
  release repeat the ad-hoc upgrades earlier juge made on open, so they tolerate a store that had
  some of them already);
- a store at a version above the latest was written by a newer juge: it is refused (exit 2) rather
  than read with a layout this juge does not know.

A change to a store's layout is a new migration at the end of its list plus the same change to the
layout a new store is created with; a test checks that both end at the same tables and columns.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from juge.errors import InputError

C = TypeVar("C")


@dataclass(frozen=True)
class Migration(Generic[C]):
    """Brings a store from `version - 1` to `version`; `apply` runs inside the upgrade's transaction."""

    version: int
    summary: str
    apply: Callable[[C], None]


def latest_version(migrations: Sequence[Migration[C]]) -> int:
    """The version a store reaches after every migration; checks they are numbered 1, 2, ... in order."""
    for expected, migration in enumerate(migrations, start=1):
        if migration.version != expected:
            raise AssertionError(f"migration {migration.version} ({migration.summary}) is out of order")
    return len(migrations)


class NewerStoreError(InputError):
    """A store whose schema version is above the latest this juge knows."""


def pending(migrations: Sequence[Migration[C]], found: int, where: str, store: str) -> list[Migration[C]]:
    """The migrations a store at version `found` still needs; refuses a store written by a newer juge."""
    latest = latest_version(migrations)
    if found > latest:
        raise NewerStoreError(
            f"{where}: this {store} was written by a newer juge (schema version {found}; this juge reads up to "
            f"{latest}): upgrade juge to open it"
        )
    return [m for m in migrations if m.version > found]


def use_wal(conn: Any, timeout: float = 30.0) -> None:
    """``PRAGMA journal_mode=WAL`` on a SQLite connection (a sqlite3 connection or cursor), waiting for it.

    Turning a new database file to WAL takes it alone, and a second connection that asks at the same
    moment is told "database is locked" at once: SQLite does not call its busy handler there. So several
    processes (or threads) opening a new store together retry here, with a short random pause, for up to
    `timeout` seconds like any other busy lock; once the file is in WAL mode the pragma no longer waits.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            busy = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() >= deadline:
                raise
        time.sleep(random.uniform(0.005, 0.05))
