"""The machine's holdout registry: every holdout test, whatever the store or the directory it ran from.

A store's ledger only knows the tests made with that store; a fresh ``.juge/`` or ``--db other.db``
knows none. So each test is also recorded in one SQLite file in the user's data directory
(``platformdirs.user_data_dir("juge")``, or ``$JUGE_HOME`` when set), keyed by a **content
fingerprint** of each item: the normalised question and answers, never the id or the group, so a
copy with ids prefixed and groups shifted is the same holdout.

Normalisation: the text skeleton the parsers' contradiction and injection checks use
(:func:`juge.judges.textnorm.comparable_text`: look-alike letters folded, invisible characters dropped),
case folded, every run of whitespace one space, trailing punctuation dropped: a zero-width space, a
Cyrillic look-alike or a full stop added to each item does not make it unseen. The two answers of a pair
are sorted, so a copy with the answers swapped is the same item too. A test recorded before this
normalisation (``juge-item-v1``: NFKC and case only) is still found: each item is also looked up by its
v1 fingerprint (:func:`earlier_fingerprint`). The
reference, the context and the labels are not part of it: adding a reference or relabelling an
item does not make it unseen.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

from juge.data.records import Case
from juge.judges.textnorm import comparable_text

ENV_HOME = "JUGE_HOME"
REGISTRY_FILE = "holdout-registry.sqlite"
FINGERPRINT_VERSION = "juge-item-v2"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    test_id TEXT NOT NULL,
    used_at TEXT NOT NULL,
    policy_hash TEXT NOT NULL,
    split TEXT NOT NULL,
    data_hash TEXT NOT NULL,
    forced INTEGER NOT NULL,
    n_items INTEGER NOT NULL,
    store TEXT,
    cwd TEXT
);
CREATE TABLE IF NOT EXISTS test_items (
    test_id INTEGER NOT NULL REFERENCES tests(id),
    fingerprint TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS test_items_fingerprint ON test_items (fingerprint);
"""


def juge_home() -> Path:
    """Where juge keeps what belongs to the user rather than a project: ``$JUGE_HOME``, else the user data dir."""
    home = os.environ.get(ENV_HOME)
    return Path(home) if home else Path(platformdirs.user_data_dir("juge", appauthor=False))


def registry_path() -> Path:
    return juge_home() / REGISTRY_FILE


def normalise_text(text: str | None) -> str:
    """The item text a fingerprint hashes (see the module's docstring)."""
    return comparable_text(text)


def _v1_text(text: str | None) -> str:
    if not text:
        return ""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold()).strip()


def _fingerprint(case: Case, normalise: Callable[[str | None], str], version: str) -> str:
    if case.messages:
        question = "\n".join(f"{m.role}: {normalise(m.content)}" for m in case.messages)
    else:
        question = normalise(case.question)
    if case.is_pair:
        answers = sorted((normalise(case.output_1), normalise(case.output_2)))
    else:
        answers = [normalise(case.output)]
    body = json.dumps([version, question, answers], ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()


def case_fingerprint(case: Case) -> str:
    """sha256 of an item's normalised question (or conversation) and answers (a pair's sorted)."""
    return _fingerprint(case, normalise_text, FINGERPRINT_VERSION)


def earlier_fingerprint(case: Case) -> str:
    """The item's fingerprint as tests recorded it before v2 (NFKC, case folded, whitespace): looked up, never
    recorded, so a holdout tested with an older juge stays tested."""
    return _fingerprint(case, _v1_text, "juge-item-v1")


def fingerprints_to_look_up(cases: Iterable[Case]) -> set[str]:
    """Every fingerprint under which an earlier test of these items may be recorded (v2 and v1)."""
    return {f for c in cases for f in (case_fingerprint(c), earlier_fingerprint(c))}


def fingerprint_set_hash(fingerprints: Iterable[str]) -> str:
    """One hash for a set of item fingerprints (order and duplicates do not matter)."""
    return hashlib.sha256("\n".join(sorted(set(fingerprints))).encode()).hexdigest()


class Registry:
    """The registry file, opened for one check-and-record: ``with Registry() as reg, reg.locked(): ...``."""

    def __init__(self, path: Path | None = None):
        self.path = path or registry_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            from juge.errors import InputError

            raise InputError(
                f"{self.path}: cannot open the holdout registry ({exc}); set {ENV_HOME} to a writable folder"
            ) from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One write transaction: a check and the record made in it cannot interleave with another test's."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    def tests_sharing(self, fingerprints: Iterable[str]) -> list[dict[str, Any]]:
        """Earlier tests that used any of these items, oldest first, each with ``shared_items`` (a count)."""
        wanted = set(fingerprints)
        shared: dict[int, int] = {}
        for r in self.conn.execute("SELECT test_id, fingerprint FROM test_items"):
            if r["fingerprint"] in wanted:
                shared[r["test_id"]] = shared.get(r["test_id"], 0) + 1
        rows = self.conn.execute("SELECT * FROM tests ORDER BY id").fetchall()
        return [{**dict(r), "shared_items": shared[r["id"]]} for r in rows if r["id"] in shared]

    def record(
        self,
        *,
        test_id: str,
        policy_hash: str,
        split: str,
        data_hash: str,
        forced: bool,
        fingerprints: Sequence[str],
        store: str | None,
        used_at: str | None = None,
    ) -> None:
        cur = self.conn.execute(
            "INSERT INTO tests (test_id, used_at, policy_hash, split, data_hash, forced, n_items, store, cwd)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                test_id,
                used_at or datetime.now(UTC).isoformat(timespec="seconds"),
                policy_hash,
                split,
                data_hash,
                int(forced),
                len(fingerprints),
                store,
                os.getcwd(),
            ),
        )
        self.conn.executemany(
            "INSERT INTO test_items (test_id, fingerprint) VALUES (?, ?)",
            [(cur.lastrowid, fp) for fp in sorted(set(fingerprints))],
        )
