"""Statistics of plain samples: percentiles and the median, Pearson's r, and Wilson's
interval of a proportion (a loss).

Shared by parse (ping's samples), analyze (the report), the history store's views and
the mesh: parsing a tool's output must not depend on the analysis of many outputs, so
all import this.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

NAN = float("nan")


def median(values: Sequence[float]) -> float:
    """The median; NaN for no values. The middle value, or the mean of the two middle
    ones (what percentile(values, 50) gives, without its rounding)."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return NAN
    mid = n // 2
    return ordered[mid] if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation between closest ranks.

    This is Hyndman and Fan's method 7 (numpy's default, PERCENTILE.INC in
    spreadsheets): the value at rank h = (n - 1) * q / 100 counted from 0,
    interpolated between the neighbours floor(h) and floor(h) + 1.
    """
    return percentiles(values, (q,))[0]


# The sample rule every quoted percentile follows (the matrix's, history.metrics): a
# tail percentile q needs BEYOND samples beyond it, so BEYOND / min(q, 1 - q) in all;
# below that it is not shown (a p99 of 20 samples is only their largest).
BEYOND = 10


def min_samples_for(q: float) -> int:
    """Samples percentile q (0-100) needs to be quoted: BEYOND / min(q, 1 - q) for a tail
    percentile, 1 for the minimum, the median and the maximum."""
    f = q / 100.0
    if f in (0.0, 0.5, 1.0):
        return 1
    return math.ceil(BEYOND / min(f, 1.0 - f) - 1e-9)


def quotable_percentiles(values: Sequence[float], qs: Sequence[float]) -> list[float]:
    """percentiles() of `values`, NaN for each q with fewer samples than
    min_samples_for(q) (written blank; the count is beside it)."""
    return [
        v if len(values) >= min_samples_for(q) else NAN
        for q, v in zip(qs, percentiles(values, qs), strict=True)
    ]


def percentiles(values: Sequence[float], qs: Sequence[float]) -> list[float]:
    """Several percentiles of one sample, sorting it once."""
    for q in qs:
        if not 0.0 <= q <= 100.0:
            raise ValueError(f"percentile {q} is outside [0, 100]")
    if not values:
        return [NAN for _ in qs]
    ordered = sorted(values)
    out = []
    for q in qs:
        h = (len(ordered) - 1) * q / 100.0
        lo = math.floor(h)
        hi = min(lo + 1, len(ordered) - 1)
        out.append(ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo]))
    return out


def pearson_r(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson's correlation coefficient of two equally long series; NaN when it is
    undefined (fewer than 2 points, or either series flat)."""
    if len(xs) != len(ys):
        raise ValueError("pearson_r needs two series of the same length")
    if len(xs) < 2:
        return NAN
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    spread = math.sqrt(sxx * syy)  # 0 also when the product underflows (spreads of 1e-200)
    if spread == 0:
        return NAN
    return sxy / spread


# the normal quantile of 97.5 %: a two-sided 95 % interval
WILSON_Z = 1.959963984540054


def wilson(lost: float, sent: float, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson's score interval of the proportion lost / sent, as fractions (low, high):
    0 lost of 20 is 0-0.161, not a plain 0. The one interval every loss is quoted with
    (report, history store, site, mesh). (NaN, NaN) for no trials."""
    if not (math.isfinite(lost) and math.isfinite(sent)) or sent <= 0:
        return NAN, NAN
    p = lost / sent
    denominator = 1.0 + z * z / sent
    centre = (p + z * z / (2.0 * sent)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / sent + z * z / (4.0 * sent * sent)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
