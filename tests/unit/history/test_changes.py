"""Change detection: statistics with hand-computed answers and episode state transitions on
crafted series."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.core import read_utc
from orchestrator.history import changes as c

KEY = c.SeriesKey("emulated", "local", "rtt", "aws:us-east-1", "gcp:europe-west1")
P = c.Params()
P4 = c.Params(k1=3.0, k2=4.0)  # round thresholds for the by-hand answers
T0 = datetime(2026, 9, 1, tzinfo=UTC)


def series(values, fps=None, key=KEY, km=5887.0):
    fps = fps or ["fp"] * len(values)
    runs = [
        c.Run(f"r{i:03d}", T0 + timedelta(hours=6 * i), v, fp)
        for i, (v, fp) in enumerate(zip(values, fps, strict=True))
    ]
    return c.Series(key, runs, km)


STEADY = [149.9, 150.1] * 5  # 10 runs: median 150, MAD 0.1 -> scale 0.148, floored to 0.3


def test_median_and_mad_by_hand():
    assert c.median([3.0, 1.0, 2.0]) == 2.0
    assert c.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert math.isnan(c.median([]))
    # median 3; |deviations| 2 1 0 1 97 -> median 1 -> 1.4826
    assert c.mad_scale([1.0, 2.0, 3.0, 4.0, 100.0]) == pytest.approx(1.4826)


def test_shrinkage_floor_and_thresholds_by_hand():
    # (8 x 1^2 + 8 x 2^2) / 16 = 2.5
    assert c.shrunk_scale(1.0, 8, 2.0, 8.0) == pytest.approx(math.sqrt(2.5))
    assert c.shrunk_scale(1.0, 8, None, 8.0) == 1.0
    # a floor in ms, whatever the RTT: none proportional to it
    assert c.floor_scale("rtt", P) == pytest.approx(0.3)
    assert c.floor_scale("throughput", P) == pytest.approx(math.log(1.01))
    assert c.thresholds("rtt", 1.0, P4) == (pytest.approx(3.0), pytest.approx(4.0))
    assert c.thresholds("rtt", 0.3, P) == (2.0, 2.0)  # the 2 ms minimum
    assert c.thresholds("throughput", 0.01, P) == (pytest.approx(math.log(1.2)),) * 2


def test_the_chance_of_confirming_and_the_smallest_detectable_change_by_hand():
    # a step of exactly k2 scales: each run beyond k2 with 1/2, beyond k1 = k2 - 1 with
    # P(Z > -1) = 0.841345; all 3 flagged and at least 2 beyond k2:
    # 3 x 0.5^2 x (0.841345 - 0.5) + 0.5^3 = 0.381009
    assert c.confirm_probability(4.0, 1.0, "rtt", P4) == pytest.approx(0.381009, abs=1e-5)
    assert c.confirm_probability(40.0, 1.0, "rtt", P4) == pytest.approx(1.0)
    sdc = c.smallest_change(1.0, "rtt", P4)
    assert c.confirm_probability(sdc, 1.0, "rtt", P4) == pytest.approx(0.95, abs=1e-6)
    assert 5.0 < sdc < 6.0  # about 5.5 scales
    # a small scale: the 2 ms minimum sets it
    assert c.smallest_change(0.3) == pytest.approx(c.smallest_change(0.3 * 2 / 1.2), rel=0.3)
    assert c.smallest_change(0.3) > 2.0


def test_a_step_confirmed_after_three_runs_then_reverted():
    r = c.detect_series(series([*STEADY, 160.0, 160.2, 160.1, 150.0, 150.1, 150.0]))
    (e,) = r.episodes
    assert (e.started_run, e.confirmed_run) == ("r010", "r012")
    assert (e.direction, e.old_level) == (1, pytest.approx(150.0))
    assert e.new_level == pytest.approx(160.1)
    assert e.z == pytest.approx(10.0 / 0.3)
    assert (e.k1, e.k2) == (P.k1, P.k2)
    (d,) = e.directions
    assert (d.flag_threshold, d.confirm_threshold, d.scale) == (2.0, 2.0, pytest.approx(0.3))
    assert (e.status, e.closed_run) == ("reverted", "r014")
    assert r.suspects == []


def test_two_flagged_runs_are_only_suspected():
    r = c.detect_series(series([*STEADY, 160.0, 160.2]))
    assert r.episodes == []
    assert [s.run_id for s in r.suspects] == ["r010", "r011"]
    (item,) = r.suspects[0].deviations
    assert item == (KEY.src, KEY.dst, pytest.approx(10.0), 2.0)
    # back to normal: the two runs were spikes, nothing is left suspected
    r = c.detect_series(series([*STEADY, 160.0, 160.2, 150.0]))
    assert r.episodes == [] and r.suspects == []


def test_confirmation_needs_the_median_beyond_the_confirmation_threshold():
    # scale 1.4826 (MAD 1): flag at 4.45, confirm at 5.93; three runs at +5 are flagged
    # but their median is short of 5.93: suspected, never confirmed
    steady = [149.0, 150.0, 151.0] * 4
    r = c.detect_series(series([*steady, 155.0, 155.0, 155.0]), P4)
    assert r.episodes == [] and len(r.suspects) == 2  # the oldest slid into the baseline
    r = c.detect_series(series([*steady, 156.5, 156.5, 156.5]), P4)
    assert len(r.episodes) == 1


def test_a_10_ms_step_on_a_350_ms_path_is_found():
    # the noise of a long path (MAD 1.5 ms: scale 2.22 ms, flag 6.7, confirm 8.9 ms); the
    # old 1 % floor and 5 % minimum change (17.5 ms) made this step undetectable
    steady = [348.5, 350.0, 351.5] * 10
    r = c.detect_series(series([*steady, 360.0, 360.5, 359.5]))
    (e,) = r.episodes
    assert e.started_run == "r030" and e.directions[0].confirm_threshold == pytest.approx(
        P.k2 * 1.4826 * 1.5
    )


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
    assert e.status == "open" and e.closed_run == "" and e.closed_t is None


def test_a_lone_spike_is_no_episode_and_opposite_flags_do_not_confirm():
    assert c.detect_series(series([*STEADY, 200.0, 150.0, 150.1, 150.0])).episodes == []
    assert c.detect_series(series([*STEADY, 200.0, 100.0, 200.0, 150.0])).episodes == []


def test_nothing_is_flagged_before_eight_runs():
    r = c.detect_series(series([150.0] * 5 + [200.0] * 3))
    assert r.episodes == [] and r.flagged_runs == set()
    # the 9th run is the first judged
    r = c.detect_series(series([150.0] * 7 + [150.0, 200.0, 200.0, 200.0]))
    assert [e.started_run for e in r.episodes] == ["r008"]


def test_baseline_is_the_last_28_runs():
    # 30 runs at 100 then 28 at 150 (a change first seen at run 30, closed as new normal),
    # then 200: judged against the 28 runs at 150 -> flagged
    values = [100.0] * 30 + [150.0] * 28 + [200.0] * 3
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
    fps = ["a"] * 13 + ["b"] * 10
    r = c.detect_series(series([*STEADY, 160.0, 160.0, 160.0, *[170.0] * 10], fps))
    (e,) = r.episodes
    assert (e.status, e.closed_run) == ("configuration change", "r013")


def test_throughput_is_judged_in_log_space():
    key = c.SeriesKey("emulated", "local", "throughput", "aws:a", "gcp:b")
    steady = [1.0e9, 1.01e9] * 5
    (e,) = c.detect_series(series([*steady, 0.5e9, 0.5e9, 0.5e9], key=key)).episodes
    assert e.direction == -1 and e.new_level == pytest.approx(0.5e9)
    # a doubling is as far as a halving in log space
    (up,) = c.detect_series(series([*steady, 2.0e9, 2.0e9, 2.0e9], key=key)).episodes
    assert up.z == pytest.approx(-e.z, rel=0.02)  # the baseline sits between 1.0 and 1.01
    # -15 %: below the 20 % minimum
    assert c.detect_series(series([*steady, *[0.85e9] * 3], key=key)).episodes == []


def both(values_ab, values_ba, a="aws:us-east-1", b="gcp:europe-west1"):
    return [
        series(values_ab, key=c.SeriesKey("emulated", "local", "rtt", a, b)),
        series(values_ba, key=c.SeriesKey("emulated", "local", "rtt", b, a)),
    ]


def test_a_path_change_is_one_event_with_each_directions_change():
    d = c.detect(both([*STEADY, 160.0, 160.2, 160.1], [*STEADY, 161.0, 161.2, 161.1]))
    (e,) = d.episodes
    assert (e.key.src, e.key.dst) == ("aws:us-east-1", "gcp:europe-west1")
    changes = {(x.key.src, x.key.dst): x for x in e.directions}
    assert changes[("aws:us-east-1", "gcp:europe-west1")].new_level == pytest.approx(160.1)
    assert changes[("gcp:europe-west1", "aws:us-east-1")].new_level == pytest.approx(161.1)
    assert all(x.moved for x in e.directions) and not e.one_way
    doc = c.episode_doc(e, {"rtt": "ms"})
    assert doc["kind"] == "path" and [x["change"] for x in doc["directions"]] == [
        pytest.approx(10.1),
        pytest.approx(11.1),
    ]
    assert (doc["k1"], doc["k2"]) == (P.k1, P.k2)
    assert doc["directions"][0]["confirm_threshold"] == 2.0


def test_a_one_directional_change_is_reported_as_such():
    d = c.detect(both([*STEADY, 160.0, 160.2, 160.1], [*STEADY, 150.0, 150.1, 149.9]))
    (e,) = d.episodes
    assert e.one_way
    assert [(x.key.src, x.moved) for x in e.directions] == [
        ("aws:us-east-1", True),
        ("gcp:europe-west1", False),
    ]
    assert e.new_level == pytest.approx(160.1)  # the moved direction's level


def test_the_pooled_scale_is_of_pairs_of_similar_rtt():
    def one(i, level, half):
        key = c.SeriesKey("emulated", "local", "rtt", f"aws:n{i}", "gcp:x")
        return series([level + (half if k % 2 else -half) for k in range(10)], key=key)

    short = [one(i, 30.0 + i, 0.2) for i in range(10)]  # own scale 0.2965
    long = [one(10 + i, 300.0 + i, 2.0) for i in range(10)]  # own scale 2.965
    windows = [(s.key, c.Window(28, [r.value for r in s.runs])) for s in [*short, *long]]
    pooled = c.pooled_scales(windows, P)
    assert [pooled[s.key] for s in short] == [pytest.approx(1.4826 * 0.2)] * 10
    assert [pooled[s.key] for s in long] == [pytest.approx(1.4826 * 2.0)] * 10
    # a 160 run: flagged alone (scale 0.3); against the shrunk scale
    # sqrt((10 x .148^2 + 28 x 5.93^2) / 38) = 5.09 its 10 ms is short of 3 x 5.09
    alone = c.detect_series(series([*STEADY, 160.0, 160.0, 160.0]))
    shrunk = c.detect_series(series([*STEADY, 160.0, 160.0, 160.0]), pooled=1.4826 * 4)
    assert len(alone.episodes) == 1 and shrunk.episodes == []


def _mesh(hosts, value_of, runs=13):
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
    # paths, not directed pairs: h1 has 4, each one event
    assert (host.host, host.run_id, len(host.pairs), host.evaluated) == ("aws:h1", "r010", 4, 4)
    assert d.episodes == [] and host.status == "open" and d.open == 1
    # one pair alone stays a pair change
    d = c.detect(_mesh(hosts, lambda a, b, i: 100.0 + (20.0 if i >= 10 and (a, b) == (
        "aws:h1", "gcp:h3") else 0.0)))  # fmt: skip
    assert d.hosts == [] and [(e.key.src, e.key.dst) for e in d.episodes] == [("aws:h1", "gcp:h3")]
    assert d.episodes[0].one_way  # only h1 -> h3 moved


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
    assert c.detect_series(series([*STEADY, 160.0, 160.2, 160.1])).baseline == pytest.approx(150.0)
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


def test_a_new_configuration_borrows_the_old_scale_not_its_level():
    # 10 runs on config a (scale floored at 0.3 ms), then config b 20 ms higher: its level
    # is its own (170, not a change), its scale borrowed, so it is judged from its 4th run
    fps = ["a"] * 10 + ["b"] * 7
    values = [*STEADY, 170.0, 170.1, 169.9, 180.0, 180.1, 180.2, 180.0]
    r = c.detect_series(series(values, fps))
    (e,) = r.episodes
    assert (e.started_run, e.confirmed_run) == ("r013", "r015")
    assert e.old_level == pytest.approx(170.0) and e.directions[0].scale == pytest.approx(0.3)
    # without a scale to borrow (the first configuration), 8 runs are needed as before
    assert c.detect_series(series(values[10:])).episodes == []


def test_simultaneous_changes_of_one_region_toward_one_continent_are_one_event():
    # h1 (Asia) moves toward the 3 European hosts only: 3 of its 6 paths, below the 60 %
    # host share, but all of its paths toward Europe
    eu, us = ["aws:e1", "aws:e2", "gcp:e3"], ["aws:u1", "gcp:u2", "gcp:u3"]
    hosts = ["aws:h1", *eu, *us]
    groups = {h: ("continent:Europe",) for h in eu} | {h: ("continent:NA",) for h in us}
    groups["aws:h1"] = ("continent:Asia",)

    def value(a, b, i):
        moved = i >= 10 and "aws:h1" in (a, b) and ({a, b} & set(eu))
        return 100.0 + 0.1 * (i % 2) + (20.0 if moved else 0.0)

    d = c.detect(_mesh(hosts, value), P, groups)
    assert d.hosts == [] and d.episodes == []
    (g,) = d.groups
    assert (g.host, g.toward, g.run_id, len(g.pairs), g.evaluated) == (
        "aws:h1", "continent:Europe", "r010", 3, 3,
    )  # fmt: skip
    assert g.status == "open" and d.open == 1
    doc = c.group_doc(g, {"rtt": "ms"})
    assert doc["kind"] == "region" and len(doc["pairs"]) == 3
    # without the groups: three path events
    assert len(c.detect(_mesh(hosts, value), P).episodes) == 3


def test_every_catalog_country_has_a_continent():
    from orchestrator.history.continents import continent
    from orchestrator.model.catalog import load_catalog

    assert all(continent(r.country) for r in load_catalog().regions)
    assert continent("za") == "Africa" and continent("XX") is None


def test_calibration_by_hand():
    # 40 runs alternating 149/150/151 (MAD 1: scale 1.4826), one run of the last 28 at
    # +10 ms (6.7 scales): 1 of 28 judged runs beyond 4.5 scales
    values = [149.0, 150.0, 151.0] * 13 + [150.0]
    values[30] = 160.0
    cal = c.combined_calibration(c.detect([series(values)], P4))
    assert (cal.judged, cal.beyond) == (28, 1)
    assert cal.expected == pytest.approx(6.795e-6, rel=1e-3)
    # 1/28 is a normal's rate beyond z = 2.1 (two-sided): tails 4.5 / 2.1 = 2.14 x wider,
    # so k1, k2 go to their upper bounds
    assert cal.inflation == pytest.approx(4.5 / 2.1003, rel=1e-3)
    assert (cal.k1, cal.k2) == (c.K1_BOUNDS[1], c.K2_BOUNDS[1])
    # nothing beyond: the rules as they are (the lower bounds)
    quiet = c.combined_calibration(c.detect([series([149.0, 150.0, 151.0] * 13)], P4))
    assert (quiet.beyond, quiet.inflation, quiet.k1, quiet.k2) == (0, 1.0, 3.0, 4.0)


def test_pairs_not_judged_are_counted_with_the_runs_they_still_need():
    other = c.SeriesKey("emulated", "local", "rtt", "gcp:europe-west1", "aws:us-east-1")
    tput = c.SeriesKey("emulated", "local", "throughput", "aws:us-east-1", "gcp:europe-west1")
    given_series = [
        series([150.0] * 3),  # 3 runs of 8
        series([150.0] * 3, key=other),
        series([5e8] * 1, key=tput),  # 1 run of 8
    ]
    found = c.detect(given_series)
    assert found.baselines == {}
    waiting = found.waiting
    assert [(u.metric, u.pairs, u.runs, u.needed) for u in waiting] == [
        ("rtt", 2, 3, 8),
        ("throughput", 1, 1, 8),
    ]
    assert waiting[0].text() == "not judged: 2 pairs have 3 of the 8 runs needed (rtt, emulated)"
    # 8 runs: judged, none waiting
    judged = [series([150.0] * 8)]
    assert c.detect(judged).waiting == []
    # after a configuration change the new one borrows the old scale: 3 runs needed
    moved = [series([150.0] * 10 + [151.0] * 2, fps=["a"] * 10 + ["b"] * 2)]
    (u,) = c.detect(moved).waiting
    assert (u.runs, u.needed) == (2, 3)


def test_an_episode_document_has_each_directions_change_in_percent():
    r = c.detect_series(series([*STEADY, 165.0, 165.0, 165.0]))
    (e,) = r.episodes
    (d,) = c.episode_doc(e, {"rtt": "ms"})["directions"]
    # baseline 150 (median of STEADY), new level 165: +15 ms, +10 %
    assert d["change"] == pytest.approx(15.0) and d["change_pct"] == 10.0


def test_runs_read_from_times_of_mixed_precision_are_judged_in_time_order():
    # as text "...:00Z" sorts after "...:00.5Z" ('Z' > '.'): as times it is half a second
    # earlier, and its run is judged first whatever the run ids say
    texts = {"a": "2026-09-01T00:00:00.5Z", "b": "2026-09-01T00:00:00Z",
             "c": "2026-09-01T00:00:00.250Z", "d": "2026-09-01T00:00:01+00:00"}  # fmt: skip
    runs = [c.Run(r, read_utc(t), 150.0, "fp") for r, t in texts.items()]
    assert [r for r, _ in c.sweeps_of([c.Series(KEY, runs)])] == ["b", "c", "a", "d"]
    # a path's episodes in the order they started; the documents' times, one format
    when = [T0 + timedelta(hours=6 * i) for i in range(17)]
    when[10] = read_utc(when[10].strftime("%Y-%m-%dT%H:%M:%SZ"))  # whole seconds
    values = [*STEADY, 170.0, 170.5, 170.0, 150.0, 150.1, 150.0, 150.1]
    runs = [
        c.Run(f"r{i:03d}", t, v, "fp") for i, (t, v) in enumerate(zip(when, values, strict=True))
    ]
    r = c.detect_series(c.Series(KEY, runs))
    (e,) = r.episodes
    doc = c.episode_doc(e, {"rtt": "ms"})
    assert (doc["started_utc"], doc["confirmed_utc"], doc["closed_utc"]) == (
        "2026-09-03T12:00:00.000Z", "2026-09-04T00:00:00.000Z", "2026-09-04T12:00:00.000Z",
    )  # fmt: skip


def _judged(values):
    judge = c.PathJudge(KEY, P)
    for i, v in enumerate(values):
        t = T0 + timedelta(hours=6 * i, milliseconds=500)
        judge.step(f"r{i:03d}", t, {0: c.Run(f"r{i:03d}", t, v, "fp")}, P, c.Judged())
    return judge


def test_a_kept_state_holds_its_times_as_text_and_reads_them_back():
    judge = _judged([*STEADY, 170.0, 170.5, 170.0, 175.0])  # an open episode
    doc = json.loads(json.dumps(judge.doc()))  # as the store keeps it
    assert doc["last"] == ["2026-09-04T06:00:00.500Z", "r013"]
    assert doc["episode"]["started_t"] == "2026-09-03T12:00:00.500Z"
    assert doc["episode"]["closed_t"] == ""  # open
    again = c.PathJudge.of_doc(KEY, P, doc)
    assert again.doc() == doc and again.last == (T0 + timedelta(hours=78, milliseconds=500), "r013")
    assert again.episode is not None and again.episode.started_t.tzinfo is UTC
    waiting = _judged([*STEADY, 170.0, 170.5])  # two flagged runs pending
    doc = json.loads(json.dumps(waiting.doc()))
    assert [p[1] for p in doc["pending"]] == [
        "2026-09-03T12:00:00.500Z",
        "2026-09-03T18:00:00.500Z",
    ]
    assert c.PathJudge.of_doc(KEY, P, doc).suspects() == waiting.suspects()
    # a state no run reached yet (version 11 kept ["", ""])
    fresh = c.PathJudge.of_doc(KEY, P, c.PathJudge(KEY, P).doc())
    assert fresh.last is None and fresh.doc()["last"] == ["", ""]
