"""How far `advise`'s figures can be off: a low-high range of each option's time, and
the loss rate below which its estimate holds.

One number hides how much the inputs vary: the public data's default windows alone
span 0.85-2.74 MB between their quartiles. So each option's time is given again at the
two ends of what the inputs allow, each end named by its source:

- the RTT: the pair's own tests' quartiles (RttFigure's window), else the public
  measurements of the pair in its tier (the route table's samples, their range), else
  the distance model's median error either way (MODEL_RTT_ERROR);
- the window of one default stream: from the quartiles of the pooled tests'
  throughput, else the quartiles of the windows the public single-stream tests imply
  (throughput x RTT, DoiT's data).

The slow end pairs the long RTT with the small window, the fast end the short RTT with
the large one. No loss is known for a path without retransmission counts: the estimate
then holds only while loss stays below what would make Mathis's ceiling the limit
(`loss_bound`), and the advice says which rate that is.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from orchestrator.advise.tcp_model import MSS_BYTES, Advice, PathFacts, advise, default_window_from
from orchestrator.core import percentiles
from orchestrator.netmodel import load_public_samples
from orchestrator.results import MATHIS_C

# the distance model's median relative error on pairs it was not fitted on (docs/benchmarks)
MODEL_RTT_ERROR = 0.165


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    source: str  # where the two ends come from, in words


@dataclass(frozen=True)
class Spread:
    rtt_ms: Range
    window_bytes: Range

    def ends(self, facts: PathFacts) -> tuple[PathFacts, PathFacts]:
        """(slow, fast): the facts at the long RTT and small window, and the reverse."""
        slow = replace(facts, rtt_ms=self.rtt_ms.high, default_window_bytes=self.window_bytes.low)
        fast = replace(facts, rtt_ms=self.rtt_ms.low, default_window_bytes=self.window_bytes.high)
        return slow, fast


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    p25, p75 = percentiles(list(values), (25, 75))
    return p25, p75


@functools.cache
def public_windows() -> tuple[float, float, int]:
    """(p25, p75, n) of the windows DoiT's single-stream tests imply: throughput x RTT
    (default_window_from), each test its own."""
    windows = [
        default_window_from(s.throughput_bps, s.rtt_ms)
        for s in load_public_samples().samples
        if s.throughput_bps and s.throughput_bps > 0 and s.rtt_ms > 0
    ]
    low, high = quartiles(windows)
    return low, high, len(windows)


def rtt_range(rtts: Sequence[float], rtt_ms: float, what: str) -> Range:
    """The quartiles of `rtts` around `rtt_ms` (never narrower than the figure itself);
    the distance model's error either way without two values."""
    if len(rtts) >= 2:
        low, high = quartiles(rtts)
        return Range(min(low, rtt_ms), max(high, rtt_ms), f"quartiles of {len(rtts)} {what}")
    return Range(
        rtt_ms * (1 - MODEL_RTT_ERROR),
        rtt_ms * (1 + MODEL_RTT_ERROR),
        f"the distance model's median error, +-{MODEL_RTT_ERROR:.1%} (docs/benchmarks.md)",
    )


def window_range(
    pooled_bps: Sequence[float], rtt_ms: float, streams: int, window_bytes: float
) -> Range:
    """The default window's range: from the pooled tests' throughput quartiles, else
    from the public single-stream tests' windows."""
    if len(pooled_bps) >= 2:
        low, high = quartiles(pooled_bps)
        return Range(
            min(default_window_from(low, rtt_ms, streams), window_bytes),
            max(default_window_from(high, rtt_ms, streams), window_bytes),
            f"quartiles of the {len(pooled_bps)} pooled tests' throughput",
        )
    low, high, n = public_windows()
    return Range(
        min(low, window_bytes),
        max(high, window_bytes),
        f"quartiles of the windows {n} public single-stream tests imply (DoiT, 2022)",
    )


def loss_bound(rtt_ms: float, stream_bps: float, mss_bytes: int = MSS_BYTES) -> float:
    """The loss rate p at which Mathis's ceiling of one stream, MSS / RTT x C / sqrt(p),
    falls to `stream_bps`: below it loss does not limit the stream."""
    if not (stream_bps > 0 and rtt_ms > 0) or math.isinf(stream_bps):
        return math.nan
    return (mss_bytes * 8.0 * MATHIS_C / (rtt_ms / 1000.0 * stream_bps)) ** 2


@dataclass(frozen=True)
class AdviceRange:
    slow: Advice
    fast: Advice
    spread: Spread
    loss_bound: float  # the default option's: below it the estimate holds

    def times(self, name: str) -> tuple[float, float]:
        """(low, high) time of an option: the fast end's, the slow end's."""
        return self.fast.option(name).time_s, self.slow.option(name).time_s


def advice_range(
    facts: PathFacts,
    spread: Spread,
    size_bytes: int,
    streams: int,
    files: int | None,
    base: Advice,
) -> AdviceRange:
    slow, fast = spread.ends(facts)
    default = base.option("default")
    per_stream = default.throughput_bps / max(default.streams, 1)
    return AdviceRange(
        slow=advise(slow, size_bytes, streams, files),
        fast=advise(fast, size_bytes, streams, files),
        spread=spread,
        loss_bound=loss_bound(facts.rtt_ms, per_stream),
    )


def median_or(values: Sequence[float], default: float) -> float:
    return statistics.median(values) if values else default
