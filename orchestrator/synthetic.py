"""Synthetic measurements in the results schema, for benchmarks and tests.

Not a model of anything: a plausible RTT (a fixed part plus 1.6x the fibre
floor, with noise) and a window-limited throughput, so charts and statistics
have something realistic-looking to chew on. Deterministic for a given seed.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from orchestrator.catalog import Region
from orchestrator.geo import distance_km
from orchestrator.schema import MEASUREMENT_COLUMNS


def synthetic_rows(
    regions: Sequence[Region],
    n: int,
    *,
    sweep_id: str = "20261122T0000Z-synt",
    backend: str = "local",
    seed: int = 1,
    start: datetime = datetime(2026, 11, 22, tzinfo=UTC),
) -> Iterator[dict[str, str]]:
    """n directed tests cycling over every ordered pair of `regions`."""
    rng = random.Random(seed)
    pairs = [(a, b) for a in regions for b in regions if a.key != b.key]
    km = {(a.key, b.key): distance_km(a.lat, a.lon, b.lat, b.lon) for a, b in pairs}
    for i in range(n):
        a, b = pairs[i % len(pairs)]
        d = km[(a.key, b.key)]
        rtt = 2.0 + 1.6 * d / 100.0 + rng.expovariate(1.0)
        if rng.random() < 0.01:
            rtt += 80.0  # an occasional detour
        thr = min(5e8, 4e6 * 8 / (rtt / 1000.0)) * rng.uniform(0.8, 1.0)
        row = dict.fromkeys(MEASUREMENT_COLUMNS, "")
        row.update(
            sweep_id=sweep_id,
            started_utc=(start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            backend=backend,
            src_cloud=a.cloud,
            src_region=a.id,
            dst_cloud=b.cloud,
            dst_region=b.id,
            distance_km=f"{d:.1f}",
            rtt_min_ms=f"{rtt * 0.98:.3f}",
            rtt_avg_ms=f"{rtt:.3f}",
            rtt_p50_ms=f"{rtt:.3f}",
            throughput_bps=f"{thr:.0f}",
            streams="1",
            duration_s="5",
            round=str(i // max(1, len(regions) // 2)),
            status="ok",
        )
        yield row


def write_measurements(path: Path, rows: Iterator[dict[str, str]]) -> int:
    """Write rows as a measurements.csv; returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, MEASUREMENT_COLUMNS, lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow(row)
            count += 1
    return count
