"""Benchmark: the orchestrator's overhead on real local sweeps, up to the full catalog.

Runs `interregion sweep --backend local --max-regions N` for real (Terraform, the
emulated cloud, Ansible over SSH, iperf3, ping) and prints a row per case:

  tests, failed  tests of the main run, and how many did not end ok at first
  prepare        the prepare stage's wall time (forks: orchestrator.plan.PREPARE_FORKS)
  1st round      from the end of prepare to the start of round 1 (the ping phase)
                                                                       goal < 30 s at 77
  phase          the ping phase's wall time (every host probes all its peers at once)
  rounds, bound  rounds run, and the schedule's lower bound
  wall           the measure stage's main runs: ping phase and rounds (retries excluded)
  vs plan        wall / the plan's expected time for those rounds     goal <= 1.10
  per round      orchestration per throughput round: (the rounds' wall - measuring) / rounds,
                 measuring being per round the longest time one host's agent spent
                                                                       goal < 1 s at 77 hosts
  ctl PSS        peak memory of the controller: the orchestrator, Ansible, its forks and
                 ssh clients (this net namespace's processes of the sweep's tree), as PSS:
                 Ansible's forks share most of their pages, which a sum of RSS would count
                 once per fork; printed with what it was made of at its peak
                                                                       goal < 1 GiB

Cases: `--sizes 6,20,46,77` at the local default concurrency, `--lifted 77` with the
cap lifted (every slot of a round at once: 77 rounds, as on the clouds), and `--latency 77`:
a latency-only sweep (`--tests ping`, default pings) whose ping phase must measure within
pings x interval + 15 s, every median RTT within 0.5 ms + 2 % of its emulation spec. `--controller
REGION` places the controller there (its modelled delay applies to controller-host
traffic), as it is on the clouds. Full-catalog rows use short tests (`--pings 5
--duration 1 --omit 0`, the defaults here) so they finish in reasonable time.
The machine is shared: figures taken while other work runs are noisy.
Usage: python bench/sweep.py [--sizes 6,20,46,77] [--lifted 77] [--controller aws:us-east-1]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

from _figures import Figures

ROOT = Path(__file__).resolve().parent.parent
INTERREGION = str(Path(sys.executable).parent / "interregion")
FAST = ["--pings", "5", "--duration", "1", "--omit", "0"]


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


class PeakPss:
    """Peak summed PSS (proportional set size: shared pages split between the processes
    that share them) of a process tree, sampled every second, counting only processes in
    this network namespace: the emulated hosts' sshd, agents and iperf3 are not the
    controller's."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak_kb, self._stop = pid, 0, threading.Event()
        self.at_peak: dict[str, list[int]] = {}
        self._netns = os.readlink("/proc/self/ns/net")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _children(self) -> dict[int, list[int]]:
        tree: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(ppid, []).append(int(entry))
        return tree

    def _sample(self) -> tuple[int, dict[str, list[int]]]:
        """The tree's summed PSS (KiB), and each kind of process's PSS (KiB) in it."""
        tree, todo, total = self._children(), [(self.pid, "")], 0
        kinds: dict[str, list[int]] = {}
        while todo:
            pid, parent = todo.pop()
            try:
                name = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2]
                kind = _kind(pid == self.pid, parent, name)
                todo += [(child, kind) for child in tree.get(pid, [])]
                if os.readlink(f"/proc/{pid}/ns/net") != self._netns:
                    continue
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        kinds.setdefault(kind, []).append(int(line.split()[1]))
            except OSError:
                continue
        return total, kinds

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            total, kinds = self._sample()
            if total > self.peak_kb:
                self.peak_kb, self.at_peak = total, kinds

    def breakdown(self) -> str:
        """What the peak was made of: each kind of process, how many, their PSS."""
        parts = sorted(self.at_peak.items(), key=lambda kv: -sum(kv[1]))
        return ", ".join(f"{k} {len(v)} x {sum(v) / len(v) / 1024:.1f} MiB" for k, v in parts)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak_kb / 1024


def _kind(root: bool, parent: str, argv: list[bytes]) -> str:
    """orchestrator, ansible (the playbook's parent), ansible worker, ssh, terraform, or
    the program's name."""
    words = [Path(a.decode(errors="replace")).name for a in argv]
    if root:
        return "orchestrator"
    if any(w == "ansible-playbook" for w in words):
        return "ansible worker" if parent in ("ansible", "ansible worker") else "ansible"
    return words[0] if words and words[0] else "?"


def run(size: int, extra: list[str], results: Path) -> dict:
    started = time.monotonic()
    args = [
        "sweep",
        "--backend",
        "local",
        "--yes",
        "--no-report",
        "--opt-in",
        "--max-regions",
        str(size),
    ]
    proc = subprocess.Popen(
        [INTERREGION, *args, "--results", str(results), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CI": "true"},
        stdin=subprocess.DEVNULL,
    )
    pss = PeakPss(proc.pid)
    _, err = proc.communicate()
    peak_mib = pss.stop()
    at_peak = pss.breakdown()
    total_s = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"sweep of {size} regions failed:\n{err[-2000:]}")
    sweep_dir = newest_sweep(results)
    meta = json.loads((sweep_dir / "sweep.json").read_text())
    # the main runs: the ping phase, then the throughput rounds
    mains = [r for r in meta["measure_runs"] if r["kind"] == "main"]
    rounds = [r for r in meta["rounds"] if r["kind"] == "main" and not r.get("phase")]
    phase = [r for r in meta["rounds"] if r["kind"] == "main" and r.get("phase")]
    measured = measuring_s(sweep_dir, rounds)
    wall_s = sum(r["wall_s"] for r in mains)
    slot_wall_s = sum(r["wall_s"] for r in mains if not r.get("phase"))
    expected_s = meta["plan"]["estimate"]["wall_s"]
    prepare = meta["stages"]["prepare"]
    first = (phase or rounds)[0]
    first_round_s = _t(first["started_utc"]) - _t(prepare["ended_utc"])
    return {
        "regions": size,
        "tests": mains[0]["tests"],
        "phase_s": phase[0]["wall_s"] if phase else 0.0,
        "failed": sum(r["tests_failed"] for r in rounds),
        "statuses": statuses(sweep_dir),
        "prepare_s": prepare["wall_s"],
        "first_round_s": first_round_s,
        "rounds": len(rounds),
        "bound": meta["plan"]["lower_bound_rounds"],
        "wall_s": wall_s,
        "vs_plan": wall_s / expected_s,
        "per_round_s": (slot_wall_s - measured) / max(len(rounds), 1),
        "peak_mib": peak_mib,
        "at_peak": at_peak,
        "total_s": total_s,
        "errors": first_errors(sweep_dir, rounds),
    }


def latency_run(size: int, extra: list[str], results: Path) -> dict:
    """A latency-only sweep: the measure stage's wall time against its bound, and every
    pair's median RTT against the RTT its emulation was built with (its spec: the model or
    the pair's measured route, the seeded variation)."""
    from orchestrator.emulator.stack import expected_rtts_ms, sweep_spec
    from orchestrator.results import files as store

    args = [
        "sweep",
        "--backend",
        "local",
        "--yes",
        "--no-report",
        "--opt-in",
        "--max-regions",
        str(size),
    ]
    proc = subprocess.Popen(
        [INTERREGION, *args, "--tests", "ping", "--results", str(results), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CI": "true"},
        stdin=subprocess.DEVNULL,
    )
    pss = PeakPss(proc.pid)  # the whole sweep's peak: its ping phase is what needs most
    _, err = proc.communicate()
    peak_mib = pss.stop()
    if proc.returncode != 0:
        raise SystemExit(f"latency-only sweep of {size} regions failed:\n{err[-2000:]}")
    sweep_dir = newest_sweep(results)
    meta = json.loads((sweep_dir / "sweep.json").read_text())
    params = meta["params"]
    main = next(r for r in meta["measure_runs"] if r["kind"] == "main")  # the ping phase
    spec_rtts = expected_rtts_ms(sweep_spec(sweep_dir / "state"))
    errors, within = [], 0
    rows = store.read_rows(sweep_dir / store.MEASUREMENTS_FILE)
    for row in rows:
        if row["status"] != "ok":
            continue
        a = f"{row['src_cloud']}:{row['src_region']}"
        b = f"{row['dst_cloud']}:{row['dst_region']}"
        expected = spec_rtts[(a, b)]
        error = float(row["rtt_p50_ms"]) - expected
        errors.append(error)
        within += abs(error) <= 0.5 + 0.02 * expected
    errors.sort()
    return {
        "regions": size,
        "tests": main["tests"],
        "ok": sum(r["status"] == "ok" for r in rows),
        "wall_s": main["wall_s"],
        "bound_s": params["pings"] * params["ping_interval_s"] + 15,
        "within": within,
        "median_error_ms": errors[len(errors) // 2] if errors else float("nan"),
        "max_error_ms": max((abs(e) for e in errors), default=float("nan")),
        "peak_mib": peak_mib,
    }


def newest_sweep(results: Path) -> Path:
    """The newest sweep folder (the results folder also holds the history store and the
    lock file)."""
    return max((p for p in results.iterdir() if (p / "sweep.json").exists()), key=lambda p: p.name)


def statuses(sweep_dir: Path) -> dict[str, int]:
    from orchestrator.results import files as store

    counts: dict[str, int] = {}
    for row in store.read_rows(sweep_dir / store.MEASUREMENTS_FILE):
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts


def first_errors(sweep_dir: Path, rounds: list[dict], most: int = 8) -> list[str]:
    """Why first attempts failed (the CSV keeps only the final attempt)."""
    from orchestrator.results import files as store
    from orchestrator.results.raw_rows import RowContext, SlotPlan, round_rows

    meta = json.loads((sweep_dir / "sweep.json").read_text())
    distances = {(p["src"], p["dst"]): p["distance_km"] for p in meta["plan"]["pairs"]}
    ctx = RowContext(sweep_dir.name, "local", 1, {}, distances)
    errors = []
    for entry in rounds:
        if not entry["tests_failed"]:
            continue
        slots = [SlotPlan(**s) for s in entry["slots"]]
        raw = store.read_raw_round(sweep_dir, entry["round"])
        texts = {n: raw.get(store.safe_name(n)) for s in slots for n in (s.client, s.server)}
        for row in round_rows(entry["round"], slots, texts, ctx):
            if row["status"] != "ok":
                errors.append(
                    f"round {entry['round']} {row['src_region']}->{row['dst_region']}: "
                    f"{row['status']}: {row['error']}"
                )
    return errors[:most]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="6,20,46,77", help="regions, default concurrency")
    parser.add_argument("--lifted", default="77", help="regions with the cap lifted ('' none)")
    parser.add_argument("--latency", default="77", help="regions, latency-only ('' none)")
    parser.add_argument("--keep", default="", help="folder to keep the sweeps in (default: none)")
    parser.add_argument("--controller", default="", help="controller region, e.g. aws:us-east-1")
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    parser.add_argument("--tests", nargs=argparse.REMAINDER, default=FAST, help="test options")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench/sweep.py needs root (the emulated cloud uses namespaces)")
    figures = Figures("sweep", "Sweeps", goal="controller < 1 GiB at 77 regions; the measure "
                      "stage near the plan")  # fmt: skip
    with figures.printing(args.json):
        bench(args, figures)


def bench(args: argparse.Namespace, figures: Figures) -> None:
    controller = ["--controller", args.controller] if args.controller else []
    extra = list(args.tests) + controller
    cases = [(int(s), []) for s in args.sizes.split(",") if s]
    # the whole of each round at once: max-concurrent is a cap on slots per round
    cases += [(int(s), ["--max-concurrent", str(int(s) // 2)]) for s in args.lifted.split(",") if s]
    print(f"local sweeps: {' '.join(extra)}; load {os.getloadavg()}")
    print(
        f"{'regions':>10} {'tests':>5} {'failed':>6} {'prepare':>7} {'1st round':>9} {'phase':>6} "
        f"{'rounds':>6} {'bound':>5} {'wall':>8} {'vs plan':>7} {'per round':>9} "
        f"{'ctl PSS':>8} {'total':>7}"
    )
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    folder = (
        contextlib.nullcontext(args.keep)
        if args.keep
        else tempfile.TemporaryDirectory(prefix="ir-bench-")
    )
    sweeps = figures.table(
        f"local sweeps ({' '.join(extra)})",
        ["regions", "tests", "failed", "prepare s", "1st round s", "ping phase s", "rounds",
         "bound", "measure wall s", "vs plan", "per round s", "ctl PSS MiB"],
    )  # fmt: skip
    with folder as tmp:
        for size, more in cases:
            r = run(size, extra + more, Path(tmp))
            label = f"{size}{' lifted' if more else ''}"
            print(
                f"{label:>10} {r['tests']:>5} {r['failed']:>6} {r['prepare_s']:>6.1f}s "
                f"{r['first_round_s']:>8.1f}s {r['phase_s']:>5.1f}s {r['rounds']:>6} "
                f"{r['bound']:>5} "
                f"{r['wall_s']:>7.1f}s {r['vs_plan']:>7.2f} {r['per_round_s']:>8.2f}s "
                f"{r['peak_mib']:>5.0f}MiB {r['total_s']:>6.0f}s",
                flush=True,
            )
            sweeps.add(label, r["tests"], r["failed"], round(r["prepare_s"], 1),
                       round(r["first_round_s"], 1), round(r["phase_s"], 1), r["rounds"],
                       r["bound"], round(r["wall_s"], 1), round(r["vs_plan"], 2),
                       round(r["per_round_s"], 2), round(r["peak_mib"]))  # fmt: skip
            figures.headline = (
                f"{label} regions: measure {r['vs_plan']:.2f}x the plan, "
                f"ctl {r['peak_mib']:.0f} MiB"
            )
            print(f"{'':>10} final statuses: {r['statuses']}")
            print(f"{'':>10} ctl PSS at its peak: {r['at_peak']}")
            for error in r["errors"]:
                print(f"{'':>10} first attempt: {error}")
        for size in (int(s) for s in args.latency.split(",") if s):
            r = latency_run(size, controller, Path(tmp))  # the default pings and interval
            print(
                f"latency-only {r['regions']} regions: {r['ok']}/{r['tests']} ok, measured in "
                f"{r['wall_s']:.1f} s (bound {r['bound_s']:g} s); median RTT vs model "
                f"{r['within']}/{r['ok']} within 0.5 ms + 2 %, median error "
                f"{r['median_error_ms']:+.2f} ms, max {r['max_error_ms']:.2f} ms; "
                f"ctl PSS {r['peak_mib']:.0f} MiB",
                flush=True,
            )
            figures.note(
                f"latency-only, {r['regions']} regions: {r['ok']}/{r['tests']} ok in "
                f"{r['wall_s']:.1f} s (bound {r['bound_s']:g} s); {r['within']}/{r['ok']} RTTs "
                f"within 0.5 ms + 2 % of the model; ctl {r['peak_mib']:.0f} MiB"
            )
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
