"""The report's statistics against values computed by hand."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    assert analyze.route_inflation(20.0, 1000.0) == pytest.approx(2.0)  # floor is 10 ms
    assert math.isnan(analyze.route_inflation(20.0, 400.0))  # too short to mean anything


def test_high_outliers_by_hand():
    residuals = [0.0, 1.0, -1.0, 0.5, -0.5, 20.0]
    # median 0.25; |dev| sorted .25 .25 .75 .75 1.25 19.75 -> MAD .75, sigma 1.11195
    found = analyze.high_outliers(residuals, k=3.0)
    assert [o.index for o in found] == [5]
    assert found[0].robust_z == pytest.approx(19.75 / (1.4826 * 0.75))
    # Far below the fit is not a detour.
    assert analyze.high_outliers([0.0, 1.0, -1.0, 0.5, -0.5, -20.0]) == []
    # A minimum excess keeps noise out when the MAD is tiny.
    tight = [0.0, 0.0, 0.0, 0.0, 0.3]
    assert [o.index for o in analyze.high_outliers(tight)] == [4]
    assert analyze.high_outliers(tight, min_excess=1.0) == []
    # min_excess bounds the residual itself (what is reported), not the residual
    # over the median: here 4.5 is 8.5 above the median -4 but only 4.5 above the fit.
    below = [-4.0, -4.0, -4.0, -4.0, -4.0, 4.5]
    assert analyze.high_outliers(below, min_excess=5.0) == []
    found = analyze.high_outliers(below, min_excess=4.0)
    assert [(o.index, o.residual) for o in found] == [(5, 4.5)]


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
    # inflation: 40/20 = 2.0 and 60/30 = 2.0
    assert row["route_inflation_median"] == pytest.approx(2.0)
    assert row["rtt_p50_ms"] == pytest.approx(50.0)
    assert row["rtt_p90_ms"] == pytest.approx(58.0)  # 40 + 0.9 * 20
    # one throughput value only: no fit, p50 = that value
    assert math.isnan(row["log_throughput_distance_r"])
    assert row["throughput_p50_bps"] == 1e7
    # all: log10 throughput 8, 8, 7, 7 at 1000, 1000, 2000, 2000 km: -1 per 1000 km
    all_row = by["all"].row()
    assert all_row["log_throughput_slope_per_1000km"] == pytest.approx(-1.0)
    assert all_row["log_throughput_intercept"] == pytest.approx(9.0)
    assert all_row["log_throughput_distance_r"] == pytest.approx(-1.0)
    # all RTT: 20, 22, 40, 60 -> p50 = 31
    assert all_row["rtt_p50_ms"] == pytest.approx(31.0)
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
    assert o.route_inflation == pytest.approx(140.0 / 50.0)


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
    # Least squares through (1,10) (2,20) (3,80) (4,40) (5,50), x in 1000 km:
    # mean x 3, mean y 40, sxy = (-2)(-30) + (-1)(-20) + 0 + 1*0 + 2*10 = 100, sxx = 10
    # -> slope 10 ms per 1000 km, intercept 10: the fit at 3000 km is 40 ms.
    o = found[0]
    assert o.fit_rtt_ms == pytest.approx(40.0)
    assert o.excess_ms == pytest.approx(40.0)
    assert o.rtt_ms == 80.0
