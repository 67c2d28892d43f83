"""Log-binned histograms (the store's day summaries `rtt_bins` and `value_bins`), and every
percentile read from them (docs/history.md, 'Windows and percentiles').

Bin b holds the values x > 0 with RATIO^b <= x < RATIO^(b+1) (x <= 0 in one bin below
every other), with their count, smallest and largest value and sum; RATIO is 1.0005 for
RTT samples, VALUE_RATIO (1.0005^20, 1.0100) for the one-value metrics. A percentile is
DuckDB's quantile_cont of the values (Hyndman-Fan 7), each order statistic read inside the
bin that holds it, the bin's n values spread evenly from its smallest to its largest. The
true order statistic lies between the same two, so the error is below the bin's width,
(RATIO - 1) RATIO^b <= (RATIO - 1) x: under ERROR_BOUND (0.05 %) of the value for RTT,
VALUE_ERROR_BOUND (1.0 %) for the others. It is exact where the bin holds one distinct
value, or is the bin's smallest or largest: min and max are exact, and so is every
percentile of one or two values; count and mean (sum / count) are exact too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

RATIO = 1.0005  # RTT samples (rtt_bins)
ERROR_BOUND = RATIO - 1.0
# the one-value metrics (value_bins): a year's window of throughput or jitter merges a bin
# per test at 0.05 % (each value its own bin), 1.0005^20 merges a twentieth of them
VALUE_RATIO = RATIO**20
VALUE_ERROR_BOUND = VALUE_RATIO - 1.0
BELOW = -1_000_000_000  # the bin of samples <= 0


def bin_sql(x: str, one_value: bool = False) -> str:
    """SQL of the bin of the sample expression `x`: an RTT sample's, or a one-value
    metric's (`one_value`)."""
    ratio = VALUE_RATIO if one_value else RATIO
    return (
        f"CASE WHEN {x} > 0 THEN CAST(floor(ln({x}) / ln({ratio!r})) AS INTEGER) ELSE {BELOW} END"
    )


def quantiles(
    groups: Any,
    n: Any,
    lo: Any,
    hi: Any,
    qs: Sequence[float],
) -> Any:
    """The quantiles `qs` of each group of bins, an array (groups, len(qs)). The bins are
    rows in value order within each group, the groups one after another: `groups` the
    index of each group's first row; `n`, `lo`, `hi` each bin's count, smallest and
    largest value (numpy arrays). A group's rows must have at least one value."""
    import numpy as np

    n = np.asarray(n, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    starts = np.asarray(groups, dtype=np.int64)
    cum = np.cumsum(n)
    before = np.concatenate(([0], cum))[starts]  # values of the groups before
    ends = np.concatenate((starts[1:], [len(n)]))
    total = cum[ends - 1] - before
    # every order statistic at once (a column per quantile): each group's at floor and
    # ceil of (N - 1) q
    h = (total[:, None] - 1) * np.asarray(qs, dtype=np.float64)[None, :]
    k_lo, k_hi = np.floor(h).astype(np.int64), np.ceil(h).astype(np.int64)
    target = before[:, None] + np.concatenate((k_lo, k_hi), axis=1)
    row = np.searchsorted(cum, target, side="right")
    m = n[row]
    j = target - (cum[row] - m)  # rank within its bin
    a, c = lo[row], hi[row]
    t = j / np.maximum(m - 1, 1)
    # from the nearer end: each end reached exactly, and never past it
    x = np.where(t <= 0.5, a + (c - a) * t, c - (c - a) * (1 - t))
    v_lo, v_hi = x[:, : len(qs)], x[:, len(qs) :]
    d = h - k_lo  # as DuckDB interpolates: exact where the order statistics are
    return np.where(k_lo == k_hi, v_lo, v_lo * (1 - d) + v_hi * d)
