"""A labels template from `juge init`, filled in by hand, says which row and field is wrong and what to put
there: an empty rater_id is not a column to map (no --labels-map advice)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import juge
from juge.errors import InputError
from juge.scaffold import init_project


def _fill(path: Path, fill: dict[int, tuple[str, str]]) -> None:
    """Set (rater_id, label) on the template's data rows numbered in `fill` (1 = first data row)."""
    rows = list(csv.reader(path.open(encoding="utf-8")))
    for k, (rater, label) in fill.items():
        rows[k][1:3] = [rater, label]
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


@pytest.mark.parametrize(
    ("fill", "line"),
    [
        ({1: ("ann", "PASS"), 2: ("", "FAIL")}, 3),  # labelled, rater forgotten
        ({1: ("ann", "PASS")}, 3),  # an untouched template row left in
    ],
)
def test_an_empty_rater_id_names_file_line_and_field(tmp_path: Path, fill: dict, line: int) -> None:
    init_project(tmp_path / "p", "passfail")
    template = tmp_path / "p" / "labels-template.csv"
    _fill(template, fill)
    with pytest.raises(InputError) as caught:
        juge.calibrate(items=tmp_path / "p" / "cases.jsonl", labels=template, split="all")
    exc = caught.value
    assert (Path(exc.path).name, exc.line, exc.field) == ("labels-template.csv", line, "rater_id")
    assert "--labels-map" not in str(exc)  # the column is there: mapping it is the wrong advice


def test_a_missing_rater_column_still_suggests_labels_map(tmp_path: Path) -> None:
    init_project(tmp_path / "p", "passfail")
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,who,label\norders-01,ann,PASS\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        juge.calibrate(items=tmp_path / "p" / "cases.jsonl", labels=labels, split="all")
    assert (caught.value.line, caught.value.field) == (2, "rater_id")
    assert "--labels-map rater_id=" in str(caught.value)


@pytest.mark.parametrize("fill", [{1: ("ann", "PASS")}, {1: ("ann", "PASS"), 2: ("", "FAIL")}])
def test_estimate_reads_the_template_as_calibrate_does(tmp_path: Path, fill: dict) -> None:
    # One reader of long labels: the same half-filled template is the same error in both commands.
    from juge.data.readers import read_cases
    from juge.store import Store

    init_project(tmp_path / "p", "passfail")
    cases, template = tmp_path / "p" / "cases.jsonl", tmp_path / "p" / "labels-template.csv"
    _fill(template, fill)
    with Store(tmp_path / "j.db") as store:
        store.create_run(dataset_hash="d", juge_version="t", run_id="r1", cases=read_cases(cases))
    with pytest.raises(InputError) as by_calibrate:
        juge.calibrate(items=cases, labels=template, split="all")
    with pytest.raises(InputError) as by_estimate:
        juge.estimate("r1", template, db=tmp_path / "j.db")
    seen = [(e.value.path, e.value.line, e.value.field, str(e.value)) for e in (by_calibrate, by_estimate)]
    assert seen[0] == seen[1]
