"""The report's statistics against values computed by hand."""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.core import stats
from orchestrator.core.geo import FIBRE_RTT_MS_PER_KM
from orchestrator.report import analyze
from orchestrator.report.analyze import Measurements


def test_percentile_interpolates_between_closest_ranks():
    # h = (n-1) q/100: [1,2,3,4] p50 -> h=1.5 -> 2.5; p90 -> h=2.7 -> 3 + 0.7 = 3.7
    assert analyze.percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)
    assert analyze.percentile([4, 1, 3, 2], 90) == pytest.approx(3.7)
    assert analyze.percentile([4, 1, 3, 2], 0) == 1
    assert analyze.percentile([4, 1, 3, 2], 100) == 4
    assert analyze.percentile([7.5], 90) == 7.5


def test_median_sorts_numbers_not_strings():
    # As strings "10" < "100" < "9": a string sort would say 100.
    assert analyze.median([9.0, 100.0, 10.0]) == 10.0
    assert analyze.median([1.0, 2.0, 3.0, 10.0]) == 2.5


def test_empty_inputs_are_nan_not_errors():
    assert math.isnan(analyze.median([]))
    assert math.isnan(analyze.mad([]))
    fit = analyze.linear_fit([1.0], [2.0])
    assert math.isnan(fit.slope) and math.isnan(fit.r) and fit.n == 1


def test_percentile_rejects_out_of_range_q():
    with pytest.raises(ValueError):
        analyze.percentile([1.0], 101)


def test_linear_fit_exact_line():
    fit = analyze.linear_fit([0.0, 1.0, 2.0], [1.0, 3.0, 5.0])
    assert fit.slope == pytest.approx(2.0)
    assert fit.intercept == pytest.approx(1.0)
    assert fit.r == pytest.approx(1.0)
    assert fit.at(10.0) == pytest.approx(21.0)


def test_linear_fit_by_hand():
    # x mean 2.5, y mean 3.75; Sxy = 3.5, Sxx = 5, Syy = 4.75
    fit = analyze.linear_fit([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 4.0])
    assert fit.slope == pytest.approx(0.7)
    assert fit.intercept == pytest.approx(2.0)
    assert fit.r == pytest.approx(3.5 / math.sqrt(5 * 4.75))
    assert analyze.pearson_r([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 4.0]) == pytest.approx(
        0.718185, abs=1e-6
    )


def test_negative_correlation_and_flat_cases():
    assert analyze.pearson_r([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    flat_y = analyze.linear_fit([1.0, 2.0, 3.0], [5.0, 5.0, 5.0])
    assert flat_y.slope == 0.0 and math.isnan(flat_y.r)
    flat_x = analyze.linear_fit([2.0, 2.0], [1.0, 3.0])
    assert math.isnan(flat_x.slope)
    # spreads so small that their product underflows to 0 (found by test_fuzz): undefined
    assert math.isnan(analyze.pearson_r([0.0, 1.1195e-129], [0.0, 6.12255e-142]))


def test_large_distances_do_not_cancel():
    # Centred sums keep precision when x is far from 0.
    xs = [1e7 + i for i in range(5)]
    ys = [3.0 * i + 1.0 for i in range(5)]
    fit = analyze.linear_fit(xs, ys)
    assert fit.slope == pytest.approx(3.0)
    assert fit.r == pytest.approx(1.0)


@given(
    st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=40),
    st.floats(-100, 100),
    st.floats(-1e3, 1e3),
)
def test_fit_recovers_any_exact_line(xs, slope, intercept):
    if max(xs) - min(xs) < 1e-3:
        return
    fit = analyze.linear_fit(xs, [intercept + slope * x for x in xs])
    assert fit.slope == pytest.approx(slope, rel=1e-6, abs=1e-6)


def test_mad_by_hand():
    # median 3; deviations 2,1,0,1,97 -> median 1
    assert analyze.mad([1.0, 2.0, 3.0, 4.0, 100.0]) == 1.0


def test_route_inflation():
    # floor at 1000 km: 2000 km / (299,792.458 x 2/3 km/s) = 10.006922 ms
    assert analyze.route_inflation(20.0, 1000.0) == pytest.approx(20.0 / 10.006922, rel=1e-6)
    assert math.isnan(analyze.route_inflation(20.0, 400.0))  # too short to mean anything


def test_outliers_by_hand_on_both_sides():
    residuals = [0.0, 1.0, -1.0, 0.5, -0.5, 20.0]
    # median 0.25; |dev| sorted .25 .25 .75 .75 1.25 19.75 -> MAD .75, sigma 1.11195
    found = analyze.outliers(residuals, k=3.0)
    assert [o.index for o in found] == [5]
    assert found[0].robust_z == pytest.approx(19.75 / (1.4826 * 0.75))
    # Far below the fit is found too (faster than the group: maybe impossible):
    # median -0.25, |dev| .25 1.25 .75 .25 .75 19.75 -> MAD .75
    found = analyze.outliers([0.0, 1.0, -1.0, 0.5, -0.5, -20.0])
    assert [(o.index, o.residual) for o in found] == [(5, -20.0)]
    assert found[0].robust_z == pytest.approx(-19.75 / (1.4826 * 0.75))
    # A minimum excess keeps noise out when the MAD is tiny.
    tight = [0.0, 0.0, 0.0, 0.0, 0.3]
    assert [o.index for o in analyze.outliers(tight)] == [4]
    assert analyze.outliers(tight, min_excess=1.0) == []
    # min_excess bounds the residual itself (what is reported), not the residual
    # over the median: here 4.5 is 8.5 above the median -4 but only 4.5 above the fit.
    below = [-4.0, -4.0, -4.0, -4.0, -4.0, 4.5]
    assert analyze.outliers(below, min_excess=5.0) == []
    found = analyze.outliers(below, min_excess=4.0)
    assert [(o.index, o.residual) for o in found] == [(5, 4.5)]


def test_theil_sen_by_hand():
    # slopes between the 6 pairs of (1,2) (2,4) (3,5) (4,4): 2, 1.5, 0.667, 1, 0, -1
    # -> sorted -1 0 .667 1 1.5 2 -> median (0.667 + 1) / 2 = 0.8333;
    # y - 0.8333 x: 1.1667, 2.3333, 2.5, 0.6667 -> median (1.1667 + 2.3333) / 2 = 1.75
    fit = analyze.theil_sen([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 4.0])
    assert fit.slope == pytest.approx(5.0 / 6.0)
    assert fit.intercept == pytest.approx(1.75)
    assert fit.r == pytest.approx(0.718185, abs=1e-6)  # Pearson's, as linear_fit's
    # one wild point out of five does not move it: the line y = 2x + 1 stays
    fit = analyze.theil_sen([0.0, 1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 5.0, 100.0, 9.0])
    assert fit.slope == pytest.approx(2.0) and fit.intercept == pytest.approx(1.0)
    # equal x give no slope; fewer than two distinct x give none at all
    assert math.isnan(analyze.theil_sen([2.0, 2.0], [1.0, 3.0]).slope)


def test_physical_fit_holds_intercept_and_slope_to_physics():
    # (1000 km, 5 ms) (2000, 12) (3000, 14): slopes 7, 4.5, 2 ms per 1000 km -> median
    # 4.5, below the fibre's 10.006922: raised to it; then y - slope x: 5 - 10.0069,
    # 12 - 20.0138, 14 - 30.0208 -> median -5.0069, below 0: raised to 0
    fit = analyze.physical_rtt_fit([1000.0, 2000.0, 3000.0], [5.0, 12.0, 14.0])
    assert fit.slope * 1000 == pytest.approx(10.006922, rel=1e-6)
    assert fit.intercept == 0.0
    # a physical line is left as it is: 20 ms at 0 km, 15 ms per 1000 km
    fit = analyze.physical_rtt_fit([1000.0, 2000.0, 4000.0], [35.0, 50.0, 80.0])
    assert fit.slope * 1000 == pytest.approx(15.0) and fit.intercept == pytest.approx(20.0)


@given(st.lists(st.integers(-5, 5).map(float), max_size=40))
def test_ranks_are_the_mean_of_the_positions_a_value_spans(values):
    # by the definition: sort, number from 1, and give each value the mean of the
    # positions its copies take
    ordered = sorted(values)
    expected = []
    for v in values:
        positions = [i + 1 for i, w in enumerate(ordered) if w == v]
        expected.append(sum(positions) / len(positions))
    assert analyze.ranks(values) == expected


def test_spearman_by_hand():
    # ranks x 1 2 3 4; y 2 4 5 4 -> ranks 1, 2.5, 4, 2.5 (the two 4s share 2 and 3)
    # Pearson of (1,2,3,4) and (1,2.5,4,2.5), both of mean 2.5: deviations -1.5 -.5 .5 1.5
    # and -1.5 0 1.5 0 -> sxy = 2.25 + .75 = 3, sxx = 5, syy = 4.5
    assert analyze.ranks([2.0, 4.0, 5.0, 4.0]) == [1.0, 2.5, 4.0, 2.5]
    rho = analyze.spearman_rho([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 5.0, 4.0])
    assert rho == pytest.approx(3.0 / math.sqrt(5 * 4.5))
    # monotone but not linear: Spearman 1, Pearson below 1
    xs, ys = [1.0, 2.0, 3.0, 4.0], [1.0, 10.0, 100.0, 1000.0]
    assert analyze.spearman_rho(xs, ys) == pytest.approx(1.0)
    assert analyze.pearson_r(xs, ys) < 0.9


def _m(rows):
    """Measurements from (src, dst, km, rtt_ms, throughput_bps) tuples."""
    regions = sorted({r[0] for r in rows} | {r[1] for r in rows})
    index = {k: i for i, k in enumerate(regions)}
    return Measurements(
        regions=regions,
        sweeps=["s1"],
        src=[index[r[0]] for r in rows],
        dst=[index[r[1]] for r in rows],
        sweep=[0] * len(rows),
        distance_km=[r[2] for r in rows],
        rtt_ms=[r[3] for r in rows],
        throughput_bps=[r[4] for r in rows],
    )


def test_summarize_by_hand():
    nan = float("nan")
    m = _m(
        [
            ("aws:a", "aws:b", 1000.0, 20.0, 1e8),
            ("aws:b", "aws:a", 1000.0, 22.0, 1e8),
            ("aws:a", "gcp:c", 2000.0, 40.0, 1e7),
            ("aws:b", "gcp:c", 3000.0, 60.0, nan),
            ("gcp:c", "aws:a", 2000.0, nan, 1e7),
        ]
    )
    by = {s.cloud_pair: s for s in analyze.summarize(m)}
    assert [s.cloud_pair for s in analyze.summarize(m)] == list(analyze.GROUPS)
    assert by["all"].n == 5 and by["aws-aws"].n == 2 and by["aws-gcp"].n == 2
    assert by["gcp-aws"].n == 1 and by["gcp-gcp"].n == 0
    # aws-gcp: (2000, 40), (3000, 60) -> 20 ms per 1000 km through 0
    row = by["aws-gcp"].row()
    assert row["rtt_slope_ms_per_1000km"] == pytest.approx(20.0)
    assert row["rtt_intercept_ms"] == pytest.approx(0.0, abs=1e-9)
    assert row["rtt_distance_r"] == pytest.approx(1.0)
    assert row["rtt_distance_spearman"] == pytest.approx(1.0)
    # inflation: 40 / 20.013844 and 60 / 30.020766, both 1.998617
    assert row["route_inflation_median"] == pytest.approx(2.0 / 1.0006922, rel=1e-6)
    assert row["route_inflation_p25"] == pytest.approx(row["route_inflation_p75"])
    assert row["rtt_median_over_tests_ms"] == pytest.approx(50.0)
    assert row["rtt_p90_over_tests_ms"] == pytest.approx(58.0)  # 40 + 0.9 * 20
    # one throughput value only: no fit, p50 = that value
    assert math.isnan(row["log_throughput_distance_r"])
    assert row["throughput_median_over_tests_bps"] == 1e7
    # all: log10 throughput 8, 8, 7, 7 at 1000, 1000, 2000, 2000 km: -1 per 1000 km
    all_row = by["all"].row()
    assert all_row["log_throughput_slope_per_1000km"] == pytest.approx(-1.0)
    assert all_row["log_throughput_intercept"] == pytest.approx(9.0)
    assert all_row["log_throughput_distance_r"] == pytest.approx(-1.0)
    # all RTT: 20, 22, 40, 60 -> p50 = 31
    assert all_row["rtt_median_over_tests_ms"] == pytest.approx(31.0)
    # Theil-Sen over (1000,20) (1000,22) (2000,40) (3000,60): slopes between distinct x
    # 20, 20, 18, 19, 20 ms per 1000 km -> median 20; y - 0.02 x: 0, 2, 0, 0 -> 0
    assert all_row["rtt_slope_ms_per_1000km"] == pytest.approx(20.0)
    assert all_row["rtt_intercept_ms"] == pytest.approx(0.0, abs=1e-9)
    assert math.isnan(by["gcp-gcp"].row()["rtt_distance_r"])


def test_find_outliers_flags_the_detour():
    rows = []
    for i in range(10):
        km = 1000.0 * (i + 1)
        rows.append((f"aws:r{i}", f"gcp:r{i}", km, 5.0 + km / 100.0 * 1.5, 1e8))
    rows.append(("aws:x", "gcp:y", 5000.0, 5.0 + 75.0 + 60.0, 1e8))  # 60 ms detour
    m = _m(rows)
    found = analyze.find_outliers(m)
    assert [(o.src, o.dst) for o in found] == [("aws:x", "gcp:y")]
    o = found[0]
    assert o.cloud_pair == "aws-gcp" and o.n == 1
    assert o.excess_ms == pytest.approx(o.rtt_ms - o.fit_rtt_ms)
    assert o.excess_ms > 40.0
    assert o.route_inflation == pytest.approx(140.0 / 50.034610, rel=1e-6)  # floor 5000 km


def test_outlier_fit_counts_each_pair_once_by_hand():
    # Four pairs on the line rtt = 10 ms per 1000 km; a fifth pair measured in
    # 20 sweeps sits 50 ms above it. A fit over every row would lean towards the
    # detour (it is 20 of 24 rows) and hide it; one median per pair does not.
    rows = [
        (f"aws:r{i}", f"gcp:r{i}", km, km / 100.0, 1e8) for i, km in enumerate((1e3, 2e3, 4e3, 5e3))
    ]
    rows += [("aws:x", "gcp:y", 3000.0, 80.0, 1e8)] * 20
    m = _m(rows)
    found = analyze.find_outliers(m)
    assert [(o.src, o.dst, o.n) for o in found] == [("aws:x", "gcp:y", 20)]
    # Theil-Sen through (1,10) (2,20) (3,80) (4,40) (5,50), x in 1000 km: the ten
    # slopes -40 -15 10 10 10 10 10 10 35 60 -> median 10 ms per 1000 km, below the
    # fibre's 10.006922: raised to it; y - slope x has median -0.0138, raised to 0: the
    # fit at 3000 km is 30.0208 ms (least squares would say 40).
    o = found[0]
    assert o.fit_rtt_ms == pytest.approx(30.020767, rel=1e-6)
    assert o.excess_ms == pytest.approx(80.0 - 30.020767, rel=1e-6)
    assert o.rtt_ms == 80.0


def test_find_outliers_flags_a_pair_below_the_fit():
    # ten pairs on 5 ms + 15 ms per 1000 km, one 40 ms faster than its distance allows
    rows = [
        (f"aws:r{i}", f"gcp:r{i}", 1000.0 * (i + 1), 5.0 + 15.0 * (i + 1), 1e8) for i in range(10)
    ]
    rows.append(("aws:x", "gcp:y", 5000.0, 5.0 + 75.0 - 40.0, 1e8))
    found = analyze.find_outliers(_m(rows))
    assert [(o.src, o.dst) for o in found] == [("aws:x", "gcp:y")]
    assert found[0].excess_ms == pytest.approx(-40.0) and found[0].robust_z < 0


# --- the numpy statistics against their plain definitions ------------------------


def _theil_sen_by_definition(xs, ys):
    """The median of the slopes of every two points of distinct x (or of the pairs drawn
    by random.Random(0), two draws per pair, above THEIL_SEN_MAX_PAIRS), then the median
    of y - slope x: one pair at a time, in plain Python."""
    n = len(xs)
    if n * (n - 1) // 2 <= analyze.THEIL_SEN_MAX_PAIRS:
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    else:
        draw = random.Random(0).random
        pairs = [(int(draw() * n), int(draw() * n)) for _ in range(analyze.THEIL_SEN_MAX_PAIRS)]
    slopes = [(ys[j] - ys[i]) / (xs[j] - xs[i]) for i, j in pairs if xs[i] != xs[j]]
    slope = stats.median(slopes)
    return slope, stats.median([y - slope * x for x, y in zip(xs, ys, strict=True)])


@pytest.mark.parametrize("n", [2, 7, 300, 2000])
def test_numpy_fits_and_ranks_equal_their_plain_definitions(n):
    # distances repeat (a pair's tests share one), RTTs tie: what a sweep's columns hold
    rng = random.Random(n)
    xs = [float(rng.choice((600, 1200, 1200, 5000, 9000))) for _ in range(n)]
    ys = [round(x / 100 + rng.choice((0.0, 0.5, 0.5, 3.0)), 1) for x in xs]
    fit = analyze.theil_sen(xs, ys)
    # to the bit (repr: NaN, for two points of one x, equals itself there)
    assert repr((fit.slope, fit.intercept)) == repr(_theil_sen_by_definition(xs, ys))
    assert fit.r == pytest.approx(stats.pearson_r(xs, ys), rel=1e-12, nan_ok=True)
    ls = analyze.linear_fit(xs, ys)
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    sxy = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    if sxx:
        assert ls.slope == pytest.approx(sxy / sxx, rel=1e-12)
        assert ls.intercept == pytest.approx(my - sxy / sxx * mx, rel=1e-9, abs=1e-12)
    rx = analyze.ranks(xs)
    assert rx == [sum(1 for w in xs if w < v) + (xs.count(v) + 1) / 2 for v in xs]
    assert analyze.spearman_rho(xs, ys) == pytest.approx(
        stats.pearson_r(rx, analyze.ranks(ys)), rel=1e-12, nan_ok=True
    )


def test_the_summary_equals_the_plain_definitions_with_ties_and_missing_values():
    rng = random.Random(7)
    regions = ["aws:a", "aws:b", "gcp:c", "gcp:d"]
    rows = []
    for i in range(3000):
        s, d = rng.sample(range(4), 2)
        km = 100.0 + 1000.0 * s + 300.0 * d  # some pairs under INFLATION_MIN_KM's 500 km
        rtt = float(rng.choice((km / 100, km / 100, km / 80))) if i % 9 else math.nan
        thr = float(rng.choice((1e8, 2e8, 2e8))) if i % 4 else math.nan
        rows.append((regions[s], regions[d], km, rtt, thr))
    m = _m(rows)
    for s in analyze.summarize(m):
        picked = [r for r in rows if s.cloud_pair in ("all", f"{r[0][:3]}-{r[1][:3]}")]
        rtts = [r[3] for r in picked if r[3] == r[3]]
        thrs = [r[4] for r in picked if r[4] == r[4]]
        infl = [r[3] / (r[2] * FIBRE_RTT_MS_PER_KM) for r in picked if r[3] == r[3] and r[2] >= 500]
        assert s.n == len(picked)
        assert [s.rtt_median_over_tests_ms, s.rtt_p90_over_tests_ms] == stats.percentiles(
            rtts, (50, 90)
        )
        assert [
            s.throughput_median_over_tests_bps,
            s.throughput_p90_over_tests_bps,
        ] == stats.percentiles(thrs, (50, 90))
        assert [
            s.route_inflation_p25,
            s.route_inflation_median,
            s.route_inflation_p75,
        ] == stats.percentiles(infl, (25, 50, 75))
        with_rtt = [r for r in picked if r[3] == r[3]]
        slope, _intercept = _theil_sen_by_definition(
            [r[2] for r in with_rtt], [r[3] for r in with_rtt]
        )
        assert s.rtt_fit.slope == max(slope, FIBRE_RTT_MS_PER_KM) and s.rtt_fit.slope > 0


@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 5), st.booleans()), min_size=1, max_size=60
    ),
    st.booleans(),
)
def test_rows_by_distance_are_in_order_of_value_however_found(rows, vary):
    # a distance the same on every row of a pair is ordered by its pairs (no float sort);
    # one that varies within a pair by a sort: either way the values come out ascending
    km = {(s, d): float((s * 7 + d * 3) % 5) * 1000.0 + 0.5 for s in range(6) for d in range(6)}
    km[(5, 5)] = math.nan  # a pair without a distance: last
    values = [km[(s, d)] + (i if vary and odd else 0) for i, (s, d, odd) in enumerate(rows)]
    m = Measurements(
        regions=[f"aws:r{i}" for i in range(6)],
        sweeps=["s"],
        src=[s for s, _d, _o in rows],
        dst=[d for _s, d, _o in rows],
        sweep=[0] * len(rows),
        distance_km=values,
        rtt_ms=[1.0] * len(rows),
        throughput_bps=[1.0] * len(rows),
    )
    order = analyze.by_value(m, "distance_km")
    assert sorted(order.tolist()) == list(range(len(rows)))
    got = [values[i] for i in order]
    want = sorted(v for v in values if not math.isnan(v))
    assert got[: len(want)] == want and all(math.isnan(v) for v in got[len(want) :])
