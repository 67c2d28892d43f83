"""The results contract: columns of measurements.csv, one row per directed test.

Every later stage and every external user reads these names; units are in the
names. The README documents each column.
"""

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
    "rtt_p50_ms",
    "rtt_p90_ms",
    "rtt_p99_ms",
    "rtt_max_ms",
    "rtt_mdev_ms",
    "ping_loss_pct",
    "throughput_bps",
    "throughput_sender_bps",
    "bytes",
    "retransmits",
    "tcp_rtt_ms",
    "max_cwnd_bytes",
    "streams",
    "duration_s",
    "src_machine_type",
    "dst_machine_type",
    "round",
    "status",
    "error",
)

RESULTS_FORMAT_VERSION = 1
