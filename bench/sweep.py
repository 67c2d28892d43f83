"""Benchmark: orchestration overhead of local sweeps of 6, 12 and 20 regions.

Runs `interregion sweep --backend local --max-regions N` for real (Terraform, the
emulated cloud, Ansible over SSH, iperf3, ping) and prints, per size:

  wall        the measure stage's wall time (all rounds, retries excluded)
  rounds      rounds run; lower bound = the schedule's lower bound
  slot        the expected slot time, mean over the rounds (orchestrator.plan.round_seconds:
              pings, omit + duration each way, and the round trips ping and iperf3's
              protocol need at the round's longest RTT, from the network model)
  measuring   time the agents spent measuring: per round, the longest host part
  overhead    (wall - rounds x slot) / wall            goal <= 10 % at 20 regions
  vs bound    wall / (lower bound x slot)              goal <= 1.1
  orchestr.   (wall - measuring) / wall: Ansible's own share (dispatch, results)

`overhead` compares the wall time with the schedule's expected time; `orchestr.`
with what the agents measured they spent. The machine is shared: figures taken while other work runs
are noisy. Usage: python bench/sweep.py [--sizes 6,12,20] [--duration S] [--pings N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INTERREGION = str(Path(sys.executable).parent / "interregion")


def _t(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def measuring_s(sweep_dir: Path, rounds: list[dict]) -> float:
    """Per round, the longest time one host's agent spent on its part; summed."""
    total = 0.0
    for entry in rounds:
        longest = 0.0
        for raw in (sweep_dir / "raw" / f"round-{entry['round']:03d}").glob("*.json"):
            try:
                doc = json.loads(raw.read_text())
                longest = max(longest, _t(doc["ended_utc"]) - _t(doc["started_utc"]))
            except (ValueError, KeyError):
                continue
        total += longest
    return total


def run(size: int, extra: list[str], results: Path) -> dict:
    started = time.monotonic()
    args = ["sweep", "--backend", "local", "--yes", "--no-report", "--max-regions", str(size)]
    out = subprocess.run(
        [INTERREGION, *args, "--results", str(results), *extra],
        capture_output=True,
        text=True,
        env={**os.environ, "CI": "true"},
        stdin=subprocess.DEVNULL,
    )
    total_s = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit(f"sweep of {size} regions failed:\n{out.stderr[-2000:]}")
    sweep_dir = max(results.iterdir(), key=lambda p: p.name)
    meta = json.loads((sweep_dir / "sweep.json").read_text())
    main = next(r for r in meta["measure_runs"] if r["kind"] == "main")
    rounds = [r for r in meta["rounds"] if r["kind"] == "main"]
    expected_s = sum(r["slot_s"] for r in rounds)
    slot_s = expected_s / max(len(rounds), 1)
    wall_s = main["wall_s"]
    bound = meta["plan"]["lower_bound_rounds"]
    measured = measuring_s(sweep_dir, rounds)
    failed = sum(r["tests_failed"] for r in rounds)
    errors = collect_errors(sweep_dir, rounds)
    return {
        "regions": size,
        "tests": main["tests"],
        "failed": failed,
        "total_s": total_s,
        "wall_s": wall_s,
        "rounds": len(rounds),
        "bound": bound,
        "slot_s": slot_s,
        "measuring_s": measured,
        "overhead": (wall_s - expected_s) / wall_s,
        "vs_bound": wall_s / (bound * slot_s),
        "orchestration": (wall_s - measured) / wall_s,
        "per_round_overhead_s": (wall_s - measured) / max(len(rounds), 1),
        "errors": errors,
        "retried_ok": sum(r["tests_ok"] for r in meta["rounds"] if r["kind"] == "retry"),
    }


def collect_errors(sweep_dir: Path, rounds: list[dict]) -> list[str]:
    """Why the first attempts failed (the CSV keeps only the final attempt)."""
    from orchestrator import store
    from orchestrator.collect import RowContext, SlotPlan, round_rows

    meta = json.loads((sweep_dir / "sweep.json").read_text())
    ctx = RowContext(
        sweep_dir.name,
        "local",
        1,
        {},
        {(p["src"], p["dst"]): p["distance_km"] for p in meta["plan"]["pairs"]},
    )
    errors = []
    for entry in rounds:
        if not entry["tests_failed"]:
            continue
        slots = [SlotPlan(**s) for s in entry["slots"]]
        raw = store.read_raw_round(sweep_dir, entry["round"])
        texts = {n: raw.get(store.safe_name(n)) for s in slots for n in (s.client, s.server)}
        for row in round_rows(entry["round"], slots, texts, ctx):
            if row["status"] != "ok":
                errors.append(f"round {entry['round']} {row['src_region']}->{row['dst_region']}: "
                              f"{row['error']}")  # fmt: skip
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="6,12,20")
    parser.add_argument("--pings", default=None)
    parser.add_argument("--duration", default=None)
    parser.add_argument("--omit", default=None)
    args = parser.parse_args()
    extra = []
    for name in ("pings", "duration", "omit"):
        if getattr(args, name) is not None:
            extra += [f"--{name}", getattr(args, name)]
    if os.geteuid() != 0:
        raise SystemExit("bench/sweep.py needs root (the emulated cloud uses namespaces)")
    print(f"local sweeps, test parameters: {' '.join(extra) or 'defaults'}; load {os.getloadavg()}")
    header = (
        f"{'regions':>7} {'tests':>5} {'failed':>6} {'wall':>8} {'rounds':>6} {'bound':>5} "
        f"{'slot':>6} {'measuring':>9} {'overhead':>8} {'vs bound':>8} {'orchestr.':>9} "
        f"{'per round':>9} {'total':>8}"
    )
    print(header)
    with tempfile.TemporaryDirectory(prefix="ir-bench-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            r = run(size, extra, Path(tmp))
            print(
                f"{r['regions']:>7} {r['tests']:>5} {r['failed']:>6} {r['wall_s']:>7.1f}s "
                f"{r['rounds']:>6} {r['bound']:>5} {r['slot_s']:>5.1f}s {r['measuring_s']:>8.1f}s "
                f"{r['overhead']:>8.1%} {r['vs_bound']:>8.2f} {r['orchestration']:>9.1%} "
                f"{r['per_round_overhead_s']:>8.2f}s {r['total_s']:>7.1f}s",
                flush=True,
            )
            for error in r["errors"]:
                print(f"        first attempt failed: {error}")
            if r["errors"]:
                print(f"        retried once at the end: {r['retried_ok']} ok")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
