"""Report figures built from hand-made measurements: what the time series draws and what
its picker holds, what the hovers carry."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st
from plotly.subplots import make_subplots

from orchestrator.core import stats
from orchestrator.report import analyze, charts

NAN = math.nan
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"


def _measurements(rows, regions=(A, B, C), sweeps=("s0", "s1", "s2")):
    """rows: (src, dst, sweep index, rtt ms, throughput bit/s)."""
    index = {r: i for i, r in enumerate(regions)}
    return analyze.Measurements(
        regions=list(regions),
        sweeps=list(sweeps),
        src=[index[r[0]] for r in rows],
        dst=[index[r[1]] for r in rows],
        sweep=[r[2] for r in rows],
        distance_km=[5000.0] * len(rows),
        rtt_ms=[r[3] for r in rows],
        throughput_bps=[r[4] for r in rows],
    )


STARTED = {"s0": "2026-11-20T00:00:00.000Z", "s1": "2026-11-21T00:00:00.000Z",
           "s2": "2026-11-22T00:00:00.000Z"}  # fmt: skip


def test_the_time_series_draws_the_pairs_that_moved_most_and_holds_every_pair():
    # A -> B moves 50 ms, B -> A 20, A -> C 5, C -> A 1; B -> C only once (not a series)
    rows = [
        (A, B, 0, 100.0, 4e8), (A, B, 1, 150.0, 3e8), (A, B, 2, 120.0, 2e8),
        (B, A, 0, 100.0, 4e8), (B, A, 2, 120.0, 4e8),
        (A, C, 0, 70.0, 9e8), (A, C, 1, 75.0, 9e8),
        (C, A, 0, 70.0, 9e8), (C, A, 1, 71.0, 9e8),
        (B, C, 0, 30.0, 9e8),
    ]  # fmt: skip
    fig = charts.timeseries_figure(_measurements(rows), STARTED, emulated=False, max_series=2)
    doc = fig
    drawn = [t["name"] for t in doc["data"] if t["yaxis"] == "y"]
    assert drawn == [f"{A} → {B}", f"{B} → {A}"]
    assert (
        "The 2 pairs whose median RTT moved most across 3 sweeps (of 4 pairs"
        in (doc["layout"]["title"]["text"])
    )
    p = doc["layout"]["meta"]["picker"]
    assert p["shown"] == 2 and p["x"] == list(STARTED.values())
    assert p["pairs"] == [f"{A} → {B}", f"{B} → {A}", f"{A} → {C}", f"{C} → {A}"]
    assert p["codes"] == ["aws-gcp", "gcp-aws", "aws-aws", "aws-aws"]
    # null where a sweep missed the pair; throughput in Mbit/s
    assert p["rtt"][1] == [100.0, None, 120.0] and p["rtt"][2] == [70.0, 75.0, None]
    assert p["tput"][0] == [400.0, 300.0, 200.0]
    assert (p["sweeps"], p["sweeps_kept"]) == (3, 3)
    # a tight limit keeps the latest sweeps that fit (at least two)
    fig = charts.timeseries_figure(
        _measurements(rows), STARTED, emulated=False, max_series=2, picker_values=8
    )
    p = fig["layout"]["meta"]["picker"]
    assert (p["sweeps"], p["sweeps_kept"]) == (3, 2) and p["x"] == list(STARTED.values())[1:]
    assert p["rtt"][0] == [150.0, 120.0]


def test_latency_only_time_series_has_no_throughput_in_its_picker():
    rows = [(A, B, 0, 100.0, NAN), (A, B, 1, 110.0, NAN)]
    doc = charts.timeseries_figure(_measurements(rows), STARTED, emulated=False)
    assert "tput" not in doc["layout"]["meta"]["picker"]
    assert not any(k.startswith("yaxis2") for k in doc["layout"])


def _with_extras(rows):
    """rows: (src, dst, sweep, rtt ms, bit/s, p90 ms, loss %, samples, UNIX s)."""
    m = _measurements([r[:5] for r in rows])
    m.rtt_p90_ms = [r[5] for r in rows]
    m.loss_pct = [r[6] for r in rows]
    m.rtt_samples = [r[7] for r in rows]
    m.started_s = [r[8] for r in rows]
    return m


T = 1795000000.0  # 2026-11-18T11:06:40Z
ROWS = [
    (A, B, 0, 100.0, 4e8, 104.26, 0.0, 20, T),
    (A, B, 1, 110.0, 3e8, 113.0, 5.0, 19, T + 86400.5),
    (A, B, 2, 130.0, 2e8, NAN, NAN, NAN, NAN),  # an import without the extras
    (B, A, 0, 90.0, NAN, 95.0, 10.0, 18, T + 60),
]
CITIES = {A: "Ashburn", B: "St. Ghislain"}


def test_every_point_hovers_with_its_tests_p90_loss_samples_and_time():
    m = _with_extras(ROWS)
    groups = analyze.group_rows(m)
    doc = charts.distance_figure(m, "all", groups, {}, emulated=False, cities=CITIES)
    (rtt,) = [t for t in doc["data"] if t.get("meta", {}).get("cloud_pair") == "aws-gcp"
              and t["xaxis"] == "x" and t.get("mode") == "markers"]  # fmt: skip
    assert list(rtt["text"]) == [f"{A} (Ashburn) → {B} (St. Ghislain)"] * 3
    # a test's p90 only from samples enough for it (the matrix's rule: 100), and its loss
    # with Wilson's 95 % interval: none lost of 20 pings is 0-16.1 %, not 0 %
    assert [list(c) for c in rtt["customdata"]] == [
        ["— (20 samples; a p90 needs 100)", "0 % (95 %: 0.0-16.1 % of 20 pings)", 20,
         "2026-11-18T11:06:40.000Z"],
        ["— (19 samples; a p90 needs 100)", "5 % (95 %: 0.9-23.6 % of 20 pings)", 19,
         "2026-11-19T11:06:40.500Z"],
        ["—", "—", "—", "—"],
    ]  # fmt: skip
    for part in (" km, %{y:.1f} ms", "RTT p90 %{customdata[0]}", "loss %{customdata[1]}",
                 "n %{customdata[2]} samples", "<br>%{customdata[3]}"):  # fmt: skip
        assert part in rtt["hovertemplate"], part
    # without the extras (a loader that did not read them): no customdata, no placeholders
    bare = _measurements([r[:5] for r in ROWS])
    doc = charts.distance_figure(bare, "all", analyze.group_rows(bare), {}, emulated=False)
    assert all("customdata" not in t["hovertemplate"] for t in doc["data"] if "hovertemplate" in t)


def test_heatmap_and_map_hovers_have_the_tests_p90_loss_and_newest_time():
    m = _with_extras(ROWS)
    coords = {A: (39.0, -77.5), B: (50.5, 3.8), C: (53.3, -6.3)}
    doc = charts.heatmap_figure(m, coords, "rtt", emulated=False, cities=CITIES)
    (heat,) = doc["data"]
    # by cloud, then west to east: aws:us-east-1, gcp:europe-west1
    assert list(heat["x"]) == [f"{A} (Ashburn)", f"{B} (St. Ghislain)"]
    km = heat["customdata"][0][1][0]
    # A -> B: 3 tests, p90 of 100, 110, 130 = 126 ms; loss median of 0 and 5; newest known
    assert heat["customdata"][0][1][1:] == [3, 126.0, 2.5, "2026-11-19T11:06:40.500Z"]
    assert heat["customdata"][1][0][1:] == [1, 90.0, 10.0, "2026-11-18T11:07:40.000Z"]
    assert heat["customdata"][0][0] is None and isinstance(km, int)
    assert "p90 %{customdata[2]} ms over %{customdata[1]} tests" in heat["hovertemplate"]
    assert "newest %{customdata[4]}" in heat["hovertemplate"]
    doc = charts.map_figure(m, coords, emulated=False, cities=CITIES)
    (mid,) = [t for t in doc["data"] if t.get("name", "").startswith("pairs (hover")]
    # both directions together: 4 tests, p90 of 90, 100, 110, 130 = 124 ms
    assert [list(c) for c in mid["customdata"]] == [[4, 124.0, 5.0, "2026-11-19T11:06:40.500Z"]]
    assert mid["text"][0].startswith(f"{A} (Ashburn) ↔ {B} (St. Ghislain)")
    assert "p90 %{customdata[1]} ms over %{customdata[0]} tests" in mid["hovertemplate"]


def _random_measurements(seed, distance_varies):
    """Four regions, three sweeps, ties, missing values and missing hover extras."""
    rng = random.Random(seed)
    regions = [A, B, C, "gcp:us-east4"]
    rows = []
    for i in range(2000):
        s, d = rng.sample(range(4), 2)
        km = 1000.0 * (s + 1) + 10.0 * d + (rng.choice((0.0, 25.0)) if distance_varies else 0.0)
        rows.append((
            s, d, i % 3, km,
            rng.choice((50.0, 50.0, 61.5, NAN, 70.25)),
            rng.choice((1e8, 3e8, 3e8, NAN)),
            rng.choice((0.0, 2.5, 2.5, NAN)),
            rng.choice((T, T + 0.5, T + 86400.25, NAN)),
        ))  # fmt: skip
    m = analyze.Measurements(
        regions=regions,
        sweeps=["s0", "s1", "s2"],
        src=[r[0] for r in rows],
        dst=[r[1] for r in rows],
        sweep=[r[2] for r in rows],
        distance_km=[r[3] for r in rows],
        rtt_ms=[r[4] for r in rows],
        throughput_bps=[r[5] for r in rows],
        rtt_p90_ms=[NAN] * len(rows),
        loss_pct=[r[6] for r in rows],
        rtt_samples=[NAN] * len(rows),
        started_s=[r[7] for r in rows],
    )
    return m, rows


@pytest.mark.parametrize("distance_varies", [False, True])
@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("name", ["rtt_ms", "throughput_bps"])
def test_pair_statistics_equal_the_plain_definitions(name, ordered, distance_varies):
    m, rows = _random_measurements(3, distance_varies)
    value = 4 if name == "rtt_ms" else 5
    got = charts.pair_stats(m, name, ordered, orders={})
    by_pair: dict = {}
    for r in rows:
        key = (r[0], r[1]) if ordered else (min(r[0], r[1]), max(r[0], r[1]))
        by_pair.setdefault(key, []).append(r)
    with_value = {k: [r for r in v if r[value] == r[value]] for k, v in by_pair.items()}
    assert got.median == {
        k: stats.median([r[value] for r in v]) for k, v in with_value.items() if v
    }
    assert got.distance == {k: stats.median([r[3] for r in v]) for k, v in by_pair.items()}
    for key, tests in with_value.items():
        losses = [r[6] for r in tests if r[6] == r[6]]
        times = [r[7] for r in tests if r[7] == r[7]]
        assert got.extra[key] == [
            len(tests),
            stats.percentile([r[value] for r in tests], 90.0),
            round(stats.median(losses), 2) if losses else charts.MISSING,
            charts.iso_time(max(times)) if times else charts.MISSING,
        ]


def test_sweep_medians_equal_the_plain_definitions():
    m, rows = _random_measurements(5, True)
    got = charts.sweep_medians(m)
    expected: dict = {}
    for r in rows:
        cell = expected.setdefault((m.regions[r[0]], m.regions[r[1]]), {})
        cell.setdefault(m.sweeps[r[2]], []).append(r)
    assert list(got) == list(expected)  # pairs in order of their first row
    for pair, per_sweep in expected.items():
        assert list(got[pair]) == list(per_sweep)
        for sweep, tests in per_sweep.items():
            rtt = [r[4] for r in tests if r[4] == r[4]]
            thr = [r[5] for r in tests if r[5] == r[5]]
            assert repr(got[pair][sweep]) == repr((stats.median(rtt), stats.median(thr)))


def test_every_map_line_at_once_is_the_great_circle_of_each():
    # antipodes-free pairs of the catalog's kind, one place to itself, across the antimeridian
    ends = [
        ((39.0, -77.5), (50.5, 3.8)),
        ((-33.9, 151.2), (37.4, -122.1)),
        ((1.3, 103.8), (1.3, 103.8)),
        ((64.1, -21.9), (-34.6, -58.4)),
        ((35.7, 139.7), (52.4, 4.9)),
    ]
    lats, lons = charts.great_circles([a for a, _b in ends], [b for _a, b in ends])
    assert lats.shape == lons.shape == (len(ends), charts.ROUTE_POINTS)
    for k, (a, b) in enumerate(ends):
        la, lo = charts.great_circle(a, b)
        assert lats[k].tolist() == pytest.approx(la, abs=1e-9)
        assert lons[k].tolist() == pytest.approx(lo, abs=1e-9)
        assert (la[0], lo[0]) == pytest.approx(a) and (la[-1], lo[-1]) == pytest.approx(b)


def _plotly_layout(kind, both, emulated):
    """A figure's layout as plotly builds it (make_subplots, update_*, charts.label)."""
    if kind == "distance":
        fig = make_subplots(
            rows=1,
            cols=2 if both else 1,
            subplot_titles=(
                ("RTT (each test's median) against distance", "Throughput against distance")
                if both
                else ("RTT (each test's median) against distance",)
            ),
            horizontal_spacing=0.08,
        )
        fig.update_xaxes(title_text="distance (km)", rangemode="tozero")
        fig.update_yaxes(title_text="RTT, median of samples (ms)", rangemode="tozero", row=1, col=1)
        if both:
            fig.update_yaxes(title_text="throughput (Mbit/s, log)", type="log", row=1, col=2)
        fig.update_layout(height=520, legend={"orientation": "h", "y": -0.18})
    elif kind == "heatmap":
        fig = go.Figure()
        fig.update_xaxes(title_text="destination (by cloud, west → east)", tickangle=-60)
        fig.update_yaxes(title_text="source (by cloud, west → east)", autorange="reversed")
    else:
        fig = go.Figure()
        fig.update_geos(
            projection_type="natural earth",
            showcountries=True,
            countrycolor="#ccc",
            showland=True,
            landcolor="#f3f3f3",
        )
        fig.update_layout(height=560, legend={"orientation": "h", "y": -0.05})
    layout = json.loads(charts.label(fig, "", emulated, template=False).to_json())["layout"]
    layout.pop("template", None)
    layout["title"]["text"] = ""  # each figure's own, set by charts._figure
    return layout


@pytest.mark.parametrize("emulated", [False, True])
@pytest.mark.parametrize("kind, both", [("distance", True), ("distance", False), ("heatmap", False),
                                        ("map", False)])  # fmt: skip
def test_figure_layouts_and_template_are_what_plotly_builds(kind, both, emulated):
    # the charts write their layouts as data (plotly's objects took seconds at a full
    # catalog); this holds them to plotly's own, so an upgrade of plotly shows up here
    assert charts._layout(kind, both, emulated) == _plotly_layout(kind, both, emulated)
    built = go.Figure(layout={"template": charts.TEMPLATE}).to_json()
    assert charts._template() == json.loads(built)["layout"]["template"]


@given(
    st.lists(
        st.one_of(
            st.floats(-5e10, 2.5e11),  # the years 385 to 9892
            st.integers(0, 2_000_000_000).map(lambda ms: ms / 1000 + 0.0005),  # half-way
            st.integers(-(10**9), 10**9).map(lambda us: us / 1e6),
            st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0]),
        ),
        max_size=40,
    )
)
def test_times_by_numpy_are_those_of_datetime_to_the_character(seconds):
    assert charts.iso_times(np.array(seconds, dtype=np.float64)) == [
        charts.iso_time(s) for s in seconds
    ]
