"""PASS/FAIL and score study output: a judge of another kind is left out with a note, the alpha caption only
where there is an alpha column, and a study without judgments says so and shows the people's figures."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli, write_jsonl


def test_passfail_study_leaves_out_a_criteria_judge_with_a_note(tmp_path: Path, monkeypatch, capsys) -> None:
    items = write_jsonl(tmp_path / "cases.jsonl", [{"id": f"c{k}", "input": "q", "output": "a"} for k in range(8)])
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"item_id": f"c{k}", "rater_id": r, "label": "FAIL" if k < 3 else "PASS"}
            for k in range(8)
            for r in ("ann", "bob")
        ],
    )
    calls = [
        {
            "item_id": f"c{k}",
            "judge": "faithful",
            "model": "m",
            "prompt": "passfail-v1",
            "verdict": "FAIL" if k < 2 else "PASS",
            "outcome": "ok",
            "text": "x",
        }
        for k in range(8)
    ]
    calls += [
        {
            "item_id": f"c{k}",
            "judge": "quality",
            "model": "m",
            "prompt": "criteria-v1",
            "verdict": {"correct": 3, "tone": 2},
            "outcome": "ok",
            "text": "x",
        }
        for k in range(8)
    ]
    judgments = write_jsonl(tmp_path / "judgments.jsonl", calls)
    out_json = tmp_path / "cal.json"
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(items),
        "--labels",
        str(labels),
        "--judgments",
        str(judgments),
        "--resamples",
        "20",
        "--json",
        str(out_json),
    )
    assert code == 0, err
    result = json.loads(out_json.read_text())
    assert result["kind"] == "passfail" and list(result["judges"]) == ["faithful/passfail-v1"]
    assert any(
        n.startswith("judge quality/criteria-v1 is left out of this passfail study: its verdicts are not PASS/FAIL")
        for n in result["notes"]
    )
    assert "quality/criteria-v1 is left out" in out and "no human FAIL" not in out
    assert "caught 4 of 6" in out  # per rating: 3 items x 2 raters say FAIL, 2 items caught
    assert "krippendorff_alpha" in result["ceiling"]  # nominal alpha in every ceiling (issue 13)
    # the judge's alpha: the raters with the judge as one more rater (QA2: the row read n/a)
    assert result["judges"]["faithful/passfail-v1"]["krippendorff_alpha"]["value"] is not None


def test_rated_items_without_judgments_show_the_people_figures_and_say_so(tmp_path: Path, monkeypatch, capsys) -> None:
    rated = tmp_path / "rated.csv"
    rated.write_text(
        "id,output,r1,r2\n" + "".join(f"i{k},x,{k % 4 + 1},{(k + k // 4) % 4 + 1}\n" for k in range(8)),
        encoding="utf-8",
    )
    code, out, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(rated), "--label-cols", "r1,r2", "--resamples", "20"
    )
    assert code == 0, err
    text = " ".join(out.split())
    assert "Ceiling: person vs person" in text and "krippendorff alpha" in text
    assert "No judgments given: only the person-vs-person figures above." in text
    assert "Judges against people" not in text and "Verdicts and calls by outcome" not in text


def test_score_study_keeps_the_alpha_caption(tmp_path: Path, monkeypatch, capsys) -> None:
    rated = tmp_path / "rated.csv"
    rated.write_text(
        "id,output,r1,r2\n" + "".join(f"i{k},x,{k % 4 + 1},{(k + 1) % 4 + 1}\n" for k in range(8)), encoding="utf-8"
    )
    judgments = write_jsonl(
        tmp_path / "j.jsonl",
        [
            {
                "item_id": f"i{k}",
                "judge": "j",
                "model": "m",
                "prompt": "p",
                "verdict": k % 4 + 1,
                "outcome": "ok",
                "text": "x",
            }
            for k in range(8)
        ],
    )
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(rated),
        "--label-cols",
        "r1,r2",
        "--judgments",
        str(judgments),
        "--resamples",
        "20",
    )
    assert code == 0, err
    assert "Krippendorff's alpha: the raters with the judge added" in out


def test_passfail_terminal_has_per_category_rows_and_a_readable_confusion(tmp_path: Path, monkeypatch, capsys) -> None:
    # Issue 30: PASS/FAIL output was thinner than pairwise: no per-category table (the JSON has one), the
    # confusion matrix printed as Python lists, and the output started with an empty line.
    from juge.reports.terminal import confusion_text

    assert confusion_text({"labels": ["PASS", "FAIL"], "matrix": [[31, 7], [15, 7]]}) == (
        "people PASS: judge PASS 31, FAIL 7; people FAIL: judge PASS 15, FAIL 7"
    )
    cats = ("orders", "returns")
    items = write_jsonl(
        tmp_path / "cases.jsonl",
        [{"id": f"c{k}", "input": "q", "output": "a", "category": cats[k % 2]} for k in range(12)],
    )
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"item_id": f"c{k}", "rater_id": r, "label": "FAIL" if k < 5 else "PASS"}
            for k in range(12)
            for r in ("a", "b")
        ],
    )
    calls = [
        {"item_id": f"c{k}", "judge": "pf", "model": "m", "prompt": "passfail-v1", "verdict": "FAIL" if k < 3 else "PASS",
         "outcome": "ok", "text": "x"}
        for k in range(12)
    ]  # fmt: skip
    judgments = write_jsonl(tmp_path / "judgments.jsonl", calls)
    out_json = tmp_path / "cal.json"
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(items), "--labels", str(labels), "--judgments",
        str(judgments), "--split", "all", "--resamples", "50", "--json", str(out_json),
    )  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0].strip() and not err.startswith("\n")
    study = json.loads(out_json.read_text())
    (judge,) = study["judges"].values()
    for category in cats:
        figures = judge["per_category"][category]
        row = next(line for line in out.splitlines() if f" {category} " in line)
        assert f"{figures['agreement']['value']:.2f}" in row
        assert f"{figures['failures_caught']['k']} of {figures['failures_caught']['n']}" in row
    assert confusion_text(judge["confusion"]) in " ".join(out.split())
    assert "[[" not in out and "], [" not in out
