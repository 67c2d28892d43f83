"""The day summaries' histograms: percentiles read from them against DuckDB's exact
quantile_cont and by hand, the stored bins against the bins of every row at once
(incremental = whole), and the migration from version 5."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import duckdb
import numpy as np
import pytest
from history_support import make_sweep, sweep_id_at

from orchestrator.history import histogram
from orchestrator.history import store as h

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
        firsts, [r[2] for r in rows], [r[3] for r in rows], [r[4] for r in rows], QS
    )
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
    """Bins of 1 value (1.0), 4 (2.0 to 2.6) and 1 (5.0): the four spread evenly from
    their bin's smallest to its largest, 2.0, 2.2, 2.4, 2.6; then as quantile_cont."""
    qs = [0.0, 0.1, 0.5, 0.9, 1.0]
    got = histogram.quantiles([0], [1, 4, 1], [1.0, 2.0, 5.0], [1.0, 2.6, 5.0], qs)
    # (6 - 1) q: 0; 0.5 (1.0 and 2.0); 2.5 (2.2 and 2.4); 4.5 (2.6 and 5.0); 5
    assert got[0].tolist() == pytest.approx([1.0, 1.5, 2.3, 3.8, 5.0], rel=1e-15)
    # two groups one after the other: each its own; a bin of one value many times
    two = histogram.quantiles([0, 1], [3, 2, 2], [7.0, 1.0, 3.0], [7.0, 1.0, 4.0], qs)
    assert two[0].tolist() == pytest.approx([7.0] * 5, rel=1e-15)
    # 1, 1, 3, 4: (4 - 1) q = 0, 0.3, 1.5, 2.7, 3
    assert two[1].tolist() == pytest.approx([1.0, 1.0, 2.0, 3.7, 4.0], rel=1e-15)


def test_estimates_stay_within_the_bound_and_between_the_extremes():
    """Samples crowded at one edge of their bins (the estimate spreads them evenly over
    what each bin holds): each order statistic within the bound, none outside [min, max]."""
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


def _bins(con, table="rtt_bins"):
    """Every bin row, to the bit (its sum an integer, the same in any order it is added)."""
    return con.execute(
        f"SELECT b.source, p.src, p.dst, b.* EXCLUDE (source, pair) FROM {table} b "
        "JOIN pairs p USING (pair) ORDER BY ALL"
    ).fetchall()


def _tests(con):
    """Every test_days row."""
    return con.execute(
        "SELECT b.source, p.src, p.dst, b.* EXCLUDE (source, pair) FROM test_days b "
        "JOIN pairs p USING (pair) ORDER BY ALL"
    ).fetchall()


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
        values, tests = _bins(con, "value_bins"), _tests(con)
        # each metric's tests per day: 3 pairs a sweep, 10 sweeps, every metric but capacity
        counted = {m: sum(r[8] for r in tests if r[3] == m and r[5] == 1) for m in h.PRESENT_SQL}
        assert counted == {"rtt": 30, "loss": 30, "jitter": 30, "throughput": 30, "capacity": 0}
        assert _samples(kept) == _samples(kept, days=7) == _samples(kept, days=31) == 600
        assert _samples(kept, days=92) == 600  # the quarter's
        assert any(r[9] >= 190.0 for r in kept)
        # each test's loss, jitter and throughput (its single_stream measure)
        by_metric = {
            m: sum(r[8] for r in values if r[3] == m and r[5] == 1) for m in h.VALUE_METRICS
        }
        assert by_metric == {"loss": 30, "jitter": 30, "throughput": 30, "capacity": 0}
        with h.transaction(con):
            h.refresh_bins(con)  # every day, from every row at once
        assert _bins(con) == kept
        assert _bins(con, "value_bins") == values
        assert _tests(con) == tests
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
        values, tests = _bins(con, "value_bins"), _tests(con)
        for table in ("rtt_bins", "value_bins", "test_days", "pairs"):
            con.execute(f"DROP TABLE {table}")
        con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    with pytest.raises(h.UserError, match="schema version 5") as refused:
        h.connect(path, read_only=True)
    hint = f"run 'interregion history ingest --all --results {tmp_path}' (it upgrades an older"
    assert hint in str(refused.value)
    said: list[str] = []
    monkeypatch.setattr(h, "info", said.append)
    with h.opened(tmp_path) as con:  # opened to write: migrates, and says so first
        assert said == [
            f"history: upgrading the store from version 5 to {h.STORE_SCHEMA_VERSION} (day "
            "summaries and change detection's judgments from every stored test: minutes "
            "for a year of full-catalog sweeps, once)"
        ]
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            str(h.STORE_SCHEMA_VERSION),
        )
        assert _bins(con) == want and want
        assert _bins(con, "value_bins") == values and values
        assert _tests(con) == tests and tests


def test_a_version_6_store_migrates_with_its_value_summaries(tmp_path):
    for i in range(6):
        _sweep(tmp_path, i)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path) as con:
        want, tests = _bins(con, "value_bins"), _tests(con)
        rtt = _bins(con)
        con.execute("DELETE FROM rtt_bins WHERE days = 92")  # version 6 kept no quarters
        con.execute("DROP TABLE value_bins")
        con.execute("DROP TABLE test_days")
        con.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    with pytest.raises(h.UserError, match="schema version 6"):
        h.connect(h.store_path(tmp_path), read_only=True)
    with h.opened(tmp_path) as con:  # opened to write: migrates
        assert _bins(con, "value_bins") == want and want
        assert _tests(con) == tests and tests
        assert _bins(con) == rtt  # the RTT summaries as they were, with their quarters
