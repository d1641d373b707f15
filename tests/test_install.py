"""`juge demo` after a plain (non-editable) `pip install` into a new virtualenv, run with no network."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_demo_after_pip_install_in_fresh_venv_without_network(tmp_path):
    venv = tmp_path / "venv"
    # System site-packages provide the dependencies (already installed by CI); juge itself is
    # built and installed from the source tree as a regular wheel, not the editable checkout.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(REPO)]
    subprocess.run(pip, check=True, timeout=600)
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import juge; print(juge.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert str(venv) in where, f"juge imported from {where}, not the new virtualenv"

    cmd = [str(venv / "bin" / "juge"), "demo"]
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"]).returncode == 0:
        cmd = ["unshare", "-n", *cmd]  # a network namespace with no interfaces: no network at all
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads((work / "juge-demo" / "calibration.json").read_text())
    assert result["split"] == "dev" and result["n_items"] == 155
    assert (work / "juge-demo" / "report.html").exists()
