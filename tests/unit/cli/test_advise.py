"""`interregion advise` on real results folders: a sweep's measurements.csv, the history
store built from it, emulated sweeps (answered from the network model), the reverse
direction, the JSON shape and one-line errors for bad input."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from history_support import make_sweep, record_of, sweep_id_at

from orchestrator.advise import sources
from orchestrator.advise import tcp_model as a
from orchestrator.cli import main
from orchestrator.history import store as h
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import REAL_CAP_BPS, REAL_WINDOW_BYTES, region_rtt_ms
from orchestrator.netmodel.routes import default_routes
from orchestrator.plan.pricing import load_pricing
from orchestrator.results import files as store

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


def _json_for(results, src, dst, *args):
    result = _advise(results, "--from", src, "--to", dst, "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_measured_sweep_folder_answers_without_a_store(tmp_path):
    # mean RTT 100 ms (the CSV has no p50), 100 Mbit/s in three sweeps: a 1.25 MB window
    for day in range(3):
        _sweep(tmp_path, day, {(A, B): [90.0, 100.0, 110.0]}, suffix=f"a00{day}")
    doc = _json(tmp_path)
    assert doc["source"]["throughput_tests"] == 3
    assert doc["path"]["throughput_source"].startswith("measured: the median of 3 real tests")
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


def test_the_newest_real_test_is_named_and_three_give_the_median(tmp_path):
    _sweep(tmp_path, 0, {(A, B): [100.0]}, throughput_bps=1e8, suffix="a000")
    _sweep(tmp_path, 1, {(A, B): [100.0]}, throughput_bps=3e8, suffix="a001")
    newest = _sweep(tmp_path, 2, {(A, B): [100.0]}, throughput_bps=2.5e8, suffix="a002")
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["source"]["sweep_id"] == newest.name
    assert doc["path"]["measured_bps"] == pytest.approx(2.5e8)  # median of 1, 3, 2.5
    when = doc["source"]["started_utc"]  # the store's time, as a record writes it
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", when)
    assert f"test of {when} in {newest.name}" in doc["source"]["detail"]


@pytest.mark.slow
def test_a_lone_test_is_context_never_a_promise(tmp_path):
    # the DoiT case: one test at 31.4 Mbit/s must not become an 815 kB window
    _sweep(tmp_path, 0, {(A, B): [100.0]}, throughput_bps=31.4e6)
    _sweep(tmp_path, 1, {(A, B): [100.0]}, throughput_bps=31.4e6, suffix="a001")
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["source"]["throughput_measured"] is False
    assert doc["source"]["throughput_tests"] == 0
    assert doc["path"]["measured_bps"] is None
    assert doc["path"]["throughput_source"].startswith("network model")
    assert "fewer than 3 real tests" in doc["path"]["throughput_source"]
    assert doc["path"]["default_window_bytes"] == REAL_WINDOW_BYTES
    assert any("2 test(s) of this kind" in n and "shown as context" in n for n in doc["notes"])


@pytest.mark.slow
def test_allowance_limited_tests_are_never_read_as_a_window(tmp_path):
    for day in range(3):
        folder = _sweep(tmp_path, day, {(A, B): [100.0]}, throughput_bps=31.4e6,
                        suffix=f"a00{day}")  # fmt: skip
        _set(folder, limiter="allowance")
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["path"]["measured_bps"] == pytest.approx(31.4e6)
    assert doc["path"]["default_window_bytes"] == REAL_WINDOW_BYTES  # not 31.4 Mbit/s x RTT
    assert any("allowance, not the window" in n for n in doc["notes"])


def test_retransmissions_give_the_loss_ceiling(tmp_path):
    # 1 retransmission in 1e6 segments: p = 1e-6; at 100 ms the ceiling is
    # 1448 x 8 / 0.1 x 1.22 / 0.001 = 141.3 Mbit/s: above default's 100, below tuned's cap
    for day in range(3):
        folder = _sweep(tmp_path, day, {(A, B): [100.0]}, suffix=f"a00{day}")
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
    # no test of its own: the route table's RTT for the pair, and the output says so
    # (of the pair's tier, Premium by default: the public data's other tiers never pooled)
    routed = default_routes(tier="PREMIUM").get(A, B)
    assert routed is not None and doc["path"]["rtt_ms"] == pytest.approx(routed)
    assert doc["path"]["rtt_source"].startswith("route table")
    assert "Premium tier" in doc["path"]["rtt_source"]
    assert doc["path"]["rtt_ms"] != pytest.approx(region_rtt_ms(catalog.get(A), catalog.get(B)))
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
                        "options", "files", "sysctl", "buffers", "notes", "assumptions",
                        "cost", "network_tier", "range"}  # fmt: skip
    assert doc["path"]["rtt_source"].startswith("the pair's own test")
    assert (doc["src"], doc["dst"], doc["size_bytes"]) == (A, B, 10**11)
    assert [o["name"] for o in doc["options"]] == ["default", "tuned", "streams"]
    assert doc["options"][2]["streams"] == 8
    assert doc["files"]["count"] == 1000
    assert doc["files"]["file_bytes"] == pytest.approx(1e8)
    assert all(o["files_time_s"] > o["time_s"] for o in doc["options"])
    assert doc["sysctl"][0].startswith("net.ipv4.tcp_rmem = 4096 131072 ")


def test_every_answer_names_its_sources_and_the_egress_cost(tmp_path):
    # aws:us-east-1 -> gcp:asia-southeast1: the 259.1 ms from the distance model;
    # the Premium route table and the DoiT data say 216-224 ms (Skyplane's Premium 143.6 ms
    # the other way is below the fibre floor: left out, never the median's half)
    src, dst = "aws:us-east-1", "gcp:asia-southeast1"
    doc = _json_for(tmp_path, src, dst, "--size", "100GB")
    assert 216 <= doc["path"]["rtt_ms"] <= 224
    assert doc["path"]["rtt_source"].startswith("route table")
    assert doc["source"]["kind"] == "model" and doc["source"]["throughput_measured"] is False
    # internet egress from AWS at the list price in infra/pricing.yaml
    per_gb = load_pricing().egress_usd_per_gb(load_catalog().get(src), load_catalog().get(dst))
    assert doc["cost"]["usd_per_gb"] == per_gb
    assert doc["cost"]["egress_usd"] == pytest.approx(100 * per_gb)
    text = _advise(tmp_path, "--from", src, "--to", dst, "--size", "100GB").output
    assert "RTT from: route table" in text and "throughput from: network model" in text
    assert f"egress cost: ${100 * per_gb:,.2f}" in text


@pytest.mark.parametrize("rtt_ms", [0.5, 2.0, 20.0, 200.0])
def test_buffers_are_never_below_the_kernel_defaults(rtt_ms):
    facts = a.PathFacts(rtt_ms=rtt_ms, line_rate_bps=968e6, default_window_bytes=2.53e6,
                        loss_rate=None)  # fmt: skip
    lines = dict(line.split(" = ") for line in a.sysctl_lines(facts))
    assert int(lines["net.ipv4.tcp_rmem"].split()[-1]) >= a.KERNEL_RMEM_MAX_BYTES
    assert int(lines["net.ipv4.tcp_wmem"].split()[-1]) >= a.KERNEL_WMEM_MAX_BYTES
    # 2 x BDP at 968 Mbit/s fits 4 MB below about 17 ms: then the defaults suffice
    assert facts.default_buffers_suffice == (2 * 968e6 * rtt_ms / 1000 / 8 <= 4_194_304)
    said = a.buffer_note(facts)
    assert ("the default buffers suffice" in said) == facts.default_buffers_suffice


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
        (["--from", A, "--to", B, "--size", "100Gb"], "are bits"),
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
        return sources.Test(f"s{day}", datetime(2026, 11, day, tzinfo=UTC), forward, emulated,
                            100.0, bps, 1, None, None, None)  # fmt: skip

    latency_only = t(5, bps=None)
    reverse = t(4, forward=False)
    forward = t(3)
    emulated = t(9, emulated=True)
    assert sources.pick([latency_only, reverse, forward, emulated]) is forward
    assert sources.pick([latency_only, reverse, emulated]) is reverse
    assert sources.pick([latency_only, emulated]) is latency_only
    assert sources.pick([emulated]) is None
    undated = dataclasses.replace(forward, started_utc=None)  # its row's time unreadable
    assert sources.pick([undated, dataclasses.replace(forward, sweep_id="s0")]).sweep_id == "s0"


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


def test_a_long_transfer_runs_at_the_senders_baseline_after_its_burst():
    # the case: a t3.small does not sustain 968 Mbit/s for hours
    facts = a.PathFacts(rtt_ms=2.0, line_rate_bps=968e6, default_window_bytes=2.53e6,
                        loss_rate=None, baseline_bps=128e6, burst_s=300.0,
                        machine_type="t3.small")  # fmt: skip
    advice = a.advise(facts, 200 * 10**9, 4)
    default = advice.options[0]
    assert default.throughput_bps == 968e6 and default.sustained_bps == 128e6
    burst_bytes = 968e6 / 8 * 300
    assert default.time_s == pytest.approx(300 + (200e9 - burst_bytes) * 8 / 128e6)
    assert any("t3.small sustains 128 Mbit/s" in n for n in advice.notes)
    # a short one ends inside the burst: no sustained phase
    short = a.advise(facts, 10**9, 4).options[0]
    assert short.sustained_bps is None and short.time_s < 300


def test_the_catalogs_type_gives_the_baseline_and_its_json(tmp_path):
    doc = _json_for(tmp_path, "aws:us-east-1", "gcp:us-east4", "--size", "200GB")
    assert doc["path"]["machine_type"] == "t3.small"
    assert doc["path"]["baseline_bps"] == pytest.approx(0.128e9)
    assert doc["options"][0]["sustained_bps"] == pytest.approx(0.128e9)
    # 5 min at 968 Mbit/s, then 128 Mbit/s: 2 h 55 min, not 27.5 min at 968 Mbit/s
    burst_bytes = 968e6 / 8 * 300
    assert doc["options"][0]["time_s"] == pytest.approx(300 + (200e9 - burst_bytes) * 8 / 128e6)
    # e2-small: its 1 Gbps cap is its baseline too: no sustained phase
    gcp = _json_for(tmp_path, "gcp:us-east4", "aws:us-east-1", "--size", "200GB")
    assert gcp["path"]["baseline_bps"] is None and gcp["options"][0]["sustained_bps"] is None


def test_the_rtt_is_the_median_of_the_pairs_tests_over_the_window(tmp_path):
    # newest 200 ms, then 100 and 120 ms within 30 days; a 60-day-old 10 ms test is outside
    _sweep(tmp_path, -60, {(A, B): [10.0]}, suffix="a000")
    _sweep(tmp_path, 0, {(A, B): [100.0]}, suffix="a001")
    _sweep(tmp_path, 5, {(A, B): [120.0]}, suffix="a002")
    newest = _sweep(tmp_path, 10, {(A, B): [200.0]}, suffix="a003")
    h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["source"]["sweep_id"] == newest.name
    assert doc["path"]["rtt_ms"] == pytest.approx(120.0)  # not the newest test's 200
    assert doc["path"]["rtt_tests"] == 3
    assert doc["path"]["rtt_window_days"] == sources.RTT_WINDOW_DAYS == 30
    assert "median" in doc["path"]["rtt_source"] and "3 tests" in doc["path"]["rtt_source"]
    text = _advise(tmp_path, "--from", A, "--to", B, "--size", "1GB").output
    assert "RTT from: the pair's own tests: the median" in text


def test_the_rtt_window_keeps_to_the_chosen_direction(tmp_path):
    # the reverse direction's 104 ms test does not move A -> B's median to 104 (one at
    # 300 ms would be flagged asymmetric and leave out both directions' RTTs)
    _sweep(tmp_path, 0, {(A, B): [100.0], (B, A): [104.0]}, suffix="a001")
    _sweep(tmp_path, 1, {(A, B): [110.0]}, suffix="a002")
    doc = _json(tmp_path)
    assert doc["path"]["rtt_ms"] == pytest.approx(105.0)
    assert doc["path"]["rtt_tests"] == 2


def test_vm_cost_beside_the_egress_cost(tmp_path):
    # the catalog's t3.small and e2-small at list prices, for each option's time
    doc = _json_for(tmp_path, A, "gcp:asia-southeast1", "--size", "100GB")
    pricing = load_pricing()
    per_hour = pricing.clouds["aws"].vm_usd_per_hour + pricing.clouds["gcp"].vm_usd_per_hour
    vm = doc["cost"]["vm"]
    assert vm["usd_per_hour"] == pytest.approx(per_hour)
    assert vm["machine_types"] == {A: "t3.small", "gcp:asia-southeast1": "e2-small"}
    for option in doc["options"]:
        assert option["vm_usd"] == pytest.approx(option["time_s"] / 3600 * per_hour, abs=0.006)
        assert vm["option_usd"][option["name"]] == option["vm_usd"]
    text = _advise(tmp_path, "--from", A, "--to", "gcp:asia-southeast1", "--size", "100GB").output
    assert f"VM cost: ${per_hour:.4f}/h" in text
    header = next(line for line in text.splitlines() if line.strip().startswith("option "))
    assert header.rstrip().endswith("VM cost")


def test_no_vm_cost_when_the_pricing_prices_another_machine_type(tmp_path):
    catalog = load_catalog()
    other = type(catalog)(
        regions=catalog.regions,
        machine_types={**catalog.machine_types, "aws": "m5.large"},
        bandwidth=catalog.bandwidth,
    )
    a_, b_ = catalog.get(A), catalog.get(B)
    advice = a.advise(a.PathFacts(rtt_ms=80.0, line_rate_bps=968e6,
                                  default_window_bytes=2.53e6, loss_rate=None), 10**9)  # fmt: skip
    assert sources.vm_cost(advice, a_, b_, other) is None
    assert sources.vm_cost(advice, a_, b_, None) is None
    assert sources.vm_cost(advice, a_, b_, catalog) is not None


@pytest.mark.parametrize("ingest", [True, False])
def test_a_flagged_value_is_no_evidence_but_the_rest_of_its_test_is(tmp_path, ingest):
    # three tests of 100 Mbit/s, then three over-counted by their receivers
    # (receiver_exceeds_sender, a throughput flag) at 900 Mbit/s
    for day in range(6):
        bps = 1e8 if day < 3 else 9e8
        folder = _sweep(tmp_path, day, {(A, B): [100.0]}, throughput_bps=bps, suffix=f"a00{day}")
        if day >= 3:
            _set(folder, throughput_sender_bps=8e8)
            assert (
                "receiver_exceeds_sender"
                in store.read_rows(folder / "measurements.csv")[0]["flags"]
            )
    if ingest:
        h.ingest_all(tmp_path)
    doc = _json(tmp_path)
    assert doc["source"]["kind"] == ("history" if ingest else "sweep")
    assert doc["path"]["measured_bps"] == pytest.approx(1e8)  # not 5e8, the median of all six
    if ingest:  # their RTTs still count: the median over the window is of six tests
        assert doc["path"]["rtt_tests"] == 6
