"""One error tree (juge.errors): every exception juge defines is a JugeError, an InputError (exit 2) or a Fault
(exit 3), keeping the built-in base it had; the same mistake raises the same class from every API function; the
command line exits with the code of the class."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import juge
from cli_helpers import juge_main
from juge.data.records import Case
from juge.errors import Fault, InputError, JugeError
from juge.providers.base import ProviderError
from juge.providers.registry import UnknownProvider
from juge.store import RunNotFound, Store
from label_helpers import pair_case, write_cases, write_rubric


def _juge_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a juge module that imports here (an optional driver may be missing)."""
    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(juge.__path__, "juge."):
        try:
            loaded = importlib.import_module(module.name)
        except ImportError:
            continue
        for name, value in vars(loaded).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.name:
                found[f"{module.name}.{name}"] = value
    return found


def test_every_juge_exception_is_an_input_error_or_a_fault() -> None:
    found = _juge_exceptions()
    assert len(found) >= 17
    stray = [name for name, cls in found.items() if cls is not JugeError and not issubclass(cls, (InputError, Fault))]
    assert stray == []
    assert not issubclass(InputError, Fault) and not issubclass(Fault, InputError)
    assert (InputError.exit_code, Fault.exit_code) == (2, 3)


@pytest.mark.parametrize(
    ("name", "builtin", "root"),
    [
        ("juge.store.RunNotFound", LookupError, InputError),
        ("juge.providers.registry.UnknownProvider", ValueError, InputError),
        ("juge.checks.CheckConfigError", ValueError, InputError),
        ("juge.label.db.LabelError", ValueError, InputError),
        ("juge.label.db.ReleasedError", ValueError, InputError),
        ("juge.providers.base.ProviderError", Exception, Fault),
        ("juge.providers.base.ProviderClosed", RuntimeError, Fault),
    ],
)
def test_a_class_keeps_its_builtin_base(name: str, builtin: type[Exception], root: type[JugeError]) -> None:
    module, _, cls_name = name.rpartition(".")
    cls = getattr(importlib.import_module(module), cls_name)
    assert issubclass(cls, builtin) and issubclass(cls, root)


@pytest.fixture
def store_with_a_run(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "juge.db"
    with Store(db) as store:
        run_id = store.create_run(dataset_hash="h", juge_version="t", cases=[Case(id="c1", question="q", output="a")])
    return db, run_id


def _labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"item_id": "c1", "rater_id": "r1", "label": "PASS"}\n', encoding="utf-8")
    return path


def _label_project(tmp_path: Path) -> str:
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(4)])
    juge.label_init("p", cases=cases, task="pairwise", rubric=write_rubric(tmp_path / "r.toml"), db_url=db_url)
    return db_url


CALLS: dict[str, Callable[[Path, str, Path], Any]] = {
    "show": lambda db, run, tmp: juge.show("nope", db=db),
    "export": lambda db, run, tmp: juge.export("nope", tmp / "out.csv", db=db),
    "compare (old)": lambda db, run, tmp: juge.compare("nope", run, db=db),
    "compare (new)": lambda db, run, tmp: juge.compare(run, "nope", db=db),
    "delete_runs": lambda db, run, tmp: juge.delete_runs([run, "nope"], db=db),
    "estimate": lambda db, run, tmp: juge.estimate("nope", _labels(tmp), db=db),
    "run_report": lambda db, run, tmp: juge.api.run_report(run="nope", db=db, path=tmp / "r.html"),
    "calibration_inputs": lambda db, run, tmp: juge.calibration_inputs(run="nope", db=db),
    "calibrate": lambda db, run, tmp: juge.calibrate(run="nope", db=db),
    "policy.derive": lambda db, run, tmp: juge.policy.derive(run="nope", db=db),
    "label_attach_run": lambda db, run, tmp: juge.label_attach_run("p", "nope", db=db, db_url=_label_project(tmp)),
}


@pytest.mark.parametrize("call", CALLS)
def test_an_unknown_run_id_is_a_run_not_found_from_every_function(
    call: str, store_with_a_run: tuple[Path, str], tmp_path: Path
) -> None:
    db, run = store_with_a_run
    with pytest.raises(JugeError) as exc:
        CALLS[call](db, run, tmp_path)
    assert type(exc.value) is RunNotFound, (type(exc.value), str(exc.value))
    assert isinstance(exc.value, InputError) and isinstance(exc.value, LookupError)
    assert "'nope'" in str(exc.value)
    with Store(db) as store:
        assert store.get_run(run)["id"] == run  # nothing was deleted


@pytest.mark.parametrize(
    "args",
    [
        ["show", "nope"],
        ["compare", "nope", "{run}"],
        ["export", "nope", "-o", "{tmp}/out.csv"],
        ["estimate", "--run", "nope", "--labels", "{tmp}/labels.jsonl"],
        ["calibrate", "--run", "nope"],
        ["policy", "derive", "--run", "nope"],
        ["runs", "rm", "nope"],
    ],
)
def test_the_command_line_exits_2_for_an_unknown_run_id(
    args: list[str], store_with_a_run: tuple[Path, str], tmp_path: Path
) -> None:
    db, run = store_with_a_run
    _labels(tmp_path)
    argv = [a.format(run=run, tmp=tmp_path) for a in args] + ["--db", str(db)]
    result = CliRunner().invoke(juge_main, argv, env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert "'nope'" in result.output


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (InputError("bad"), 2),
        (RunNotFound("no run 'x'"), 2),
        (UnknownProvider("no provider 'x'"), 2),
        (Fault("disk full"), 3),
        (ProviderError("every call failed"), 3),
    ],
)
def test_one_handler_gives_the_exit_code_of_the_class(
    error: JugeError, code: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from juge import cli

    def app(**_: Any) -> None:
        raise error

    monkeypatch.setattr(cli, "app_for", lambda _args: app)  # the handler is the subject, not the command
    with pytest.raises(SystemExit) as exited:
        cli.main(["runs"])
    assert exited.value.code == code
    assert capsys.readouterr().err.startswith("error: ")


def test_running_out_of_memory_is_one_line_exit_3_naming_what_to_reduce(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from juge import cli

    def app(**_: Any) -> None:
        raise MemoryError

    monkeypatch.setattr(cli, "app_for", lambda _args: app)  # the handler is the subject, not the command
    with pytest.raises(SystemExit) as exited:
        cli.main(["calibrate"])
    assert exited.value.code == 3
    err = capsys.readouterr().err
    assert err.startswith("error: out of memory") and "--resamples" in err and "Traceback" not in err
