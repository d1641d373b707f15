"""Progress off a terminal: a line every interval with done/total, rate, ETA and errors; `juge runs`
shows done/total for a running run."""

from __future__ import annotations

import io
import re

from rich.console import Console

from cli_helpers import run_cli, write_jsonl
from juge.progress import BarProgress, LineProgress, NoProgress, run_progress


def test_line_progress_counts_and_errors():
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    with run_progress(console, "judging", total=10, completed=4, interval=0.0) as progress:
        assert isinstance(progress, LineProgress)
        for i in range(6):
            progress.advance(error=i in (1, 3))
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("judging: 4/10 already stored")
    ticks = [line for line in lines[1:] if "ETA" in line]
    assert [re.search(r"(\d+)/10", line).group(1) for line in ticks] == ["5", "6", "7", "8", "9", "10"]
    assert [int(re.search(r"errors (\d+)", line).group(1)) for line in ticks] == [0, 1, 1, 2, 2, 2]
    assert "10/10 (100%)" in lines[-1] and "took" in lines[-1] and "errors 2, unparsed 0" in lines[-1]


def test_line_progress_is_quiet_between_intervals():
    buf = io.StringIO()
    with run_progress(Console(file=buf, force_terminal=False), "judging", total=100, interval=3600) as p:
        for _ in range(100):
            p.advance()
    assert len(buf.getvalue().splitlines()) == 1  # only the last line


def test_bar_on_a_terminal_and_none_when_disabled():
    terminal = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(run_progress(terminal, "judging", total=3), BarProgress)
    assert isinstance(run_progress(terminal, "judging", total=3, enabled=False), NoProgress)


def test_a_run_off_a_terminal_prints_progress_lines(tmp_path, monkeypatch, capsys):
    cases = write_jsonl(tmp_path / "c.jsonl", [{"id": f"c{i}", "question": "q", "output": f"o{i}"} for i in range(5)])
    judge = tmp_path / "j.toml"
    judge.write_text(
        'name = "j"\nsetup = "passfail"\ndescription = "ok?"\nprovider = "scripted"\n'
        '[provider_options]\ndefault = "PASS\\nFine."\n'
        '[[provider_options.responses]]\nmatch = "o3"\ntext = "maybe"\n'
    )
    code, _, err = run_cli(
        monkeypatch, capsys, "run", "--cases", str(cases), "--judge", str(judge), "--db", str(tmp_path / "d.db")
    )
    assert code == 0
    final = [line for line in err.splitlines() if line.startswith("judging: 5/5")]
    assert final and final[-1].endswith("errors 0, unparsed 1")


def test_runs_shows_done_over_total_for_a_running_run(tmp_path, monkeypatch, capsys):
    from juge.data.records import Case, Judgment
    from juge.store import Store

    db = tmp_path / "d.db"
    with Store(db) as store:
        cases = [Case(id="p", output_1="a", output_2="b"), Case(id="s", output="x")]
        judges = [
            {"name": n, "setup": s, "template": "t", "template_hash": "h", "model": "m"}
            for n, s in (("pair", "pairwise"), ("pf", "passfail"))
        ]
        config = {"repeat": 1, "judges": judges}
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases, config=config)
        store.save_judgment(
            run_id,
            Judgment(item_id="s", judge="pf", model="m", template="t", template_hash="h", text="PASS", verdict="PASS", outcome="ok"),
        )  # fmt: skip
    code, out, _ = run_cli(monkeypatch, capsys, "runs", "--db", str(db))
    assert code == 0
    assert "1/3 judgments stored" in out  # the pair in two orders and the single answer once


def test_a_run_judged_in_parts_counts_each_parts_own_tasks(tmp_path):
    """tune judges one run fold by fold: the second part starts at 0 of its own, not at what the first stored."""
    import asyncio

    from juge.data.records import Case
    from juge.engine import Engine, EngineOptions, build_tasks
    from juge.judges import judge_from_dict
    from juge.providers import make_provider
    from juge.store import Store

    judge = judge_from_dict({"name": "pf", "setup": "passfail", "model": "m", "description": "ok?"})
    provider = make_provider("scripted", default="PASS\nFine.")
    cases = [Case(id=f"c{i}", question="q", output=f"o{i}") for i in range(6)]
    buf = io.StringIO()
    with Store(tmp_path / "d.db") as store:
        engine = Engine(store, EngineOptions(progress=True))
        engine.console = Console(file=buf, force_terminal=False, width=200)
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
        for part in (cases[:4], cases[4:], cases):  # the last: all six stored already
            asyncio.run(engine.run_tasks(run_id, build_tasks(part, [judge]), {"pf": provider}))
    lines = buf.getvalue().splitlines()
    counts = [tuple(map(int, m.groups())) for line in lines if (m := re.search(r": (\d+)/(\d+)", line))]
    assert counts == [(4, 4), (2, 2), (6, 6), (6, 6)]  # the last part: all stored, said once, then its total
    assert sum("already stored" in line for line in lines) == 1


def test_unparsed_answers_are_counted_and_most_of_the_first_ten_said_at_once(tmp_path):
    # Issue 30: a local judge whose every answer was unparsed showed "errors 0" for ten minutes.
    import juge

    write_jsonl(tmp_path / "c.jsonl", [{"id": f"c{i:02d}", "question": "q", "output": "o"} for i in range(14)])
    (tmp_path / "eval.toml").write_text(
        'cases = "c.jsonl"\n[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\n'
        '[provider]\nname = "scripted"\noptions = { default = "The answer looks RIGHT-ISH to me." }\n'
        "[engine]\nconcurrency = 1\n",
        encoding="utf-8",
    )
    seen: dict[str, list] = {"advance": [], "notes": []}

    class Recorder:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def advance(self, *, error: bool = False, unparsed: bool = False) -> None:
            seen["advance"].append(unparsed)

        def note(self, message: str) -> None:
            seen["notes"].append(message)

    juge.run(tmp_path / "eval.toml", db=tmp_path / "j.db", progress=lambda d, t, c: Recorder())
    assert seen["advance"] == [True] * 14
    assert len(seen["notes"]) == 1  # said once, at the tenth answer
    note = seen["notes"][0]
    assert "10 of its first 10" in note and "RIGHT-ISH" in note and "constrained = true" in note

    class OldStyle(Recorder):  # a progress written before the keyword still works
        def advance(self, *, error: bool = False) -> None:
            seen["advance"].append(None)

    seen["advance"].clear()
    juge.run(tmp_path / "eval.toml", db=tmp_path / "k.db", progress=lambda d, t, c: OldStyle())
    assert seen["advance"] == [None] * 14
