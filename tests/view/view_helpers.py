"""A small store for the `juge view` tests: two PASS/FAIL runs of the same cases (one verdict changes), a
hostile case (markup and a right-to-left override), a logged call, an unparsed and an error judgment; and a
pairwise calibration whose judge flips with the order on every item."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

from juge.data.records import Case, Judgment
from juge.engine import payer_of
from juge.runs.summary import summarize
from juge.store import open_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cli_helpers import tiny_pairwise_study, write_jsonl  # noqa: E402

HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)> \u202eevil\u202c"
HOSTILE_ID = "c-hostile"


def cases(n: int = 7) -> list[Case]:
    out = [
        Case(id=f"c{k}", question=f"question {k}", output=f"answer {k}", category="billing" if k % 2 else "shipping")
        for k in range(n)
    ]
    return [*out, Case(id=HOSTILE_ID, question=HOSTILE, output=HOSTILE, category="billing")]


def _judgment(case: Case, verdict: str | None, outcome: str = "ok") -> Judgment:
    text = HOSTILE + f" verdict [[{verdict}]]" if case.id == HOSTILE_ID else f"Reasoning on {case.id}. [[{verdict}]]"
    return Judgment(
        item_id=case.id,
        judge="g",
        model="model-2026-01",
        template="g/passfail",
        template_hash="abc123def4567890",
        text=text,
        verdict=verdict if outcome == "ok" else None,
        outcome=outcome,  # type: ignore[arg-type]
        tokens_in=100,
        tokens_out=20,
        cost=0.001,
    )


def make_store(path: Path | str) -> tuple[str, str]:
    """Two finished runs `ra` and `rb` in the store at `path` (a file or a PostgreSQL URL); rb fails c0, which ra
    passes. Returns their ids."""
    with open_store(path) as store:
        for run_id, flip in (("ra", False), ("rb", True)):
            store.create_run(
                dataset_hash="d" * 16,
                juge_version="test",
                cases=cases(),
                run_id=run_id,
                name="support",
                config={
                    "kind": "eval",
                    "eval_file": "eval.toml",
                    "min_pass_rate": 0.5,
                    "judges": [{"name": "g", "setup": "passfail", "model": "m"}],
                },  # fmt: skip
            )
            for case in cases():
                if case.id == "c5":
                    j = _judgment(case, None, "unparsed")
                elif case.id == "c6":
                    j = _judgment(case, None, "error")
                else:
                    j = _judgment(case, "FAIL" if flip and case.id == "c0" else "PASS")
                store.save_judgment(run_id, j)
            store.log_call(
                run_id=run_id, cache_key=f"k-{run_id}", provider="openai", model="model-2026-01", attempt=1,
                request={"messages": [{"role": "user", "content": "Grade this: " + HOSTILE}],
                         "meta": {"judge": "g", "item_id": HOSTILE_ID, "order": None}},
                response={"choices": []}, error=None, status=200, latency=0.1,
                payer=payer_of(HOSTILE_ID, "g", "", 0) if run_id == "ra" else None,  # rb: as an older juge logged
            )  # fmt: skip
            summary = summarize(store, run_id, [SimpleNamespace(name="g", setup="passfail")])
            store.finish_run(run_id, summary.to_dict())
    return "ra", "rb"


def make_calibration(tmp: Path) -> Path:
    """A pairwise calibration of 10 dev items (category `writing`, both people say A): on even items the judge
    writes A in both orders (the verdict changes with the order), on odd ones it picks B in both."""
    import juge.api

    tmp.mkdir(parents=True, exist_ok=True)
    options = tiny_pairwise_study(tmp)
    calls = write_jsonl(
        tmp / "flips.jsonl",
        [
            {"item_id": f"i{k}", "judge": "j", "model": "m", "prompt": "p", "order": order, "letter": letter,
             "outcome": "ok", "text": f"On i{k} in order {order}: <b>bold</b> [[{letter}]]"}
            for k in range(20)
            for order, letter in zip(("12", "21"), ("A", "A") if k % 2 == 0 else ("B", "A"), strict=True)
        ],
    )  # fmt: skip
    study = juge.api.calibrate(items=options[1], judgments=[str(calls)], resamples=100)
    out = tmp / "calibration.json"
    study.save(out)
    return out


def make_policy(tmp: Path) -> tuple[Path, Path]:
    """The policy derived on the calibration's study (too few items: a person decides `writing`) and its
    holdout test, as files."""
    import juge.api

    make_calibration(tmp)
    study = {"items": str(tmp / "items.jsonl"), "judgments": [str(tmp / "flips.jsonl")], "db": tmp / "p.db"}
    policy = juge.api.policy_derive(**study, resamples=100)  # type: ignore[arg-type]
    policy_file = tmp / "policy.json"
    policy.save(policy_file)
    juge.api.policy_test(policy_file, **study, resamples=100, json_path=tmp / "holdout.json")  # type: ignore[arg-type]
    return policy_file, tmp / "holdout.json"


def login(client, token: str):  # noqa: ANN001, ANN201
    """Open the printed link in `client` (a TestClient) as a browser does."""
    return client.get(f"/login?token={token}", follow_redirects=False)


def links(page: str, pattern: str) -> list[str]:
    return [m for m in re.findall(r'href="([^"]+)"', page) if re.search(pattern, m)]


@contextmanager
def view_process(*args: str, cwd: Path | None = None, start_within: float = 180) -> Iterator[str]:
    """`juge view --port 0 ARGS` in a subprocess; yields the one-time link it printed, and stops it after."""
    fd, log_name = tempfile.mkstemp(prefix="juge-view-", suffix=".log")
    log = Path(log_name)
    proc = subprocess.Popen(
        [sys.executable, "-m", "juge.cli", "view", "--port", "0", *args], stdout=fd, stderr=subprocess.STDOUT, cwd=cwd
    )
    os.close(fd)
    try:
        deadline = time.monotonic() + start_within
        while not (found := re.search(r"^(http://127\.0\.0\.1:\d+/login\?token=\S+)$", log.read_text(), re.M)):
            if proc.poll() is not None:
                raise RuntimeError(f"juge view exited: {log.read_text(errors='replace')}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"juge view did not start in {start_within:g} s: {log.read_text()}")
            time.sleep(0.1)
        yield found[1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        print("juge view log:\n" + log.read_text(errors="replace")[-5000:])
        log.unlink()
