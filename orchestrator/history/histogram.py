"""Log-binned histograms of RTT samples, and percentiles read from them.

The store keeps, per source, directed pair, UTC day (and week and month) and flags
value, the histogram of its ok tests' RTT samples (table `rtt_bins`, kept by every
ingest): bin b holds the samples x > 0 with RATIO^b <= x < RATIO^(b+1) (x <= 0 in one
bin below every other), each bin with its count, smallest and largest sample and their
sum. A window of a year reads its whole months' rows (a fortieth of its samples' count)
and no sample list.

Percentiles as DuckDB's quantile_cont takes them from the samples (the order statistics
at floor and ceil of (N - 1) q, interpolated), with each order statistic estimated
inside the bin that holds it from the bin's count and edges: its n samples spread
evenly over the bin, the j-th in the middle of the j-th of n equal parts. The group's
extremes alone come from the samples: its smallest sample is the low end of its first
bin, its largest the high end of its last (one sample at each end, the others spread
between; a group in one bin spreads from the one to the other), and no estimate goes
past them. The bin below every other (samples <= 0) has no edges: its samples spread
from its smallest to its largest. The true order statistic lies in the same bin, so
the error is below the bin's width, (RATIO - 1) RATIO^b <= (RATIO - 1) x: under
ERROR_BOUND (0.05 %) of the value, 0.1 ms at 200 ms, and every estimate is between the
group's min and max. Min and max are exact, and so is every percentile of a group of
one or two samples or of one value; count and mean (sum / count) are exact too.

So a percentile depends on the bins' counts, and on the group's smallest (largest)
sample only when its order statistic is in the first (last) bin: a histogram updated
by the samples that entered and left (orchestrator.site.matrix_state), which no longer
knows the extremes of bins that lost theirs, gives the same numbers as one read from
the store, to the bit, as long as it knows those two.
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


def _power(b: int) -> float:
    try:
        return float(RATIO**b)
    except OverflowError:
        return float("inf")


def edges(bins: Any) -> tuple[Any, Any]:
    """The low and high edge (RATIO^b, RATIO^(b+1)) of each bin number b (numpy; BELOW's:
    0). Each edge is the same number however many bins are asked for at once (Python's
    pow of each distinct bin, not a vectorized one)."""
    import numpy as np

    found, at = np.unique(np.asarray(bins, dtype=np.int64), return_inverse=True)
    low = np.array([_power(b) for b in found.tolist()], dtype=np.float64)
    high = np.array([_power(b + 1) for b in found.tolist()], dtype=np.float64)
    low[found == BELOW] = high[found == BELOW] = 0.0
    return low[at], high[at]


def quantiles(
    groups: Any,
    bins: Any,
    n: Any,
    lo: Any,
    hi: Any,
    qs: Sequence[float],
) -> Any:
    """The quantiles `qs` of each group of bins, an array (groups, len(qs)). The bins are
    rows in value order within each group, the groups one after another: `groups` the
    index of each group's first row; `bins`, `n`, `lo`, `hi` each bin's number (as
    bin_sql gives it), count, smallest and largest sample (numpy arrays). Of `lo` and
    `hi`, only each group's first bin's lo, last bin's hi, and the lo and hi of a BELOW
    bin are read: the others may be anything (NaN). A group's rows must have at least
    one sample. NaN where an extreme read is NaN."""
    import numpy as np

    bins = np.asarray(bins, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    starts = np.asarray(groups, dtype=np.int64)
    cum = np.cumsum(n)
    before = np.concatenate(([0], cum))[starts]  # samples of the groups before
    ends = np.concatenate((starts[1:], [len(n)]))
    total = cum[ends - 1] - before
    # every order statistic at once (a column per quantile): each pair's at floor and
    # ceil of (N - 1) q
    h = (total[:, None] - 1) * np.asarray(qs, dtype=np.float64)[None, :]
    k_lo, k_hi = np.floor(h).astype(np.int64), np.ceil(h).astype(np.int64)
    k = np.concatenate((k_lo, k_hi), axis=1)
    first, last = starts[:, None], (ends - 1)[:, None]
    target = before[:, None] + k
    row = np.searchsorted(cum, target, side="right")
    m = n[row]
    j = target - (cum[row] - m)  # rank within its bin
    below = bins[row] == BELOW
    low, high = edges(bins[row])
    # the ends known exactly (the group's extremes; BELOW's), and the edges
    exact_lo, exact_hi = (row == first) | below, (row == last) | below
    a = np.where(exact_lo, lo[row], low)
    c = np.where(exact_hi, hi[row], high)
    # the m samples spread over [a, c]: an exact end holds a sample, an edge is half a
    # step from the nearest one
    s_lo, s_hi = np.where(exact_lo, 0.0, 0.5), np.where(exact_hi, 0.0, 0.5)
    steps = (m - 1) + s_lo + s_hi
    one = steps == 0  # a single sample, known: a == c
    steps = np.where(one, 1.0, steps)
    t = (j + s_lo) / steps  # from a
    u = (m - 1 - j + s_hi) / steps  # from c: each end reached exactly
    x = np.where(one, a, np.where(t <= u, a + (c - a) * t, c - (c - a) * u))
    # never past an exact end: the group's extremes bound every estimate (one inside
    # the bins between is inside their edges, so between the extremes already), and
    # only an order statistic in the first or last bin reads them; NaN stays NaN
    x = np.where(exact_lo, np.maximum(x, a), x)
    x = np.where(exact_hi, np.minimum(x, c), x)
    v_lo, v_hi = x[:, : len(qs)], x[:, len(qs) :]
    d = h - k_lo  # as DuckDB interpolates: exact where the order statistics are
    return np.where(k_lo == k_hi, v_lo, v_lo * (1 - d) + v_hi * d)
