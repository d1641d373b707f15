"""`juge label` commands: init checks, add-rater links, export into `juge calibrate`, judge review lists."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from juge.cli import app
from juge.data.records import Case, Judgment
from juge.errors import InputError
from juge.label.db import LabelStore
from juge.store import Store
from label_helpers import pair_case, score_case, write_cases, write_rubric

runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Path | str]:
    return {
        "db": f"sqlite:///{tmp_path / 'juge.db'}",
        "cases": write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(20)]),
        "rubric": write_rubric(tmp_path / "rubric.toml"),
        "tmp": tmp_path,
    }


def juge(env: dict, *args: str):  # noqa: ANN201
    return runner.invoke(app, ["label", *args, "--db-url", str(env["db"])])


def init(env: dict, name: str = "q4", task: str = "pairwise", cases: Path | None = None, *extra: str):  # noqa: ANN201
    return juge(
        env,
        "init",
        "--cases",
        str(cases or env["cases"]),
        "--task",
        task,
        "--rubric",
        str(env["rubric"]),
        "--name",
        name,
        *extra,
    )


def test_init_and_add_rater_print_a_working_login_link(env: dict) -> None:
    result = init(env, "q4", "pairwise", None, "--overlap", "0.25")
    assert result.exit_code == 0, result.output
    assert "20 pairwise items, 5 of them for 2 raters" in result.output
    result = juge(env, "add-rater", "alice", "--base-url", "http://127.0.0.1:9000")
    assert result.exit_code == 0, result.output
    link = next(line for line in result.output.splitlines() if line.startswith("http"))
    assert link.startswith("http://127.0.0.1:9000/login?token=")
    store = LabelStore(str(env["db"]))
    assert store.rater_by_token(link.split("token=", 1)[1]).name == "alice"
    assert "--base-url" in result.output and link.removeprefix("http://127.0.0.1:9000") in result.output.replace(
        link, ""
    )  # the path is printed on its own too, to put behind the address serve prints
    assert isinstance(juge(env, "add-rater", "alice").exception, InputError)  # names are unique
    result = juge(env, "add-rater", "bob")
    note = " ".join(result.output.split())
    assert "http://127.0.0.1:8765/login?token=" in result.output
    assert "defaults of `juge label serve` (--host 127.0.0.1 --port 8765)" in note
    assert "the address `juge label serve` prints at start" in note


@pytest.mark.parametrize(
    "rubric_text, message",
    [
        ("name = 'x'\ndescription = ", "invalid TOML"),
        ("description = 'no name'\n", "name"),
    ],
)
def test_init_refuses_a_bad_rubric_naming_the_file(env: dict, rubric_text: str, message: str) -> None:
    Path(env["rubric"]).write_text(rubric_text)
    result = init(env)
    assert isinstance(result.exception, InputError)
    assert "rubric.toml" in str(result.exception) and message in str(result.exception)


def test_init_checks_cases_fit_the_task(env: dict) -> None:
    singles = write_cases(Path(env["tmp"]) / "single.jsonl", [score_case(i) for i in range(3)])
    result = init(env, "q4", "pairwise", singles)
    assert isinstance(result.exception, InputError)
    assert "single.jsonl" in str(result.exception) and "output_1" in str(result.exception)
    assert init(env, "q4", "score", singles).exit_code == 0  # the rubric has levels 1..3
    assert isinstance(init(env, "q4", "score", singles).exception, InputError)  # the name is taken


def test_input_errors_exit_with_code_2(env: dict) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "juge.cli",
            "label",
            "export",
            "nope",
            "-o",
            str(Path(env["tmp"]) / "x.jsonl"),
            "--db-url",
            str(env["db"]),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "no labelling project named 'nope'" in done.stderr
    assert not (Path(env["tmp"]) / "x.jsonl").exists()


def label_everything(store: LabelStore, project_name: str, raters: list[str], seed: int) -> None:
    project = store.project(project_name)
    rng = random.Random(seed)
    for name in raters:
        store.add_rater(project, name)
        rater = store.rater(project, name)
        while (a := store.next_assignment(rater)) is not None:
            store.save_label(rater, a.id, rng.choice(["A", "B", "tie"]))


def test_export_loads_in_juge_calibrate_and_status_matches_its_ceiling(env: dict) -> None:
    assert init(env, "q4", "pairwise", None, "--overlap", "1", "--overlap-raters", "3").exit_code == 0
    label_everything(LabelStore(str(env["db"])), "q4", ["ann", "ben", "cat"], seed=2)
    labels = Path(env["tmp"]) / "labels.jsonl"
    assert juge(env, "export", "q4", "-o", str(labels)).exit_code == 0
    rng = random.Random(0)
    judgments = Path(env["tmp"]) / "judgments.jsonl"
    judgments.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": f"item-{i:04d}",
                    "judge": "j",
                    "model": "m-1",
                    "prompt": "pair-v2",
                    "order": o,
                    "letter": (letter := rng.choice("ABC")),
                    "outcome": "ok",
                    "text": f"[[{letter}]]",
                }
            )
            + "\n"
            for i in range(20)
            for o in ("12", "21")
        )
    )
    out = Path(env["tmp"]) / "calibration.json"
    result = runner.invoke(
        app,
        [
            "calibrate",
            "--items",
            str(env["cases"]),
            "--labels",
            str(labels),
            "--judgments",
            str(judgments),
            "--resamples",
            "20",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    ceiling = json.loads(out.read_text())["ceiling"]
    status = juge(env, "status", "q4", "--json", "-")
    assert status.exit_code == 0, status.output
    figures = json.loads(status.output)
    assert figures["agreement_estimate"]["value"] == pytest.approx(ceiling["agreement"]["value"])
    assert figures["kappa_estimate"]["value"] == pytest.approx(ceiling["kappa"]["value"])
    assert ceiling["n_pairs"] == 60 == figures["agreement_estimate"]["n"] == figures["kappa_estimate"]["n"]


def test_judge_run_disagreements_become_a_named_list_of_ids(env: dict) -> None:
    cases = [Case(id=f"c{i}", question="q", output_1="x", output_2="y") for i in range(4)]
    cases_path = write_cases(Path(env["tmp"]) / "four.jsonl", cases)
    assert init(env, "q4", "pairwise", cases_path, "--overlap", "1").exit_code == 0
    store = LabelStore(str(env["db"]))
    project = store.project("q4")
    for name in ("ann", "ben"):
        store.add_rater(project, name)
        rater = store.rater(project, name)
        while (a := store.next_assignment(rater)) is not None:
            # Both say A everywhere, except that they split on c3.
            store.save_label(rater, a.id, "B" if (a.case.id, name) == ("c3", "ben") else "A")
    # A judge run: c0 consistent A (agrees), c1 consistent B (disagrees), c2 A then A in order 21 = B
    # (inconsistent -> tie, disagrees), c3 unparsed in one order (no verdict).
    letters = {"c0": ("A", "B"), "c1": ("B", "A"), "c2": ("A", "A"), "c3": ("A", None)}
    runs = Store(Path(env["tmp"]) / "runs.db")
    run_id = runs.create_run(dataset_hash="h", juge_version="t", cases=cases)
    for item, pair in letters.items():
        for order, letter in zip(("12", "21"), pair):
            runs.save_judgment(
                run_id,
                Judgment(
                    item_id=item,
                    judge="j",
                    model="m",
                    template="t",
                    order=order,
                    text=str(letter),
                    verdict=letter,
                    outcome="ok" if letter else "unparsed",
                ),
            )
    runs.close()
    result = juge(env, "attach-run", "q4", run_id[:6], "--store", str(Path(env["tmp"]) / "runs.db"))
    assert result.exit_code == 0 and "Attached 3 judge verdicts" in result.output, result.output
    ids = Path(env["tmp"]) / "ids.txt"
    result = juge(env, "disagreements", "q4", "--save", "rubric-v1", "-o", str(ids))
    assert result.exit_code == 0, result.output
    assert ids.read_text().split() == ["c1", "c2", "c3"]
    assert "c1: judge j says B" in result.output and "c2: judge j says tie" in result.output
    assert "c3: raters disagree" in result.output
    again = Path(env["tmp"]) / "again.txt"
    assert juge(env, "disagreements", "q4", "--list", "rubric-v1", "-o", str(again)).exit_code == 0
    assert again.read_text() == ids.read_text()
    # A final label recorded in the review is exported apart from the raters' labels.
    store.adjudicate(_adjudicator(store, project), "c3", "A", "see step 2")
    labels, finals = Path(env["tmp"]) / "l.jsonl", Path(env["tmp"]) / "final.jsonl"
    assert juge(env, "export", "q4", "-o", str(labels), "--adjudications", str(finals)).exit_code == 0
    assert [json.loads(line) for line in finals.read_text().splitlines()] == [
        {"item_id": "c3", "label": "A", "reason": "see step 2", "adjudicator": "judy"}
    ]
    assert len(labels.read_text().splitlines()) == 8


def _adjudicator(store: LabelStore, project):  # noqa: ANN001, ANN202
    store.add_rater(project, "judy", adjudicator=True)
    return store.rater(project, "judy")


@pytest.mark.parametrize("name", ["", "   ", " q4", "q4\u202e", "x" * 65])
def test_init_refuses_a_project_name_no_one_could_read_or_type(env: dict, name: str) -> None:
    # Project names are shown and typed back (label status NAME) like rater names: the same rules.
    result = init(env, name)
    assert isinstance(result.exception, InputError)  # the CLI's exit 2
    assert "project name" in str(result.exception)
    assert init(env, "q4").exit_code == 0
    assert LabelStore(str(env["db"])).project().name == "q4"  # the only project: nothing was made before
