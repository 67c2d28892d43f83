"""The TCP study's plan: which variants of the forward test, how often, in which order,
and with what buffers (issue 13). Pure functions; running it is orchestrator.study.run.

A variant changes one thing against the default host settings: the buffers (tuned:
tcp_rmem/tcp_wmem max at 2 x the pair's bandwidth-delay product at the VM's line rate,
from its idle RTT), the stream count, or the congestion control. Each pair runs every
variant `repeats` times, in an order shuffled per pair from a recorded seed, so no
variant always meets a drained or a fresh host.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from orchestrator.core import UserError

if TYPE_CHECKING:  # `study --help` reads VARIANTS: the planner is imported when used
    from orchestrator.plan import Pair, Round


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


def host_buffer_limit(max_buffer_bytes: int | None = None) -> int:
    """What a host can set as tcp_rmem/tcp_wmem max: the kernel's (an int), or less
    where the study was told so (--max-buffer-bytes, e.g. the hosts' memory)."""
    from orchestrator.plan import TCP_BUFFER_MAX_BYTES

    return min(max_buffer_bytes or TCP_BUFFER_MAX_BYTES, TCP_BUFFER_MAX_BYTES)


def check_buffer(pair: str, buffer_bytes: int, rtt_ms: float, limit: int) -> None:
    if buffer_bytes > limit:
        raise UserError(
            f"{pair}: tuned buffers of {buffer_bytes} bytes (2 x BDP at {rtt_ms:.1f} ms) are "
            f"above what the hosts can set ({limit} bytes): drop the 'tuned' variant or "
            "this pair"
        )
