"""The results contract: columns of measurements.csv, one row per directed test.

Every later stage and every external user reads these names; units are in the
names. docs/results.md documents each column.
"""

import math
from collections.abc import Mapping
from typing import Any

from orchestrator.results import flags

MEASUREMENT_COLUMNS: tuple[str, ...] = (
    "sweep_id",
    "started_utc",
    "backend",
    "src_cloud",
    "src_region",
    "dst_cloud",
    "dst_region",
    "distance_km",
    "rtt_min_ms",
    "rtt_avg_ms",
    "rtt_p10_ms",
    "rtt_p25_ms",
    "rtt_p50_ms",
    "rtt_p75_ms",
    "rtt_p90_ms",
    "rtt_p99_ms",
    "rtt_max_ms",
    "rtt_mdev_ms",
    "rtt_samples",  # echoes the RTT figures come from (replies received)
    "ping_loss_pct",
    "throughput_bps",
    "throughput_sender_bps",
    "bytes",
    "retransmits",
    "tcp_rtt_ms",
    "max_cwnd_bytes",
    # which throughput measure the row is (MEASURES): single_stream, one stream on the
    # hosts' default settings; capacity, several streams with buffers sized for the BDP
    "measure",
    "streams",
    "duration_s",
    "src_machine_type",
    "dst_machine_type",
    # the hosts' own evidence around the throughput test (orchestrator.plan.allowance): CPU
    # steal on each host, and how far the allowance counters moved (AWS ENA; emulated)
    "src_cpu_steal_pct",
    "dst_cpu_steal_pct",
    "src_bw_out_allowance_exceeded_packets",
    "dst_bw_in_allowance_exceeded_packets",
    "src_pps_allowance_exceeded_packets",
    "dst_pps_allowance_exceeded_packets",
    # what limited the throughput (orchestrator.results.limiter: window, allowance, loss, cpu,
    # capacity, unknown) and the figures that decided it ("key=value;...")
    "limiter",
    "limiter_detail",
    "round",
    "status",
    "error",
    # physics and consistency checks, names joined by ';' (orchestrator.results.flags.FLAGS)
    "flags",
)

# The columns that hold a number >= 0 (or nothing) in a row that parses.
NUMERIC_COLUMNS = frozenset(
    c
    for c in MEASUREMENT_COLUMNS
    if c.endswith(("_ms", "_bps", "_km", "_pct", "_s", "_bytes"))
    or c in ("bytes", "retransmits", "streams", "round")
)

# The range a value of each numeric column may take, by its unit: beyond it the value is
# not a measurement (an RTT of 1e30 ms, a throughput above 10 Tbit/s, a loss over 100 %)
# and is refused where a user's file is read, or kept out (as missing) where one is stored.
_RANGES_BY_SUFFIX = {
    "_ms": (0.0, 3_600_000.0),  # an hour
    "_bps": (0.0, 1e13),
    "_km": (0.0, 20_100.0),  # half the Earth's circumference
    "_pct": (0.0, 100.0),
    "_s": (0.0, 31_622_400.0),  # a year
    "_bytes": (0.0, 1e15),
    "_packets": (0.0, 1e15),
}
_RANGES = {"bytes": (0.0, 1e16), "retransmits": (0.0, 1e12), "streams": (0.0, 1e4),
           "round": (0.0, 1e6), "rtt_samples": (0.0, 1e7)}  # fmt: skip
YEARS = (1990, 2200)  # a measurement's date: no cloud region before, none this far ahead


def value_range(column: str) -> tuple[float, float] | None:
    """(lowest, highest) a value of `column` may be; None for a column of text."""
    if column in _RANGES:
        return _RANGES[column]
    for suffix, bounds in _RANGES_BY_SUFFIX.items():
        if column.endswith(suffix):
            return bounds
    return None


def number_problem(column: str, text: str) -> str | None:
    """Why the text of a cell of numeric `column` is not a value it may hold (infinite,
    NaN, outside value_range), or None (also for text that is no number: a reader's
    own rule says what that means)."""
    bounds = value_range(column)
    if bounds is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value):
        return f"{text!r} is not a finite number"
    low, high = bounds
    if not low <= value <= high:
        return f"{text!r} is outside {low:g} to {high:g}"
    return None


HOST_EVIDENCE_COLUMNS = MEASUREMENT_COLUMNS[
    MEASUREMENT_COLUMNS.index("src_cpu_steal_pct") : MEASUREMENT_COLUMNS.index("limiter")
]
LIMITER_COLUMNS = ("limiter", "limiter_detail")
# Columns added after the first contract, newest last: a file written before any of
# them is read with those empty (and its flags computed by the reader).
NUMBERS_COLUMNS = ("rtt_p10_ms", "rtt_p25_ms", "rtt_p75_ms", "rtt_samples", "flags")
MEASURE_COLUMNS = ("measure",)
ADDED_COLUMNS = (*HOST_EVIDENCE_COLUMNS, *LIMITER_COLUMNS, *NUMBERS_COLUMNS, *MEASURE_COLUMNS)
# The columns before the host evidence was added: such a file is read with it empty.
PREVIOUS_COLUMNS = tuple(c for c in MEASUREMENT_COLUMNS if c not in ADDED_COLUMNS)


# What each downloadable column means; the unit is in the name.
MEASUREMENT_DOCS = {
    "sweep_id": "the sweep the test belongs to (sortable: UTC start, then a random suffix)",
    "started_utc": "when the test started, ISO 8601 UTC",
    "backend": "which stack ran the hosts: local (the EMULATED cloud), aws or gcp",
    "src_cloud": "cloud of the sending region",
    "src_region": "sending region id",
    "dst_cloud": "cloud of the receiving region",
    "dst_region": "receiving region id",
    "distance_km": "geodesic distance between the regions (WGS-84)",
    "rtt_min_ms": "smallest ping round-trip time",
    "rtt_avg_ms": "mean ping round-trip time (the mean, not the RTT charts show)",
    "rtt_p10_ms": "10th percentile ping round-trip time (of the test's own samples)",
    "rtt_p25_ms": "25th percentile ping round-trip time",
    "rtt_p50_ms": "median ping round-trip time: the test's RTT, shown wherever one RTT is",
    "rtt_p75_ms": "75th percentile ping round-trip time",
    "rtt_p90_ms": "90th percentile ping round-trip time",
    "rtt_p99_ms": "99th percentile ping round-trip time",
    "rtt_max_ms": "largest ping round-trip time",
    "rtt_mdev_ms": "ping's mean deviation of the round-trip time",
    "rtt_samples": "echoes the RTT figures come from (replies received)",
    "ping_loss_pct": "pings lost, percent",
    "throughput_bps": "TCP goodput at the receiver, bits per second",
    "throughput_sender_bps": "TCP rate at the sender, bits per second",
    "bytes": "the receiver's count of the bytes the sender counted (aligned at the omit boundary)",
    "retransmits": "TCP retransmissions at the sender",
    "tcp_rtt_ms": "sender's smoothed TCP RTT",
    "max_cwnd_bytes": "largest TCP congestion window seen",
    "measure": "throughput measure: single_stream (one stream, default host settings) or "
    "capacity (several streams, buffers sized for the BDP); empty reads as single_stream",
    "streams": "parallel TCP streams",
    "duration_s": "measured seconds (after the omitted warm-up)",
    "src_machine_type": "machine type of the sender",
    "dst_machine_type": "machine type of the receiver",
    "src_cpu_steal_pct": "CPU steal on the sender during the test, % of its CPU time",
    "dst_cpu_steal_pct": "CPU steal on the receiver during the test, % of its CPU time",
    "src_bw_out_allowance_exceeded_packets": "sender's outbound allowance counter's move "
    "(AWS ENA, or the emulated one): packets queued or dropped above its allowance",
    "dst_bw_in_allowance_exceeded_packets": "receiver's inbound allowance counter's move",
    "src_pps_allowance_exceeded_packets": "sender's packets-per-second allowance counter's move",
    "dst_pps_allowance_exceeded_packets": "receiver's packets-per-second allowance counter's move",
    "limiter": "what limited the throughput: window, allowance, loss, cpu, capacity or unknown",
    "limiter_detail": "the figures that decided the limiter (key=value;...)",
    "round": "round of the schedule the test ran in",
    "status": "ok, or failed (then error says why)",
    "error": "why the test failed, empty when ok",
    "flags": "physics and consistency checks the row failed, ';'-separated: "
    + "; ".join(f"{name}: {why}" for name, why in flags.REASONS.items()),
}


def older_contract(header: tuple[str, ...]) -> bool:
    """True for the header of a file written by an earlier version: this contract's
    columns, in order, less some of the added ones."""
    missing = set(MEASUREMENT_COLUMNS) - set(header)
    return (
        bool(missing)
        and missing <= set(ADDED_COLUMNS)
        and header == tuple(c for c in MEASUREMENT_COLUMNS if c in header)
    )


RESULTS_FORMAT_VERSION = 1

# The throughput measures (the `measure` column). A row without one (a file written
# before the column) is single_stream: what every sweep measured before capacity.
SINGLE_STREAM, CAPACITY = "single_stream", "capacity"
MEASURES = (SINGLE_STREAM, CAPACITY)


def measure_of(row: Mapping[str, Any]) -> str:
    """A row's measure; empty or missing reads as single_stream."""
    return str(row.get("measure") or SINGLE_STREAM)


# One ping probe: its ICMP payload (ping's default -s, and the agent's), and the packet
# on the wire with the 8-byte ICMP and 20-byte IPv4 headers, which the cost counts.
PING_PAYLOAD_BYTES = 56
PING_PACKET_BYTES = PING_PAYLOAD_BYTES + 8 + 20
