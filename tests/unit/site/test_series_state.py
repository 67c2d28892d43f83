"""Change detection's tests kept between site builds (orchestrator.site.series_state):
updated by the sweeps added since, the series are those views.change_series gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from history_support import make_sweep, sweep_id_at
from report_support import CATALOG

from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.site import build as site
from orchestrator.site import series_state

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"
RUNS = 5  # the last sweeps judged: the tests leave them as the days pass


def _sweep(results, day, hours=0, fingerprint=None):
    """The sweep of `day`: A -> B and B -> A always, A -> C on days 0 to 2 only, C -> A
    from day 9 on (a pair new to the kept tests); RTTs and throughput that differ per
    day; a failed throughput (0 bit/s) on day 6."""
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
    tput = 0.0 if day == 6 else 9.0e8 - 1.1e6 * day
    make_sweep(results, sweep_id, samples, started=t, throughput_bps=tput)
    h.ingest_sweep(results, sweep_id)
    return sweep_id


def _columns(series):
    """Each series' key, distance and runs as plain lists (comparable)."""
    return [
        (s.key, s.distance_km, list(s.runs.ids), list(s.runs.times), list(s.runs.prints),
         s.runs.values.tolist())
        for s in series
    ]  # fmt: skip


def _updated(results):
    """The series from the kept tests, which are then kept: (series, the state used)."""
    with h.opened(results, read_only=True) as con:
        kept = series_state.load(con, results)
        got = series_state.change_series(con, RUNS, kept)
        series_state.save(con, results, kept)
    return got, kept


def _whole(results):
    with h.opened(results, read_only=True) as con:
        return v.change_series(con, RUNS)


def test_series_updated_sweep_after_sweep_equal_series_read_whole(tmp_path):
    results = tmp_path / "results"
    for day in range(3):
        _sweep(results, day)
    _updated(results)
    for day in range(3, 14):
        _sweep(results, day)
        got, kept = _updated(results)
        assert kept.reason is None and kept.used == ["emulated"]
        assert _columns(got) == _columns(_whole(results))
    # what they hold: the last 5 sweeps of A -> B, C -> A's (new on day 9), A -> C gone
    pairs = {(s.key.metric, s.key.src, s.key.dst): s for s in got}
    assert (("rtt", A, C)) not in pairs
    assert len(pairs["rtt", A, B].runs) == RUNS and len(pairs["rtt", C, A].runs) == RUNS
    assert pairs["rtt", C, A].runs.values.tolist() == [71.0 + 0.5 * d for d in range(9, 14)]
    (rows,) = (k.rows for k in kept.made.values())
    assert len(rows.sweeps) == RUNS  # the sweeps no kept test is of are dropped
    assert np.all(np.diff(rows.group) >= 0)


def test_kept_series_are_not_used_when_the_store_is_not_theirs_plus_newer_sweeps(tmp_path):
    results = tmp_path / "results"
    for day in range(8):
        _sweep(results, day)
    _updated(results)
    _sweep(results, 6, hours=12)  # between the kept sweeps
    got, kept = _updated(results)
    assert kept.reason is not None and "older" in kept.reason and kept.used == []
    assert _columns(got) == _columns(_whole(results))
    with h.opened(results) as con, h.transaction(con):
        h.delete_sweep(con, sweep_id_at(T0 + timedelta(days=7), "0007"))
    got, kept = _updated(results)
    assert kept.reason == "a sweep was deleted or stored again"
    assert _columns(got) == _columns(_whole(results))
    (results / series_state.STATE_DIR / "meta.json").write_text("not JSON")
    with h.opened(results, read_only=True) as con:
        assert series_state.load(con, results).reason.startswith("unreadable")


def test_a_cutoff_moved_back_reads_the_series_whole(tmp_path):
    """More runs judged than when the tests were kept: the older ones are read again."""
    results = tmp_path / "results"
    for day in range(9):
        _sweep(results, day)
    _updated(results)
    with h.opened(results, read_only=True) as con:
        kept = series_state.load(con, results)
        got = series_state.change_series(con, RUNS + 2, kept)
        assert kept.used == []
        assert _columns(got) == _columns(v.change_series(con, RUNS + 2))


def test_a_site_build_keeps_the_series_and_the_next_one_updates_them(tmp_path, monkeypatch):
    results = tmp_path / "results"
    for day in range(3):
        _sweep(results, day)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    assert (results / series_state.STATE_DIR / "meta.json").is_file()
    _sweep(results, 3)
    used = []
    real = series_state.change_series

    def spy(con, last_runs, state=None, infos=None):
        got = real(con, last_runs, state, infos)
        used.append((state.reason, list(state.used)))
        return got

    monkeypatch.setattr(series_state, "change_series", spy)
    site.build_site(out, results, catalog=CATALOG)
    assert used == [(None, ["emulated"])]  # updated, not read whole
    with h.opened(results, read_only=True) as con:
        kept = series_state.load(con, results)
    assert kept.reason is None
    assert kept.kept["emulated"].rows.sweeps[-1] == sweep_id_at(T0 + timedelta(days=3), "0003")
