"""Change detection judged once, at ingest: a change found stays found however many runs
follow; the store's tables are the same whether the sweeps came one at a time or were
rebuilt; a sweep added out of order, or ingested again with other values, judges only its
paths again and says so; ingesting the same sweep again changes nothing."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from history_support import make_sweep, sweep_id_at

from orchestrator.cli import main
from orchestrator.history import changes as c
from orchestrator.history import judgments
from orchestrator.history import store as h
from testkit.noise import student_t

T0 = datetime(2026, 9, 1, tzinfo=UTC)
REGIONS = ("aws:us-east-1", "aws:eu-west-1", "gcp:europe-west1", "gcp:asia-east1")
STEPPED = {("aws:us-east-1", "aws:eu-west-1"), ("gcp:europe-west1", "gcp:asia-east1")}
TABLES = ("judgments", "episodes", "config_changes", "calibrations", "detection_state")


def _rtt(a: str, b: str) -> float:
    """A level per path, 40 to 200 ms, the same both ways."""
    x, y = sorted((a, b))
    return 40.0 + (REGIONS.index(x) * 7 + REGIONS.index(y) * 13) % 160


def _levels(runs: int, seed: int, step_at: int = 30, step_ms: float = 10.0):
    """Per run and directed pair: its median RTT. The public data's noise: a per-run offset
    shared by both directions, 1.42 ms x (RTT/100)^0.34 with t6 tails, and a 0.2 ms
    residual per direction; +step_ms on both directions of the STEPPED paths from
    `step_at` on."""
    rng = random.Random(seed)
    out = []
    for i in range(runs):
        levels = {}
        for a in REGIONS:
            for b in REGIONS:
                if a < b:
                    base = _rtt(a, b)
                    shared = 1.42 * (base / 100) ** 0.34 * student_t(rng, 6.0)
                    on = {tuple(sorted(p)) for p in STEPPED}
                    stepped = step_ms if (a, b) in on and i >= step_at else 0.0
                    for src, dst in ((a, b), (b, a)):
                        levels[(src, dst)] = base + shared + stepped + rng.gauss(0, 0.2)
        out.append(levels)
    return out


def _series(levels):
    runs: dict[tuple[str, str], list[c.Run]] = {}
    for i, by_pair in enumerate(levels):
        t = T0 + timedelta(hours=6 * i)
        for pair, value in by_pair.items():
            runs.setdefault(pair, []).append(c.Run(f"s{i:03d}", t, value, "fp"))
    return [c.Series(c.SeriesKey("emulated", "local", "rtt", *pair), r) for pair, r in runs.items()]


def _found(detection):
    return {(e.key.src, e.key.dst, e.started_run, e.confirmed_run) for e in detection.episodes}


@pytest.mark.parametrize("seed", range(4))
def test_a_change_found_after_3_runs_is_still_found_however_many_runs_follow(seed):
    levels = _levels(60, seed)
    first = c.detect(_series(levels[:34]))
    steps = {(e.key.src, e.key.dst): e for e in first.episodes}
    assert {tuple(sorted(p)) for p in STEPPED} <= set(steps), _found(first)
    for pair in STEPPED:
        e = steps[tuple(sorted(pair))]
        assert "s029" <= e.started_run <= "s030" and e.confirmed_run <= "s033"
    kept = _found(first)  # a false one too (bench/history.py counts them): kept as well
    for n in range(34, 61):  # read at every number of runs after the step
        assert kept <= _found(c.detect(_series(levels[:n]))), n


def _sweep(results, i, levels, kernel="6.1.0-28-amd64"):
    t = T0 + timedelta(hours=6 * i)
    samples = {pair: [v + 0.05 * (k % 3) for k in range(20)] for pair, v in levels.items()}
    return make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t, kernel=kernel)


def _tables(results):
    with h.opened(results, read_only=True) as con:
        out = {}
        for table in TABLES:
            rows = con.execute(f"SELECT * FROM {table}").fetchall()
            out[table] = sorted(rows, key=repr)
        return out


def _changes(results, *args):
    result = CliRunner().invoke(main, ["changes", "--json", "--results", str(results), *args])
    assert result.exit_code in (0, 3), result.output
    return json.loads(result.stdout)


@pytest.mark.slow
def test_the_store_keeps_the_episode_it_reported_and_rebuild_gives_the_same_tables(
    tmp_path, httpserver
):
    httpserver.expect_request("/hook", method="POST").respond_with_data("ok")
    url = httpserver.url_for("/hook")
    levels = _levels(60, seed=7)
    ids = []
    for i, by_pair in enumerate(levels):
        kernel = "6.1.0-29-amd64" if i >= 56 else "6.1.0-28-amd64"  # a new image at run 56
        ids.append(_sweep(tmp_path, i, by_pair, kernel).name)
        h.ingest_sweep(tmp_path, ids[-1])
        if i == 33:  # reported, and notified, 3 runs after the step
            early = _changes(tmp_path, "--notify", url)
    seen = {(e["src"], e["dst"]): e for e in early["episodes"]}
    assert set(seen) == {tuple(sorted(p)) for p in STEPPED}
    posted = [json.loads(r.get_data()) for r, _response in httpserver.log]
    assert {(d["id"], d["event"]) for d in posted} == {(e["id"], "opened") for e in seen.values()}
    late = _changes(tmp_path)  # 27 runs later
    since = _changes(tmp_path, "--since", _iso(30)[:10])
    for doc in (late, since):
        now = {e["id"]: e for e in doc["episodes"]}
        for e in seen.values():
            assert e["id"] in now, doc["episodes"]
            assert (now[e["id"]]["started_run"], now[e["id"]]["confirmed_run"]) == (
                e["started_run"], e["confirmed_run"],
            )  # fmt: skip
            # 6 runs at the new level: a new normal, long before the new image at run 56
            assert now[e["id"]]["status"] == "new normal"
            assert now[e["id"]]["closed_run"] < ids[56]
    # what was notified is what `changes --since` lists of those days
    with h.opened(tmp_path, read_only=True) as con:
        notified = {r[0] for r in con.execute("SELECT episode_id FROM notified").fetchall()}
    assert notified == {e["id"] for e in since["episodes"]}
    assert len(late["configuration_changes"]) == 1
    # the judgments never changed: each run's row as it was written when it arrived
    with h.opened(tmp_path, read_only=True) as con:
        rows = con.execute(
            "SELECT count(*), count(DISTINCT (metric, src, dst, sweep_id)) FROM judgments"
        ).fetchone()
    assert rows[0] == rows[1] == 60 * 12 * 2  # RTT and throughput
    one_by_one = _tables(tmp_path)
    h.rebuild(tmp_path)
    assert _tables(tmp_path) == one_by_one
    h.ingest_all(tmp_path)  # every sweep ingested again as it was: nothing judged again
    assert _tables(tmp_path) == one_by_one


@pytest.mark.slow
def test_a_sweep_added_late_judges_only_its_paths_again_and_says_so(tmp_path, monkeypatch):
    levels = _levels(20, seed=3)
    folders = [_sweep(tmp_path, i, by_pair) for i, by_pair in enumerate(levels)]
    late = folders[12]
    for f in folders:
        if f != late:
            h.ingest_sweep(tmp_path, f.name)
    before = _tables(tmp_path)
    said: list[str] = []
    monkeypatch.setattr(h, "info", said.append)
    h.ingest_sweep(tmp_path, late.name)
    assert said == [
        f"history: 6 pairs of emulated judged again from {_iso(12)} on (a sweep "
        "added out of order, replaced or removed)"
    ]
    after = _tables(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        order = con.execute(
            "SELECT src, dst, list(sweep_id ORDER BY t) FROM judgments GROUP BY metric, src, dst"
        ).fetchall()
    assert all(runs == sorted(runs) and len(runs) == 20 for _s, _d, runs in order)
    # rows of the runs before the late one are as they were (the same inputs, in order)
    early = [r for r in before["judgments"] if r[5] < late.name]
    assert early == [r for r in after["judgments"] if r[5] < late.name]
    # the late sweep ingested again as it is: nothing judged again
    said.clear()
    h.ingest_sweep(tmp_path, late.name)
    assert said == [] and _tables(tmp_path) == after


def rows_run(results, i: int) -> str:
    return sorted(p.name for p in results.iterdir() if p.is_dir())[i]


def _iso(i: int) -> str:
    return (T0 + timedelta(hours=6 * i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@pytest.mark.slow  # a store of months of runs
def test_a_new_rule_judges_every_run_again_as_a_rebuild_with_it_would(tmp_path):
    for i, by_pair in enumerate(_levels(14, seed=5, step_at=8)):
        _sweep(tmp_path, i, by_pair)
    h.ingest_all(tmp_path)
    assert _changes(tmp_path)["rule"]["min_runs"] == 8
    default = _tables(tmp_path)
    doc = _changes(tmp_path, "--min-runs", "4", "--baseline-runs", "8")
    assert doc["rule"] == {"baseline_runs": 8, "min_runs": 4, "calibrate": False,
                           "k1": 3.0, "k2": 3.75}  # fmt: skip
    assert {(e["src"], e["dst"]) for e in doc["episodes"]} == {tuple(sorted(p)) for p in STEPPED}
    changed = _tables(tmp_path)
    assert changed["judgments"] != default["judgments"]  # judged from the 5th run now
    h.rebuild(tmp_path)  # the rule goes along
    with h.opened(tmp_path, read_only=True) as con:
        assert judgments.rule(con) == c.Params(window_runs=8, min_runs=4)
    assert _tables(tmp_path) == changed


def test_judgments_hold_what_each_run_was_judged_against(tmp_path):
    levels = [{pair: 150.0 + (i % 2) * 0.2 for pair in (("aws:us-east-1", "aws:eu-west-1"),
               ("aws:eu-west-1", "aws:us-east-1"))} for i in range(12)]  # fmt: skip
    for i, by_pair in enumerate(levels):
        if i >= 9:
            by_pair = {p: v + 10.0 for p, v in by_pair.items()}
        _sweep(tmp_path, i, by_pair)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        rows = con.execute(
            "SELECT status, baseline, scale, deviation, flag_threshold, flagged, k1, k2, "
            "baseline_runs, episode FROM judgments WHERE metric = 'rtt' AND "
            "src = 'aws:us-east-1' ORDER BY t"
        ).fetchall()
        (episode,) = con.execute("SELECT id, started_run, status FROM episodes").fetchall()
    assert [r[0] for r in rows] == ["learning"] * 8 + ["normal"] + ["flagged"] * 3
    # a run's value is its samples' median: 150.05 on even runs, 150.25 on odd ones.
    # Run 8: baseline the median of runs 0-7, 150.15; its deviation -0.1
    assert rows[8][1] == pytest.approx(150.15) and rows[8][3] == pytest.approx(-0.1)
    _status, baseline, scale, deviation, flag, flagged, k1, k2, runs, _ = rows[9]
    # run 9 (160.25): baseline the median of runs 0-8 (five 150.05, four 150.25); MAD 0
    # -> the 0.3 ms floor; the 2 ms minimum sets the flag threshold
    assert baseline == pytest.approx(150.05) and scale == pytest.approx(0.3)
    assert deviation == pytest.approx(10.2)
    assert (flag, flagged, k1, k2, runs) == (2.0, True, 3.0, 3.75, 9)
    # flagged runs never join the baseline: run 10 is judged against the same 9 runs
    assert rows[10][1] == pytest.approx(150.05) and rows[10][8] == 9
    assert rows[-1][-1] == episode[0] and episode[1:] == (rows_run(tmp_path, 9), "open")
