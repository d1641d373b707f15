"""`juge COMMAND ...` builds that command alone (juge.cli.app_for): typer builds the options of every command it holds
before parsing, which cost each start tens of ms. Alone, a command helps, parses and fails as in the whole app. Run
as a process, juge skips the interpreter's last garbage collection (juge.cli.as_process) and still writes all it
says it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import typer
from typer.testing import CliRunner

from juge.cli import _command_name, app, app_for

runner = CliRunner()


def test_each_command_alone_helps_and_fails_as_in_the_whole_app(monkeypatch) -> None:
    whole = typer.main.get_command(app)  # built once: the runner would build it again for each call
    monkeypatch.setattr("typer.testing._get_command", lambda a: whole if a is app else typer.main.get_command(a))
    names = [_command_name(c) for c in app.registered_commands]
    assert "run" in names and len(names) > 15
    for name in names:
        assert name is not None
        for args in ([name, "--help"], [name, "--no-such-option"]):
            alone = app_for(args)
            assert [_command_name(c) for c in alone.registered_commands] == [name]
            got = runner.invoke(alone, args, prog_name="juge", terminal_width=100)
            want = runner.invoke(app, args, prog_name="juge", terminal_width=100)
            assert (got.exit_code, got.output) == (want.exit_code, want.output), args


def test_the_command_map_names_each_commands_own_module() -> None:
    # juge.cli.COMMAND_MODULE lets `juge COMMAND` import one command module: each command it names is registered
    # by that module, and every command of the whole app but `version` is in it
    import importlib

    from juge.cli import COMMAND_MODULE, COMMAND_MODULES

    registered = {}
    for module in COMMAND_MODULES:
        one = typer.Typer()
        importlib.import_module(module).register(one)
        registered.update(dict.fromkeys((_command_name(c) for c in one.registered_commands), module))
    assert COMMAND_MODULE == registered
    assert set(COMMAND_MODULE) | {"version"} == {_command_name(c) for c in app.registered_commands}


_ONE_MODULE = """
import json, sys
from juge.cli import app_for
app_for(["run", "--help"])
print(json.dumps(sorted(m for m in sys.modules if m.startswith("juge.commands."))))
"""


def test_a_command_imports_its_own_command_module_alone() -> None:
    done = subprocess.run([sys.executable, "-c", _ONE_MODULE], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert "juge.commands.run" in loaded
    assert not loaded & {"juge.commands.policy", "juge.commands.calibrate", "juge.commands.label", "juge.commands.view"}


def test_groups_options_and_unknown_names_get_the_whole_app() -> None:
    for args in (["policy", "derive", "--help"], ["--version"], ["--help"], ["no-such-command"], []):
        assert app_for(args) is app


ENTRY = "import sys; from juge.commands.entry import main; sys.argv[0] = 'juge'; main()"


def test_run_as_a_process_writes_all_it_says(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "question": "q", "output": f"o{i}"}) + "\n" for i in range(50))
    )
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n[[judges]]\nname = "pf"\nsetup = "passfail"\ndescription = "Right?"\n'
        '[provider]\nname = "scripted"\noptions = { default = "PASS\\nFine." }\n'
    )
    for how, command in (("module", ["-m", "juge.cli"]), ("console script", ["-c", ENTRY])):
        done = subprocess.run(
            [sys.executable, *command, "run", "eval.toml", "--db", f"{how}.db", "--json", "-", "--no-progress"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["n_cases"] == 50 and summary["cases_passed"] == 50, how
        import juge

        shown = juge.show(summary["run_id"], db=tmp_path / f"{how}.db")
        assert len(shown.cases) == 50 and all(c.judgments[0].verdict == "PASS" for c in shown.cases)
