"""The cases a run judges: its cases file, less what `--only` and `sample` leave out.

A selection is read from the file each time it is walked, never held whole, so a run of a
million cases costs the memory of a page of them. Checking it (`select_cases`) reads the file
once (twice with a sample): every row parses, ids are unique, `--only` names known ids; the
ids go to a scratch SQLite file, which finds duplicates and sorts them for the run's identity
on disk instead of in memory. A caller that has its own work to do on each selected case
(`visit`) does it in that same read.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from juge.data.readers import duplicate_case, iter_cases
from juge.data.records import Case
from juge.errors import InputError


@dataclass(frozen=True)
class Selection:
    path: Path
    mapping: Mapping[str, str] | None
    only: frozenset[str] | None
    chosen: frozenset[int] | None  # with a sample: the indexes (among the cases `only` keeps) it drew
    count: int
    ids_digest: hashlib._Hash  # sha256 over ",".join(sorted ids): copy() it before use
    as_text: Mapping[str, int] = field(default_factory=dict)  # numbers/booleans read as text, per field

    def __iter__(self) -> Iterator[Case]:
        for _, case in self.with_lines():
            yield case

    def with_lines(self) -> Iterator[tuple[int, Case]]:
        """The selected cases as (line, Case), in file order."""
        index = 0
        for line, case in iter_cases(self.path, self.mapping):
            if self.only is not None and case.id not in self.only:
                continue
            index += 1
            if self.chosen is None or index - 1 in self.chosen:
                yield line, case


def select_cases(
    path: Path,
    mapping: Mapping[str, str] | None,
    *,
    only: set[str] | None,
    sample: int | None,
    seed: int,
    limit: int | None = None,
    visit: Callable[[int, Case], None] | None = None,
) -> Selection:
    """Check the cases file and draw the selection; raises InputError naming the file and line.

    The sample is the one `juge.data.readers.sample` draws from the same cases (a seeded
    shuffle of their positions, then the first `sample`), so a run's identity does not change.
    `limit` keeps the first N of what `only` and the sample select, in file order (a quick look).

    `visit(line, case)` is called once for each selected case, in file order: during the one read
    when what is selected is known as the file goes by (no sample), else after the draw, walking the
    selection. An error it raises during the read waits until the read has ended, so the file's own
    errors (a bad row, a duplicate id, an unknown ``--only`` id) come first, as if it ran after.
    """
    with tempfile.TemporaryDirectory(prefix="juge-ids-") as tmp, closing(sqlite3.connect(Path(tmp) / "ids.db")) as db:
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("CREATE TABLE ids (id TEXT PRIMARY KEY, line INTEGER NOT NULL, idx INTEGER)")
        db.execute("BEGIN")
        kept, found = 0, set()
        as_text: dict[str, int] = {}
        visiting = visit if sample is None else None  # with a sample, what is selected is known after the read
        held: Exception | None = None  # the first error of `visiting`, raised once the read has ended
        for line, case in iter_cases(path, mapping, as_text=as_text):
            keep = only is None or case.id in only
            try:
                db.execute("INSERT INTO ids VALUES (?, ?, ?)", (case.id, line, kept if keep else None))
            except sqlite3.IntegrityError:
                first = db.execute("SELECT line FROM ids WHERE id = ?", (case.id,)).fetchone()[0]
                raise duplicate_case(path, case.id, line, first) from None
            if keep:
                if visiting is not None and held is None and (limit is None or kept < limit):
                    try:
                        visiting(line, case)
                    except Exception as exc:
                        held = exc
                kept += 1
                if only is not None:
                    found.add(case.id)
        if only is not None and (unknown := only - found):
            raise InputError(f"--only names case ids not in {path}: {', '.join(sorted(unknown)[:5])}")
        if held is not None:
            raise held
        chosen = None
        if sample is not None:
            positions = list(range(kept))
            random.Random(seed).shuffle(positions)  # as `sample` shuffles the cases themselves
            chosen = frozenset(positions[:sample])
        if limit is not None:
            chosen = frozenset(sorted(chosen)[:limit]) if chosen is not None else frozenset(range(min(kept, limit)))
        if chosen is not None:
            db.execute("CREATE TABLE chosen (idx INTEGER PRIMARY KEY)")
            db.executemany("INSERT INTO chosen VALUES (?)", ((i,) for i in chosen))
            query = "SELECT id FROM ids WHERE idx IN (SELECT idx FROM chosen) ORDER BY id"
        else:
            query = "SELECT id FROM ids WHERE idx IS NOT NULL ORDER BY id"
        # SQLite orders TEXT by its UTF-8 bytes, which is code point order: Python's sorted().
        digest, sep = hashlib.sha256(), b""
        for (case_id,) in db.execute(query):
            digest.update(sep + case_id.encode())
            sep = b","
        db.execute("COMMIT")
    count = kept if chosen is None else len(chosen)
    selection = Selection(path, mapping, frozenset(only) if only is not None else None, chosen, count, digest, as_text)
    if visit is not None and visiting is None:
        for line, case in selection.with_lines():
            visit(line, case)
    return selection
