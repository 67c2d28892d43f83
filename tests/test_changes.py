"""Change detection: statistics with hand-computed answers and episode state transitions on
crafted series."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.history import changes as c

KEY = c.SeriesKey("emulated", "local", "rtt", "aws:us-east-1", "gcp:europe-west1")
P = c.Params()


def series(values, fps=None, key=KEY, km=5887.0):
    fps = fps or ["fp"] * len(values)
    runs = [
        c.Run(f"r{i:03d}", f"t{i:03d}", v, fp)
        for i, (v, fp) in enumerate(zip(values, fps, strict=True))
    ]
    return c.Series(key, runs, km)


STEADY = [149.9, 150.1] * 5  # 10 runs: median 150, MAD 0.1 -> scale 0.148, floored to 1.5


def test_median_and_mad_by_hand():
    assert c.median([3.0, 1.0, 2.0]) == 2.0
    assert c.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert math.isnan(c.median([]))
    # median 3; |deviations| 2 1 0 1 97 -> median 1 -> 1.4826
    assert c.mad_scale([1.0, 2.0, 3.0, 4.0, 100.0]) == pytest.approx(1.4826)


def test_shrinkage_and_floor_by_hand():
    # (8 x 1^2 + 8 x 2^2) / 16 = 2.5
    assert c.shrunk_scale(1.0, 8, 2.0, 8.0) == pytest.approx(math.sqrt(2.5))
    assert c.shrunk_scale(1.0, 8, None, 8.0) == 1.0
    assert c.floor_scale("rtt", 150.0, P) == pytest.approx(1.5)
    assert c.floor_scale("rtt", 10.0, P) == pytest.approx(0.3)
    assert c.floor_scale("throughput", 1e9, P) == pytest.approx(math.log(1.01))


def test_z_and_the_minimum_change_by_hand():
    assert c.judge("rtt", 160.0, 150.0, 1.5, P) == (True, pytest.approx(6.6667, abs=1e-4))
    assert c.judge("rtt", 157.0, 150.0, 1.5, P)[0] is False  # z 4.67
    assert c.judge("rtt", 11.6, 10.0, 0.3, P) == (False, pytest.approx(5.3333, abs=1e-4))  # < 2 ms
    assert c.judge("rtt", 104.5, 100.0, 0.5, P)[0] is False  # z 9 but 4.5 % < 5 %
    lvl, s = math.log(1e9), math.log(1.01)
    assert c.judge("throughput", math.log(0.85e9), lvl, s, P)[0] is False  # -15 % < 20 %
    assert c.judge("throughput", math.log(0.75e9), lvl, s, P)[0] is True


def test_a_step_confirmed_after_two_runs_then_reverted():
    r = c.detect_series(series([*STEADY, 160.0, 160.2, 150.0, 150.1, 150.0]))
    (e,) = r.episodes
    assert (e.started_run, e.confirmed_run) == ("r010", "r011")
    assert (e.direction, e.old_level) == (1, pytest.approx(150.0))
    assert e.new_level == pytest.approx(160.1)
    assert e.z == pytest.approx(10.0 / 1.5)
    assert (e.status, e.closed_run) == ("reverted", "r013")


def test_new_normal_after_six_runs_at_the_new_level_and_a_new_baseline():
    values = [*STEADY, *[160.0] * 6, *[160.0, 160.1] * 3]
    r = c.detect_series(series(values))
    (e,) = r.episodes
    assert (e.status, e.closed_run) == ("new normal", "r015")
    assert e.new_level == pytest.approx(160.0)
    # the new baseline is the post-change runs: 160 is normal now, nothing more flagged
    assert r.flagged_runs == {f"r{i:03d}" for i in range(10, 16)}


def test_open_episode_stays_open():
    (e,) = c.detect_series(series([*STEADY, 170.0, 171.0, 170.5])).episodes
    assert e.status == "open" and e.closed_run == ""


def test_a_lone_spike_is_no_episode_and_opposite_flags_do_not_confirm():
    assert c.detect_series(series([*STEADY, 200.0, 150.0, 150.1])).episodes == []
    assert c.detect_series(series([*STEADY, 200.0, 100.0, 150.0])).episodes == []


def test_nothing_is_flagged_before_eight_runs():
    r = c.detect_series(series([150.0] * 5 + [200.0] * 3))
    assert r.episodes == [] and r.flagged_runs == set()
    # the 9th run is the first judged
    r = c.detect_series(series([150.0] * 7 + [150.0, 200.0, 200.0]))
    assert [e.started_run for e in r.episodes] == ["r008"]


def test_baseline_is_the_last_28_runs():
    # 30 runs at 100 then 28 at 150 (a change first seen at run 30, closed as new normal),
    # then 200: judged against the 28 runs at 150 -> flagged
    values = [100.0] * 30 + [150.0] * 28 + [200.0, 200.0]
    r = c.detect_series(series(values))
    assert [(e.started_run, e.status) for e in r.episodes] == [
        ("r030", "new normal"),
        ("r058", "open"),
    ]
    assert r.episodes[1].old_level == pytest.approx(150.0)


def test_a_configuration_change_is_never_a_network_change():
    fps = ["a"] * 10 + ["b"] * 3
    r = c.detect_series(series([*STEADY, 160.0, 160.0, 160.0], fps))
    assert r.episodes == []
    (change,) = r.config_changes
    assert (change.run_id, change.old_fingerprint, change.new_fingerprint) == ("r010", "a", "b")
    # an open episode closes as a configuration change, and the new config starts afresh
    fps = ["a"] * 12 + ["b"] * 10
    r = c.detect_series(series([*STEADY, 160.0, 160.0, *[170.0] * 10], fps))
    (e,) = r.episodes
    assert (e.status, e.closed_run) == ("configuration change", "r012")


def test_throughput_is_judged_in_log_space():
    key = c.SeriesKey("emulated", "local", "throughput", "aws:a", "gcp:b")
    steady = [1.0e9, 1.01e9] * 5
    (e,) = c.detect_series(series([*steady, 0.5e9, 0.5e9], key=key)).episodes
    assert e.direction == -1 and e.new_level == pytest.approx(0.5e9)
    # a doubling is as far as a halving in log space
    (up,) = c.detect_series(series([*steady, 2.0e9, 2.0e9], key=key)).episodes
    assert up.z == pytest.approx(-e.z, rel=0.02)  # the baseline sits between 1.0 and 1.01


def test_pooled_scale_shrinks_a_quiet_pairs_scale():
    noisy = [series([150.0 + (4.0 if i % 2 else -4.0) for i in range(10)],
                    key=c.SeriesKey("emulated", "local", "rtt", f"aws:n{i}", "gcp:x"))
             for i in range(3)]  # fmt: skip
    quiet = series(STEADY, key=c.SeriesKey("emulated", "local", "rtt", "aws:q", "gcp:x"))
    pooled = c.pooled_scales([*noisy, quiet], P)
    # own scales: 3 x 1.4826 x 4 and 0.14826: the group's median is 5.9304
    assert list(pooled.values()) == [pytest.approx(1.4826 * 4)]
    # a 160 run: z 6.7 alone; against the shrunk scale sqrt((10 x .148^2 + 8 x 5.93^2)/18)
    alone = c.detect_series(series([*STEADY, 160.0, 160.0]))
    shrunk = c.detect_series(series([*STEADY, 160.0, 160.0]), pooled=1.4826 * 4)
    assert len(alone.episodes) == 1 and shrunk.episodes == []


def _mesh(hosts, value_of, runs=12):
    out = []
    for a in hosts:
        for b in hosts:
            if a != b:
                key = c.SeriesKey("emulated", "local", "rtt", a, b)
                out.append(series([value_of(a, b, i) for i in range(runs)], key=key))
    return out


def test_most_of_one_hosts_pairs_changing_is_one_host_change():
    hosts = ["aws:h1", "aws:h2", "gcp:h3", "gcp:h4", "gcp:h5"]

    def value(a, b, i):
        step = 20.0 if i >= 10 and "aws:h1" in (a, b) else 0.0
        return 100.0 + 0.1 * (i % 2) + step

    d = c.detect(_mesh(hosts, value))
    (host,) = d.hosts
    assert (host.host, host.run_id, len(host.pairs), host.evaluated) == ("aws:h1", "r010", 8, 8)
    assert d.episodes == [] and host.status == "open" and d.open == 1
    # one pair alone stays a pair change
    d = c.detect(_mesh(hosts, lambda a, b, i: 100.0 + (20.0 if i >= 10 and (a, b) == (
        "aws:h1", "gcp:h3") else 0.0)))  # fmt: skip
    assert d.hosts == [] and [(e.key.src, e.key.dst) for e in d.episodes] == [("aws:h1", "gcp:h3")]


@given(st.lists(st.floats(min_value=1.0, max_value=500.0), min_size=0, max_size=60))
def test_any_series_ends_in_a_consistent_state(values):
    r = c.detect_series(series(values))
    for e in r.episodes:
        assert e.status in ("open", "reverted", "new normal", "configuration change")
        assert (e.status == "open") == (e.closed_run == "")
    assert sum(e.status == "open" for e in r.episodes) <= 1
    assert r.flagged_runs <= r.evaluated_runs


@given(st.lists(st.floats(min_value=-1e6, max_value=1e6), min_size=1, max_size=80))
def test_window_median_is_the_median_of_the_last_n(values):
    w = c.Window(28)
    for i, x in enumerate(values):
        w.push(x)
        last = values[max(0, i - 27) : i + 1]
        assert w.values() == last
        assert w.median() == c.median(last)


def test_the_baseline_a_series_ends_with():
    # steady: the median of its runs; fewer than 8 runs: none
    assert c.detect_series(series(STEADY)).baseline == pytest.approx(150.0)
    assert c.detect_series(series(STEADY[:7])).baseline is None
    # an open episode: still the old level, the next run is judged against it
    assert c.detect_series(series([*STEADY, 160.0, 160.2])).baseline == pytest.approx(150.0)
    # a new normal: rebuilt from the post-change runs only, so none until 8 of them
    r = c.detect_series(series([*STEADY, *[160.0, 160.2] * 3]))
    assert r.episodes[0].status == "new normal" and r.baseline is None
    r = c.detect_series(series([*STEADY, *[160.0, 160.2] * 4]))
    assert r.baseline == pytest.approx(160.1)
    # throughput, judged in log space, is given back in bit/s
    tput = c.SeriesKey("emulated", "local", "throughput", "aws:us-east-1", "gcp:europe-west1")
    assert c.detect_series(series([9e8] * 8, key=tput)).baseline == pytest.approx(9e8)
    # detect() keeps them per series
    assert c.detect([series(STEADY)]).baselines == {KEY: pytest.approx(150.0)}
