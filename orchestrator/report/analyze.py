"""Statistics for the report: pure functions on plain sequences of floats.

Every function here is small enough to check by hand, and the tests do: a
public latency site once sorted numbers as strings when taking a median.
Missing values are NaN and are dropped by the callers, never here.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from orchestrator.core import FIBRE_RTT_MS_PER_KM, NAN, fibre_rtt_ms, median, percentiles
from orchestrator.core import percentile as percentile  # callers of the analysis use it here
from orchestrator.report import uncertainty
from orchestrator.results import group_name, is_default

# A column of numbers: a list, an array('d') or a numpy array.
Values = Sequence[float] | np.ndarray

# 1.4826 x MAD estimates the standard deviation of normally distributed data.
MAD_TO_SIGMA = 1.4826

# Below this distance the fixed cost of the stack dominates the RTT and the
# ratio over the fibre floor says nothing about the route (5 km pairs exist).
INFLATION_MIN_KM = 500.0


@dataclass(frozen=True)
class Fit:
    """y = intercept + slope * x by least squares, with Pearson's r."""

    intercept: float
    slope: float
    r: float
    n: int

    def at(self, x: float) -> float:
        return self.intercept + self.slope * x


def mad(values: Sequence[float]) -> float:
    """Median absolute deviation from the median (unscaled)."""
    if not values:
        return NAN
    m = median(values)
    return median([abs(v - m) for v in values])


def linear_fit(xs: Values, ys: Values) -> Fit:
    """Least squares line through (xs, ys) and Pearson's r.

    Uses centred sums (not the one-pass textbook formula) so that distances in
    the thousands do not cancel catastrophically. Fewer than two points, or no
    spread in x, give NaN coefficients; no spread in y gives r = NaN. Computed by
    numpy over the columns (a million points take milliseconds).
    """
    x, y = _array(xs), _array(ys)
    n = len(x)
    if n != len(y):
        raise ValueError(f"xs and ys differ in length ({n} and {len(y)})")
    if n < 2:
        return Fit(NAN, NAN, NAN, n)
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy, sxy = float(np.sum(dx * dx)), float(np.sum(dy * dy)), float(np.sum(dx * dy))
    if sxx == 0.0:
        return Fit(NAN, NAN, NAN, n)
    slope = sxy / sxx
    intercept = float(y.mean()) - slope * float(x.mean())
    r = sxy / math.sqrt(sxx * syy) if syy > 0.0 else NAN
    return Fit(intercept, slope, r, n)


def _array(values: Values) -> np.ndarray:
    """A float64 array of `values` (no copy of an array or array('d'))."""
    return np.asarray(values, dtype=np.float64)


def pearson_r(xs: Values, ys: Values) -> float:
    """Pearson's r, as core.stats.pearson_r defines it (NaN for fewer than 2 points or
    a flat series, also when the product of the spreads underflows), by numpy."""
    x, y = _array(xs), _array(ys)
    if len(x) != len(y):
        raise ValueError("pearson_r needs two series of the same length")
    if len(x) < 2:
        return NAN
    dx, dy = x - x.mean(), y - y.mean()
    spread = math.sqrt(float(np.sum(dx * dx)) * float(np.sum(dy * dy)))
    if spread == 0:
        return NAN
    return float(np.sum(dx * dy)) / spread


def _ranks(values: Values) -> np.ndarray:
    """ranks() as an array."""
    _, inverse, counts = np.unique(_array(values), return_inverse=True, return_counts=True)
    below = np.cumsum(counts) - counts  # how many values are smaller
    return (below + (counts + 1) / 2.0)[inverse.ravel()]


def ranks(values: Values) -> list[float]:
    """Ranks from 1, ties given the mean of the ranks they span: a value's rank is the
    number of smaller values plus (its copies + 1) / 2. Finite values only."""
    ranked: list[float] = _ranks(values).tolist()
    return ranked


def spearman_rho(xs: Values, ys: Values) -> float:
    """Spearman's rank correlation: Pearson's r of the ranks (ties averaged)."""
    if len(xs) != len(ys):
        raise ValueError(f"xs and ys differ in length ({len(xs)} and {len(ys)})")
    return pearson_r(_ranks(xs), _ranks(ys))


# Theil-Sen over more points than this takes the median of this many pairwise slopes
# drawn at random (a fixed seed: the same data give the same fit), not of all n(n-1)/2.
THEIL_SEN_MAX_PAIRS = 50_000


def _percentiles(values: np.ndarray, qs: Sequence[float]) -> list[float]:
    """core.stats.percentiles of an array (the same values, sorted by numpy)."""
    if len(values) == 0:
        return percentiles([], qs)
    for q in qs:
        if not 0.0 <= q <= 100.0:
            raise ValueError(f"percentile {q} is outside [0, 100]")
    last = len(values) - 1
    ranks = [(math.floor(h), h) for h in (last * q / 100.0 for q in qs)]
    ends = sorted({k for lo, _h in ranks for k in (lo, min(lo + 1, last))})
    ordered = np.partition(values, ends)  # each of these ranks in its sorted place
    out = []
    for lo, h in ranks:
        a, b = float(ordered[lo]), float(ordered[min(lo + 1, last)])
        out.append(a + (h - lo) * (b - a))
    return out


def _median(values: np.ndarray) -> float:
    """core.stats.median of an array (the same value, by a partial sort)."""
    n = len(values)
    if n == 0:
        return NAN
    mid = n // 2
    if n % 2:
        return float(np.partition(values, mid)[mid])
    part = np.partition(values, (mid - 1, mid))
    return (float(part[mid - 1]) + float(part[mid])) / 2


@functools.cache
def _draws() -> np.ndarray:
    """The draws of random.Random(0), two per pair, the same for every fit."""
    draw = random.Random(0).random
    draws = np.array([draw() for _ in range(2 * THEIL_SEN_MAX_PAIRS)])
    draws.flags.writeable = False
    return draws


def theil_sen(
    xs: Values,
    ys: Values,
    min_slope: float = -math.inf,
    min_intercept: float = -math.inf,
) -> Fit:
    """A robust line: the median of the slopes between every two points of distinct x
    (Theil-Sen), raised to `min_slope` if below it, then the median of y - slope * x
    as the intercept, raised to `min_intercept`. A quarter of the points can be
    anywhere without moving it far. r is Pearson's, for reference. NaN coefficients
    for fewer than two distinct x."""
    x, y = _array(xs), _array(ys)
    n = len(x)
    if n != len(y):
        raise ValueError(f"xs and ys differ in length ({n} and {len(y)})")
    r = pearson_r(x, y) if n >= 2 else NAN
    total = n * (n - 1) // 2
    if total <= THEIL_SEN_MAX_PAIRS:
        i, j = np.triu_indices(n, 1)
    else:
        picks = _draws() * n  # the same pairs as drawn one by one
        i, j = picks[0::2].astype(np.intp), picks[1::2].astype(np.intp)
    distinct = x[i] != x[j]
    i, j = i[distinct], j[distinct]
    if len(i) == 0:
        return Fit(NAN, NAN, r, n)
    slope = max(_median((y[j] - y[i]) / (x[j] - x[i])), min_slope)
    intercept = max(_median(y - slope * x), min_intercept)
    return Fit(intercept, slope, r, n)


def physical_rtt_fit(km: Values, rtt_ms: Values) -> Fit:
    """RTT against distance by Theil-Sen, held to what physics allows: no RTT below
    zero at 0 km, and no slope below the fibre floor's (10.0069 ms per 1000 km)."""
    return theil_sen(km, rtt_ms, min_slope=FIBRE_RTT_MS_PER_KM, min_intercept=0.0)


def route_inflation(rtt_ms: float, distance_km: float) -> float:
    """RTT over the fibre floor for the distance (1.0 = a straight fibre)."""
    if distance_km < INFLATION_MIN_KM:
        return NAN
    return rtt_ms / fibre_rtt_ms(distance_km)


@dataclass(frozen=True)
class Outlier:
    index: int  # position in the residuals given
    residual: float  # how far from the fit (negative: below), in the unit of y
    robust_z: float  # residual from the median residual, in sigmas estimated from the MAD


def outliers(residuals: Sequence[float], k: float = 3.0, min_excess: float = 0.0) -> list[Outlier]:
    """Points more than k robust sigmas from the median residual, on either side, and
    more than `min_excess` from the fit itself.

    Both sides: a path slower than its group's fit is a detour worth knowing about, and
    one faster than the fit may be a measurement that breaks physics. `min_excess` (same
    unit as the residuals) keeps sub-millisecond noise out when the MAD is nearly zero;
    it bounds the residual itself, the figure reported.
    """
    if len(residuals) < 3:
        return []
    centre = median(residuals)
    sigma = MAD_TO_SIGMA * mad(residuals)
    found = []
    for i, res in enumerate(residuals):
        excess = res - centre
        if abs(res) <= min_excess or excess == 0.0 or (res > 0) != (excess > 0):
            continue
        z = excess / sigma if sigma > 0.0 else math.copysign(math.inf, excess)
        if abs(z) > k:
            found.append(Outlier(index=i, residual=res, robust_z=z))
    return found


def finite(values: Sequence[float]) -> list[float]:
    """The values that are numbers (drops NaN and infinities)."""
    return [v for v in values if math.isfinite(v)]


# --- measurements in columns, and the per cloud pair summary -------------------

GROUPS = ("all", "aws-aws", "aws-gcp", "gcp-aws", "gcp-gcp")

SUMMARY_COLUMNS = (
    "cloud_pair",
    "n",
    "route_inflation_median",
    "route_inflation_p25",
    "route_inflation_p75",
    "rtt_distance_r",
    "rtt_distance_spearman",
    "rtt_intercept_ms",
    "rtt_slope_ms_per_1000km",
    "log_throughput_distance_r",
    "log_throughput_intercept",
    "log_throughput_slope_per_1000km",
    "rtt_median_over_tests_ms",
    "rtt_p90_over_tests_ms",
    "throughput_median_over_tests_bps",
    "throughput_p90_over_tests_bps",
    *uncertainty.COLUMNS,
)


@dataclass
class Measurements:
    """Measurement rows kept as columns, so a million rows fit in tens of MB.

    Region and sweep names are interned: `src[i]` indexes `regions`, and
    `sweep[i]` indexes `sweeps`. A missing metric is NaN.
    """

    regions: list[str]  # "cloud:id"
    sweeps: list[str]
    src: list[int]
    dst: list[int]
    sweep: list[int]
    distance_km: Sequence[float]
    rtt_ms: Sequence[float]
    throughput_bps: Sequence[float]
    # What the charts' hovers add, per row (NaN where a row lacks it); empty when the
    # loader did not read them (the hovers then leave them out): the test's RTT p90 and
    # ping loss, its ping samples and its start (UNIX seconds).
    rtt_p90_ms: Sequence[float] = field(default_factory=list)
    loss_pct: Sequence[float] = field(default_factory=list)
    rtt_samples: Sequence[float] = field(default_factory=list)
    started_s: Sequence[float] = field(default_factory=list)
    # each row's GCP network tier (orchestrator.results.tiers), interned: `tier[i]`
    # indexes `tiers`; both empty when every row is of the default tier (Premium)
    tiers: list[str] = field(default_factory=list)
    tier: Sequence[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.src)

    def cloud_pair(self, i: int) -> str:
        """'aws-gcp' for row i: source cloud first."""
        return f"{_cloud(self.regions[self.src[i]])}-{_cloud(self.regions[self.dst[i]])}"

    def pair_codes(self) -> list[str]:
        """The cloud pair of every row (computed once per region pair)."""
        clouds = [_cloud(r) for r in self.regions]
        cache: dict[tuple[int, int], str] = {}
        out = []
        for s, d in zip(self.src, self.dst, strict=True):
            code = cache.get((s, d))
            if code is None:
                code = cache[(s, d)] = f"{clouds[s]}-{clouds[d]}"
            out.append(code)
        return out


def _cloud(key: str) -> str:
    return key.split(":", 1)[0]


def column(values: Sequence[float]) -> np.ndarray:
    """A column as a float64 numpy array (no copy of an array('d'))."""
    return np.asarray(values, dtype=np.float64)


def small_ints(keys: np.ndarray) -> np.ndarray:
    """Keys >= 0 as 16-bit integers when they fit, which numpy's stable sort sorts by radix
    (a few thousand region pairs: the keys of most groupings)."""
    if len(keys) and int(keys.min()) >= 0 and int(keys.max()) < 2**15:
        return keys.astype(np.int16)
    return keys


def segments(
    keys: np.ndarray, values: np.ndarray, mask: np.ndarray, by_value: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The `values` of the rows in `mask` grouped by key (a region pair, a pair in a
    sweep), sorted by key then value, with the first index
    and length of each key's run, and the keys of those runs. `by_value`, the rows of the
    whole column in order of value (np.argsort), when a caller has it already."""
    # by value, then stably by key: a lexsort's order, by two faster sorts (the keys, a
    # few thousand pairs, sort as 16-bit integers where they fit: a radix sort)
    order = np.argsort(values) if by_value is None else by_value
    order = order[mask[order]]
    order = order[np.argsort(small_ints(keys[order]), kind="stable")]
    k, v = keys[order], values[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if len(k) else np.zeros(0, np.intp)
    counts = np.diff(np.r_[starts, len(k)])
    return v, starts, counts, k[starts]


def segment_medians(v: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """core.stats.median of each run: the middle value, or the mean of the two middle."""
    mid = starts + counts // 2
    low = np.maximum(mid - 1, 0)
    return np.where(counts % 2 == 1, v[mid], (v[low] + v[mid]) / 2)


def segment_percentiles(
    v: np.ndarray, starts: np.ndarray, counts: np.ndarray, q: float
) -> np.ndarray:
    """core.stats.percentile of each run, by the same arithmetic."""
    h = (counts - 1) * q / 100.0
    lo = np.floor(h).astype(np.intp)
    hi = np.minimum(lo + 1, counts - 1)
    a, b = v[starts + lo], v[starts + hi]
    return a + (h - lo) * (b - a)


def first_order(values: np.ndarray) -> list[int]:
    """The distinct values of an array of integers >= 0, in order of their first row
    (np.unique's, by a radix sort where they fit in 16 bits)."""
    order = np.argsort(small_ints(values), kind="stable")
    ordered = values[order]
    if not len(ordered):
        return []
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    distinct: list[int] = ordered[starts][np.argsort(order[starts])].tolist()
    return distinct


def groups_by_key(keys: np.ndarray, rows: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(key, its rows) for each distinct value of `keys` (one per row of `rows`), keys in
    order of their first row, rows ascending in each: what one pass appending every
    row to a dict of lists gives, with the rows sorted by numpy, not looped in Python."""
    if len(rows) == 0:
        return []
    order = np.argsort(small_ints(keys), kind="stable")
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    parts = np.split(rows[order], starts[1:])
    firsts = np.array([p[0] for p in parts])
    return [(int(ordered[starts[j]]), parts[j]) for j in np.argsort(firsts, kind="stable")]


def pair_rows(
    m: Measurements, mask: np.ndarray | None = None, ordered: bool = True
) -> dict[tuple[int, int], np.ndarray]:
    """The rows of each (src, dst) region pair (unordered, low index first, if not
    `ordered`), only rows where `mask` is true when given; pairs in order of first row."""
    src = np.asarray(m.src, dtype=np.int64)
    dst = np.asarray(m.dst, dtype=np.int64)
    if not ordered:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    rows = np.arange(len(src)) if mask is None else np.flatnonzero(mask)
    width = max(len(m.regions), 1)
    return {
        (key // width, key % width): idx
        for key, idx in groups_by_key(src[rows] * width + dst[rows], rows)
    }


@dataclass(frozen=True)
class GroupSummary:
    cloud_pair: str
    n: int
    rtt_fit: Fit  # rtt_ms against distance_km: physical_rtt_fit (Theil-Sen)
    log_throughput_fit: Fit  # log10(throughput_bps) against distance_km, least squares
    route_inflation_median: float  # the headline: RTT over the fibre floor
    route_inflation_p25: float
    route_inflation_p75: float
    rtt_distance_spearman: float
    # statistics over the group's tests (each test's RTT is its median), not of a pair
    rtt_median_over_tests_ms: float
    rtt_p90_over_tests_ms: float
    throughput_median_over_tests_bps: float
    throughput_p90_over_tests_bps: float
    # bootstrap intervals over region pairs, the pairs beside n, the fit's marks
    uncertainty: uncertainty.GroupUncertainty | None = None

    def row(self) -> dict[str, float | int | str | bool]:
        """The summary.csv row: slopes per 1000 km, NaN where undefined."""
        return {
            "cloud_pair": self.cloud_pair,
            "n": self.n,
            "route_inflation_median": self.route_inflation_median,
            "route_inflation_p25": self.route_inflation_p25,
            "route_inflation_p75": self.route_inflation_p75,
            "rtt_distance_r": self.rtt_fit.r,
            "rtt_distance_spearman": self.rtt_distance_spearman,
            "rtt_intercept_ms": self.rtt_fit.intercept,
            "rtt_slope_ms_per_1000km": self.rtt_fit.slope * 1000.0,
            "log_throughput_distance_r": self.log_throughput_fit.r,
            "log_throughput_intercept": self.log_throughput_fit.intercept,
            "log_throughput_slope_per_1000km": self.log_throughput_fit.slope * 1000.0,
            "rtt_median_over_tests_ms": self.rtt_median_over_tests_ms,
            "rtt_p90_over_tests_ms": self.rtt_p90_over_tests_ms,
            "throughput_median_over_tests_bps": self.throughput_median_over_tests_bps,
            "throughput_p90_over_tests_bps": self.throughput_p90_over_tests_bps,
            **(self.uncertainty.row() if self.uncertainty is not None else {}),
        }


def tier_codes(m: Measurements) -> np.ndarray:
    """Each row's index into m.tiers (0 for every row when m has no tier column)."""
    if len(m.tier) != len(m):
        return np.zeros(len(m), dtype=np.int64)
    return np.asarray(m.tier, dtype=np.int64)


def default_tier_rows(m: Measurements) -> np.ndarray:
    """A mask of the rows of the default network tier (Premium)."""
    codes = tier_codes(m)
    default = np.array([is_default(t) for t in m.tiers] or [True], dtype=bool)
    out: np.ndarray = default[codes]
    return out


def group_rows(m: Measurements) -> dict[str, np.ndarray]:
    """Row indices of each group, ascending, as arrays (a million rows: no list of a
    million ints to build and convert back): every name in GROUPS, of the default
    network tier ('all' holds every default-tier row), then a group per cloud pair in
    each other tier present ("gcp-gcp standard"): tiers are never pooled."""
    groups: dict[str, np.ndarray] = {g: np.zeros(0, dtype=np.intp) for g in GROUPS}
    clouds = sorted({_cloud(r) for r in m.regions})
    cloud_of = np.array([clouds.index(_cloud(r)) for r in m.regions] or [0], dtype=np.int64)
    width = len(clouds) * len(clouds)
    codes = (
        cloud_of[np.asarray(m.src, dtype=np.int64)] * len(clouds)
        + cloud_of[np.asarray(m.dst, dtype=np.int64)]
    ) + tier_codes(m) * width
    extra: dict[str, np.ndarray] = {}
    for code, rows in groups_by_key(codes, np.arange(len(m))):
        tier, pair = divmod(code, width)
        cloud_pair = f"{clouds[pair // len(clouds)]}-{clouds[pair % len(clouds)]}"
        name = group_name(cloud_pair, m.tiers[tier] if m.tiers else "")
        if name in groups:  # one run per code; the default tier may be spelt two ways
            rows = np.sort(np.concatenate([groups[name], rows]))
        (groups if name in GROUPS else extra)[name] = rows.astype(np.intp, copy=False)
    groups["all"] = np.flatnonzero(default_tier_rows(m)).astype(np.intp)
    groups.update(sorted(extra.items()))
    return groups


# Measurements field -> its rows in order of value (np.argsort, NaN last): each column
# sorted once for the summary, the figures and the cache entry of one report
Orders = dict[str, np.ndarray]


def by_value(m: Measurements, name: str, orders: Orders | None = None) -> np.ndarray:
    """The rows of the column `name` of m in order of value (NaN last; equal values in
    any order: every use is of the values alone), from `orders` when there."""
    if orders is not None and name in orders:
        return orders[name]
    values = column(getattr(m, name))
    order = _by_pair_value(m, values) if name == "distance_km" else None
    if order is None:
        order = np.argsort(values)
    if orders is not None:
        orders[name] = order
    return order


def _by_pair_value(m: Measurements, values: np.ndarray) -> np.ndarray | None:
    """The rows in order of `values` when every row of a region pair holds the same value
    (a distance): the pairs sorted by it, then the rows by their pair's place (radix sorts
    of small integers, not a sort of a million floats); None when a pair's rows differ."""
    width = max(len(m.regions), 1)
    keys = np.asarray(m.src, dtype=np.int64) * width + np.asarray(m.dst, dtype=np.int64)
    if not len(keys):
        return None
    by_key = np.argsort(small_ints(keys), kind="stable")
    k, v = keys[by_key], values[by_key]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    first = v[starts]
    same = np.repeat(first, np.diff(np.r_[starts, len(k)]))
    if not np.array_equal(v, same, equal_nan=True):
        return None
    place = np.empty(len(starts), dtype=np.int64)
    place[np.argsort(first)] = np.arange(len(starts))  # NaN pairs last
    rank = np.empty(len(keys), dtype=np.int64)
    rank[by_key] = np.repeat(place, np.diff(np.r_[starts, len(k)]))
    order: np.ndarray = np.argsort(small_ints(rank), kind="stable")
    return order


def ranks_of(values: np.ndarray, order: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """ranks() of the values of the rows in `mask`, in row order, from `order` (the rows of
    all `values` by value): no sort of its own."""
    rows = order[mask[order]]
    ordered = values[rows]
    if not len(ordered):
        return ordered
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    counts = np.diff(np.r_[starts, len(ordered)])
    ranked = np.empty(len(values))
    ranked[rows] = np.repeat(starts + (counts + 1) / 2.0, counts)
    out: np.ndarray = ranked[mask]
    return out


def log10_throughput(m: Measurements) -> np.ndarray:
    """log10 of every row's throughput (math's, to the bit), NaN where none or not > 0."""
    thr = column(m.throughput_bps)
    out = np.full(len(thr), np.nan)
    positive = np.isfinite(thr) & (thr > 0.0)
    out[positive] = np.fromiter(map(math.log10, thr[positive].tolist()), np.float64)
    return out


def summarize_group(
    name: str,
    m: Measurements,
    rows: Sequence[int] | np.ndarray,
    log_throughput: np.ndarray | None = None,
    orders: Orders | None = None,
) -> GroupSummary:
    """The summary of the rows `rows` (ascending) of m; `log_throughput`:
    log10_throughput(m) and `orders` the columns' sorts, when the caller has them
    (summarize makes them once for every group)."""
    idx = np.asarray(rows, dtype=np.intp)
    dist, rtt, thr = (
        column(m.distance_km)[idx],
        column(m.rtt_ms)[idx],
        column(m.throughput_bps)[idx],
    )
    with_rtt = np.isfinite(rtt) & np.isfinite(dist)
    rtt_km, rtt_ms = dist[with_rtt], rtt[with_rtt]
    far = rtt_km >= INFLATION_MIN_KM  # route_inflation, row by row, in numpy
    inflation = rtt_ms[far] / (rtt_km[far] * FIBRE_RTT_MS_PER_KM)
    with_thr = np.isfinite(thr) & (thr > 0.0) & np.isfinite(dist)
    log_x = dist[with_thr]
    if log_throughput is None:
        log_throughput = log10_throughput(m)
    log_y = log_throughput[idx][with_thr]
    rtt_p50, rtt_p90 = _percentiles(rtt[np.isfinite(rtt)], (50, 90))
    thr_p50, thr_p90 = _percentiles(thr[np.isfinite(thr)], (50, 90))
    infl_p25, infl_p50, infl_p75 = _percentiles(inflation, (25, 50, 75))
    return GroupSummary(
        cloud_pair=name,
        n=len(rows),
        rtt_fit=physical_rtt_fit(rtt_km, rtt_ms),
        log_throughput_fit=linear_fit(log_x, log_y),
        route_inflation_median=infl_p50,
        route_inflation_p25=infl_p25,
        route_inflation_p75=infl_p75,
        rtt_distance_spearman=_spearman(m, idx[with_rtt], orders) if len(rtt_km) >= 2 else NAN,
        rtt_median_over_tests_ms=rtt_p50,
        rtt_p90_over_tests_ms=rtt_p90,
        throughput_median_over_tests_bps=thr_p50,
        throughput_p90_over_tests_bps=thr_p90,
        uncertainty=uncertainty.of_group(
            pair_keys(m, idx), dist, rtt, thr, theil_sen, _inflation(dist, rtt)
        ),
    )


def _inflation(km: np.ndarray, rtt_ms: np.ndarray) -> np.ndarray:
    """route_inflation of each row, NaN below INFLATION_MIN_KM or without an RTT."""
    out = np.full(len(km), np.nan)
    far = np.isfinite(rtt_ms) & np.isfinite(km) & (km >= INFLATION_MIN_KM)
    out[far] = rtt_ms[far] / (km[far] * FIBRE_RTT_MS_PER_KM)
    return out


def pair_keys(m: Measurements, rows: np.ndarray) -> np.ndarray:
    """One integer per directed region pair in one tier, for the rows `rows` of m."""
    width = max(len(m.regions), 1)
    src = np.asarray(m.src, dtype=np.int64)[rows]
    dst = np.asarray(m.dst, dtype=np.int64)[rows]
    out: np.ndarray = (src * width + dst) * max(len(m.tiers), 1) + tier_codes(m)[rows]
    return out


def summarize(m: Measurements, orders: Orders | None = None) -> list[GroupSummary]:
    """One summary per group in GROUPS, in that order (empty groups have n = 0), then
    one per cloud pair of each other network tier present (group_rows)."""
    groups = group_rows(m)
    logs = log10_throughput(m)
    orders = {} if orders is None else orders
    return [summarize_group(g, m, rows, logs, orders) for g, rows in groups.items()]


def _spearman(m: Measurements, rows: np.ndarray, orders: Orders | None) -> float:
    """spearman_rho of the distance and RTT of `rows` (ascending), ranked from the
    columns' sorts (one sort of each column for every group)."""
    mask = np.zeros(len(m), dtype=bool)
    mask[rows] = True
    dist, rtt = column(m.distance_km), column(m.rtt_ms)
    return pearson_r(
        ranks_of(dist, by_value(m, "distance_km", orders), mask),
        ranks_of(rtt, by_value(m, "rtt_ms", orders), mask),
    )


@dataclass(frozen=True)
class PairOutlier:
    """A directed region pair whose RTT is far from its cloud pair's fit (either side)."""

    cloud_pair: str
    src: str
    dst: str
    distance_km: float
    n: int  # measurements of the pair (several sweeps count separately)
    rtt_ms: float  # the pair's median RTT
    fit_rtt_ms: float  # the fit through the group's per-pair medians, at that distance
    excess_ms: float  # rtt_ms - fit_rtt_ms: beyond +-OUTLIER_MIN_EXCESS_MS (below: negative)
    robust_z: float
    route_inflation: float


OUTLIER_COLUMNS = tuple(PairOutlier.__dataclass_fields__)

SUMMARY_DOCS = {
    "cloud_pair": "group: all, or source-destination cloud (aws-gcp = from AWS to GCP), of "
    "GCP's Premium tier; another tier apart and named (gcp-gcp standard)",
    "n": "measurements in the group",
    "route_inflation_median": "the headline: median of RTT over the fibre floor "
    f"(2 x distance / (c x 2/3)), pairs >= {INFLATION_MIN_KM:.0f} km",
    "route_inflation_p25": "25th percentile of the same ratios",
    "route_inflation_p75": "75th percentile of the same ratios",
    "rtt_distance_r": "Pearson r of RTT against distance",
    "rtt_distance_spearman": "Spearman's rank correlation of RTT against distance",
    "rtt_intercept_ms": "Theil-Sen RTT at 0 km, held at 0 or above",
    "rtt_slope_ms_per_1000km": "Theil-Sen RTT increase per 1000 km, held at the fibre's "
    "10.007 or above",
    "log_throughput_distance_r": "Pearson r of log10(throughput_bps) against distance",
    "log_throughput_intercept": "least-squares log10(throughput_bps) at 0 km",
    "log_throughput_slope_per_1000km": "least-squares change of log10(throughput_bps) per 1000 km",
    "rtt_median_over_tests_ms": "median over the group's tests of each test's RTT (a "
    "spread across pairs, not any pair's RTT)",
    "rtt_p90_over_tests_ms": "90th percentile over the group's tests of each test's RTT",
    "throughput_median_over_tests_bps": "median over the group's tests of their throughput",
    "throughput_p90_over_tests_bps": "90th percentile over the group's tests of their throughput",
    **uncertainty.COLUMN_DOCS,
}

OUTLIER_DOCS = {
    "cloud_pair": "group whose fit the pair is compared with",
    "src": "sending region",
    "dst": "receiving region",
    "distance_km": "geodesic distance",
    "n": "measurements of the pair",
    "rtt_ms": "the pair's median RTT",
    "fit_rtt_ms": "the group's fitted RTT at that distance (Theil-Sen through one median per pair)",
    "excess_ms": "rtt_ms - fit_rtt_ms: negative for a pair faster than the fit",
    "robust_z": "excess over the median residual, in sigmas estimated as 1.4826 x MAD",
    "route_inflation": "rtt_ms over the fibre floor",
}

# A detour that costs less than this is noise, however tight the group.
OUTLIER_MIN_EXCESS_MS = 5.0


def find_outliers(
    m: Measurements,
    k: float = 3.0,
    min_excess_ms: float = OUTLIER_MIN_EXCESS_MS,
    orders: Orders | None = None,
) -> list[PairOutlier]:
    """Directed pairs whose median RTT is more than k robust sigmas from their
    group's fit (physical_rtt_fit), above or below, and more than `min_excess_ms` from it.

    Each pair counts once, by its medians over sweeps, both in the fit (one
    point per directed pair, not the summary's fit over every row) and in the
    spread, so a pair measured in ten sweeps does not outweigh the others.
    Sorted by the size of the excess, largest first.
    """
    rtt, km = column(m.rtt_ms), column(m.distance_km)
    valid = np.isfinite(rtt) & np.isfinite(km)
    width = max(len(m.regions), 1)
    # a pair in each tier is a point of its own: (src, dst, tier) as one key
    keys = (np.asarray(m.src, dtype=np.int64) * width + np.asarray(m.dst, dtype=np.int64)) * max(
        len(m.tiers), 1
    ) + tier_codes(m)
    # each pair's medians by one sort of each column, pairs in order of their first row
    v, starts, counts, runs = segments(keys, rtt, valid, by_value(m, "rtt_ms", orders))
    rtt_of = dict(zip(runs.tolist(), segment_medians(v, starts, counts).tolist(), strict=True))
    tests = dict(zip(runs.tolist(), counts.tolist(), strict=True))
    v, starts, counts, runs = segments(keys, km, valid, by_value(m, "distance_km", orders))
    km_of = dict(zip(runs.tolist(), segment_medians(v, starts, counts).tolist(), strict=True))
    in_order = first_order(keys[valid])
    found: list[PairOutlier] = []
    names = list(m.tiers) or [""]
    group_of = {}
    for key in in_order:
        pair, tier = divmod(key, len(names))
        s, d = divmod(pair, width)
        cloud_pair = f"{_cloud(m.regions[s])}-{_cloud(m.regions[d])}"
        group_of[key] = group_name(cloud_pair, names[tier])
    for group in [*GROUPS[1:], *sorted(set(group_of.values()) - set(GROUPS))]:
        pairs, medians, distances = [], [], []
        for key in in_order:
            if group_of[key] != group:
                continue
            s, d = divmod(key // len(names), width)
            pairs.append((s, d, tests[key]))
            medians.append(rtt_of[key])
            distances.append(km_of[key])
        fit = physical_rtt_fit(distances, medians)
        if not math.isfinite(fit.slope):
            continue
        residuals = [rtt - fit.at(km) for rtt, km in zip(medians, distances, strict=True)]
        for o in outliers(residuals, k=k, min_excess=min_excess_ms):
            s, d, n = pairs[o.index]
            found.append(
                PairOutlier(
                    cloud_pair=group,
                    src=m.regions[s],
                    dst=m.regions[d],
                    distance_km=distances[o.index],
                    n=n,
                    rtt_ms=medians[o.index],
                    fit_rtt_ms=fit.at(distances[o.index]),
                    excess_ms=o.residual,
                    robust_z=o.robust_z,
                    route_inflation=route_inflation(medians[o.index], distances[o.index]),
                )
            )
    found.sort(key=lambda o: -abs(o.excess_ms))
    return found
