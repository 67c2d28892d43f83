"""`interregion advise` on real results folders: a sweep's measurements.csv, the history
store built from it, emulated sweeps (answered from the network model), the reverse
direction, the JSON shape and one-line errors for bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from history_support import make_sweep, record_of, sweep_id_at

from orchestrator.advise import model as a
from orchestrator.advise import sources
from orchestrator.cli import main
from orchestrator.history import store as h
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import REAL_CAP_BPS, REAL_WINDOW_BYTES, region_rtt_ms
from orchestrator.results import store

A, B = "aws:us-east-1", "gcp:europe-west1"
T0 = datetime(2026, 11, 20, tzinfo=UTC)


def _sweep(results, day, samples, backend="aws", throughput_bps=1e8, suffix="a000"):
    t = T0 + timedelta(days=day)
    return make_sweep(
        results,
        sweep_id_at(t, suffix),
        samples,
        started=t,
        backend=backend,
        throughput_bps=throughput_bps,
    )


def _set(folder, **values):
    """Set columns of every row of a sweep's measurements.csv."""
    rows = store.read_rows(folder / store.MEASUREMENTS_FILE)
    for row in rows:
        row.update({k: str(v) for k, v in values.items()})
    store.write_rows(folder, rows)


def _advise(results, *args):
    return CliRunner().invoke(main, ["advise", *args, "--results", str(results)])


def _json(results, *args):
    result = _advise(results, "--from", A, "--to", B, "--size", "100GB", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_measured_sweep_folder_answers_without_a_store(tmp_path):
    # mean RTT 100 ms (the CSV has no p50), 100 Mbit/s: a 1.25 MB window
    _sweep(tmp_path, 0, {(A, B): [90.0, 100.0, 110.0]})
    doc = _json(tmp_path)
    assert doc["source"]["kind"] == "sweep"
    assert "measurements.csv" in doc["source"]["detail"]
    assert doc["path"]["rtt_ms"] == pytest.approx(100.0)
    assert doc["path"]["default_window_bytes"] == pytest.approx(1.25e6)
    default = doc["options"][0]
    assert (default["name"], default["limit"]) == ("default", "window")
    assert default["throughput_bps"] == pytest.approx(100e6)
    # 100 GB at 100 Mbit/s is 8,000 s, plus handshakes and the ramp
    assert 8000 < default["time_s"] < 8002
    assert doc["path"]["loss_rate"] is None  # no retransmissions recorded


def test_the_history_store_wins_and_uses_the_ping_samples_median(tmp_path):
    # median of the samples 90, 92, 130 is 92 ms (the CSV's mean would be 104)
    _sweep(tmp_path, 0, {(A, B): [90.0, 92.0, 130.0]})
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["source"]["kind"] == "history"
    assert "source measured" in doc["source"]["detail"]
    assert doc["path"]["rtt_ms"] == pytest.approx(92.0)


def test_the_newest_real_test_is_used(tmp_path):
    _sweep(tmp_path, 0, {(A, B): [100.0]}, throughput_bps=1e8, suffix="a000")
    newest = _sweep(tmp_path, 1, {(A, B): [100.0]}, throughput_bps=2e8, suffix="a001")
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["source"]["sweep_id"] == newest.name
    assert doc["path"]["measured_bps"] == pytest.approx(2e8)


def test_retransmissions_give_the_loss_ceiling(tmp_path):
    # 1 retransmission in 1e6 segments: p = 1e-6; at 100 ms the ceiling is
    # 1448 x 8 / 0.1 x 1.22 / 0.001 = 141.3 Mbit/s: above default's 100, below tuned's cap
    folder = _sweep(tmp_path, 0, {(A, B): [100.0]})
    _set(folder, retransmits=1, bytes=1448 * 999_999)
    doc = _json(tmp_path)
    assert doc["path"]["loss_rate"] == pytest.approx(1e-6)
    ceiling = 115_840 * 1.22 / 1e-3
    assert doc["path"]["loss_ceiling_bps"] == pytest.approx(ceiling)
    default, tuned, parallel = doc["options"]
    assert default["limit"] == "window"
    assert (tuned["limit"], tuned["throughput_bps"]) == ("loss", pytest.approx(ceiling))
    assert parallel["throughput_bps"] == pytest.approx(400e6)
    assert any("loss caps tuned buffers" in n for n in doc["notes"])


def test_emulated_tests_are_answered_from_the_network_model(tmp_path):
    _sweep(tmp_path, 0, {(A, B): [100.0]}, backend="local", throughput_bps=5e6)
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    catalog = load_catalog()
    assert doc["source"]["kind"] == "model"
    # the real-scale model, never 5 Mbit/s scaled back by 19.4
    assert doc["path"]["rtt_ms"] == pytest.approx(region_rtt_ms(catalog.get(A), catalog.get(B)))
    assert doc["path"]["line_rate_bps"] == REAL_CAP_BPS
    assert doc["path"]["default_window_bytes"] == REAL_WINDOW_BYTES
    assert doc["path"]["measured_bps"] is None
    assert any("emulated" in n and "not scaled back" in n for n in doc["notes"])
    text = _advise(tmp_path, "--from", A, "--to", B, "--size", "100GB").output
    assert "source: network model" in text
    assert "not scaled back" in text


def test_emulated_sweep_folders_without_a_store_are_skipped_and_counted(tmp_path):
    _sweep(tmp_path, 0, {(A, B): [100.0]}, backend="local", throughput_bps=5e6)
    doc = _json(tmp_path)
    assert doc["source"]["kind"] == "model"
    assert any("1 emulated sweep(s)" in n for n in doc["notes"])


def test_an_older_real_test_beats_a_newer_emulated_one(tmp_path):
    real = _sweep(tmp_path, 0, {(A, B): [100.0]}, suffix="a000")
    _sweep(tmp_path, 1, {(A, B): [100.0]}, backend="local", throughput_bps=5e6, suffix="a001")
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert (doc["source"]["kind"], doc["source"]["sweep_id"]) == ("history", real.name)
    assert any("emulated tests of this pair" in n for n in doc["notes"])


def test_the_reverse_direction_stands_in_and_says_so(tmp_path):
    _sweep(tmp_path, 0, {(B, A): [100.0]})
    doc = _json(tmp_path)
    assert doc["source"]["reverse_direction"] is True
    assert f"its reverse, {B} -> {A}" in doc["source"]["detail"]


def test_a_latency_only_test_gives_the_rtt_and_the_modelled_window(tmp_path):
    folder = _sweep(tmp_path, 0, {(A, B): [120.0]})
    _set(folder, throughput_bps="")
    doc = _json(tmp_path)
    assert doc["source"]["throughput_measured"] is False
    assert "RTT only (throughput modelled)" in doc["source"]["detail"]
    assert doc["path"]["rtt_ms"] == pytest.approx(120.0)
    assert doc["path"]["default_window_bytes"] == REAL_WINDOW_BYTES


def test_json_shape(tmp_path):
    _sweep(tmp_path, 0, {(A, B): [100.0]})
    doc = _json(tmp_path, "--files", "1000", "--streams", "8")
    assert (doc["format"], doc["version"]) == (a.ADVICE_FORMAT, a.ADVICE_VERSION)
    assert set(doc) == {"format", "version", "src", "dst", "size_bytes", "source", "path",
                        "options", "files", "sysctl", "notes", "assumptions"}  # fmt: skip
    assert (doc["src"], doc["dst"], doc["size_bytes"]) == (A, B, 10**11)
    assert [o["name"] for o in doc["options"]] == ["default", "tuned", "streams"]
    assert doc["options"][2]["streams"] == 8
    assert doc["files"]["count"] == 1000
    assert doc["files"]["file_bytes"] == pytest.approx(1e8)
    assert all(o["files_time_s"] > o["time_s"] for o in doc["options"])
    assert doc["sysctl"][0].startswith("net.ipv4.tcp_rmem = 4096 131072 ")


def test_text_output_has_the_table_and_the_assumptions(tmp_path):
    _sweep(tmp_path, 0, {(A, B): [100.0]})
    result = _advise(tmp_path, "--from", A, "--to", B, "--size", "1.5TiB", "--files", "20000")
    assert result.exit_code == 0, result.output
    for text in ("default TCP", "tuned buffers", "4 streams", "new connection per file",
                 "TLS 1.3", "assumptions:", "net.ipv4.tcp_wmem"):  # fmt: skip
        assert text in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "aws:us-est-1", "--to", B, "--size", "1GB"], "--from: unknown region"),
        (["--from", A, "--to", "europe-west1", "--size", "1GB"], "--to: region 'europe-west1'"),
        (["--from", A, "--to", A, "--size", "1GB"], "both aws:us-east-1"),
        (["--from", A, "--to", B, "--size", "100Gb"], "b is bits"),
        (["--from", A, "--to", B, "--size", "lots"], "give a number and a unit"),
        (["--from", A, "--to", B, "--size", "1GB", "--streams", "0"], "at least 1 stream"),
        (["--from", A, "--to", B, "--size", "1GB", "--streams", "two"], "--streams 'two'"),
        (["--from", A, "--to", B, "--size", "1GB", "--files", "0"], "at least 1 file"),
        (["--from", A, "--to", B, "--size", "10B", "--files", "11"], "--files 11"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, args, message):
    result = _advise(tmp_path, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.output.count("\n") == 1, result.output


def test_no_measurements_anywhere_says_where_to_get_some(tmp_path):
    _sweep(tmp_path, 0, {(A, B): [100.0]}, backend="local", throughput_bps=5e6)
    result = _advise(tmp_path, "--from", A, "--to", B, "--size", "1GB", "--measured-only")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1, result.output
    assert "only emulated ones" in result.output
    assert f"interregion sweep --backend cloud --regions {A},{B}" in result.output
    # with a real test the same command answers from it
    _sweep(tmp_path, 1, {(A, B): [100.0]}, suffix="a001")
    assert (
        _advise(tmp_path, "--from", A, "--to", B, "--size", "1GB", "--measured-only").exit_code == 0
    )


def test_pick_prefers_a_throughput_test_then_the_pairs_own_direction():
    def t(day, forward=True, bps=1e8, emulated=False):
        return sources.Test(f"s{day}", f"2026-11-{day:02d}T00:00:00.000Z", forward, emulated,
                            100.0, bps, 1, None, None, None)  # fmt: skip

    latency_only = t(5, bps=None)
    reverse = t(4, forward=False)
    forward = t(3)
    emulated = t(9, emulated=True)
    assert sources.pick([latency_only, reverse, forward, emulated]) is forward
    assert sources.pick([latency_only, reverse, emulated]) is reverse
    assert sources.pick([latency_only, emulated]) is latency_only
    assert sources.pick([emulated]) is None


@pytest.mark.parametrize("ingest", [False, True])
def test_a_test_with_iperf3_options_is_flagged_as_not_default_tcp(tmp_path, ingest):
    folder = _sweep(tmp_path, 0, {(A, B): [100.0]})
    record = record_of(folder)
    record["params"].update(window="4M", congestion="bbr")
    store.write_json(folder / store.SWEEP_FILE, record)
    if ingest:
        h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["source"]["kind"] == ("history" if ingest else "sweep")
    assert "iperf3 -w 4M -C bbr: not default TCP" in doc["source"]["detail"]


def test_a_sweep_of_another_version_is_left_out_and_named(tmp_path):
    good = _sweep(tmp_path, 0, {(A, B): [100.0]}, suffix="a000")
    bad = _sweep(tmp_path, 1, {(A, B): [50.0]}, suffix="a001")
    (bad / store.MEASUREMENTS_FILE).write_text("src,dst\nx,y\n")
    doc = _json(tmp_path)
    assert doc["source"]["sweep_id"] == good.name
    assert any(n.startswith(f"sweep {bad.name} left out: ") for n in doc["notes"])
