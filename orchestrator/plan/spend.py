"""What a sweep actually cost, from the bytes it moved, at list prices (orchestrator.plan.pricing).

Estimates are for deciding before a run; a budget is checked against what was
spent: iperf3's count of what it sent (the larger of the sender's and the receiver's
counts in measurements.csv) plus pings x 84 bytes per row that pinged, priced by source
and destination, and the VMs' list price for the hours the sweep actually ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.model import Region, is_emulated, region_from_dict
from orchestrator.plan.pricing import Pricing
from orchestrator.results import (
    MEASUREMENTS_FILE,
    PING_PACKET_BYTES,
    load_record,
    pair_key,
    read_rows,
)


@dataclass(frozen=True)
class Spend:
    bytes: int
    egress_usd: float
    vm_usd: float

    @property
    def cost_usd(self) -> float:
        return self.egress_usd + self.vm_usd


def _number(text: Any) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return 0.0
    return value if value == value and value >= 0 else 0.0  # NaN and garbage count as 0


def row_bytes(row: Mapping[str, Any], pings: int) -> int:
    """What one directed test sent: iperf3's bytes plus its pings (when it pinged). The
    larger of the sender's count (throughput_sender_bps x duration_s) and the receiver's
    (`bytes`, its count of the sender's bytes: below the sender's by what was still
    queued when the test stopped)."""
    pinged = str(row.get("rtt_avg_ms") or "") != "" or str(row.get("ping_loss_pct") or "") != ""
    sent = _number(row.get("throughput_sender_bps")) * _number(row.get("duration_s")) / 8
    iperf3 = max(_number(row.get("bytes")), sent)
    return round(iperf3) + (pings * PING_PACKET_BYTES if pinged else 0)


def egress_usd(
    rows: Iterable[Mapping[str, Any]], pricing: Pricing, regions: Mapping[str, Region], pings: int
) -> tuple[int, float]:
    """(bytes, USD) of the rows at the list price of each row's source -> destination."""
    total_bytes, usd = 0, 0.0
    for row in rows:
        sent = row_bytes(row, pings)
        src, dst = pair_key(row)
        total_bytes += sent
        if src in regions and dst in regions:
            usd += sent / 1e9 * pricing.egress_usd_per_gb(regions[src], regions[dst])
    return total_bytes, usd


def over_budget(
    rows_so_far: Iterable[Mapping[str, Any]],
    pricing: Pricing,
    budget_usd: float,
    *,
    regions: Mapping[str, Region],
    pings: int,
    vm_usd_so_far: float = 0.0,
) -> bool:
    """True once what the rows moved (plus the VMs' cost so far) reaches the budget: the
    measure loop stops there, before the next round."""
    return egress_usd(rows_so_far, pricing, regions, pings)[1] + vm_usd_so_far >= budget_usd


def sweep_spend(sweep_dir: Path, pricing: Pricing) -> Spend:
    """What a finished (or stopped) sweep moved and cost at list prices; 0 on local."""
    record = load_record(Path(sweep_dir).parent, Path(sweep_dir).name)
    regions = {r.key: r for r in (region_from_dict(d) for d in record.plan.regions)}
    rows = read_rows(Path(sweep_dir) / MEASUREMENTS_FILE)
    pings = record.params.pings
    moved, usd = egress_usd(rows, pricing, regions, pings)
    if is_emulated(record.backend):
        return Spend(bytes=moved, egress_usd=0.0, vm_usd=0.0)
    hours = _number(record.wall_s) / 3600
    vm = sum(pricing.clouds[r.cloud].vm_usd_per_hour * hours for r in regions.values())
    return Spend(bytes=moved, egress_usd=usd, vm_usd=vm)
