"""How long a transfer between two regions takes, and what wins the time back.

A physical model of TCP, fed with one pair's idle RTT, its measured default
throughput and retransmissions (orchestrator.advise.sources finds them):

    throughput = min(line rate, streams x window / RTT, streams x loss ceiling)
    loss ceiling (Mathis et al. 1997) = MSS / RTT x 1.22 / sqrt(p), never below
    what the measured stream carried at that loss

Three ways to move the data: default TCP (one stream, the window measured),
tuned buffers (tcp_rmem/tcp_wmem max = 2 x the bandwidth-delay product at the
VM's line rate, so the window covers the path) and P parallel default streams.
With many files, each new connection pays a TCP handshake, a TLS 1.3 handshake
and a slow-start ramp from the initial window; one reused connection pays them
once. Everything here is pure: sizes in bytes, rates in bit/s, times in s.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from orchestrator.core import UserError
from orchestrator.netmodel import DEFAULT_MODEL
from orchestrator.plan import (
    INITCWND_SEGMENTS,
    MSS_BYTES,
    TCP_BUFFER_MAX_BYTES,
    TUNED_BUFFER_BDP_FACTOR,
    bdp_bytes,
)
from orchestrator.results import LOSS_TOLERANCE, MATHIS_C, mathis_bps

# The tuned buffer (plan.tuning): 2 x BDP, as TCP turns about half a buffer into window;
# Linux keeps tcp_rmem/tcp_wmem in an int, so none above TCP_BUFFER_MAX_BYTES.
WINDOW_EFFICIENCY = DEFAULT_MODEL.window_efficiency
TCP_HANDSHAKE_RTTS = 1.0  # SYN, SYN-ACK; the request rides on the ACK
TLS13_HANDSHAKE_RTTS = 1.0  # a full TLS 1.3 handshake (no 0-RTT resumption)
DEFAULT_STREAMS = 4
ADVICE_FORMAT = "interregion.advice"
ADVICE_VERSION = 2  # 2: network_tier, range (each option low-high, the loss bound)
# The kernel's own defaults (net.ipv4.tcp_rmem / tcp_wmem max since Linux 4.20): advice
# never sets a buffer below them.
KERNEL_RMEM_MAX_BYTES = 6_291_456
KERNEL_WMEM_MAX_BYTES = 4_194_304
# Beyond an exabyte the figures are no longer a transfer plan.
MAX_SIZE_BYTES = 10**18

SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
    "PiB": 2**50,
}
# Units are read whatever their case (10gb = 10GB, 2mib = 2MiB), but for the way bits are
# written, a capital prefix and a small b (100Gb, 1Mb): that is refused, not guessed.
_UNITS = {unit.lower(): size for unit, size in SIZE_UNITS.items()}
_SIZE = re.compile(
    r"(\d+(?:\.\d+)?) ?(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")",
    re.IGNORECASE,
)
_BITS = re.compile(r"\d+(?:\.\d+)? ?[KMGTP]i?b")
_SIZE_HINT = "e.g. 100GB, 1.5TiB or 500MB (GB = 10^9 bytes, GiB = 2^30; any case)"


def parse_size_bytes(text: str) -> int:
    """'100GB', '1.5TiB', '500MB', '10gb' -> bytes. Decimal units are powers of 1000,
    binary (KiB, MiB, ...) of 1024, in any case; anything else (no unit, bits written
    as bits are, Gb, a comma) is a UserError."""
    value = text.strip()
    if _BITS.fullmatch(value):
        raise UserError(f"--size '{text}': Gb, Mb ... are bits; give bytes, {_SIZE_HINT}")
    m = _SIZE.fullmatch(value)
    if not m:
        raise UserError(f"--size '{text}': give a number and a unit, {_SIZE_HINT}")
    size = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not math.isfinite(size) or size > MAX_SIZE_BYTES:
        raise UserError(f"--size '{text}': above 1 EB; give a transfer size, {_SIZE_HINT}")
    if round(size) < 1:
        raise UserError(f"--size '{text}': nothing to transfer; give at least 1 byte")
    return round(size)


def parse_count(flag: str, text: str, what: str) -> int:
    """A whole number of at least 1 (`what` names it in the error: 'stream')."""
    if not re.fullmatch(r"\d+", text.strip()):
        raise UserError(f"{flag} '{text}': give a whole number of {what}s, at least 1")
    count = int(text)
    if count < 1:
        raise UserError(f"{flag} {count}: at least 1 {what}")
    return count


# ---- the physics --------------------------------------------------------------------


def window_limited_bps(window_bytes: float, rtt_ms: float) -> float:
    """What one window per round trip carries."""
    return window_bytes * 8.0 / (rtt_ms / 1000.0)


def loss_limited_bps(rtt_ms: float, loss_rate: float | None, mss_bytes: int = MSS_BYTES) -> float:
    """Mathis's ceiling of one stream; infinite when no loss is known (None or 0)."""
    if not loss_rate:
        return math.inf
    return mathis_bps(rtt_ms, loss_rate, 1, mss_bytes)


def loss_rate(
    retransmits: int | None, received_bytes: int | None, mss_bytes: int = MSS_BYTES
) -> float | None:
    """Share of sent segments that were retransmissions: retransmits / (delivered
    segments + retransmits). None when either count is missing."""
    if retransmits is None or not received_bytes or received_bytes <= 0 or retransmits < 0:
        return None
    delivered = received_bytes / mss_bytes
    return retransmits / (delivered + retransmits)


def ramp_transfer_s(
    size_bytes: float,
    rate_bps: float,
    rtt_ms: float,
    mss_bytes: int = MSS_BYTES,
    initcwnd_segments: int = INITCWND_SEGMENTS,
) -> float:
    """Time to deliver `size_bytes` on a fresh connection whose steady rate is
    `rate_bps`: slow start sends the congestion window once per RTT, from the
    initial window, doubling, until the window reaches the steady one
    (rate x RTT); the rest goes at the steady rate. Handshakes not included."""
    rtt_s = rtt_ms / 1000.0
    steady_window = rate_bps * rtt_s / 8.0
    cwnd = float(initcwnd_segments * mss_bytes)
    sent, t = 0.0, 0.0
    while cwnd < steady_window and size_bytes - sent > cwnd:
        sent += cwnd
        t += rtt_s
        cwnd *= 2.0
    return t + (size_bytes - sent) * 8.0 / rate_bps


def slow_start_cost_s(size_bytes: float, rate_bps: float, rtt_ms: float) -> float:
    """What the ramp adds over sending `size_bytes` at the steady rate."""
    return ramp_transfer_s(size_bytes, rate_bps, rtt_ms) - size_bytes * 8.0 / rate_bps


def handshakes_s(rtt_ms: float) -> float:
    """TCP and TLS 1.3 handshakes before the first byte of data."""
    return (TCP_HANDSHAKE_RTTS + TLS13_HANDSHAKE_RTTS) * rtt_ms / 1000.0


def connection_s(size_bytes: float, rate_bps: float, rtt_ms: float) -> float:
    """One new connection moving `size_bytes`: handshakes, ramp, steady rate."""
    return handshakes_s(rtt_ms) + ramp_transfer_s(size_bytes, rate_bps, rtt_ms)


# ---- one pair's path ----------------------------------------------------------------


@dataclass(frozen=True)
class PathFacts:
    """What is known of one directed path, with where each figure came from."""

    rtt_ms: float  # idle RTT (pings), what the BDP is computed from
    line_rate_bps: float  # the VM's line rate: what no window gets past
    default_window_bytes: float  # what one default TCP stream keeps in flight
    loss_rate: float | None  # retransmitted share of segments; None: unknown
    loaded_rtt_ms: float | None = None  # iperf3's smoothed RTT under load, if measured
    measured_bps: float | None = None  # the measured default throughput, if any
    measured_streams: int = 1
    # where the RTT comes from: the pair's own tests, the route table, the distance model
    rtt_source: str = "distance model"
    rtt_tests: int = 0  # how many of the pair's own tests the RTT is the median of
    # the sender VM's sustained rate (regions.yaml baseline) when below its line rate, and
    # how long its burst lasts: a longer transfer runs at the baseline after it
    baseline_bps: float | None = None
    burst_s: float = 300.0
    machine_type: str = ""

    def __post_init__(self) -> None:
        if not self.rtt_ms > 0:
            raise UserError(f"RTT {self.rtt_ms} ms: the pair's RTT must be above 0")

    @property
    def bdp_bytes(self) -> float:
        return bdp_bytes(self.line_rate_bps, self.rtt_ms)

    @property
    def tuned_buffer_bytes(self) -> int:
        """tcp_rmem/tcp_wmem max for the tuned option: 2 x BDP at line rate, at most
        what the kernel can set."""
        return min(math.ceil(TUNED_BUFFER_BDP_FACTOR * self.bdp_bytes), TCP_BUFFER_MAX_BYTES)

    @property
    def tuned_rmem_bytes(self) -> int:
        """tcp_rmem max to set: 2 x BDP, never below the kernel's default."""
        return max(self.tuned_buffer_bytes, KERNEL_RMEM_MAX_BYTES)

    @property
    def tuned_wmem_bytes(self) -> int:
        """tcp_wmem max to set: 2 x BDP, never below the kernel's default."""
        return max(self.tuned_buffer_bytes, KERNEL_WMEM_MAX_BYTES)

    @property
    def default_buffers_suffice(self) -> bool:
        """Whether the kernel's default maxima already hold 2 x BDP: nothing to set."""
        return self.tuned_buffer_bytes <= min(KERNEL_RMEM_MAX_BYTES, KERNEL_WMEM_MAX_BYTES)

    @property
    def tuned_window_bytes(self) -> float:
        return self.tuned_rmem_bytes * WINDOW_EFFICIENCY

    @property
    def mathis_bps(self) -> float:
        """Mathis's ceiling of one stream at the measured loss (inf: none known)."""
        return loss_limited_bps(self.rtt_ms, self.loss_rate)

    @property
    def measured_stream_bps(self) -> float | None:
        return self.measured_bps / max(self.measured_streams, 1) if self.measured_bps else None

    @property
    def loss_model_fails(self) -> bool:
        """The measured stream beat Mathis's ceiling of its own retransmissions by more
        than LOSS_TOLERANCE: its losses were bunched (at slow-start exit, typically),
        not the steady loss the formula assumes, so they predict nothing."""
        measured = self.measured_stream_bps
        return measured is not None and self.mathis_bps < (1 - LOSS_TOLERANCE) * measured

    @property
    def loss_ceiling_bps(self) -> float:
        """One stream's loss ceiling: Mathis's, never below what a stream measured at
        that loss carried; none when the formula fails on the measurement."""
        if self.loss_model_fails:
            return math.inf
        return max(self.mathis_bps, self.measured_stream_bps or 0.0)


def default_window_from(measured_bps: float, rtt_ms: float, streams: int = 1) -> float:
    """The effective window of one default stream that carried `measured_bps`
    (over `streams` streams) at idle RTT `rtt_ms`: throughput x RTT per stream.
    At the line rate this is a lower bound, which changes no prediction."""
    return measured_bps / max(streams, 1) * rtt_ms / 1000.0 / 8.0


@dataclass(frozen=True)
class Option:
    """One way to move the data, and what it gives."""

    name: str  # "default", "tuned", "streams"
    streams: int
    window_bytes: float  # per stream
    throughput_bps: float
    limit: str  # "line rate", "window" or "loss"
    time_s: float  # the whole size over `streams` connections opened once
    files_time_s: float | None = None  # with a new connection per file
    # a burstable VM: the burst phase (at throughput_bps) then the sustained one (at the
    # baseline) of a transfer longer than the burst; None when no baseline binds
    burst_s: float | None = None
    sustained_bps: float | None = None


TIE_TOLERANCE = 1e-6


def _throughput(facts: PathFacts, window_bytes: float, streams: int) -> tuple[float, str]:
    # on a tie the first named wins: a measured stream whose loss explains it is "loss"
    ceilings = {
        "line rate": facts.line_rate_bps,
        "loss": streams * facts.loss_ceiling_bps,
        "window": streams * window_limited_bps(window_bytes, facts.rtt_ms),
    }
    low = min(ceilings.values())
    # within float noise of the lowest counts as a tie (tuned buffers give a window of
    # exactly the BDP, whose bound is the line rate)
    limit = next(k for k, v in ceilings.items() if v <= low * (1 + TIE_TOLERANCE))
    return low, limit


def _option(
    facts: PathFacts,
    name: str,
    window_bytes: float,
    streams: int,
    size_bytes: int,
    files: int | None,
) -> Option:
    rate, limit = _throughput(facts, window_bytes, streams)
    per_stream_bps = rate / streams
    # the streams share the data evenly and run side by side
    time_s = connection_s(size_bytes / streams, per_stream_bps, facts.rtt_ms)
    files_time_s = None
    if files is not None:
        file_bytes = size_bytes / files
        per_connection = math.ceil(files / streams)  # the busiest stream's files
        files_time_s = per_connection * connection_s(file_bytes, per_stream_bps, facts.rtt_ms)
    base = facts.baseline_bps
    if base and rate > base and time_s > facts.burst_s:
        # the burst carries what it can, the baseline carries the rest
        rest = size_bytes - rate / 8.0 * facts.burst_s
        sustained_s = rest * 8.0 / base
        if files_time_s is not None:
            files_time_s += sustained_s - (time_s - facts.burst_s)
        time_s = facts.burst_s + sustained_s
        return Option(name, streams, window_bytes, rate, limit, time_s, files_time_s,
                      facts.burst_s, base)  # fmt: skip
    return Option(name, streams, window_bytes, rate, limit, time_s, files_time_s)


@dataclass(frozen=True)
class FilesCost:
    """One file's cost on a new connection (default TCP), and both totals."""

    count: int
    file_bytes: float
    tcp_handshake_s: float
    tls_handshake_s: float
    slow_start_s: float
    reused_connection_s: float
    new_connection_per_file_s: float

    @property
    def per_file_overhead_s(self) -> float:
        return self.tcp_handshake_s + self.tls_handshake_s + self.slow_start_s


@dataclass(frozen=True)
class Advice:
    size_bytes: int
    facts: PathFacts
    options: tuple[Option, ...]
    files: FilesCost | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)


def advise(
    facts: PathFacts, size_bytes: int, streams: int = DEFAULT_STREAMS, files: int | None = None
) -> Advice:
    """Default TCP, tuned buffers and `streams` default streams for `size_bytes`;
    with `files`, each option's time when every file opens its own connection."""
    if size_bytes < 1:
        raise UserError("nothing to transfer: give a size of at least 1 byte")
    if streams < 1:
        raise UserError(f"--streams {streams}: at least 1 stream")
    if files is not None and not 1 <= files <= size_bytes:
        raise UserError(
            f"--files {files}: give between 1 and {size_bytes} files (at least 1 byte each)"
        )
    options = (
        _option(facts, "default", facts.default_window_bytes, 1, size_bytes, files),
        _option(facts, "tuned", facts.tuned_window_bytes, 1, size_bytes, files),
        _option(facts, "streams", facts.default_window_bytes, streams, size_bytes, files),
    )
    cost = None
    if files is not None:
        default = options[0]
        file_bytes = size_bytes / files
        cost = FilesCost(
            count=files,
            file_bytes=file_bytes,
            tcp_handshake_s=TCP_HANDSHAKE_RTTS * facts.rtt_ms / 1000.0,
            tls_handshake_s=TLS13_HANDSHAKE_RTTS * facts.rtt_ms / 1000.0,
            slow_start_s=slow_start_cost_s(file_bytes, default.throughput_bps, facts.rtt_ms),
            reused_connection_s=default.time_s,
            new_connection_per_file_s=default.files_time_s or 0.0,
        )
    return Advice(size_bytes, facts, options, cost, _notes(facts, options))


def _notes(facts: PathFacts, options: tuple[Option, ...]) -> tuple[str, ...]:
    default, tuned, parallel = options
    limit: tuple[str, ...] = ()
    if facts.tuned_buffer_bytes == TCP_BUFFER_MAX_BYTES:
        limit = (
            f"2 x BDP ({_mb(TUNED_BUFFER_BDP_FACTOR * facts.bdp_bytes)}) is above the "
            f"largest buffer Linux can set ({TCP_BUFFER_MAX_BYTES} bytes, an int): tuned "
            "uses that largest one",
        )
    if facts.loss_model_fails:
        limit += (
            f"the measured retransmissions (p = {facts.loss_rate:.4%}) give a Mathis ceiling "
            f"of {facts.mathis_bps / 1e6:.1f} Mbit/s, far below the "
            f"{(facts.measured_stream_bps or 0) / 1e6:.1f} Mbit/s the stream carried: the "
            "losses were likely a burst (e.g. at slow-start exit), not steady, so no loss "
            "ceiling is applied and the tuned figures assume the path stays that clean",
        )
    if default.sustained_bps is not None or tuned.sustained_bps is not None:
        limit += (
            f"the sender's {facts.machine_type or 'VM'} sustains "
            f"{(facts.baseline_bps or 0) / 1e6:.0f} Mbit/s (its baseline in regions.yaml): "
            f"after a {facts.burst_s / 60:.0f} min burst the rest of the transfer runs at "
            "that rate, whatever TCP allows",
        )
    return limit + _limit_notes(facts, default, tuned, parallel)


def _limit_notes(
    facts: PathFacts, default: Option, tuned: Option, parallel: Option
) -> tuple[str, ...]:
    if default.limit == "loss":
        return (
            f"loss limits this path (retransmitted share {facts.loss_rate:.3%}): larger "
            "buffers will not help; parallel streams each get their own loss ceiling",
        )
    if default.limit == "line rate":
        return ("default TCP already reaches the line rate: tuning gains nothing here",)
    window = (
        f"the window limits default TCP ({_mb(facts.default_window_bytes)} in flight, "
        f"{_mb(facts.bdp_bytes)} needed at line rate)"
    )
    if tuned.limit == "loss":
        return (
            f"{window}, but loss caps tuned buffers at {tuned.throughput_bps / 1e6:.0f} "
            f"Mbit/s: {parallel.streams} streams, each with its own loss ceiling, do better",
        )
    return (f"{window}: tuned buffers or {parallel.streams} streams win the time back",)


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def sysctl_lines(facts: PathFacts) -> list[str]:
    """The tuned option's settings, for both hosts. rmem_max/wmem_max matter only to a
    program that sets its own socket buffers (SO_RCVBUF/SO_SNDBUF)."""
    rmem, wmem = facts.tuned_rmem_bytes, facts.tuned_wmem_bytes
    return [
        f"net.ipv4.tcp_rmem = 4096 131072 {rmem}",
        f"net.ipv4.tcp_wmem = 4096 16384 {wmem}",
        f"net.core.rmem_max = {rmem}",
        f"net.core.wmem_max = {wmem}",
    ]


def buffer_note(facts: PathFacts) -> str:
    """Whether the kernel's default buffers already do: said beside the settings."""
    if facts.default_buffers_suffice:
        return (
            f"2 x BDP ({_mb(facts.tuned_buffer_bytes)}) fits the kernel's defaults (tcp_rmem "
            f"max {KERNEL_RMEM_MAX_BYTES}, tcp_wmem max {KERNEL_WMEM_MAX_BYTES}): the default "
            "buffers suffice, the lines below only restate them"
        )
    return (
        f"2 x BDP ({_mb(facts.tuned_buffer_bytes)}) is above the kernel's defaults: set the "
        "lines below on both hosts (never below tcp_rmem max "
        f"{KERNEL_RMEM_MAX_BYTES}, tcp_wmem max {KERNEL_WMEM_MAX_BYTES})"
    )


def assumptions(facts: PathFacts) -> list[str]:
    """What the figures take for granted, one line each."""
    return [
        f"throughput = min(line rate, streams x window / RTT, streams x loss ceiling), "
        f"at the idle RTT {facts.rtt_ms:.1f} ms",
        _rate_assumption(facts),
        f"tuned: tcp_rmem/tcp_wmem max = 2 x BDP = {_mb(facts.tuned_buffer_bytes)} on both "
        f"hosts; TCP turns about {WINDOW_EFFICIENCY:.0%} of a buffer into window",
        f"loss ceiling MSS / RTT x {MATHIS_C} / sqrt(p) with MSS {MSS_BYTES} bytes, never "
        "below what a measured stream carried: " + _loss_assumption(facts),
        "P streams share the data evenly and keep the default window each",
        f"each connection: TCP handshake {TCP_HANDSHAKE_RTTS:g} RTT, TLS 1.3 handshake "
        f"{TLS13_HANDSHAKE_RTTS:g} RTT, slow start from {INITCWND_SEGMENTS} segments "
        "doubling per RTT up to the steady window",
        "files: of equal size, one after another on each connection; a reused "
        "connection sends them back to back",
    ]


def _rate_assumption(facts: PathFacts) -> str:
    line = f"line rate {facts.line_rate_bps / 1e6:.0f} Mbit/s"
    if facts.baseline_bps and facts.baseline_bps < facts.line_rate_bps:
        return (
            f"{line} for the sender's first {facts.burst_s / 60:.0f} min, then its baseline "
            f"{facts.baseline_bps / 1e6:.0f} Mbit/s (regions.yaml): a burstable VM's credits "
            "run out"
        )
    return f"{line}, sustained for the whole transfer (no baseline below it in regions.yaml)"


def _loss_assumption(facts: PathFacts) -> str:
    if facts.loss_rate is None:
        return "loss unknown, so no loss ceiling"
    if facts.loss_rate == 0:
        return "no retransmissions measured, so no loss ceiling"
    where = f"p = {facts.loss_rate:.4%} from the measured retransmissions"
    if facts.loss_model_fails:
        return f"{where}, which the measurement contradicts, so no loss ceiling"
    return where


def format_duration(seconds: float) -> str:
    """A time a person reads: '0.35 s', '42.0 s', '12 min 5 s', '3 h 12 min', '2 d 4 h'."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s"


def format_rate(bps: float) -> str:
    return f"{bps / 1e9:.2f} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:.1f} Mbit/s"


def format_bytes(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n:.0f} B"
