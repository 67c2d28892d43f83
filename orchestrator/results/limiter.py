"""What limited a throughput test: one pure function from a row, its iperf3 figures and
the facts of its two hosts to a named limiter and the figures that decided it.

    window     within 10 % of streams x window / idle RTT (the hosts' buffers bound it)
    allowance  the hosts' allowance counters moved during the test, or the rate is
               within 10 % of the machine type's documented baseline (a burstable VM
               whose burst is spent)
    loss       retransmissions explain it: within 30 % of Mathis's ceiling
               streams x MSS / RTT x 1.22 / sqrt(p), widened by the counting error of p
               (loss_band: k counted losses; not when the window bound fits)
    cpu        CPU steal on a host, or the sender's iperf3 at its CPU limit, and no
               bound above fits
    capacity   within 10 % of the line rate (the smaller of the sender's egress and
               the receiver's ingress cap)
    unknown    none of these, or at the line rate while sender and receiver disagree

Sender and receiver must agree within 1 %, or the sender be ahead by no more than the
bytes a path holds in flight and queued when the test stops (2 x BDP at the received
rate: a long path's capacity test, 8 streams on buffers sized for it, ends with over 1 %
of a 5 s interval in flight), plus, for a reverse test, what the server sent in the time
its count ran past the client's (parse: sender_extra_s, about one RTT), or the receiver
be ahead only by what the omit boundary explains (its aligned count, `bytes`, not above
the sender's: flags.receiver_exceeds); a row where they do not is classified on the
receiver's figure, carries the gap in its detail (receiver_minus_sender) and is never
`capacity`.

The order is the order of evidence: a counter is seen directly, the line rate and the
baseline are documented figures, the window and loss ceilings are models. A busy CPU
(steal, or the sender's iperf3 at its limit) is seen directly too, but only explains a
rate that no bound does: a test at the line rate or its window on a shared machine
shows steal as well, and the CPU did not hold it there. The facts (line rate, baseline,
window) are passed in by the caller, so nothing here reads the catalog or the emulator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.results.flags import receiver_exceeds

WINDOW, ALLOWANCE, LOSS, CPU, CAPACITY, UNKNOWN = (
    "window",
    "allowance",
    "loss",
    "cpu",
    "capacity",
    "unknown",
)
LIMITERS = (WINDOW, ALLOWANCE, LOSS, CPU, CAPACITY, UNKNOWN)

# Sender and receiver byte counts must agree within this share (iperf3 reports both).
AGREEMENT = 0.01
# The sender's count runs ahead of the receiver's by what is still in flight or queued
# when the test stops (iperf3 counts bytes written): at most a window, which the largest
# buffers we set (2 x BDP, plan.tuning) bound at 2 x BDP at the received rate. A sender
# ahead by no more than that agrees, over a measured interval of at least
# IN_FLIGHT_MIN_S (the sweep's default after its ramp, less the 5 % iperf3's reported
# interval may fall short of it, flags.DURATION_SHORT_FRACTION: a shorter one may hold
# part of the ramp, whose gap is not only what is in flight); a receiver ahead never
# does beyond AGREEMENT.
IN_FLIGHT_BDPS = 2.0
IN_FLIGHT_MIN_S = 5.0 * 0.95
# A rate "at" a documented or modelled bound: within this share of it.
RATE_TOLERANCE = 0.10
# Mathis's ceiling explains a test within this share (the TCP study's emulator check).
LOSS_TOLERANCE = 0.30
MATHIS_C = 1.22  # sqrt(3/2)
MSS_BYTES = 1448  # iperf3's tcp_mss_default when the document has none
# One iperf3 thread at its limit: 90 % of a core. iperf3 before 3.16 runs every stream
# in one thread; from 3.16 one thread per stream.
CPU_BUSY_PCT = 90.0
MULTITHREADED_IPERF3 = (3, 16)
# CPU steal at or above this share of a host's CPU time: the hypervisor took the CPU.
STEAL_BUSY_PCT = 10.0


@dataclass(frozen=True)
class PathFacts:
    """What the two hosts of a test allow, from regions.yaml or the emulation's spec."""

    line_rate_bps: float | None = None  # the smaller of sender egress / receiver ingress cap
    baseline_bps: float | None = None  # sustained allowance below the line rate (burstable)
    window_bytes: float | None = None  # the window one stream reaches with the hosts' buffers
    vcpus: int | None = None  # the sender's


@dataclass(frozen=True)
class Limiter:
    name: str
    detail: str  # "key=value;..." : the figures that decided it

    def to_row(self) -> dict[str, str]:
        return {"limiter": self.name, "limiter_detail": self.detail}


def _num(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _fmt(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"


def _detail(**figures: float | str | None) -> str:
    parts = []
    for key, value in figures.items():
        if value is None:
            continue
        parts.append(f"{key}={value if isinstance(value, str) else _fmt(value)}")
    return ";".join(parts)


def loss_band(retransmits: float | None, tolerance: float = LOSS_TOLERANCE) -> tuple[float, float]:
    """The range of measured / Mathis ceiling that loss explains, when the ceiling comes
    from `retransmits` counted losses: the model's `tolerance` either way, widened by two
    standard errors of the counted rate p (relative error e = 2 / sqrt(k)), through the
    ceiling's 1 / sqrt(p). A true rate up to (1 + e) p puts the ceiling lower, one down
    to (1 - e) p higher; below 4 losses (e >= 1) the count bounds it from one side only.
    k = 15: 0.55 to 1.87; k = 400: 0.67 to 1.37."""
    e = 2.0 / math.sqrt(max(retransmits or 0.0, 1.0))
    low = (1.0 - tolerance) / math.sqrt(1.0 + e)
    high = (1.0 + tolerance) / math.sqrt(1.0 - e) if e < 1.0 else math.inf
    return low, high


def _near(measured: float, bound: float, tolerance: float) -> bool:
    return bound > 0 and abs(measured - bound) <= tolerance * bound


def idle_rtt_ms(row: Mapping[str, Any]) -> float | None:
    """The pair's idle RTT for a row: its ping median, else mean; else the sender's TCP
    RTT during the test (which includes any queue it built)."""
    for column in ("rtt_p50_ms", "rtt_avg_ms", "tcp_rtt_ms"):
        value = _num(row.get(column))
        if value and value > 0:
            return value
    return None


def mathis_bps(rtt_ms: float, loss_rate: float, streams: int, mss_bytes: float) -> float:
    """Mathis et al.'s ceiling of `streams` streams sharing a loss rate."""
    return streams * mss_bytes * 8.0 / (rtt_ms / 1000.0) * MATHIS_C / math.sqrt(loss_rate)


def _version(text: str) -> tuple[int, ...]:
    digits = "".join(c if c.isdigit() or c == "." else " " for c in text).split()
    try:
        return tuple(int(p) for p in digits[0].split(".") if p) if digits else ()
    except ValueError:
        return ()


def cpu_limit_pct(iperf3_version: str, streams: int, vcpus: int | None) -> float:
    """The most CPU (percent of one core) the sending iperf3 can use."""
    if _version(iperf3_version) >= MULTITHREADED_IPERF3:
        return 100.0 * min(streams, vcpus or streams)
    return 100.0


def classify(row: Mapping[str, Any], test: Mapping[str, Any], facts: PathFacts) -> Limiter | None:
    """The limiter of one measured throughput row; None for a row with no throughput.

    `row`: the measurements.csv fields (throughput, retransmits, RTTs, streams, host
    evidence); `test`: the extra iperf3 figures parse_iperf3 reads (sent_bytes,
    sender_cpu_pct, mss_bytes, iperf3_version); `facts`: the hosts' documented figures.
    """
    received = _num(row.get("throughput_bps"))
    if received is None or received <= 0:
        return None
    sent = _num(row.get("throughput_sender_bps"))
    streams = int(_num(row.get("streams")) or 1)
    rtt = idle_rtt_ms(row)
    figures: dict[str, float | str | None] = {"throughput_bps": received, "rtt_ms": rtt}

    # 1. the two ends should tell the same story: when they do not, the row is still
    # classified on the receiver's figure, but never read as the path's capacity
    if sent is None or sent <= 0:
        return Limiter(UNKNOWN, _detail(**figures, why="no sender figure"))
    gap = (received - sent) / sent
    agree = abs(gap) <= AGREEMENT
    duration = _num(row.get("duration_s"))
    if not agree and gap < 0 and rtt and duration and duration >= IN_FLIGHT_MIN_S:
        ahead_bytes = (sent - received) / 8.0 * duration
        in_flight_bytes = IN_FLIGHT_BDPS * received / 8.0 * rtt / 1000.0
        # a reverse test's server counted for longer than the client: what it sent then
        extra_s = _num(test.get("sender_extra_s")) or 0.0
        in_flight_bytes += received / 8.0 * extra_s
        if ahead_bytes <= in_flight_bytes:
            agree = True
            figures.update(sender_ahead_bytes=ahead_bytes, in_flight_bytes=in_flight_bytes)
    # a receiver ahead: the sender's count left out what it wrote during the omit and the
    # receiver read after it; the aligned counts say whether that explains the lead
    counted = _num(row.get("bytes")) is not None
    if not agree and gap > 0 and counted and not receiver_exceeds(row, AGREEMENT):
        agree = True
        figures.update(receiver_ahead=gap, omit_backlog_bytes=_num(test.get("omit_backlog_bytes")))
    if not agree:
        figures.update(throughput_sender_bps=sent, receiver_minus_sender=gap)

    # 2. what the hosts counted directly: the allowance counters
    counters = {
        c: _num(row.get(c))
        for c in (
            "src_bw_out_allowance_exceeded_packets",
            "dst_bw_in_allowance_exceeded_packets",
            "src_pps_allowance_exceeded_packets",
            "dst_pps_allowance_exceeded_packets",
        )
    }
    moved = {c: v for c, v in counters.items() if v}
    if moved:
        return Limiter(ALLOWANCE, _detail(**figures, **moved, baseline_bps=facts.baseline_bps))

    # 3. the documented rates: the line rate, then a burstable VM's baseline
    line = facts.line_rate_bps
    if line and _near(received, line, RATE_TOLERANCE):
        if not agree:
            return Limiter(
                UNKNOWN,
                _detail(
                    **figures,
                    line_rate_bps=line,
                    ratio=received / line,
                    why="at the line rate, but sender and receiver disagree",
                ),
            )
        return Limiter(CAPACITY, _detail(**figures, line_rate_bps=line, ratio=received / line))
    base = facts.baseline_bps
    below_line = base and (not line or base < line * (1 - RATE_TOLERANCE))
    if base and below_line and _near(received, base, RATE_TOLERANCE):
        return Limiter(ALLOWANCE, _detail(**figures, baseline_bps=base, ratio=received / base))

    # 4. the models: loss (Mathis) and the window per RTT; both said when neither fits
    tried: dict[str, float | str | None] = {}
    if rtt:
        # the window first: its bound is tighter; a stream at it that lost a few segments
        # is held by its window, and the loss band of a few losses is wide
        window_bound = (
            streams * facts.window_bytes * 8.0 / (rtt / 1000.0) if facts.window_bytes else None
        )
        window_fits = bool(window_bound and _near(received, window_bound, RATE_TOLERANCE))
        retransmits = _num(row.get("retransmits"))
        mss = _num(test.get("mss_bytes")) or MSS_BYTES
        sent_bytes = _num(test.get("sent_bytes")) or _num(row.get("bytes"))
        if retransmits and sent_bytes:
            p = retransmits / (sent_bytes / mss)
            ceiling = mathis_bps(rtt, p, streams, mss)
            tried.update(retransmits=retransmits, mathis_bps=ceiling)
            low, high = loss_band(retransmits)
            if not window_fits and ceiling > 0 and low <= received / ceiling <= high:
                return Limiter(
                    LOSS,
                    _detail(
                        **figures,
                        retransmits=retransmits,
                        loss_rate=p,
                        mathis_bps=ceiling,
                        ratio=received / ceiling,
                    ),
                )
        if window_bound:
            tried.update(window_bps=window_bound)
            if window_fits:
                return Limiter(
                    WINDOW,
                    _detail(
                        **figures,
                        window_bytes=facts.window_bytes,
                        window_bps=window_bound,
                        ratio=received / window_bound,
                    ),
                )
    # 5. a busy CPU: seen directly, but a test at a bound may load its CPU as well (a
    # shared machine's steal, a sender at the line rate), so it names only a shortfall
    for side in ("src", "dst"):
        steal = _num(row.get(f"{side}_cpu_steal_pct"))
        if steal is not None and steal >= STEAL_BUSY_PCT:
            return Limiter(CPU, _detail(**figures, **{f"{side}_cpu_steal_pct": steal}, **tried))
    sender_cpu = _num(test.get("sender_cpu_pct"))
    if sender_cpu is not None:
        limit = cpu_limit_pct(str(test.get("iperf3_version", "")), streams, facts.vcpus)
        if sender_cpu >= CPU_BUSY_PCT / 100.0 * limit:
            return Limiter(
                CPU, _detail(**figures, sender_cpu_pct=sender_cpu, cpu_limit_pct=limit, **tried)
            )
    return Limiter(
        UNKNOWN,
        _detail(
            **figures,
            line_rate_bps=line,
            baseline_bps=base,
            window_bytes=facts.window_bytes,
            **tried,
            why="no bound within tolerance",
        ),
    )


def usable_as_capacity(row: Mapping[str, Any]) -> bool:
    """Whether a row may be read as the path's capacity: its limiter says so, which it
    only does when sender and receiver agreed."""
    return row.get("limiter") == CAPACITY
