"""Statistics for the report: pure functions on plain sequences of floats.

Every function here is small enough to check by hand, and the tests do: a
public latency site once sorted numbers as strings when taking a median.
Missing values are NaN and are dropped by the callers, never here.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from orchestrator.core.geo import FIBRE_RTT_MS_PER_KM, fibre_rtt_ms
from orchestrator.core.stats import NAN, median, percentiles
from orchestrator.core.stats import pearson_r as pearson_r  # the report's callers use it here
from orchestrator.core.stats import percentile as percentile  # callers of the analysis use it here

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


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> Fit:
    """Least squares line through (xs, ys) and Pearson's r.

    Uses centred sums (not the one-pass textbook formula) so that distances in
    the thousands do not cancel catastrophically. Fewer than two points, or no
    spread in x, give NaN coefficients; no spread in y gives r = NaN.
    """
    n = len(xs)
    if n != len(ys):
        raise ValueError(f"xs and ys differ in length ({n} and {len(ys)})")
    if n < 2:
        return Fit(NAN, NAN, NAN, n)
    mean_x = math.fsum(xs) / n
    mean_y = math.fsum(ys) / n
    sxx = math.fsum((x - mean_x) ** 2 for x in xs)
    syy = math.fsum((y - mean_y) ** 2 for y in ys)
    sxy = math.fsum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    if sxx == 0.0:
        return Fit(NAN, NAN, NAN, n)
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    r = sxy / math.sqrt(sxx * syy) if syy > 0.0 else NAN
    return Fit(intercept, slope, r, n)


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given the mean of the ranks they span.

    By counting: a value's rank is the number of smaller values plus (ties + 1) / 2.
    Sorting the distinct values only, not every value: distances repeat once per test
    of a pair, so a million rows hold a few thousand of them."""
    counts: dict[float, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    rank: dict[float, float] = {}
    below = 0
    for v in sorted(counts):
        c = counts[v]
        rank[v] = below + (c + 1) / 2.0
        below += c
    return [rank[v] for v in values]


def spearman_rho(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's r of the ranks (ties averaged)."""
    if len(xs) != len(ys):
        raise ValueError(f"xs and ys differ in length ({len(xs)} and {len(ys)})")
    return pearson_r(ranks(xs), ranks(ys))


# Theil-Sen over more points than this takes the median of this many pairwise slopes
# drawn at random (a fixed seed: the same data give the same fit), not of all n(n-1)/2.
THEIL_SEN_MAX_PAIRS = 50_000


def theil_sen(
    xs: Sequence[float],
    ys: Sequence[float],
    min_slope: float = -math.inf,
    min_intercept: float = -math.inf,
) -> Fit:
    """A robust line: the median of the slopes between every two points of distinct x
    (Theil-Sen), raised to `min_slope` if below it, then the median of y - slope * x
    as the intercept, raised to `min_intercept`. A quarter of the points can be
    anywhere without moving it far. r is Pearson's, for reference. NaN coefficients
    for fewer than two distinct x."""
    n = len(xs)
    if n != len(ys):
        raise ValueError(f"xs and ys differ in length ({n} and {len(ys)})")
    r = pearson_r(xs, ys) if n >= 2 else NAN
    total = n * (n - 1) // 2
    slopes = []
    if total <= THEIL_SEN_MAX_PAIRS:
        for i in range(n):
            xi, yi = xs[i], ys[i]
            for j in range(i + 1, n):
                if xs[j] != xi:
                    slopes.append((ys[j] - yi) / (xs[j] - xi))
    else:
        draw = random.Random(0).random  # randrange costs 10x as much, per call
        for _ in range(THEIL_SEN_MAX_PAIRS):
            i, j = int(draw() * n), int(draw() * n)
            if xs[i] != xs[j]:
                slopes.append((ys[j] - ys[i]) / (xs[j] - xs[i]))
    if not slopes:
        return Fit(NAN, NAN, r, n)
    slope = max(median(slopes), min_slope)
    intercept = max(median([y - slope * x for x, y in zip(xs, ys, strict=True)]), min_intercept)
    return Fit(intercept, slope, r, n)


def physical_rtt_fit(km: Sequence[float], rtt_ms: Sequence[float]) -> Fit:
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

    def row(self) -> dict[str, float | int | str]:
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
        }


def group_rows(m: Measurements) -> dict[str, list[int]]:
    """Row indices of each group in GROUPS ('all' holds every row)."""
    groups: dict[str, list[int]] = {g: [] for g in GROUPS}
    for i, code in enumerate(m.pair_codes()):
        groups.setdefault(code, []).append(i)
    groups["all"] = list(range(len(m)))
    return groups


def summarize_group(name: str, m: Measurements, rows: Sequence[int]) -> GroupSummary:
    dist, rtt, thr = m.distance_km, m.rtt_ms, m.throughput_bps
    rtt_x, rtt_y, log_x, log_y, inflation = [], [], [], [], []
    for i in rows:
        d, r, t = dist[i], rtt[i], thr[i]
        if math.isfinite(r) and math.isfinite(d):
            rtt_x.append(d)
            rtt_y.append(r)
            ratio = route_inflation(r, d)
            if math.isfinite(ratio):
                inflation.append(ratio)
        if math.isfinite(t) and t > 0.0 and math.isfinite(d):
            log_x.append(d)
            log_y.append(math.log10(t))
    rtt_p50, rtt_p90 = percentiles(finite([rtt[i] for i in rows]), (50, 90))
    thr_p50, thr_p90 = percentiles(finite([thr[i] for i in rows]), (50, 90))
    infl_p25, infl_p50, infl_p75 = percentiles(inflation, (25, 50, 75))
    return GroupSummary(
        cloud_pair=name,
        n=len(rows),
        rtt_fit=physical_rtt_fit(rtt_x, rtt_y),
        log_throughput_fit=linear_fit(log_x, log_y),
        route_inflation_median=infl_p50,
        route_inflation_p25=infl_p25,
        route_inflation_p75=infl_p75,
        rtt_distance_spearman=spearman_rho(rtt_x, rtt_y) if len(rtt_x) >= 2 else NAN,
        rtt_median_over_tests_ms=rtt_p50,
        rtt_p90_over_tests_ms=rtt_p90,
        throughput_median_over_tests_bps=thr_p50,
        throughput_p90_over_tests_bps=thr_p90,
    )


def summarize(m: Measurements) -> list[GroupSummary]:
    """One summary per group in GROUPS, in that order (empty groups have n = 0)."""
    groups = group_rows(m)
    return [summarize_group(g, m, groups[g]) for g in GROUPS]


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

# A detour that costs less than this is noise, however tight the group.
OUTLIER_MIN_EXCESS_MS = 5.0


def find_outliers(
    m: Measurements,
    k: float = 3.0,
    min_excess_ms: float = OUTLIER_MIN_EXCESS_MS,
) -> list[PairOutlier]:
    """Directed pairs whose median RTT is more than k robust sigmas from their
    group's fit (physical_rtt_fit), above or below, and more than `min_excess_ms` from it.

    Each pair counts once, by its medians over sweeps, both in the fit (one
    point per directed pair, not the summary's fit over every row) and in the
    spread, so a pair measured in ten sweeps does not outweigh the others.
    Sorted by the size of the excess, largest first.
    """
    by_pair: dict[tuple[int, int], list[int]] = {}
    for i in range(len(m)):
        if math.isfinite(m.rtt_ms[i]) and math.isfinite(m.distance_km[i]):
            by_pair.setdefault((m.src[i], m.dst[i]), []).append(i)
    found: list[PairOutlier] = []
    for group in GROUPS[1:]:
        pairs, medians, distances = [], [], []
        for (s, d), rows in by_pair.items():
            if f"{_cloud(m.regions[s])}-{_cloud(m.regions[d])}" != group:
                continue
            pairs.append((s, d, len(rows)))
            medians.append(median([m.rtt_ms[i] for i in rows]))
            distances.append(median([m.distance_km[i] for i in rows]))
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
