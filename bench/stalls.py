"""Host-wide stalls (issue 29, item 5): what the rule finds on real ping phases, and how
long it takes at the biggest ping phase a sweep runs.

Prints, with the machine's load:
  captures   tests/data/stall/ (real ping phases on the emulated cloud, capture.py):
             deviating samples, and those found in a stall, per capture
             goal: machine and host found, path and clean nothing
  scale      find_stalls on a constructed ping phase of N hosts probing all their peers
             20 times (RTTs 2-400 ms, 1 % of samples spiked at random (--spikes), one machine stall
             of 150 ms), as `collect` and the history ingest run it: seconds, the
             samples found in the stall, and the random spikes not in flight when it
             ended that it took for a stall (goal 0)

    python bench/stalls.py [--hosts 77 240] [--spikes 0.01]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _figures import Figures

from orchestrator.core import paths
from orchestrator.results import stalls

T0 = 1_700_000_000.0
PINGS, INTERVAL_S, MIN_GAP_S = 20, 0.2, 0.01


FIGURES = Figures("stalls", "Host-wide stalls", goal="machine and host stalls found, nothing else")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def captures() -> list[str]:
    table = FIGURES.table("captured ping phases", ["case", "samples", "deviating", "in a stall"])
    found_of: list[str] = []
    for name in ("machine", "host", "path", "clean"):
        doc = json.loads((paths.ROOT / "tests" / "data" / "stall" / f"{name}.json").read_text())
        docs = {d["host"]: d for d in doc["docs"]}
        every, odd = stalls.timed_samples(docs)
        found = stalls.find_stalls(docs)
        n = sum(len(ix) for ix in found.values())
        print(f"  {name:<8} {len(every):>6} samples, {len(odd):>3} deviating, {n:>3} in a stall "
              f"({len(found)} tests)")  # fmt: skip
        table.add(name, len(every), len(odd), f"{n} ({len(found)} tests)")
        found_of.append(f"{name} {n} of {len(odd)}")
    return found_of


def constructed(n_hosts: int, spikes: float = 0.01, seed: int = 1) -> tuple[dict, set]:
    """A ping phase as the agent runs it; (its documents, the randomly spiked samples)."""
    rng = random.Random(seed)
    hosts = [f"aws:r{i}" for i in range(n_hosts)]
    base = {}
    # the stall halfway through the probing
    stall_at, stall_s = T0 + PINGS * max(INTERVAL_S, (n_hosts - 1) * MIN_GAP_S) / 2, 0.15
    spiked = set()
    docs = {}
    for host in hosts:
        peers = [h for h in hosts if h != host]
        n = len(peers)
        gap = max(MIN_GAP_S, INTERVAL_S / n)
        first = zlib.crc32(host.encode()) % n
        doc = {"host": host, "t0_epoch_s": T0, "gap_s": gap, "peers": {}}
        for i, peer in enumerate(peers):
            j = (i - first) % n
            rtt0 = base.setdefault(frozenset((host, peer)), rng.uniform(2.0, 400.0))
            sent, rtts = [], []
            for k in range(PINGS):
                s = (k * n + j) * gap
                r = rtt0 + rng.uniform(-0.4, 0.4)
                back = T0 + s + r / 1000.0
                if back >= stall_at and T0 + s <= stall_at + stall_s:
                    r += 1000.0 * (stall_at + stall_s - max(T0 + s, stall_at))
                elif rng.random() < spikes:
                    r += rng.uniform(20.0, 200.0)
                    if T0 + s + r / 1000.0 < stall_at + stall_s or T0 + s > stall_at + stall_s:
                        spiked.add(((host, peer), k))  # not in flight when the stall ended
                sent.append(s)
                rtts.append(r)
            doc["peers"][peer] = {"sent": PINGS, "rtt_ms": rtts, "sent_s": sent}
        docs[host] = doc
    return docs, spiked


def scale(sizes: list[int], spikes: float) -> list[str]:
    table = FIGURES.table(
        f"find_stalls on one constructed ping phase ({spikes:.0%} of samples spiked)",
        ["hosts", "samples", "time", "in the stall", "random spikes taken for it"],
    )
    times: list[str] = []
    for n in sizes:
        docs, spiked = constructed(n, spikes)
        tests = n * (n - 1)
        t = time.perf_counter()
        found = stalls.find_stalls(docs)
        dt = time.perf_counter() - t
        flagged = {(test, i) for test, ix in found.items() for i in ix}
        print(f"  {n:>3} hosts, {tests:>6} tests, {tests * PINGS:>8} samples: {dt:6.2f} s; "
              f"{len(flagged)} in the stall, {len(flagged & spiked)} of {len(spiked)} random "
              f"spikes elsewhere among them ({load()})")  # fmt: skip
        table.add(n, tests * PINGS, f"{dt:.2f} s", len(flagged),
                  f"{len(flagged & spiked)} of {len(spiked)}")  # fmt: skip
        times.append(f"{n} hosts {dt:.2f} s")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, nargs="+", default=[77, 240])
    parser.add_argument("--spikes", type=float, default=0.01, help="share of samples spiked")
    parser.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    args = parser.parse_args()
    with FIGURES.printing(args.json):
        print(f"host-wide stalls ({load()})")
        print("captures (tests/data/stall/):")
        found = captures()
        print("scale (find_stalls on one constructed ping phase):")
        times = scale(args.hosts, args.spikes)
        FIGURES.headline = f"deviating samples in a stall: {', '.join(found)}; {', '.join(times)}"
    return 0


if __name__ == "__main__":
    sys.exit(main())
