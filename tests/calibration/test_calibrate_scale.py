"""`juge calibrate` at scale: the readers stream, and a pairwise study keeps only the calls it can use.

The figures behind these bounds are in bench/memory.py (peak RSS on a million recorded calls).
"""

from __future__ import annotations

import json
import random
import sys
import tracemalloc
from pathlib import Path

import pytest

from juge.calibration.inputs import calls_a_pair_study_uses, default_split, load_inputs, run_study
from juge.calibration.pairtable import build_pair_table
from juge.calibration.pairwise import Bootstrap, pairwise_study
from juge.data.adapters import (
    iter_recorded_calls,
    iter_recorded_judgments,
    read_pairwise_items,
    read_recorded_judgments,
)
from juge.data.readers import iter_rows, read_rows
from juge.data.records import RecordedCall
from juge.errors import InputError

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
            items.write(
                json.dumps(
                    {
                        "item_id": f"it{i}",
                        "question_id": i // 3,
                        "category": ("math", "writing")[i % 2],
                        "split": ("dev", "holdout")[(i // 3) % 2],
                        "question": "q",
                        "answer_1": "a" * rng.randint(1, 40),
                        "answer_2": "b" * rng.randint(1, 40),
                        "human_ratings": votes if i % labelled_every == 0 else [],
                    }
                )
                + "\n"
            )
            last = i == n_items - 1
            judges = [*JUDGES, ("late", "model-l1")] if last else JUDGES
            for judge, model in judges:
                for order in ("12", "21"):
                    letter = rng.choice("ABC")
                    calls.write(
                        json.dumps(
                            {
                                "item_id": f"it{i}",
                                "judge": judge,
                                "model": "model-s2" if last and judge == "small" else model,
                                "prompt": "late-v1" if judge == "late" else "pair-v2",
                                "order": order,
                                "letter": letter,
                                "outcome": "ok",
                                "text": "x" * text_chars + f" [[{letter}]]",
                            }
                        )
                        + "\n"
                    )


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
    assert [(j.judge, j.model) for j in kept] == [
        ("small", "model-s1"),
        ("strong", "model-x1"),
        ("small", "model-s2"),
        ("late", "model-l1"),
    ]
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
    studied = run_study(inputs, split="all", boot=boot).to_dict()
    assert studied == {
        **pairwise_study(table, split="all", boot=boot).to_dict(),
        "notes": studied["notes"],
        "counts": studied["counts"],
    }
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
    assert run_study(lean, split="dev", boot=boot).to_dict() == run_study(full, split="dev", boot=boot).to_dict()
    assert default_split(lean, None) == "dev"
    # a split only unlabelled items are in still exists, and the items read are still counted
    only_dev = tmp_path / "only_dev.jsonl"
    rows = [json.loads(line) for line in paths["items"].read_text().splitlines()]
    only_dev.write_text(
        "".join(
            json.dumps({**r, "human_ratings": r["human_ratings"] if r["split"] == "dev" else []}) + "\n" for r in rows
        )
    )
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
    call = {
        "item_id": "it0",
        "judge": "small",
        "model": "m",
        "prompt": "p",
        "order": "12",
        "letter": "A",
        "outcome": "ok",
        "text": "[[A]]",
    }
    path.write_text(json.dumps(call) + "\n" + json.dumps({**call, "order": "21", "repeat": "x"}) + "\n")
    with pytest.raises(InputError, match=r"calls\.jsonl:2: field 'repeat': repeat 'x' is not a whole number"):
        read_recorded_judgments(path)


def retained_bytes_per_call_beyond_texts(read) -> tuple[float, list]:
    """(bytes still allocated after `read()` per call it returns, not counting the calls' texts; the result)."""
    tracemalloc.start()
    try:
        result = read()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    calls = result if isinstance(result, list) else result.judgments
    return (held - sum(sys.getsizeof(c.text) for c in calls)) / len(calls), result


def test_a_study_holds_a_fraction_of_a_judgment_per_call(tmp_path: Path) -> None:
    # Every item labelled, 4,000 calls: a Judgment per call holds ~1.3 kB besides its text, and a lean read
    # that keeps Judgments, Cases and HumanLabels ~2.2 kB per call; the compact records ~150 and ~250 bytes.
    write_study(tmp_path, 1_000, labelled_every=1, text_chars=200)
    path = tmp_path / "judgments.jsonl"
    per_call, calls = retained_bytes_per_call_beyond_texts(lambda: list(iter_recorded_calls(path)))
    assert len(calls) == 4_002 and per_call < 300, per_call
    per_call, inputs = retained_bytes_per_call_beyond_texts(
        lambda: load_inputs(items=tmp_path / "items.jsonl", judgments=[path], lean=True)
    )
    assert len(inputs.judgments) == 4_002 and per_call < 500, per_call
    boot = Bootstrap(n_resamples=20, seed=0)
    full = load_inputs(items=tmp_path / "items.jsonl", judgments=[path])
    assert run_study(inputs, split="all", boot=boot).to_dict() == run_study(full, split="all", boot=boot).to_dict()


GOOD_CALL = {
    "item_id": "it0",
    "judge": "small",
    "model": "m",
    "prompt": "p",
    "order": "12",
    "letter": "A",
    "outcome": "ok",
    "text": "[[A]]",
}
GRADE_CALL = {**{k: v for k, v in GOOD_CALL.items() if k not in ("order", "letter")}, "item_id": "it4", "verdict": 3}


def test_compact_calls_hold_what_judgments_hold(tmp_path: Path) -> None:
    # calls a Judgment converts (token counts as text or float, a number or object as verdict) take its path
    rows = [
        GOOD_CALL,
        {**GOOD_CALL, "order": "21", "letter": None, "outcome": "refused", "tokens_in": "7"},
        {**GOOD_CALL, "repeat": 1, "tokens_out": 40.0, "at": "2026-10-09T19:56:20-04:00"},
        {**GRADE_CALL, "item_id": 3, "verdict": 4},
        {**GRADE_CALL, "verdict": {"score": 2}, "model": None},
        {**GRADE_CALL, "item_id": "it5", "verdict": True},
    ]
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    judgments = read_recorded_judgments(path)
    calls = list(iter_recorded_calls(path))
    assert calls == [RecordedCall(*(getattr(j, name) for name in RecordedCall._fields)) for j in judgments]
    assert [c.verdict for c in calls] == ["A", None, "A", 4, {"score": 2}, True]
    assert (calls[3].item_id, calls[4].model, calls[1].outcome) == ("3", "unknown", "refused")


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            {"tokens_in": 2.5},
            r"calls\.jsonl:4: field 'tokens_in': Input should be a valid integer, got a number with a "
            r"fractional part",
        ),
        ({"outcome": "unparsed"}, r"calls\.jsonl:4: field 'letter': a call with outcome 'unparsed' cannot carry"),
        (
            {**GRADE_CALL, "verdict": ["A"], "item_id": "it9"},
            r"calls\.jsonl:4: field 'verdict\.str': Input should be a valid string",
        ),
        ({"at": "yesterday"}, r"calls\.jsonl:4: field 'at': not an ISO timestamp: 'yesterday'"),
        (
            {"item_id": "it1", "order": "21", "letter": "B"},
            r"calls\.jsonl:4: duplicate call for item 'it1', judge "
            r"'small', template 'p', order '21' \(first on line 2\)",
        ),
    ],
)
def test_compact_calls_fail_as_judgments_fail(tmp_path: Path, bad: dict, message: str) -> None:
    # `bad` is the fourth call, or what it changes in a good one
    path = tmp_path / "calls.jsonl"
    rows = [
        GOOD_CALL,
        {**GOOD_CALL, "item_id": "it1", "order": "21", "letter": "B"},
        {**GOOD_CALL, "item_id": "it1", "repeat": 1},
        bad if "judge" in bad else {**GOOD_CALL, "item_id": "it9", **bad},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for read in (read_recorded_judgments, lambda p: list(iter_recorded_calls(p))):
        with pytest.raises(InputError, match=message):
            read(path)


def test_a_lone_surrogate_in_a_rater_id_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(
        '{"item_id": "x", "answer_1": "a", "answer_2": "b", '
        '"human_ratings": [{"rater_id": "r\\ud800", "label": "A"}]}\n'
    )
    for lean in (False, True):
        with pytest.raises(
            InputError,
            match=r"items\.jsonl:1: field 'human_ratings\[0\]\.rater_id': holds a lone "
            r"surrogate escape",
        ):
            read_pairwise_items(path, lean=lean)


def test_duplicates_are_found_past_the_first_64_call_keys(tmp_path: Path) -> None:
    # 150 templates on each of two items: keys numbered 64 and up are checked as (item, key) pairs
    rows = [{**GOOD_CALL, "item_id": item, "prompt": f"t{k}"} for item in ("it0", "it1") for k in range(150)]
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert len(list(iter_recorded_calls(path))) == 300
    for k in (3, 100):
        path.write_text("".join(json.dumps(row) + "\n" for row in [*rows, rows[150 + k]]))
        with pytest.raises(
            InputError,
            match=rf"calls\.jsonl:301: duplicate call for item 'it1', judge 'small', "
            rf"template 't{k}', order '12' \(first on line {151 + k}\)",
        ):
            list(iter_recorded_calls(path))
