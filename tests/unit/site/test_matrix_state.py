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

# builds stores and sites: seconds each; `make unit` skips them
pytestmark = pytest.mark.slow

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


def _kept_six(tmp_path, monkeypatch):
    """Six sweeps stored and their windows kept (every window, the day's too): (results,
    the build time the tests use)."""
    monkeypatch.setattr(matrix_state, "MIN_DAYS", 1)
    results = tmp_path / "results"
    for i in range(6):
        _sweep(results, i)
    now = T0 + timedelta(days=30)
    _updated(results, now)
    return results, now


def test_a_site_built_after_each_new_sweep_equals_one_built_from_scratch(tmp_path, monkeypatch):
    monkeypatch.setattr(matrix_state, "MIN_DAYS", 1)  # the day's and week's windows kept too
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
    results, now = _kept_six(tmp_path, monkeypatch)
    used = set()
    reread = []  # the pairs and rows whose unknown extremes were read again
    real = matrix_state._read_again

    def read_again(con, source, a, b, bins, rows):
        reread.append((set(matrix_state.v.bin_pairs(bins.key[rows]).tolist()), len(rows)))
        return real(con, source, a, b, bins, rows)

    monkeypatch.setattr(matrix_state, "_read_again", read_again)
    for i in range(6, 14):
        _sweep(results, i)
        data, kept = _updated(results, now)
        assert kept.reason is None
        used |= set(kept.used)
        with h.opened(results, read_only=True) as con:
            whole = site_history.history_data(con, now, CATALOG)
        assert data.matrix == whole.matrix
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


def test_a_sweep_with_tests_older_than_the_kept_ones_is_not_added_to_them(tmp_path, monkeypatch):
    results, now = _kept_six(tmp_path, monkeypatch)
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
    results, _now = _kept_six(tmp_path, monkeypatch)
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
                # each pair's newest test, the three metrics' read together: the cells
                # views.window_cells gives, every field
                latest = matrix_state.latest_cells(con, state, info, metric)
                assert state.latest[info.name, metric] is not None  # not read by views
                assert latest == v.window_cells(con, info, metric, "latest", stats=v.STATS)
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


def test_values_updated_equal_values_made_from_the_tests_left():
    """A window's Values less the oldest tests and with newer ones (values that tie,
    rows and pairs that empty, pairs new to it, limiters that come and go) are the
    Values of the tests it then holds, array for array."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(7)
    size = 400
    pair = rng.integers(0, 9, size).astype(np.int32)
    pair[rng.random(size) < 0.1] = 11  # a pair seen only among the newest tests
    x = rng.choice([0.0, 0.5, 1.25, 3.0, 7.5], size) + rng.integers(0, 3, size) * 100.0
    t = np.sort(rng.integers(0, 10_000, size))
    lim = rng.choice(["", "receiver", "window"], size)
    old, new = t < 7_000, t >= 7_000
    pair[old & (pair == 11)] = 3
    pair[(t < 2_000) & (pair == 5)] = 5  # pair 5's tests: some leave, the rest stay
    pair[(t >= 2_000) & (pair == 8)] = 7  # pair 8's tests all leave

    def made(rows):
        return matrix_state._values_of(
            pair[rows], x[rows], *matrix_state._counted(pair[rows], lim[rows], t[rows])
        )

    window, out, more = made(old), made(t < 2_000), made(new)
    got = matrix_state._updated(window, out, more)
    want = made(t >= 2_000)
    assert 8 not in got.pairs.tolist() and 11 in got.pairs.tolist()
    for name, array in vars(want).items():
        assert np.array_equal(getattr(got, name), array), name
    # what left must have been in the window
    with pytest.raises(matrix_state.Stale):
        matrix_state._updated(made(t >= 2_000), out, None)


@pytest.mark.parametrize("size", [50, 20_000])  # through masks, and piece by piece
def test_rows_spliced_are_the_rows_kept_with_those_put_in(size):
    np = pytest.importorskip("numpy")
    a = np.arange(size, dtype=np.uint8 if size < 256 else np.int64)
    gone = np.array([0, 7, 8, size - 1])
    at = np.array([0, 0, 8, 9, size - 1, size])  # before a row gone, twice at one place
    more = np.array([-1, -2, -3, -4, -5, -6])
    want: list[int] = []
    for i, x in enumerate([*a.tolist(), None]):
        want += more[at == i].tolist()
        if x is not None and i not in gone:
            want.append(x)
    got = matrix_state._spliced(a, gone, at, more, np.int32)
    assert got.dtype == np.int32 and got.tolist() == want


def test_latest_cells_are_read_by_views_when_the_last_day_cannot_tell(tmp_path, monkeypatch):
    """Two tests of a pair at its newest start (which one is DuckDB's choice), or a pair
    whose newest test is older than the last day: the latest cells are views'."""
    results, _now = _kept_six(tmp_path, monkeypatch)
    with h.opened(results) as con:  # pair (A, B)'s newest test twice
        con.execute(
            "INSERT INTO recent SELECT * FROM recent WHERE src = ? AND dst = ? "
            "ORDER BY started_utc DESC LIMIT 1",
            [A, B],
        )
    with h.opened(results, read_only=True) as con:
        info = next(iter(v.source_infos(con).values()))
        state = matrix_state.MatrixState()
        cells = matrix_state.latest_cells(con, state, info, "jitter")
        assert state.latest[info.name, "jitter"] is None
        assert [(c.src, c.dst) for c in cells] == sorted([(A, B), (A, C), (B, A)])
    _sweep(results, 6, hours=6 * 10)  # a day and a half later
    with h.opened(results) as con:  # (B, A) left out of the newest sweep
        con.execute("DELETE FROM recent WHERE src = ? AND dst = ? AND started_utc >= ?",
                    [B, A, T0.replace(tzinfo=None) + timedelta(hours=60)])  # fmt: skip
    with h.opened(results, read_only=True) as con:
        info = next(iter(v.source_infos(con).values()))
        state = matrix_state.MatrixState()
        cells = matrix_state.latest_cells(con, state, info, "loss")
        assert state.latest[info.name, "loss"] is None
        assert cells == v.window_cells(con, info, "loss", "latest", stats=v.STATS)
        assert next(c for c in cells if (c.src, c.dst) == (B, A)).newest < info.latest


def test_rtt_slices_read_together_are_those_binned_range_reads(tmp_path):
    """Every RTT slice a build needs, read in one go (_read_rtt_slices): each the Bins
    views.binned_range reads of it (its sums snapped), a slice that starts or ends
    inside a sweep's tests, and one with none, too."""
    import numpy as np

    results = tmp_path / "results"
    for i in range(6):
        _sweep(results, i)
    spans = [
        (T0.replace(tzinfo=None), T0.replace(tzinfo=None) + timedelta(hours=6)),
        (
            T0.replace(tzinfo=None) + timedelta(hours=5),
            T0.replace(tzinfo=None) + timedelta(hours=13),
        ),
        (T0.replace(tzinfo=None) + timedelta(hours=24), None),
        (T0.replace(tzinfo=None) + timedelta(days=9), None),
    ]
    with h.opened(results, read_only=True) as con:
        state = matrix_state.MatrixState()
        matrix_state._read_rtt_slices(con, state, "emulated", set(spans))
        for a, b in spans:
            got, want = state.slices["emulated", a, b], v.binned_range(con, "emulated", a, b)
            for f in ("key", "n", "lo", "hi", "pair", "tests", "newest_us"):
                assert np.array_equal(getattr(got, f), getattr(want, f)), (a, b, f)
            assert np.array_equal(got.total, matrix_state._snapped(want.total))
            assert (got.lo_t == matrix_state.us(a)).all() and (got.hi_t == got.lo_t).all()
        assert len(state.slices["emulated", *spans[1]].n) and not len(
            state.slices["emulated", *spans[3]].n
        )
