"""The transfer model of `interregion advise`: hand-computed cases, strict parsing,
and properties that hold for any path."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.advise import tcp_model as a
from orchestrator.core.errors import UserError

# ---- sizes and counts -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("100GB", 100 * 10**9),
        ("1.5TiB", 3 * 2**39),
        ("500MB", 500 * 10**6),
        ("1 KiB", 1024),
        ("7B", 7),
        ("2kB", 2000),
        ("2KB", 2000),
        (" 3PB ", 3 * 10**15),
        ("10gb", 10 * 10**9),  # any case
        ("10 gB", 10 * 10**9),
        ("2mib", 2 * 2**20),
        ("1.5TIB", int(1.5 * 2**40)),
        ("100b", 100),
    ],
)
def test_sizes_parse_in_decimal_and_binary_units(text, size):
    assert a.parse_size_bytes(text) == size


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("100", "give a number and a unit"),
        ("100Gb", "are bits"),
        ("1Mib", "are bits"),
        ("100 Kb", "are bits"),
        ("1,5GB", "give a number and a unit"),
        ("-1GB", "give a number and a unit"),
        ("1e3GB", "give a number and a unit"),
        ("GB", "give a number and a unit"),
        ("", "give a number and a unit"),
        ("100GB of logs", "give a number and a unit"),
        ("100  GB", "give a number and a unit"),
        ("0GB", "nothing to transfer"),
        ("0.4B", "nothing to transfer"),
        ("1001PB", "above 1 EB"),
        ("9" * 400 + "PB", "above 1 EB"),
    ],
)
def test_bad_sizes_are_one_line_errors(text, message):
    with pytest.raises(UserError) as e:
        a.parse_size_bytes(text)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_counts_are_whole_numbers_of_at_least_one():
    assert a.parse_count("--streams", "8", "stream") == 8
    for text in ("0", "-1", "4.0", "x", "", "1e3"):
        with pytest.raises(UserError, match="--streams"):
            a.parse_count("--streams", text, "stream")


# ---- the physics, by hand -------------------------------------------------------------


def test_in_flight_memory_of_the_published_rule():
    # 300 Mbit/s x 0.150 s / 8 = 5.625 MB; x3 for a lossy link = 16.9 MB ("17 MB")
    assert a.bdp_bytes(300e6, 150.0) == pytest.approx(5_625_000)
    assert 3 * a.bdp_bytes(300e6, 150.0) == pytest.approx(16_875_000)


def test_window_limit_is_window_over_rtt():
    # the netmodel's fitted small-VM window, 2.534 MB, over 100 ms: 202.72 Mbit/s
    assert a.window_limited_bps(2_534_000, 100.0) == pytest.approx(202.72e6)


def test_mathis_ceiling_by_hand():
    # 1448 B x 8 / 0.1 s = 115,840 bit/s per unit; x 1.22 / sqrt(1e-4) = x 122
    assert a.loss_limited_bps(100.0, 1e-4) == pytest.approx(14_132_480)
    assert a.loss_limited_bps(100.0, 0.0) == math.inf
    assert a.loss_limited_bps(100.0, None) == math.inf


def test_loss_rate_counts_retransmissions_among_all_sent_segments():
    # 9,900 delivered segments + 100 retransmitted = 10,000 sent: 1 %
    assert a.loss_rate(100, 1448 * 9900) == pytest.approx(0.01)
    assert a.loss_rate(0, 1448 * 10) == 0.0
    assert a.loss_rate(None, 1448) is None
    assert a.loss_rate(5, 0) is None


def test_slow_start_ramp_by_hand():
    # MSS 1000, initcwnd 10: rounds of 10k, 20k, 40k, 80k bytes, one RTT (0.1 s) each,
    # until the window reaches the steady 8 Mbit/s x 0.1 s = 100 kB; then 1 MB/s
    ramp = a.ramp_transfer_s
    assert ramp(1_000_000, 8e6, 100.0, mss_bytes=1000) == pytest.approx(0.4 + 0.85)
    # 25 kB: one round of 10 kB, the last 15 kB fit in the next window
    assert ramp(25_000, 8e6, 100.0, mss_bytes=1000) == pytest.approx(0.1 + 0.015)
    # within the initial window: no round trip waited
    assert ramp(5_000, 8e6, 100.0, mss_bytes=1000) == pytest.approx(0.005)
    # a steady window below the initial one: no ramp at all
    assert ramp(1_000_000, 0.4e6, 100.0, mss_bytes=1000) == pytest.approx(20.0)


def _facts(**kw):
    base = dict(rtt_ms=100.0, line_rate_bps=1e9, default_window_bytes=2.5e6, loss_rate=None)
    return a.PathFacts(**{**base, **kw})


def test_three_options_by_hand():
    advice = a.advise(_facts(), 10**9, streams=4)
    default, tuned, parallel = advice.options
    # default: 2.5 MB / 0.1 s = 200 Mbit/s. Ramp at MSS 1448: 8 rounds (14,480 x 2^7 =
    # 1.85 MB < 2.5 MB) carry 14,480 x 255 = 3,692,400 bytes in 0.8 s; the rest at
    # 200 Mbit/s; plus TCP and TLS handshakes, 0.2 s
    assert (default.throughput_bps, default.limit) == (pytest.approx(200e6), "window")
    assert default.time_s == pytest.approx(0.2 + 0.8 + (10**9 - 3_692_400) * 8 / 200e6)
    # tuned: buffer 2 x BDP = 2 x 12.5 MB, half of it window = the BDP: line rate
    assert advice.facts.tuned_buffer_bytes == 25_000_000
    assert (tuned.throughput_bps, tuned.limit) == (pytest.approx(1e9), "line rate")
    # 4 streams of 250 MB at 200 Mbit/s each, the same 8-round ramp each
    assert (parallel.throughput_bps, parallel.limit) == (pytest.approx(800e6), "window")
    assert parallel.time_s == pytest.approx(0.2 + 0.8 + (250e6 - 3_692_400) * 8 / 200e6)
    assert "window limits default TCP" in advice.notes[0]


@pytest.mark.parametrize("rtt_ms", [26.1, 27.8, 217.2, 224.2])
def test_tuned_buffers_at_the_bdp_are_held_by_the_line_rate_not_the_window(rtt_ms):
    """A window of exactly the BDP carries the line rate: float noise must not name it
    "window" (it did at 26.1 and 27.8 ms, and for a third of all RTTs)."""
    advice = a.advise(_facts(rtt_ms=rtt_ms, line_rate_bps=968e6), 10**11)
    assert advice.options[1].limit == "line rate"


def test_the_rate_assumption_says_the_baseline_of_a_burstable_sender():
    burstable = a.assumptions(_facts(baseline_bps=128e6, burst_s=300.0))
    assert "line rate 1000 Mbit/s for the sender's first 5 min, then its baseline 128 Mbit/s" in (
        " ".join(burstable)
    )
    steady = " ".join(a.assumptions(_facts()))
    assert (
        "sustained for the whole transfer" in steady
        and "baseline" not in steady.split("sustained")[0]
    )


def test_new_connection_per_file_by_hand():
    advice = a.advise(_facts(), 10**9, streams=4, files=1000)
    cost = advice.files
    # a 1 MB file at 200 Mbit/s: 6 rounds (14,480 .. 463,360 bytes, 912,240 in all), the
    # last 87,760 bytes fit in the 7th window: 0.6 s + 87,760 x 8 / 200e6
    ramp = 0.6 + 87_760 * 8 / 200e6
    assert cost.tcp_handshake_s == pytest.approx(0.1)
    assert cost.tls_handshake_s == pytest.approx(0.1)
    assert cost.slow_start_s == pytest.approx(ramp - 0.04)
    assert cost.new_connection_per_file_s == pytest.approx(1000 * (0.2 + ramp))
    assert cost.reused_connection_s == pytest.approx(advice.option("default").time_s)
    # 4 streams take 250 files each
    assert advice.option("streams").files_time_s == pytest.approx(
        250 * (0.2 + a.ramp_transfer_s(1e6, 200e6, 100.0))
    )


def test_loss_bounds_every_option_when_it_is_the_tightest():
    # p = 1e-4 at 100 ms: 14.13 Mbit/s a stream, below the 200 Mbit/s window
    advice = a.advise(_facts(loss_rate=1e-4), 10**9, streams=4)
    default, tuned, parallel = advice.options
    assert (default.limit, tuned.limit, parallel.limit) == ("loss", "loss", "loss")
    assert tuned.throughput_bps == pytest.approx(14_132_480)
    assert parallel.throughput_bps == pytest.approx(4 * 14_132_480)
    assert "larger buffers will not help" in advice.notes[0]


def test_loss_can_cap_tuned_buffers_while_the_window_caps_default():
    # window 0.5 MB: 40 Mbit/s; p = 1e-5: 115,840 x 1.22 / sqrt(1e-5) = 44.69 Mbit/s
    advice = a.advise(_facts(default_window_bytes=0.5e6, loss_rate=1e-5), 10**9)
    assert advice.option("default").limit == "window"
    assert advice.option("tuned").limit == "loss"
    assert advice.option("tuned").throughput_bps == pytest.approx(115_840 * 1.22 / 1e-5**0.5)
    assert "loss caps tuned buffers at 45 Mbit/s" in advice.notes[0]


def test_default_window_from_a_measurement():
    # 100 Mbit/s at 100 ms is 1.25 MB in flight; over 4 streams, a quarter each
    assert a.default_window_from(100e6, 100.0) == pytest.approx(1.25e6)
    assert a.default_window_from(100e6, 100.0, streams=4) == pytest.approx(0.3125e6)


def test_sysctl_lines_carry_the_tuned_buffer():
    lines = a.sysctl_lines(_facts())
    assert "net.ipv4.tcp_rmem = 4096 131072 25000000" in lines
    assert "net.ipv4.tcp_wmem = 4096 16384 25000000" in lines


@pytest.mark.parametrize(("seconds", "text"), [
    (0.346, "0.35 s"), (42.04, "42.0 s"), (725, "12 min 5 s"), (11_520, "3 h 12 min"),
    (187_200, "2 d 4 h"),
])  # fmt: skip
def test_durations_read_as_people_write_them(seconds, text):
    assert a.format_duration(seconds) == text


def test_bad_arguments_of_the_model_are_user_errors():
    with pytest.raises(UserError, match="at least 1 stream"):
        a.advise(_facts(), 10**9, streams=0)
    with pytest.raises(UserError, match="--files 11"):
        a.advise(_facts(), 10, files=11)
    with pytest.raises(UserError, match="RTT"):
        _facts(rtt_ms=0.0)


# ---- properties -----------------------------------------------------------------------

paths = st.builds(
    a.PathFacts,
    rtt_ms=st.floats(0.5, 400.0),
    line_rate_bps=st.floats(1e6, 1e11),
    default_window_bytes=st.floats(1e4, 1e8),
    loss_rate=st.none() | st.floats(1e-8, 0.2),
)


@given(paths, st.integers(1, 10**13), st.integers(1, 64))
def test_tuning_and_streams_never_slow_a_transfer(facts, size, streams):
    advice = a.advise(facts, size, streams)
    default, tuned, parallel = advice.options
    assert tuned.throughput_bps >= default.throughput_bps * (1 - 1e-9)
    assert parallel.throughput_bps >= default.throughput_bps * (1 - 1e-9)
    for o in advice.options:
        assert o.throughput_bps <= facts.line_rate_bps * (1 + 1e-9)
        # never faster than the steady rate alone
        assert o.time_s >= size * 8 / o.throughput_bps * (1 - 1e-9)


@given(paths, st.integers(1, 10**11), st.integers(1, 10**5))
def test_a_new_connection_per_file_never_beats_one_reused(facts, size, files):
    files = min(files, size)
    advice = a.advise(facts, size, 1, files)
    assert advice.files.new_connection_per_file_s >= advice.files.reused_connection_s * (1 - 1e-9)
    if files == 1:
        assert advice.files.new_connection_per_file_s == pytest.approx(
            advice.files.reused_connection_s
        )


def test_a_buffer_above_what_linux_can_set_is_capped_and_said():
    # 100 Gbit/s at 300 ms: BDP 3.75 GB, 2 x BDP = 7.5 GB > 2^31 - 1 bytes
    advice = a.advise(_facts(line_rate_bps=100e9, rtt_ms=300.0), 10**12)
    assert advice.facts.tuned_buffer_bytes == 2**31 - 1
    tuned = advice.option("tuned")
    assert tuned.limit == "window"
    assert tuned.throughput_bps == pytest.approx((2**31 - 1) * 0.5 * 8 / 0.3)
    assert "above the largest buffer Linux can set" in advice.notes[0]


def _measured(p):
    # a stream measured at 100 Mbit/s over 100 ms: window 1.25 MB
    return _facts(default_window_bytes=1.25e6, measured_bps=100e6, loss_rate=p)


def test_retransmissions_the_measurement_contradicts_set_no_loss_ceiling():
    # p = 1e-4 gives Mathis 14.13 Mbit/s, but the stream carried 100: below 0.7 x 100,
    # the losses were a burst, so only the window and the line rate bound the options
    facts = _measured(1e-4)
    assert facts.mathis_bps == pytest.approx(14_132_480)
    assert facts.loss_model_fails
    assert facts.loss_ceiling_bps == math.inf
    advice = a.advise(facts, 10**9)
    assert advice.option("default").throughput_bps == pytest.approx(100e6)
    assert (advice.option("tuned").limit, advice.option("tuned").throughput_bps) == (
        "line rate",
        pytest.approx(1e9),
    )
    assert "losses were likely a burst" in advice.notes[0]


def test_retransmissions_that_explain_the_measurement_make_loss_the_limit():
    # p for a Mathis ceiling of 80 Mbit/s (within 30 % of the 100 measured): the stream
    # is loss-limited, its ceiling taken as the 100 it carried, and tuned gains nothing
    p = (115_840 * 1.22 / 80e6) ** 2
    facts = _measured(p)
    assert facts.mathis_bps == pytest.approx(80e6)
    assert not facts.loss_model_fails
    assert facts.loss_ceiling_bps == pytest.approx(100e6)
    advice = a.advise(facts, 10**9, streams=4)
    default, tuned, parallel = advice.options
    assert (default.limit, default.throughput_bps) == ("loss", pytest.approx(100e6))
    assert (tuned.limit, tuned.throughput_bps) == ("loss", pytest.approx(100e6))
    assert parallel.throughput_bps == pytest.approx(400e6)
    assert "larger buffers will not help" in advice.notes[0]


@given(paths, st.floats(1e5, 1e10), st.integers(1, 16), st.integers(1, 64))
def test_no_option_falls_below_the_measured_default(facts, measured_bps, measured_streams, streams):
    # the model never predicts less than the test showed, whatever its retransmissions
    rate = min(measured_bps, facts.line_rate_bps)
    facts = a.PathFacts(
        rtt_ms=facts.rtt_ms,
        line_rate_bps=facts.line_rate_bps,
        default_window_bytes=a.default_window_from(rate, facts.rtt_ms, measured_streams),
        loss_rate=facts.loss_rate,
        measured_bps=rate,
        measured_streams=measured_streams,
    )
    per_stream = rate / measured_streams
    advice = a.advise(facts, 10**9, streams)
    for o in advice.options:
        floor = min(per_stream * o.streams, facts.line_rate_bps)
        assert o.throughput_bps >= floor * (1 - 1e-9)
