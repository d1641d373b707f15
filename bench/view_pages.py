"""Benchmark: how long a page of a large run takes in ``juge view``, against a plain SELECT of the same rows.

Builds a store holding one finished run of ``--judgments`` PASS/FAIL judgments (two judges over half as many
cases, 1 % unparsed, five categories, a check), then times, through FastAPI's TestClient in this process (the
whole request: routing, the store's queries, the template), the run page: the first page, a page deep in the
run (after the key of the middle judgment), pages filtered by outcome, verdict, category and failed check, and
a case page (its judgments, checks, and the prompts as sent, found by scanning the run's logged calls).
The baseline, measured in the same run, is a plain ``SELECT * FROM judgments WHERE run_id = ? ORDER BY item_id,
judge, ord, repeat LIMIT 50`` fetched from the same SQLite file on its own connection: the rows alone, without
a page around them. The first request (templates compiled, the store's first reads) is shown apart.

    python bench/view_pages.py [--judgments 100000] [--repeats 7] [--db PATH]

Prints each page's median time, the baseline's, their ratio, and whether every page took under a second.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

CATEGORIES = ("billing", "shipping", "returns", "accounts", "other")
JUDGES = ("strict", "lenient")
RUN_ID = "bigrun"


def build_store(path: Path, n_judgments: int) -> str:
    """A store at `path` with one finished run of `n_judgments` judgments (two judges per case); its id."""
    from juge.data.records import Case, Judgment
    from juge.runs.summary import summarize
    from juge.store import Store

    n_cases = n_judgments // len(JUDGES)
    cases = (
        Case(id=f"case-{k:07d}", question=f"Question {k}?", output=f"Answer {k}.", category=CATEGORIES[k % 5])
        for k in range(n_cases)
    )
    with Store(path) as store:
        store.create_run(
            dataset_hash="bench", juge_version="bench", cases=cases, run_id=RUN_ID, name="bench",
            config={"kind": "eval", "min_pass_rate": 0.5,
                    "judges": [{"name": j, "setup": "passfail", "model": "m"} for j in JUDGES]},
        )  # fmt: skip
        with store.grouped():
            for k in range(n_cases):
                item = f"case-{k:07d}"
                for judge in JUDGES:
                    unparsed = k % 100 == 7
                    verdict = None if unparsed else ("FAIL" if k % 9 == 0 else "PASS")
                    prompt = f"Grade the answer to {item}: Answer {k}. Say [[PASS]] or [[FAIL]]."
                    store.log_call(
                        run_id=RUN_ID, cache_key=f"{item}-{judge}", provider="openai", model="model-2026-01",
                        attempt=1, request={"messages": [{"role": "user", "content": prompt}],
                                            "meta": {"judge": judge, "item_id": item, "order": None}},
                        response={"text": "ok"}, error=None, status=200, latency=0.1, payer=f"{item}/{judge}",
                    )  # fmt: skip
                    store.save_judgment(
                        RUN_ID,
                        Judgment(
                            item_id=item, judge=judge, model="model-2026-01", template=f"{judge}/passfail",
                            template_hash="0123456789abcdef", text=f"The answer to {item} is fine. [[{verdict}]]",
                            verdict=verdict, outcome="unparsed" if unparsed else "ok", tokens_in=120, tokens_out=30,
                            cost=0.0001,
                        ),
                    )  # fmt: skip
                if k % 1000 == 999:
                    store.commit()
            store.save_checks_of(RUN_ID, ((f"case-{k:07d}", {"short": (k % 13 != 0, None)}) for k in range(n_cases)))
        summary = summarize(store, RUN_ID, [SimpleNamespace(name=j, setup="passfail") for j in JUDGES])
        store.finish_run(RUN_ID, summary.to_dict())
    return RUN_ID


def median_ms(call, repeats: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--db", type=Path, help="reuse (or build) the store here")
    args = parser.parse_args()

    from fastapi.testclient import TestClient

    from juge.store import open_store
    from juge.view.app import create_app
    from juge.view.shown import read_shown

    db = args.db or Path(tempfile.mkdtemp(prefix="juge-view-bench-")) / "juge.db"
    if not db.exists():
        start = time.perf_counter()
        build_store(db, args.judgments)
        print(f"built {args.judgments:,} judgments in {time.perf_counter() - start:.1f} s: {db}", file=sys.stderr)
    store = open_store(db, must_exist=True)
    store.read_only()
    client = TestClient(create_app(store, read_shown(), token="bench"), base_url="http://127.0.0.1:8766")
    client.get("/login?token=bench")
    n = store.count_judgments(RUN_ID)
    middle = f"case-{n // 4:07d}"
    deep = json.dumps([middle, "strict", "", 0])

    def page(query: str) -> None:
        response = client.get(f"/runs/{RUN_ID}{query}")
        assert response.status_code == 200 and ("case-link" in response.text or "NONE" in query), response.text[:500]

    start = time.perf_counter()
    page("")
    first_ms = 1000 * (time.perf_counter() - start)

    plain = sqlite3.connect(db)
    plain.row_factory = sqlite3.Row

    def baseline() -> None:
        rows = plain.execute(
            "SELECT * FROM judgments WHERE run_id = ? ORDER BY item_id, judge, ord, repeat LIMIT 50", (RUN_ID,)
        ).fetchall()
        assert len(rows) == 50

    base_ms = median_ms(baseline, args.repeats * 3)
    pages = {
        "first page": "",
        "deep page (after the middle)": "?" + urlencode({"after": deep}),
        "outcome=unparsed (1 %)": "?outcome=unparsed",
        "verdict=FAIL (11 %)": "?verdict=FAIL",
        "category=returns (20 %)": "?category=returns",
        "failed check short (8 %)": "?check=short",
        "judge=lenient, 500 rows": "?judge=lenient&size=500",
        "verdict matching nothing (one window read)": "?verdict=NONE",
    }
    print(f"\n{n:,} judgments in one run; {args.repeats} repeats, median")
    print(f"first request (templates compiled, the store's first reads): {first_ms:.0f} ms")
    print(f"baseline, a plain SELECT of the 50 rows: {base_ms:.2f} ms\n")
    print("| page | juge view (ms) | baseline (ms) | ratio | under 1 s |")
    print("|---|---:|---:|---:|:---:|")
    times = {name: median_ms(lambda q=query: page(q), args.repeats) for name, query in pages.items()}
    case = f"/runs/{RUN_ID}/cases/{middle}"
    times["case page (judgments, checks, prompts by payer)"] = median_ms(
        lambda: client.get(case).raise_for_status(), args.repeats
    )
    for name, ms in times.items():
        print(f"| {name} | {ms:.1f} | {base_ms:.2f} | {ms / base_ms:.0f}x | {'yes' if ms < 1000 else 'NO'} |")
    worst = max(times.values())
    print(f"\nevery page under a second: {'yes' if worst < 1000 else 'NO'} (slowest {worst:.0f} ms)")
    store.close()


if __name__ == "__main__":
    main()
