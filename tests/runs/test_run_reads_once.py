"""`juge run` reads its cases file once and renders each prompt once (issue 32): the plan's check of every
prompt runs in the selection's read, and the run stores, checks and judges the cases and prompts it kept."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import juge
import juge.data.readers as readers
from cli_helpers import write_jsonl
from juge.errors import InputError
from juge.judges.judge import Judge


def _eval(tmp_path: Path, extra: str = "") -> Path:
    singles = [{"id": f"c{i}", "question": f"q{i}", "output": f"answer {i}"} for i in range(6)]
    pairs = [{"id": f"p{i}", "question": f"q{i}", "output_1": f"one {i}", "output_2": f"two {i}"} for i in range(2)]
    write_jsonl(tmp_path / "cases.jsonl", singles + pairs)
    path = tmp_path / "eval.toml"
    path.write_text(
        f'cases = "cases.jsonl"\n{extra}\n'
        '[[checks]]\nkind = "length"\nmax_chars = 100\n'
        '[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\nmodel = "m"\n'
        '[[judges]]\nname = "pair"\nsetup = "pairwise"\ndescription = "Better?"\nmodel = "m"\n'
        '[provider]\nname = "scripted"\noptions = { default = "PASS [[A]]" }\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture
def counted(monkeypatch) -> Counter[str]:
    """Reads of the cases file (rows parsed from it) and prompts rendered, counted."""
    seen: Counter[str] = Counter()
    iter_rows, render = readers.iter_rows, Judge.render

    def counting_rows(source, *args, **kwargs):
        if str(source).endswith("cases.jsonl"):
            seen["reads"] += 1
        return iter_rows(source, *args, **kwargs)

    def counting_render(self, case, order=None, own_solution=None):
        seen[f"render {self.name} {case.id} {order}"] += 1
        return render(self, case, order=order, own_solution=own_solution)

    monkeypatch.setattr(readers, "iter_rows", counting_rows)
    monkeypatch.setattr(Judge, "render", counting_render)
    return seen


def _renders(counted: Counter[str]) -> dict[str, int]:
    """The renders of the run's cases (a judge file's own check renders a sample case when it is loaded)."""
    return {k: n for k, n in counted.items() if k.startswith(("render pf c", "render pair p"))}


def test_a_run_reads_its_cases_once_and_renders_each_prompt_once(tmp_path: Path, counted: Counter[str]) -> None:
    run = juge.run(_eval(tmp_path), db=tmp_path / "j.db", repeat=2)
    assert run.summary is not None and run.summary.n_cases == 8
    # 6 single cases x 1 judge + 2 pairs x 2 orders, each asked twice (a repeat sends the same prompt)
    assert run.engine_stats["calls"] == 20
    assert {name: c.n for name, c in run.summary.checks.items()} == {"length": 6, "length[1]": 2, "length[2]": 2}
    renders = _renders(counted)
    assert len(renders) == 10 and set(renders.values()) == {1}, renders
    assert counted["reads"] == 1


def test_with_a_sample_the_cases_are_read_twice_and_each_prompt_rendered_once(
    tmp_path: Path, counted: Counter[str]
) -> None:
    run = juge.run(_eval(tmp_path, "sample = 5\nseed = 1"), db=tmp_path / "j.db")
    assert run.summary is not None and run.summary.n_cases == 5
    renders = _renders(counted)
    assert len(renders) == run.engine_stats["calls"] and set(renders.values()) == {1}
    assert counted["reads"] == 2  # the draw needs the count first: the check walks the sample after it


def test_held_prompts_are_the_prompts_a_streamed_run_renders(tmp_path: Path, monkeypatch) -> None:
    """Over PREPARED_BYTES the run reads its cases back from the store and renders at each call, as before: the
    same prompts, so a run of the other kind is answered wholly from the cache the first one filled."""
    eval_file, db = _eval(tmp_path), tmp_path / "j.db"
    monkeypatch.setattr("juge.runs.plan.PREPARED_BYTES", 0)
    streamed = juge.run(eval_file, db=db)
    monkeypatch.undo()
    held = juge.run(eval_file, db=db, resume=False)
    assert streamed.engine_stats["calls"] == 10
    assert held.engine_stats.get("calls", 0) == 0 and held.engine_stats["cache_hits"] == 10
    assert streamed.summary is not None and held.summary is not None
    assert held.summary.judges == streamed.summary.judges


def test_the_files_own_errors_come_before_a_case_that_does_not_render(tmp_path: Path) -> None:
    """A case lacking its answer is found in the same read as a duplicate id further down: the duplicate is
    still the error named, as when the prompts were checked after the read."""
    eval_file = _eval(tmp_path)
    rows = [{"id": "a", "question": "q", "output": "o"}, {"id": "b", "question": "q"}]
    write_jsonl(tmp_path / "cases.jsonl", [*rows, {"id": "a", "question": "q", "output": "o"}])
    with pytest.raises(InputError, match=r"cases.jsonl:3: field 'id': duplicate id 'a'"):
        juge.run(eval_file, db=tmp_path / "j.db")
    write_jsonl(tmp_path / "cases.jsonl", [*rows, {"id": "c", "question": "q"}])
    with pytest.raises(InputError, match=r"cases.jsonl:2: field 'output': case 'b'"):
        juge.run(eval_file, db=tmp_path / "j.db")
    with pytest.raises(InputError, match=r"--only names case ids not in"):
        juge.run(eval_file, db=tmp_path / "j.db", only=["b", "zz"])
    assert not (tmp_path / "j.db").exists()  # nothing created on bad input


def test_with_a_system_under_test_the_cases_file_s_errors_still_come_first(tmp_path: Path) -> None:
    """The system's template is read after the cases file (as before the check moved into the file's read): a
    missing cases file is the error named when the template is missing too."""
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n[system]\nmodel = "s"\ntemplate = "missing.j2"\n'
        'provider = { name = "scripted", options = { default = "hi" } }\n'
        '[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\nmodel = "m"\n'
        '[provider]\nname = "scripted"\noptions = { default = "PASS" }\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"cases file .* not found"):
        juge.run(tmp_path / "eval.toml", db=tmp_path / "j.db")
    write_jsonl(tmp_path / "cases.jsonl", [{"id": "a", "question": "q"}])
    with pytest.raises(InputError, match=r"system template .*missing.j2 not found"):
        juge.run(tmp_path / "eval.toml", db=tmp_path / "j.db")
