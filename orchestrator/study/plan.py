"""The TCP study's plan: which variants of the forward test, how often, in which order,
and with what buffers (issue 13). Pure functions; running it is orchestrator.study.run.

A variant changes one thing against the default host settings: the buffers (tuned:
tcp_rmem/tcp_wmem max at 2 x the pair's bandwidth-delay product at the VM's line rate,
from its idle RTT), the stream count, or the congestion control. Each pair runs every
variant `repeats` times, in an order shuffled per pair from a recorded seed, so no
variant always meets a drained or a fresh host.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from orchestrator.advise.model import TCP_BUFFER_MAX_BYTES, TUNED_BUFFER_BDP_FACTOR, bdp_bytes
from orchestrator.core.errors import UserError
from orchestrator.netmodel.model import DEFAULT_MODEL, REAL_CAP_BPS, emulated_type
from orchestrator.plan.rounds import Round
from orchestrator.plan.selection import Pair


@dataclass(frozen=True)
class Variant:
    name: str
    streams: int = 1
    congestion: str = ""  # iperf3 -C; "" = the host's default
    tuned: bool = False  # tcp_rmem/tcp_wmem max at 2 x BDP on both hosts

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("default"),
        Variant("tuned", tuned=True),
        Variant("p4", streams=4),
        Variant("p8", streams=8),
        Variant("cubic", congestion="cubic"),
        Variant("bbr", congestion="bbr"),
    )
}
BASELINE = "default"
MIN_REPEATS = 3
DEFAULT_REPEATS = 3
# The default sysctl triples' first two fields (Linux's defaults); only the max changes.
RMEM_MIN_DEFAULT = "4096 131072"
WMEM_MIN_DEFAULT = "4096 16384"


def parse_variants(text: str) -> tuple[Variant, ...]:
    """`default,tuned,p4` -> the variants, in that order; one-line errors."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise UserError(
            f"--variants: unknown variant '{unknown[0]}' (known: {', '.join(VARIANTS)})"
        )
    if len(set(names)) != len(names):
        raise UserError(f"--variants {text}: a variant is named twice")
    if BASELINE not in names:
        raise UserError(f"--variants {text}: include '{BASELINE}', the gains are measured from it")
    return tuple(VARIANTS[n] for n in names)


def check_repeats(repeats: int) -> int:
    if repeats < MIN_REPEATS:
        raise UserError(
            f"--repeats {repeats}: at least {MIN_REPEATS}, so the study can report a spread"
        )
    return repeats


def run_order(
    src: str, dst: str, variants: Sequence[Variant], repeats: int, seed: int
) -> list[tuple[str, int]]:
    """The pair's tests in the order they run: (variant, repeat 1..n), shuffled by a
    generator seeded from the study's seed and the pair, so the order is recorded and
    reproducible, and differs between pairs."""
    tests = [(v.name, k) for k in range(1, repeats + 1) for v in variants]
    random.Random(f"{seed}:{src}>{dst}").shuffle(tests)
    return tests


def forward_rounds(rounds: Sequence[Round]) -> list[list[Pair]]:
    """The study's tests by the sweep's exclusive rounds: one forward test per slot. Each
    is played once per test of the pairs' orders (variants x repeats)."""
    return [[slot.pairs[0] for slot in slots] for slots in rounds]


def line_rate_bps(emulated: bool, machine_type: str | None = None) -> float:
    """The VM's line rate: the emulated type's cap (`emulated`), or a small cloud VM's
    NIC cap."""
    if emulated:
        return emulated_type(machine_type).rate_mbit * 1e6
    return REAL_CAP_BPS


def tuned_buffer_bytes(rate_bps: float, idle_rtt_ms: float) -> int:
    """tcp_rmem/tcp_wmem max of the tuned variant: 2 x BDP at line rate."""
    return math.ceil(TUNED_BUFFER_BDP_FACTOR * bdp_bytes(rate_bps, idle_rtt_ms))


def host_buffer_limit(max_buffer_bytes: int | None = None) -> int:
    """What a host can set as tcp_rmem/tcp_wmem max: the kernel's (an int), or less
    where the study was told so (--max-buffer-bytes, e.g. the hosts' memory)."""
    return min(max_buffer_bytes or TCP_BUFFER_MAX_BYTES, TCP_BUFFER_MAX_BYTES)


def check_buffer(pair: str, buffer_bytes: int, rtt_ms: float, limit: int) -> None:
    if buffer_bytes > limit:
        raise UserError(
            f"{pair}: tuned buffers of {buffer_bytes} bytes (2 x BDP at {rtt_ms:.1f} ms) are "
            f"above what the hosts can set ({limit} bytes): drop the 'tuned' variant or "
            "this pair"
        )


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
