"""Log-binned histograms of RTT samples, and percentiles read from them.

The store keeps, per source, directed pair, UTC day (and week and month) and flags
value, the histogram of its ok tests' RTT samples (table `rtt_bins`, kept by every
ingest): bin b holds the samples x > 0 with RATIO^b <= x < RATIO^(b+1) (x <= 0 in one
bin below every other), each bin with its count, smallest and largest sample and their
sum. A window of a year reads its whole months' rows (a fortieth of its samples' count)
and no sample list.

Percentiles as DuckDB's quantile_cont takes them from the samples (the order statistics
at floor and ceil of (N - 1) q, interpolated), with each order statistic estimated
inside the bin that holds it: its smallest sample plus its rank in the bin times the
bin's spread (hi - lo) / (n - 1). The true order statistic lies in [lo, hi] as well, so
the error is below hi - lo < (RATIO - 1) x: under ERROR_BOUND (0.05 %) of the value,
0.1 ms at 200 ms. Exact when every order statistic used is in a bin of one distinct
value or of at most two samples; min, max, count and mean (sum / count) are exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

RATIO = 1.0005
ERROR_BOUND = RATIO - 1.0
BELOW = -1_000_000_000  # the bin of samples <= 0


def bin_sql(x: str) -> str:
    """SQL of the bin of the sample expression `x`."""
    return (
        f"CASE WHEN {x} > 0 THEN CAST(floor(ln({x}) / ln({RATIO!r})) AS INTEGER) ELSE {BELOW} END"
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
    largest sample (numpy arrays). A group's rows must have at least one sample."""
    import numpy as np

    n = np.asarray(n, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    starts = np.asarray(groups, dtype=np.int64)
    cum = np.cumsum(n)
    before = np.concatenate(([0], cum))[starts]  # samples of the groups before
    ends = np.concatenate((starts[1:], [len(n)]))
    total = cum[ends - 1] - before
    spread = np.where(n > 1, (hi - lo) / np.maximum(n - 1, 1), 0.0)

    def order_stat(k: Any) -> Any:
        target = before + k
        row = np.searchsorted(cum, target, side="right")
        j = target - (cum[row] - n[row])  # rank within its bin
        return np.where(n[row] > 2, lo[row] + spread[row] * j, np.where(j > 0, hi[row], lo[row]))

    out = np.empty((len(starts), len(qs)), dtype=np.float64)
    for c, q in enumerate(qs):
        h = (total - 1) * q
        k_lo = np.floor(h).astype(np.int64)
        k_hi = np.ceil(h).astype(np.int64)
        v_lo, v_hi = order_stat(k_lo), order_stat(k_hi)
        out[:, c] = np.where(k_lo == k_hi, v_lo, v_lo + (v_hi - v_lo) * (h - k_lo))
    return out
