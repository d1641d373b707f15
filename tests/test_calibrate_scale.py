"""`juge calibrate` at scale: the readers stream, and a pairwise study keeps only the calls it can use.

The figures behind these bounds are in bench/memory.py (peak RSS on a million recorded calls).
"""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest

from juge.data.adapters import iter_recorded_judgments, read_pairwise_items, read_recorded_judgments
from juge.data.readers import iter_rows, read_rows
from juge.errors import InputError
from juge.study.calibrate import Bootstrap, pairwise_study
from juge.study.inputs import calls_a_pair_study_uses, default_split, load_inputs, run_study
from juge.study.pairtable import build_pair_table

JUDGES = (("small", "model-s1"), ("strong", "model-x1"))


def write_study(folder: Path, n_items: int, *, labelled_every: int, text_chars: int, seed: int = 0) -> None:
    """items.jsonl (votes on every `labelled_every`-th item) and judgments.jsonl (2 judges x 2 orders).

    Versions that appear only on unlabelled items, so the filter must keep them: judge `small` switches
    to model `model-s2` on the last item, and a judge `late` with its own template judges only that item.
    """
    rng = random.Random(seed)
    with (folder / "items.jsonl").open("w") as items, (folder / "judgments.jsonl").open("w") as calls:
        for i in range(n_items):
            votes = [{"rater_id": f"r{r}", "label": rng.choice(("A", "B", "tie"))} for r in range(rng.randint(2, 4))]
            items.write(json.dumps({
                "item_id": f"it{i}", "question_id": i // 3, "category": ("math", "writing")[i % 2],
                "split": ("dev", "holdout")[(i // 3) % 2], "question": "q", "answer_1": "a" * rng.randint(1, 40),
                "answer_2": "b" * rng.randint(1, 40), "human_ratings": votes if i % labelled_every == 0 else [],
            }) + "\n")
            last = i == n_items - 1
            judges = [*JUDGES, ("late", "model-l1")] if last else JUDGES
            for judge, model in judges:
                for order in ("12", "21"):
                    letter = rng.choice("ABC")
                    calls.write(json.dumps({
                        "item_id": f"it{i}", "judge": judge, "model": "model-s2" if last and judge == "small" else model,
                        "prompt": "late-v1" if judge == "late" else "pair-v2", "order": order, "letter": letter,
                        "outcome": "ok", "text": "x" * text_chars + f" [[{letter}]]",
                    }) + "\n")


def test_reading_recorded_calls_streams_the_file(tmp_path: Path) -> None:
    # 10,000 calls of ~1.5 kB, none on a labelled item: a reader that holds every row (or every Judgment)
    # peaks above the file's size; a streaming one at its per-item duplicate check plus one row (~1/16).
    write_study(tmp_path, 2_500, labelled_every=10**9, text_chars=1_500)
    path = tmp_path / "judgments.jsonl"
    size = path.stat().st_size
    keep = calls_a_pair_study_uses([])
    tracemalloc.start()
    try:
        kept = [j for j in iter_recorded_judgments(path) if keep(j)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(j.judge, j.model) for j in kept] == [("small", "model-s1"), ("strong", "model-x1"),
                                                  ("small", "model-s2"), ("late", "model-l1")]
    assert peak < size / 8, f"reading {size:,} bytes of calls peaked at {peak:,} bytes"


def test_the_filtered_study_equals_the_study_on_every_call(tmp_path: Path) -> None:
    write_study(tmp_path, 300, labelled_every=7, text_chars=20)
    inputs = load_inputs(items=tmp_path / "items.jsonl", judgments=[tmp_path / "judgments.jsonl"])
    every_call = read_recorded_judgments(tmp_path / "judgments.jsonl")
    labelled = {lab.item_id for lab in inputs.data.labels}
    assert len(labelled) == 43
    on_labelled = [j for j in every_call if j.item_id in labelled]
    # the calls on labelled items, plus the first call of each (judge, template, model) elsewhere
    assert len(inputs.judgments) == len(on_labelled) + 4
    boot = Bootstrap(n_resamples=50, seed=1)
    data = read_pairwise_items(tmp_path / "items.jsonl")
    table = build_pair_table(data.cases, data.labels, every_call, baselines=data.baselines, sources=inputs.data.sources)
    assert run_study(inputs, split="all", boot=boot) == {**pairwise_study(table, split="all", boot=boot),
                                                         "notes": run_study(inputs, split="all", boot=boot)["notes"]}
    assert list(table.judges) == ["small/pair-v2", "strong/pair-v2", "late/late-v1", "longer answer"]
    assert table.judges["small/pair-v2"].models == ["model-s1", "model-s2"]


def test_a_study_keeps_unlabelled_items_only_as_ids_and_splits(tmp_path: Path) -> None:
    write_study(tmp_path, 300, labelled_every=7, text_chars=20)
    paths = {"items": tmp_path / "items.jsonl", "judgments": [tmp_path / "judgments.jsonl"]}
    full, lean = load_inputs(**paths), load_inputs(**paths, lean=True)
    assert len(full.data.cases) == 300 and full.data.left_out.ids == set()
    assert len(lean.data.cases) == 43 and len(lean.data.left_out.ids) == 257
    assert {c.id for c in lean.data.cases} | lean.data.left_out.ids == {c.id for c in full.data.cases}
    boot = Bootstrap(n_resamples=50, seed=1)
    assert run_study(lean, split="dev", boot=boot) == run_study(full, split="dev", boot=boot)
    assert default_split(lean, None) == "dev"
    # a split only unlabelled items are in still exists, and the items read are still counted
    only_dev = tmp_path / "only_dev.jsonl"
    rows = [json.loads(line) for line in paths["items"].read_text().splitlines()]
    only_dev.write_text("".join(json.dumps({**r, "human_ratings": r["human_ratings"] if r["split"] == "dev" else []})
                                + "\n" for r in rows))
    lean = load_inputs(items=only_dev, judgments=paths["judgments"], lean=True)
    assert {c.split for c in lean.data.cases} == {"dev"} and default_split(lean, "holdout") == "holdout"
    with pytest.raises(InputError, match=r"no item in split 'holdout' has a human label \(300 items, "):
        run_study(lean, split="holdout", boot=boot)


def test_a_judge_only_on_unlabelled_items_can_still_be_named(tmp_path: Path) -> None:
    write_study(tmp_path, 30, labelled_every=7, text_chars=20)
    inputs = load_inputs(items=tmp_path / "items.jsonl", judgments=[tmp_path / "judgments.jsonl"], judges=["late"])
    assert {j.judge for j in inputs.judgments} == {"late"}
    with pytest.raises(InputError, match=r"--judge nobody: no judgment by that judge \(present: late, small, strong\)"):
        load_inputs(items=tmp_path / "items.jsonl", judgments=[tmp_path / "judgments.jsonl"], judges=["nobody"])


def test_streamed_rows_keep_line_numbers_bom_and_utf8_errors(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n\n  \r\n{"a": 2}\r\n{"a": "\xff"}\n')
    rows = iter_rows(path)
    assert next(rows) == (1, {"a": 1})
    assert next(rows) == (4, {"a": 2})
    # byte 31 counted after the BOM, on line 5, as a whole-file decode reports it
    with pytest.raises(InputError, match=r"rows\.jsonl:5: not UTF-8 \(byte 31\)"):
        next(rows)
    path.write_bytes(b"\n  \n")
    with pytest.raises(InputError, match="file is empty"):
        read_rows(path)


def test_a_repeat_that_is_no_whole_number_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    call = {"item_id": "it0", "judge": "small", "model": "m", "prompt": "p", "order": "12", "letter": "A",
            "outcome": "ok", "text": "[[A]]"}
    path.write_text(json.dumps(call) + "\n" + json.dumps({**call, "order": "21", "repeat": "x"}) + "\n")
    with pytest.raises(InputError, match=r"calls\.jsonl:2: field 'repeat': repeat 'x' is not a whole number"):
        read_recorded_judgments(path)
