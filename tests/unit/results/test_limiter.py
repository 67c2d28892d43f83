"""The limiter of a throughput row, on real iperf3 runs (tests/data/capture_limiters.sh:
two namespaces, delayd for delay and loss, tc tbf for rates, a route's window clamp)."""

import json
import math
from pathlib import Path

import pytest

from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import (
    DEFAULT_MODEL,
    REAL_WINDOW_BYTES,
    emulated_types,
    path_facts,
)
from orchestrator.results import limiter
from orchestrator.results.limiter import PathFacts, classify
from orchestrator.results.parse import parse_iperf3
from orchestrator.results.raw_rows import RowContext, SlotPlan, slot_rows

DATA = Path(__file__).resolve().parents[2] / "data"


def captured(name: str, rtt_ms: float, **row: object) -> tuple[dict, dict]:
    """A captured test as collect sees it: (row fields, the parsed iperf3 figures); the
    idle RTT is the delay the capture set up (delayd on the data direction only)."""
    test = parse_iperf3((DATA / f"iperf3_limiter_{name}.json").read_text())
    assert test["ok"], test["error"]
    return {**test, "rtt_p50_ms": rtt_ms, **row}, test


# Each capture's set-up, as its hosts' facts say it (capture_limiters.sh).
CASES = {
    # 80 ms; B's route clamps the window at 64 KiB, which lets 128 KiB be in flight
    "window": (80.0, PathFacts(window_bytes=131072)),
    # 80 ms, 1 % of A's packets dropped, no rate cap; default buffers (6 MB window)
    "loss": (80.0, PathFacts(window_bytes=REAL_WINDOW_BYTES)),
    # 2 ms, 4 streams through a 20 Mbit/s line
    "capacity": (2.0, PathFacts(line_rate_bps=20e6, window_bytes=REAL_WINDOW_BYTES)),
    # a burstable host held at its 6.6 Mbit/s baseline, under a 50 Mbit/s line
    "allowance": (
        2.0,
        PathFacts(line_rate_bps=50e6, baseline_bps=6.6e6, window_bytes=REAL_WINDOW_BYTES),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_each_captured_set_up_is_named_for_what_limited_it(name):
    rtt, facts = CASES[name]
    row, test = captured(name, rtt)
    found = classify(row, test, facts)
    assert found is not None
    assert found.name == name, found.detail
    assert f"throughput_bps={limiter._fmt(row['throughput_bps'])}" in found.detail


def test_a_reverse_capacity_test_on_a_long_path_is_capacity():
    """-R at 200 ms, 8 streams on buffers sized for 2 x BDP through a 50 Mbit/s line: the
    server's clock ran one RTT past the client's. Its bytes over the client's interval
    agree with the receiver's (the sender ahead by what the path held), so the test is
    capacity, not "at the line rate, but sender and receiver disagree"."""
    row, test = captured("reverse_long_rtt", 200.0)
    found = classify(row, test, PathFacts(line_rate_bps=50e6, window_bytes=1_250_000))
    assert found.name == limiter.CAPACITY, found.detail
    assert limiter.usable_as_capacity({"limiter": found.name})


def test_the_deciding_figures_are_in_the_detail():
    row, test = captured("window", 80.0)
    found = classify(row, test, CASES["window"][1])
    figures = dict(part.split("=") for part in found.detail.split(";"))
    bound = 131072 * 8 / 0.080
    assert float(figures["window_bps"]) == pytest.approx(bound, rel=1e-3)
    assert float(figures["ratio"]) == pytest.approx(row["throughput_bps"] / bound, rel=1e-3)
    assert float(figures["window_bytes"]) == 131072


def test_a_window_limited_test_is_not_a_window_when_the_window_is_far_larger():
    row, test = captured("window", 80.0)
    found = classify(row, test, PathFacts(window_bytes=4 * 131072))
    assert found.name == limiter.UNKNOWN
    assert "why=no bound within tolerance" in found.detail
    # the bound it was compared with is said: 4 x 131072 B / 80 ms
    assert f"window_bps={limiter._fmt(4 * 131072 * 8 / 0.080)}" in found.detail


def test_loss_is_read_off_the_retransmits_and_mathis():
    row, test = captured("loss", 80.0)
    assert row["retransmits"] > 0
    p = row["retransmits"] / (test["sent_bytes"] / test["mss_bytes"])
    ceiling = limiter.mathis_bps(80.0, p, 1, 1448)
    assert abs(row["throughput_bps"] - ceiling) <= 0.3 * ceiling
    # no retransmission: nothing for Mathis to explain
    assert classify({**row, "retransmits": 0}, test, CASES["loss"][1]).name != limiter.LOSS


def test_loss_allows_the_counting_error_of_its_retransmissions_and_yields_to_the_window():
    row, test = captured("loss", 80.0)
    k = row["retransmits"]
    p = k / (test["sent_bytes"] / test["mss_bytes"])
    ceiling = limiter.mathis_bps(80.0, p, 1, 1448)
    facts = PathFacts(window_bytes=REAL_WINDOW_BYTES)
    low, high = limiter.loss_band(k)
    assert low < 0.7 and high > 1.3  # wider than the model's 30 % alone
    for share, name in ((0.9 * high, limiter.LOSS), (1.1 * high, limiter.UNKNOWN),
                        (1.05 * low, limiter.LOSS), (0.9 * low, limiter.UNKNOWN)):  # fmt: skip
        found = classify({**row, "throughput_bps": share * ceiling,
                          "throughput_sender_bps": share * ceiling}, test, facts)  # fmt: skip
        assert found.name == name, (share, found.detail)
    # a stream at its window bound is held by its window, even where loss could explain it
    window_bps = REAL_WINDOW_BYTES * 8 / 0.08
    at_window = {**row, "throughput_bps": window_bps, "throughput_sender_bps": window_bps}
    wide = {**row, "retransmits": 2}  # two losses: the loss band is open above
    assert limiter.loss_band(2)[1] == math.inf
    assert classify({**wide, **at_window}, test, facts).name == limiter.WINDOW


def test_capacity_needs_sender_and_receiver_to_agree():
    row, test = captured("capacity", 2.0)
    facts = CASES["capacity"][1]
    received = row["throughput_bps"]
    agreeing = {**row, "throughput_sender_bps": received * 1.005}
    assert classify(agreeing, test, facts).name == limiter.CAPACITY
    seconds = row["duration_s"]
    for sender in (received * 1.02, received * 0.98):  # sender above; receiver above
        # the receiver's count of the sender's bytes as far off as its rate
        count = received * seconds / 8
        found = classify({**row, "throughput_sender_bps": sender, "bytes": count}, test, facts)
        assert found.name == limiter.UNKNOWN
        assert "receiver_minus_sender=" in found.detail
        assert not limiter.usable_as_capacity(found.to_row())
    assert limiter.usable_as_capacity(classify(agreeing, test, facts).to_row())


def test_a_sender_ahead_by_what_a_long_path_holds_in_flight_still_agrees():
    # the emulated cloud's capacity test at 204 ms: 50.0 Mbit/s received, 52.56 sent over
    # 5 s: 1.6 MB ahead, within 2 x BDP (2.55 MB) at the received rate
    row = {"throughput_bps": 50.0e6, "throughput_sender_bps": 52.56e6, "rtt_p50_ms": 204.0,
           "duration_s": 5.0, "streams": 8}  # fmt: skip
    facts = PathFacts(line_rate_bps=50e6)
    found = classify(row, {}, facts)
    assert found.name == limiter.CAPACITY and "sender_ahead_bytes=" in found.detail
    # iperf3 reports a 5 s interval as a little less at times: still 5 s
    assert classify({**row, "duration_s": 4.98}, {}, facts).name == limiter.CAPACITY
    assert classify({**row, "duration_s": 3.0}, {}, facts).name == limiter.UNKNOWN
    # the same gap on a 20 ms path is more than it can hold: a disagreement
    near = classify({**row, "rtt_p50_ms": 20.0}, {}, facts)
    assert near.name == limiter.UNKNOWN and "receiver_minus_sender=" in near.detail
    # a receiver ahead never gets the allowance
    ahead = classify({**row, "throughput_bps": 52.56e6, "throughput_sender_bps": 50.0e6},
                     {}, PathFacts(line_rate_bps=52.56e6))  # fmt: skip
    assert ahead.name == limiter.UNKNOWN


def test_a_reverse_tests_server_may_be_ahead_by_what_it_sent_past_the_clients_interval():
    # the emulated cloud's reverse capacity test at 94.7 ms: the server counted 0.19 s past
    # the client and sent 1.51 MB more than the client got (2.6 BDP at 50 Mbit/s)
    row = {"throughput_bps": 50.0e6, "throughput_sender_bps": 52.42e6, "rtt_p50_ms": 94.7,
           "duration_s": 5.0, "streams": 8}  # fmt: skip
    facts = PathFacts(line_rate_bps=50e6)
    assert classify(row, {"sender_extra_s": 0.19}, facts).name == limiter.CAPACITY
    # a forward test (the client sent; its clock is the one asked) has no such time
    assert classify(row, {"sender_extra_s": 0.0}, facts).name == limiter.UNKNOWN
    assert classify(row, {}, facts).name == limiter.UNKNOWN


def test_parse_gives_a_reverse_tests_sender_extra_time():
    test = parse_iperf3((DATA / "iperf3_limiter_reverse_long_rtt.json").read_text())
    assert test["sender_extra_s"] == pytest.approx(5.200247 - 4.99995)
    assert parse_iperf3((DATA / "iperf3_limiter_window.json").read_text())["sender_extra_s"] == 0


def test_a_disagreeing_row_is_still_classified_below_the_line_rate():
    row, test = captured("window", 80.0)
    found = classify({**row, "throughput_sender_bps": row["throughput_bps"] * 0.9}, test,
                     CASES["window"][1])  # fmt: skip
    assert found.name == limiter.WINDOW and "receiver_minus_sender=0.1111" in found.detail


def test_moved_allowance_counters_win_over_the_line_rate():
    row, test = captured("capacity", 2.0, src_bw_out_allowance_exceeded_packets=1887)
    row["throughput_sender_bps"] = row["throughput_bps"]
    found = classify(row, test, CASES["capacity"][1])
    assert found.name == limiter.ALLOWANCE
    assert "src_bw_out_allowance_exceeded_packets=1887" in found.detail
    # a counter that did not move (0) or was not read (None) is no evidence
    for value in (0, None):
        row["src_bw_out_allowance_exceeded_packets"] = value
        assert classify(row, test, CASES["capacity"][1]).name == limiter.CAPACITY


def test_cpu_steal_or_a_saturated_sender_is_cpu_when_no_bound_explains_the_rate():
    row, test = captured("window", 80.0)
    # hosts whose window would allow 4 x the rate: no bound fits, the row is unknown...
    short = PathFacts(window_bytes=4 * 131072)
    assert classify(row, test, short).name == limiter.UNKNOWN
    # ...unless a host's CPU was taken (steal) or the sender's iperf3 was at its limit
    stolen = classify({**row, "src_cpu_steal_pct": 12.5}, test, short)
    assert stolen.name == limiter.CPU
    assert "src_cpu_steal_pct=12.5" in stolen.detail and "window_bps=" in stolen.detail
    assert classify({**row, "dst_cpu_steal_pct": 9.9}, test, short).name == limiter.UNKNOWN
    busy = {**test, "sender_cpu_pct": 95.0}
    assert classify(row, busy, short).name == limiter.CPU
    # iperf3 3.16 runs a thread per stream: 95 % of one core is not 4 streams' limit
    many = {**row, "streams": 4}
    assert classify(many, {**busy, "iperf3_version": "iperf 3.17.1"}, short).name != limiter.CPU
    assert limiter.cpu_limit_pct("iperf 3.17.1", 4, 2) == 200.0
    assert limiter.cpu_limit_pct("iperf 3.12", 4, 2) == 100.0


def test_a_busy_cpu_does_not_hide_the_bound_the_rate_is_at():
    """A shared machine's steal (CI's was 11-20 %) or a busy sender during a test at its
    window or at the line rate: the bound held it, not the CPU."""
    for name in ("window", "capacity"):
        rtt, facts = CASES[name]
        row, test = captured(name, rtt)
        stolen = {**row, "src_cpu_steal_pct": 20.5, "dst_cpu_steal_pct": 11.7}
        assert classify(stolen, test, facts).name == name
        assert classify(row, {**test, "sender_cpu_pct": 99.0}, facts).name == name


def test_the_loopback_captures_are_not_cpu_bound_and_name_the_sender_side():
    forward = parse_iperf3((DATA / "iperf3_forward.json").read_text())
    reverse = parse_iperf3((DATA / "iperf3_reverse.json").read_text())
    # the client's own CPU forward, the server's (remote) reverse: values read off the files
    assert forward["sender_cpu_pct"] == pytest.approx(38.6192141866107)
    assert reverse["sender_cpu_pct"] == pytest.approx(29.61415517355121)
    assert forward["mss_bytes"] == 1448 and forward["iperf3_version"] == "iperf 3.12"
    assert forward["sent_bytes"] == 3500933120


def test_a_row_without_throughput_has_no_limiter():
    assert classify({"throughput_bps": None}, {}, PathFacts()) is None
    assert classify({"throughput_bps": ""}, {}, PathFacts()) is None


# ---- the hosts' facts ------------------------------------------------------------------


def test_path_facts_of_cloud_types_come_from_the_catalog():
    catalog = load_catalog()
    facts = path_facts("t3.small", "e2-small", catalog)
    assert facts.line_rate_bps == 1e9  # e2-small's 1 Gbps under t3.small's 5 Gbps burst
    assert facts.baseline_bps == pytest.approx(0.128e9)  # t3.small's baseline
    assert facts.window_bytes == REAL_WINDOW_BYTES
    plain = path_facts("e2-small", "e2-small", catalog)
    assert plain.line_rate_bps == 1e9 and plain.baseline_bps is None


def test_path_facts_of_emulated_types_come_from_the_emulator():
    types = list(emulated_types())
    plain = path_facts(types[0], types[0], None)
    assert plain.line_rate_bps == DEFAULT_MODEL.rate_bps and plain.baseline_bps is None
    assert plain.window_bytes == DEFAULT_MODEL.window_bytes
    burstable = path_facts("emulated-t3.small-5s", types[0], None)
    assert burstable.baseline_bps == pytest.approx(0.128e9 * DEFAULT_MODEL.scale, rel=1e-3)


# ---- collect: the columns of a row -------------------------------------------------------


def test_collect_writes_the_limiter_of_each_measured_row():
    text = (DATA / "iperf3_limiter_window.json").read_text()
    test = {"direction": "forward", "attempts": 1, "peer_late": False,
            "run": {"rc": 0, "stdout": text, "stderr": ""}}  # fmt: skip
    client = {"agent_version": 3, "host": "aws:us-east-1", "round": 1, "role": "client",
              "peer": "aws:us-east-2", "ping": None, "iperf3": [test]}  # fmt: skip
    server = {"agent_version": 3, "host": "aws:us-east-2", "round": 1, "role": "server",
              "peer": "aws:us-east-1", "ping": None, "iperf3_server": []}  # fmt: skip
    pair = ("aws:us-east-1", "aws:us-east-2")
    ctx = RowContext("s", "aws", 1, {}, {pair: 500.0}, {pair: PathFacts(window_bytes=131072)})
    slot = SlotPlan(client=pair[0], server=pair[1], reverse=False, port=5201)
    texts = {pair[0]: json.dumps(client), pair[1]: json.dumps(server)}
    (row,) = slot_rows(1, slot, texts, ctx)
    # no ping in the slot: the sender's TCP RTT (80.09 ms, no queue) stands in
    assert row["limiter"] == limiter.WINDOW and "rtt_ms=80.09" in row["limiter_detail"]
    (bare,) = slot_rows(1, slot, texts, RowContext("s", "aws", 1, {}, {pair: 500.0}))
    assert bare["limiter"] == limiter.UNKNOWN  # no facts: no bound to compare with


def test_a_ramp_inside_the_measured_interval_is_never_capacity():
    # 250 ms, 1 s omitted of a 2 s test: the two ends' rates differ by about 10 %
    row, test = captured("short_omit", 250.0)
    gap = row["throughput_bps"] / row["throughput_sender_bps"] - 1
    assert abs(gap) > limiter.AGREEMENT
    found = classify(row, test, PathFacts(line_rate_bps=row["throughput_bps"]))
    assert found.name == limiter.UNKNOWN
    assert "sender and receiver disagree" in found.detail
