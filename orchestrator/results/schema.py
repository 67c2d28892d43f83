"""The results contract: columns of measurements.csv, one row per directed test.

Every later stage and every external user reads these names; units are in the
names. docs/results.md documents each column.
"""

from collections.abc import Mapping
from typing import Any

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
