"""Bring your data as it is (issue 13): every shape of items, labels and verdicts, read without conversion.

Each test writes a file of one shape, runs `juge calibrate` as a user would, and checks the figures
against scikit-learn / krippendorff computed on the same votes by hand-made arrays.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import sys
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from cli_helpers import run_cli
from juge.data.readers import read_cases, read_rows

CODES = {"0": "tie", "1": "A", "2": "B"}
# 12 pairs; three raters coded 0 = tie, 1 = first better, 2 = second better; r_c leaves two blank / NULL.
VOTES = [
    ("1", "1", "1"),
    ("2", "2", "1"),
    ("0", "1", "1"),
    ("2", "2", "2"),
    ("1", "2", "NULL"),
    ("1", "1", ""),
    ("0", "0", "0"),
    ("2", "1", "2"),
    ("1", "1", "2"),
    ("2", "2", "2"),
    ("1", "0", "1"),
    ("2", "2", "0"),
]
RATERS = ("rater_a", "rater_b", "rater_c")


def _rows() -> list[dict]:
    return [
        {"doc": f"d{k // 2}", "system": f"s{k % 2}", "left": "short", "right": "a longer one", **dict(zip(RATERS, v))}
        for k, v in enumerate(VOTES)
    ]


def _present(value: str) -> bool:
    return value not in ("", "NULL")


def expected_ceiling() -> tuple[float, float, float]:
    """Agreement, Cohen's kappa (sklearn, pooled rater pairs) and nominal alpha (krippendorff) of VOTES."""
    y1, y2 = [], []
    for v in VOTES:
        labels = [CODES[x] for x in v if _present(x)]
        for a, b in combinations(labels, 2):
            y1.append(a)
            y2.append(b)
    agreement = float(np.mean([a == b for a, b in zip(y1, y2)]))
    kappa = cohen_kappa_score(y1, y2, labels=["A", "B", "tie"])
    data = np.array([[float(v[r]) if _present(v[r]) else np.nan for v in VOTES] for r in range(3)])
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    return agreement, kappa, alpha


def write_csv(path: Path, rows: list[dict], delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


PAIR_OPTIONS = (
    "--map",
    "id=doc+system,output_1=left,output_2=right",
    "--label-cols",
    ",".join(RATERS),
    "--kind",
    "pairwise",
    "--scale",
    "0=tie,1=A,2=B",
    "--missing",
    'NULL,""',
    "--resamples",
    "50",
)


def _calibrate(monkeypatch, capsys, tmp_path: Path, *args: str) -> tuple[int, dict | None, str, str]:
    out = tmp_path / "out.json"
    code, stdout, err = run_cli(monkeypatch, capsys, "calibrate", *args, "--json", str(out))
    return code, (json.loads(out.read_text()) if out.exists() else None), stdout, err


def _check_ceiling(result: dict) -> None:
    agreement, kappa, alpha = expected_ceiling()
    ceiling = result["ceiling"]
    assert ceiling["agreement"]["value"] == pytest.approx(agreement)
    assert ceiling["kappa"]["value"] == pytest.approx(kappa)
    assert ceiling["krippendorff_alpha"]["value"] == pytest.approx(alpha)


def _write_shape(tmp_path: Path, shape: str) -> Path:
    rows = _rows()
    if shape == "csv":
        return write_csv(tmp_path / "items.csv", rows)
    if shape == "tsv":
        return write_csv(tmp_path / "items.tsv", rows, delimiter="\t")
    if shape == "jsonl":
        path = tmp_path / "items.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return path
    if shape == "json-array":
        path = tmp_path / "items.json"
        path.write_text(json.dumps(rows, indent=2))
        return path
    if shape == "json-object":
        path = tmp_path / "items.json"
        path.write_text(json.dumps({"records": rows}, indent=2))
        return path
    if shape == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = tmp_path / "items.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
        return path
    if shape == "csv.gz":
        plain = write_csv(tmp_path / "plain.csv", rows)
        path = tmp_path / "items.csv.gz"
        path.write_bytes(gzip.compress(plain.read_bytes()))
        return path
    if shape == "jsonl.gz":
        path = tmp_path / "items.jsonl.gz"
        path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
        return path
    if shape == "parquet.gz":
        raw = _write_shape(tmp_path, "parquet")
        path = tmp_path / "items.parquet.gz"
        path.write_bytes(gzip.compress(raw.read_bytes()))
        return path
    raise AssertionError(shape)


@pytest.mark.needs("pyarrow")
@pytest.mark.parametrize(
    "shape", ["csv", "tsv", "jsonl", "json-array", "json-object", "parquet", "csv.gz", "jsonl.gz", "parquet.gz"]
)
def test_wide_pairwise_codes_in_every_file_shape(tmp_path, monkeypatch, capsys, shape) -> None:
    path = _write_shape(tmp_path, shape)
    code, result, out, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS)
    assert code == 0, err
    assert result["kind"] == "pairwise" and result["split"] == "all"
    _check_ceiling(result)
    assert result["counts"]["missing_values"] == 2
    assert result["counts"]["items_read"] == 12 and result["counts"]["items_without_label"] == 0
    assert "missing label values (left out): 2" in out


def test_format_option_reads_a_file_without_a_known_suffix(tmp_path, monkeypatch, capsys) -> None:
    path = write_csv(tmp_path / "items.txt", _rows())
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS)
    assert code == 2 and result is None and "--format" in err
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(path), "--format", "csv", *PAIR_OPTIONS
    )
    assert code == 0, err
    _check_ceiling(result)


def test_pairwise_codes_without_a_scale_name_the_option(tmp_path, monkeypatch, capsys) -> None:
    path = write_csv(tmp_path / "items.csv", [{k: v for k, v in r.items() if k != "rater_c"} for r in _rows()])
    code, result, _, err = _calibrate(
        monkeypatch,
        capsys,
        tmp_path,
        "--items",
        str(path),
        "--map",
        "id=doc+system,output_1=left,output_2=right",
        "--label-cols",
        "rater_a,rater_b",
    )
    assert code == 2 and result is None
    assert "items.csv:2: field 'rater_a'" in err
    assert "values 0, 1, 2 look like pairwise codes: give --kind pairwise --scale" in err


def test_a_missing_marker_is_named_not_blamed_on_a_valid_label(tmp_path, monkeypatch, capsys) -> None:
    path = write_csv(tmp_path / "items.csv", _rows())
    options = [o for o in PAIR_OPTIONS]
    del options[options.index("--missing") : options.index("--missing") + 2]
    code, _, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(path), *options)
    assert code == 2
    assert "items.csv:6: field 'rater_c'" in err and "--missing NULL" in err


@pytest.mark.parametrize("same_file", [False, True])
def test_long_labels_in_their_own_file_or_the_items_file_itself(tmp_path, monkeypatch, capsys, same_file) -> None:
    # One row per rater per item: the item key is two columns, the rater a worker id, the label yes/no/NULL.
    rows = []
    for k, v in enumerate(VOTES):
        for r, value in zip(RATERS, v):
            word = {"1": "yes", "2": "no", "0": "no"}.get(value, "NULL" if value == "NULL" else "")
            rows.append({"doc": f"d{k // 2}", "system": f"s{k % 2}", "answer": "x", "worker": r, "verdict": word})
    rows.append(dict(rows[0]))  # the same vote twice: counted once
    rows.append({**rows[0], "doc": "nowhere"})  # a label on an item that is not there
    path = write_csv(tmp_path / "long.csv", rows)
    items = write_csv(
        tmp_path / "items.csv",
        [{"doc": f"d{k // 2}", "system": f"s{k % 2}", "answer": "x"} for k in range(len(VOTES))],
    )
    if same_file:  # one row per rater per item holds the items too; the unknown item is then an item
        rows.pop()
        items = path = write_csv(tmp_path / "long.csv", rows)
    code, result, out, err = _calibrate(
        monkeypatch,
        capsys,
        tmp_path,
        "--items",
        str(items),
        "--map",
        "id=doc+system,output=answer",
        "--labels",
        str(path),
        "--labels-map",
        "item_id=doc+system,rater_id=worker,label=verdict",
        "--scale",
        "yes=PASS,no=FAIL",
        "--missing",
        "NULL",
        "--resamples",
        "50",
    )
    assert code == 0, err
    assert result["kind"] == "passfail"
    counts = result["counts"]
    unknown = 0 if same_file else 1
    assert (counts["duplicate_votes"], counts["labels_unknown_item"], counts["missing_values"]) == (1, unknown, 2)
    assert counts["items_read"] == len(VOTES)
    words = [[{"1": "PASS", "2": "FAIL", "0": "FAIL"}[x] for x in v if _present(x)] for v in VOTES]
    y1 = [a for ws in words for a, _ in combinations(ws, 2)]
    y2 = [b for ws in words for _, b in combinations(ws, 2)]
    assert result["ceiling"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(y1, y2))
    data = np.array([[{"PASS": 1.0, "FAIL": 0.0}[ws[r]] if r < len(ws) else np.nan for ws in words] for r in range(3)])
    # raters are positions here, as only the values per item matter to alpha
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert result["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    assert "duplicate votes (counted once): 1" in out


def test_several_criteria_side_by_side(tmp_path, monkeypatch, capsys) -> None:
    rng = np.random.default_rng(3)
    rows = []
    for k in range(15):
        base = int(rng.integers(1, 6))
        rows.append(
            {
                "id": f"i{k}",
                "output": "x",
                "c_r1": base,
                "c_r2": int(np.clip(base + rng.integers(-1, 2), 1, 5)),
                "f_r1": int(rng.integers(1, 6)),
                "f_r2": int(rng.integers(1, 6)),
            }
        )
    items = write_csv(tmp_path / "items.csv", rows)
    judgments = tmp_path / "judge.jsonl"
    judgments.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": r["id"],
                    "judge": "j",
                    "model": "m",
                    "prompt": "criteria-v1",
                    "verdict": {"coherence": r["c_r1"], "fluency": 3},
                    "outcome": "ok",
                    "text": "t",
                }
            )
            + "\n"
            for r in rows
        )
    )
    code, result, out, err = _calibrate(
        monkeypatch,
        capsys,
        tmp_path,
        "--items",
        str(items),
        "--criterion",
        "coherence=c_r1,c_r2",
        "--criterion",
        "fluency=f_r1,f_r2",
        "--judgments",
        str(judgments),
        "--resamples",
        "30",
    )
    assert code == 0, err
    assert result["kind"] == "criteria" and list(result["criteria"]) == ["coherence", "fluency"]
    for name, prefix in (("coherence", "c"), ("fluency", "f")):
        study = result["criteria"][name]
        data = np.array([[r[f"{prefix}_r1"] for r in rows], [r[f"{prefix}_r2"] for r in rows]], dtype=float)
        alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
        assert study["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(alpha)
        interval = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
        assert study["ceiling"]["krippendorff_alpha_interval"]["value"] == pytest.approx(interval)
        kappa = cohen_kappa_score(data[0], data[1])
        assert study["ceiling"]["kappa"]["value"] == pytest.approx(kappa)
    # the judge's coherence verdict is rater 1's score: it agrees with rater 1 always, with rater 2 as r1 does
    judge = result["criteria"]["coherence"]["judges"]["j/criteria-v1"]
    same = np.mean([r["c_r1"] == r["c_r2"] for r in rows])
    assert judge["agreement"]["value"] == pytest.approx((1 + same) / 2)
    assert [row["criterion"] for row in result["side_by_side"]] == ["coherence", "fluency"]
    assert "Criteria side by side" in out


def test_nested_labels_one_object_per_rater(tmp_path, monkeypatch, capsys) -> None:
    rows = [
        {
            "id": f"i{k}",
            "output": "x",
            "annotations": [
                {"worker": "w1", "coherence": 1 + k % 5, "fluency": 1 + (k * 2) % 5},
                {"worker": "w2", "coherence": 1 + (k + k % 2) % 5, "fluency": 1 + (k * 2) % 5},
            ],
        }
        for k in range(12)
    ]
    items = tmp_path / "items.json"
    items.write_text(json.dumps(rows))
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--labels-nested", "annotations", "--resamples", "30"
    )
    assert code == 0, err
    assert set(result["criteria"]) == {"coherence", "fluency"}
    coherence = [[a["coherence"] for a in r["annotations"]] for r in rows]
    data = np.array(coherence, dtype=float).T
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert result["criteria"]["coherence"]["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    assert result["criteria"]["fluency"]["ceiling"]["agreement"]["value"] == 1.0


def test_recorded_verdicts_of_another_tool(tmp_path, monkeypatch, capsys) -> None:
    path = write_csv(tmp_path / "items.csv", _rows())
    verdicts = write_csv(
        tmp_path / "other.csv",
        [{"row": f"d{k // 2}/s{k % 2}", "answer": ("1", "2", "Tie", "??")[k % 4]} for k in range(len(VOTES))],
    )
    code, result, out, err = _calibrate(
        monkeypatch,
        capsys,
        tmp_path,
        "--items",
        str(path),
        *PAIR_OPTIONS,
        "--judgments",
        str(verdicts),
        "--judgments-map",
        "item_id=row,verdict=answer",
        "--judge-name",
        "other-tool",
        "--judgments-scale",
        "1=A,2=B,Tie=tie",
    )
    assert code == 0, err
    (key,) = [k for k in result["judges"] if k.startswith("other-tool")]
    judge = result["judges"][key]
    assert judge["outcomes"]["unparsed"] == 3  # "??" on items 3, 7, 11: counted, never a verdict
    assert judge["verdict_counts"]["missing"] == 3
    assert judge["order_flip_rate"] is None  # asked in one order only: not measured, not 0
    pairs = [(("A", "B", "tie")[k % 4], CODES[x]) for k, v in enumerate(VOTES) if k % 4 != 3 for x in v if _present(x)]
    assert judge["vs_people"]["agreement"]["value"] == pytest.approx(np.mean([a == b for a, b in pairs]))
    assert judge["vs_people"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs], labels=["A", "B", "tie"])
    )


def test_readme_example_without_a_split_column_studies_every_item(tmp_path, monkeypatch, capsys) -> None:
    rated = tmp_path / "rated.csv"
    rated.write_text("id,output,rating_1,rating_2\na,x,Bad,Acceptable\nb,y,Excellent,Excellent\nc,z,Bad,Bad\n")
    code, result, _, err = _calibrate(
        monkeypatch,
        capsys,
        tmp_path,
        "--items",
        str(rated),
        "--label-cols",
        "rating_1,rating_2",
        "--scale",
        "Bad=1,'Could be Improved'=2,Acceptable=3,Excellent=4",
        "--threshold",
        "3",
        "--resamples",
        "20",
    )
    assert code == 0, err
    assert result["split"] == "all" and result["n_items"] == 3
    assert any("no split" in n and "juge split" in n for n in result["notes"])


@pytest.mark.needs("pandas")
def test_in_memory_records_and_dataframes_use_the_same_reader(tmp_path) -> None:
    import pandas as pd

    rows = [{"ticket": "T1", "answer": "a", "n": 1.0}, {"ticket": "T2", "answer": "b", "n": float("nan")}]
    mapping = {"id": "ticket", "output": "answer"}
    from_list = read_cases(rows, mapping)
    from_frame = read_cases(pd.DataFrame(rows), mapping)
    assert [c.model_dump() for c in from_list][0] == [c.model_dump() for c in from_frame][0]
    assert from_frame[1].meta == {"n": None}  # NaN is a missing value
    with pytest.raises(Exception, match=r"<DataFrame>:2: field 'id'"):
        read_cases(pd.DataFrame([{"id": "a"}, {"id": None}]))


def test_json_record_lines_point_at_the_line_a_record_starts(tmp_path) -> None:
    path = tmp_path / "items.json"
    path.write_text('[\n  {"id": "a"},\n\n  {"id": "b",\n   "x": 1}\n]\n')
    assert [line for line, _ in read_rows(path)] == [2, 4]
    path.write_text('{"a": {"output": "x"}, "b": {"output": "y"}}')
    assert [row["id"] for _, row in read_rows(path)] == ["a", "b"]  # an object of records keyed by id


@pytest.mark.needs("datasets", "pyarrow")
def test_hugging_face_dataset_saved_to_disk(tmp_path, monkeypatch, capsys) -> None:
    import datasets

    ds = datasets.Dataset.from_list(_rows())
    ds.save_to_disk(str(tmp_path / "hf"))
    ds.to_parquet(str(tmp_path / "hf.parquet"))
    for path in (tmp_path / "hf", tmp_path / "hf.parquet"):
        code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS)
        assert code == 0, err
        _check_ceiling(result)


def test_a_criteria_report_puts_the_criteria_side_by_side(tmp_path, monkeypatch, capsys) -> None:
    rows = [{"id": f"i{k}", "output": "x", "c_r1": 1 + k % 4, "c_r2": 1 + (k + 1) % 4, "f_r1": 2, "f_r2": 2 + k % 2}
            for k in range(8)]  # fmt: skip
    items = write_csv(tmp_path / "items.csv", rows)
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--criterion", "coherence=c_r1,c_r2",
        "--criterion", "fluency=f_r1,f_r2", "--resamples", "20",
    )  # fmt: skip
    assert code == 0, err
    for fmt in ("html", "md", "json"):
        out = tmp_path / f"report.{fmt}"
        code, _, err = run_cli(
            monkeypatch, capsys, "report", str(tmp_path / "out.json"), "-o", str(out), "--format", fmt
        )
        assert code == 0, err
        text = out.read_text()
        if fmt == "json":
            data = json.loads(text)
            assert list(data["criteria"]) == ["coherence", "fluency"]
            assert data["side_by_side"] == result["side_by_side"]
        else:
            assert "Criteria side by side" in text or "criteria side by side" in text
            assert "Criterion: coherence" in text and "Criterion: fluency" in text
    ids = re.findall(r'\bid="([^"]+)"', (tmp_path / "report.html").read_text())
    assert len(ids) == len(set(ids))  # each criterion's section has its own ids


def test_a_whole_study_from_records_in_memory() -> None:
    # What the Python API passes: items, labels and judgments as lists of dicts, one judge as a mapped table.
    from juge.calibration.inputs import load_inputs, run_study
    from juge.calibration.pairwise import Bootstrap
    from juge.data.judgments import JudgmentsSource

    items = [{"doc": r["doc"], "system": r["system"], "left": r["left"], "right": r["right"]} for r in _rows()]
    labels = [
        {"item": f"{r['doc']}/{r['system']}", "who": rater, "code": r[rater]} for r in _rows() for rater in RATERS
    ]
    calls = [
        {"item_id": f"{r['doc']}/{r['system']}", "judge": "j", "model": "m", "prompt": "p", "order": order,
         "letter": "A", "outcome": "ok", "text": "[[A]]"}
        for r in _rows() for order in ("12", "21")
    ]  # fmt: skip
    table = [{"row": f"{r['doc']}/{r['system']}", "answer": "2"} for r in _rows()]
    inputs = load_inputs(
        items=items,
        mapping={"id": "doc+system", "output_1": "left", "output_2": "right"},
        labels=labels,
        labels_map={"item_id": "item", "rater_id": "who", "label": "code"},
        scale={"0": "tie", "1": "A", "2": "B"},
        missing=("NULL",),
        judgments=[calls, JudgmentsSource(table, {"item_id": "row", "verdict": "answer"}, "other", {"2": "B"})],
    )
    result = run_study(inputs, split="all", boot=Bootstrap(n_resamples=20))
    _check_ceiling(result)
    figures = result["judges"]
    # judge j says A in both orders (fixed order: answer 2 in order 21 is B, so A/B: inconsistent -> tie)
    assert figures["j/p"]["verdict_counts"]["inconsistent"] == len(VOTES)
    assert figures["other/recorded"]["verdict_counts"]["B"] == len(VOTES)
    assert figures["other/recorded"]["order_flip_rate"] is None
    people = [CODES[x] for v in VOTES for x in v if _present(x)]
    assert figures["other/recorded"]["vs_people"]["agreement"]["value"] == pytest.approx(
        people.count("B") / len(people)
    )
    assert result["versions"]["sources_sha256"]["items"]  # records are hashed like files


def test_several_mapped_judges_pair_their_options_in_order(tmp_path, monkeypatch, capsys) -> None:
    path = write_csv(tmp_path / "items.csv", _rows())
    first = write_csv(tmp_path / "a.csv", [{"row": f"{r['doc']}/{r['system']}", "answer": "1"} for r in _rows()])
    second = write_csv(tmp_path / "b.csv", [{"key": f"{r['doc']}/{r['system']}", "v": "B"} for r in _rows()])
    maps = ("--judgments-map", "item_id=row,verdict=answer", "--judgments-map", "item_id=key,verdict=v")
    files = ("--judgments", str(first), "--judgments", str(second))
    names = ("--judge-name", "tool-a", "--judge-name", "tool-b")
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS, *files, *maps, *names,
        "--judgments-scale", "1=A,2=B,B=B",
    )  # fmt: skip
    assert code == 0, err
    assert result["judges"]["tool-a/recorded"]["verdict_counts"]["A"] == len(VOTES)
    assert result["judges"]["tool-b/recorded"]["verdict_counts"]["B"] == len(VOTES)
    (tmp_path / "out.json").unlink()
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS, *files, *maps,
        "--judge-name", "x", "--judge-name", "y", "--judge-name", "z",
    )  # fmt: skip
    assert code == 2 and result is None and "--judge-name: given 3 times for 2 --judgments" in err


def test_a_misspelt_pass_fail_label_is_named_on_its_own_line(tmp_path, monkeypatch, capsys) -> None:
    # PASS/FAIL labels (any case) with one typo: the study stays PASS/FAIL and the error names the typo's
    # line and value, not the first row and a scale of numbers.
    items = write_csv(tmp_path / "items.csv", [{"id": f"i{i}", "question": "q", "output": "o"} for i in range(3)])
    rows = [("i0", "ann", "PASS"), ("i1", "ann", "PASSS"), ("i2", "ann", "fail"), ("i0", "bob", "Pass")]
    labels = write_csv(tmp_path / "labels.csv", [{"item_id": i, "rater_id": r, "label": v} for i, r, v in rows])
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(items), "--labels", str(labels))
    assert code == 2 and result is None
    assert "labels.csv:3: field 'label'" in err and "'PASSS'" in err
    assert "numbers" not in err
    # without the typo the same file is a PASS/FAIL study
    rows[1] = ("i1", "ann", "PASS")
    write_csv(labels, [{"item_id": i, "rater_id": r, "label": v} for i, r, v in rows])
    code, result, _, _ = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(items), "--labels", str(labels))
    assert code == 0 and result["kind"] == "passfail"


def test_each_criterion_counts_its_own_values(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 10: criterion f has one NA; c has none. Each criterion's counts are its own, the top's their sum.
    items = tmp_path / "t.csv"
    items.write_text("id,output,c_r1,c_r2,f_r1,f_r2\n1,a,1,2,3,NA\n2,b,2,2,3,3\n3,c,1,1,2,2\n")
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--criterion", "c=c_r1,c_r2",
        "--criterion", "f=f_r1,f_r2", "--missing", "NA", "--resamples", "20",
    )  # fmt: skip
    assert code == 0, err
    c, f = result["criteria"]["c"]["counts"], result["criteria"]["f"]["counts"]
    assert (c["label_values_read"], c["missing_values"]) == (6, 0)
    assert (f["label_values_read"], f["missing_values"]) == (6, 1)
    assert (result["counts"]["label_values_read"], result["counts"]["missing_values"]) == (12, 1)
    kappa = cohen_kappa_score([1, 2, 1], [2, 2, 1])
    assert result["criteria"]["c"]["ceiling"]["kappa"]["value"] == pytest.approx(kappa)
    assert result["criteria"]["f"]["ceiling"]["kappa"]["value"] == pytest.approx(cohen_kappa_score([3, 2], [3, 2]))


@pytest.mark.parametrize("shape", ["json-array", "jsonl", "csv"])
def test_a_file_without_ids_numbers_its_rows(tmp_path, monkeypatch, capsys, shape) -> None:
    # Issue 31 item 1: no id field, long texts with newlines: --id row makes "<file stem>:<row>" ids.
    rows = [{"text": f"a long answer\nover lines {k}" * 30, "r1": ("PASS", "FAIL")[k % 2],
             "r2": ("PASS", "FAIL")[(k // 3) % 2]} for k in range(8)]  # fmt: skip
    if shape == "csv":
        path = write_csv(tmp_path / "docs.csv", rows)
    elif shape == "jsonl":
        path = tmp_path / "docs.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        path = tmp_path / "docs.json"
        path.write_text(json.dumps(rows, indent=2))
    base = ("--items", str(path), "--map", "output=text", "--label-cols", "r1,r2", "--resamples", "20")
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base)
    assert code == 2 and result is None and "--id row" in err
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base, "--id", "row")
    assert code == 0, err
    assert result["n_items"] == 8
    assert any("--id row: docs:1 is the first row" in n for n in result["notes"])
    kappa = cohen_kappa_score([r["r1"] for r in rows], [r["r2"] for r in rows])
    assert result["ceiling"]["kappa"]["value"] == pytest.approx(kappa)
    cases = read_cases(path, {"id": "@row", "output": "text"})
    assert [c.id for c in cases] == [f"docs:{k}" for k in range(1, 9)]  # stable: the same on every read
    code, _, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base, "--id", "row", "--map", "id=text")
    assert code == 2


def test_id_row_on_run_and_label_init(tmp_path, monkeypatch, capsys) -> None:
    cases = tmp_path / "c.jsonl"
    cases.write_text('{"question": "q", "output": "x"}\n{"question": "q2", "output": "y"}\n')
    judge = tmp_path / "j.toml"
    judge.write_text('name = "g"\nsetup = "passfail"\nmodel = "m"\nprovider = "scripted"\ndescription = "d"\n')
    code, out, err = run_cli(monkeypatch, capsys, "run", "--cases", str(cases), "--judge", str(judge), "--id", "row",
                             "--db", str(tmp_path / "r.db"))  # fmt: skip
    assert "on case c:1" in err and "--id row: c:1" in " ".join(err.split())  # the scripted judge has no answer
    rubric = tmp_path / "rubric.toml"
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from label_helpers import write_rubric

    write_rubric(rubric)
    code, out, err = run_cli(monkeypatch, capsys, "label", "init", "--cases", str(cases), "--task", "passfail",
                             "--rubric", str(rubric), "--name", "p", "--id", "row",
                             "--db-url", f"sqlite:///{tmp_path / 'l.db'}", "--json", str(tmp_path / "l.json"))  # fmt: skip
    assert code == 0, err
    assert any("--id row: c:1" in n for n in json.loads((tmp_path / "l.json").read_text())["notes"])


def test_a_split_column_of_other_values(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 8: split = train/valid/test: every item is studied, the note names the values, --split picks one.
    rows = [{"id": f"i{k}", "output": "x", "split": ("train", "valid", "test")[k % 3],
             "r1": ("PASS", "FAIL")[k % 2], "r2": ("PASS", "FAIL")[(k // 2) % 2]} for k in range(24)]  # fmt: skip
    items = write_csv(tmp_path / "items.csv", rows)
    base = ("--items", str(items), "--label-cols", "r1,r2", "--resamples", "20")
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base)
    assert code == 0, err
    assert result["split"] == "all" and result["n_items"] == 24
    assert any("test, train, valid" in n and "--split test" in n for n in result["notes"])
    assert result["ceiling"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score([r["r1"] for r in rows], [r["r2"] for r in rows])
    )
    (tmp_path / "out.json").unlink()
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base, "--split", "test")
    assert code == 0, err
    test = [r for r in rows if r["split"] == "test"]
    assert result["split"] == "test" and result["n_items"] == len(test)
    assert not any("neither dev nor holdout" in n for n in result["notes"])
    assert result["ceiling"]["agreement"]["value"] == pytest.approx(np.mean([r["r1"] == r["r2"] for r in test]))
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base, "--split", "dev")
    assert code == 2 and "test, train, valid" in err


def _gold_files(tmp_path: Path) -> tuple[Path, Path, list[str], list[str]]:
    rng = np.random.default_rng(5)
    gold = [("PASS", "FAIL")[int(rng.random() < 0.3)] for _ in range(40)]
    said = [g if rng.random() < 0.8 else {"PASS": "FAIL", "FAIL": "PASS"}[g] for g in gold]
    items = write_csv(tmp_path / "bench.csv", [{"id": f"i{k}", "output": "x", "gold": g} for k, g in enumerate(gold)])
    calls = tmp_path / "judge.jsonl"
    calls.write_text("".join(json.dumps({"item_id": f"i{k}", "judge": "j", "model": "m", "prompt": "p",
                                         "verdict": v, "outcome": "ok", "text": v}) + "\n"
                             for k, v in enumerate(said)))  # fmt: skip
    return items, calls, gold, said


def test_gold_labels_conclude_on_judge_vs_gold(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 7: one label per item: the headline gives judge vs gold with intervals, and says no ceiling.
    from sklearn.metrics import accuracy_score, recall_score

    items, calls, gold, said = _gold_files(tmp_path)
    code, result, out, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(items), "--label-cols",
                                        "gold", "--judgments", str(calls), "--resamples", "50")  # fmt: skip
    assert code == 0, err
    assert result["truth"]["mode"] == "gold"
    assert "Ceiling: not measurable" in out and "Ceiling: person vs person" not in out
    judge = result["judges"]["j/p"]
    assert judge["kappa"]["value"] == pytest.approx(cohen_kappa_score(gold, said))
    assert judge["agreement"]["value"] == pytest.approx(accuracy_score(gold, said))
    assert judge["failures_caught"]["rate"]["value"] == pytest.approx(recall_score(gold, said, pos_label="FAIL"))
    (head,) = result["headline"]
    assert head["against"] == "gold" and "not measured: too few labels" not in head["sentence"]
    assert f"kappa {judge['kappa']['value']:.3f} [" in head["sentence"]
    assert "No person-vs-person ceiling" in head["sentence"] and "second person" in head["sentence"]
    # --truth gold says it; with two labels on an item it is an error naming the item
    two = write_csv(tmp_path / "two.csv", [{"id": f"i{k}", "output": "x", "gold": g, "other": g}
                                           for k, g in enumerate(gold)])  # fmt: skip
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(two), "--label-cols",
                                      "gold,other", "--truth", "gold", "--resamples", "20")  # fmt: skip
    assert code == 2 and "--truth gold" in err and "'i0'" in err


def test_gold_labels_on_pairs(tmp_path, monkeypatch, capsys) -> None:
    rows = [{**r, "gold": r["rater_a"]} for r in _rows()]
    items = write_csv(tmp_path / "pairs.csv", rows)
    verdicts = write_csv(tmp_path / "v.csv", [{"row": f"{r['doc']}/{r['system']}", "answer": ("1", "2")[k % 2]}
                                              for k, r in enumerate(rows)])  # fmt: skip
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--map", "id=doc+system,output_1=left,output_2=right",
        "--label-cols", "gold", "--kind", "pairwise", "--scale", "0=tie,1=A,2=B", "--judgments", str(verdicts),
        "--judgments-map", "item_id=row,verdict=answer", "--judge-name", "t", "--judgments-scale", "1=A,2=B",
        "--resamples", "20",
    )  # fmt: skip
    assert code == 0, err
    assert result["truth"]["mode"] == "gold" and result["headline"][0]["against"] == "gold"
    people = [CODES[r["gold"]] for r in rows]
    judge = [("A", "B")[k % 2] for k in range(len(rows))]
    assert result["judges"]["t/recorded"]["vs_people"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score(people, judge, labels=["A", "B", "tie"])
    )


def test_json_scalars_in_text_fields_are_read_as_text(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 9: an answer recorded as `true` or 3 is its text, counted and said once.
    rows = [{"id": k, "question": "Is it?", "output": (True, False, 3, "yes")[k % 4],
             "r1": ("PASS", "FAIL")[k % 2], "r2": ("PASS", "FAIL")[(k // 2) % 2]} for k in range(12)]  # fmt: skip
    items = tmp_path / "answers.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(items), "--label-cols", "r1,r2",
                                      "--resamples", "20")  # fmt: skip
    assert code == 0, err
    (note,) = [n for n in result["notes"] if "read as their text" in n]
    assert "9 JSON numbers or booleans" in note and "output 9" in note
    assert result["ceiling"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score([r["r1"] for r in rows], [r["r2"] for r in rows])
    )
    assert [c.output for c in read_cases(items)][:4] == ["true", "false", "3", "yes"]
    judge = tmp_path / "j.toml"
    judge.write_text('name = "g"\nsetup = "passfail"\nmodel = "m"\nprovider = "scripted"\ndescription = "d"\n')
    code, _, err = run_cli(monkeypatch, capsys, "run", "--cases", str(items), "--judge", str(judge),
                           "--db", str(tmp_path / "r.db"))  # fmt: skip
    assert "9 JSON numbers or booleans" in " ".join(err.split())


def test_missing_answers_written_as_free_text(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 3: "N/A (...)" in many spellings: a prefix and a regular expression leave them out, counted.
    rng = np.random.default_rng(7)
    r1 = [int(v) for v in rng.integers(1, 6, 20)]
    r2 = [int(np.clip(v + rng.integers(-1, 2), 1, 5)) for v in r1]
    texts = {3: "N/A (no errors)", 8: "N/A - not shown", 11: "n/a", 15: "not applicable"}
    rows = [{"id": f"i{k}", "output": "x", "r1": r1[k], "r2": texts.get(k, r2[k])} for k in range(20)]
    items = write_csv(tmp_path / "mqm.csv", rows)
    base = ("--items", str(items), "--label-cols", "r1,r2", "--resamples", "20")
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base)
    assert code == 2 and "--missing 'n/a,N/A*'" in err
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base,
                                      "--missing", "N/A*,re:(?i)n/a|not applicable")  # fmt: skip
    assert code == 0, err
    assert (result["counts"]["label_values_read"], result["counts"]["missing_values"]) == (40, 4)
    assert any("--missing patterns left out 4 label values" in n for n in result["notes"])
    kept = [k for k in range(20) if k not in texts]
    data = np.array([[float(r1[k]) for k in range(20)], [np.nan if k in texts else r2[k] for k in range(20)]])
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert result["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    assert result["ceiling"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score([r1[k] for k in kept], [r2[k] for k in kept])
    )
    code, _, _, err = _calibrate(monkeypatch, capsys, tmp_path, *base, "--missing", "re:(")
    assert code == 2 and "--missing re:(" in err


def test_tsv_as_other_tools_write_it_in_archives(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 5: a .tsv.tar.gz, bare quotes, a header comment field; a zip of two data files and --member.
    import tarfile
    import zipfile

    rng = np.random.default_rng(11)
    r1 = [("PASS", "FAIL")[int(v)] for v in rng.integers(0, 2, 16)]
    r2 = [v if rng.random() < 0.7 else {"PASS": "FAIL", "FAIL": "PASS"}[v] for v in r1]
    lines = ["id\tsource\toutput\tr1\tr2\t# written by tool X v2"]
    lines += [f's{k}\t"quoted at the start\t6" tall\t{a}\t{b}' for k, (a, b) in enumerate(zip(r1, r2))]
    tsv = tmp_path / "segments.tsv"
    tsv.write_text("\n".join(lines) + "\n")
    (tmp_path / "README").write_text("not data")
    archive = tmp_path / "segments.tsv.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(tsv, arcname="segments.tsv")
        t.add(tmp_path / "README", arcname="README")
    base = ("--label-cols", "r1,r2", "--resamples", "20")
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(archive), *base)
    assert code == 2 and "malformed TSV" in err and "tab-separated" in err and "--quoting none" in err
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(archive), *base,
                                      "--quoting", "none")  # fmt: skip
    assert code == 0, err
    assert result["ceiling"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(r1, r2))
    assert any("'# written by tool X v2' are not read" in n for n in result["notes"])
    assert read_cases(f"{archive}::segments.tsv", format="tsv;quoting=none")[0].source == '"quoted at the start'
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as z:
        z.write(tsv, "a/segments.tsv")
        z.writestr("b/other.jsonl", '{"id": "x", "output": "y"}\n')
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(two), *base, "--quoting", "none")
    assert code == 2 and "a/segments.tsv, b/other.jsonl" in err and "--member" in err
    code, result, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(two), *base, "--quoting", "none",
                                      "--member", "a/segments.tsv")  # fmt: skip
    assert code == 0, err
    assert result["ceiling"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(r1, r2))


def test_a_dict_of_criterion_to_ratings_by_position(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 2: {"Overall": [4, 3, 4, 2, 4], ...} under a nested path: the position is the rater.
    rng = np.random.default_rng(13)
    overall = rng.integers(1, 6, (15, 5))
    fluent = np.clip(overall + rng.integers(-1, 2, (15, 5)), 1, 5)
    rows = [{"doc": {"id": f"d{k}", "text": "x"},
             "review": {"annotations": {"Overall": overall[k].tolist(), "Fluent": fluent[k].tolist()}}}
            for k in range(15)]  # fmt: skip
    items = tmp_path / "docs.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--map", "id=doc.id,output=doc.text",
        "--labels-nested", "review.annotations", "--raters-by", "position", "--kind", "score", "--resamples", "20",
    )  # fmt: skip
    assert code == 0, err
    assert set(result["criteria"]) == {"Overall", "Fluent"}
    for name, table in (("Overall", overall), ("Fluent", fluent)):
        study = result["criteria"][name]
        assert study["n_raters"] == 5 and study["n_votes"] == 75
        alpha = krippendorff.alpha(reliability_data=table.T.astype(float), level_of_measurement="ordinal")
        assert study["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(alpha)
        y1 = [table[k, a] for k in range(15) for a, b in combinations(range(5), 2)]
        y2 = [table[k, b] for k in range(15) for a, b in combinations(range(5), 2)]
        assert study["ceiling"]["agreement"]["value"] == pytest.approx(np.mean(np.equal(y1, y2)))
    code, _, _, err = _calibrate(monkeypatch, capsys, tmp_path, "--items", str(items), "--map", "id=doc.id",
                                 "--labels-nested", "review.notes", "--resamples", "20")  # fmt: skip
    assert code == 2 and "review has no key 'notes' (keys: 'annotations')" in err


def test_recorded_verdicts_nested_in_each_item(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 2/6: results[0]."swap = False".winner, read with a path in --judgments-map.
    path = write_csv(tmp_path / "items.csv", _rows())
    verdicts = tmp_path / "judge.jsonl"
    winners = [("model_a", "model_b", "tie")[k % 3] for k in range(len(VOTES))]
    verdicts.write_text("".join(
        json.dumps({"key": f"d{k // 2}/s{k % 2}", "results": [{"swap = False": {"winner": w}}]}) + "\n"
        for k, w in enumerate(winners)))  # fmt: skip
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS, "--judgments", str(verdicts),
        "--judgments-map", 'item_id=key,verdict=results[0]."swap = False".winner', "--judge-name", "nested",
        "--judgments-scale", "model_a=A,model_b=B,tie=tie",
    )  # fmt: skip
    assert code == 0, err
    judge = result["judges"]["nested/recorded"]
    pairs = [({"model_a": "A", "model_b": "B", "tie": "tie"}[winners[k]], CODES[x])
             for k, v in enumerate(VOTES) for x in v if _present(x)]  # fmt: skip
    assert judge["vs_people"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs], labels=["A", "B", "tie"])
    )
    code, _, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS, "--judgments", str(verdicts),
        "--judgments-map", 'item_id=key,verdict=results[1].winner', "--judge-name", "nested",
    )  # fmt: skip
    assert code == 2 and "judge.jsonl:1" in err and "results has 1 elements, so [1] is out of range" in err
    code, _, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS, "--judgments", str(verdicts),
        "--judgments-map", "item_id=key,verdict=result[0].winner", "--judge-name", "nested",
    )  # fmt: skip
    assert code == 2 and "column 'result'" in err and "(columns: key, results)" in err


@pytest.mark.parametrize("verdict_order", ["fixed", "shown"])
def test_one_file_per_order_with_verdicts_in_the_fixed_order(tmp_path, monkeypatch, capsys, verdict_order) -> None:
    # Issue 31 item 6: the order is a literal ('12', '21': one file each); the winner names answer 1 or 2.
    path = write_csv(tmp_path / "items.csv", _rows())
    winners = [("model_a", "model_b")[k % 2] for k in range(len(VOTES))]
    files = []
    for order in ("12", "21"):
        f = tmp_path / f"judge_{order}.jsonl"
        f.write_text("".join(json.dumps({"key": f"d{k // 2}/s{k % 2}", "winner": w}) + "\n"
                             for k, w in enumerate(winners)))  # fmt: skip
        files += ["--judgments", str(f), "--judgments-map", f"item_id=key,verdict=winner,order='{order}'"]
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(path), *PAIR_OPTIONS, *files, "--judge-name", "two-files",
        "--judgments-scale", "model_a=A,model_b=B", "--verdict-order", verdict_order,
    )  # fmt: skip
    assert code == 0, err
    judge = result["judges"]["two-files/recorded"]
    if verdict_order == "shown":  # read as letters shown, the same winner in both orders is a flip every time
        assert judge["order_flip_rate"]["value"] == 1.0
        return
    assert judge["order_flip_rate"]["value"] == 0.0
    assert judge["verdict_counts"]["A"] == len(VOTES) // 2 and judge["verdict_counts"]["B"] == len(VOTES) // 2
    pairs = [(("A", "B")[k % 2], CODES[x]) for k, v in enumerate(VOTES) for x in v if _present(x)]
    assert judge["vs_people"]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs], labels=["A", "B", "tie"])
    )


def test_error_span_annotations_summed_with_weights(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 4: MQM-like rows (one per error, a no-error marker row for a clean segment): one score per
    # (segment, rater), weights by severity and by severity+category, exact decimal sums (0.1 * 3 is 0.3).
    from decimal import Decimal

    rng = np.random.default_rng(17)
    kinds = [
        ("Major", "Accuracy/Mistranslation"),
        ("Minor", "Accuracy/Mistranslation"),
        ("Minor", "Fluency/Punctuation"),
        ("Major", "Fluency/Punctuation"),
        ("Major", "Non-translation!"),
    ]
    rows, expected = [], {}
    for seg in range(12):
        for rater in ("r1", "r2", "r3"):
            n = int(rng.integers(0, 4))
            errors = [kinds[int(rng.integers(0, len(kinds)))] for _ in range(n)]
            if seg == 0 and rater == "r1":
                errors = [("Minor", "Fluency/Punctuation")] * 3  # 0.1 + 0.1 + 0.1
            if not errors:
                rows.append({"seg": f"s{seg}", "rater": rater, "severity": "No-error", "category": ""})
            total = Decimal(0)
            for sev, cat in errors:
                rows.append({"seg": f"s{seg}", "rater": rater, "severity": sev, "category": cat})
                total += (Decimal("0.1") if (sev, cat) == ("Minor", "Fluency/Punctuation") else Decimal(25)
                          if cat == "Non-translation!" else Decimal(5) if sev == "Major" else Decimal(1))  # fmt: skip
            expected[(f"s{seg}", rater)] = float(total)
    labels = write_csv(tmp_path / "mqm.tsv", rows, delimiter="\t")
    items = write_csv(tmp_path / "segments.csv", [{"id": f"s{k}", "output": "t"} for k in range(12)])
    weights = ("severity+category=Minor/Fluency/Punctuation:0.1;category=Non-translation!:25;"
               "severity=Major:5,Minor:1,No-error:0")  # fmt: skip
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--labels", str(labels),
        "--labels-map", "item_id=seg,rater_id=rater", "--labels-aggregate", "sum", "--label-weight", weights,
        "--kind", "score", "--resamples", "20",
    )  # fmt: skip
    assert code == 0, err
    assert expected[("s0", "r1")] == 0.3
    assert sorted(result["scale"]) == sorted(set(expected.values()))  # no 0.30000000000000004 beside 0.3
    assert result["n_votes"] == 36 and result["counts"]["label_values_read"] == 36
    data = np.array([[expected[(f"s{k}", r)] for k in range(12)] for r in ("r1", "r2", "r3")])
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert result["ceiling"]["krippendorff_alpha_interval"]["value"] == pytest.approx(alpha)
    assert any("36 (item, rater) scores" in n for n in result["notes"])
    # a severity no rule weighs is an error naming the line
    rows.append({"seg": "s1", "rater": "r1", "severity": "Critical", "category": "Other"})
    write_csv(labels, rows, delimiter="\t")
    code, _, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--labels", str(labels),
        "--labels-map", "item_id=seg,rater_id=rater", "--labels-aggregate", "sum", "--label-weight", weights,
    )  # fmt: skip
    assert code == 2 and f"mqm.tsv:{len(rows) + 1}" in err and "severity=Critical" in err
    # MQM files quote nothing: a cell starting with " is text, read with --quoting none (which reaches --labels)
    rows.pop()
    rows[0]["source"] = '"Hello," she said'
    for row in rows[1:]:
        row["source"] = "x"
    labels.write_text("\n".join("\t".join(str(v) for v in r.values()) for r in [dict(zip(rows[0], rows[0])), *rows]))
    options = ("--items", str(items), "--labels", str(labels), "--labels-map", "item_id=seg,rater_id=rater",
               "--labels-aggregate", "sum", "--label-weight", weights, "--kind", "score", "--resamples", "20")  # fmt: skip
    code, _, _, err = _calibrate(monkeypatch, capsys, tmp_path, *options)
    assert code == 2 and "--quoting none" in err
    code, again, _, err = _calibrate(monkeypatch, capsys, tmp_path, *options, "--quoting", "none")
    assert code == 0, err
    assert again["ceiling"]["krippendorff_alpha_interval"]["value"] == pytest.approx(alpha)


def test_raters_nested_two_levels_deep_each_element_an_item(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 2: documents holding sentences, each with its workers' responses: each sentence is an item.
    rng = np.random.default_rng(19)
    scores = rng.integers(1, 4, (6, 3, 3))  # document, sentence, worker
    docs = [{"doc_id": f"d{d}", "sentences": [
        {"text": f"sentence {d}.{j}", "responses": [{"worker_id": f"w{k}", "response": int(scores[d, j, k])}
                                                    for k in range(3)]} for j in range(3)]}
            for d in range(6)]  # fmt: skip
    items = tmp_path / "docs.json"
    items.write_text(json.dumps(docs))
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--map", "id=doc_id,output=text",
        "--labels-nested", "sentences[].responses", "--kind", "score", "--resamples", "20",
    )  # fmt: skip
    assert code == 0, err
    study = result["criteria"]["response"]
    assert study["n_items"] == 18 and study["n_raters"] == 3
    data = scores.reshape(18, 3).T.astype(float)  # items d0/0, d0/1, ... by worker
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert study["ceiling"]["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    from juge.calibration.inputs import load_inputs

    inputs = load_inputs(items=items, mapping={"id": "doc_id", "output": "text"},
                         labels_nested="sentences[].responses", kind="score")  # fmt: skip
    assert [c.id for c in inputs.data.cases][:4] == ["d0/0", "d0/1", "d0/2", "d1/0"]
    assert inputs.data.cases[4].output == "sentence 1.1"


def test_error_span_clean_segments_from_a_rater_list(tmp_path, monkeypatch, capsys) -> None:
    # Issue 31 item 4: no marker rows; the items' rater list says who saw a clean segment (it scores 0 for them).
    errors = {("s0", "r1"): ["Major"], ("s0", "r2"): ["Major", "Minor"], ("s1", "r2"): ["Minor"],
              ("s2", "r1"): ["Minor", "Minor"], ("s3", "r1"): ["Major"], ("s3", "r2"): ["Major"],
              ("s4", "r2"): ["Major", "Major"], ("s5", "r1"): ["Minor"]}  # fmt: skip
    rows = [{"seg": s, "rater": r, "severity": sev} for (s, r), sevs in errors.items() for sev in sevs]
    labels = write_csv(tmp_path / "errors.csv", rows)
    items = write_csv(tmp_path / "segments.csv", [{"id": f"s{k}", "output": "t", "raters": "r1,r2"} for k in range(6)])
    code, result, _, err = _calibrate(
        monkeypatch, capsys, tmp_path, "--items", str(items), "--labels", str(labels),
        "--labels-map", "item_id=seg,rater_id=rater", "--labels-aggregate", "sum", "--label-weight",
        "severity=Major:5,Minor:1", "--labels-seen-by", "raters", "--kind", "score", "--resamples", "20",
    )  # fmt: skip
    assert code == 0, err
    score = {key: sum({"Major": 5, "Minor": 1}[s] for s in sevs) for key, sevs in errors.items()}
    data = np.array([[float(score.get((f"s{k}", r), 0)) for k in range(6)] for r in ("r1", "r2")])
    assert result["n_votes"] == 12
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert result["ceiling"]["krippendorff_alpha_interval"]["value"] == pytest.approx(alpha)
    assert any("--labels-seen-by raters: 4 (item, rater) pairs" in n for n in result["notes"])
