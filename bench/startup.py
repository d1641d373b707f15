"""What starting juge costs: the CPU time of `juge --version` against the interpreter alone, in the same run.

CPU time is user + system of the child process (`os.wait4`), which other load on the machine disturbs less
than wall time. `juge --version`, `juge --help` and `python -c pass` run alternately, `--repeats` times each;
the script prints the fastest and the median of each, and the ratio of the medians to `python -c pass`.
Target: `juge --version` at most 0.3 s of CPU on the build machine.

`juge` is the console script beside this interpreter (not a pyenv shim, whose bash costs more than Python
starting); `--src` measures another checkout's source tree (e.g. the commit before a change) through
PYTHONPATH.

    python bench/startup.py [--repeats 15] [--src path/to/src]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

from import_cost import SRC, timed

TARGET_SECONDS = 0.3


def juge_command() -> list[str]:
    script = Path(sys.executable).with_name("juge")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "juge.cli"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--src", type=Path, default=SRC, help="the juge source tree to measure (another checkout's src/)")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(args.src.resolve())}
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "juge --version": [*juge_command(), "--version"],
        "juge --help": [*juge_command(), "--help"],
    }
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, cmd in commands.items():
            cpu[name].append(timed(cmd, env)[1])
    print(
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    print(f"source: {args.src}; {args.repeats} runs each, CPU seconds (user + system)")
    baseline = statistics.median(cpu["python -c pass"])
    for name, times in cpu.items():
        median = statistics.median(times)
        print(f"{name:>16}: fastest {min(times):.3f} s, median {median:.3f} s, {median / baseline:.1f}x python -c pass")
    version = statistics.median(cpu["juge --version"])
    met = "met" if version <= TARGET_SECONDS else "NOT met"
    print(f"target: juge --version at most {TARGET_SECONDS} s of CPU (median): {met}")


if __name__ == "__main__":
    main()
