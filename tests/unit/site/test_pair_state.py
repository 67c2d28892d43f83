"""The pair pages' tests kept between site builds (orchestrator.site.pair_state): updated
by the sweeps added since, the pages are those a build from scratch gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from history_support import make_sweep, sweep_id_at
from report_support import CATALOG

from orchestrator.history import changes as ch
from orchestrator.history import judgments
from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.site import build as site
from orchestrator.site import history_pages as site_history
from orchestrator.site import pair_state

# builds stores and sites: seconds each; `make unit` skips them
pytestmark = pytest.mark.slow

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"


def _sweep(results, day, hours=0):
    """The sweep of `day`: A -> B and B -> A always, A -> C on days 0 to 2 only (then
    its page shows its newest test alone), C -> A from day 9 on (a pair new to the kept
    tests); RTTs and throughput that differ per day."""
    t = T0 + timedelta(days=day, hours=hours)
    samples = {
        (A, B): [150.0 + 0.013 * ((7 * day + k) % 11) + 0.2 * (k % 4) for k in range(20)],
        (B, A): [148.0 + 0.05 * ((3 * day + k) % 7) for k in range(20)],
    }
    if day <= 2:
        samples[A, C] = [70.0 + day + 0.01 * k for k in range(20)]
    if day >= 9:
        samples[C, A] = [71.0 + 0.5 * day] * 20
    sweep_id = sweep_id_at(t, f"{day:04x}")
    make_sweep(results, sweep_id, samples, started=t, throughput_bps=9.0e8 - 1.1e6 * day)
    h.ingest_sweep(results, sweep_id)
    return sweep_id


def _pages(results, kept=None):
    """Each pair page's data as JSON (html.json_text), with the kept tests if given."""
    with h.opened(results, read_only=True) as con:
        infos = list(v.source_infos(con).values())
        found = judgments.detection(con, last_runs=site_history.CHANGE_RUNS)
        pairs = site_history.pair_data(con, infos, found, kept)
    data = site_history.HistoryData(matrix={}, changes={}, pairs=pairs, emulated={})
    return dict(site_history.pair_texts(data)), pairs


def _updated(results):
    """The pages from the kept tests, which are then kept: (pages, the state used)."""
    with h.opened(results, read_only=True) as con:
        kept = pair_state.load(con, results)
    pages, _ = _pages(results, kept)
    with h.opened(results, read_only=True) as con:
        pair_state.save(con, results, kept)
    return pages, kept


def test_pages_updated_sweep_after_sweep_equal_pages_read_whole(tmp_path, monkeypatch):
    # a week's window: the tests leave it as the days pass
    monkeypatch.setattr(site_history, "PAIR_WINDOW", "1W")
    results = tmp_path / "results"
    for day in range(3):
        _sweep(results, day)
    _updated(results)
    for day in range(3, 14):
        _sweep(results, day)
        pages, kept = _updated(results)
        assert kept.reason is None and kept.used == ["emulated"]
        whole, pairs = _pages(results)
        assert pages == whole
    # what the pages hold: a week of A -> B, A -> C's newest test alone, C -> A's days
    (entry,) = pairs[C, A]["sources"]  # keyed by the sorted pair, its first end first
    back, forward = entry["directions"]
    assert forward["t"] == ["2026-11-03T00:00:00.000Z"]  # day 2, its first test
    assert forward["rtt"] == [72.1]  # the median of 72.00 .. 72.19
    assert back["t"][0] == "2026-11-10T00:00:00.000Z" and len(back["t"]) == 5  # days 9-13
    (entry,) = pairs[A, B]["sources"]
    # days 7-13: the week ends at the newest test (B -> A, day 13 + 20 s); day 6 held no C -> A,
    # so its tests were at + 0 and 10 s, out
    assert [len(d["t"]) for d in entry["directions"]] == [7, 7]
    assert entry["directions"][0]["throughput"][-1] == round(900.0 - 1.1 * 13, 2)
    assert entry["directions"][0]["sweep"][-1] == sweep_id_at(T0 + timedelta(days=13), "000d")


def test_kept_tests_are_not_used_when_the_store_is_not_theirs_plus_newer_sweeps(tmp_path):
    results = tmp_path / "results"
    for day in range(4):
        _sweep(results, day)
    _updated(results)
    _sweep(results, 2, hours=12)  # between the kept sweeps
    pages, kept = _updated(results)
    assert kept.reason is not None and "older" in kept.reason and kept.used == []
    assert pages == _pages(results)[0]
    with h.opened(results) as con, h.transaction(con):
        h.delete_sweep(con, sweep_id_at(T0 + timedelta(days=3), "0003"))
    pages, kept = _updated(results)
    assert kept.reason == "a sweep was deleted or stored again"
    assert pages == _pages(results)[0]
    (results / pair_state.STATE_DIR / "meta.json").write_text("not JSON")
    with h.opened(results, read_only=True) as con:
        assert pair_state.load(con, results).reason.startswith("unreadable")


def test_a_site_build_keeps_the_tests_and_the_next_one_updates_them(tmp_path):
    results = tmp_path / "results"
    for day in range(3):
        _sweep(results, day)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    assert (results / pair_state.STATE_DIR / "meta.json").is_file()
    _sweep(results, 3)
    with h.opened(results, read_only=True) as con:
        kept = pair_state.load(con, results)
    assert kept.reason is None and list(kept.kept) == ["emulated"]
    site.build_site(out, results, catalog=CATALOG)
    page = (out / "history" / "pairs" / site_history.pair_file(A, B)).read_text()
    assert "2026-11-04T00:00:00.000Z" in page  # the new sweep's test


def _rows(pairs, pair, t_us, sweeps, sweep, rtt, tput=None):
    times = [
        (datetime(1970, 1, 1) + timedelta(microseconds=x)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
        + "Z"
        for x in t_us
    ]
    return pair_state.Rows(
        pairs=pairs,
        sweeps=sweeps,
        pair=np.array(pair, dtype=np.int32),
        us=np.array(t_us, dtype=np.int64),
        t=np.array(times, dtype="S"),
        sweep=np.array(sweep, dtype=np.int32),
        rtt=np.array(rtt, dtype=np.float64),
        tput=np.array(tput or [np.nan] * len(t_us), dtype=np.float64),
    )


def test_moved_adds_the_new_tests_and_drops_those_before_the_start():
    day = 86_400_000_000
    kept = _rows(
        [("a", "b"), ("a", "c"), ("b", "a")],
        [0, 0, 1, 2, 2],
        [1 * day, 5 * day, 2 * day, 4 * day, 6 * day],
        ["s1", "s2", "s4", "s5", "s6"],
        [0, 3, 1, 2, 4],
        [10.0, 11.0, 20.0, 30.0, np.nan],
    )
    new = _rows([("a", "b"), ("c", "a")], [0, 1, 1], [7 * day, 7 * day, 8 * day],
                ["s8", "s7"], [1, 1, 0], [12.0, 40.0, 41.0])  # fmt: skip
    got = pair_state.moved(kept, new, datetime(1970, 1, 1) + timedelta(days=5))
    # a -> b loses day 1; a -> c keeps its newest (day 2) alone; b -> a loses day 4
    assert got.pairs == [("a", "b"), ("a", "c"), ("b", "a"), ("c", "a")]
    assert got.pair.tolist() == [0, 0, 1, 2, 3, 3]
    assert (got.us // day).tolist() == [5, 7, 2, 6, 7, 8]
    assert got.sweeps == ["s2", "s5", "s6", "s8", "s7"]  # s1 and s4 gone, none twice
    assert [got.sweeps[s] for s in got.sweep.tolist()] == ["s5", "s7", "s2", "s6", "s7", "s8"]
    assert got.t[1] == b"1970-01-08T00:00:00.000Z"
    series = got.series()
    assert [(s[0], s[1], s[4]) for s in series] == [
        ("a", "b", [11.0, 12.0]),
        ("a", "c", [20.0]),
        ("b", "a", [None]),  # NaN: no value
        ("c", "a", [40.0, 41.0]),
    ]
    assert series[0][2] == ["1970-01-06T00:00:00.000Z", "1970-01-08T00:00:00.000Z"]
    assert series[0][3] == ["s5", "s7"] and series[0][5] == [None, None]
    # nothing kept: the new tests alone
    alone = pair_state.moved(pair_state.empty(), new, None)
    assert alone.pairs == [("a", "b"), ("c", "a")] and alone.sweep.tolist() == [1, 1, 0]


def test_the_smallest_detectable_change_of_every_pair_is_views_detectable():
    keys = [
        ch.SeriesKey("measured", backend, metric, src, dst)
        for backend in ("aws", "gcp")
        for metric in ("rtt", "throughput")
        for src, dst in ((A, B), (B, A), (A, C))
    ]
    # each backend's scale differs: the last one of a pair is taken, as views does
    scales = {k: 0.2 + 0.37 * n for n, k in enumerate(keys)}
    del scales[keys[2]]  # (aws, rtt, A -> C): gcp's alone
    floor = ch.Params().floor_rtt_ms
    scales[keys[7]] = scales[keys[8]] = floor  # (gcp, rtt, B -> A and A -> C): the floor
    found = ch.Detection([], [], [], scales=scales)
    got = site_history._detectable_rtt(found)
    assert sorted(got) == sorted(("measured", s, d) for s, d in ((A, B), (B, A), (A, C)))
    for (source, src, dst), size in got.items():
        assert size == v.detectable(found, source, "rtt", src, dst)["smallest_detectable_change"]
    assert got["measured", A, B] == round(ch.smallest_change(0.2 + 0.37 * 6), 2)  # gcp's
    assert got["measured", B, A] == got["measured", A, C] == round(ch.smallest_change(floor), 2)
