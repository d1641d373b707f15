"""Every output path on every command: a path that cannot be written is one line and exit 2, before any other
output is written and before anything is recorded (the store, the label store, the holdout registry)."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from pathlib import Path

import pytest

from cli_helpers import run_cli, tiny_pairwise_study, write_jsonl
from juge.data.records import Case, Judgment
from juge.store import Store
from label_helpers import pair_case, write_cases, write_rubric


@pytest.fixture
def setup(tmp_path: Path, monkeypatch, capsys) -> dict:
    """A store with one run, a label project, a split-able items file, a pairwise study and its policy."""
    db = tmp_path / "j.db"
    with Store(db) as store:
        run_id = store.create_run(
            dataset_hash="d", juge_version="t", cases=[Case(id="a", question="Q?", output="x")], config={}
        )
        store.save_judgment(
            run_id,
            Judgment(item_id="a", judge="pf", model="m", template="t", template_hash="h", text="PASS",
                     verdict="PASS", outcome="ok"),
        )  # fmt: skip
    label_db = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(4)])
    rubric = write_rubric(tmp_path / "rubric.toml")
    code, _, err = run_cli(monkeypatch, capsys, "label", "init", "--cases", str(cases), "--task", "pairwise",
                           "--rubric", str(rubric), "--name", "q4", "--db-url", label_db)  # fmt: skip
    assert code == 0, err
    items = write_jsonl(tmp_path / "rows.jsonl", [{"id": f"r{k}", "group": f"g{k}", "question": "q"} for k in range(6)])
    study_dir = tmp_path / "study"
    study_dir.mkdir()
    study = tiny_pairwise_study(study_dir)
    policy = study_dir / "policy.json"
    code, _, err = run_cli(monkeypatch, capsys, "policy", "derive", *study, "-o", str(study_dir / "P.md"),
                           "--json", str(policy))  # fmt: skip
    assert code == 0, err
    from tune.test_tune import CLI_JUDGE, write_data

    tune_dir = tmp_path / "tune"
    tune_dir.mkdir()
    judge, tune_items, tune_labels = write_data(tune_dir, n_groups=8, holdout=4)
    judge.write_text(CLI_JUDGE)
    return {
        "db": str(db), "run": run_id, "label_db": label_db, "items": str(items), "study": study,
        "policy": policy, "judge": str(judge), "tune_items": str(tune_items), "tune_labels": str(tune_labels),
    }  # fmt: skip


def _tune(s: dict, out: str, *extra: str) -> list[str]:
    return ["tune", "--judge", s["judge"], "--items", s["tune_items"], "--labels", s["tune_labels"], "--out", out,
            "--folds", "2", "--shots", "2", "--candidates", "as-given", "--resamples", "100", "--no-progress",
            "--test", "--db", s["db"], *extra]  # fmt: skip


# (name, the command line given a bad path and a good one). `bad` is a file path (a folder for init and tune --out).
COMMANDS = {
    "export -o": lambda s, bad, good: ["export", s["run"], "-o", bad + ".csv", "--db", s["db"], "--json", good],
    "export --json": lambda s, bad, good: ["export", s["run"], "-o", good + ".csv", "--db", s["db"], "--json", bad],
    "report": lambda s, bad, good: ["report", "--run", s["run"], "--db", s["db"], "-o", bad + ".html"],
    "runs --json": lambda s, bad, good: ["runs", "--db", s["db"], "--json", bad],
    "runs rm --json": lambda s, bad, good: ["runs", "rm", s["run"], "--db", s["db"], "--json", bad],
    "show --json": lambda s, bad, good: ["show", s["run"], "--db", s["db"], "--json", bad],
    # label export writes by the suffix (.jsonl or .csv): the paths carry one, so the refusal is the path's
    "label export -o": lambda s, bad, good: [
        "label",
        "export",
        "-o",
        bad + ".jsonl",
        "--db-url",
        s["label_db"],
        "--json",
        good,
    ],  # fmt: skip
    "label export --json": lambda s, bad, good: [
        "label",
        "export",
        "-o",
        good + ".jsonl",
        "--db-url",
        s["label_db"],
        "--json",
        bad,
    ],  # fmt: skip
    "label export --adjudications": lambda s, bad, good: [
        "label",
        "export",
        "-o",
        good + ".jsonl",
        "--adjudications",
        bad + ".jsonl",
        "--db-url",
        s["label_db"],
    ],  # fmt: skip
    "label disagreements -o": lambda s, bad, good: [
        "label",
        "disagreements",
        "--save",
        "kept",
        "-o",
        bad,
        "--db-url",
        s["label_db"],
        "--json",
        good,
    ],  # fmt: skip
    "label disagreements --json": lambda s, bad, good: [
        "label",
        "disagreements",
        "--save",
        "kept",
        "-o",
        good,
        "--db-url",
        s["label_db"],
        "--json",
        bad,
    ],  # fmt: skip
    "split -o": lambda s, bad, good: ["split", "--items", s["items"], "-o", bad + ".jsonl", "--json", good],
    "split --json": lambda s, bad, good: ["split", "--items", s["items"], "-o", good + ".jsonl", "--json", bad],
    "policy derive -o": lambda s, bad, good: ["policy", "derive", *s["study"], "-o", bad, "--json", good],
    "policy derive --json": lambda s, bad, good: ["policy", "derive", *s["study"], "-o", good, "--json", bad],
    "policy test --json": lambda s, bad, good: [
        "policy",
        "test",
        "--policy",
        str(s["policy"]),
        *s["study"],
        "--json",
        bad,
    ],  # fmt: skip
    "init": lambda s, bad, good: ["init", bad],
    "tune --out": lambda s, bad, good: _tune(s, bad, "--json", good),
    "tune --json": lambda s, bad, good: _tune(s, good, "--json", bad),
}


def _files(*folders: Path) -> set[Path]:
    """Every file under the folders, but a SQLite store's journal files (opening a store to read makes them)."""
    return {
        p
        for folder in folders
        for p in folder.rglob("*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm", "-journal"))
    }


def _read_only_folder(tmp_path: Path, monkeypatch) -> Path:
    """A folder nobody may write in. Root may write anywhere, so there juge is told what the kernel would
    tell anyone else: making a file or folder in it is refused (the same OSError, raised at the same call)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):
        real_mkstemp, real_mkdtemp = tempfile.mkstemp, tempfile.mkdtemp

        def refuse(real):  # noqa: ANN001, ANN202
            def call(*args, dir=None, **kwargs):  # noqa: ANN002, ANN003, ANN202, A002
                if dir is not None and Path(dir) == folder:
                    raise PermissionError(13, "Permission denied")
                return real(*args, dir=dir, **kwargs)

            return call

        monkeypatch.setattr(tempfile, "mkstemp", refuse(real_mkstemp))
        monkeypatch.setattr(tempfile, "mkdtemp", refuse(real_mkdtemp))
    return folder


@pytest.mark.parametrize("where", ["read-only folder", "under a file"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_an_unwritable_output_is_one_line_exit_2_and_nothing_is_written_or_recorded(
    setup, command, where, tmp_path, monkeypatch, capsys, juge_home
):
    if where == "read-only folder":
        folder = _read_only_folder(tmp_path, monkeypatch)
        bad = folder if command in ("tune --out",) else folder / "out"
    else:
        (tmp_path / "a-file").write_text("")
        bad = tmp_path / "a-file" / "out"
    good = tmp_path / "good" / "out"
    before = _files(tmp_path, juge_home)
    runs_before = sqlite3.connect(setup["db"]).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    code, out, err = run_cli(monkeypatch, capsys, *COMMANDS[command](setup, str(bad), str(good)))
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert str(bad) in err, err
    assert _files(tmp_path, juge_home) == before  # no output, no temporary file, no holdout registry
    assert not (tmp_path / "good").exists() or not _files(tmp_path / "good")
    assert sqlite3.connect(setup["db"]).execute("SELECT COUNT(*) FROM runs").fetchone()[0] == runs_before
    with Store(Path(setup["study"][setup["study"].index("--db") + 1])) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM holdout_uses").fetchone()[0] == 0
    if command.startswith("label disagreements"):  # the list was not saved
        code, _, _ = run_cli(monkeypatch, capsys, "label", "disagreements", "--list", "kept", "--db-url",
                             setup["label_db"])  # fmt: skip
        assert code == 2


def test_policy_test_on_a_read_only_policy_file_uses_nothing_up(setup, monkeypatch, capsys, juge_home):
    policy: Path = setup["policy"]
    text = policy.read_text()
    policy.chmod(0o444)
    before = _files(juge_home)
    code, out, err = run_cli(monkeypatch, capsys, "policy", "test", "--policy", str(policy), *setup["study"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(policy) in err, (out, err)
    assert policy.read_text() == text and _files(juge_home) == before
    with Store(Path(setup["study"][setup["study"].index("--db") + 1])) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM holdout_uses").fetchone()[0] == 0
    policy.chmod(0o644)  # writable again: the same test runs and is recorded
    code, out, err = run_cli(monkeypatch, capsys, "policy", "test", "--policy", str(policy), *setup["study"])
    assert code in (0, 1), err
    assert json.loads(policy.read_text())["holdout_tests"]
