"""Report figures built from hand-made measurements: what the time series draws and what
its picker holds, what the hovers carry."""

from __future__ import annotations

import math

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
    doc = fig.to_plotly_json()
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
    p = fig.to_plotly_json()["layout"]["meta"]["picker"]
    assert (p["sweeps"], p["sweeps_kept"]) == (3, 2) and p["x"] == list(STARTED.values())[1:]
    assert p["rtt"][0] == [150.0, 120.0]


def test_latency_only_time_series_has_no_throughput_in_its_picker():
    rows = [(A, B, 0, 100.0, NAN), (A, B, 1, 110.0, NAN)]
    doc = charts.timeseries_figure(_measurements(rows), STARTED, emulated=False).to_plotly_json()
    assert "tput" not in doc["layout"]["meta"]["picker"]
    assert not any(k.startswith("yaxis2") for k in doc["layout"])
