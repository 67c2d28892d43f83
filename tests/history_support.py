"""Sweep folders for the history tests: sweep.json, hosts.json, measurements.csv and raw
agent outputs whose ping text has known samples, written as a real sweep writes them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from orchestrator.history import store as history_store
from orchestrator.results import files as store
from orchestrator.results.schema import MEASUREMENT_COLUMNS, RESULTS_FORMAT_VERSION

PAIRS = (("aws:us-east-1", "gcp:europe-west1"), ("gcp:europe-west1", "aws:us-east-1"))


def ping_text(samples_ms: Sequence[float], address: str = "198.18.0.2") -> str:
    """iputils ping output with these samples (the shape of tests/data/ping_ok.txt)."""
    lines = [f"PING {address} ({address}) 56(84) bytes of data."]
    lines += [
        f"64 bytes from {address}: icmp_seq={i + 1} ttl=64 time={s:.3f} ms"
        for i, s in enumerate(samples_ms)
    ]
    n = len(samples_ms)
    mean = sum(samples_ms) / n
    lines += [
        "",
        f"--- {address} ping statistics ---",
        f"{n} packets transmitted, {n} received, 0% packet loss, time {n * 200}ms",
        f"rtt min/avg/max/mdev = {min(samples_ms):.3f}/{mean:.3f}/{max(samples_ms):.3f}/0.100 ms",
    ]
    return "\n".join(lines) + "\n"


def make_sweep(
    results: Path,
    sweep_id: str,
    samples: Mapping[tuple[str, str], Sequence[float]],
    *,
    started: datetime = datetime(2026, 11, 22, tzinfo=UTC),
    backend: str = "local",
    kernel: str = "6.1.0-28-amd64",
    throughput_bps: float = 9.0e8,
    format_version: int = RESULTS_FORMAT_VERSION,
) -> Path:
    """A finished sweep: one round per pair, its src pinging with `samples`."""
    folder = results / sweep_id
    hosts = sorted({h for pair in samples for h in pair})
    record = {
        "format_version": format_version,
        "sweep_id": sweep_id,
        "backend": backend,
        "emulated": backend == "local",
        "created_utc": started.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "status": "done",
        "params": {
            "pings": 20,
            "ping_interval_s": 0.2,
            "duration_s": 5,
            "omit_s": 1,
            "streams": 1,
            "window": None,
            "congestion": None,
        },
        "cloud_options": None,
        # what the history reads of the plan is nothing; a sweep.Sweep needs its shape
        "plan": {"backend": backend, "regions": [], "pairs": [], "estimate": {"wall_s": 0.0}},
        "placement": {
            h: {"zone": "local", "image_id": "emulated", "machine_type": "m"} for h in hosts
        },
    }
    store.write_json(folder / store.SWEEP_FILE, record)
    facts = {
        h: {"kernel": kernel, "iperf3_version": "iperf 3.12", "ping_version": "ping from "
            "iputils 20221126", "tcp_congestion_control": "cubic"}
        for h in hosts
    }  # fmt: skip
    store.write_json(
        folder / store.HOSTS_FILE,
        {
            "hosts": [{"name": h, "zone": "local", "image_id": "emulated"} for h in hosts],
            "facts": facts,
        },
    )
    rows = []
    for i, ((src, dst), values) in enumerate(sorted(samples.items())):
        sc, sr = src.split(":")
        dc, dr = dst.split(":")
        t = started + timedelta(seconds=10 * i)
        doc = {"agent_version": 2, "host": src, "round": i + 1, "role": "client",
               "ping": {"stdout": ping_text(values), "stderr": "", "rc": 0}}  # fmt: skip
        store.write_json(store.raw_path(folder, i + 1, src), doc)
        row = dict.fromkeys(MEASUREMENT_COLUMNS, "")
        row.update(
            sweep_id=sweep_id,
            started_utc=t.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            backend=backend,
            src_cloud=sc,
            src_region=sr,
            dst_cloud=dc,
            dst_region=dr,
            # near enough that no RTT of the tests is below the fibre floor (1 ms)
            distance_km="100.0",
            rtt_avg_ms=f"{sum(values) / len(values):.3f}",
            rtt_mdev_ms="0.100",  # as ping_text's summary line
            ping_loss_pct="0",
            throughput_bps=f"{throughput_bps:.0f}",
            streams="1",
            duration_s="5",
            src_machine_type="emulated-1000mbit",
            dst_machine_type="emulated-1000mbit",
            round=str(i + 1),
            status="ok",
        )
        rows.append(row)
    store.write_rows(folder, rows)
    return folder


def sweep_id_at(t: datetime, suffix: str = "a000") -> str:
    return store.new_sweep_id(t, suffix)


# A path whose RTT steps: A -> B at each sweep's level, B -> A steady at 150 ms (within
# 10 % of A -> B, so neither is flagged asymmetric); one sweep every 6 h from STEP_T0.
STEP_T0 = datetime(2026, 11, 1, tzinfo=UTC)
STEP_A, STEP_B = "aws:us-east-1", "gcp:europe-west1"


def step_sweeps(
    results: Path, levels: Sequence[float], start: int = 0, kernels: Mapping[int, str] | None = None
) -> None:
    """One sweep per 6 h, A -> B pinging at levels[i] ms (20 samples), ingested; `kernels`
    gives a sweep's kernel by its index (a configuration change)."""
    for i, level in enumerate(levels, start):
        t = STEP_T0 + timedelta(hours=6 * i)
        samples = {
            (STEP_A, STEP_B): [level + 0.1 * (k % 3) for k in range(20)],
            (STEP_B, STEP_A): [150.0] * 20,
        }
        kernel = (kernels or {}).get(i, "6.1.0-28-amd64")
        make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t, kernel=kernel)
    history_store.ingest_all(results)


def record_of(folder: Path) -> dict:
    return json.loads((folder / store.SWEEP_FILE).read_text())


# the times of change detection's tables that version 11 kept as text, as it wrote them
V11_TIMES = {"episodes": ("started_t", "confirmed_t", "closed_t"), "config_changes": ("t",)}


def as_version_12(path: Path) -> None:
    """The store at `path` as version 12 left it: the bins' sums (`total`) as DOUBLE, of
    the values themselves; no stored RTT per test (rtt_run_ms)."""
    import duckdb

    from orchestrator.history import metrics

    rtt = metrics.METRICS["rtt"].total_scale
    scales = " ".join(
        f"WHEN '{m.name}' THEN {m.total_scale}" for m in metrics.METRICS.values() if m.one_value
    )
    con = duckdb.connect(str(path))
    try:
        for table, scale in (("rtt_bins", str(rtt)), ("value_bins", f"CASE metric {scales} END")):
            con.execute(f"ALTER TABLE {table} ALTER total TYPE DOUBLE USING total / {scale}")
        for table in ("recent", "archive"):
            con.execute(f"ALTER TABLE {table} DROP COLUMN rtt_run_ms")
        con.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    finally:
        con.close()


def as_version_11(path: Path) -> None:
    """The store at `path` as version 11 left it: as version 12 did (as_version_12), and
    the times of episodes and config_changes as text (`2026-11-22T01:30:00.123Z`, "" for
    an episode not closed)."""
    import duckdb

    as_version_12(path)
    con = duckdb.connect(str(path))
    try:
        for table, columns in V11_TIMES.items():
            for c in columns:
                con.execute(
                    f"ALTER TABLE {table} ALTER {c} SET DATA TYPE VARCHAR "
                    f"USING coalesce(strftime({c}, '%Y-%m-%dT%H:%M:%S.%gZ'), '')"
                )
        con.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
    finally:
        con.close()
