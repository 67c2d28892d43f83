"""How long a throughput test must skip and measure: the slow-start ramp at a pair's idle
RTT to the window it is expected to reach, then a measured interval after it.

Slow start doubles the congestion window every round trip from the initial window
(RFC 6928: 10 segments), so reaching a window of W bytes takes log2(W / (10 x MSS))
round trips. The window a stream reaches is the smaller of the hosts' window and its
share of the line rate's bandwidth-delay product. At 250 ms and a 2.53 MB window that is
7.45 round trips, 1.86 s: a fixed 1 s `--omit` leaves part of the ramp in the measured
interval, which then reads low, and the receiver's count (which iperf3 does not split at
the omit boundary as the sender's) runs ahead of the sender's. iperf3 takes whole seconds
for -O and -t, so the omit is the ramp rounded up. The measured interval after it is the
asked --duration, MIN_INTERVAL_S by default; a shorter one (quick checks, the tests) is
kept as asked, and the plan's timings show it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MSS_BYTES = 1448  # a 1500-byte MTU less IPv4, TCP and the timestamp option
INITCWND_SEGMENTS = 10  # Linux's initial window (RFC 6928)
# The measured interval after the ramp a sweep runs by default (TestParams.duration_s).
MIN_INTERVAL_S = 5


def slow_start_rtts(window_bytes: float, mss_bytes: int = MSS_BYTES) -> float:
    """Round trips slow start takes to grow from the initial window to `window_bytes`."""
    start = INITCWND_SEGMENTS * mss_bytes
    return max(0.0, math.log2(window_bytes / start)) if window_bytes > 0 else 0.0


def ramp_window_bytes(
    rtt_ms: float, window_bytes: float, rate_bps: float | None, streams: int = 1
) -> float:
    """The window one of `streams` streams ramps to: the hosts' window, or its share of the
    bandwidth-delay product at the line rate if that is smaller."""
    if rate_bps is None or rate_bps <= 0:
        return window_bytes
    share = rate_bps * rtt_ms / 1000.0 / 8.0 / max(1, streams)
    return min(window_bytes, share)


@dataclass(frozen=True)
class Timing:
    """What one test skips and measures, and why (recorded per test)."""

    rtt_ms: float  # the pair's idle RTT the ramp is computed at
    window_bytes: float  # the window one stream is expected to reach
    ramp_s: float  # slow start to that window
    omit_s: int  # iperf3 -O: the ramp rounded up, never below the asked omit
    duration_s: int  # iperf3 -t: the measured interval after the omit

    def to_dict(self) -> dict[str, float | int]:
        return {
            "rtt_ms": round(self.rtt_ms, 3),
            "ramp_window_bytes": round(self.window_bytes),
            "ramp_s": round(self.ramp_s, 3),
            "omit_s": self.omit_s,
            "duration_s": self.duration_s,
        }


def timing_for(
    rtt_ms: float,
    window_bytes: float,
    rate_bps: float | None,
    *,
    streams: int = 1,
    omit_s: int = 0,
    duration_s: int = MIN_INTERVAL_S,
) -> Timing:
    """The omit and the measured interval of a test over a path of `rtt_ms`: the omit at
    least the slow-start ramp (and at least the asked `omit_s`), then `duration_s`."""
    window = ramp_window_bytes(rtt_ms, window_bytes, rate_bps, streams)
    ramp = slow_start_rtts(window) * rtt_ms / 1000.0
    return Timing(
        rtt_ms=rtt_ms,
        window_bytes=window,
        ramp_s=ramp,
        omit_s=max(omit_s, math.ceil(ramp)),
        duration_s=duration_s,
    )
