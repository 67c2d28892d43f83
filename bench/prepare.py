"""Benchmark: the prepare stage at the full catalog (77 hosts) with several fork counts.

Provisions one local sweep of N regions (default 77), then runs `interregion prepare`
on it with each `--forks` value in turn (prepare is idempotent: the agent is copied
again, facts gathered again), and prints the wall time and the load average after
each, then tears down. Answers: how many hosts can the controller (2 cores here)
prepare at once before more forks stop helping?
Usage: python bench/prepare.py [--regions 77] [--forks 8,16,24,40,77]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _figures import Figures

INTERREGION = str(Path(sys.executable).parent / "interregion")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INTERREGION, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true"},
        stdin=subprocess.DEVNULL,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regions", type=int, default=77)
    parser.add_argument("--forks", default="8,16,24,40,77")
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/prepare.py needs root (the emulated cloud uses namespaces)")
    figures = Figures("prepare", "Prepare at 77 hosts")
    with figures.printing(args.json):
        run(args, figures)


def run(args: argparse.Namespace, figures: Figures) -> None:
    table = figures.table(
        f"prepare of {args.regions} hosts by Ansible forks", ["forks", "wall s", "load after"]
    )
    with tempfile.TemporaryDirectory(prefix="ir-bench-") as tmp:
        planned = cli(
            "sweep",
            "--opt-in",
            "--max-regions",
            str(args.regions),
            "--yes",
            "--plan-only",
            "--results",
            tmp,
        )
        if planned.returncode != 0:
            raise SystemExit(planned.stderr)
        stage = ["--sweep", planned.stdout.strip(), "--results", tmp]
        try:
            up = cli("provision", *stage)
            if up.returncode != 0:
                raise SystemExit(up.stderr)
            print(f"prepare of {args.regions} hosts; load {os.getloadavg()}")
            print(f"{'forks':>5} {'wall':>7} {'load after (1 min)':>19}")
            for forks in (int(f) for f in args.forks.split(",")):
                started = time.monotonic()
                done = cli("prepare", *stage, "--forks", str(forks))
                wall_s = time.monotonic() - started
                if done.returncode != 0:
                    raise SystemExit(done.stderr)
                print(f"{forks:>5} {wall_s:>6.1f}s {os.getloadavg()[0]:>19.1f}", flush=True)
                table.add(forks, round(wall_s, 1), round(os.getloadavg()[0], 1))
            fastest = min(table.rows, key=lambda r: float(str(r[1])))
            figures.headline = f"fastest: {fastest[1]} s with {fastest[0]} forks"
        finally:
            cli("teardown", *stage)


if __name__ == "__main__":
    main()
