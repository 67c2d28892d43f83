"""Host buffers sized for a path's bandwidth-delay product: what the TCP study's tuned
variant and a sweep's capacity measure set on both hosts of a test (the agent's `tune`,
playbooks/files/ir_agent.py), put back after the test.

tcp_rmem/tcp_wmem max = 2 x BDP at the VM's line rate from the pair's idle RTT (TCP turns
about half a buffer into window); only the max changes, the first two fields keep
Linux's defaults. On the emulated cloud, whose window is a route's clamp, the clamp is
lifted to match (the buffer scaled as the default clamp scales the default buffers).
"""

from __future__ import annotations

import math
from typing import Any

from orchestrator.model import is_emulated
from orchestrator.netmodel import DEFAULT_MODEL, REAL_CAP_BPS, emulated_type

TUNED_BUFFER_BDP_FACTOR = 2.0
# The largest tcp_rmem/tcp_wmem max Linux takes (an int).
TCP_BUFFER_MAX_BYTES = 2**31 - 1
# The default sysctl triples' first two fields (Linux's defaults); only the max changes.
RMEM_MIN_DEFAULT = "4096 131072"
WMEM_MIN_DEFAULT = "4096 16384"


def bdp_bytes(rate_bps: float, rtt_ms: float) -> float:
    """Bytes in flight needed to keep `rate_bps` going over `rtt_ms`."""
    return rate_bps * rtt_ms / 1000.0 / 8.0


def line_rate_bps(emulated: bool, machine_type: str | None = None) -> float:
    """The VM's line rate: the emulated type's cap (`emulated`), or a small cloud VM's
    NIC cap."""
    if emulated:
        return emulated_type(machine_type).rate_mbit * 1e6
    return REAL_CAP_BPS


def tuned_buffer_bytes(rate_bps: float, idle_rtt_ms: float) -> int:
    """tcp_rmem/tcp_wmem max sized for the path: 2 x BDP at line rate."""
    return math.ceil(TUNED_BUFFER_BDP_FACTOR * bdp_bytes(rate_bps, idle_rtt_ms))


def sysctl_values(buffer_bytes: int) -> dict[str, str]:
    """The tuned sysctls as the agent writes them (only the max changes)."""
    return {
        "tcp_rmem": f"{RMEM_MIN_DEFAULT} {buffer_bytes}",
        "tcp_wmem": f"{WMEM_MIN_DEFAULT} {buffer_bytes}",
    }


def emulated_window_bytes(buffer_bytes: int) -> int:
    """The window clamp a tuned emulated host lifts its route to: its buffers scaled as
    the default clamp scales the default buffers (netmodel: buffer x efficiency)."""
    return round(buffer_bytes * DEFAULT_MODEL.window_efficiency)


def tune_spec(alias: str, buffer_bytes: int, backend: str) -> dict[str, Any]:
    """What the agent sets for a tuned test (its part's `tune`, saved under `alias` for
    --restore); on the emulated cloud also the window clamp."""
    spec: dict[str, Any] = {"name": alias, **sysctl_values(buffer_bytes)}
    if is_emulated(backend):
        spec["window_bytes"] = emulated_window_bytes(buffer_bytes)
    return spec
