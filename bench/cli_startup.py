"""How long a command takes before and while it does its work: the CLI's start-up.

Runs each command REPEATS times as a fresh process (the way a user runs it, the
console script when installed) and prints the median and the spread of the wall
times against the goal. The cloud SDKs and heavy libraries are imported only inside
the commands that need them; the machine is shared, so figures are indicative.

Run: .venv/bin/python bench/cli_startup.py [--json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _figures import Figures

ROOT = Path(__file__).resolve().parent.parent
REPEATS = 5
# (arguments, goal in seconds for the median)
CASES = [
    (["--help"], 0.5),
    (["plan", "--max-regions", "8"], 1.5),
    (["plan", "--help"], 0.5),
    (["regions", "--cloud", "gcp"], 1.5),
]


def command() -> list[str]:
    """The console script beside this Python (what a user runs), else `python -m`."""
    script = Path(sys.executable).with_name("interregion")
    if script.exists():
        return [str(script)]
    found = shutil.which("interregion")
    return [found] if found else [sys.executable, "-m", "orchestrator"]


def time_run(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    args = parser.parse_args()
    figures = Figures("cli_startup", "Start-up", goal="; ".join(
        f"interregion {' '.join(a)} {g:g} s" for a, g in CASES[:2]))  # fmt: skip
    with figures.printing(args.json):
        return run(figures)


def run(figures: Figures) -> int:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    base = command()
    load = os.getloadavg()[0]
    print(f"interregion start-up, median of {REPEATS} fresh processes ({' '.join(base)})")
    print(f"cpus: {os.cpu_count()}, load average: {load:.2f} (shared machine: noisy)")
    print(f"{'command':<40} {'median s':>9} {'min s':>7} {'max s':>7} {'goal s':>7}")
    over = 0
    table = figures.table(
        f"median of {REPEATS} fresh processes", ["command", "median s", "min s", "max s", "goal s"]
    )
    for args, goal_s in CASES:
        time_run(base + args, env)  # warm the file cache once, as a second run would
        times = [time_run(base + args, env) for _ in range(REPEATS)]
        median = statistics.median(times)
        verdict = "ok" if median < goal_s else "OVER"
        over += median >= goal_s
        label = "interregion " + " ".join(args)
        print(
            f"{label:<40} {median:>9.2f} {min(times):>7.2f} {max(times):>7.2f} "
            f"{goal_s:>7.1f}  {verdict}"
        )
        table.add(label, round(median, 2), round(min(times), 2), round(max(times), 2), goal_s)
    shown = [f"`{str(r[0]).removeprefix('interregion ')}` {r[1]:.2f} s" for r in table.rows[:2]]
    figures.headline = ", ".join(shown) + (" (over a goal)" if over else "")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
