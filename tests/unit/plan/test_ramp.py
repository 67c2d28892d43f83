"""The omit and the measured interval of a test: slow start at the pair's RTT to the
window it is expected to reach (orchestrator.plan.ramp), by hand."""

import math

import pytest

from orchestrator.plan.ramp import MIN_INTERVAL_S, slow_start_rtts, timing_for
from orchestrator.plan.sweep_plan import TestParams, timing_of


def test_slow_start_round_trips_by_hand():
    # from 10 x 1448 = 14,480 bytes, doubling each round trip
    assert slow_start_rtts(14_480) == 0.0
    assert slow_start_rtts(14_480 * 8) == pytest.approx(3.0)
    assert slow_start_rtts(2_534_000) == pytest.approx(math.log2(2_534_000 / 14_480))  # 7.45
    assert slow_start_rtts(1000) == 0.0  # below the initial window: no ramp


def test_the_issues_case_250_ms_to_a_2_5_mb_window():
    t = timing_for(250.0, 2_534_000, None)
    assert t.ramp_s == pytest.approx(7.45 * 0.25, abs=0.01)  # about 1.86 s
    assert t.omit_s == 2 and t.duration_s == MIN_INTERVAL_S


def test_the_line_rate_ends_the_ramp_early():
    # 50 Mbit/s at 3 ms: the bandwidth-delay product (18,750 bytes) is reached first
    t = timing_for(3.0, 131_072, 50e6)
    assert t.window_bytes == pytest.approx(18_750)
    assert t.ramp_s == pytest.approx(math.log2(18_750 / 14_480) * 0.003)
    # four streams share it: each ramps to a quarter
    assert timing_for(3.0, 131_072, 50e6, streams=4).window_bytes == pytest.approx(18_750 / 4)


def test_the_asked_omit_and_duration_are_floors():
    assert timing_for(3.0, 2_534_000, None, omit_s=3).omit_s == 3
    assert timing_for(250.0, 2_534_000, None, omit_s=1).omit_s == 2
    assert timing_for(3.0, 2_534_000, None, duration_s=10).duration_s == 10
    assert timing_for(3.0, 2_534_000, None).duration_s == MIN_INTERVAL_S == 5
    assert TestParams().duration_s == MIN_INTERVAL_S  # what a sweep measures by default


def test_a_plans_timing_uses_its_window_option():
    default = timing_of(TestParams(), 250.0)
    assert default.omit_s == 2 and default.window_bytes == 2_534_000
    small = timing_of(TestParams(window="128K"), 250.0)
    assert small.window_bytes == 128 * 1024 and small.omit_s == 1
    assert timing_of(TestParams(omit_s=4), 250.0).omit_s == 4
