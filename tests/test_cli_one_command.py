"""`juge COMMAND ...` builds that command alone (juge.cli.app_for): typer builds the options of every command it holds
before parsing, which cost each start tens of ms. Alone, a command helps, parses and fails as in the whole app."""

from __future__ import annotations

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


def test_groups_options_and_unknown_names_get_the_whole_app() -> None:
    for args in (["policy", "derive", "--help"], ["--version"], ["--help"], ["no-such-command"], []):
        assert app_for(args) is app
