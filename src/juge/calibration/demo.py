"""`juge demo`: the calibration study on the embedded MT-Bench sample (no network, no key).

The data ships inside the package (``juge/demo_data``: items.jsonl, judgments.jsonl,
DATA.md with its attribution, SHA256SUMS) and is read with importlib.resources.

Hooks for later additions:
- extra judges (e.g. a local model run live): pass their pairwise ``Judgment`` records
  as ``extra_judgments``; they become one more judge key in every table;
- more outputs (e.g. report.html): everything goes to ``DemoResult.out_dir``, and the
  result keeps the table and the study dict for the writer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from importlib.resources import as_file, files
from pathlib import Path

from juge.calibration.pairtable import PairTable, add_judgments, build_pair_table
from juge.calibration.pairwise import Bootstrap, pairwise_study
from juge.calibration.results import Calibration, Dataset
from juge.data.adapters import CalibrationData, read_pairwise_items, read_recorded_judgments
from juge.data.records import Judgment
from juge.errors import InputError

DEMO_FILES = ("items.jsonl", "judgments.jsonl", "DATA.md", "SHA256SUMS")
DEFAULT_OUT_DIR = Path("juge-demo")


def demo_file(name: str):
    """A packaged demo data file (a Traversable; use importlib.resources.as_file for a path)."""
    if name not in DEMO_FILES:
        raise ValueError(f"no demo file {name!r}; there are {DEMO_FILES}")
    return files("juge").joinpath("demo_data", name)


def verify_demo_data() -> None:
    """Check the packaged files against SHA256SUMS (a damaged install must not give figures)."""
    for line in demo_file("SHA256SUMS").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        digest, name = line.split()
        actual = hashlib.sha256(demo_file(name.lstrip("*")).read_bytes()).hexdigest()
        if actual != digest:
            raise InputError(f"demo data {name} does not match its SHA256SUMS: reinstall juge")


def load_demo_data() -> tuple[CalibrationData, list[Judgment]]:
    """The embedded items (with votes and the gpt4_2023 baseline) and the recorded judge calls."""
    verify_demo_data()
    with as_file(demo_file("items.jsonl")) as items, as_file(demo_file("judgments.jsonl")) as judgments:
        data = read_pairwise_items(items)
        recorded = read_recorded_judgments(judgments)
    data.sources["judgments"] = hashlib.sha256(demo_file("judgments.jsonl").read_bytes()).hexdigest()
    return data, recorded


def load_demo_table(extra_judgments: Iterable[Judgment] = ()) -> PairTable:
    """The per-item table of the embedded sample, with any extra judgments as more judge keys."""
    data, recorded = load_demo_data()
    table = build_pair_table(data.cases, data.labels, recorded, baselines=data.baselines, sources=data.sources)
    return add_judgments(table, extra_judgments)


def study_of_demo(
    *,
    split: str = "dev",
    extra_judgments: Iterable[Judgment] = (),
    boot: Bootstrap = Bootstrap(),
    progress: Callable[[str, int, int], None] | None = None,
) -> Calibration:
    """The study on the embedded sample, with the dataset's name and attribution."""
    study = pairwise_study(load_demo_table(extra_judgments), split=split, boot=boot, progress=progress)
    study.dataset = Dataset(
        name="MT-Bench calibration sample (embedded)",
        attribution="Human votes: MT-Bench human judgments, LMSYS, Zheng et al. 2023 "
        "(arXiv:2306.05685), CC BY 4.0. Questions, categories and reference answers: "
        "lm-sys/FastChat, Apache-2.0. See juge/demo_data/DATA.md.",
    )
    return study
