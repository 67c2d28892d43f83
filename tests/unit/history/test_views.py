"""Pair series and the matrix: pooled window percentiles with known answers, sources never
mixed, the selection options, the JSON shape and the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from history_support import make_sweep, sweep_id_at

from orchestrator.cli import main
from orchestrator.exchange import importer
from orchestrator.history import metrics, windows
from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.results import files as store

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B = "aws:us-east-1", "gcp:europe-west1"


def _sweep(results, day, samples, i=0):
    t = T0 + timedelta(days=day)
    make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t)


@pytest.fixture
def results(tmp_path):
    # A -> B: 20 samples of 10 ms, then 4 samples; B -> A: 1,000 samples 1..1000 ms, in a
    # sweep of its own (beside A -> B's 10 ms in one sweep it would be flagged asymmetric)
    _sweep(tmp_path, 0, {(A, B): [10.0] * 20}, 0)
    _sweep(tmp_path, 0, {(B, A): [float(k) for k in range(1, 1001)]}, 3)
    _sweep(tmp_path, 2, {(A, B): [20.0, 30.0, 40.0, 50.0]}, 1)
    _sweep(tmp_path, 8, {(A, B): [60.0] * 3}, 2)
    h.ingest_all(tmp_path)
    return tmp_path


def _cli(results, *args):
    return CliRunner().invoke(main, [*args, "--results", str(results)])


def test_window_percentiles_pool_the_samples_never_per_run_percentiles(results):
    with h.opened(results, read_only=True) as con:
        doc = v.pair_history(con, (A, B), "rtt", "all")
    (s,) = doc["sources"]
    assert (s["source"], s["emulated"], s["tests"], s["samples"]) == ("emulated", True, 3, 27)
    # 27 pooled samples: 20 x 10, 20, 30, 40, 50, 60, 60, 60 (Hyndman-Fan 7)
    # p50: rank 13 -> 10; min 10, max 60, mean 520 / 27
    assert s["p50"] == pytest.approx(10.0) and s["p50_n"] == 27
    assert (s["min"], s["max"]) == (10.0, 60.0)
    assert s["mean"] == pytest.approx(520.0 / 27)
    # the tails need 10 samples beyond them: p25 40, p90 100, p99 1,000 -> none of 27
    for stat in ("p10", "p25", "p75", "p90", "p99"):
        assert s[stat] is None and s[f"{stat}_n"] == 27
    assert [metrics.min_samples(k) for k in v.STATS] == [1, 100, 40, 1, 40, 100, 1000, 1, 1]
    # the median of the per-run medians would be 35: not what is shown
    assert [r["value"] for r in s["runs"]] == pytest.approx([10.0, 35.0, 60.0])


def test_window_ends_at_the_sources_latest_test(results):
    with h.opened(results, read_only=True) as con:
        doc = v.pair_history(con, (A, B), "rtt", "1W")
    (s,) = doc["sources"]
    # latest test day 8 (+ 10 s): the week starts after day 1, so days 2 and 8 count
    assert s["tests"] == 2 and s["samples"] == 7
    assert s["p50"] == pytest.approx(50.0)  # 20 30 40 50 60 60 60 -> rank 3
    assert s["window_end_utc"].startswith("2026-11-09T00:00")


def test_p99_needs_1000_samples(results):
    with h.opened(results, read_only=True) as con:
        doc = v.matrix(con, "rtt", "p99", "all")
        p90 = v.matrix(con, "rtt", "p90", "all")
    (mx,) = doc["matrices"]
    cells = {(c["src"], c["dst"]): c for c in mx["cells"]}
    assert cells[(A, B)]["value"] is None and cells[(A, B)]["value_n"] == 27
    # 1..1000: rank 999 x 0.99 = 989.01 -> 990.01; p90: rank 899.1 -> 900.1
    assert cells[(B, A)]["value"] == pytest.approx(990.01)
    assert cells[(B, A)]["value_n"] == 1000
    (mx,) = p90["matrices"]
    assert {(c["src"], c["dst"]): c["value"] for c in mx["cells"]}[(B, A)] == pytest.approx(900.1)
    assert "1,000" in doc["percentile_rule"]


def test_matrix_json_shape_is_stable(results):
    result = _cli(results, "matrix", "--window", "all", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert list(doc) == ["format", "version", "metric", "unit", "stat", "window",
                         "percentile_rule", "include_flagged", "matrices"]  # fmt: skip
    # version 2: include_flagged and each matrix's flagged_tests
    assert (doc["format"], doc["version"], doc["unit"]) == ("interregion.matrix", 4, "ms")
    (mx,) = doc["matrices"]
    assert list(mx) == ["source", "label", "emulated", "window_start_utc", "window_end_utc",
                        "regions", "flagged_tests", "cells"]  # fmt: skip
    assert mx["regions"] == [A, B]
    assert list(mx["cells"][0]) == ["src", "dst", "value", "value_n", "samples", "tests",
                                    "distance_km"]  # fmt: skip
    # version 4: a loss matrix's rule and each cell's pings and Wilson interval
    doc = json.loads(_cli(results, "matrix", "--window", "all", "--metric", "loss",
                          "--json").output)  # fmt: skip
    assert list(doc) == ["format", "version", "metric", "unit", "stat", "window",
                         "percentile_rule", "loss_rule", "include_flagged", "matrices"]  # fmt: skip
    assert list(doc["matrices"][0]["cells"][0]) == [
        "src", "dst", "value", "value_n", "samples", "tests", "distance_km", "pings_sent",
        "pings_lost", "loss_pct", "loss_low_pct", "loss_high_pct",
    ]  # fmt: skip


def test_matrix_selection_options_filter_pairs(results):
    result = _cli(results, "matrix", "--window", "all", "--cloud-pair", "aws:gcp", "--json")
    assert result.exit_code == 0, result.output
    (mx,) = json.loads(result.output)["matrices"]
    assert [(c["src"], c["dst"]) for c in mx["cells"]] == [(A, B)]
    result = _cli(results, "matrix", "--window", "all", "--min-km", "6000", "--json")
    assert json.loads(result.output)["matrices"][0]["cells"] == []


def test_real_and_emulated_sources_are_shown_apart_and_named(results, tmp_path_factory):
    f = tmp_path_factory.mktemp("imp") / "theirs.csv"
    f.write_text(f"src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\n"
                 f"{A.replace(':', ',')},{B.replace(':', ',')},77.5\n")  # fmt: skip
    importer.import_file(results, f, "theirs", "2022-02", label="Their 2022 data")
    with h.opened(results, read_only=True) as con:
        doc = v.matrix(con, "rtt", "p50", "all")
        pair = v.pair_history(con, (A, B), "rtt", "all")
    names = [(m["source"], m["emulated"]) for m in doc["matrices"]]
    assert names == [("emulated", True), ("theirs", False)]
    theirs = doc["matrices"][1]
    assert [(c["src"], c["value"]) for c in theirs["cells"]] == [(A, 77.5)]
    assert [s["p50"] for s in pair["sources"]] == pytest.approx([10.0, 77.5])
    text = _cli(results, "matrix", "--window", "all").output
    assert "source: EMULATED" in text
    assert "source: theirs (Their 2022 data), real measurements" in text
    only = _cli(results, "matrix", "--window", "all", "--source", "theirs", "--json").output
    assert [m["source"] for m in json.loads(only)["matrices"]] == ["theirs"]


def test_matrix_terminal_and_csv(results):
    text = _cli(results, "matrix", "--window", "all", "--stat", "p99").output
    assert "From \\ To" in text and "—" in text and "990.0" in text
    out = _cli(results, "matrix", "--window", "all", "--csv").output.splitlines()
    assert out[0] == ",".join(v.MATRIX_CSV_COLUMNS)
    assert len(out) == 3


@pytest.mark.slow
def test_history_group_takes_the_pair_query(results):
    result = _cli(results, "history", "--pairs", f"{A}/{B}", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["sources"][0]["tests"] == 3
    shown = _cli(results, "history", "show", "--pairs", f"{A}/{B}", "--window", "1W")
    assert shown.exit_code == 0, shown.output
    assert "source: EMULATED" in shown.output and "p99 —" in shown.output
    tput = _cli(results, "history", "show", "--pairs", f"{A}/{B}", "--metric", "throughput")
    assert "p50 900" in tput.output  # 9e8 bit/s in Mbit/s


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("history", "show", "--pairs", "aws:us-east-1"), "SRC/DST"),
        (("history", "show"), "--pairs is required"),
        (("matrix", "--source", "nope"), "--source nope: not in the store"),
        (("matrix", "--max-regions", "3"), "does not filter a matrix"),
        (("matrix", "--json", "--csv"), "pick one"),
        (("matrix", "--regions", "aws:nowhere-1"), "aws:nowhere-1"),
    ],
)
def test_query_errors_are_one_line(results, args, message):
    result = _cli(results, *args)
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and message in result.output


def test_query_without_a_store_says_how_to_make_one(tmp_path):
    result = _cli(tmp_path, "matrix")
    assert result.exit_code == 2 and "history ingest --all" in result.output


def test_matrix_latest_window_is_each_pairs_newest_test(results):
    result = _cli(results, "matrix", "--window", "latest", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    (mx,) = doc["matrices"]
    cells = {(c["src"], c["dst"]): (c["value"], c["tests"], c["samples"]) for c in mx["cells"]}
    # A -> B: its day-8 test alone (3 x 60 ms); B -> A: its only test, 1..1000 ms
    assert cells == {(A, B): (60.0, 1, 3), (B, A): (500.5, 1, 1000)}
    assert doc["window"] == "latest" and mx["window_start_utc"] is None
    text = _cli(results, "matrix", "--window", "latest").output
    assert "window latest (each pair's newest test, up to 2026-11-09" in text and "500.5" in text


def test_matrix_regions_by_cloud_then_west_to_east(tmp_path):
    from orchestrator.model.catalog import load_catalog

    west, east, gcp_west, gcp_east = (
        "aws:us-west-2", "aws:eu-west-1", "gcp:us-central1", "gcp:asia-northeast1",
    )  # fmt: skip
    samples = {(east, gcp_west): [50.0], (gcp_east, west): [90.0], (west, gcp_east): [91.0]}
    _sweep(tmp_path, 0, samples)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        ordered = v.matrix(con, window="all", catalog=load_catalog())["matrices"][0]["regions"]
        by_name = v.matrix(con, window="all")["matrices"][0]["regions"]
    assert ordered == [west, east, gcp_west, gcp_east]
    assert by_name == sorted(ordered)
    head = next(line for line in _cli(tmp_path, "matrix", "--window", "all").output.splitlines()
                if "From" in line)  # fmt: skip
    assert (
        head.index("aws:us-west-2")
        < head.index("gcp:us-central1")
        < head.index("gcp:asia-northeast1")
    )


@pytest.mark.parametrize(
    ("bps", "text"), [(4.37e6, "4.37"), (43.72e6, "43.7"), (437.2e6, "437"), (2.5e9, "2500")]
)
def test_throughput_keeps_three_significant_digits(bps, text):
    assert v.format_value(bps, "bit/s") == text


def test_flagged_tests_are_left_out_counted_and_brought_back(tmp_path):
    # one sweep: A -> B 10 ms, B -> A 30 ms: they differ by 20 ms > max(5 ms, 10 %)
    _sweep(tmp_path, 0, {(A, B): [10.0] * 20, (B, A): [30.0] * 20}, 0)
    _sweep(tmp_path, 1, {(A, B): [11.0] * 20}, 1)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        doc = v.matrix(con, "rtt", "p50", "all")
        (mx,) = doc["matrices"]
        assert mx["flagged_tests"] == 2 and doc["include_flagged"] is False
        assert [(c["src"], c["dst"], c["tests"], c["value"]) for c in mx["cells"]] == [
            (A, B, 1, 11.0)
        ]
        (mx,) = v.matrix(con, "rtt", "p50", "all", include_flagged=True)["matrices"]
        assert {(c["src"], c["dst"]): c["tests"] for c in mx["cells"]} == {(A, B): 2, (B, A): 1}
        (s,) = v.pair_history(con, (A, B), "rtt", "all")["sources"]
        assert s["tests"] == 1 and s["flagged_tests"] == 1
    result = _cli(tmp_path, "matrix", "--window", "all")
    assert result.exit_code == 0, result.output
    assert "2 flagged tests left out" in result.output


@pytest.mark.slow
def test_one_latency_sweep_of_the_default_profile_gives_every_pair_a_p99(tmp_path):
    from orchestrator.core import paths
    from orchestrator.model.catalog import load_catalog
    from orchestrator.schedule.profiles import load_profiles

    profile = load_profiles(paths.ROOT / "schedules.yaml")["latency"]
    pings = profile.request.params.pings
    # what a ping phase of 12 regions brings back, each pair losing 5 % of its pings
    regions = [r.key for r in load_catalog(paths.CATALOG).regions][:12]
    kept = int(pings * 0.95)
    samples = {
        (a, b): [40.0 + (k % 97) / 10 for k in range(kept)]
        for a in regions
        for b in regions
        if a != b
    }
    _sweep(tmp_path, 0, samples)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (mx,) = v.matrix(con, "rtt", "p99", "all")["matrices"]
    assert len(mx["cells"]) == 12 * 11
    assert all(c["value"] is not None and c["value_n"] == kept for c in mx["cells"])


def test_capacity_rows_are_their_own_metric_never_in_the_throughput(tmp_path):
    # one sweep measured both: the single_stream row at 9e8 (make_sweep) and a capacity
    # row of the same pair at 4e9, with no RTT of its own (its pings are the single row's)
    folder = tmp_path / sweep_id_at(T0, "0000")
    make_sweep(tmp_path, folder.name, {(A, B): [10.0] * 20}, started=T0)
    rows = store.read_rows(folder / store.MEASUREMENTS_FILE)
    capacity = {**rows[0], "measure": "capacity", "streams": "8", "throughput_bps": "4e9",
                "round": "9", **{c: "" for c in rows[0] if c.startswith("rtt_")}}  # fmt: skip
    store.write_rows(folder, [*rows, capacity])
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (mx,) = v.matrix(con, "throughput", "p50", "all")["matrices"]
        assert [(c["tests"], c["value"]) for c in mx["cells"]] == [(1, 9.0e8)]
        (mx,) = v.matrix(con, "capacity", "p50", "all")["matrices"]
        assert [(c["tests"], c["value"]) for c in mx["cells"]] == [(1, 4.0e9)]
        # the pair's RTT samples are counted once: the capacity row has none
        (s,) = v.pair_history(con, (A, B), "rtt", "all")["sources"]
        assert (s["tests"], s["samples"]) == (1, 20)
        (s,) = v.pair_history(con, (A, B), "throughput", "all")["sources"]
        assert s["tests"] == 1 and s["p50"] == 9.0e8
        # an emulated source's throughput carries its rate scale; its RTT none
        assert s["rate_scale"] == DEFAULT_MODEL.scale
        assert "rate_scale" not in v.pair_history(con, (A, B), "rtt", "all")["sources"][0]
        (mx,) = v.matrix(con, "rtt", "p50", "all")["matrices"]
        assert "rate_scale" not in mx
    result = _cli(tmp_path, "matrix", "--metric", "capacity", "--window", "all")
    assert result.exit_code == 0, result.output
    assert "capacity p50 (Mbit/s, emulated: rate scale 0.0517, x19.4 = real)" in result.output
    shown = _cli(tmp_path, "history", "show", "--pairs", f"{A}/{B}", "--metric", "throughput")
    assert "(Mbit/s, emulated: rate scale 0.0517, x19.4 = real)" in shown.output
    rtt = _cli(tmp_path, "matrix", "--metric", "rtt", "--window", "all")
    assert "rate scale" not in rtt.output


def test_a_throughput_flag_leaves_the_tests_rtt_in_the_views_and_the_matrix(tmp_path):
    from orchestrator.results import files as store

    first = make_sweep(
        tmp_path, sweep_id_at(T0, "0000"), {(A, B): [10.0] * 20, (B, A): [11.0] * 20}
    )
    # A -> B's receiver counted 2 % more than its sender sent: its throughput is wrong,
    # its ping's RTT, loss and jitter are not
    rows = store.read_rows(first / store.MEASUREMENTS_FILE)
    for row in rows:
        if f"{row['src_cloud']}:{row['src_region']}" == A:
            row["throughput_sender_bps"] = f"{9.0e8 / 1.02:.0f}"
    store.write_rows(first, rows, asked_duration_s=5)
    t1 = T0 + timedelta(days=1)
    make_sweep(tmp_path, sweep_id_at(t1, "0001"), {(A, B): [12.0] * 20}, started=t1,
               throughput_bps=8.0e8)  # fmt: skip
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (flagged,) = con.execute(
            "SELECT flags FROM measurements WHERE sweep_id = ? AND src = ?", [first.name, A]
        ).fetchone()
        assert flagged == "receiver_exceeds_sender"
        (rtt,) = v.matrix(con, "rtt", "p50", "all")["matrices"]
        assert rtt["flagged_tests"] == 0
        cells = {(c["src"], c["dst"]): (c["tests"], c["value"]) for c in rtt["cells"]}
        assert cells == {(A, B): (2, 11.0), (B, A): (1, 11.0)}  # 20 x 10 and 20 x 12 pooled
        (thr,) = v.matrix(con, "throughput", "p50", "all")["matrices"]
        assert thr["flagged_tests"] == 1
        cells = {(c["src"], c["dst"]): (c["tests"], c["value"]) for c in thr["cells"]}
        assert cells == {(A, B): (1, 8.0e8), (B, A): (1, 9.0e8)}
        for metric in ("loss", "jitter"):  # the ping's figures go with the RTT
            (mx,) = v.matrix(con, metric, "p50", "all")["matrices"]
            assert mx["flagged_tests"] == 0
            assert {(c["src"], c["dst"]): c["tests"] for c in mx["cells"]}[(A, B)] == 2
        (s,) = v.pair_history(con, (A, B), "rtt", "all")["sources"]
        assert (s["tests"], s["flagged_tests"]) == (2, 0)
        (s,) = v.pair_history(con, (A, B), "throughput", "all")["sources"]
        assert (s["tests"], s["flagged_tests"]) == (1, 1)
        assert [r["value"] for r in s["runs"]] == [8.0e8]
        # and the site's matrix, from the same cells
        (info,) = v.source_infos(con).values()
        by_metric = {
            m: {(c.src, c.dst): c.tests for c in windows.window_cells(con, info, m, "all")}
            for m in ("rtt", "throughput")
        }
        assert by_metric == {"rtt": {(A, B): 2, (B, A): 1}, "throughput": {(A, B): 1, (B, A): 1}}
        # change detection judged the same values: the flagged throughput is no run of it
        judged = con.execute(
            "SELECT metric, src, dst, list(value ORDER BY t) FROM judgments "
            "GROUP BY metric, src, dst"
        ).fetchall()
        series = {(m, s, d): values for m, s, d, values in judged}
        assert series[("throughput", A, B)] == [8.0e8]
        assert len(series[("rtt", A, B)]) == 2
    result = _cli(tmp_path, "matrix", "--window", "all", "--metric", "throughput")
    assert result.exit_code == 0, result.output
    assert "1 flagged tests left out: their flags invalidate their throughput" in result.output
    result = _cli(tmp_path, "matrix", "--window", "all")
    assert result.exit_code == 0 and "flagged tests left out" not in result.output


def test_every_pair_since_says_whether_each_pair_has_a_row_from_then_on(tmp_path):
    c = "aws:eu-west-1"
    _sweep(tmp_path, 0, {(A, B): [10.0] * 20, (A, c): [20.0] * 20}, 0)
    _sweep(tmp_path, 3, {(A, B): [10.0] * 20}, 1)
    h.ingest_all(tmp_path)
    ok, params = "source = ? AND status = 'ok'", ["emulated"]
    with h.opened(tmp_path, read_only=True) as con:
        assert metrics.every_pair_since(con, ok, params, T0.replace(tzinfo=None))
        # A -> C was tested on day 0 only
        assert not metrics.every_pair_since(
            con, ok, params, (T0 + timedelta(days=1)).replace(tzinfo=None)
        )
        (mx,) = v.matrix(con, "rtt", "p50", "latest")["matrices"]
    assert {(x["src"], x["dst"]): x["tests"] for x in mx["cells"]} == {(A, B): 1, (A, c): 1}
