"""The matrix's RTT windows kept between site builds (orchestrator.site.matrix_state):
updated by the sweeps added since, they give what a build from scratch gives."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta

import pytest
from history_support import make_sweep, sweep_id_at
from report_support import CATALOG

from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.site import build as site
from orchestrator.site import history_pages as site_history
from orchestrator.site import matrix_state

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"


def _sweep(results, i, hours=None):
    """Sweep i, 6 h after sweep i - 1: samples that differ per sweep, so that a window
    that moves loses the smallest and largest samples of some of its bins; a throughput
    that repeats every third sweep (the one-value windows' ties)."""
    t = T0 + timedelta(hours=6 * i if hours is None else hours)
    samples = {
        (A, B): [150.0 + 0.013 * ((7 * i + k) % 11) + 0.2 * (k % 4) for k in range(20)],
        (B, A): [148.0 + 0.05 * ((3 * i + k) % 7) for k in range(20)],
        (A, C): [70.0 + (i % 5) + 0.01 * k for k in range(20)],
    }
    sweep_id = sweep_id_at(t, f"{i:04x}")
    make_sweep(results, sweep_id, samples, started=t, throughput_bps=8.0e8 + 1.5e7 * (i % 3))
    h.ingest_sweep(results, sweep_id)
    return sweep_id


def _files(out):
    """Every file of a site, the build time taken out of the matrix's index."""
    found = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "matrix-data.js":
            data = re.sub(rb'"built_utc":"[^"]*","built_s":\d+', b"", data)
        found[str(path.relative_to(out))] = data
    return found


def _cold(results, tmp_path, name):
    """The site built from scratch over the same store: no cache, no kept windows."""
    cold = tmp_path / f"cold-{name}"
    shutil.copytree(results, cold)
    shutil.rmtree(cold / ".cache", ignore_errors=True)
    out = tmp_path / f"site-cold-{name}"
    site.build_site(out, cold, catalog=CATALOG)
    return _files(out)


def _updated(results, now):
    """history_data over the store with the kept windows: (data, the state used)."""
    with h.opened(results, read_only=True) as con:
        kept = matrix_state.load(con, results)
        data = site_history.history_data(con, now, CATALOG, kept=kept)
        matrix_state.save(con, results, kept)
    return data, kept


def _kept_six(tmp_path):
    """Six sweeps stored and their windows kept (every window, the day's too): (results,
    the build time the tests use)."""
    results = tmp_path / "results"
    for i in range(6):
        _sweep(results, i)
    now = T0 + timedelta(days=30)
    _updated(results, now)
    return results, now


def test_a_site_built_after_each_new_sweep_equals_one_built_from_scratch(tmp_path):
    results = tmp_path / "results"
    for i in range(8):
        _sweep(results, i)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    assert (results / matrix_state.STATE_DIR / "meta.json").is_file()
    _sweep(results, 8)
    site.build_site(out, results, catalog=CATALOG)  # the windows kept, updated
    with h.opened(results, read_only=True) as con:
        assert matrix_state.load(con, results).entries  # the build kept its windows
    assert _files(out) == _cold(results, tmp_path, "added")
    # a sweep deleted: the kept windows are not used, the site is the same as from scratch
    with h.opened(results) as con, h.transaction(con):
        h.delete_sweep(con, sweep_id_at(T0 + timedelta(hours=6 * 5), "0005"))
    with h.opened(results, read_only=True) as con:
        assert matrix_state.load(con, results).reason == "a sweep was deleted or stored again"
    site.build_site(out, results, catalog=CATALOG)
    assert _files(out) == _cold(results, tmp_path, "deleted")


def test_windows_updated_sweep_after_sweep_equal_windows_read_whole(tmp_path, monkeypatch):
    """Across day boundaries, the 1D window losing a sweep each time (extremes that leave,
    read again), the previous windows moving at both ends: the matrix is the one the
    store gives, value for value, and the kept windows were the ones used."""
    results, now = _kept_six(tmp_path)
    used = set()
    reread = []  # the pairs and rows whose unknown extremes were read again
    real, whole = matrix_state._read_again, matrix_state._whole

    def read_again(con, source, a, b, bins, rows):
        reread.append((set(matrix_state.v.bin_pairs(bins.key[rows]).tolist()), len(rows)))
        return real(con, source, a, b, bins, rows)

    def read_whole(*args):
        with monkeypatch.context() as m:  # a window read whole: not read again
            m.setattr(matrix_state, "_read_again", real)
            return whole(*args)

    monkeypatch.setattr(matrix_state, "_read_again", read_again)
    monkeypatch.setattr(matrix_state, "_whole", read_whole)
    for i in range(6, 14):
        _sweep(results, i)
        data, kept = _updated(results, now)
        assert kept.reason is None
        used |= set(kept.used)
        with h.opened(results, read_only=True) as con:
            whole_data = site_history.history_data(con, now, CATALOG)
        assert data.matrix == whole_data.matrix
    with h.opened(results, read_only=True) as con:
        numbers = {names: p for p, names in matrix_state.v.pair_names(con).items()}
    # some windows lost a pair's smallest or largest sample (A -> B's 150 ms is in some
    # sweeps only): each such pair's first and last bins alone read again
    assert any(numbers[A, B] in pairs for pairs, _rows in reread)
    assert all(0 < rows <= 2 * len(pairs) for pairs, rows in reread)
    # B -> A's extremes are in every sweep: one that leaves with a sweep is still in a
    # newer one, never read again
    assert not any(numbers[B, A] in pairs for pairs, _rows in reread)
    source = "emulated"
    # 3.5 days of sweeps: the week's window holds them all (the month's is the same cells)
    assert {f"{source}|1D|window", f"{source}|1D|previous", f"{source}|1W|window"} <= used


def test_a_sweep_with_tests_older_than_the_kept_ones_is_not_added_to_them(tmp_path):
    results, now = _kept_six(tmp_path)
    _sweep(results, 6, hours=6 * 5 - 3)  # between sweeps 4 and 5
    data, kept = _updated(results, now)
    assert kept.reason is not None and "older" in kept.reason
    assert kept.used == []
    with h.opened(results, read_only=True) as con:
        assert data.matrix == site_history.history_data(con, now, CATALOG).matrix
    # a damaged file is no state
    (results / matrix_state.STATE_DIR / "0.n.npy").write_bytes(b"not an array")
    with h.opened(results, read_only=True) as con:
        assert matrix_state.load(con, results).reason.startswith("unreadable")


def test_one_value_windows_kept_are_the_stores_to_the_bit(tmp_path, monkeypatch):
    """Throughput, loss and jitter windows updated sweep after sweep: every cell the one
    DuckDB gives from the tests (the percentiles to the bit, the mean to its last bits),
    and the kept entries were the ones used."""
    results, _now = _kept_six(tmp_path)
    used, limiters = set(), set()
    for i in range(6, 12):
        sweep_id = _sweep(results, i)
        with h.opened(results) as con:  # limiters that tie and change (by name, then)
            con.execute(
                "UPDATE recent SET limiter = CASE WHEN src < dst THEN ? END WHERE sweep_id = ?",
                [("window", "loss", "capacity")[i % 3], sweep_id],
            )
        with h.opened(results, read_only=True) as con:
            state = matrix_state.load(con, results)
            info = next(iter(v.source_infos(con).values()))
            for metric in ("throughput", "loss", "jitter"):
                for window in ("1D", "1W", "1M"):
                    for previous in (False, True):
                        mine = matrix_state.value_cells(con, state, info, metric, window, previous)
                        ref = v.window_cells(con, info, metric, window, previous, stats=v.STATS)
                        assert [c.src for c in mine] == [c.src for c in ref]
                        for c, r in zip(mine, ref, strict=True):
                            assert (c.dst, c.tests, c.samples, c.newest) == (
                                r.dst,
                                r.tests,
                                r.samples,
                                r.newest,
                            )
                            # throughput's limiter alone (the matrix shows no other's)
                            assert c.limiter == (r.limiter if metric == "throughput" else None)
                            limiters.add(c.limiter)
                            for stat in v.QUANTILES:
                                assert c.stat(stat) == r.stat(stat), (metric, window, stat)
                            mean, want = c.stat("mean"), r.stat("mean")
                            assert mean == pytest.approx(want, rel=1e-12)
            matrix_state.save(con, results, state)
        used |= set(state.used)
    assert {f"emulated|{m}:1D|window" for m in ("throughput", "loss", "jitter")} <= used
    assert {"window", "loss", "capacity", None} <= limiters
    assert "emulated|throughput:1D|previous" in used
