"""Benchmark: peak memory (RSS) and wall time of `juge calibrate` and of `juge run` at scale.

`--run` measures `juge run` instead (see `run_bench`): N small cases, one pass/fail judge
answered by the scripted provider (no network), a fresh store per size.

Workload: a pairwise calibration set in the shared sample's layout (DATA.md of the MT-Bench
sample): `items.jsonl` (question, two answers, votes inside each item under `human_ratings`)
and `judgments.jsonl` (one recorded call per line: judge, model, prompt, order, letter,
outcome, raw text). Every item is judged by 2 judges in both orders, so N judgments are
N / 4 items. Only a share of the items carries human votes (default 10 %, 2-5 votes each),
as in practice: people label a sample, judges run on everything. Text lengths follow the
sample's medians (answers ~500 characters, question ~190, judge text ~400). The study
runs on every split (`--split all`, the largest study the files allow).

Each `juge calibrate` runs in its own subprocess; its peak RSS comes from `os.wait4`
(ru_maxrss of that child alone). Baselines measured in the same run: the peak RSS of a
Python process that only imports juge's calibrate path, and the size of the input files.

    python bench/memory.py [--judgments 100000 1000000] [--labelled 0.1] [--resamples 2000]
    python bench/memory.py --run [--cases 100000 1000000] [--formats jsonl csv tsv parquet jsonl.gz csv.gz]

Prints, per size: peak RSS, wall time, RSS / 1 GiB target, RSS / input size, and the
RSS above the import-only baseline per judgment.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_BYTES = 1 << 30
LAST_CPU = [0.0]
JUDGES = (("chat-small", "gpt-6-luna-2026-09-22", 0.70), ("chat-strong", "gpt-6-sol-2026-08-30", 0.80))
CATEGORIES = ("writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities")
MODELS = ("alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b", "vicuna-13b-v1.2")
WORDS = (
    "the answer gives a clear account of the request and follows the user's instructions closely while "
    "assistant misses part of the question adds an unnecessary disclaimer and is less helpful overall "
    "both responses are accurate but one is more detailed relevant and better organised for the reader"
).split()
FLIP = {"A": "B", "B": "A", "C": "C"}


def text_of(rng: random.Random, chars: int) -> str:
    """Words drawn at random until about `chars` characters (lengths vary by +-50 %)."""
    target = max(1, int(chars * rng.uniform(0.5, 1.5)))
    words, size = [], 0
    while size < target:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def item_row(rng: random.Random, index: int, labelled: float, answer_chars: int) -> dict:
    """One pair in the sample layout; votes (2-5 raters) on a `labelled` share of items."""
    question_id = index // 4
    model_1, model_2 = sorted(rng.sample(MODELS, 2))
    truth = rng.choice(("A", "A", "A", "B", "B", "B", "tie"))
    votes = []
    if rng.random() < labelled:
        raters = rng.sample(range(200), rng.randint(2, 5))
        votes = [
            {"rater_id": f"expert_{r}", "label": truth if rng.random() < 0.7 else rng.choice(("A", "B", "tie"))}
            for r in raters
        ]
    return {
        "item_id": f"syn-q{question_id}-{index}",
        "question_id": question_id,
        "category": CATEGORIES[question_id % len(CATEGORIES)],
        "split": "dev" if question_id % 2 == 0 else "holdout",
        "question": text_of(rng, 190),
        "answer_1": text_of(rng, answer_chars),
        "answer_2": text_of(rng, answer_chars),
        "model_1": model_1,
        "model_2": model_2,
        "reference": None,
        "human_ratings": votes,
        "source": "synthetic (bench/memory.py)",
    }


def judgment_rows(rng: random.Random, item: dict, text_chars: int) -> list[dict]:
    """Both orders of both judges on one item; ~1 % of calls unparsed or refused."""
    truth = {"A": "A", "B": "B", "tie": "C"}.get(
        item["human_ratings"][0]["label"] if item["human_ratings"] else "A", "C"
    )
    rows = []
    for judge, model, accuracy in JUDGES:
        for order in ("12", "21"):
            fixed = truth if rng.random() < accuracy else rng.choice("ABC")
            letter = fixed if order == "12" else FLIP[fixed]
            outcome = "ok" if rng.random() > 0.01 else rng.choice(("unparsed", "refused"))
            rows.append(
                {
                    "item_id": item["item_id"],
                    "judge": judge,
                    "model": model,
                    "prompt": "pair-v2",
                    "order": order,
                    "letter": letter if outcome == "ok" else None,
                    "outcome": outcome,
                    "text": text_of(rng, text_chars) + (f" [[{letter}]]" if outcome == "ok" else ""),
                    "tokens_in": rng.randint(300, 900),
                    "tokens_out": rng.randint(40, 200),
                    "at": "2026-10-09T19:56:20-04:00",
                }
            )
    return rows


def write_study(
    folder: Path, n_judgments: int, *, labelled: float, answer_chars: int, text_chars: int, seed: int
) -> tuple[Path, Path, int]:
    """Write items.jsonl and judgments.jsonl for `n_judgments` calls; returns the paths and labelled items.

    A folder that already holds the files written with the same parameters (params.json) is reused.
    """
    items_path, judgments_path, params_path = folder / "items.jsonl", folder / "judgments.jsonl", folder / "params.json"
    params = {
        "judgments": n_judgments,
        "labelled": labelled,
        "answer_chars": answer_chars,
        "text_chars": text_chars,
        "seed": seed,
    }
    if params_path.exists() and json.loads(params_path.read_text())["params"] == params:
        return items_path, judgments_path, json.loads(params_path.read_text())["n_labelled"]
    params_path.unlink(missing_ok=True)
    rng = random.Random(seed)
    n_labelled = 0
    with items_path.open("w", encoding="utf-8") as items_file, judgments_path.open("w", encoding="utf-8") as calls:
        for index in range(n_judgments // (2 * len(JUDGES))):
            item = item_row(rng, index, labelled, answer_chars)
            n_labelled += bool(item["human_ratings"])
            items_file.write(json.dumps(item) + "\n")
            calls.writelines(json.dumps(row) + "\n" for row in judgment_rows(rng, item, text_chars))
    params_path.write_text(json.dumps({"params": params, "n_labelled": n_labelled}))
    return items_path, judgments_path, n_labelled


def measure(command: list[str], log: Path) -> tuple[int, float, int]:
    """(peak RSS in bytes, wall seconds, exit code) of one child process, from its own rusage.
    Its CPU seconds (user + system) are kept in `LAST_CPU` (wall time moves with other load)."""
    start = time.perf_counter()
    with log.open("wb") as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    return usage.ru_maxrss * 1024, time.perf_counter() - start, child.returncode


def mib(n: float) -> str:
    return f"{n / (1 << 20):,.0f} MiB"


RUN_JUDGE = """name = "short"
setup = "passfail"
description = "The reply answers the question."
model = "scripted-judge-1"
provider = "scripted"

[provider_options]
model = "scripted-judge-1"
default = "PASS\\nIt answers."
"""


# A child process's peak RSS (ru_maxrss from wait4) starts from what it was forked from, so this process stays
# small: pyarrow (for the Parquet files) is loaded only in a child of its own.
TO_PARQUET = """
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
schema = pa.schema([("id", pa.string()), ("question", pa.string()), ("output", pa.string())])
with open(sys.argv[1], encoding="utf-8") as rows, pq.ParquetWriter(sys.argv[2], schema) as writer:
    batch = []
    for line in rows:
        batch.append(json.loads(line))
        if len(batch) == 50_000:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            batch = []
    if batch:
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
"""
RUN_FORMATS = ("jsonl", "csv", "tsv", "parquet", "jsonl.gz", "csv.gz", "parquet.gz")


def write_cases_as(cases_jsonl: Path, fmt: str) -> Path:
    """The cases of `cases_jsonl` written as `fmt` beside it (a `.gz` of any), a row at a time; reused."""
    target = cases_jsonl.with_name(f"cases.{fmt}")
    if target.exists() and target.stat().st_mtime >= cases_jsonl.stat().st_mtime:
        return target
    base = fmt.removesuffix(".gz")
    plain = cases_jsonl if base == "jsonl" else cases_jsonl.with_name(f"cases.{base}")
    if base in ("csv", "tsv") and not plain.exists():
        with cases_jsonl.open(encoding="utf-8") as rows, plain.open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out, delimiter="\t" if base == "tsv" else ",")
            writer.writerow(["id", "question", "output"])
            for line in rows:
                row = json.loads(line)
                writer.writerow([row["id"], row["question"], row["output"]])
    elif base == "parquet" and not plain.exists():  # in a child: pyarrow here would count in every child's RSS
        subprocess.run([sys.executable, "-c", TO_PARQUET, str(cases_jsonl), str(plain)], check=True)
    if fmt.endswith(".gz"):
        with plain.open("rb") as src, gzip.open(target, "wb", compresslevel=1) as out:
            shutil.copyfileobj(src, out)
    return target


def write_run_eval(folder: Path, n_cases: int, seed: int, fmt: str = "jsonl") -> Path:
    """An eval of `n_cases` small single-answer cases (question ~60 characters, output ~120) in format `fmt`
    and one scripted pass/fail judge; the cases are reused when already written for the same size."""
    cases, params = folder / "cases.jsonl", folder / "params.json"
    if not (params.exists() and json.loads(params.read_text()) == {"cases": n_cases, "seed": seed}):
        for old in folder.glob("cases.*"):
            old.unlink()
        rng = random.Random(seed)
        with cases.open("w", encoding="utf-8") as out:
            for i in range(n_cases):
                row = {"id": f"case-{i:07d}", "question": text_of(rng, 60), "output": text_of(rng, 120)}
                out.write(json.dumps(row) + "\n")
        params.write_text(json.dumps({"cases": n_cases, "seed": seed}))
    cases_file = write_cases_as(cases, fmt)
    (folder / "judge.toml").write_text(RUN_JUDGE)
    eval_file = folder / f"eval-{fmt}.toml"
    eval_file.write_text(
        f'name = "memory-bench"\ncases = "{cases_file.name}"\n\n[[judges]]\nfile = "judge.toml"\n\n'
        "[engine]\nconcurrency = 64\n"
    )
    return eval_file


def run_bench(root: Path, sizes: list[int], seed: int, formats: list[str]) -> None:
    """Peak RSS of `juge run` (a fresh store each time) per size and cases format, and each format's slope
    between sizes; JSON lines, streamed from the start, is the baseline the other formats are held to."""
    base_rss, _, _ = measure([sys.executable, "-c", "import juge.cli, juge.runner"], root / "import.log")
    print(f"baseline: python importing juge's run path: peak RSS {mib(base_rss)}")
    print(f"target: peak RSS <= {mib(TARGET_BYTES)} at 1,000,000 cases, flat from 100k to 1M in every format\n")
    print(
        f"{'format':>10} {'cases':>10} {'input':>10} {'store':>10} {'peak RSS':>10} {'wall':>8} {'CPU':>8} "
        f"{'RSS/target':>10} {'CPU/case':>9}"
    )
    slopes = {}
    for fmt in formats:
        rows = []
        for size in sizes:
            folder = root / f"run{size}"
            folder.mkdir(exist_ok=True)
            eval_file = write_run_eval(folder, size, seed, fmt)
            db = folder / "juge.db"
            for leftover in folder.glob("juge.db*"):
                leftover.unlink()
            rss, wall, code = measure(
                [sys.executable, "-m", "juge.cli", "run", str(eval_file), "--db", str(db), "--no-progress"],
                folder / "run.log",
            )
            if code != 0:
                log = (folder / "run.log").read_text()[-3000:]
                sys.exit(f"juge run failed on {size} cases as {fmt} (exit {code}):\n{log}")
            store_bytes = sum(p.stat().st_size for p in folder.glob("juge.db*"))
            input_bytes = (folder / f"cases.{fmt}").stat().st_size
            rows.append((size, rss))
            print(
                f"{fmt:>10} {size:>10,} {mib(input_bytes):>10} {mib(store_bytes):>10} {mib(rss):>10} "
                f"{wall:>7.1f}s {LAST_CPU[0]:>7.1f}s {rss / TARGET_BYTES:>10.2f} {LAST_CPU[0] / size * 1e6:>6,.0f} µs",
                flush=True,
            )
        if len(rows) > 1:
            (n0, r0), (n1, r1) = rows[0], rows[-1]
            slopes[fmt] = (r1 - r0) / (n1 - n0)
    if slopes:
        print(f"\nslope: B of peak RSS per extra case ({sizes[0]:,} -> {sizes[-1]:,})")
        for fmt, slope in slopes.items():
            print(f"{fmt:>10} {slope:>8,.1f} B/case")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--judgments",
        type=int,
        nargs="+",
        default=[100_000, 1_000_000],
        help="sizes to run (recorded judgments; items = judgments / 4)",
    )
    parser.add_argument("--labelled", type=float, default=0.10, help="share of items with human votes")
    parser.add_argument("--answer-chars", type=int, default=500, help="mean characters per answer")
    parser.add_argument("--text-chars", type=int, default=400, help="mean characters of a judge's raw text")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (juge's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="write the data here and keep it (default: a temp dir)")
    parser.add_argument("--run", action="store_true", help="measure `juge run` instead of `juge calibrate`")
    parser.add_argument(
        "--cases", type=int, nargs="+", default=[100_000, 1_000_000], help="with --run: sizes (cases) to run"
    )
    parser.add_argument(
        "--formats", nargs="+", default=["jsonl"], choices=RUN_FORMATS, help="with --run: cases file formats"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="juge-bench-memory-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        if args.run:
            run_bench(root, args.cases, args.seed, args.formats)
            return
        base_rss, base_wall, _ = measure(
            [
                sys.executable,
                "-c",
                "import juge.cli, juge.calibration.inputs, juge.calibration.pairwise, juge.reports.terminal",
            ],
            root / "import.log",
        )
        print(f"baseline: python importing juge's calibrate path: peak RSS {mib(base_rss)}, {base_wall:.1f} s")
        print(
            f"target: peak RSS <= {mib(TARGET_BYTES)}; labelled share {args.labelled:.0%}, 2-5 votes each; "
            f"{args.resamples} resamples; --split all\n"
        )
        print(
            f"{'judgments':>10} {'items':>8} {'labelled':>8} {'input':>10} {'peak RSS':>10} {'wall':>8} "
            f"{'RSS/target':>10} {'RSS/input':>9} {'(RSS-base)/judgment':>20}"
        )
        for size in args.judgments:
            folder = root / f"n{size}"
            folder.mkdir(exist_ok=True)
            items, judgments, n_labelled = write_study(
                folder,
                size,
                labelled=args.labelled,
                answer_chars=args.answer_chars,
                text_chars=args.text_chars,
                seed=args.seed,
            )
            input_bytes = items.stat().st_size + judgments.stat().st_size
            log = folder / "calibrate.log"
            rss, wall, code = measure(
                [
                    sys.executable,
                    "-m",
                    "juge.cli",
                    "calibrate",
                    "--items",
                    str(items),
                    "--judgments",
                    str(judgments),
                    "--split",
                    "all",
                    "--resamples",
                    str(args.resamples),
                    "--json",
                    str(folder / "calibration.json"),
                ],
                log,
            )
            if code != 0:
                sys.exit(f"juge calibrate failed on {size} judgments (exit {code}):\n{log.read_text()[-3000:]}")
            per_judgment = (rss - base_rss) / size
            print(
                f"{size:>10,} {size // 4:>8,} {n_labelled:>8,} {mib(input_bytes):>10} {mib(rss):>10} "
                f"{wall:>7.1f}s {rss / TARGET_BYTES:>10.2f} {rss / input_bytes:>9.2f} "
                f"{per_judgment:>16,.0f} B",
                flush=True,
            )


if __name__ == "__main__":
    main()
