"""Parsers on real captured outputs (tests/data/capture.sh made them)."""

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.core.stats import min_samples_for, percentile, quotable_percentiles
from orchestrator.results import flags
from orchestrator.results.files import format_value
from orchestrator.results.parse import CORRUPTED, parse_iperf3, parse_ping, summarize_probes

DATA = Path(__file__).resolve().parents[2] / "data"


def read(name: str) -> str:
    return (DATA / name).read_text()


# ---- iperf3 ---------------------------------------------------------------------------


def test_iperf3_forward_takes_receiver_sender_and_the_clients_kernel_figures():
    r = parse_iperf3(read("iperf3_forward.json"))
    assert r["ok"] and r["error"] == ""
    assert r["reverse"] is False
    # the receiver's (server's) intervals over the client's 1.99857 s: 3,506,151,342 bytes
    assert r["throughput_bps"] == pytest.approx(14034904590.033041)
    assert r["receiver_own_bps"] == pytest.approx(14034474008.782385)  # end.sum_received
    assert r["throughput_sender_bps"] == pytest.approx(14013752312.903727)  # end.sum_sent
    # aligned: the receiver's whole count (1,694,425,384 in its omit + 3,509,264,088 after)
    # less the 1,709,703,168 the sender wrote in its omit. iperf3's own receiver figure,
    # 3,509,264,088, is above the sender's 3,500,933,120 by 15,277,784 bytes of the omit
    assert r["aligned"] and r["bytes"] == 1694425384 + 3509264088 - 1709703168 == 3493986304
    assert r["omit_backlog_bytes"] == 1709703168 - 1694425384
    assert r["retransmits"] == 805
    assert r["tcp_rtt_ms"] == pytest.approx(0.411)  # mean_rtt 411 us
    assert r["max_cwnd_bytes"] == 2574544
    assert r["duration_s"] == pytest.approx(1.99857)  # the client's (sum_sent) interval
    assert r["streams"] == 1


def test_iperf3_reverse_takes_rtt_and_cwnd_from_the_server_which_was_the_sender():
    r = parse_iperf3(read("iperf3_reverse.json"))
    assert r["ok"] and r["reverse"] is True
    assert r["throughput_bps"] == pytest.approx(12928750169.60185)  # the client's own
    assert r["aligned"] and r["bytes"] == 3228565504
    # the server's bytes over the client's (the receiver's) interval: see the next test
    sent = json.loads(read("iperf3_reverse.json"))["end"]["sum_sent"]
    assert r["throughput_sender_bps"] == pytest.approx(sent["bytes"] * 8 / 2.000273)
    assert r["retransmits"] == 358
    # the client's own streams hold zeros here: the figures must come from server_output_json
    assert r["tcp_rtt_ms"] == pytest.approx(0.438)
    assert r["max_cwnd_bytes"] == 2704864


def test_a_reverse_tests_sender_rate_is_its_bytes_over_the_receivers_interval():
    """-R at 200 ms (capture_limiters.sh reverse_long_rtt): the server, which sent, kept its
    clock one RTT past the client's; iperf3's own sender rate reads below the receiver's
    although the server sent more bytes than the client got."""
    text = (DATA / "iperf3_limiter_reverse_long_rtt.json").read_text()
    end = json.loads(text)["end"]
    sent, received = end["sum_sent"], end["sum_received"]
    assert sent["seconds"] > received["seconds"] + 0.15  # one RTT longer
    assert sent["bytes"] > received["bytes"]
    assert received["bits_per_second"] > sent["bits_per_second"] * 1.01  # would be "ahead"
    r = parse_iperf3(text)
    assert r["ok"] and r["reverse"] is True
    assert r["throughput_sender_bps"] == pytest.approx(sent["bytes"] * 8 / received["seconds"])
    assert r["throughput_sender_bps"] >= r["throughput_bps"]
    # omit 2 with iperf3's 1 s intervals: an end's last omitted second is not listed, so
    # the counts are not aligned; bytes is the client's count over its own interval
    assert not r["aligned"] and r["bytes"] == received["bytes"]
    assert flags.RECEIVER_EXCEEDS_SENDER not in flags.row_flags(r, asked_duration_s=5)
    assert r["duration_s"] == pytest.approx(received["seconds"])  # the client's, as asked


def test_the_measured_interval_is_the_clients_in_both_directions():
    """iperf3 -t 5 at 200 ms: the server's clock ran 5.2 s; the interval asked was 5 s."""
    for name in ("limiter_reverse_long_rtt", "limiter_window"):
        doc = json.loads(read(f"iperf3_{name}.json"))
        asked = doc["start"]["test_start"]["duration"]
        server = doc["server_output_json"]["end"][
            "sum_received" if name.endswith("window") else "sum_sent"
        ]
        assert server["seconds"] > asked * 1.015  # one RTT (80 or 200 ms) longer
        assert parse_iperf3(json.dumps(doc))["duration_s"] == pytest.approx(asked, rel=0.005)


def test_a_forward_tests_receiver_rate_is_over_the_senders_interval():
    """Forward, the server received through its longer clock (4.08 s against the client's
    4.00): its goodput is its bytes of the client's 4 s after its omit, over 4 s; the
    sender's rate is iperf3's own."""
    doc = json.loads(read("iperf3_limiter_window.json"))
    r = parse_iperf3(json.dumps(doc))
    assert r["throughput_sender_bps"] == doc["end"]["sum_sent"]["bits_per_second"]
    seconds = doc["end"]["sum_sent"]["seconds"]
    server = doc["server_output_json"]
    after = [i["sum"] for i in server["intervals"] if not i["sum"]["omitted"]]
    # every interval but the last ends within the client's interval; the last, past it,
    # counts for the share of it that lies inside
    last = after[-1]
    inside = sum(s["bytes"] for s in after[:-1]) + last["bytes"] * (seconds - last["start"]) / (
        last["end"] - last["start"]
    )
    assert last["start"] < seconds < last["end"]
    assert r["throughput_bps"] == pytest.approx(inside * 8 / seconds)
    assert r["throughput_bps"] == pytest.approx(13095159.730727425)
    assert r["receiver_own_bps"] == doc["end"]["sum_received"]["bits_per_second"]


def test_iperf3_several_streams_average_rtt_and_take_the_largest_cwnd():
    r = parse_iperf3(read("iperf3_two_streams.json"))
    assert r["ok"] and r["streams"] == 2
    assert r["tcp_rtt_ms"] == pytest.approx((628 + 627) / 2 / 1000)
    assert r["max_cwnd_bytes"] == 3075552
    assert r["bytes"] == 4130865152  # aligned; the receiver's own count: 4,133,224,448


def test_reverse_without_server_output_still_gives_throughput():
    import json

    doc = json.loads(read("iperf3_reverse.json"))
    del doc["server_output_json"]
    r = parse_iperf3(json.dumps(doc))
    assert r["ok"] and r["throughput_bps"] == pytest.approx(12928750169.60185)
    assert r["tcp_rtt_ms"] is None and r["max_cwnd_bytes"] is None


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("iperf3_refused.json", "unable to connect to server: Connection refused"),
        ("iperf3_busy.json", "the server is busy running a test. try again later"),
    ],
)
def test_iperf3_own_error_becomes_a_failed_test_with_its_message(name, error):
    r = parse_iperf3(read(name))
    assert r == {"ok": False, "error": error}


@pytest.mark.parametrize("name", ["iperf3_truncated.json", "iperf3_garbage.json"])
def test_iperf3_damaged_output_is_a_failed_test(name):
    assert parse_iperf3(read(name)) == {"ok": False, "error": CORRUPTED}


@pytest.mark.parametrize("text", ["", "[]", '{"start": {}}', "null"])
def test_iperf3_valid_json_of_the_wrong_shape_is_corrupted(text):
    assert parse_iperf3(text)["error"] == CORRUPTED


# ---- ping -----------------------------------------------------------------------------


def test_ping_success_keeps_every_sample_and_percentiles_come_from_them():
    r = parse_ping(read("ping_ok.txt"))
    assert r["ok"]
    assert r["samples_ms"] == [0.497, 0.051, 0.047, 0.052, 0.014, 0.044, 0.057, 0.022, 0.051, 0.027]
    assert (r["rtt_min_ms"], r["rtt_avg_ms"], r["rtt_max_ms"], r["rtt_mdev_ms"]) == (
        0.014,
        0.086,
        0.497,
        0.137,
    )
    assert r["ping_loss_pct"] == 0.0
    # sorted: .014 .022 .027 .044 .047 .051 .051 .052 .057 .497
    assert r["rtt_p50_ms"] == pytest.approx((0.047 + 0.051) / 2)  # rank 4.5
    # the matrix's sample rule: 10 samples quote no tail percentile (p25/p75 need 40,
    # p10/p90 100, p99 1,000); blank, with the count beside it, never the largest sample
    assert r["rtt_samples"] == 10
    for q in ("p10", "p25", "p75", "p90", "p99"):
        assert math.isnan(r[f"rtt_{q}_ms"])
    assert format_value(r["rtt_p99_ms"]) == ""


def test_a_percentile_is_quoted_once_there_are_samples_enough_for_it():
    # the rule at its edges: p90 from 100 samples, not 99; p99 from 1,000
    assert [min_samples_for(q) for q in (0, 10, 25, 50, 75, 90, 99, 100)] == [
        1, 100, 40, 1, 40, 100, 1000, 1,
    ]  # fmt: skip
    samples = [float(i) for i in range(1, 101)]  # 1..100 ms
    p90, p99 = quotable_percentiles(samples, (90, 99))
    assert p90 == pytest.approx(90.1) and math.isnan(p99)
    assert math.isnan(quotable_percentiles(samples[:99], (90,))[0])
    probes = summarize_probes(100, samples)
    assert probes["rtt_p90_ms"] == pytest.approx(90.1) and math.isnan(probes["rtt_p99_ms"])


def test_ping_loss_counts_only_replies():
    r = parse_ping(read("ping_loss.txt"))
    assert r["ok"]
    assert r["ping_loss_pct"] == pytest.approx(33.3333)
    assert (r["transmitted"], r["received"]) == (12, 8)
    assert len(r["samples_ms"]) == 8
    assert r["rtt_min_ms"] == 0.028 and r["rtt_max_ms"] == 0.074


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("ping_all_lost.txt", "ping: no reply (100% loss)"),
        ("ping_unreachable.txt", "ping: Destination Host Unreachable (100% loss)"),
        ("ping_no_route.txt", "ping: Network is unreachable"),
    ],
)
def test_ping_without_replies_is_failed_with_full_loss(name, why):
    r = parse_ping(read(name))
    assert not r["ok"]
    assert r["error"] == why
    assert r["ping_loss_pct"] == 100.0
    assert r["samples_ms"] == []


def test_ping_cut_before_its_statistics_is_corrupted():
    r = parse_ping(read("ping_truncated.txt"))
    assert r["ok"] is False and r["error"] == f"ping: {CORRUPTED}"
    assert len(r["samples_ms"]) == 5  # what arrived is still kept for the raw record


def test_long_rtt_percentiles_come_from_whole_ms_samples_unclamped():
    # iputils prints "time=131 ms" (whole ms from 100 ms on), its summary to 1 us
    r = parse_ping(read("ping_long.txt"))
    assert r["ok"]
    assert r["samples_ms"] == [130.0, 127.0, 126.0, 131.0, 129.0, 130.0, 128.0, 128.0, 131.0, 129.0]
    assert (r["rtt_min_ms"], r["rtt_max_ms"]) == (126.485, 130.870)
    # sorted: 126 127 128 128 129 129 130 130 131 131
    assert r["rtt_p50_ms"] == 129.0  # rank 4.5
    # too few samples for a p90 or p99 (the sample rule): blank, not the largest sample
    assert math.isnan(r["rtt_p90_ms"]) and math.isnan(r["rtt_p99_ms"])


def test_duplicate_replies_are_not_samples():
    text = read("ping_ok.txt").replace(
        "icmp_seq=2 ttl=64 time=0.051 ms",
        "icmp_seq=2 ttl=64 time=0.051 ms\n64 bytes from 198.19.251.2: icmp_seq=2 ttl=64 "
        "time=9.000 ms (DUP!)",
    )
    assert 9.0 not in parse_ping(text)["samples_ms"]


# ---- percentile (stats.percentile, Hyndman-Fan 7; known answers in test_analyze) ----


@given(st.lists(st.floats(0, 1e4, allow_nan=False), min_size=1, max_size=50))
def test_percentiles_are_ordered_and_within_the_samples(values):
    ordered = sorted(values)
    p50, p90, p99 = (percentile(ordered, q) for q in (50, 90, 99))
    assert ordered[0] <= p50 <= p90 <= p99 <= ordered[-1]
