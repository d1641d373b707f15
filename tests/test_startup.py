"""Starting juge stays cheap: `import juge.cli`, `juge --version`, `juge --help` and every command's `--help` load
none of the heavy libraries that only computing or drawing needs (measured in bench/startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy", "matplotlib", "numpy", "pandas", "sklearn")

_SCRIPT = """
import contextlib, io, json, sys
import typer.main
from juge.cli import app

loaded_by_import = [m for m in HEAVY if m in sys.modules]
group = typer.main.get_command(app)

def paths(command, path):
    yield path
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from paths(sub, [*path, name])

shown = []
for argv in [["--version"], *([*p, "--help"] for p in paths(group, []))]:
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
        try:
            group.main(argv, prog_name="juge", standalone_mode=False)
        except SystemExit:
            pass
    shown.append([" ".join(argv), bool(out.getvalue().strip())])
print(json.dumps({"import": loaded_by_import, "after": [m for m in HEAVY if m in sys.modules], "shown": shown}))
"""


def test_import_version_and_every_help_load_no_heavy_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{_SCRIPT}"],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["import"] == [], "import juge.cli loads these"
    assert found["after"] == [], "juge --version or a command's --help loads these"
    shown = dict(found["shown"])
    assert len(shown) > 30 and all(shown.values()), [argv for argv, printed in shown.items() if not printed]
    assert {"--version", "run --help", "policy derive --help", "label init --help"} <= set(shown)


_ENTRY = """
import contextlib, io, json, sys
from juge.commands import entry

sys.argv = ["juge", "--version"]
with contextlib.redirect_stdout(io.StringIO()) as out:
    entry.main()
print(json.dumps({"line": out.getvalue(), "loaded": [m for m in ("typer", "rich", "juge.cli") if m in sys.modules]}))
"""


def test_the_console_script_answers_version_before_building_the_command_line() -> None:
    done = subprocess.run([sys.executable, "-c", _ENTRY], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    import juge

    assert found["line"] == f"juge {juge.__version__}\n"  # what `juge version` prints
    assert found["loaded"] == []
