"""The configuration fingerprint of a measurement: what must stay the same for two runs
of a pair to be comparable.

One constant list of fields (FINGERPRINT_FIELDS, tested): a change in any of them starts
a new baseline in change detection and is reported as a configuration change, never as
a network change. Pure functions: the history store fills the fields from sweep.json,
hosts.json and the row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from orchestrator.results import PING_PAYLOAD_BYTES, SweepRecord

FINGERPRINT_FIELDS: tuple[str, ...] = (
    "backend",
    "src_zone",
    "src_image_id",
    "src_kernel",
    "src_machine_type",
    "dst_zone",
    "dst_image_id",
    "dst_kernel",
    "dst_machine_type",
    "probe_tool",
    "probe_version",
    "packet_size_bytes",
    "pings",
    "ping_interval_s",
    "streams",
    "window",
    "congestion",
    "duration_s",
    "network_tier",
)
PROBE_TOOL = "ping+iperf3"  # iputils ping inside each slot (sweeps before the ping phase)
PHASE_PROBE_TOOL = "agent-icmp+iperf3"  # the agent's own echoes in the ping phase
# The agent runs ping without -s: iputils' default payload of 56 bytes.


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def fingerprint_fields(
    *,
    row: Mapping[str, Any],
    record: SweepRecord,
    facts: Mapping[str, Mapping[str, Any]],
    placement: Mapping[str, Mapping[str, Any]],
    phase: bool,
) -> dict[str, str]:
    """The fields of one row of a sweep (`record` is sweep.json, `facts` and `placement`
    per host key, `phase` whether it ran a ping phase). Every value is text, "" when
    unknown, so the hash is stable."""
    src = f"{row['src_cloud']}:{row['src_region']}"
    dst = f"{row['dst_cloud']}:{row['dst_region']}"
    params = record.params
    src_facts, dst_facts = facts.get(src, {}), facts.get(dst, {})
    # since the ping phase the agent times its own echoes: another probe, another baseline
    pinger = (
        f"agent {src_facts.get('agent_version', '')}" if phase else src_facts.get("ping_version")
    )
    versions = [_text(src_facts.get("iperf3_version")), _text(pinger)]
    # with no --congestion the kernel's default runs: record which one that was
    congestion = params.congestion or (
        f"default:{src_facts['tcp_congestion_control']}"
        if src_facts.get("tcp_congestion_control")
        else ""
    )
    fields = {
        "backend": row.get("backend") or record.backend,
        "src_zone": placement.get(src, {}).get("zone"),
        "src_image_id": placement.get(src, {}).get("image_id"),
        "src_kernel": src_facts.get("kernel"),
        "src_machine_type": row.get("src_machine_type"),
        "dst_zone": placement.get(dst, {}).get("zone"),
        "dst_image_id": placement.get(dst, {}).get("image_id"),
        "dst_kernel": dst_facts.get("kernel"),
        "dst_machine_type": row.get("dst_machine_type"),
        "probe_tool": PHASE_PROBE_TOOL if phase else PROBE_TOOL,
        "probe_version": " | ".join(versions) if any(versions) else "",
        "packet_size_bytes": PING_PAYLOAD_BYTES,
        "pings": params.pings,
        "ping_interval_s": params.ping_interval_s,
        "streams": row.get("streams") or params.streams,
        "window": params.window,
        "congestion": congestion,
        "duration_s": params.duration_s,
        "network_tier": record.cloud_options.network_tier if record.cloud_options else None,
    }
    return {k: _text(fields[k]) for k in FINGERPRINT_FIELDS}


def imported_fields(row: Mapping[str, Any], source: str) -> dict[str, str]:
    """The fields an imported row can tell (machine types, streams, duration); the rest
    are empty. The backend is the source's name: imported rows never share a baseline
    with our own sweeps."""
    fields = dict.fromkeys(FINGERPRINT_FIELDS, "")
    # a source that names its tiers (skyplane) keeps each tier a fingerprint of its own
    told = ("src_machine_type", "dst_machine_type", "streams", "duration_s", "network_tier")
    fields.update({k: _text(row.get(k)) for k in told}, backend=f"import:{source}")
    return fields


def fingerprint(fields: Mapping[str, str]) -> str:
    """A short stable hash of the fields (16 hex digits)."""
    text = json.dumps([fields.get(k, "") for k in FINGERPRINT_FIELDS])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def differences(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """The fields that differ, as `name: old -> new`, in FINGERPRINT_FIELDS order."""
    return [
        f"{k}: {old.get(k) or '-'} -> {new.get(k) or '-'}"
        for k in FINGERPRINT_FIELDS
        if old.get(k, "") != new.get(k, "")
    ]
