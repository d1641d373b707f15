"""SQLite store (WAL): runs, raw calls, the response cache, judgments, check results, labels.

This is the one module that writes run data. Every judgment row carries the
model version, the template id and hash, and its run carries the dataset hash.
Outside a group, every write is committed at once. Inside `grouped()` (the engine
judging a run), writes go into one open transaction that `commit()` ends: the engine
commits once per turn of its event loop, so a few ms of calls, cache entries and
judgments share one commit (group commit; a commit each was most of the store's cost
per call). The guarantee is unchanged: rows are committed in the order they were
written on this one connection, so a judgment is never durable before the calls and
cache entry it came from, and a judge call keeps its concurrency slot until its rows
are committed. A run killed at any point (even SIGKILL) thus loses at most the calls
in flight (at most the engine's concurrency), and `UNIQUE` keys make a resumed run
store every judgment exactly once.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from juge.data.records import Case, HumanLabel, Judgment
from juge.errors import Fault, InputError
from juge.fastjson import dump_text
from juge.store.layout import DEFAULT_DB, MIGRATIONS, SCHEMA, SCHEMA_VERSION, TABLES, run_script
from juge.store.migrations import pending, use_wal


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


_INSERT_CALL = (
    "INSERT INTO calls (run_id, cache_key, provider, model, attempt, request, response, error, status,"
    " latency, created_at, payer) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_CACHE = "INSERT OR REPLACE INTO cache (key, provider, model, response, created_at) VALUES (?, ?, ?, ?, ?)"


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _dumps_call(value: Any) -> str | None:
    """`_dumps` for the call log and the cache, written on every call: the same JSON, compact (see juge.fastjson)."""
    return None if value is None else dump_text(value, sort_keys=True)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


class RunNotFound(InputError, LookupError):
    """No stored run with this id, or a prefix that more than one run id starts with."""


# SQLite's primary result codes (the low byte of an extended code) that say what is wrong with the store.
_BAD_STORE = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_DISK_FULL = {sqlite3.SQLITE_FULL}
_CANNOT_WRITE = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_IOERR}


def store_error(path: Path, exc: sqlite3.Error) -> Exception | None:
    """A one-line error naming the file and what to do, for a fault of the store itself (exit 2 for a
    damaged or foreign file, 3 for a full disk or a store that cannot be written); None for any other
    error (a constraint, a busy lock), which callers handle."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    reason = str(exc)
    if code in _BAD_STORE or "not a database" in reason or "malformed" in reason:
        return InputError(
            f"{path}: not a juge database, or damaged ({reason}); move it aside (or restore a backup) "
            "and run again, or pass --db"
        )
    if code in _DISK_FULL or "disk is full" in reason:
        return Fault(
            f"{path}: the disk is full ({reason}); nothing half-written was kept. Free some space, then run "
            "the same command again to resume"
        )
    if code in _CANNOT_WRITE or "readonly" in reason or "unable to open" in reason:
        return Fault(
            f"{path}: cannot write the store ({reason}); check the permissions of the file and its folder "
            "(and its -wal and -shm files), or pass --db, then run again to resume"
        )
    return None


class _Connection(sqlite3.Connection):
    """A connection whose store faults are one-line errors naming the file (see `store_error`).

    After such a fault the open transaction is rolled back: nothing half-written stays."""

    path: Path

    def _fault(self, exc: sqlite3.Error) -> Exception:
        error = store_error(self.path, exc)
        if error is None:
            return exc
        if self.in_transaction:
            try:
                super().execute("ROLLBACK")
            except sqlite3.Error:
                pass  # the database may be unreadable; the transaction dies with the connection
        return error

    def execute(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().execute(*args)
        except sqlite3.Error as exc:
            raise self._fault(exc) from None

    def executemany(self, *args: Any) -> sqlite3.Cursor:
        try:
            return super().executemany(*args)
        except sqlite3.Error as exc:
            raise self._fault(exc) from None

    def commit(self) -> None:
        try:
            super().commit()
        except sqlite3.Error as exc:
            raise self._fault(exc) from None


class Store:
    """A handle on one juge database. Cheap to open; safe to open from several processes."""

    # Whether several processes may judge one run at once (PostgreSQL); on SQLite one process
    # works on an eval at a time (runner.run_lock) and a task needs no claim.
    shares_runs = False

    # The spellings SQLite and PostgreSQL differ in, for the reads written once below (PgStore sets its own).
    # A run's cases are inserted in one transaction, so the rowid pages them in the order they were stored.
    _CASE_PAGE_KEY = "rowid"
    _CASE_IS_PAIR = "json_extract(record, '$.output_1') IS NOT NULL AND json_extract(record, '$.output_2') IS NOT NULL"
    _VERDICT_IS_OBJECT = "json_type(verdict) = 'object'"
    _VERDICT_IS_NUMBER = "json_type(verdict) IN ('integer', 'real')"
    _CASE_CATEGORY = "json_extract(c.record, '$.category')"

    def __init__(self, path: str | Path = DEFAULT_DB):
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError(f"{self.path}: is a folder; --db needs a database file (e.g. {self.path / 'juge.db'})")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise Fault(
                f"{self.path}: cannot create its folder ({exc.strerror or exc}); check the permissions or pass --db"
            ) from None
        try:
            conn = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False, factory=_Connection
            )
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) or exc from None
        assert isinstance(conn, _Connection)
        conn.path = self.path
        self.conn = conn
        self.conn.row_factory = sqlite3.Row
        self._grouped = False
        try:
            use_wal(self.conn)
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA busy_timeout=30000")
            self._upgrade()
        except BaseException:
            self.conn.close()
            raise

    def _schema_version(self) -> int | None:
        """The stored schema version: None for a database without the run store's tables, 0 for a
        store made before versions."""
        tables = {r["name"] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "schema_version" in tables:
            row = self.conn.execute("SELECT version FROM schema_version").fetchone()
            return int(row["version"]) if row else 0
        return 0 if tables.intersection(TABLES) else None

    def _upgrade(self) -> None:
        """Create the tables of a new store, or run the migrations an older store lacks (see juge.store.migrations)."""
        found = self._schema_version()
        if found == SCHEMA_VERSION:
            return
        pending(MIGRATIONS, found or 0, str(self.path), "run store")  # a newer store: refused before any write
        with self.transaction() as c:
            found = self._schema_version()  # another process may have upgraded it while we waited
            if found is None:
                run_script(c, SCHEMA)
            else:
                for migration in pending(MIGRATIONS, found, str(self.path), "run store"):
                    migration.apply(c)
            c.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            c.execute("DELETE FROM schema_version")
            c.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    def close(self) -> None:
        self.commit()
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def grouped(self) -> Iterator[None]:
        """Within: writes join one open transaction, made durable by `commit()` (and on leaving)."""
        self._grouped = True
        try:
            yield
        finally:
            self._grouped = False
            self.commit()

    def commit(self) -> None:
        """Commit the open group's writes, if any."""
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        """Execute one write: committed at once, or in a group's open transaction."""
        if self._grouped and not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
        return self.conn.execute(sql, params)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.commit()  # a group's pending writes first: SQLite does not nest transactions
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            if self.conn.in_transaction:  # a store fault has rolled it back already
                self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # ---- runs ---------------------------------------------------------------------------
    @contextmanager
    def joining(self, eval_hash: str) -> Iterator[None]:
        """Held while finding or creating an eval's run (a store shared by processes locks it)."""
        yield

    def claim_many(
        self, run_id: str, keys: Sequence[tuple[str, str, str, int]]
    ) -> dict[tuple[str, str, str, int], bool | None] | None:
        """Claims tasks for this process: per key, True (judge it now), None (stored already) or False
        (another process is judging it); None for all: one process per run here, every task is its."""
        return None

    def release(self, run_id: str, key: tuple[str, str, str, int]) -> None:
        """Lets go of a claimed task once its judgment is committed (at the latest with the next commit)."""

    def create_run(
        self,
        *,
        dataset_hash: str,
        juge_version: str,
        cases: Iterable[Case],
        eval_hash: str | None = None,
        name: str | None = None,
        config: dict[str, Any] | None = None,
        run_id: str | None = None,
    ) -> str:
        run_id = run_id or uuid.uuid4().hex[:12]
        with self.transaction() as c:
            c.execute(
                "INSERT INTO runs (id, name, started_at, juge_version, dataset_hash, eval_hash, config)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_id, name, now_iso(), juge_version, dataset_hash, eval_hash, _dumps(config or {})),
            )
            c.executemany(  # a generator: a large run's cases are never held whole
                "INSERT INTO run_cases (run_id, position, item_id, record) VALUES (?, ?, ?, ?)",
                ((run_id, i, case.id, case.model_dump_json()) for i, case in enumerate(cases)),
            )
        return run_id

    def find_resumable_run(self, eval_hash: str, dataset_hash: str) -> str | None:
        row = self.conn.execute(
            "SELECT id FROM runs WHERE eval_hash = ? AND dataset_hash = ? AND status != 'done'"
            " ORDER BY started_at DESC LIMIT 1",
            (eval_hash, dataset_hash),
        ).fetchone()
        return row["id"] if row else None

    def finish_run(self, run_id: str, summary: dict[str, Any], status: str = "done") -> None:
        self.conn.execute(
            "UPDATE runs SET status = ?, ended_at = ?, summary = ? WHERE id = ?",
            (status, now_iso(), _dumps(summary), run_id),
        )

    def get_run(self, run_id: str) -> dict[str, Any]:
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            # Allow unambiguous prefixes, like git.
            rows = self.conn.execute("SELECT * FROM runs WHERE id LIKE ?", (run_id + "%",)).fetchall()
            if len(rows) != 1:
                raise RunNotFound(f"no run {run_id!r} in {self.path}" + (" (ambiguous prefix)" if rows else ""))
            row = rows[0]
        run = dict(row)
        run["config"] = _loads(run["config"])
        run["summary"] = _loads(run["summary"])
        return run

    def list_runs(self) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM runs ORDER BY started_at DESC").fetchall()
        out = []
        for row in rows:
            run = dict(row)
            run["config"] = _loads(run["config"])
            run["summary"] = _loads(run["summary"])
            out.append(run)
        return out

    def delete_run(self, run_id: str) -> None:
        """Remove a run and everything stored under it (its cases, outputs, calls, judgments, check
        results and batches). Cache entries stay: they belong to no run and keep re-runs free."""
        with self.transaction() as c:
            c.execute(
                "DELETE FROM batch_requests WHERE batch_id IN (SELECT id FROM batches WHERE run_id = ?)", (run_id,)
            )
            for table in ("judgments", "check_results", "outputs", "calls", "batches", "run_cases"):
                c.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            c.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def run_cases(self, run_id: str) -> list[Case]:
        rows = self.conn.execute(
            "SELECT record FROM run_cases WHERE run_id = ? ORDER BY position", (run_id,)
        ).fetchall()
        return [Case.model_validate_json(r["record"]) for r in rows]

    def iter_run_cases(self, run_id: str, page: int = 500) -> Iterator[list[Case]]:
        """A run's cases in the order they were stored, a page at a time.

        Keyset pages (on `_CASE_PAGE_KEY`): no read stays open between pages, so the engine's writes and
        WAL checkpoints go on while a large run is read."""
        last = -1
        key = self._CASE_PAGE_KEY
        while True:
            rows = self.conn.execute(
                f"SELECT {key}, record FROM run_cases WHERE run_id = ? AND {key} > ? ORDER BY {key} LIMIT ?",
                (run_id, last, page),
            ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [Case.model_validate_json(r["record"]) for r in rows]

    # ---- system outputs -----------------------------------------------------------------
    def save_output(
        self,
        run_id: str,
        item_id: str,
        slot: str,
        text: str | None,
        model: str,
        outcome: str,
        *,
        reason: str | None = None,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        cost: float | None = None,
        latency: float | None = None,
    ) -> None:
        """The system under test's output for one case (the latest attempt replaces an earlier failure)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO outputs (run_id, item_id, slot, text, model, outcome, reason, tokens_in,"
            " tokens_out, cost, latency) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, item_id, slot, text, model, outcome, reason, tokens_in, tokens_out, cost, latency),
        )

    def outputs(self, run_id: str, item_ids: Iterable[str] | None = None) -> dict[tuple[str, str], dict[str, Any]]:
        """The system's outputs for the run (only those of `item_ids`, when given)."""
        if item_ids is None:
            rows = self.conn.execute("SELECT * FROM outputs WHERE run_id = ?", (run_id,)).fetchall()
        else:
            rows = self._for_items("SELECT * FROM outputs WHERE run_id = ? AND item_id IN ({})", run_id, item_ids)
        return {(r["item_id"], r["slot"]): dict(r) for r in rows}

    def output_totals(self, run_id: str) -> dict[str, Any]:
        """Over a run's outputs: errors, the known cost of the others and how many of them had no price."""
        row = self.conn.execute(
            "SELECT SUM(CASE WHEN outcome = 'error' THEN 1 ELSE 0 END) AS errors,"
            " SUM(CASE WHEN outcome != 'error' THEN cost END) AS cost,"
            " SUM(CASE WHEN outcome != 'error' AND cost IS NULL THEN 1 ELSE 0 END) AS unpriced"
            " FROM outputs WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        return {"errors": row["errors"] or 0, "cost": row["cost"] or 0.0, "unpriced": row["unpriced"] or 0}

    def _for_items(self, sql: str, run_id: str, item_ids: Iterable[str]) -> list[sqlite3.Row]:
        """Rows of `sql` (its IN list a `{}`) for the run and these items, in chunks under SQLite's
        parameter limit."""
        ids, rows = list(item_ids), []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows += self.conn.execute(sql.format(",".join("?" * len(chunk))), (run_id, *chunk)).fetchall()
        return rows

    # ---- calls and cache ----------------------------------------------------------------
    def log_call(
        self,
        *,
        run_id: str | None,
        cache_key: str,
        provider: str,
        model: str,
        attempt: int,
        request: dict[str, Any],
        response: dict[str, Any] | None,
        error: str | None,
        status: int | None,
        latency: float | None,
        payer: str | None = None,
        cache: bool = False,
    ) -> None:
        """One attempt; `payer` names what the answer is for (a judgment's task, a case's output).
        With `cache`, an answered attempt's response is also the cache entry for `cache_key`
        (encoded once for both rows)."""
        response_json = _dumps_call(response)
        created_at = now_iso()
        call = (
            run_id,
            cache_key,
            provider,
            model,
            attempt,
            _dumps_call(request),
            response_json,
            error,
            status,
            latency,
            created_at,
            payer,
        )
        if cache and response is not None:
            self._write_answer(call, (cache_key, provider, model, response_json, created_at))
        else:
            self._write(_INSERT_CALL, call)

    def _write_answer(self, call: tuple[Any, ...], entry: tuple[Any, ...]) -> None:
        """An answered call's row and its cache entry."""
        self._write(_INSERT_CALL, call)
        self._write(_INSERT_CACHE, entry)

    def call_requests(self, run_id: str) -> list[dict[str, Any]]:
        """The requests of a run's answered calls, in the order they were made."""
        rows = self.conn.execute(
            "SELECT request FROM calls WHERE run_id = ? AND response IS NOT NULL ORDER BY id", (run_id,)
        ).fetchall()
        return [_loads(r["request"]) for r in rows]

    def cache_get(self, key: str) -> dict[str, Any] | None:
        row = self.conn.execute("SELECT response FROM cache WHERE key = ?", (key,)).fetchone()
        return _loads(row["response"]) if row else None

    def unsettled_calls(self, run_id: str) -> dict[tuple[str, str | None], tuple[int, float | None]]:
        """Each (cache key, payer) this run got an answer for whose payer has nothing stored yet
        (a judgment's task without its judgment, a case's output slot without a usable output):
        (attempts it took, latency of the answer). The payer is None for a call logged before calls
        named one, always kept. Read one call at a time, so only the unsettled ones are held: after
        a kill, about the calls that were in flight."""
        out: dict[tuple[str, str | None], tuple[int, float | None]] = {}
        calls = self.conn.execute(
            "SELECT cache_key, payer, attempt, latency FROM calls WHERE run_id = ? AND response IS NOT NULL"
            " ORDER BY id",
            (run_id,),
        )
        settled: dict[str | None, bool] = {}  # the payers of this batch already looked up
        for key, payer, attempt, latency in calls:
            if payer not in settled:
                if len(settled) > 4096:
                    settled.clear()
                settled[payer] = self._settled(run_id, payer)
            if not settled[payer]:
                out[(key, payer)] = (attempt + 1, latency)
        return out

    def _settled(self, run_id: str, payer: str | None) -> bool:
        """Whether what `payer` (see `juge.engine.payer_of`) names is stored."""
        parts = [] if payer is None else payer.split("\x1f")
        if len(parts) == 4:
            item, judge, order, repeat = parts
            sql = "SELECT 1 FROM judgments WHERE run_id = ? AND item_id = ? AND judge = ? AND ord = ? AND repeat = ?"
            params: tuple[Any, ...] = (run_id, item, judge, order, int(repeat)) if repeat.isdigit() else ()
        elif len(parts) == 2:
            sql = (
                "SELECT 1 FROM outputs WHERE run_id = ? AND item_id = ? AND slot = ? AND outcome IN ('ok', 'refused')"
                " AND text != ''"
            )
            params = (run_id, *parts)
        else:
            return False
        return bool(params) and self.conn.execute(sql, params).fetchone() is not None

    def count_calls(self, run_id: str | None = None) -> int:
        if run_id is None:
            return self.conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM calls WHERE run_id = ?", (run_id,)).fetchone()[0]

    # ---- provider batches ---------------------------------------------------------------
    def save_batch(self, run_id: str, provider: str, batch_id: str, keys: Iterable[str]) -> None:
        """A batch the provider accepted, with the cache keys of its requests: committed at once, so a
        process killed after submitting collects it later instead of paying for it twice."""
        keys = list(keys)
        with self.transaction() as c:
            c.execute(
                "INSERT INTO batches (id, run_id, provider, requests, submitted_at) VALUES (?, ?, ?, ?, ?)",
                (batch_id, run_id, provider, len(keys), now_iso()),
            )
            c.executemany("INSERT INTO batch_requests (batch_id, key) VALUES (?, ?)", [(batch_id, k) for k in keys])

    def end_batch(self, batch_id: str, status: str, detail: dict[str, Any] | None = None) -> None:
        self._write(
            "UPDATE batches SET status = ?, ended_at = ?, detail = ? WHERE id = ?",
            (status, now_iso(), _dumps(detail), batch_id),
        )

    def batch_keys(self, run_id: str, provider: str) -> dict[str, str]:
        """The cache key of each request this run sent to `provider` in a batch -> that batch's id
        (the latest, should a key have been sent twice)."""
        rows = self.conn.execute(
            "SELECT r.key, b.id FROM batches b JOIN batch_requests r ON r.batch_id = b.id"
            " WHERE b.run_id = ? AND b.provider = ? ORDER BY b.submitted_at",
            (run_id, provider),
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    def run_batches(self, run_id: str) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM batches WHERE run_id = ? ORDER BY submitted_at", (run_id,)).fetchall()
        return [{**dict(r), "detail": _loads(r["detail"])} for r in rows]

    # ---- judgments ----------------------------------------------------------------------
    def save_judgment(self, run_id: str, j: Judgment) -> bool:
        """Store one judgment; returns False if that (item, judge, order, repeat) is already stored."""
        cur = self._write(
            "INSERT OR IGNORE INTO judgments (run_id, item_id, judge, model, template, template_hash, ord, repeat,"
            " text, verdict, outcome, reason, distribution, tokens_in, tokens_out, cost, latency, attempts, timestamp)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                j.item_id,
                j.judge,
                j.model,
                j.template,
                j.template_hash,
                j.order or "",
                j.repeat,
                j.text,
                _dumps(j.verdict),
                j.outcome,
                j.reason,
                _dumps(j.distribution),
                j.tokens_in,
                j.tokens_out,
                j.cost,
                j.latency,
                j.attempts,
                j.timestamp.isoformat(),
            ),
        )
        return cur.rowcount == 1

    def done_keys(self, run_id: str) -> set[tuple[str, str, str, int]]:
        rows = self.conn.execute(
            "SELECT item_id, judge, ord, repeat FROM judgments WHERE run_id = ?", (run_id,)
        ).fetchall()
        return {(r["item_id"], r["judge"], r["ord"], r["repeat"]) for r in rows}

    def done_keys_of(self, run_id: str, item_ids: Iterable[str]) -> set[tuple[str, str, str, int]]:
        """`done_keys` for these items only (a large run is checked a page of cases at a time)."""
        rows = self._for_items(
            "SELECT item_id, judge, ord, repeat FROM judgments WHERE run_id = ? AND item_id IN ({})", run_id, item_ids
        )
        return {(r["item_id"], r["judge"], r["ord"], r["repeat"]) for r in rows}

    def count_judgments(self, run_id: str) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM judgments WHERE run_id = ?", (run_id,)).fetchone()[0]

    def judgments(self, run_id: str) -> list[Judgment]:
        rows = self.conn.execute("SELECT * FROM judgments WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()
        return [_judgment(r) for r in rows]

    def judge_overview(self, run_id: str) -> list[dict[str, Any]]:
        """Per judge of a run, in the order each first judged: judgments (`n`), outcomes, sorted
        models, the template of its first judgment, and what its setup can be told from (any order;
        any object or number among its ok verdicts), aggregated in SQL."""
        judges = self.conn.execute(
            "SELECT g.judge, g.n, g.first, f.template, f.template_hash, g.any_order, g.any_object, g.any_number"
            " FROM (SELECT judge, COUNT(*) AS n, MIN(id) AS first,"
            " MAX(CASE WHEN ord != '' THEN 1 ELSE 0 END) AS any_order,"
            f" MAX(CASE WHEN outcome = 'ok' AND {self._VERDICT_IS_OBJECT} THEN 1 ELSE 0 END) AS any_object,"
            f" MAX(CASE WHEN outcome = 'ok' AND {self._VERDICT_IS_NUMBER} THEN 1 ELSE 0 END) AS any_number"
            " FROM judgments WHERE run_id = ? GROUP BY judge) AS g"
            " JOIN judgments AS f ON f.id = g.first ORDER BY g.first",  # the first judgment's template
            (run_id,),
        ).fetchall()
        outcomes: dict[str, dict[str, int]] = defaultdict(dict)
        for r in self.conn.execute(
            "SELECT judge, outcome, COUNT(*) FROM judgments WHERE run_id = ? GROUP BY judge, outcome", (run_id,)
        ):
            outcomes[r[0]][r[1]] = r[2]
        models: dict[str, list[str]] = defaultdict(list)
        for r in self.conn.execute(
            "SELECT DISTINCT judge, model FROM judgments WHERE run_id = ? ORDER BY judge, model", (run_id,)
        ):
            models[r[0]].append(r[1])
        return [{**dict(r), "outcomes": outcomes[r["judge"]], "models": models[r["judge"]]} for r in judges]

    def iter_judgments_by_item(self, run_id: str) -> Iterator[Judgment]:
        """A run's judgments ordered by item id (its unique index), read one at a time. The cursor
        stays open while it is read: for a finished run, not while the engine writes."""
        for r in self.conn.execute("SELECT * FROM judgments WHERE run_id = ? ORDER BY item_id", (run_id,)):
            yield _judgment(r)

    def iter_check_results_by_item(self, run_id: str) -> Iterator[tuple[str, dict[str, tuple[bool, str | None]]]]:
        """(item id, {check: (passed, reason)}) for each item with results, by item id, one at a time."""
        item: str | None = None
        results: dict[str, tuple[bool, str | None]] = {}
        for r in self.conn.execute("SELECT * FROM check_results WHERE run_id = ? ORDER BY item_id", (run_id,)):
            if r["item_id"] != item:
                if item is not None:
                    yield item, results
                item, results = r["item_id"], {}
            results[r["name"]] = (bool(r["passed"]), r["reason"])
        if item is not None:
            yield item, results

    def iter_case_kinds_by_item(self, run_id: str) -> Iterator[tuple[str, bool]]:
        """(item id, is a pair) for each of a run's cases, by item id, one at a time."""
        for r in self.conn.execute(
            f"SELECT item_id, {self._CASE_IS_PAIR} FROM run_cases WHERE run_id = ? ORDER BY item_id", (run_id,)
        ):
            yield r[0], bool(r[1])

    # ---- browsing (juge view): a page at a time, on indexed keys ---------------------------
    def read_only(self) -> None:
        """Refuse every write on this connection from now on (``juge view`` reads only)."""
        self.commit()
        self.conn.execute("PRAGMA query_only = ON")

    def judgment_page(
        self,
        run_id: str,
        *,
        after: Sequence[Any] | None = None,
        limit: int = 50,
        outcome: str | None = None,
        judge: str | None = None,
        verdicts: Sequence[Any] = (),
        category: str | None = None,
        failed_check: str | None = None,
        window: int = 20_000,
    ) -> tuple[list[dict[str, Any]], tuple[Any, ...] | None]:
        """Up to `limit` of a run's judgments after the key `after` (item id, judge, order, repeat), in key order,
        and where to go on from when the filters left the page short.

        A keyset page on the judgments' unique index (run, item, judge, order, repeat): a page costs the same
        on the first page of a run as deep into a large one. `verdicts` keeps judgments whose parsed verdict is
        one of these values, `category` those of cases in it, `failed_check` those of cases that failed it.
        With a filter, at most the next `window` judgments are read, so a filter that matches few or none costs
        what a page does: when they are read and the page is not full, the second value is the last key read
        (the next page goes on from there); otherwise it is None.
        Each row: the key, model, outcome, verdict (parsed), reason, the text's first 200 characters, category.
        """
        key = "(j.item_id, j.judge, j.ord, j.repeat)"
        where, params = ["j.run_id = ?"], list[Any]([run_id])
        if after is not None:
            where.append(f"{key} > (?, ?, ?, ?)")
            params += list(after)
        filters, values = [], list[Any]()
        for column, value in (("outcome", outcome), ("judge", judge)):
            if value is not None:
                filters.append(f"j.{column} = ?")
                values.append(value)
        if verdicts:
            filters.append(f"j.verdict IN ({', '.join('?' * len(verdicts))})")
            values += [_dumps(v) for v in verdicts]
        if category is not None:
            filters.append(f"{self._CASE_CATEGORY} = ?")
            values.append(category)
        if failed_check is not None:
            filters.append(
                "EXISTS (SELECT 1 FROM check_results AS k WHERE k.run_id = j.run_id AND k.item_id = j.item_id"
                " AND k.name = ? AND k.passed = 0)"
            )
            values.append(failed_check)
        end = None
        if filters:  # the last key of the window, read on the index alone
            end = self.conn.execute(
                f"SELECT j.item_id, j.judge, j.ord, j.repeat FROM judgments AS j WHERE {' AND '.join(where)}"
                f" ORDER BY j.item_id, j.judge, j.ord, j.repeat LIMIT 1 OFFSET {int(window) - 1}",
                tuple(params),
            ).fetchone()
            if end is not None:
                where.append(f"{key} <= (?, ?, ?, ?)")
                params += list(end)
        rows = self.conn.execute(
            "SELECT j.item_id, j.judge, j.ord, j.repeat, j.model, j.outcome, j.verdict, j.reason,"
            f" substr(j.text, 1, 200) AS excerpt, {self._CASE_CATEGORY} AS category"
            " FROM judgments AS j LEFT JOIN run_cases AS c ON c.run_id = j.run_id AND c.item_id = j.item_id"
            f" WHERE {' AND '.join(where + filters)} ORDER BY j.item_id, j.judge, j.ord, j.repeat LIMIT ?",
            (*params, *values, limit),
        ).fetchall()
        page = [{**dict(r), "verdict": _loads(r["verdict"])} for r in rows]
        return page, (tuple(end) if end is not None and len(page) < limit else None)

    def judgment_totals(self, run_id: str) -> dict[str, Any]:
        """A run's judgments counted, with their tokens in and out and their known cost summed."""
        row = self.conn.execute(
            "SELECT COUNT(*) AS n, SUM(tokens_in) AS tokens_in, SUM(tokens_out) AS tokens_out, SUM(cost) AS cost"
            " FROM judgments WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        return dict(row)

    def run_case(self, run_id: str, item_id: str) -> Case | None:
        row = self.conn.execute(
            "SELECT record FROM run_cases WHERE run_id = ? AND item_id = ?", (run_id, item_id)
        ).fetchone()
        return None if row is None else Case.model_validate_json(row["record"])

    def cases_in_run(self, run_id: str, item_ids: Iterable[str]) -> set[str]:
        """Which of `item_ids` are cases of the run (on its primary key)."""
        return {
            r[0]
            for r in self._for_items(
                "SELECT item_id FROM run_cases WHERE run_id = ? AND item_id IN ({})", run_id, item_ids
            )
        }

    def case_judgments(self, run_id: str, item_id: str) -> list[Judgment]:
        rows = self.conn.execute(
            "SELECT * FROM judgments WHERE run_id = ? AND item_id = ? ORDER BY judge, ord, repeat", (run_id, item_id)
        ).fetchall()
        return [_judgment(r) for r in rows]

    def case_checks(self, run_id: str, item_id: str) -> dict[str, tuple[bool, str | None]]:
        rows = self.conn.execute(
            "SELECT name, passed, reason FROM check_results WHERE run_id = ? AND item_id = ? ORDER BY name",
            (run_id, item_id),
        ).fetchall()
        return {r["name"]: (bool(r["passed"]), r["reason"]) for r in rows}

    def case_requests(self, run_id: str, item_id: str, payers: Iterable[str]) -> list[dict[str, Any]]:
        """The requests of the run's answered calls made for this item, in order: those logged for `payers`
        (see `juge.engine.payer_of`: the item's judgments and outputs) on the (run, payer) index, else, for
        calls an older juge logged without a payer, those whose ``meta`` names the item."""
        rows = self._for_items(
            "SELECT id, request FROM calls WHERE run_id = ? AND response IS NOT NULL AND payer IN ({})", run_id, payers
        )
        if (
            not rows
            and self.conn.execute(
                "SELECT 1 FROM calls WHERE run_id = ? AND payer IS NULL LIMIT 1", (run_id,)
            ).fetchone()
        ):
            value = json.dumps(item_id, ensure_ascii=False)
            patterns = [  # the request as written spaced (older juge) or compact
                "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                for needle in (f'"item_id": {value}', f'"item_id":{value}')
            ]
            rows = self.conn.execute(
                "SELECT id, request FROM calls WHERE run_id = ? AND payer IS NULL AND response IS NOT NULL"
                " AND (request LIKE ? ESCAPE '\\' OR request LIKE ? ESCAPE '\\')",
                (run_id, *patterns),
            ).fetchall()
        requests = [_loads(r["request"]) for r in sorted(rows, key=lambda r: r["id"])]
        return [r for r in requests if isinstance(r, dict) and (r.get("meta") or {}).get("item_id") == item_id]

    # ---- checks -------------------------------------------------------------------------
    def save_checks(self, run_id: str, item_id: str, results: dict[str, tuple[bool, str | None]]) -> None:
        self.save_checks_of(run_id, [(item_id, results)])

    def save_checks_of(self, run_id: str, items: Iterable[tuple[str, dict[str, tuple[bool, str | None]]]]) -> None:
        """The check results of several items in one transaction."""
        with self.transaction() as c:
            c.executemany(
                "INSERT OR REPLACE INTO check_results (run_id, item_id, name, passed, reason) VALUES (?, ?, ?, ?, ?)",
                [
                    (run_id, item_id, name, int(ok), reason)
                    for item_id, results in items
                    for name, (ok, reason) in results.items()
                ],
            )

    def check_results(self, run_id: str) -> dict[str, dict[str, tuple[bool, str | None]]]:
        rows = self.conn.execute("SELECT * FROM check_results WHERE run_id = ?", (run_id,)).fetchall()
        out: dict[str, dict[str, tuple[bool, str | None]]] = {}
        for r in rows:
            out.setdefault(r["item_id"], {})[r["name"]] = (bool(r["passed"]), r["reason"])
        return out

    # ---- human labels -------------------------------------------------------------------
    def save_labels(self, labels: Iterable[HumanLabel], dataset: str = "") -> int:
        with self.transaction() as c:
            cur = c.executemany(
                "INSERT OR REPLACE INTO labels (dataset, item_id, rater_id, label, explanation, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [(dataset, lab.item_id, lab.rater_id, _dumps(lab.label), lab.explanation, now_iso()) for lab in labels],
            )
            return cur.rowcount

    def labels(self, dataset: str = "") -> list[HumanLabel]:
        rows = self.conn.execute("SELECT * FROM labels WHERE dataset = ? ORDER BY id", (dataset,)).fetchall()
        return [
            HumanLabel(
                item_id=r["item_id"], rater_id=r["rater_id"], label=_loads(r["label"]), explanation=r["explanation"]
            )
            for r in rows
        ]

    # ---- holdout ledger -----------------------------------------------------------------
    def holdout_uses(self, data_hash: str) -> list[dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM holdout_uses WHERE data_hash = ? ORDER BY id", (data_hash,)).fetchall()
        return [dict(r) for r in rows]

    def holdout_uses_sharing(
        self, item_ids: Iterable[str], groups: Iterable[str], fingerprints: Iterable[str] = ()
    ) -> list[dict[str, Any]]:
        """Earlier holdout uses that tested any of these item ids, groups or item content fingerprints, oldest
        first, each with the ``shared_items`` and ``shared_groups`` (sorted) and ``shared_fingerprints`` (a count)."""
        ids, grps, fps = set(item_ids), set(groups), set(fingerprints)
        shared: dict[int, tuple[set[str], set[str], set[str]]] = {}
        for r in self.conn.execute("SELECT use_id, item_id, grp, fingerprint FROM holdout_use_items"):
            if r["item_id"] in ids or r["grp"] in grps or (r["fingerprint"] and r["fingerprint"] in fps):
                items, groups_, prints = shared.setdefault(r["use_id"], (set(), set(), set()))
                if r["item_id"] in ids:
                    items.add(r["item_id"])
                if r["grp"] in grps:
                    groups_.add(r["grp"])
                if r["fingerprint"] in fps:
                    prints.add(r["fingerprint"])
        rows = self.conn.execute("SELECT * FROM holdout_uses ORDER BY id").fetchall()
        return [
            {
                **dict(r),
                "shared_items": sorted(shared[r["id"]][0]),
                "shared_groups": sorted(shared[r["id"]][1]),
                "shared_fingerprints": len(shared[r["id"]][2]),
            }
            for r in rows
            if r["id"] in shared
        ]

    def record_holdout_use(
        self,
        data_hash: str,
        policy_hash: str,
        forced: bool,
        result: dict[str, Any] | None,
        items: Iterable[tuple[str, str] | tuple[str, str, str]] = (),
    ) -> None:
        """Record one holdout test and its (item id, group[, content fingerprint]) rows. Call it inside
        ``transaction()`` with the check of earlier uses, so two concurrent tests cannot both pass the check."""
        cur = self.conn.execute(
            "INSERT INTO holdout_uses (data_hash, policy_hash, forced, used_at, result) VALUES (?, ?, ?, ?, ?)",
            (data_hash, policy_hash, int(forced), now_iso(), _dumps(result)),
        )
        self.conn.executemany(
            "INSERT INTO holdout_use_items (use_id, item_id, grp, fingerprint) VALUES (?, ?, ?, ?)",
            [(cur.lastrowid, row[0], row[1], row[2] if len(row) > 2 else None) for row in items],
        )


def _judgment(r: sqlite3.Row) -> Judgment:
    return Judgment(
        run_id=r["run_id"],
        item_id=r["item_id"],
        judge=r["judge"],
        model=r["model"],
        template=r["template"],
        template_hash=r["template_hash"],
        order=r["ord"] or None,
        repeat=r["repeat"],
        text=r["text"],
        verdict=_loads(r["verdict"]),
        outcome=r["outcome"],
        reason=r["reason"],
        distribution=_loads(r["distribution"]),
        tokens_in=r["tokens_in"],
        tokens_out=r["tokens_out"],
        cost=r["cost"],
        latency=r["latency"],
        attempts=r["attempts"],
        timestamp=datetime.fromisoformat(r["timestamp"]),
    )
