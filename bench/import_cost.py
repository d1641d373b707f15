"""What starting juge costs: `python -X importtime -c "import juge.cli"` and the time of `juge --help`.

Each figure is the fastest of `--runs` fresh processes (the least disturbed by other load on the
machine); `juge --help` is given as wall time and as CPU time (user + system of the process), which
other load disturbs less. Run from the source tree: `python bench/import_cost.py [--runs 10]`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def importtime(env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Per module: (self, cumulative) microseconds of one `import juge.cli`."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import juge.cli"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return {m[4]: (int(m[1]), int(m[2])) for m in LINE.finditer(done.stderr)}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `cmd`."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def report(label: str, cmd: list[str], env: dict[str, str], runs: int) -> None:
    times = [timed(cmd, env) for _ in range(runs)]
    print(f"{label}: {min(w for w, _ in times) * 1000:.0f} ms wall, {min(c for _, c in times) * 1000:.0f} ms CPU")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--src", type=Path, default=SRC, help="the juge source tree to measure (another checkout's src/)")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.src)}
    juge = shutil.which("juge")
    help_cmd = [juge, "--help"] if juge else [sys.executable, "-m", "juge.cli", "--help"]
    runs = [importtime(env) for _ in range(args.runs)]
    for name in ("juge.cli", "juge", "juge.judges.render", "juge.judges.textnorm"):
        cumulative = min(r[name][1] for r in runs if name in r) if any(name in r for r in runs) else None
        own = min(r[name][0] for r in runs if name in r) if cumulative is not None else None
        if cumulative is not None:
            print(f"import {name}: {cumulative / 1000:.0f} ms with what it imports ({own / 1000:.1f} ms its own)")
    report("juge --help", help_cmd, env, args.runs)
    report("python -m juge.cli --help", [sys.executable, "-m", "juge.cli", "--help"], env, args.runs)
    report("python -c pass (the interpreter alone)", [sys.executable, "-c", "pass"], env, args.runs)


if __name__ == "__main__":
    main()
