"""Windows as merges of the day summaries: every window of every metric against the
pooled values of its tests (DuckDB's quantile_cont, computed here from the rows):
counts, newest test, min, max and mean exact, percentiles within the histogram's
bound, and to the bit where each bin holds one value; the same numbers in `matrix`,
`history show` and the site's tables."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from history_support import make_sweep, sweep_id_at

from orchestrator.history import histogram, metrics, windows
from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.results import files as store

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"
QS = list(metrics.QUANTILES.values())


def _pooled(con, info, metric, window, previous, include_flagged):
    """{(src, dst): (tests, newest, samples, [quantiles..., mean], pings sent, lost)} of
    the window's tests, from the rows themselves (the rule's exact answer; pings for
    loss only)."""
    m = metrics.METRICS[metric]
    days = metrics.window_days(window)
    start, _end = v.window_bounds(info, window)
    where = f"source = ? AND status = 'ok' AND {m.present_sql}"
    params: list = [info.name]
    if not include_flagged:
        where += f" AND {v.valid_sql(m.measure)}"
    if previous:
        if start is None or days is None:
            return {}
        where += " AND started_utc >= ? AND started_utc < ?"
        params += [start - timedelta(days=days), start]
    elif start is not None:
        where += " AND started_utc >= ?"
        params.append(start)
    x = m.run_sql if m.one_value else f"unnest({m.samples_sql})"
    rows = con.execute(
        f"WITH t AS (SELECT src, dst, started_utc, {x} AS x FROM measurements WHERE {where}) "
        "SELECT src, dst, (SELECT count(DISTINCT started_utc) FROM t u WHERE u.src = t.src "
        "AND u.dst = t.dst), max(started_utc), count(x), "
        f"list_append(quantile_cont(x, {QS}), avg(x)) FROM t WHERE x IS NOT NULL "
        "GROUP BY src, dst",
        params,
    ).fetchall()
    pings = {}
    if metric == "loss":  # each test's pings: its replies over (1 - loss), by hand
        for src, dst, loss, samples in con.execute(
            f"SELECT src, dst, ping_loss_pct, rtt_samples_ms FROM measurements WHERE {where}",
            params,
        ).fetchall():
            sent = round(len(samples) / (1 - loss / 100))
            was = pings.get((src, dst), (0, 0))
            pings[src, dst] = (was[0] + sent, was[1] + sent - len(samples))
    return {(r[0], r[1]): (r[2], r[3], r[4], r[5], *pings.get((r[0], r[1]), (0, 0))) for r in rows}


def _same(con, metrics, windows_, flagged=(False, True)):
    """window_cells against _pooled; returns the cells compared and those exact."""
    (info,) = v.source_infos(con).values()
    compared = exact = 0
    for metric in metrics:
        for window in windows_:
            for previous in (False, True):
                for include in flagged:
                    want = _pooled(con, info, metric, window, previous, include)
                    cells = windows.window_cells(con, info, metric, window, previous, include)
                    assert {(c.src, c.dst) for c in cells} == set(want), (metric, window)
                    for c in cells:
                        tests, newest, samples, qs, sent, lost = want[c.src, c.dst]
                        assert (c.tests, c.newest, c.samples) == (tests, newest, samples)
                        assert (c.pings_sent, c.pings_lost) == (sent, lost), (metric, window)
                        got = c.quantiles
                        assert got is not None
                        assert (got[0], got[-2]) == (qs[0], qs[-2])  # min, max
                        assert got[-1] == pytest.approx(qs[-1], rel=1e-12)  # mean
                        bound = histogram.ERROR_BOUND
                        if v.metric(metric).one_value:
                            bound = histogram.VALUE_ERROR_BOUND
                        for a, b in zip(got[:-1], qs[:-1], strict=True):
                            assert abs(a - b) <= bound * abs(b) + 1e-12
                        compared += 1
                        exact += list(got[:-1]) == pytest.approx(qs[:-1], rel=1e-12, abs=1e-12)
    return compared, exact


def _varied_store(tmp_path):
    """12 sweeps a day apart, A <-> B and A -> C, their loss, jitter and throughput
    varying per sweep and pair; one test with a throughput flag (its receiver counted
    more than its sender sent), one sweep's A <-> B flagged asymmetric (an RTT flag)."""
    c = "aws:eu-west-1"
    for day in range(12):
        t = T0 + timedelta(days=day)
        back = 30.0 if day == 5 else 10.5
        folder = make_sweep(tmp_path, sweep_id_at(t, f"{day:04x}"),
                            {(A, B): [10.0 + day % 3] * 20, (B, A): [back] * 20,
                             (A, c): [20.0 + day] * 20}, started=t)  # fmt: skip
        rows = store.read_rows(folder / store.MEASUREMENTS_FILE)
        for k, row in enumerate(rows):
            row["ping_loss_pct"] = f"{(day * 7 + k * 3) % 5}"
            row["rtt_mdev_ms"] = f"{0.1 + ((day + k) % 4) * 0.37:.3f}"
            row["throughput_bps"] = f"{(5 + (day * 3 + k) % 7) * 1e8:.0f}"
            if day == 7 and k == 0:
                row["throughput_sender_bps"] = f"{float(row['throughput_bps']) / 1.02:.0f}"
        store.write_rows(folder, rows, asked_duration_s=5)
    h.ingest_all(tmp_path)


@pytest.mark.slow  # a store of months of runs
def test_every_window_of_every_metric_is_the_rule_applied_to_its_tests(tmp_path):
    _varied_store(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        compared, exact = _same(con, ["rtt", *h.VALUE_METRICS], ("all", "1D", "1W", "1M", "1Y"))
        lost = con.execute(
            "SELECT sum(pings_lost) FROM test_days WHERE days = 1 AND metric = 'loss'"
        ).fetchone()
    assert lost is not None and lost[0] > 0  # some tests lost pings: the sums are tested
    assert compared > 100
    # loss, jitter and throughput take a few values each: one value a bin, exact
    assert exact == compared


def _rtt_sweep(results, i, hours):
    t = T0 + timedelta(hours=hours * i)
    samples = {
        (A, B): [150.0 + 0.137 * (k % 7) + 0.01 * i for k in range(20)],
        (B, A): [148.0 + 0.3 * (k % 5) for k in range(20)],
        (A, C): [70.0 + 0.5 * (i % 4)] * 20,
    }
    return make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t)


@pytest.mark.slow  # a store of months of runs
def test_windows_from_days_weeks_and_months_and_the_days_at_their_ends(tmp_path):
    # 45 days of sweeps every 13 h: the windows start inside a day, whole weeks and days
    # between (1M and the month before it: both ends inside a day; 1M: a month row)
    for i in range(83):
        _rtt_sweep(tmp_path, i, 13)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        compared, exact = _same(con, ["rtt", "jitter"], ("1D", "1W", "1M", "1Y"), (False,))
    assert compared > 20 and exact < compared  # some RTT bins hold several values


@pytest.mark.slow  # a store of months of runs
def test_a_year_and_the_year_before_from_quarter_and_month_rows(tmp_path):
    # 13 months of a sweep every 97 h: 1Y reads whole quarters and months, and the year
    # before it ends inside a month, with whole months, weeks and days before
    for i in range(100):
        _rtt_sweep(tmp_path, i, 97)
    h.ingest_all(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (info,) = v.source_infos(con).values()
        start, _ = v.window_bounds(info, "1Y")
        assert start is not None
        assert 92 in {span for span, _a, _b in windows.whole_days(start, None)}
        assert windows.window_cells(con, info, "rtt", "1Y", previous=True)
        assert _same(con, ["rtt", "loss"], ("1M", "1Y"), (False,))[0] > 6


def test_a_windows_statistics_alone_are_those_of_its_whole_table(tmp_path):
    # what the site's "change vs the previous window" reads: the same pairs, samples and
    # statistics, the tests not counted
    _varied_store(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (info,) = v.source_infos(con).values()
        for metric in ("rtt", "loss", "jitter", "throughput"):
            for window, previous in (("1D", True), ("1W", False), ("1W", True), ("all", False)):
                whole = windows.window_table(con, info, metric, window, previous)
                alone = windows.window_table(con, info, metric, window, previous, stats_only=True)
                assert len(whole) == len(alone) > 0
                assert alone.pair.tolist() == whole.pair.tolist()
                assert alone.samples.tolist() == whole.samples.tolist()
                assert alone.stats.tolist() == whole.stats.tolist()
                assert alone.tests.tolist() == [0] * len(alone)
                assert set(alone.newest_us.tolist()) == {windows.NO_TIME}


def test_matrix_and_history_show_give_the_windows_numbers(tmp_path):
    _varied_store(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (info,) = v.source_infos(con).values()
        for metric in ("rtt", "jitter", "throughput"):
            cells = {(c.src, c.dst): c for c in windows.window_cells(con, info, metric, "1W")}
            for stat in ("p50", "p90", "mean", "max"):
                (mx,) = v.matrix(con, metric, stat, "1W")["matrices"]
                assert {(x["src"], x["dst"]): x["value"] for x in mx["cells"]} == {
                    k: c.stat(stat) for k, c in cells.items()
                }
            (s,) = v.pair_history(con, (A, B), metric, "1W")["sources"]
            assert [s[x] for x in v.STATS] == [cells[A, B].stat(x) for x in v.STATS]
            assert (s["samples"], s["tests"]) == (cells[A, B].samples, cells[A, B].tests)


def test_loss_is_quoted_with_its_wilson_interval_in_matrix_and_history_show(tmp_path):
    from orchestrator.core.stats import wilson

    _varied_store(tmp_path)
    with h.opened(tmp_path, read_only=True) as con:
        (info,) = v.source_infos(con).values()
        for window in ("1W", "all", "latest"):
            cells = {(c.src, c.dst): c for c in windows.window_cells(con, info, "loss", window)}
            (mx,) = v.matrix(con, "loss", "p50", window)["matrices"]
            for x in mx["cells"]:
                c = cells[x["src"], x["dst"]]
                assert c.pings_sent >= 20 * c.tests and c.pings_lost <= c.pings_sent
                low, high = wilson(c.pings_lost, c.pings_sent)
                assert x["loss_pct"] == pytest.approx(100 * c.pings_lost / c.pings_sent)
                assert x["loss_low_pct"] <= x["loss_pct"] <= x["loss_high_pct"]
                assert (x["loss_low_pct"], x["loss_high_pct"]) == (
                    pytest.approx(100 * low, abs=1e-6),
                    pytest.approx(100 * high, abs=1e-6),
                )
            # the newest test alone: one test of 20 replies, its loss ping's
            if window == "latest":
                newest = con.execute(
                    "SELECT ping_loss_pct FROM measurements WHERE src = ? AND dst = ? "
                    "ORDER BY started_utc DESC LIMIT 1", [A, B]
                ).fetchone()[0]  # fmt: skip
                sent = round(20 / (1 - newest / 100))
                assert (cells[A, B].pings_sent, cells[A, B].pings_lost) == (sent, sent - 20)
        rows = v.matrix_csv_rows(v.matrix(con, "loss", "p50", "1W"))
        assert all(float(r["loss_low_pct"]) <= float(r["loss_high_pct"]) for r in rows)
        assert all(
            r["loss_pct"] == "" for r in v.matrix_csv_rows(v.matrix(con, "rtt", "p50", "1W"))
        )
        doc = v.pair_history(con, (A, B), "loss", "1W")
        (s,) = doc["sources"]
        c = cells_1w = {(c.src, c.dst): c for c in windows.window_cells(con, info, "loss", "1W")}
        assert (s["pings_sent"], s["pings_lost"]) == (c[A, B].pings_sent, c[A, B].pings_lost)
        assert sum(r["pings_sent"] for r in s["runs"]) == cells_1w[A, B].pings_sent
        for run in s["runs"]:  # each test's own loss, ping's figure, inside its interval
            assert run["loss_low_pct"] <= run["value"] <= run["loss_high_pct"]
            assert run["loss_pct"] == pytest.approx(run["value"], abs=2.5)  # sent rounded
        assert "Wilson" in doc["loss_rule"]


def test_the_cli_prints_loss_with_its_interval(tmp_path):
    from click.testing import CliRunner

    from orchestrator.cli import main

    _varied_store(tmp_path)
    runner = CliRunner()
    args = ["--metric", "loss", "--window", "all", "--results", str(tmp_path)]
    text = runner.invoke(main, ["matrix", *args])
    assert text.exit_code == 0, text.output
    assert "pings lost / sent (%) with its Wilson 95 % interval (low-high)" in text.output
    with h.opened(tmp_path, read_only=True) as con:
        (mx,) = v.matrix(con, "loss", "p50", "all")["matrices"]
    cell = next(c for c in mx["cells"] if (c["src"], c["dst"]) == (A, B))
    shown = f"{cell['loss_pct']:.2f} ({cell['loss_low_pct']:.2f}-{cell['loss_high_pct']:.2f})"
    assert shown in text.output
    csv_text = runner.invoke(main, ["matrix", *args, "--csv"]).output
    assert csv_text.splitlines()[0].endswith(
        "pings_sent,pings_lost,loss_pct,loss_low_pct,loss_high_pct"
    )
    shown = runner.invoke(main, ["history", "show", "--pairs", f"{A}/{B}", *args])
    assert shown.exit_code == 0, shown.output
    assert f"window's pings lost / sent: {cell['loss_pct']:.2f} % (95 %: " in shown.output
    assert f"{cell['pings_lost']:,} of {cell['pings_sent']:,} pings)" in shown.output
    assert re.search(r"\(95 %: 0\.00-1[0-9]\.[0-9]{2} % of 2[01] pings\)", shown.output)


def test_a_bins_sum_is_the_same_in_any_order_its_rows_are_added():
    """DuckDB's threads add a bin's rows in an order that varies between runs: a bin's
    sum (a window's mean) is of integers (metrics.total_sql), added exactly, so two builds
    over one store show the same mean."""
    import itertools

    import duckdb

    con = duckdb.connect()
    exact = metrics.total_sql("x", metrics.METRICS["rtt"].total_scale)
    query = f"SELECT sum(x), sum({exact}) FROM (SELECT unnest(?) AS x)"
    sums = [
        con.execute(query, [list(o)]).fetchone() for o in itertools.permutations([0.1, 0.2, 0.3])
    ]
    assert len({plain for plain, _ in sums}) == 2  # in double, the order shows
    assert {int(total) for _, total in sums} == {600_000}
