"""The uncertainty of a report's figures (report.uncertainty) and the network tier as a
key: known answers by hand, and the vendored public data (Skyplane's four tier
combinations) read as `report --input` reads a converted file."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from orchestrator.core import paths
from orchestrator.core.geo import FIBRE_RTT_MS_PER_KM
from orchestrator.exchange import public_data
from orchestrator.model.catalog import load_catalog
from orchestrator.report import analyze, build, charts, uncertainty
from orchestrator.results import files as store
from orchestrator.results import tiers
from testkit import synthetic


@pytest.fixture(scope="module")
def skyplane_csv(tmp_path_factory):
    """Skyplane's AWS/GCP rows as `history convert` writes them (with network_tier)."""
    rows = public_data.convert(
        "skyplane", (paths.DATA / "skyplane-latency-2022.csv").read_text(), load_catalog()
    )
    path = tmp_path_factory.mktemp("sky") / "skyplane.csv"
    path.write_text(store.csv_text(rows, extra=public_data.EXTRA_COLUMNS))
    return path


def test_a_loss_is_quoted_with_its_wilson_interval():
    # core.stats.wilson's known values are tested in tests/unit/core/test_stats.py
    assert not uncertainty.loss_interval(0, 0).known
    assert uncertainty.loss_interval(1, 20).high == pytest.approx(0.2361, abs=1e-4)
    assert uncertainty.loss_text(0.0, 20) == "0 % (95 %: 0.0-16.1 % of 20)"


def test_the_bootstrap_resamples_pairs_not_tests():
    # 3 pairs of 10 identical tests each: 30 tests, but 3 points of evidence. Resampling
    # tests would give a median interval of 110-110; resampling pairs spans the pairs.
    keys = np.repeat(np.arange(3), 10)
    values = np.repeat([100.0, 110.0, 120.0], 10)
    ci = uncertainty.median_interval(values, keys)
    assert ci.low <= 105.0 and ci.high >= 115.0
    # seeded: the same interval every time; one pair has none
    assert uncertainty.median_interval(values, keys) == ci
    assert not uncertainty.median_interval(values[:10], keys[:10]).known


def test_a_fit_over_few_pairs_or_a_clamped_one_is_marked():
    # 3 pairs whose RTT falls with distance: the slope is held at the fibre's
    km = np.array([1000.0, 2000.0, 3000.0])
    rtt = np.array([80.0, 70.0, 60.0])
    u = uncertainty.of_group(np.arange(3), km, rtt, np.full(3, np.nan), analyze.theil_sen)
    assert u.fit_marks == (uncertainty.FEW_PAIRS, uncertainty.SLOPE_CLAMPED)
    assert u.pairs == 3 and u.row()["rtt_fit_marks"] == "few_pairs;slope_clamped"
    fit = analyze.physical_rtt_fit(km, rtt)
    assert fit.slope == FIBRE_RTT_MS_PER_KM
    # 5 pairs on a physical line: no mark
    km5 = np.array([1000.0, 2000.0, 3000.0, 4000.0, 5000.0])
    good = uncertainty.of_group(
        np.arange(5), km5, 5 + 0.015 * km5, np.full(5, np.nan),
        analyze.theil_sen,
    )  # fmt: skip
    assert good.fit_marks == ()
    assert good.intercept_text(5.0) == "RTT at 0 km = 5.0 ms"


def test_the_tiers_are_never_pooled_and_each_pair_counts_once_per_group(skyplane_csv):
    loaded = build.load_inputs(input_files=[skyplane_csv], include_flagged=True)
    summaries = {s.cloud_pair: s for s in analyze.summarize(loaded.data)}
    gcp = {name: s.n for name, s in summaries.items() if name.startswith("gcp-gcp")}
    # the issue: gcp->gcp pooled 1,684 rows of four tier combinations; apart, each
    # directed pair once in each
    assert gcp == {
        "gcp-gcp": 702,
        "gcp-gcp premium/standard": 567,
        "gcp-gcp standard": 420,
        "gcp-gcp standard/premium": 567,
    }
    for s in summaries.values():
        if s.n:
            u = s.uncertainty
            assert u is not None and u.pairs == s.n
            # every interval holds its figure, and none is empty
            assert u.rtt_median.low <= s.rtt_median_over_tests_ms <= u.rtt_median.high
            assert u.inflation_median.low <= s.route_inflation_median <= u.inflation_median.high
            assert u.slope.low <= s.rtt_fit.slope <= u.slope.high
            assert u.rtt_median.width > 0 and u.slope.width > 0
    # 'all' is the default tier's rows alone
    assert summaries["all"].n == sum(summaries[g].n for g in analyze.GROUPS[1:])
    groups = analyze.group_rows(loaded.data)
    codes = analyze.tier_codes(loaded.data)
    for name, rows in groups.items():
        assert len({loaded.data.tiers[c] for c in codes[rows]}) <= 1, name


def test_an_intercept_far_from_the_data_is_not_called_rtt_at_0_km(skyplane_csv, tmp_path):
    # the issue: --cloud-pair aws:gcp --min-km 10000 headlined "RTT at 0 km = 47.7 ms",
    # 10,000 km outside its data
    loaded = build.load_inputs(input_files=[skyplane_csv], keep=lambda src, dst, km: km >= 10_000)
    report = build.write_report(loaded, tmp_path / "r", png=False)
    aws_gcp = next(s for s in report.summaries if s.cloud_pair == "aws-gcp")
    u = aws_gcp.uncertainty
    assert u is not None and u.nearest_km >= 10_000 and not u.intercept_at_zero
    text = u.intercept_text(aws_gcp.rtt_fit.intercept)
    assert text.startswith("intercept ") and "not an RTT at 0 km" in text
    cells = uncertainty.table_cells(aws_gcp.row())
    assert cells["rtt_intercept"].startswith("(")
    # in summary.csv and report.json too, with the intervals and the pairs
    with (tmp_path / "r" / "summary.csv").open() as f:
        row = next(r for r in csv.DictReader(f) if r["cloud_pair"] == "aws-gcp")
    assert row["rtt_intercept_is_rtt_at_0km"] == "False"
    assert int(row["pairs"]) == u.pairs > 0
    low, high = (
        float(row["rtt_slope_ci_low_ms_per_1000km"]),
        float(row["rtt_slope_ci_high_ms_per_1000km"]),
    )
    assert low <= float(row["rtt_slope_ms_per_1000km"]) <= high
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    js = next(s for s in doc["summary"] if s["cloud_pair"] == "aws-gcp")
    assert js["rtt_intercept_is_rtt_at_0km"] is False and js["pairs"] == u.pairs


def test_a_marked_fit_is_marked_on_its_chart():
    regions = ["gcp:us-east1", "gcp:europe-west1", "gcp:asia-east1"]
    m = analyze.Measurements(
        regions=regions, sweeps=["s"], src=[0, 1, 2], dst=[1, 2, 0], sweep=[0, 0, 0],
        distance_km=[1000.0, 2000.0, 3000.0], rtt_ms=[80.0, 70.0, 60.0],
        throughput_bps=[math.nan] * 3,
    )  # fmt: skip
    summaries = {s.cloud_pair: s for s in analyze.summarize(m)}
    groups = analyze.group_rows(m)
    doc = charts.distance_figure(m, "gcp-gcp", groups, summaries, emulated=False)
    (fit,) = [t for t in doc["data"] if t.get("meta", {}).get("filter") == "fit"]
    assert "3 pairs" in fit["name"] and "fewer than 5 distinct region pairs" in fit["name"]
    assert "slope held at the fibre's" in fit["name"]


def test_a_sweep_s_standard_tier_rows_are_a_group_apart():
    assert tiers.for_sweep("aws", "gcp", "standard") == "PREMIUM/STANDARD"
    assert tiers.for_sweep("aws", "aws", "standard") == "PREMIUM"
    assert tiers.group_name("gcp-gcp", "STANDARD") == "gcp-gcp standard"
    assert tiers.group_name("gcp-gcp", "") == "gcp-gcp"


def test_a_standard_tier_sweep_is_reported_apart(tmp_path):
    # a cloud sweep whose GCP hosts used Standard (its record's cloud option)
    folder = tmp_path / "20261120T0000Z-a000"
    rows = [
        {"sweep_id": folder.name, "status": "ok", "src_cloud": s.split(":")[0],
         "src_region": s.split(":")[1], "dst_cloud": d.split(":")[0],
         "dst_region": d.split(":")[1], "rtt_p50_ms": rtt, "backend": "gcp"}
        for s, d, rtt in (
            ("gcp:us-east1", "gcp:europe-west1", 95.0),
            ("aws:us-east-1", "gcp:europe-west1", 80.0),
            ("aws:us-east-1", "aws:eu-west-1", 70.0),
        )
    ]  # fmt: skip
    store.write_rows(folder, rows)
    record = synthetic.sweep_record(folder.name, "gcp", cloud_options={"network_tier": "STANDARD"})
    (folder / "sweep.json").write_text(json.dumps(record))
    loaded = build.load_inputs(sweep_dirs_=[folder])
    names = {s.cloud_pair: s.n for s in analyze.summarize(loaded.data) if s.n}
    assert names == {
        "all": 1, "aws-aws": 1, "gcp-gcp standard": 1, "aws-gcp premium/standard": 1,
    }  # fmt: skip


def test_the_weighted_resamples_are_the_medians_of_the_pairs_drawn():
    # every resample at once (counts per pair) gives what drawing the pairs and taking
    # the median of all their tests gives, draw by draw
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 12, 90) * 5  # 12 pairs, uneven tests, sparse key values
    values = rng.normal(100.0, 20.0, 90).round(1)  # ties too
    distinct = np.unique(keys)
    picks = np.random.default_rng(uncertainty.SEED).integers(0, 12, (uncertainty.DRAWS, 12))
    brute = [
        float(np.median(np.concatenate([values[keys == distinct[p]] for p in draw])))
        for draw in picks
    ]
    assert uncertainty.median_interval(values, keys) == uncertainty._interval(brute)


def test_a_large_group_is_thinned_evenly_within_each_pair():
    # 4 pairs of 1,000 tests, interleaved as measured; a pair of 3 keeps all 3
    keys = np.r_[np.tile(np.arange(4), 1000), [9, 9, 9]]
    values = np.arange(len(keys), dtype=np.float64)
    keep = uncertainty.thinned(keys, values, cap=40)
    assert sorted(set(keys[keep])) == [0, 1, 2, 3, 9] and len(keep) == 4 * 8 + 3
    # pair 0's 8 tests: its 62nd, 187th, ... (the (j + 0.5) / 8 points of its 1,000)
    assert (keep[keys[keep] == 0] // 4).tolist() == [62, 187, 312, 437, 562, 687, 812, 937]
    assert uncertainty.distinct(keys) == 5 and uncertainty.distinct(keys * 100_000) == 5
