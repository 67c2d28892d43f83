"""core.stats's Wilson interval, the one every loss is quoted with (report, history
store, site, mesh): known answers worked by hand from the formula."""

from __future__ import annotations

import math

import pytest

from orchestrator.core.stats import WILSON_Z, wilson


def test_wilson_interval_known_values():
    # 0 of n: (0, z^2 / (n + z^2)); 0 of 20: 3.8415 / 23.8415 = 0.16112
    low, high = wilson(0, 20)
    assert low == 0.0
    assert high == pytest.approx(WILSON_Z**2 / (20 + WILSON_Z**2), rel=1e-12)
    assert high == pytest.approx(0.16112, abs=1e-5)
    # 1 of 20: p = 0.05, centre (0.05 + 0.09604) / 1.19207 = 0.12251, half 0.11362
    assert wilson(1, 20) == (pytest.approx(0.00888, abs=1e-5), pytest.approx(0.23613, abs=1e-5))
    # 2 of 25: p = 0.08 -> 0.02222-0.24966
    assert wilson(2, 25) == (pytest.approx(0.02222, abs=1e-5), pytest.approx(0.24966, abs=1e-5))
    # all lost: the mirror of none lost
    low, high = wilson(20, 20)
    assert (low, high) == (pytest.approx(1 - 0.16112, abs=1e-5), 1.0)
    # 12 of 10,000: narrow around 0.12 %
    low, high = wilson(12, 10_000)
    assert low == pytest.approx(0.000686, abs=2e-6) and high == pytest.approx(0.002097, abs=2e-6)


def test_wilson_interval_of_no_trials_is_unknown():
    assert all(math.isnan(x) for x in wilson(0, 0))
    assert all(math.isnan(x) for x in wilson(float("nan"), 20))
