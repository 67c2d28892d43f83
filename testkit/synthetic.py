"""Synthetic measurements in the results schema, for benchmarks and tests.

The RTT and throughput are those of the network model the emulator runs
(orchestrator.netmodel.model.DEFAULT_MODEL), with noise and an occasional detour, so
charts, statistics and benchmarks see what a sweep would produce. Rows of the
local backend carry the emulated throughput; rows of a cloud backend the real
one (the emulated figure over the model's scale). Deterministic for a given seed.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from orchestrator.core.geo import distance_km
from orchestrator.model.backend_facts import is_emulated
from orchestrator.model.catalog import Region
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.results.files import write_measurements as write_measurements_file
from orchestrator.results.schema import MEASUREMENT_COLUMNS


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
    scale = 1.0 if is_emulated(backend) else DEFAULT_MODEL.scale
    pairs = [(a, b) for a in regions for b in regions if a.key != b.key]
    km = {(a.key, b.key): distance_km(a.lat, a.lon, b.lat, b.lon) for a, b in pairs}
    for i in range(n):
        a, b = pairs[i % len(pairs)]
        d = km[(a.key, b.key)]
        rtt = DEFAULT_MODEL.rtt_ms(d, a.cloud != b.cloud) + rng.expovariate(1.0)
        if rng.random() < 0.01:
            rtt += 80.0  # an occasional detour
        thr = DEFAULT_MODEL.expected_throughput_bps(rtt) * rng.uniform(0.8, 1.0) / scale
        row = dict.fromkeys(MEASUREMENT_COLUMNS, "")
        row.update(
            sweep_id=sweep_id,
            started_utc=(start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
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


def write_measurements(path: Path, rows: Iterator[dict[str, str]], *, marked: bool = False) -> int:
    """Write rows as a measurements.csv; returns how many. `marked`: as a sweep writes
    it, through results' writer (files.write_measurements: its plain mark beside it when
    the text is plain); else as a file made by hand, without one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if marked:
        out = io.StringIO()
        count = _write(out, rows)
        write_measurements_file(path, out.getvalue())
        return count
    with path.open("w", newline="") as f:
        return _write(f, rows)


def _write(f: TextIO, rows: Iterator[dict[str, str]]) -> int:
    count = 0
    w = csv.DictWriter(f, MEASUREMENT_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow(row)
        count += 1
    return count


def sweep_record(sweep_id: str, backend: str = "local", **fields: object) -> dict[str, object]:
    """The smallest sweep.json a reader takes (results.record.SweepRecord): a done sweep
    of `backend` planned at its id's time (or 2026-11-22 for another id), with `fields`
    over it."""
    try:
        created = datetime.strptime(sweep_id[:14], "%Y%m%dT%H%MZ").replace(tzinfo=UTC)
    except ValueError:
        created = datetime(2026, 11, 22, tzinfo=UTC)
    return {
        "format_version": 1,
        "sweep_id": sweep_id,
        "backend": backend,
        "created_utc": created.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "status": "done",
        "plan": {"backend": backend, "estimate": {"wall_s": 0.0}},
        **fields,
    }
