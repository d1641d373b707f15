"""One label reader for every command (issue 23, item 3): labels coded 1/0, true/false or yes/no read as
PASS/FAIL beside a PASS/FAIL judge, and give the same figures as PASS/FAIL in calibrate, policy derive,
estimate and tune; a score only beside a score judge or with --kind score; --scale extends the words and
never lets an unlisted value through; a guessed kind is said, with what it was guessed from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import juge
from juge.errors import InputError

sys.path.insert(0, str(Path(__file__).parents[1] / "policy"))
sys.path.insert(0, str(Path(__file__).parents[1]))
from grade_data import PASSFAIL_DEV, PASSFAIL_HOLDOUT, write_study  # noqa: E402

from cli_helpers import run_cli  # noqa: E402

CODES = {
    "words": ("PASS", "FAIL"),
    "yes/no": ("yes", "no"),
    "1/0": (1, 0),
    "'1'/'0'": ("1", "0"),
    "true/false": (True, False),
    "True/FALSE": ("True", "FALSE"),
}


def recode(labels: Path, code: str) -> Path:
    """The labels file with PASS/FAIL written as `code` (a JSONL file next to it)."""
    yes, no = CODES[code]
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    path = labels.with_name(f"labels-{code.replace('/', '-').replace(chr(39), '')}.jsonl")
    path.write_text("".join(json.dumps({**r, "label": yes if r["label"] == "PASS" else no}) + "\n" for r in rows))
    return path


@pytest.fixture()
def study(tmp_path: Path) -> tuple[Path, Path, Path]:
    return write_study(tmp_path / "pf", PASSFAIL_DEV + PASSFAIL_HOLDOUT)


def figures(study: dict) -> dict:
    """What a calibration measures: the ceiling and every judge's figures (no file hashes, no notes)."""
    return {k: study.get(k) for k in ("kind", "split", "n_items", "n_votes", "ceiling", "judges", "per_category")}


def test_calibrate_reads_every_pass_fail_spelling_beside_a_pass_fail_judge(study) -> None:
    items, labels, judgments = study
    base = juge.calibrate(items=items, judgments=judgments, labels=labels, resamples=200)
    assert base.kind == "passfail" and list(base.judges) == ["grader/tpl"]
    for code in CODES:
        coded = juge.calibrate(items=items, judgments=judgments, labels=recode(labels, code), resamples=200)
        assert figures(coded.to_dict()) == figures(base.to_dict()), code
        # the kind was guessed, and the result says so and from what
        assert coded.kind_guess is not None and coded.kind_guess.kind == "passfail", code
        assert "PASS/FAIL" in coded.kind_guess.guessed_from
        assert any(note.startswith("a passfail study, guessed because") for note in coded.notes)


def test_calibrate_cli_with_1_0_labels_keeps_the_judge(study, tmp_path, monkeypatch, capsys) -> None:
    # The reproduction: a PASS/FAIL judge and labels coded 1/0 made a score study and dropped the judge.
    items, labels, judgments = study
    out = tmp_path / "cal.json"
    code, stdout, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(items), "--judgments", str(judgments),
        "--labels", str(recode(labels, "1/0")), "--json", str(out), "--resamples", "100",
    )  # fmt: skip
    assert code == 0, err
    saved = json.loads(out.read_text())
    assert saved["kind"] == "passfail" and list(saved["judges"]) == ["grader/tpl"]
    assert saved["kind_guess"]["kind"] == "passfail"
    assert "a passfail study, guessed because" in stdout
    assert "left out of this" not in stdout


def test_1_0_labels_beside_a_score_judge_or_with_kind_score_are_scores(study, tmp_path) -> None:
    items, labels, judgments = study
    scored = tmp_path / "scores.jsonl"
    rows = [json.loads(line) for line in judgments.read_text().splitlines()]
    scored.write_text(
        "".join(json.dumps({**r, "verdict": {"PASS": 1, "FAIL": 0}.get(r["verdict"])}) + "\n" for r in rows)
    )
    ones = recode(labels, "1/0")
    beside_scores = juge.calibrate(items=items, judgments=scored, labels=ones, resamples=100)
    assert beside_scores.kind == "score" and beside_scores.kind_guess.kind == "score"
    assert "judge gives scores" in beside_scores.kind_guess.guessed_from
    told = juge.calibrate(items=items, judgments=judgments, labels=ones, kind="score", resamples=100)
    assert told.kind == "score" and told.kind_guess is None  # said, not guessed: the PASS/FAIL judge is left out
    assert told.judges == {} and any("left out of this score study" in n for n in told.notes)
    without_judges = juge.calibrate(items=items, labels=ones, resamples=100)
    assert without_judges.kind == "passfail"


def test_scale_extends_the_words_and_names_every_value_it_does_not_list(study, tmp_path) -> None:
    items, labels, judgments = study
    ones = recode(labels, "1/0")
    # yes=PASS,no=FAIL: 1/0 are PASS/FAIL spellings, read so, and the notes say which values the scale left out
    mixed = juge.calibrate(items=items, judgments=judgments, labels=ones, scale={"yes": "PASS", "no": "FAIL"})
    assert mixed.kind == "passfail"
    assert any(n.startswith("--scale does not list 0, 1: read as passfail values") for n in mixed.notes)
    base = juge.calibrate(items=items, judgments=judgments, labels=labels, resamples=2000)
    assert figures(mixed.to_dict()) == figures(base.to_dict())
    # a word neither the scale nor the PASS/FAIL spellings know is an error naming its line
    odd = tmp_path / "odd.jsonl"
    odd.write_text(ones.read_text().replace('"label": 1}', '"label": "maybe"}', 1))
    with pytest.raises(InputError, match=r"odd\.jsonl:\d+: field 'label': value 'maybe' is not in --scale"):
        juge.calibrate(items=items, judgments=judgments, labels=odd, scale={"yes": "PASS", "no": "FAIL"})
    # a score scale: a number that is not one of its points is an error, not read silently
    scores = tmp_path / "scores.jsonl"
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    words = {"PASS": "Good", "FAIL": "Bad"}
    scores.write_text("".join(json.dumps({**r, "label": words[r["label"]]}) + "\n" for r in rows[:-1]))
    scores.write_text(scores.read_text() + json.dumps({**rows[-1], "label": 7}) + "\n")
    with pytest.raises(InputError, match=r"value 7 is not in --scale \(it maps Bad, Good\) nor one of its points"):
        juge.calibrate(items=items, labels=scores, scale={"Good": 2.0, "Bad": 1.0}, resamples=100)


def test_policy_derive_reads_1_0_as_pass_fail(study) -> None:
    items, labels, judgments = study
    base = juge.policy.derive(items=items, judgments=judgments, labels=labels, resamples=200).to_dict()
    for code in ("1/0", "true/false", "yes/no"):
        coded = juge.policy.derive(items=items, judgments=judgments, labels=recode(labels, code), resamples=200)
        same = coded.to_dict()
        assert same["judge"] == base["judge"] == "grader/tpl", code
        for key in ("judge_kind", "categories", "judges", "default_route"):
            assert same.get(key) == base.get(key), (code, key)


def test_policy_derive_cli_takes_the_shared_options(study, tmp_path, monkeypatch, capsys) -> None:
    items, labels, judgments = study
    code, stdout, err = run_cli(
        monkeypatch, capsys, "policy", "derive", "--items", str(items), "--judgments", str(judgments),
        "--labels", str(recode(labels, "1/0")), "--scale", "yes=PASS,no=FAIL", "--kind", "passfail",
        "-o", str(tmp_path / "P.md"), "--json", str(tmp_path / "p.json"), "--resamples", "100",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads((tmp_path / "p.json").read_text())["judge"] == "grader/tpl"


def stored_run(tmp_path: Path, judgments: Path) -> Path:
    from juge.data.records import Case, Judgment
    from juge.store import Store

    calls = [json.loads(line) for line in judgments.read_text().splitlines()]
    db = tmp_path / "j.db"
    with Store(db) as store:
        store.create_run(
            dataset_hash="d", juge_version="t", run_id="r1",
            cases=[Case(id=c["item_id"], question="q", output="o") for c in calls],
        )  # fmt: skip
        for c in calls:
            store.save_judgment(
                "r1",
                Judgment(item_id=c["item_id"], judge="grader", model="m", template="tpl", text=c["text"],
                         verdict=c["verdict"], outcome=c["outcome"]),
            )  # fmt: skip
    return db


def test_estimate_reads_1_0_as_pass_fail(study, tmp_path) -> None:
    _, labels, judgments = study
    db = stored_run(tmp_path, judgments)
    keys = ("n_labelled", "judge_only", "human_only", "ppi", "rogan_gladen")
    base = juge.estimate("r1", labels, db=db, resamples=300).to_dict()
    for code in ("1/0", "yes/no", "true/false"):
        coded = juge.estimate("r1", recode(labels, code), db=db, resamples=300).to_dict()
        assert {k: coded[k] for k in keys} == {k: base[k] for k in keys}, code
        assert coded["kind_guess"]["kind"] == "passfail"


def test_tune_reads_1_0_as_pass_fail(tmp_path) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "tune"))
    from test_tune import scripted, write_data

    from juge.tune import tune

    judge, items, labels = write_data(tmp_path, n_groups=16, holdout=0)
    results = {}
    for code in ("words", "1/0"):
        coded = labels if code == "words" else recode(labels, code)
        result = tune(
            judge, items=items, labels=coded, out=tmp_path / f"tuned-{code[0]}", provider=scripted(0.7, 0.9),
            db=tmp_path / "j.db", folds=2, n_resamples=200, candidates=("as-given", "fewshot-2"),
        )  # fmt: skip
        results[code] = result.to_dict()
    for key in ("chosen", "in_sample", "out_of_fold"):
        assert results["1/0"][key] == results["words"][key], key
    assert [c["agreement"] for c in results["1/0"]["candidates"]] == [
        c["agreement"] for c in results["words"]["candidates"]
    ]


def test_a_judge_left_out_by_kind_is_not_called_missing(study, monkeypatch, capsys) -> None:
    # --kind score with a PASS/FAIL judge: the judge is left out, and the output does not say no judgments were given.
    items, labels, judgments = study
    code, stdout, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(items), "--judgments", str(judgments),
        "--labels", str(recode(labels, "1/0")), "--kind", "score", "--resamples", "100",
    )  # fmt: skip
    assert code == 0, err
    assert "left out of this score study" in stdout and "No judgments given" not in stdout
