"""Benchmark: the emulator check of a TCP study (issue 13 part 4).

Runs `interregion study tcp --backend local` for real (Terraform, the emulated cloud,
Ansible over SSH, iperf3, ping) on 5 regions: 10 pairs from ~3 ms to ~215 ms RTT, one
of them with 1 % loss set each way (a perturbation), and prints each pair's measured
variants next to the model's expectation (min(cap, streams x window / RTT), and the
ceiling of Mathis at the measured retransmission rate on the lossy pair), then the
five relations of orchestrator.study.check. The emulator is built from the same model:
this checks the emulator, it is no evidence about clouds. The machine is shared:
figures taken while other work runs are noisy.

Usage: python bench/study.py [--repeats 3] [--duration 3] [--variants default,tuned,p4,p8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _figures import Figures  # noqa: E402

from orchestrator.netmodel.model import DEFAULT_MODEL  # noqa: E402
from orchestrator.study.check import check, table  # noqa: E402
from orchestrator.study.findings import default_window, pair_results  # noqa: E402
from orchestrator.study.run import read_table  # noqa: E402

REGIONS = ("aws:us-east-1", "gcp:us-east4", "aws:us-east-2", "aws:eu-west-1", "aws:ap-northeast-1")
LOSSY = ("aws:us-east-2", "aws:eu-west-1")  # ~77 ms: the window alone would allow 13 Mbit/s
LOSS_PCT = 1.0


def study_args(repeats: int, duration: int, variants: str, results: Path) -> list[str]:
    return [
        "study", "tcp", "--backend", "local", "--regions", ",".join(REGIONS),
        "--variants", variants, "--repeats", str(repeats), "--pings", "10",
        "--duration", str(duration), "--omit", "3", "--seed", "13", "--emulation-seed", "5",
        "--perturb", f"{LOSSY[0]}/{LOSSY[1]},loss_pct={LOSS_PCT:g}",
        "--yes", "--results", str(results),
    ]  # fmt: skip


def run_study(args: list[str]) -> Path:
    cli = Path(sys.executable).parent / "interregion"
    results = Path(args[args.index("--results") + 1])
    done = subprocess.run([str(cli), *args], capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"study failed (rc {done.returncode}):\n{done.stderr[-3000:]}")
    # --results is the sweeps folder: the study lands in its studies/
    (study,) = [p for p in (results / "studies").iterdir() if (p / "sweep.json").exists()]
    return study


def lossy_names(study: Path) -> set[str]:
    pairs = json.loads((study / "sweep.json").read_text())["study"]["pairs"]
    return {n for n in pairs if set(n.split("->")) == set(LOSSY)}


def analyse(study: Path, figures: Figures) -> tuple[list[str], list[str], bool]:
    record = json.loads((study / "sweep.json").read_text())
    facts = json.loads((study / "hosts.json").read_text()).get("facts", {})
    window = default_window(record["backend"], facts)
    results = pair_results(read_table(study / "study.csv"), record["study"]["pairs"], window)
    lossy = lossy_names(study)
    relations = check(results, DEFAULT_MODEL, lossy)
    lines = [
        f"{r.number}. {'ok  ' if r.ok else 'FAIL'} {r.text} ({r.checked} checked): {r.detail}"
        for r in relations
    ]
    held = figures.table("the study's relations", ["relation", "held", "checked", "detail"])
    for r in relations:
        held.add(r.text, r.ok, r.checked, r.detail)
    figures.headline = f"{sum(r.ok for r in relations)} of {len(relations)} relations hold"
    return table(results, DEFAULT_MODEL, lossy), lines, all(r.ok for r in relations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duration", type=int, default=3)
    parser.add_argument("--variants", default="default,tuned,p4,p8")
    parser.add_argument("--keep", type=Path, default=None, help="results folder to keep")
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    opts = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/study.py needs root (the emulated cloud)")
    figures = Figures("study", "TCP study", goal="all relations hold")
    with figures.printing(opts.json):
        ok = run(opts, figures)
    sys.exit(0 if ok else 1)


def run(opts: argparse.Namespace, figures: Figures) -> bool:
    with tempfile.TemporaryDirectory(prefix="bench-study-") as tmp:
        results = opts.keep or Path(tmp)
        results.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        study = run_study(study_args(opts.repeats, opts.duration, opts.variants, results))
        wall = time.monotonic() - started
        rows, relations, ok = analyse(study, figures)
    print(f"study of {len(REGIONS)} regions, variants {opts.variants}, {opts.repeats} repeats, "
          f"-t {opts.duration} -O 3: {wall:.0f} s (machine shared: noisy)")  # fmt: skip
    print("throughput in Mbit/s; model = min(cap, streams x window / RTT), Mathis if lossy")
    print("\n".join(rows))
    print("\n".join(relations))
    figures.note(f"{len(REGIONS)} regions, variants {opts.variants} x {opts.repeats}, "
                 f"-t {opts.duration} -O 3: {wall:.0f} s")  # fmt: skip
    return ok


if __name__ == "__main__":
    main()
