"""The command line as a whole: every command's --help works, `juge split` keeps groups together."""

import json

import pytest
import typer
from typer.testing import CliRunner

from juge.cli import app

runner = CliRunner()


def _commands(group, prefix: tuple[str, ...] = ()):
    for name, cmd in group.commands.items():
        yield (*prefix, name)
        if hasattr(cmd, "commands"):  # a command group (typer may bundle its own click)
            yield from _commands(cmd, (*prefix, name))


ALL = list(_commands(typer.main.get_command(app)))


def test_every_expected_command_is_there():
    names = {" ".join(c) for c in ALL}
    for expected in (
        "run",
        "runs",
        "show",
        "export",
        "split",
        "calibrate",
        "demo",
        "policy derive",
        "policy test",
        "route",
        "audit-sample",
        "compare",
        "estimate",
        "report",
        "label init",
        "label serve",
        "label export",
        "version",
    ):
        assert expected in names


@pytest.mark.parametrize("command", [(), *ALL], ids=lambda c: " ".join(c) or "juge")
def test_help_of_every_command_shows_flags_as_flags(command):
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output
    # A flag takes no value: `--json`, not `--json <bool>` (typer 0.29's rich help adds the type).
    assert "<bool>" not in result.output
    assert "--help" in result.output


def test_options_with_a_value_keep_their_type_in_help():
    result = runner.invoke(app, ["tune", "--help"], env={"COLUMNS": "200"})
    assert "--no-progress" in result.output and "<int>" in result.output and "<path>" in result.output


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("juge ")
    command = runner.invoke(app, ["version"])
    assert command.exit_code == 0 and command.output == result.output  # the same line both ways


def test_version_is_the_installed_packages():
    # juge/_version.py is the one place the version is written (pyproject reads it at build, start-up reads the file
    # instead of importlib.metadata): the line must be what pip installed, and pyproject must not hold a second one
    import importlib.metadata
    import tomllib
    from pathlib import Path

    result = runner.invoke(app, ["--version"])
    assert result.output == f"juge {importlib.metadata.version('juge')}\n"
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_split_keeps_groups_together_and_refuses_to_overwrite(tmp_path, suffix):
    rows = [{"id": f"c{i}", "customer": f"k{i % 7}", "question": "q"} for i in range(50)]
    src = tmp_path / f"items{suffix}"
    if suffix == ".jsonl":
        src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        src.write_text("id,customer,question\n" + "".join(f"{r['id']},{r['customer']},q\n" for r in rows))
    out = tmp_path / f"split{suffix}"
    result = runner.invoke(app, ["split", "--items", str(src), "-o", str(out), "--by", "customer", "--holdout", "0.4"])
    assert result.exit_code == 0, result.output
    from juge.data.readers import read_rows

    got = [r for _, r in read_rows(out)]
    assert [r["id"] for r in got] == [r["id"] for r in rows]
    side = {}
    for r in got:
        assert side.setdefault(r["customer"], r["split"]) == r["split"]  # one side per customer
    assert set(side.values()) == {"dev", "holdout"}
    again = tmp_path / f"again{suffix}"
    runner.invoke(app, ["split", "--items", str(src), "-o", str(again), "--by", "customer", "--holdout", "0.4"])
    assert again.read_text() == out.read_text()  # seeded: the same split again


def test_split_errors(tmp_path):
    src = tmp_path / "items.jsonl"
    src.write_text('{"id": "a", "group": "g"}\n{"id": "b"}\n')
    result = runner.invoke(app, ["split", "--items", str(src), "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code != 0 and "items.jsonl:2: field 'group'" in str(result.exception)
    assert not (tmp_path / "o.jsonl").exists()
    result = runner.invoke(app, ["split", "--items", str(src), "-o", str(src)])
    assert result.exit_code != 0


def test_after_ctrl_c_a_second_one_ends_the_process_at_once(monkeypatch, tmp_path) -> None:
    # Issue 30: a second Ctrl-C while the interpreter waited for a worker thread printed a traceback.
    import signal

    import juge.runs.api
    from juge.cli import INTERRUPTED, main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(juge.runs.api, "run", interrupted)
    before = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as stopped:
            main(["run", "--cases", str(tmp_path / "c.jsonl"), "--judge", str(tmp_path / "j.toml")])
        assert stopped.value.code == INTERRUPTED
        assert signal.getsignal(signal.SIGINT) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, before)
