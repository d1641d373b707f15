"""The entry points have explicit, typed keyword parameters: mypy rejects a misspelt or unknown option.

mypy checks a small file against the package under test (found through ``juge.__file__``), so what is
checked is what ``import juge`` gives a user, lazy names included (``juge/__init__.py``'s TYPE_CHECKING
block).
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import juge

# One call per line: each must be an error.
CALLS = {
    "run": 'juge.run("eval.toml", concurency=4)',
    "policy.derive": 'juge.policy.derive(item="x")',
    "tune_judge": 'juge.tune_judge("j.toml", bogus=1)',
    "policy.test": 'juge.policy.test("policy.json", itmes="x")',
}


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    """mypy's errors on the calls, by line."""
    folder = tmp_path_factory.mktemp("typed")
    script = folder / "calls.py"
    script.write_text("import juge\nimport juge.policy\n\n" + "\n".join(CALLS.values()) + "\n", encoding="utf-8")
    source = Path(juge.__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "", "--ignore-missing-imports",
         "--follow-imports", "silent", "--python-version", "3.11", script.name],
        capture_output=True, text=True, cwd=folder, env={"MYPYPATH": str(source), "PATH": ""}, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    errors: dict[int, str] = {}
    for line in done.stdout.splitlines():
        if found := re.match(rf"{re.escape(script.name)}:(\d+): error: (.*)", line):
            errors.setdefault(int(found[1]), found[2])
    return errors


@pytest.mark.parametrize("name", list(CALLS))
def test_mypy_rejects_an_unknown_option(mypy_errors: dict[int, str], name: str) -> None:
    line = 4 + list(CALLS).index(name)
    assert line in mypy_errors, f"mypy accepts {CALLS[name]}"
    assert "argument" in mypy_errors[line]  # 'Unexpected keyword argument "concurency" ...'
