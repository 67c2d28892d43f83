"""The RTT histograms: percentiles read from them against DuckDB's exact quantile_cont,
the stored bins against the bins of every row at once (incremental = whole), the
migration from version 5, and the site's RTT windows read from them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import duckdb
import numpy as np
import pytest
from history_support import make_sweep, sweep_id_at

from orchestrator.history import histogram
from orchestrator.history import store as h
from orchestrator.history import views as v

# builds DuckDB stores of many runs: seconds each; `make unit` skips them
pytestmark = pytest.mark.slow

QS = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]
T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"


def _exact_and_binned(groups: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Each group's QS by quantile_cont over its samples, and from its bins."""
    con = duckdb.connect()
    con.execute("CREATE TABLE s (g INTEGER, x DOUBLE)")
    con.executemany(
        "INSERT INTO s VALUES (?, ?)", [(g, x) for g, xs in enumerate(groups) for x in xs]
    )
    exact = np.array(
        [
            r[0]
            for r in con.execute(
                f"SELECT quantile_cont(x, {QS}) FROM s GROUP BY g ORDER BY g"
            ).fetchall()
        ]
    )
    rows = con.execute(
        f"SELECT g, {histogram.bin_sql('x')} AS b, count(*), min(x), max(x) FROM s "
        "GROUP BY g, b ORDER BY g, b"
    ).fetchall()
    con.close()
    g = np.array([r[0] for r in rows])
    firsts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    binned = histogram.quantiles(
        firsts, [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows],
        [r[4] for r in rows], QS,
    )  # fmt: skip
    return exact, binned


def test_percentiles_from_the_bins_are_within_the_error_bound():
    rng = random.Random(7)
    groups = []
    for _ in range(40):
        level = rng.uniform(0.2, 300.0)
        n = rng.choice([1, 2, 3, 17, 200, 3000])
        # ping's three decimals, a spread of a few %, some heavy tails
        groups.append(
            [
                round(level * (1 + abs(rng.gauss(0, 0.02))) + rng.expovariate(2.0), 3)
                for _ in range(n)
            ]
        )
    exact, binned = _exact_and_binned(groups)
    error = np.abs(binned - exact) / exact
    assert error.max() < histogram.ERROR_BOUND
    assert error.max() > 0  # the test would see an error: some bins hold several values
    # min and max are exact
    assert np.array_equal(binned[:, 0], exact[:, 0])
    assert np.array_equal(binned[:, -1], exact[:, -1])
    assert (binned >= exact[:, :1]).all() and (binned <= exact[:, -1:]).all()


def test_percentiles_are_exact_at_the_ends_and_for_few_samples_or_values():
    rng = random.Random(3)
    groups = [[float(rng.randint(10, 90)) for _ in range(rng.randint(1, 500))] for _ in range(20)]
    # one or two samples; one value many times; three evenly spread in one bin (binary
    # fractions: their means are exact); zero and below, a bin below every other
    few = [[42.5], [7.25, 9.0], [3.0, 3.0], [80.125] * 300, [1.0, 1.000244140625, 1.00048828125]]
    few += [[0.0, 0.0, 5.0], [-1.0, 0.0], [-0.5]]
    exact, binned = _exact_and_binned(groups + few)
    # min and max to the bit, every other within the bound
    assert np.array_equal(binned[:, [0, -1]], exact[:, [0, -1]])
    assert (np.abs(binned - exact) <= histogram.ERROR_BOUND * np.abs(exact)).all()
    assert np.array_equal(binned[len(groups) :], exact[len(groups) :])


def test_percentiles_from_the_counts_and_the_extremes_by_hand():
    """Bins 0 (one sample, 1.0), 100 (four) and 200 (one, 1.1053): the four spread over
    bin 100's edges, each in the middle of a quarter of it; lo and hi of the middle bin
    (unknown: NaN) are not read, nor the first bin's hi or the last's lo."""
    r = histogram.RATIO
    low, high = r**100, r**101
    quarter = [low + (high - low) * (j + 0.5) / 4 for j in range(4)]
    qs = [0.0, 0.1, 0.5, 0.9, 1.0]
    nan = float("nan")
    bins, n = [0, 100, 200], [1, 4, 1]
    got = histogram.quantiles([0], bins, n, [1.0, nan, nan], [nan, nan, 1.1053], qs)
    # (6 - 1) q: 0; 0.5 (1.0 and the first quarter's); 2.5; 4.5; 5
    want = [1.0, (1.0 + quarter[0]) / 2, (quarter[1] + quarter[2]) / 2,
            (quarter[3] + 1.1053) / 2, 1.1053]  # fmt: skip
    assert got[0].tolist() == pytest.approx(want, rel=1e-15)
    assert got[0, 0] == 1.0 and got[0, -1] == 1.1053
    # the same counts with other inner extremes: the same numbers, to the bit
    again = histogram.quantiles([0], bins, n, [1.0, low, 1.0], [1.0001, high, 1.1053], qs)
    assert np.array_equal(again, got)
    # the smallest sample unknown: those read from the first bin are unknown too, the
    # others the same
    unknown = histogram.quantiles([0], bins, n, [nan] * 3, [nan, nan, 1.1053], qs)
    assert np.isnan(unknown[0, :2]).all()
    assert np.array_equal(unknown[0, 2:], got[0, 2:])


def test_estimates_stay_within_the_bound_and_between_the_extremes():
    """Samples crowded at one edge of their bins (the estimate assumes them spread over
    the bin): each order statistic still within the bound, none outside [min, max]."""
    rng = random.Random(11)
    r = histogram.RATIO
    groups = []
    for _ in range(30):
        b = rng.randint(-3000, 12000)
        at_top = rng.random() < 0.5
        # every sample in the top (or bottom) hundredth of a few bins
        xs = []
        for _ in range(rng.randint(3, 400)):
            k = b + rng.randint(0, 2)
            f = 0.99 + 0.01 * rng.random() if at_top else 0.01 * rng.random()
            xs.append(r**k + (r ** (k + 1) - r**k) * f)
        groups.append(xs)
    exact, binned = _exact_and_binned(groups)
    assert (np.abs(binned - exact) < histogram.ERROR_BOUND * exact).all()
    assert (np.abs(binned - exact) > 0.5 * histogram.ERROR_BOUND * exact).any()  # far off
    for g, xs in enumerate(groups):
        assert (binned[g] >= min(xs)).all() and (binned[g] <= max(xs)).all()


def _sweep(results, i, level=150.0, hours=6):
    t = T0 + timedelta(hours=hours * i)
    samples = {
        (A, B): [level + 0.137 * (k % 7) + 0.01 * i for k in range(20)],
        (B, A): [148.0 + 0.3 * (k % 5) for k in range(20)],
        (A, C): [70.0 + 0.5 * (i % 4)] * 20,
    }
    return make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t)


def _bins(con):
    """Every bin row, its sum of samples rounded (a sum's last bits depend on its order)."""
    rows = con.execute(
        "SELECT b.source, p.src, p.dst, b.* EXCLUDE (source, pair) FROM rtt_bins b "
        "JOIN pairs p USING (pair) ORDER BY ALL"
    ).fetchall()
    return [(*r[:-1], round(r[-1], 6)) for r in rows]


def _samples(rows, days=1):
    """The samples in the day (or week) rows."""
    return sum(r[7] for r in rows if r[4] == days)


def test_bins_kept_by_each_ingest_are_the_bins_of_every_row(tmp_path):
    for i in range(10):
        h.ingest_sweep(tmp_path, _sweep(tmp_path, i).name)
    # one sweep replaced, with other samples: its day's bins follow
    _sweep(tmp_path, 4, level=190.0)
    h.ingest_sweep(tmp_path, sweep_id_at(T0 + timedelta(hours=24), "0004"))
    with h.opened(tmp_path) as con:
        kept = _bins(con)
        assert _samples(kept) == _samples(kept, days=7) == _samples(kept, days=31) == 600
        assert any(r[9] >= 190.0 for r in kept)
        with h.transaction(con):
            h.refresh_bins(con)  # every day, from every row at once
        assert _bins(con) == kept
        # a sweep deleted takes its samples out of the bins
        with h.transaction(con):
            h.delete_sweep(con, sweep_id_at(T0 + timedelta(hours=24), "0004"))
        assert _samples(_bins(con)) == _samples(_bins(con), days=31) == 9 * 3 * 20
        assert not any(r[9] >= 190.0 for r in _bins(con))


def test_a_version_5_store_migrates_with_its_bins(tmp_path, monkeypatch):
    for i in range(6):
        _sweep(tmp_path, i)
    h.ingest_all(tmp_path)
    path = h.store_path(tmp_path)
    with h.opened(tmp_path) as con:
        want = _bins(con)
        con.execute("DROP TABLE rtt_bins")
        con.execute("DROP TABLE pairs")
        con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    with pytest.raises(h.UserError, match="schema version 5") as refused:
        h.connect(path, read_only=True)
    assert "run 'interregion history ingest' (it upgrades an older store" in str(refused.value)
    said: list[str] = []
    monkeypatch.setattr(h, "info", said.append)
    with h.opened(tmp_path) as con:  # opened to write: migrates, and says so first
        assert said == [
            f"history: upgrading the store from version 5 to {h.STORE_SCHEMA_VERSION} (RTT "
            "histograms and change detection's judgments from every stored test: minutes "
            "for a year of full-catalog sweeps, once)"
        ]
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            str(h.STORE_SCHEMA_VERSION),
        )
        assert _bins(con) == want and want


def _same_cells(con, windows):
    """binned_cells against window_cells: the same pairs, counts and times, the
    percentiles within the bound, min and max exact."""
    (info,) = v.source_infos(con).values()
    compared = 0
    for window in windows:
        for previous in (False, True):
            exact = v.window_cells(con, info, "rtt", window, previous=previous)
            binned = v.binned_cells(con, info, window, previous=previous)
            assert [(c.src, c.dst, c.tests, c.samples, c.newest, c.distance_km)
                    for c in binned] == [
                (c.src, c.dst, c.tests, c.samples, c.newest, c.distance_km) for c in exact
            ]  # fmt: skip
            for e, b in zip(exact, binned, strict=True):
                assert e.quantiles is not None and b.quantiles is not None
                assert b.quantiles[0] == e.quantiles[0] and b.quantiles[-2] == e.quantiles[-2]
                assert b.quantiles[-1] == pytest.approx(e.quantiles[-1], rel=1e-12)
                for x, y in zip(b.quantiles, e.quantiles, strict=True):
                    assert abs(x - y) <= histogram.ERROR_BOUND * y
            compared += len(exact)
    return compared


def test_binned_windows_match_the_exact_ones(tmp_path):
    # 45 days of sweeps every 13 h: the windows start inside a day, whole weeks and days
    # between (1M and the month before it: both ends inside a day; 1M: a month row)
    for i in range(83):
        _sweep(tmp_path, i, hours=13)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        assert _same_cells(con, ("1D", "1W", "1M", "1Y"))
        (info,) = v.source_infos(con).values()
        # the month before 1M starts and ends inside a day, with whole weeks between
        assert v.binned_cells(con, info, "1M", previous=True)


def test_binned_windows_of_a_year_and_the_year_before(tmp_path):
    # 13 months of a sweep every 97 h: 1Y reads whole months, and the year before it
    # ends inside a month, with whole months, weeks and days before
    for i in range(100):
        _sweep(tmp_path, i, hours=97)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (info,) = v.source_infos(con).values()
        assert v.binned_cells(con, info, "1Y", previous=True)
        assert _same_cells(con, ("1M", "1Y"))
