"""Change detection over many paths at once (numpy windows up to each path's first flagged
run or configuration change, then the per-path loop) against the per-path loop alone, on
a seeded synthetic store of a few hundred paths with steps, reverts, spikes, noise, gaps,
configuration changes, flagged values, a host change and a region change: every verdict,
baseline, scale and calibration figure the same, to the bit; the same with the runs as
columns (changes.Runs, as change_series gives them) and with a new configuration in the
last runs of every series (taken at once when no run after it is judged); the pooled
scales and the not-judged counts against their per-series versions."""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.history import changes as c

RUNS = 56  # the site's CHANGE_RUNS: the last 56 sweeps
CONTINENTS = ("Europe", "Asia", "NA")


# ---- the per-path implementation, as it was before the bulk path ---------------------


def old_host_changes(results, p):
    evaluated = defaultdict(int)
    started = defaultdict(list)
    times = {}
    for r in results:
        k = r.key
        for run_id in r.evaluated_runs:
            for host in (k.src, k.dst):
                evaluated[(k.source, k.backend, k.metric, host, run_id)] += 1
        for e in r.episodes:
            times[e.started_run] = e.started_t
            for host in (k.src, k.dst):
                started[(k.source, k.backend, k.metric, host, e.started_run)].append(e)
    candidates = []
    for key, episodes in started.items():
        n = evaluated.get(key, 0)
        if len(episodes) >= p.host_min_pairs and n and len(episodes) / n >= p.host_share:
            candidates.append((len(episodes) / n, len(episodes), key, n))
    folded = set()
    hosts = []
    for _share, _count, key, n in sorted(candidates, reverse=True):
        mine = [e for e in started[key] if id(e) not in folded]
        if len(mine) < p.host_min_pairs:
            continue
        folded.update(id(e) for e in mine)
        source, backend, metric, host, run_id = key
        hosts.append(c.HostChange(source, backend, metric, host, run_id, times[run_id], mine, n))
    return hosts, folded


def old_group_changes(results, p, groups, folded):
    evaluated = defaultdict(int)
    started = defaultdict(list)
    times = {}
    for r in results:
        k = r.key
        for host, other in ((k.src, k.dst), (k.dst, k.src)):
            for toward in groups.get(other, ()):
                for run_id in r.evaluated_runs:
                    evaluated[(k.source, k.backend, k.metric, host, toward, run_id)] += 1
                for e in r.episodes:
                    if id(e) not in folded:
                        times[e.started_run] = e.started_t
                        key = (k.source, k.backend, k.metric, host, toward, e.started_run)
                        started[key].append(e)
    candidates = []
    for key, episodes in started.items():
        n = evaluated.get(key, 0)
        if len(episodes) >= p.host_min_pairs and n and len(episodes) / n >= p.group_share:
            candidates.append((len(episodes), len(episodes) / n, key, n))
    taken = set()
    out = []
    for _count, _share, key, n in sorted(candidates, reverse=True):
        mine = [e for e in started[key] if id(e) not in taken]
        if len(mine) < p.host_min_pairs:
            continue
        taken.update(id(e) for e in mine)
        source, backend, metric, host, toward, run_id = key
        out.append(c.GroupChange(source, backend, metric, host, toward, run_id, times[run_id],
                                 mine, n))  # fmt: skip
    return out


def old_detect(series, p, groups):
    pooled = c.pooled_scales(series, p)
    results = [c.detect_path(key, members, p, pooled) for key, members in c.paths(series).items()]
    hosts, folded = old_host_changes(results, p)
    grouped = old_group_changes(results, p, groups or {}, folded)
    for g in grouped:
        folded.update(id(e) for e in g.pairs)
    episodes = [e for r in results for e in r.episodes if id(e) not in folded]
    configs = [x for r in results for x in r.config_changes]
    baselines = {k: v for r in results for k, v in r.baselines.items()}
    scales = {k: v for r in results for k, v in r.scales.items()}
    suspects = [x for r in results for x in r.suspects]
    return c.Detection(episodes, hosts, configs, baselines, scales, suspects, p, grouped)


def old_calibrate(series, p, last_runs=28):
    from statistics import NormalDist

    pooled = c.pooled_scales(series, p)
    judged = beyond = 0
    for s in series:
        d = c._Direction(s, p, pooled.get(s.key))
        runs = [r for r in s.runs if r.value > 0]
        start = len(runs) - last_runs
        for i, run in enumerate(runs):
            if d.fingerprint not in (None, run.fingerprint):
                d.restart()
            d.fingerprint = run.fingerprint
            x = c.transform(s.key.metric, run.value)
            if i >= start and d.ready():
                judged += 1
                beyond += abs(x - d.base.median()) >= c.CALIBRATION_SCALES * d.scale()
            d.base.push(x)
    normal = NormalDist()
    expected = 2 * (1 - normal.cdf(c.CALIBRATION_SCALES))
    rate = beyond / judged if judged else 0.0
    inflation = 1.0
    if rate > expected:
        inflation = c.CALIBRATION_SCALES / normal.inv_cdf(1 - min(rate, 0.5) / 2)
    k1 = min(max(p.k1 * inflation, c.K1_BOUNDS[0]), c.K1_BOUNDS[1])
    k2 = min(max(p.k2 * inflation, c.K2_BOUNDS[0]), c.K2_BOUNDS[1])
    return c.Calibration(judged, beyond, expected, inflation, round(k1, 2), round(k2, 2))


def old_tail(s, p):
    if not s.runs:
        return []
    last_fp = s.runs[-1].fingerprint
    tail = []
    for run in reversed(s.runs):
        if run.fingerprint != last_fp or len(tail) >= p.window_runs:
            break
        if run.value > 0:
            tail.append(c.transform(s.key.metric, run.value))
    return tail


def old_pooled_scales(series, p):
    groups = defaultdict(list)
    for s in series:
        tail = old_tail(s, p)
        if len(tail) >= p.min_runs:
            k = s.key
            groups[(k.source, k.backend, k.metric)].append((c.median(tail), c.mad_scale(tail), k))
    out = {}
    for members in groups.values():
        members.sort(key=lambda m: m[0])
        n = len(members)
        bands = min(c.RTT_BANDS, n)
        for band in range(bands):
            chunk = members[band * n // bands : (band + 1) * n // bands]
            pooled = c.median([m[1] for m in chunk])
            for m in chunk:
                out[m[2]] = pooled
    return out


def old_unjudged(series, found):
    p = found.params
    counts = Counter()
    for s in series:
        if s.key in found.baselines or not s.runs:
            continue
        last_fp = s.runs[-1].fingerprint
        older = [r for r in s.runs if r.fingerprint != last_fp and r.value > 0]
        needed = p.borrowed_min_runs if len(older) >= p.min_runs else p.min_runs
        counts[(s.key.source, s.key.metric, len(old_tail(s, p)), needed)] += 1
    return sorted(counts.items())


# ---- a synthetic store ---------------------------------------------------------------


def synthetic_store(seed: int) -> tuple[list[c.Series], dict[str, tuple[str, ...]]]:
    """24 hosts, every path's RTT (276 paths) and a third of them throughput, RUNS runs
    each, with one scenario per path; host h00 steps on all its paths at run 40, host h01
    toward Europe at run 30."""
    rng = random.Random(seed)
    hosts = [f"{'aws' if i % 2 else 'gcp'}:h{i:02d}" for i in range(24)]
    groups = {h: (f"continent:{CONTINENTS[i % 3]}", f"cloud:{h.split(':')[0]}")
              for i, h in enumerate(hosts)}  # fmt: skip
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    run_ids = [f"s{i:03d}" for i in range(RUNS)]
    times = [(t0 + timedelta(hours=6 * i)).strftime("%Y-%m-%dT%H:%M:%SZ") for i in range(RUNS)]
    out: list[c.Series] = []
    for ia, a in enumerate(hosts):
        for b in hosts[ia + 1 :]:
            for metric in ("rtt", "throughput"):
                if metric == "throughput" and rng.random() > 0.35:
                    continue
                out.extend(_path(rng, metric, a, b, run_ids, times, groups))
    rng.shuffle(out)  # detect groups them by path itself
    return out, groups


def _path(rng, metric, a, b, run_ids, times, groups):
    level = rng.uniform(2.0, 300.0) if metric == "rtt" else rng.uniform(1e8, 5e9)
    scenario = rng.choice(
        ["quiet", "quiet", "step", "step", "revert", "one way", "spike", "config",
         "config step", "gaps", "flagged", "short", "drift"]
    )  # fmt: skip
    at = rng.randrange(5, RUNS)
    size = rng.choice([1.5, 3.0, 6.0, 12.0, 40.0]) * rng.choice([-1, 1])
    back = at + rng.randrange(1, 6)
    fps = [f"fp-{rng.randrange(1000)}"] * RUNS
    if scenario.startswith("config"):
        fps = fps[:at] + [f"fp-new-{rng.randrange(1000)}"] * (RUNS - at)
    members = []
    for src, dst in ((a, b), (b, a)):
        sigma = rng.choice([0.02, 0.1, 0.4, 1.0, 3.0])
        runs = []
        for i in range(RUNS):
            shift = 0.0
            stepped = (
                (scenario in ("step", "config step") and i >= at)
                or (scenario == "revert" and at <= i < back)
                or (scenario == "one way" and i >= at and src == a)
                or (scenario == "spike" and i in (at, at + 1 if rng.random() < 0.5 else at))
            )
            if stepped:
                shift = size
            elif scenario == "drift":
                shift = 0.15 * i * (size / abs(size))
            if a == "gcp:h00" and i >= 40:  # a host change
                shift += 15.0
            if a == "aws:h01" and "continent:Europe" in groups[b] and i >= 30:
                shift += 25.0  # toward one continent
            noise = rng.gauss(0.0, sigma) if rng.random() > 0.02 else rng.gauss(0.0, 20 * sigma)
            if metric == "rtt":
                value = round(max(level + shift + noise, 0.05), 3)
            else:  # a step of `size` ms is a factor on throughput
                value = level * math.exp(shift / 40.0 + noise / 20.0)
            runs.append(c.Run(run_ids[i], times[i], value, fps[i]))
        if scenario == "gaps" or rng.random() < 0.1:
            runs = [r for r in runs if rng.random() > 0.25]
        if scenario == "flagged":  # what the store's flags leave: 0, negative, NaN
            for _ in range(6):
                i = rng.randrange(len(runs))
                runs[i] = runs[i]._replace(value=rng.choice([0.0, -1.0, math.nan]))
        if scenario == "short":
            runs = runs[-rng.randrange(1, 10) :]
        members.append(c.Series(c.SeriesKey("measured", "iperf3", metric, src, dst), runs, 1e3))
    if rng.random() < 0.03:  # the other direction's run stamped at another time
        s = members[1]
        i = rng.randrange(len(s.runs))
        s.runs[i] = s.runs[i]._replace(t=s.runs[i].t.replace("T", "T1"))
    if rng.random() < 0.03:  # a run twice
        s = members[0]
        s.runs.insert(3, s.runs[3])
    return members


@pytest.mark.parametrize(
    ("seed", "params"),
    [
        (1, c.Params()),
        (2, c.Params()),
        (1, c.Params(k1=3.0, k2=4.0, window_runs=14)),
        (2, c.Params(min_runs=5)),
    ],
)
def test_detection_at_once_is_the_per_path_loop(seed, params):
    series, groups = synthetic_store(seed)
    found = c.detect(series, params, groups)
    assert found == old_detect(series, params, groups)
    for last in (28, 7):
        assert c.calibrate(series, params, last) == old_calibrate(series, params, last)
    # the site computes the pooled scales once for both
    pooled = c.pooled_scales(series, params)
    assert c.detect(series, params, groups, pooled) == found
    assert c.calibrate(series, params, 28, pooled) == old_calibrate(series, params, 28)
    # the store has what the loop decides on, and most paths take the bulk path
    assert found.hosts and found.groups and found.config_changes and found.suspects
    assert {e.status for e in found.episodes} >= {"open", "reverted", "new normal"}
    assert any(e.one_way for e in found.episodes)
    by_path = c.paths(series)
    starts = c._quiet_starts(by_path, params, c.pooled_scales(series, params))
    assert 0.9 * len(by_path) <= len(starts) < len(by_path)
    left = [sum(len(t.runs) for t in tails) for _dirs, tails, _result in starts.values()]
    assert left.count(0) > 50 and sum(0 < n < RUNS for n in left) > 50


def test_a_run_at_its_threshold_is_decided_as_the_loop_decides():
    # 12 runs, then one 4.5 scales (of the loop's rounding) from their median: numpy may
    # round the scale apart, the result is the loop's (pooled: the tail's MAD, 1 ms)
    key = c.SeriesKey("m", "b", "rtt", "x", "y")
    steady = [149.0, 150.0, 151.0] * 4
    d = c._Direction(c.Series(key, []), c.Params(), c.MAD_TO_SIGMA * 1.0)
    for v in steady:
        d.base.push(v)
    for k1 in (c.CALIBRATION_SCALES, 3.0):
        x = d.base.median() + k1 * d.scale()
        runs = [c.Run(f"r{i:02d}", f"t{i:02d}", v, "fp") for i, v in enumerate([*steady, x])]
        s = c.Series(key, runs)
        assert c.pooled_scales([s], c.Params())[key] == c.MAD_TO_SIGMA * 1.0
        assert c.calibrate([s]) == old_calibrate([s], c.Params())
        assert c.detect([s], c.Params(k1=k1)) == old_detect([s], c.Params(k1=k1), {})


@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, 2.5, 1e9]), max_size=40),
       st.integers(min_value=0, max_value=30))  # fmt: skip
def test_a_window_built_at_once_is_the_window_pushed_run_by_run(values, n):
    pushed = c.Window(n)
    for v in values:
        pushed.push(v)
    built = c.Window(n, values)
    assert list(built.recent) == list(pushed.recent)
    assert [(v, math.copysign(1, v)) for v in built.ordered] == [
        (v, math.copysign(1, v)) for v in pushed.ordered
    ]


def as_columns(series):
    return [c.Series(s.key, c.Runs.of(s.runs), s.distance_km) for s in series]


def with_new_configuration(series, last):
    """Every series' last `last` runs of a new configuration (a new version measuring)."""
    out = []
    for s in series:
        runs = list(s.runs)
        runs[len(runs) - last :] = [r._replace(fingerprint="fp-new") for r in runs[-last:]]
        out.append(c.Series(s.key, runs, s.distance_km))
    return out


@pytest.mark.parametrize(
    ("last", "params"),
    [(1, c.Params()), (3, c.Params()), (4, c.Params()), (2, c.Params(borrowed_min_runs=1)),
     (3, c.Params(min_runs=3, window_runs=4))],
)  # fmt: skip
def test_a_new_configuration_in_the_last_runs_is_the_per_path_loops(last, params):
    base, groups = synthetic_store(3)
    series = with_new_configuration(base, last)
    found = c.detect(series, params, groups)
    assert found == old_detect(series, params, groups)
    assert len(found.config_changes) > 300
    assert c.calibrate(series, params) == old_calibrate(series, params)
    assert sorted((u.source, u.metric, u.runs, u.needed, u.pairs) for u in c.unjudged(
        series, found)) == [(*k, n) for k, n in old_unjudged(series, found)]  # fmt: skip
    if last <= params.borrowed_min_runs:  # nothing judged after the change: no loop
        quiet, changed = (_paths_left_alone(s, params) for s in (base, series))
        assert changed >= quiet > 50


def _paths_left_alone(series, params):
    """The paths _quiet_starts leaves no run of to the per-path loop."""
    starts = c._quiet_starts(c.paths(series), params, c.pooled_scales(series, params))
    return sum(not any(t.runs for t in tails) for _dirs, tails, _result in starts.values())


@pytest.mark.parametrize("seed", [1, 2])
def test_runs_as_columns_are_judged_as_run_lists(seed):
    series, groups = synthetic_store(seed)
    columns = as_columns(series)
    assert repr([list(s.runs) for s in columns]) == repr([list(s.runs) for s in series])  # NaN
    found = c.detect(columns, c.Params(), groups)
    assert found == c.detect(series, c.Params(), groups)
    assert c.calibrate(columns) == c.calibrate(series)
    assert c.unjudged(columns, found) == c.unjudged(series, found)


@pytest.mark.parametrize("params", [c.Params(), c.Params(window_runs=6), c.Params(min_runs=3)])
def test_pooled_scales_and_counts_not_judged_are_the_per_series_ones(params):
    series, _groups = synthetic_store(4)
    series += with_new_configuration(series[:40], 5)  # not judged yet, 5 runs of 8
    assert c.pooled_scales(series, params) == old_pooled_scales(series, params)
    found = c.detect(series, params)
    waiting = c.unjudged(series, found)
    assert sorted((u.source, u.metric, u.runs, u.needed, u.pairs) for u in waiting) == [
        (*k, n) for k, n in old_unjudged(series, found)
    ]
    assert waiting


def test_runs_as_columns_are_a_sequence_of_runs():
    runs = [c.Run("s1", "t1", 1.5, "a"), c.Run("s2", "t2", 2.0, "b"), c.Run("s3", "t3", 0.0, "b")]
    columns = c.Runs.of(runs)
    assert c.Runs.of(columns) is columns
    assert len(columns) == 3 and columns[1] == runs[1] and columns[-1] == runs[-1]
    assert list(columns[1:]) == runs[1:] and columns == runs and columns != runs[:2]
    assert isinstance(columns[0].value, float) and [r.t for r in columns] == ["t1", "t2", "t3"]
    assert list(columns.logs()[:2]) == [math.log(1.5), math.log(2.0)]
    assert math.isnan(columns.logs()[2])
    assert c.Runs.of([]) == [] and not c.Runs.of([])
