"""End to end: `juge demo` on the embedded sample, checked against a naive recomputation from the raw files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

from juge.calibration.demo import demo_file, load_demo_table

SHARED = Path("/work/shared/data/mtbench-sample")


def raw_rows(name: str) -> list[dict]:
    return [json.loads(line) for line in demo_file(name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> tuple[dict, str, Path]:
    out = tmp_path_factory.mktemp("demo") / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "juge.cli", "demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "calibration.json").read_text(encoding="utf-8")), proc.stdout, out


def test_embedded_data_is_the_shared_sample() -> None:
    if not SHARED.exists():
        pytest.skip("shared sample not on this machine")
    for name in ("items.jsonl", "judgments.jsonl", "DATA.md", "SHA256SUMS"):
        assert demo_file(name).read_bytes() == (SHARED / name).read_bytes()
    assert "CC BY 4.0" in demo_file("DATA.md").read_text(encoding="utf-8")


def test_demo_ceiling_matches_naive_recomputation(demo_run) -> None:
    result, _, _ = demo_run
    dev = [r for r in raw_rows("items.jsonl") if r["split"] == "dev"]
    pairs = [(a["label"], b["label"]) for r in dev for a, b in combinations(r["human_ratings"], 2)]
    assert result["split"] == "dev"
    assert result["n_items"] == len(dev) == 155
    assert result["n_votes"] == sum(len(r["human_ratings"]) for r in dev)
    assert result["ceiling"]["n_pairs"] == len(pairs)
    assert result["ceiling"]["agreement"]["value"] == pytest.approx(sum(a == b for a, b in pairs) / len(pairs))
    no_tie = [(a, b) for a, b in pairs if "tie" not in (a, b)]
    assert result["ceiling"]["agreement_without_ties"]["value"] == pytest.approx(
        sum(a == b for a, b in no_tie) / len(no_tie)
    )

    def has_majority(r: dict) -> bool:
        top = Counter(v["label"] for v in r["human_ratings"]).most_common(2)
        return len(top) == 1 or top[0][1] > top[1][1]

    assert result["n_without_majority"] == sum(not has_majority(r) for r in dev) == 33


def test_demo_judge_figures_match_naive_recomputation(demo_run) -> None:
    result, _, _ = demo_run
    dev = {r["item_id"]: r for r in raw_rows("items.jsonl") if r["split"] == "dev"}
    letters: dict[tuple[str, str], str | None] = {}
    for j in raw_rows("judgments.jsonl"):
        if j["judge"] == "chat-small" and j["prompt"] == "pair-v2" and j["item_id"] in dev:
            letters[(j["item_id"], j["order"])] = j["letter"]
    fixed_21 = {"A": "B", "B": "A", "C": "tie"}
    fixed_12 = {"A": "A", "B": "B", "C": "tie"}
    agree = total = flips = judged = 0
    for item_id, row in dev.items():
        first, second = letters.get((item_id, "12")), letters.get((item_id, "21"))
        if first is None or second is None:
            continue
        judged += 1
        verdict = fixed_12[first] if fixed_12[first] == fixed_21[second] else "tie"
        flips += fixed_12[first] != fixed_21[second]
        for vote in row["human_ratings"]:
            agree += vote["label"] == verdict
            total += 1
    judge = result["judges"]["chat-small/pair-v2"]
    assert judge["vs_people"]["agreement"]["value"] == pytest.approx(agree / total)
    assert judge["vs_people"]["agreement"]["n"] == total
    assert judge["order_flip_rate"]["value"] == pytest.approx(flips / judged)
    low, high = judge["vs_people"]["agreement"]["low"], judge["vs_people"]["agreement"]["high"]
    assert low < agree / total < high
    # The one unparsed call of the sample is counted on its own line, never as a verdict.
    small_math = result["judges"]["chat-small/pair-math-v1"]
    dev_math_unparsed = sum(
        1
        for j in raw_rows("judgments.jsonl")
        if j["outcome"] == "unparsed" and j["prompt"] == "pair-math-v1" and j["item_id"] in dev
    )
    assert small_math["outcomes"]["unparsed"] == dev_math_unparsed
    assert small_math["verdict_counts"]["missing"] == dev_math_unparsed


def test_demo_output_and_versions(demo_run) -> None:
    result, stdout, out = demo_run
    assert set(result["judges"]) == {
        "chat-small/pair-v2",
        "chat-strong/pair-v2",
        "chat-small/pair-math-v1",
        "chat-strong/pair-math-v1",
        "gpt4_2023",
        "longer answer",
    }
    assert result["versions"]["judges"]["chat-strong/pair-v2"]["models"] == ["gpt-6.1-sol-2026-09-29"]
    expected = demo_file("SHA256SUMS").read_text(encoding="utf-8").split()
    assert result["versions"]["sources_sha256"]["items"] == expected[expected.index("items.jsonl") - 1]
    assert len(result["reference"]) == 2
    assert set(result["per_category"]) == {
        "writing",
        "roleplay",
        "reasoning",
        "math",
        "coding",
        "extraction",
        "stem",
        "humanities",
    }
    for text in (
        "Ceiling: person vs person",
        "Judges against people",
        "Calls by outcome",
        "Order and length bias",
        "Per category",
        "Reference answer",
        "not comparable with the ceiling",
        "next:",
    ):
        assert text in stdout
    assert (out / "calibration.json").exists()


def test_extra_judgments_become_another_judge_key() -> None:
    from juge.data.records import Judgment

    table = load_demo_table()
    item = table.split("dev").items[0]
    extra = [
        Judgment(
            item_id=item.item_id,
            judge="local",
            model="gemma-3-270m",
            template="pair-v2",
            order=o,
            verdict=letter,
            outcome="ok",
        )
        for o, letter in (("12", "A"), ("21", "B"))
    ]
    table = load_demo_table(extra)
    assert "local/pair-v2" in table.judges
    assert [it.judges["local/pair-v2"].verdict for it in table.items if "local/pair-v2" in it.judges] == ["A"]


def test_demo_data_is_package_data(tmp_path: Path) -> None:
    """A plain (non-editable) build carries the demo files, so `juge demo` works after `pip install`."""
    import juge

    root = Path(juge.__file__).resolve().parents[2]
    if not (root / "pyproject.toml").exists():
        pytest.skip("not running from a source tree")
    proc = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py", "--build-lib", str(tmp_path)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("items.jsonl", "judgments.jsonl", "DATA.md", "SHA256SUMS"):
        assert (tmp_path / "juge" / "demo_data" / name).read_bytes() == demo_file(name).read_bytes()


def test_every_path_the_demos_hints_name_exists_from_where_it_ran(tmp_path: Path) -> None:
    """The next-step hints name the files the demo wrote, as paths from the current folder (issue 30): pasting a
    hint where the demo ran finds every file it names."""
    import shlex

    proc = subprocess.run(
        [sys.executable, "-m", "juge.cli", "demo", "--resamples", "100"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "80"},  # narrow: the long hints are continued with " \"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    wrote = [line.split()[1] for line in lines if line.startswith("wrote ")]
    commands: list[str] = []  # a command continued with " \\" is one command
    for line in lines[lines.index("next:") + 1 :]:
        if line.strip().startswith("#"):
            continue
        if commands and commands[-1].endswith(" \\"):
            commands[-1] = commands[-1][:-2] + " " + line.strip()
        else:
            commands.append(line.strip())
    assert commands and any("--items" in c for c in commands), proc.stdout
    named: list[str] = []
    for command in commands:
        words = shlex.split(command, comments=True)
        # A placeholder (DIR) is no path: its comment says what to put there.
        named += [
            w
            for prev, w in zip(words, words[1:])
            if prev in ("--items", "--judgments", "--labels", "--from-hf") and not w.isupper()
        ]
        named += [w for w in words if "/" in w or w.endswith((".json", ".jsonl", ".html"))]
    assert {"juge-demo/items.jsonl", "juge-demo/judgments.jsonl"} <= set(named)
    for path in [*wrote, *named]:
        assert (tmp_path / path).exists(), f"{path} named by the demo's output is not in {tmp_path}"
    # The files the hint reads are the demo's inputs: the same study from them gives the same figures.
    assert (tmp_path / "juge-demo" / "items.jsonl").read_bytes() == demo_file("items.jsonl").read_bytes()
