"""The run store: runs, raw calls, the response cache, judgments, check results, labels.

:func:`open_store` is the one way to open it: a SQLite file (``sqlite.py``, the default ``.juge/juge.db``) or a
PostgreSQL database given by URL (``postgres.py``); ``layout.py`` holds the tables and their migrations,
``migrations.py`` the versioning both juge databases (this one and the label store) share.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.errors import InputError
from juge.store.layout import DEFAULT_DB, MIGRATIONS, SCHEMA_VERSION

if TYPE_CHECKING:
    from juge.store.sqlite import RunNotFound, Store


__all__ = [
    "DEFAULT_DB",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "RunNotFound",
    "Store",
    "is_database_url",
    "open_store",
]


def is_database_url(db: str | Path) -> bool:
    """`db` names a PostgreSQL database (``postgresql://...``) rather than a SQLite file."""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://", "postgresql+psycopg://"))


def open_store(db: str | Path | None = None, *, must_exist: bool = False) -> Store:
    """The store at `db` (default ``.juge/juge.db``): a SQLite file, or a PostgreSQL database given by URL.

    With `must_exist` (reading runs), a SQLite file that is not there is an InputError rather than a new, empty
    store; otherwise a new file gets its folder (or the store says why it cannot: exit 3).
    """
    from juge.store.postgres import PgStore
    from juge.store.sqlite import Store

    where = db if db is not None else DEFAULT_DB
    if is_database_url(where):
        return PgStore(str(where))
    if must_exist and not Path(where).exists():
        raise InputError(f"{where}: no juge database here (run `juge run` first, or pass --db)")
    return Store(where)


def __getattr__(name: str) -> Any:
    """The stores are imported on first use: the commands read DEFAULT_DB when `juge --help` is shown."""
    if name in ("RunNotFound", "Store"):
        value = getattr(importlib.import_module("juge.store.sqlite"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'juge.store' has no attribute {name!r}")
