"""How far a report's figures can be trusted: bootstrap intervals over pairs, the marks
of a weak fit, and Wilson's interval of a loss rate.

Tests of one region pair are not independent draws (they share a route), so every
interval here resamples directed region PAIRS, each with all its tests (a cluster
bootstrap), never tests one by one: a cloud pair measured over 3 region pairs ten
times each has 3 points of evidence, not 30. Seeded (SEED), so a report of the same
data prints the same intervals.

A fit is marked (FIT_MARKS) when it rests on fewer than MIN_FIT_PAIRS distinct pairs,
or when a physical constraint bound it (the slope raised to the fibre's, the intercept
raised to 0): its figures are then the constraint's more than the data's. Its
intercept reads as "RTT at 0 km" only when the data reach within INTERCEPT_REACH_KM of
0 km; otherwise it is an extrapolation and is named so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from orchestrator.core import FIBRE_RTT_MS_PER_KM, NAN, wilson

# a line fit of (km, rtt_ms) -> an object with .slope and .intercept (analyze.Fit)
FitFunction = Callable[[np.ndarray, np.ndarray], Any]

SEED = 29
DRAWS = 200  # bootstrap resamples per figure
# Above this many tests a group's bootstrap reads the same number of each pair's tests,
# evenly spaced in the order they were measured: the interval measures how pairs vary,
# which a pair's 170th test adds little to, and a million rows stay seconds.
MAX_TESTS = 5_000
# Each resample's Theil-Sen line takes the median slope of at most this many point pairs
# (all of them below it), drawn anew per resample: the resampling's own noise widens the
# interval a little, never narrows it, and a report's groups take a second, not minutes.
RESAMPLE_SLOPE_PAIRS = 4_000
CONFIDENCE = 0.95
MIN_FIT_PAIRS = 5
INTERCEPT_REACH_KM = 1_000.0

FEW_PAIRS = "few_pairs"
SLOPE_CLAMPED = "slope_clamped"
INTERCEPT_CLAMPED = "intercept_clamped"
FIT_MARKS = {
    FEW_PAIRS: f"fewer than {MIN_FIT_PAIRS} distinct region pairs",
    SLOPE_CLAMPED: "slope held at the fibre's (the data's own slope is below it)",
    INTERCEPT_CLAMPED: "intercept held at 0 ms (the data's own is below it)",
}

COLUMNS = (
    "pairs",
    "route_inflation_median_ci_low",
    "route_inflation_median_ci_high",
    "rtt_median_ci_low_ms",
    "rtt_median_ci_high_ms",
    "throughput_median_ci_low_bps",
    "throughput_median_ci_high_bps",
    "rtt_slope_ci_low_ms_per_1000km",
    "rtt_slope_ci_high_ms_per_1000km",
    "rtt_intercept_ci_low_ms",
    "rtt_intercept_ci_high_ms",
    "rtt_fit_marks",
    "rtt_nearest_km",
    "rtt_intercept_is_rtt_at_0km",
)


_CI = "95 % bootstrap interval (resampling region pairs, each with all its tests)"
COLUMN_DOCS = {
    "pairs": "distinct directed region pairs of the group (beside n, its tests)",
    "route_inflation_median_ci_low": f"route_inflation_median: low end of its {_CI}",
    "route_inflation_median_ci_high": "route_inflation_median: high end of the same interval",
    "rtt_median_ci_low_ms": f"rtt_median_over_tests_ms: low end of its {_CI}",
    "rtt_median_ci_high_ms": "rtt_median_over_tests_ms: high end of the same interval",
    "throughput_median_ci_low_bps": f"throughput_median_over_tests_bps: low end of its {_CI}",
    "throughput_median_ci_high_bps": "throughput_median_over_tests_bps: high end of it",
    "rtt_slope_ci_low_ms_per_1000km": f"rtt_slope_ms_per_1000km: low end of its {_CI}",
    "rtt_slope_ci_high_ms_per_1000km": "rtt_slope_ms_per_1000km: high end of it",
    "rtt_intercept_ci_low_ms": f"rtt_intercept_ms: low end of its {_CI}",
    "rtt_intercept_ci_high_ms": "rtt_intercept_ms: high end of it",
    "rtt_fit_marks": f"the RTT fit's marks: few_pairs (under {MIN_FIT_PAIRS} distinct pairs), "
    "slope_clamped (held at the fibre's), intercept_clamped (held at 0); empty: none",
    "rtt_nearest_km": "the shortest distance of the fit's data",
    "rtt_intercept_is_rtt_at_0km": f"whether the data reach within {INTERCEPT_REACH_KM:,.0f} km "
    "of 0 km, so the intercept reads as an RTT at 0 km (else an extrapolation)",
}


@dataclass(frozen=True)
class Interval:
    low: float = NAN
    high: float = NAN

    @property
    def width(self) -> float:
        return self.high - self.low

    @property
    def known(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)


NONE = Interval()


@dataclass(frozen=True)
class GroupUncertainty:
    """The intervals and marks of one group of a report (analyze.GroupSummary)."""

    pairs: int  # distinct directed region pairs with an RTT or a throughput
    inflation_median: Interval
    rtt_median: Interval
    throughput_median: Interval
    slope: Interval  # ms per km, as analyze.Fit
    intercept: Interval
    fit_marks: tuple[str, ...]
    nearest_km: float  # the shortest distance of the fit's data

    @property
    def intercept_at_zero(self) -> bool:
        """Whether the intercept is near enough the data to read as the RTT at 0 km."""
        return math.isfinite(self.nearest_km) and self.nearest_km <= INTERCEPT_REACH_KM

    def row(self) -> dict[str, float | int | str | bool]:
        return {
            "pairs": self.pairs,
            "route_inflation_median_ci_low": self.inflation_median.low,
            "route_inflation_median_ci_high": self.inflation_median.high,
            "rtt_median_ci_low_ms": self.rtt_median.low,
            "rtt_median_ci_high_ms": self.rtt_median.high,
            "throughput_median_ci_low_bps": self.throughput_median.low,
            "throughput_median_ci_high_bps": self.throughput_median.high,
            "rtt_slope_ci_low_ms_per_1000km": self.slope.low * 1000.0,
            "rtt_slope_ci_high_ms_per_1000km": self.slope.high * 1000.0,
            "rtt_intercept_ci_low_ms": self.intercept.low,
            "rtt_intercept_ci_high_ms": self.intercept.high,
            "rtt_fit_marks": ";".join(self.fit_marks),
            "rtt_nearest_km": self.nearest_km,
            "rtt_intercept_is_rtt_at_0km": self.intercept_at_zero,
        }

    def fit_note(self) -> str:
        """The fit's marks in words ('' when none)."""
        return "; ".join(FIT_MARKS[m] for m in self.fit_marks)

    def intercept_text(self, intercept_ms: float) -> str:
        """The intercept as a line may quote it: "RTT at 0 km = 4.2 ms" only when the
        data reach near 0 km, else what it is."""
        if not math.isfinite(intercept_ms):
            return "no fit"
        if self.intercept_at_zero:
            return f"RTT at 0 km = {intercept_ms:.1f} ms"
        return (
            f"intercept {intercept_ms:.1f} ms (not an RTT at 0 km: the nearest pair is "
            f"{self.nearest_km:,.0f} km away)"
        )


def range_text(low: float, high: float, fmt: str = "{:.1f}") -> str:
    """An interval for people: "12.3-14.1", '-' when there is none."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return "-"
    return f"{fmt.format(low)}-{fmt.format(high)}"


def table_cells(row: Mapping[str, Any]) -> dict[str, str]:
    """What a summary table adds to a summary.csv row (analyze.GroupSummary.row): the
    intervals as ranges, the intercept marked where it is no RTT at 0 km, the marks."""
    intercept = row.get("rtt_intercept_ms", NAN)
    shown = f"{intercept:.1f}" if isinstance(intercept, float) and math.isfinite(intercept) else "-"
    if shown != "-" and not row.get("rtt_intercept_is_rtt_at_0km", True):
        shown = f"({shown})"
    mbit = 1e-6
    return {
        "route_inflation_median_ci": range_text(
            row.get("route_inflation_median_ci_low", NAN),
            row.get("route_inflation_median_ci_high", NAN),
            "{:.2f}",
        ),
        "rtt_median_ci": range_text(
            row.get("rtt_median_ci_low_ms", NAN), row.get("rtt_median_ci_high_ms", NAN)
        ),
        "throughput_median_ci": range_text(
            row.get("throughput_median_ci_low_bps", NAN) * mbit,
            row.get("throughput_median_ci_high_bps", NAN) * mbit,
        ),
        "rtt_slope_ci": range_text(
            row.get("rtt_slope_ci_low_ms_per_1000km", NAN),
            row.get("rtt_slope_ci_high_ms_per_1000km", NAN),
            "{:.2f}",
        ),
        "rtt_intercept": shown,
        "rtt_fit_marks": str(row.get("rtt_fit_marks") or "").replace(";", ", ").replace("_", " "),
    }


TABLE_NOTE = (
    f"CI: 95 % bootstrap interval resampling region pairs ({DRAWS} draws, seed {SEED}); "
    f"pairs: distinct directed region pairs beside n tests. (x): an intercept only, not "
    f"an RTT at 0 km: no pair within {INTERCEPT_REACH_KM:,.0f} km. Marks: "
    + "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in FIT_MARKS.items())
    + "."
)


def from_dict(d: Mapping[str, Any]) -> GroupUncertainty:
    """A GroupUncertainty from its dataclasses.asdict (a cache entry); JSON's null as NaN."""

    def interval(v: Mapping[str, Any]) -> Interval:
        return Interval(*(NAN if v[k] is None else float(v[k]) for k in ("low", "high")))

    return GroupUncertainty(
        pairs=int(d["pairs"]),
        inflation_median=interval(d["inflation_median"]),
        rtt_median=interval(d["rtt_median"]),
        throughput_median=interval(d["throughput_median"]),
        slope=interval(d["slope"]),
        intercept=interval(d["intercept"]),
        fit_marks=tuple(d["fit_marks"]),
        nearest_km=NAN if d["nearest_km"] is None else float(d["nearest_km"]),
    )


def _pairs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows sorted by pair, first index of each pair's run, its length)."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if len(k) else np.zeros(0, np.intp)
    return order, starts, np.diff(np.r_[starts, len(k)])


def _gather(
    order: np.ndarray, starts: np.ndarray, counts: np.ndarray, picks: np.ndarray
) -> np.ndarray:
    """The rows of the pairs `picks` (with repeats), each with all its rows."""
    n = counts[picks]
    total = int(n.sum())
    offsets = np.repeat(starts[picks] - np.r_[0, np.cumsum(n)[:-1]], n)
    out: np.ndarray = order[offsets + np.arange(total)]
    return out


def _interval(values: Sequence[float]) -> Interval:
    v = np.asarray([x for x in values if math.isfinite(x)], dtype=np.float64)
    if len(v) < 2:
        return NONE
    tail = (1.0 - CONFIDENCE) / 2.0 * 100.0
    low, high = np.percentile(v, [tail, 100.0 - tail])
    return Interval(float(low), float(high))


def _codes(keys: np.ndarray) -> np.ndarray:
    """Keys as small integers >= 0: as they are when they fit in 16 bits (numpy's stable
    sort of those is a radix sort), else their index among the distinct keys."""
    if len(keys) and keys.min() >= 0 and keys.max() < 2**15:
        return keys.astype(np.int16)
    out: np.ndarray = np.unique(keys, return_inverse=True)[1]
    return out.astype(np.int16) if len(out) and out.max() < 2**15 else out


def distinct(keys: np.ndarray) -> int:
    """How many distinct keys."""
    if not len(keys):
        return 0
    codes = _codes(keys)
    return int(np.count_nonzero(np.bincount(codes.astype(np.int64))))


def thinned(keys: np.ndarray, values: np.ndarray, cap: int = MAX_TESTS) -> np.ndarray:
    """The rows the bootstrap reads: all of them up to `cap`, else the same number of
    each pair's tests (at least one), evenly spaced in the order they were measured, so
    each pair keeps its spread over time. One radix sort of the pairs' codes, no sort of
    the values."""
    if len(keys) <= cap:
        return np.arange(len(keys))
    order = np.argsort(_codes(keys), kind="stable")  # by pair, each pair's rows in order
    k = keys[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    counts = np.diff(np.r_[starts, len(k)])
    per = max(1, cap // len(starts))
    take = np.minimum(counts, per)
    first = np.repeat(starts, take)
    j = _within(take)
    spread = ((j + 0.5) * np.repeat(counts, take) / np.repeat(take, take)).astype(np.intp)
    kept: np.ndarray = np.sort(order[first + spread])
    return kept


def _within(counts: np.ndarray) -> np.ndarray:
    """0..count-1 for each count, concatenated."""
    if not len(counts):
        return np.zeros(0, dtype=np.intp)
    total = int(counts.sum())
    return np.arange(total) - np.repeat(np.r_[0, np.cumsum(counts)[:-1]], counts)


def median_interval(values: np.ndarray, keys: np.ndarray, draws: int = DRAWS) -> Interval:
    """The 95 % interval of the median of `values` (one per test; NaN ignored) by
    resampling the pairs `keys` names, each with all its tests (thinned above
    MAX_TESTS); none for < 2 pairs. All resamples at once: each is a count per pair
    (how often it was drawn), and its median the middle of the values weighted by them."""
    ok = np.isfinite(values)
    values, keys = values[ok], keys[ok]
    keep = thinned(keys, values)
    values, keys = values[keep], keys[keep]
    distinct = np.unique(keys)
    pairs = len(distinct)
    if pairs < 2:
        return NONE
    pair_of = np.searchsorted(distinct, keys)  # each test's pair, 0..pairs-1
    by_value = np.argsort(values, kind="stable")
    ordered, pair_sorted = values[by_value], pair_of[by_value]
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, pairs, (draws, pairs))
    times = np.bincount(
        (picks + pairs * np.arange(draws)[:, None]).ravel(), minlength=draws * pairs
    ).reshape(draws, pairs)
    # tests up to each value, in 32 bits: half the memory of 64 to go through, and a
    # resample holds at most MAX_TESTS**2 tests (unthinned), else MAX_TESTS or one per pair
    cumulative = np.cumsum(times.astype(np.int32)[:, pair_sorted], axis=1, dtype=np.int32)
    total = cumulative[:, -1]
    low = (cumulative <= ((total - 1) // 2)[:, None]).sum(axis=1)
    high = (cumulative <= (total // 2)[:, None]).sum(axis=1)
    return _interval(((ordered[low] + ordered[high]) / 2).tolist())


def _line(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """The physical Theil-Sen line (report.analyze.physical_rtt_fit: slope at least the
    fibre's, intercept at least 0) of one resample, over RESAMPLE_SLOPE_PAIRS point pairs
    at most."""
    n = len(x)
    if n * (n - 1) // 2 <= RESAMPLE_SLOPE_PAIRS:
        i, j = np.triu_indices(n, 1)
    else:
        i = rng.integers(0, n, RESAMPLE_SLOPE_PAIRS)
        j = rng.integers(0, n, RESAMPLE_SLOPE_PAIRS)
    distinct = x[i] != x[j]
    if not distinct.any():
        return NAN, NAN
    i, j = i[distinct], j[distinct]
    slope = max(float(np.median((y[j] - y[i]) / (x[j] - x[i]))), FIBRE_RTT_MS_PER_KM)
    return slope, max(float(np.median(y - slope * x)), 0.0)


def fit_intervals(
    km: np.ndarray, rtt_ms: np.ndarray, keys: np.ndarray, draws: int = DRAWS
) -> tuple[Interval, Interval]:
    """The 95 % intervals of the physical fit's slope and intercept, resampling pairs
    (thinned above MAX_TESTS)."""
    keep = thinned(keys, rtt_ms)
    km, rtt_ms, keys = km[keep], rtt_ms[keep], keys[keep]
    order, starts, counts = _pairs(keys)
    if len(starts) < 2:
        return NONE, NONE
    rng = np.random.default_rng(SEED)
    slopes, intercepts = [], []
    for _ in range(draws):
        rows = _gather(order, starts, counts, rng.integers(0, len(starts), len(starts)))
        slope, intercept = _line(km[rows], rtt_ms[rows], rng)
        slopes.append(slope)
        intercepts.append(intercept)
    return _interval(slopes), _interval(intercepts)


def fit_marks(
    km: np.ndarray, rtt_ms: np.ndarray, pairs: int, free_fit: FitFunction
) -> tuple[str, ...]:
    """FIT_MARKS that apply to the physical fit of these points; `free_fit`: the same
    fit without its constraints (Theil-Sen)."""
    marks = []
    if pairs < MIN_FIT_PAIRS:
        marks.append(FEW_PAIRS)
    free = free_fit(km, rtt_ms)
    if math.isfinite(free.slope):
        if free.slope < FIBRE_RTT_MS_PER_KM:
            marks.append(SLOPE_CLAMPED)
        slope = max(free.slope, FIBRE_RTT_MS_PER_KM)
        if float(np.median(rtt_ms - slope * km)) < 0.0:
            marks.append(INTERCEPT_CLAMPED)
    return tuple(marks)


def of_group(
    keys: np.ndarray,
    km: np.ndarray,
    rtt_ms: np.ndarray,
    throughput_bps: np.ndarray,
    free_fit: FitFunction,
    inflation: np.ndarray | None = None,
) -> GroupUncertainty:
    """The intervals and marks of a group's rows: each row's pair `keys` (one integer
    per directed region pair in one tier), distance, RTT, throughput and RTT over the
    fibre floor (NaN: none)."""
    measured = np.isfinite(rtt_ms) | np.isfinite(throughput_bps)
    with_rtt = np.isfinite(rtt_ms) & np.isfinite(km)
    x, y, k = km[with_rtt], rtt_ms[with_rtt], keys[with_rtt]
    fit_pairs = distinct(k)
    slope, intercept = fit_intervals(x, y, k)
    return GroupUncertainty(
        pairs=distinct(keys[measured]),
        inflation_median=NONE if inflation is None else median_interval(inflation, keys),
        rtt_median=median_interval(rtt_ms, keys),
        throughput_median=median_interval(throughput_bps, keys),
        slope=slope,
        intercept=intercept,
        fit_marks=fit_marks(x, y, fit_pairs, free_fit) if fit_pairs else (),
        nearest_km=float(x.min()) if len(x) else NAN,
    )


def loss_interval(lost: float, sent: float) -> Interval:
    """core.stats.wilson as an Interval (NONE for no pings sent)."""
    return Interval(*wilson(lost, sent))


def loss_text(loss_pct: float, samples_sent: float) -> str:
    """A test's loss with its Wilson 95 % interval: "0 % (95 %: 0-16.1 % of 20)"."""
    if not (math.isfinite(loss_pct) and math.isfinite(samples_sent) and samples_sent > 0):
        return f"{loss_pct:g} %" if math.isfinite(loss_pct) else "-"
    lost = round(loss_pct / 100.0 * samples_sent)
    ci = loss_interval(lost, samples_sent)
    return f"{loss_pct:g} % (95 %: {ci.low * 100:.1f}-{ci.high * 100:.1f} % of {samples_sent:g})"
