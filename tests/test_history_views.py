"""Pair series and the matrix: pooled window percentiles with known answers, sources never
mixed, the selection options, the JSON shape and the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from history_support import make_sweep, sweep_id_at

from orchestrator.cli import main
from orchestrator.history import store as h
from orchestrator.history import views as v

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B = "aws:us-east-1", "gcp:europe-west1"


def _sweep(results, day, samples, i=0):
    t = T0 + timedelta(days=day)
    make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t)


@pytest.fixture
def results(tmp_path):
    # A -> B: 20 samples of 10 ms, then 4 samples; B -> A: 120 samples 1..120 ms
    _sweep(tmp_path, 0, {(A, B): [10.0] * 20, (B, A): [float(k) for k in range(1, 121)]}, 0)
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
    # p50: rank 13 -> 10; p90: rank 23.4 -> 50 + 0.4 x 10 = 54
    assert s["p50"] == pytest.approx(10.0)
    assert s["p90"] == pytest.approx(54.0)
    assert s["p99"] is None  # 27 samples < 100
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


def test_p99_needs_100_samples(results):
    with h.opened(results, read_only=True) as con:
        doc = v.matrix(con, "rtt", "p99", "all")
    (mx,) = doc["matrices"]
    cells = {(c["src"], c["dst"]): c for c in mx["cells"]}
    assert cells[(A, B)]["value"] is None and cells[(A, B)]["samples"] == 27
    # 1..120: rank 119 x 0.99 = 117.81 -> 118.81
    assert cells[(B, A)]["value"] == pytest.approx(118.81)


def test_matrix_json_shape_is_stable(results):
    result = _cli(results, "matrix", "--window", "all", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert list(doc) == ["format", "version", "metric", "unit", "stat", "window", "matrices"]
    assert (doc["format"], doc["version"], doc["unit"]) == ("interregion.matrix", 1, "ms")
    (mx,) = doc["matrices"]
    assert list(mx) == ["source", "label", "emulated", "window_start_utc", "window_end_utc",
                        "regions", "cells"]  # fmt: skip
    assert mx["regions"] == [A, B]
    assert list(mx["cells"][0]) == ["src", "dst", "value", "samples", "tests", "distance_km"]


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
    h.import_file(results, f, "theirs", "2022-02", label="Their 2022 data")
    with h.opened(results, read_only=True) as con:
        doc = v.matrix(con, "rtt", "p50", "all")
        pair = v.pair_history(con, (A, B), "rtt", "all")
    names = [(m["source"], m["emulated"]) for m in doc["matrices"]]
    assert names == [("emulated", True), ("theirs", False)]
    theirs = doc["matrices"][1]
    assert [(c["src"], c["value"]) for c in theirs["cells"]] == [(A, 77.5)]
    assert [s["p50"] for s in pair["sources"]] == pytest.approx([10.0, 77.5])
    text = _cli(results, "matrix", "--window", "all").output
    assert "source: emulated, EMULATED" in text
    assert "source: theirs (Their 2022 data), real measurements" in text
    only = _cli(results, "matrix", "--window", "all", "--source", "theirs", "--json").output
    assert [m["source"] for m in json.loads(only)["matrices"]] == ["theirs"]


def test_matrix_terminal_and_csv(results):
    text = _cli(results, "matrix", "--window", "all", "--stat", "p99").output
    assert "From \\ To" in text and "—" in text and "118.8" in text
    out = _cli(results, "matrix", "--window", "all", "--csv").output.splitlines()
    assert out[0] == ",".join(v.MATRIX_CSV_COLUMNS)
    assert len(out) == 3


def test_history_group_takes_the_pair_query(results):
    result = _cli(results, "history", "--pairs", f"{A}/{B}", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["sources"][0]["tests"] == 3
    shown = _cli(results, "history", "show", "--pairs", f"{A}/{B}", "--window", "1W")
    assert shown.exit_code == 0, shown.output
    assert "source: emulated, EMULATED" in shown.output and "p99 —" in shown.output
    tput = _cli(results, "history", "show", "--pairs", f"{A}/{B}", "--metric", "throughput")
    assert "p50 900" in tput.output  # 9e8 bit/s in Mbit/s


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
