"""Loaders (sample layout, official MT-Bench export, rated items) and `juge calibrate` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli, write_jsonl
from juge.data.adapters import (
    parse_scale,
    read_mtbench_human_judgments,
    read_rated_items,
    read_recorded_judgments,
)
from juge.errors import InputError


def conversation(question: str, answer: str, second: tuple[str, str] | None = None) -> list[dict]:
    turns = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    if second:
        turns += [{"role": "user", "content": second[0]}, {"role": "assistant", "content": second[1]}]
    return turns


def hf_row(qid: int, model_a: str, model_b: str, winner: str, judge, turn: int = 1) -> dict:
    return {
        "question_id": qid,
        "model_a": model_a,
        "model_b": model_b,
        "winner": winner,
        "judge": judge,
        "conversation_a": conversation(f"q{qid}", f"answer of {model_a}", (f"q{qid} again", f"{model_a} 2nd")),
        "conversation_b": conversation(f"q{qid}", f"answer of {model_b}", (f"q{qid} again", f"{model_b} 2nd")),
        "turn": turn,
    }


@pytest.fixture()
def hf_dir(tmp_path: Path) -> Path:
    """A small export mimicking lmsys/mt_bench_human_judgments: human as a JSON list, gpt4_pair as JSON lines."""
    human = [
        hf_row(81, "vicuna-13b", "alpaca-13b", "model_a", "expert_1"),  # swapped: answer 1 = alpaca -> B
        hf_row(81, "alpaca-13b", "vicuna-13b", "model_b", "expert_2"),  # answer 2 (vicuna) better -> B
        hf_row(81, "alpaca-13b", "vicuna-13b", "tie (bothbad)", "author_3"),
        hf_row(81, "alpaca-13b", "vicuna-13b", "model_b", "expert_2"),  # repeated vote: kept once
        hf_row(115, "gpt-4", "claude-v1", "model_b", "expert_4"),  # math; swapped: claude first -> A
        hf_row(115, "gpt-4", "claude-v1", "model_a", "expert_5"),  # answer 2 (gpt-4) better -> B
        hf_row(115, "gpt-4", "claude-v1", "model_a", "expert_5", turn=2),  # other turn: ignored for turn 1
    ]
    (tmp_path / "human_judgments.json").write_text(json.dumps(human), encoding="utf-8")
    write_jsonl(
        tmp_path / "gpt4_pair_judgments.jsonl",
        [
            hf_row(81, "vicuna-13b", "alpaca-13b", "model_b", ["gpt-4", "pair-v2"]),  # alpaca -> A
            hf_row(115, "claude-v1", "gpt-4", "tie (inconsistent)", ["gpt-4", "pair-math-v1"]),
        ],
    )
    return tmp_path


def test_mtbench_export_votes_in_fixed_alphabetical_order(hf_dir: Path) -> None:
    data = read_mtbench_human_judgments(hf_dir)
    cases = {c.id: c for c in data.cases}
    assert set(cases) == {"mtb-q81-alpaca-13b-vs-vicuna-13b", "mtb-q115-claude-v1-vs-gpt-4"}
    pair = cases["mtb-q81-alpaca-13b-vs-vicuna-13b"]
    assert (pair.output_1, pair.output_2, pair.category, pair.group) == (
        "answer of alpaca-13b",
        "answer of vicuna-13b",
        "writing",
        "81",
    )
    votes = {(lab.item_id, lab.rater_id): lab.label for lab in data.labels}
    assert votes == {
        ("mtb-q81-alpaca-13b-vs-vicuna-13b", "expert_1"): "B",
        ("mtb-q81-alpaca-13b-vs-vicuna-13b", "expert_2"): "B",
        ("mtb-q81-alpaca-13b-vs-vicuna-13b", "author_3"): "tie",
        ("mtb-q115-claude-v1-vs-gpt-4", "expert_4"): "A",
        ("mtb-q115-claude-v1-vs-gpt-4", "expert_5"): "B",
    }
    assert cases["mtb-q115-claude-v1-vs-gpt-4"].category == "math"
    assert data.baselines["gpt4_2023"] == {
        "mtb-q81-alpaca-13b-vs-vicuna-13b": "A",
        "mtb-q115-claude-v1-vs-gpt-4": "inconsistent",
    }
    assert set(data.sources) == {"human", "gpt4_pair"}


def test_mtbench_export_second_turn(hf_dir: Path) -> None:
    data = read_mtbench_human_judgments(hf_dir, turn=2)
    (case,) = data.cases
    assert case.id == "mtb-q115-claude-v1-vs-gpt-4-t2"
    assert case.output_2 == "gpt-4 2nd"
    assert [lab.label for lab in data.labels] == ["B"]


def test_mtbench_export_bad_winner_names_file_and_line(tmp_path: Path) -> None:
    write_jsonl(
        tmp_path / "human.jsonl",
        [hf_row(81, "a", "b", "model_a", "expert_1"), hf_row(82, "a", "b", "model_c", "expert_1")],
    )
    with pytest.raises(InputError, match=r"human\.jsonl:2: field 'winner'"):
        read_mtbench_human_judgments(tmp_path)


def test_recorded_judgments_errors_name_line_and_field(tmp_path: Path) -> None:
    good = {
        "item_id": "i",
        "judge": "j",
        "model": "m",
        "prompt": "p",
        "order": "12",
        "letter": "A",
        "outcome": "ok",
        "text": "[[A]]",
    }
    path = write_jsonl(tmp_path / "j.jsonl", [good, {**good, "order": "13"}])
    with pytest.raises(InputError, match=r"j\.jsonl:2: field 'order'"):
        read_recorded_judgments(path)
    path = write_jsonl(tmp_path / "j.jsonl", [{**good, "outcome": "unparsed"}])
    with pytest.raises(InputError, match=r"j\.jsonl:1: field 'letter': a call with outcome 'unparsed'"):
        read_recorded_judgments(path)
    path = write_jsonl(tmp_path / "j.jsonl", [good, good])
    with pytest.raises(InputError, match=r"j\.jsonl:2: duplicate call .*first on line 1"):
        read_recorded_judgments(path)
    (j,) = read_recorded_judgments(write_jsonl(tmp_path / "j.jsonl", [good]))
    assert (j.template, j.order, j.verdict, j.outcome) == ("p", "12", "A", "ok")


def test_rated_items_with_scale(tmp_path: Path) -> None:
    path = tmp_path / "rated.csv"
    path.write_text(
        "id,output,rating_1,rating_2,old_judge\na,hello,Bad,Could be Improved,2\nb,bye,Excellent,,4\n", encoding="utf-8"
    )
    scale = parse_scale("Bad=1,'Could be Improved'=2,Acceptable=3,Excellent=4")
    assert scale == {"Bad": 1.0, "Could be Improved": 2.0, "Acceptable": 3.0, "Excellent": 4.0}
    data = read_rated_items(path, label_cols=["rating_1", "rating_2"], scale=scale, baseline_cols=["old_judge"])
    assert [(lab.item_id, lab.rater_id, lab.label) for lab in data.labels] == [
        ("a", "rating_1", 1.0),
        ("a", "rating_2", 2.0),
        ("b", "rating_1", 4.0),
    ]
    assert data.baselines == {"old_judge": {"a": 2.0, "b": 4.0}}
    path.write_text("id,output,rating_1\na,x,Good\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"rated\.csv:2: field 'rating_1': value 'Good' is not in --scale"):
        read_rated_items(path, label_cols=["rating_1"], scale=scale)
    with pytest.raises(InputError, match="no column 'rating_9'"):
        read_rated_items(path, label_cols=["rating_9"])


def sample_items(tmp_path: Path) -> Path:
    rows = []
    for k, labels in enumerate((["A", "A"], ["B", "tie"], ["B", "B", "A"])):
        rows.append(
            {
                "item_id": f"i{k}",
                "question_id": 81 + k,
                "category": "writing",
                "split": "dev",
                "question": "q",
                "answer_1": "short",
                "answer_2": "a longer answer",
                "reference": None,
                "human_ratings": [{"rater_id": f"r{n}", "label": lab} for n, lab in enumerate(labels)],
                "gpt4_2023": {"label": "A"},
            }
        )
    return write_jsonl(tmp_path / "items.jsonl", rows)


def test_calibrate_cli_writes_json(tmp_path: Path, monkeypatch, capsys) -> None:
    items = sample_items(tmp_path)
    calls = [
        {
            "item_id": f"i{k}",
            "judge": "j",
            "model": "m-1",
            "prompt": "pair-v2",
            "order": o,
            "letter": letter,
            "outcome": "ok",
            "text": "x",
        }
        for k in range(3)
        for o, letter in (("12", "A"), ("21", "B"))
    ]
    judgments = write_jsonl(tmp_path / "judgments.jsonl", calls)
    out_json = tmp_path / "out" / "calibration.json"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(items),
        "--judgments",
        str(judgments),
        "--json",
        str(out_json),
        "--resamples",
        "50",
    )
    assert code == 0, err
    result = json.loads(out_json.read_text())
    assert result["split"] == "dev"
    assert set(result["judges"]) == {"j/pair-v2", "gpt4_2023", "longer answer"}
    assert result["judges"]["j/pair-v2"]["vs_people"]["agreement"]["value"] == pytest.approx(3 / 7)
    assert result["versions"]["judges"]["j/pair-v2"]["models"] == ["m-1"]
    assert len(result["versions"]["sources_sha256"]["items"]) == 64
    assert "Ceiling: person vs person" in out and "j/pair-v2" in out
    assert not list(out_json.parent.glob(".*.tmp"))


def test_calibrate_cli_errors_exit_2_with_file_and_line(tmp_path: Path, monkeypatch, capsys) -> None:
    items = sample_items(tmp_path)
    bad = tmp_path / "judgments.jsonl"
    bad.write_text(
        '{"item_id": "i0", "judge": "j", "prompt": "p", "order": "12", "letter": "A", "outcome": "ok"}\n{not json\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(monkeypatch, capsys, "calibrate", "--items", str(items), "--judgments", str(bad))
    assert code == 2
    assert "judgments.jsonl:2" in err and "malformed JSON" in err
    code, _, err = run_cli(monkeypatch, capsys, "calibrate", "--items", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "nope.jsonl" in err and "not found" in err
    code, _, err = run_cli(monkeypatch, capsys, "calibrate", "--items", str(items), "--split", "holdout")
    assert code == 2 and "no item is in that split" in err
    code, _, err = run_cli(monkeypatch, capsys, "calibrate")
    assert code == 2 and "--items" in err


def test_calibrate_cli_from_hf(hf_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    out_json = tmp_path / "hf.json"
    code, out, err = run_cli(
        monkeypatch, capsys, "calibrate", "--from-hf", str(hf_dir), "--json", str(out_json), "--resamples", "50"
    )
    assert code == 0, err
    result = json.loads(out_json.read_text())
    assert result["split"] == "all"
    assert (result["n_items"], result["n_votes"]) == (2, 5)
    assert result["judges"]["gpt4_2023"]["verdict_counts"]["inconsistent"] == 1


def test_calibrate_cli_rated_items(tmp_path: Path, monkeypatch, capsys) -> None:
    path = tmp_path / "rated.csv"
    path.write_text(
        "id,output,rating_1,rating_2,old_judge\n"
        + "".join(f"i{k},x,{1 + k % 4},{1 + (k + k // 3) % 4},{1 + (k + 1) % 4}\n" for k in range(12)),
        encoding="utf-8",
    )
    out_json = tmp_path / "rated.json"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(path),
        "--label-cols",
        "rating_1,rating_2",
        "--baseline-col",
        "old_judge",
        "--threshold",
        "3",
        "--json",
        str(out_json),
        "--resamples",
        "30",
    )
    assert code == 0, err
    result = json.loads(out_json.read_text())
    assert result["kind"] == "score"
    assert {"pearson", "spearman", "kappa", "weighted_kappa", "krippendorff_alpha"} <= set(
        result["judges"]["old_judge"]
    )
    assert "Binary verdict at the threshold" in out


def test_calibrate_cli_from_a_stored_run(tmp_path: Path, monkeypatch, capsys) -> None:
    from juge.data.records import Case, Judgment
    from juge.store import Store

    db = tmp_path / "juge.db"
    cases = [Case(id=f"i{k}", output_1="a", output_2="bbb", category="c") for k in range(3)]
    with Store(db) as store:
        run_id = store.create_run(dataset_hash="d" * 64, juge_version="test", cases=cases)
        for k in range(3):
            for order, letter in (("12", "B"), ("21", "A")):  # answer 2 better, in both orders
                store.save_judgment(
                    run_id,
                    Judgment(
                        item_id=f"i{k}",
                        judge="j",
                        model="m-2",
                        template="t",
                        template_hash="h1",
                        order=order,
                        verdict=letter,
                        outcome="ok",
                    ),
                )
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [{"item_id": f"i{k}", "rater_id": r, "label": lab} for k in range(3) for r, lab in (("p", "B"), ("q", "A"))],
    )
    out_json = tmp_path / "run.json"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--run",
        run_id[:6],
        "--db",
        str(db),
        "--labels",
        str(labels),
        "--json",
        str(out_json),
        "--resamples",
        "30",
    )
    assert code == 0, err
    result = json.loads(out_json.read_text())
    judge = result["judges"]["j/t"]
    assert judge["verdict_counts"]["B"] == 3
    assert judge["vs_people"]["agreement"]["value"] == pytest.approx(0.5)
    assert result["versions"]["judges"]["j/t"]["template_hashes"] == ["h1"]
    assert result["versions"]["sources_sha256"][f"run {run_id} dataset"] == "d" * 64
    code, _, err = run_cli(monkeypatch, capsys, "calibrate", "--run", "nosuchrun", "--db", str(db))
    assert code == 2 and "nosuchrun" in err


def test_calibrate_cli_unknown_judge_or_template_is_an_error(tmp_path: Path, monkeypatch, capsys) -> None:
    items = sample_items(tmp_path)
    code, _, err = run_cli(monkeypatch, capsys, "calibrate", "--items", str(items), "--judge", "nobody")
    assert code == 2 and "--judge nobody" in err and "gpt4_2023" in err
    code, _, err = run_cli(monkeypatch, capsys, "calibrate", "--items", str(items), "--template", "pair-v9")
    assert code == 2 and "--template pair-v9" in err


@pytest.mark.needs("pyarrow")
def test_mtbench_export_as_parquet(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [
        hf_row(151, "llama-13b", "gpt-4", "model_b", "expert_9"),
        hf_row(151, "llama-13b", "gpt-4", "tie", "expert_8"),
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "human-00000-of-00001.parquet")
    data = read_mtbench_human_judgments(tmp_path)
    (case,) = data.cases
    assert (case.id, case.category) == ("mtb-q151-gpt-4-vs-llama-13b", "humanities")
    assert [lab.label for lab in data.labels] == ["A", "tie"]  # gpt-4 is answer 1 in the fixed order
    assert data.baselines == {}
