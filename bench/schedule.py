"""Rounds the scheduler needs against the lower bound, and how long it takes.

Prints, per case: regions, slots (region pairs, both directions in one slot),
Δ (the lower bound), rounds, rounds / Δ, and the scheduling time (median of 3;
the machine is shared, so times are indicative). For comparison, what two
published approaches need for the same slots:
- a fixed pool of ceil(2 sqrt(n)) workers taking tests in list order: it does
  not stop a VM from serving two tests at once, and needs ceil(slots / pool)
  test-times;
- greedy grouping: each slot, in list order, goes into the first round where
  both of its regions are free.

Run: .venv/bin/python bench/schedule.py [--json]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from _figures import Figures, Table

from orchestrator.model.catalog import Catalog, Region, load_catalog
from orchestrator.plan.rounds import lower_bound, schedule, slots_of
from orchestrator.plan.selection import Pair, SelectionSpec, pair_distance_km, select

T = TypeVar("T")


def timed(fn: Callable[[], T], repeat: int = 3) -> tuple[T, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def greedy_rounds(pairs: Sequence[Pair]) -> int:
    busy: list[set[str]] = []
    for slot in slots_of(pairs):
        a, b = slot.regions
        for members in busy:
            if a not in members and b not in members:
                members.update((a, b))
                break
        else:
            busy.append({a, b})
    return len(busy)


def pool_rounds(pairs: Sequence[Pair], n_regions: int) -> int:
    return math.ceil(len(slots_of(pairs)) / math.ceil(2 * math.sqrt(n_regions)))


def random_regions(n: int, seed: int = 7) -> list[Region]:
    rng = random.Random(seed)
    regions = []
    for i in range(n):
        # uniform on the sphere, between the polar circles like real regions
        lat = math.degrees(math.asin(rng.uniform(-0.9, 0.9)))
        regions.append(
            Region(
                ("aws", "gcp")[i % 2], f"rand-{i:03d}", "x", "US", lat, rng.uniform(-180, 180), "x"
            )
        )
    return regions


def band_pairs(regions: Sequence[Region], low: float, high: float) -> list[Pair]:
    return [
        Pair(a, b, d)
        for a in regions
        for b in regions
        if a.key != b.key and low <= (d := pair_distance_km(a, b)) <= high
    ]


def row(table: Table, name: str, pairs: Sequence[Pair], max_concurrent: int | None = None) -> float:
    """One case printed and added to `table`; its scheduling time in seconds."""
    rounds, seconds = timed(lambda: schedule(pairs, max_concurrent=max_concurrent))
    n = len({k for p in pairs for k in p.key})
    slots = len(slots_of(pairs))
    bound = lower_bound(pairs, max_concurrent)
    pool, greedy = f"{pool_rounds(pairs, n) / bound:.2f}", f"{greedy_rounds(pairs) / bound:.3f}"
    if max_concurrent:
        pool = greedy = "-"  # neither caps the tests per round
    note = "  odd full mesh: Δ+1 is optimal" if slots == n * (n - 1) // 2 and n % 2 else ""
    print(
        f"{name:<34} {n:>4} {slots:>6} {bound:>5} {len(rounds):>6}"
        f" {len(rounds) / bound:>6.3f} {seconds * 1000:>8.1f} {pool:>6} {greedy:>7}{note}"
    )
    table.add(name, n, slots, bound, len(rounds), round(len(rounds) / bound, 3),
              round(seconds * 1000, 1), pool, greedy, note.strip())  # fmt: skip
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    args = parser.parse_args()
    figures = Figures("schedule", "Scheduler", goal="rounds = Δ, or Δ+1 where Δ+1 is optimal")
    with figures.printing(args.json):
        run(figures)


def run(figures: Figures) -> None:
    catalog: Catalog = load_catalog()
    cases: list[tuple[str, SelectionSpec, int | None]] = [
        ("full catalog", SelectionSpec(), None),
        ("cross-cloud only", SelectionSpec(cloud_pairs=(("aws", "gcp"), ("gcp", "aws"))), None),
        ("band 1000-5000 km", SelectionSpec(min_km=1000, max_km=5000), None),
        ("band 5000-12000 km", SelectionSpec(min_km=5000, max_km=12000), None),
        ("aws only, no opt-in", SelectionSpec(clouds=("aws",), no_opt_in=True), None),
        ("full catalog, --max-concurrent 10", SelectionSpec(), 10),
    ]
    _, select_s = timed(lambda: select(catalog, SelectionSpec()), repeat=1)
    print(f"selecting the full catalog (77 regions, geodesic distances): {select_s:.2f} s")
    print("lower bound = Δ (or ceil(slots / K) with --max-concurrent K)")
    print(
        f"{'case':<34} {'n':>4} {'slots':>6} {'bound':>5} {'rounds':>6} {'ratio':>6}"
        f" {'ms':>8} {'pool':>6} {'greedy':>7}"
    )
    table = figures.table(
        "rounds against the lower bound",
        ["case", "regions", "slots", "bound", "rounds", "rounds / bound", "ms",
         "pool / bound", "greedy / bound", "note"],
    )  # fmt: skip
    times = [row(table, name, select(catalog, spec).pairs, k) for name, spec, k in cases]
    regions = random_regions(100)
    times.append(row(table, "100 random regions, full mesh", band_pairs(regions, 0, math.inf)))
    for low, high in ((1000, 8000), (2000, 12000)):
        name = f"100 random regions, {low}-{high} km"
        times.append(row(table, name, band_pairs(regions, low, high)))
    optimal = all(r[4] <= r[3] + (1 if r[9] else 0) for r in table.rows)
    figures.headline = (
        f"rounds {'= Δ, or Δ+1 where Δ+1 is optimal' if optimal else 'above the bound'}; "
        f"{min(times) * 1000:.0f}-{max(times) * 1000:.0f} ms per selection"
    )
    figures.note(f"selecting the full catalog (77 regions, geodesic distances): {select_s:.2f} s")
    figures.note(
        "pool: a fixed pool of ceil(2 sqrt(n)) workers in list order (it lets a VM serve two "
        "tests at once); greedy: each slot into the first round where both regions are free"
    )
    print("pool / greedy: what those approaches need, as a multiple of the bound (the pool")
    print("can go below it only because it lets a VM serve several tests at once)")


if __name__ == "__main__":
    main()
