"""Benchmark: the limiter of each throughput row on the emulated cloud, and the omit and
measured interval chosen at 3, 85, 145 and 250 ms (issue 20).

Part 1 (no root): each test's timing from orchestrator.plan.ramp, for a small cloud VM's
default window (2.53 MB, what a sweep plans with) and for the emulator's (131 kB at a
50 Mbit/s cap).

Part 2 (root; `--sweep`): two real sweeps on the emulated cloud (Terraform, namespaces,
delayd, Ansible, iperf3, tc), then every row's set-up, the limiter expected from it and
the limiter found:
  - 5 regions, two at ~77 ms with 1 % loss each way between them (a perturbation:
    loss); every other pair is capacity where 131 kB / RTT is above the 50 Mbit/s cap
    (below ~21 ms), else window; both measures: the capacity measure's 8 streams on
    buffers sized for the BDP reach the cap on every pair but the lossy one (loss);
  - 3 close regions of type emulated-t3.small-5s (a 5 s token bucket over a 6.6 Mbit/s
    baseline): every test (omit + 5 s) outlasts its bucket, so the allowance counters
    move: allowance.
A pair the emulation drew a loss episode for (its seed is in sweep.json) expects loss.
The emulator is built from the same model as the facts the limiter reads: this checks the
classification and the emulator together, it is no evidence about clouds.

Usage: python bench/limiter.py [--sweep]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _figures import Figures, Table  # noqa: E402

from orchestrator.emulator.variation import draw_pair  # noqa: E402
from orchestrator.netmodel.model import DEFAULT_MODEL, REAL_CAP_BPS, REAL_WINDOW_BYTES  # noqa: E402
from orchestrator.plan.ramp import timing_for  # noqa: E402

RTTS_MS = (3.0, 85.0, 145.0, 250.0)
CLOSE = ("aws:us-east-1", "gcp:us-east4")
LOSSY = ("aws:us-east-2", "aws:eu-west-1")
FAR = "aws:ap-southeast-2"
LOSS_PCT = 1.0
BURSTABLE = ("aws:us-east-1", "gcp:us-east4", "aws:us-east-2")
INTERREGION = str(Path(sys.executable).parent / "interregion")


def timings(figures: Figures) -> None:
    table = figures.table(
        "omit and measured interval by RTT (omit: slow start to the window, rounded up)",
        ["RTT ms", "window", "ramp s", "omit s", "interval s"],
    )
    print("omit and measured interval by RTT (omit = slow start to the window, rounded up)")
    print(f"{'RTT ms':>7} | {'window':>22} {'ramp s':>7} {'omit s':>6} {'interval s':>10}")
    cases = (
        ("cloud default 2.53 MB", REAL_WINDOW_BYTES, REAL_CAP_BPS),
        ("emulator 131 kB", DEFAULT_MODEL.window_bytes, DEFAULT_MODEL.rate_bps),
    )
    for rtt in RTTS_MS:
        for name, window, rate in cases:
            t = timing_for(rtt, window, rate)
            print(f"{rtt:7.0f} | {name:>22} {t.ramp_s:7.3f} {t.omit_s:6d} {t.duration_s:10d}")
            table.add(rtt, name, round(t.ramp_s, 3), t.omit_s, t.duration_s)


def sweep(results: Path, args: list[str]) -> tuple[list[dict[str, str]], int]:
    """The sweep's rows, and the seed of its emulation (whose draws put a loss episode
    on a pair now and then: VariationParams.loss_episode_p)."""
    cmd = [INTERREGION, "sweep", *args, "--pings", "5", "--duration", "5", "--omit", "1",
           "--yes", "--no-report", "--results", str(results)]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    if out.returncode != 0:
        sys.exit(f"sweep failed: {out.stderr.strip()[-2000:]}")
    (folder,) = [p for p in results.iterdir() if p.is_dir() and p.name[:1].isdigit()]
    seed = int(json.loads((folder / "sweep.json").read_text())["emulation"]["seed"])
    with (folder / "measurements.csv").open(newline="") as f:
        return list(csv.DictReader(f)), seed


def expected_of(
    src: str,
    dst: str,
    burstable: bool,
    rtt_ms: float,
    measure: str = "single_stream",
    episode_pct: float = 0.0,
) -> tuple[str, str]:
    if episode_pct and {src, dst} != set(LOSSY) and not burstable:
        # the emulation drew a loss episode on this pair: Mathis holds it well below its
        # window (and 8 streams below the cap)
        return "loss", f"{rtt_ms:.0f} ms, a {episode_pct:.1f} % loss episode (drawn)"
    if measure == "capacity" and not burstable:
        if {src, dst} == set(LOSSY):  # 8 x Mathis at 1 % and 77 ms: ~15 Mbit/s
            return "loss", f"~77 ms, {LOSS_PCT:g} % loss, 8 streams on 2 x BDP buffers"
        return "capacity", f"{rtt_ms:.0f} ms: 8 streams on 2 x BDP buffers"
    if burstable:
        # a 5 s bucket at the cap cannot hold a test of omit + 5 s: every test drains it
        # and moves the counters
        return "allowance", "5 s token bucket over a 6.6 Mbit/s baseline"
    if {src, dst} == set(LOSSY):
        return "loss", f"~77 ms, {LOSS_PCT:g} % loss each way"
    window_bps = DEFAULT_MODEL.window_bytes * 8 / (rtt_ms / 1000)
    if window_bps > DEFAULT_MODEL.rate_bps:
        return "capacity", f"{rtt_ms:.0f} ms: 131 kB / RTT above the 50 Mbit/s cap"
    return "window", f"{rtt_ms:.0f} ms: 131 kB / RTT = {window_bps / 1e6:.1f} Mbit/s"


def show(rows: list[dict[str, str]], seed: int, burstable: bool, named: Table) -> tuple[int, int]:
    right = 0
    # a capacity row's RTT is its pair's single_stream row's
    rtts = {(r["src_cloud"], r["src_region"], r["dst_cloud"], r["dst_region"]): r["rtt_p50_ms"]
            for r in rows if r["rtt_p50_ms"]}  # fmt: skip
    for r in sorted(rows, key=lambda r: (int(r["round"]), r["src_region"], r["dst_region"])):
        src, dst = f"{r['src_cloud']}:{r['src_region']}", f"{r['dst_cloud']}:{r['dst_region']}"
        rtt = rtts[(r["src_cloud"], r["src_region"], r["dst_cloud"], r["dst_region"])]
        measure = r.get("measure") or "single_stream"
        episode = draw_pair(seed, src, dst).loss_pct
        expected, setup = expected_of(src, dst, burstable, float(rtt), measure, episode)
        ok = r["limiter"] == expected
        right += ok
        mbit = float(r["throughput_bps"] or 0) / 1e6
        verdict = "ok" if ok else "WRONG"
        print(f"  {src:>20} -> {dst:<20} {measure:<13} {setup:<52} {mbit:7.2f} Mbit/s "
              f"expected {expected:<9} found {r['limiter']:<9} {verdict}")  # fmt: skip
        named.add(src, dst, measure, setup, round(mbit, 2), expected, r["limiter"], ok)
        if not ok:
            print(f"      {r['limiter_detail']}")
    return right, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true", help="run the two emulated sweeps")
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    opts = parser.parse_args()
    figures = Figures("limiter", "Throughput limiter", goal="every row named as set up")
    with figures.printing(opts.json):
        run(opts, figures)


def run(opts: argparse.Namespace, figures: Figures) -> None:
    timings(figures)
    if not opts.sweep:
        figures.headline = "omit and interval by RTT (--sweep: the rows of two emulated sweeps)"
        return
    named = figures.table(
        "each row's limiter: expected from its set-up, found by the collect stage",
        ["src", "dst", "measure", "set-up", "Mbit/s", "expected", "found", "named"],
    )
    total = [0, 0]
    with tempfile.TemporaryDirectory(prefix="ir-bench-limiter-") as tmp:
        mixed, seed = sweep(
            Path(tmp) / "mixed",
            ["--regions", ",".join((*CLOSE, *LOSSY, FAR)),
             "--perturb", f"{LOSSY[0]}/{LOSSY[1]},loss_pct={LOSS_PCT:g}",
             "--measures", "single_stream,capacity"],
        )  # fmt: skip
        print("\nsweep 1: window, capacity and loss; single_stream and capacity measures")
        for i, n in enumerate(show(mixed, seed, burstable=False, named=named)):
            total[i] += n
        drained, seed = sweep(
            Path(tmp) / "burstable",
            ["--regions", ",".join(BURSTABLE), "--emulated-type", "emulated-t3.small-5s"],
        )
        print("\nsweep 2: allowance (burstable hosts)")
        for i, n in enumerate(show(drained, seed, burstable=True, named=named)):
            total[i] += n
    print(f"\n{total[0]} of {total[1]} rows named as set up")
    figures.headline = f"{total[0]} of {total[1]} rows named as set up"


if __name__ == "__main__":
    main()
