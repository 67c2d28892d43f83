"""Host allowance against path: is a throughput figure the path's, or the VM's allowance?

A burstable VM sends at its burst rate only while its allowance lasts, then at its
baseline; a long sweep keeps every host busy round after round, so late rounds can
measure the VM, not the path. Three kinds of evidence, all pure functions here:

- the plan: each host's mean egress over the sweep against its machine type's baseline
  (`shortfalls`), naming a type whose baseline covers it;
- the host's own counters around each test (the rows' allowance and steal columns,
  filled by orchestrator.results.raw_rows): `host_flags` lists the tests where they moved;
- sentinel pairs, measured in the first and again in the last round
  (orchestrator.plan.rounds.add_sentinels): `sentinel_check` flags a sweep whose late
  results fell more than SENTINEL_DROP below the early ones.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from orchestrator.model import MachineBandwidth
from orchestrator.results import measure_of, pair_key

SENTINEL_DROP = 0.20  # late results this far below the early ones flag the sweep
# A host's CPU steal above this during a test is evidence of its own (CPU) limit.
STEAL_PCT_FLAG = 5.0
ALLOWANCE_COLUMNS = (
    "src_bw_out_allowance_exceeded_packets",
    "dst_bw_in_allowance_exceeded_packets",
    "src_pps_allowance_exceeded_packets",
    "dst_pps_allowance_exceeded_packets",
)
STEAL_COLUMNS = ("src_cpu_steal_pct", "dst_cpu_steal_pct")


# ---- the plan: mean egress against the baseline -------------------------------------


@dataclass(frozen=True)
class Shortfall:
    """A host whose mean egress over the sweep is above its machine type's baseline."""

    host: str  # region key
    machine_type: str
    mean_egress_bps: float
    baseline_bps: float
    covering_type: str  # a type of the same cloud whose baseline covers it; "" if none

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["mean_egress_bps"] = round(self.mean_egress_bps)
        out["baseline_bps"] = round(self.baseline_bps)
        return out


def mean_egress_bps(sent_bytes: Mapping[str, float], wall_s: float) -> dict[str, float]:
    """Each host's bytes sent over the sweep's measuring time, as a rate."""
    if wall_s <= 0:
        return {host: 0.0 for host in sent_bytes}
    return {host: sent * 8 / wall_s for host, sent in sent_bytes.items()}


def covering_type(cloud: str, need_bps: float, types: Iterable[MachineBandwidth]) -> str:
    """The type of `cloud` with the lowest baseline that still covers `need_bps`."""
    fitting = [t for t in types if t.cloud == cloud and t.baseline_bps >= need_bps]
    return min(fitting, key=lambda t: (t.baseline_bps, t.name)).name if fitting else ""


def shortfalls(
    egress_bps: Mapping[str, float],
    host_types: Mapping[str, str],
    types: Mapping[str, MachineBandwidth],
) -> list[Shortfall]:
    """The hosts whose mean egress is above their type's baseline; a host of a type
    without a known baseline is not judged."""
    out = []
    for host, rate in sorted(egress_bps.items()):
        name = host_types.get(host, "")
        known = types.get(name)
        if known is None or rate <= known.baseline_bps:
            continue
        cover = covering_type(known.cloud, rate, types.values())
        out.append(Shortfall(host, name, rate, known.baseline_bps, cover))
    return out


def shortfall_message(found: Sequence[Shortfall], limit: int = 3) -> str:
    """One line naming the hosts (the first `limit`) and what would cover them."""

    def one(s: Shortfall) -> str:
        cover = f"{s.covering_type} covers it" if s.covering_type else "no listed type covers it"
        return (
            f"{s.host} ({s.machine_type}) {s.mean_egress_bps / 1e6:,.1f} Mbit/s mean egress "
            f"> {s.baseline_bps / 1e6:,.1f} Mbit/s baseline, {cover}"
        )

    more = f" and {len(found) - limit} more hosts" if len(found) > limit else ""
    return (
        f"{len(found)} hosts send more on average than their machine type sustains, so late "
        f"rounds may measure the VM's allowance, not the path: "
        + "; ".join(one(s) for s in found[:limit])
        + more
    )


# ---- the host's own counters per test ------------------------------------------------


def _number(value: Any) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def host_evidence(row: Mapping[str, Any]) -> list[str]:
    """What the hosts' own counters say about a row's test: the allowance counters that
    moved, and CPU steal above STEAL_PCT_FLAG. [] when nothing moved (or nothing was read)."""
    found = []
    for column in ALLOWANCE_COLUMNS:
        moved = _number(row.get(column))
        if moved:
            found.append(f"{column.removesuffix('_packets')} +{moved:.0f}")
    for column in STEAL_COLUMNS:
        steal = _number(row.get(column))
        if steal is not None and steal > STEAL_PCT_FLAG:
            found.append(f"{column.removesuffix('_pct')} {steal:.1f}%")
    return found


def host_flags(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One record per test whose hosts' counters moved: which test, and what moved."""
    out = []
    for row in rows:
        found = host_evidence(row)
        if found:
            out.append(
                {
                    "sweep_id": row.get("sweep_id", ""),
                    "round": row.get("round", ""),
                    "src": f"{row.get('src_cloud')}:{row.get('src_region')}",
                    "dst": f"{row.get('dst_cloud')}:{row.get('dst_region')}",
                    "throughput_bps": _number(row.get("throughput_bps")),
                    "evidence": "; ".join(found),
                }
            )
    return out


# ---- sentinel pairs ------------------------------------------------------------------


@dataclass(frozen=True)
class SentinelCheck:
    """Early against late results of a sweep's sentinel tests."""

    tests: int  # directed tests with both an early and a late throughput
    early_bps: float  # median of the early results
    late_bps: float
    drop: float  # 1 - late / early (negative: the late ones were faster)
    flagged: bool

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["early_bps"] = round(self.early_bps)
        out["late_bps"] = round(self.late_bps)
        out["drop"] = round(self.drop, 4)
        return out


def sentinel_key(row: Mapping[str, Any]) -> tuple[str, str, str, int]:
    """What makes an early and a late sentinel result the same test: source, destination,
    measure and streams. The buffers are the measure's within one sweep (single_stream:
    the sweep's --window or the hosts' defaults; capacity: sized once per pair for its
    BDP), and the rows of one sweep are compared, so the measure stands for them."""
    streams = int(_number(row.get("streams")) or 1)
    return (*pair_key(row), measure_of(row), streams)


def sentinel_check(
    early_rows: Iterable[Mapping[str, Any]],
    late_rows: Iterable[Mapping[str, Any]],
    threshold: float = SENTINEL_DROP,
) -> SentinelCheck | None:
    """Compare the late sentinel results with the same tests' early ones (medians over
    the tests both have, like with like: sentinel_key); None when no test has both. An
    early capacity row is never set against a late single_stream one."""
    late = {sentinel_key(r): _number(r.get("throughput_bps")) for r in late_rows}
    pairs = []
    for row in early_rows:
        key = sentinel_key(row)
        early = _number(row.get("throughput_bps"))
        if key in late and early and late[key] is not None:
            pairs.append((early, late[key]))
    if not pairs:
        return None
    early_bps = statistics.median(e for e, _ in pairs)
    late_bps = statistics.median(x for _, x in pairs if x is not None)
    drop = 1.0 - late_bps / early_bps
    return SentinelCheck(len(pairs), early_bps, late_bps, drop, drop > threshold)
