"""Windows of the history store, and every statistic shown of them.

A window (1D, 1W, 1M, 1Y or all, up to its source's latest test; the window of the
same length just before each; "latest", each pair's newest test) is a merge of the
store's day summaries (orchestrator.history.store: `rtt_bins`, `value_bins`): its whole
quarters, months, weeks and days from the quarter, month, week and day rows, and the
day it starts in (and the day it ends in, for a window before another) from the tests
themselves, binned as the store bins them. Its statistics come from the merged
histogram by one rule (orchestrator.history.histogram): count, min, max and mean exact,
each percentile within 0.05 % (RTT) or 1 % (the one-value metrics) of the pooled
values' (exact where its bin holds one value).

`interregion matrix`, `history show` and the site all read window_table: the same
window gives the same numbers in each. Nothing is kept between calls.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from orchestrator.history import histogram
from orchestrator.history import metrics as v

if TYPE_CHECKING:
    import duckdb

# a CellTable's newest_us of a cell without a time (the smallest int64)
NO_TIME = -(2**63)
_EPOCH = datetime(1970, 1, 1)


@dataclass(frozen=True)
class Cell:
    """One directed pair of a window: its statistics (views.STATS order) and counts."""

    src: str
    dst: str
    distance_km: float | None
    tests: int
    samples: int
    quantiles: tuple[float | None, ...] | None
    newest: datetime | None  # the start of the pair's newest test in the window
    # what limited most of the window's tests (results.limiter; throughput rows only)
    limiter: str | None = None
    # loss: the window's pings sent and lost (metrics.PINGS_SENT_SQL; 0 for the others)
    pings_sent: int = 0
    pings_lost: int = 0

    def stat(self, stat: str) -> float | None:
        return v.stat_value(stat, self.samples, self.quantiles)

    def loss(self) -> dict[str, Any]:
        """The window's loss, lost / sent, with its Wilson interval (metrics.loss_fields)."""
        return v.loss_fields(self.pings_sent, self.pings_lost)


@dataclass
class CellTable:
    """A window's Cells as columns (the site's matrix reads 36 windows of 5,852 pairs):
    `pair` each row's pair number (the store's `pairs`, pair_names), in order; `stats`
    (rows x views.STATS), `tests`, `samples`, `newest_us` (the newest test's start,
    UNIX microseconds), `km` (the distance, NaN when unknown), `limiter` (one per
    row, None for none), `pings_sent` and `pings_lost` (loss's; 0 for the others)."""

    pair: Any
    tests: Any
    samples: Any
    stats: Any
    newest_us: Any
    km: Any
    limiter: list[str | None]
    pings_sent: Any
    pings_lost: Any

    def __len__(self) -> int:
        return len(self.pair)

    def cells(self, names: Mapping[int, tuple[str, str]]) -> list[Cell]:
        """The Cells, sorted by (src, dst); `names` pair_names."""
        times = {
            t: None if t == NO_TIME else _EPOCH + timedelta(microseconds=t)
            for t in set(self.newest_us.tolist())
        }
        kms = [None if math.isnan(x) else x for x in self.km.tolist()]
        cells = [
            Cell(*names[p], km, t, k, tuple(values), times[newest], lim, sent, lost)
            for p, km, t, k, newest, lim, values, sent, lost in zip(
                self.pair.tolist(), kms, self.tests.tolist(), self.samples.tolist(),
                self.newest_us.tolist(), self.limiter, self.stats.tolist(),
                self.pings_sent.tolist(), self.pings_lost.tolist(), strict=True,
            )
        ]  # fmt: skip
        return sorted(cells, key=lambda c: (c.src, c.dst))


def empty_table() -> CellTable:
    import numpy as np

    return _uncounted(
        np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, len(v.STATS)))
    )


def _uncounted(pairs: Any, samples: Any, stats: Any) -> CellTable:
    """A CellTable of statistics alone, the tests not counted (tests, pings 0, newest
    NO_TIME, km NaN, limiter None)."""
    import numpy as np

    none = np.zeros(len(pairs), dtype=np.int64)
    return CellTable(
        pairs, none, samples, stats, none + NO_TIME, none + np.nan, [None] * len(none), none, none
    )


def pair_names(con: duckdb.DuckDBPyConnection) -> dict[int, tuple[str, str]]:
    """Each pair number of the store's `pairs` with its (src, dst)."""
    return {r[0]: (r[1], r[2]) for r in con.execute("SELECT pair, src, dst FROM pairs").fetchall()}


def window_table(
    con: duckdb.DuckDBPyConnection,
    info: v.SourceInfo,
    metric_name: str,
    window: str,
    previous: bool = False,
    include_flagged: bool = False,
    pairs: Sequence[int] | None = None,
    stats_only: bool = False,
) -> CellTable:
    """Every directed pair of one source and window (of the `pairs` numbers given, all
    without) with its statistics. `window` is one of views.WINDOWS or "latest";
    `previous`: the window of the same length just before it (empty for "latest" and
    "all"). Tests whose flags invalidate the metric are left out unless
    `include_flagged`. `stats_only`: the pairs, samples and statistics alone (_uncounted):
    what the site's "change vs the previous window" reads, a fifth of its time."""
    m = v.metric(metric_name)
    if window == "latest":
        return empty_table() if previous else _latest(con, info.name, m, include_flagged, pairs)
    days = v.window_days(window)
    start, _end = v.window_bounds(info, window)
    if start is None or days is None:  # every test
        if previous:
            return empty_table()
        (first,) = con.execute(
            "SELECT min(started_utc) FROM measurements WHERE source = ?", [info.name]
        ).fetchone() or (None,)
        if first is None:
            return empty_table()
        a, b = first, None
    elif previous:
        a, b = start - timedelta(days=days), start
    else:
        a, b = start, None
    return _range(con, info.name, m, a, b, include_flagged, pairs, stats_only)


def window_cells(
    con: duckdb.DuckDBPyConnection,
    info: v.SourceInfo,
    metric_name: str,
    window: str,
    previous: bool = False,
    include_flagged: bool = False,
    pairs: Sequence[int] | None = None,
) -> list[Cell]:
    """window_table as Cells, sorted by (src, dst)."""
    table = window_table(con, info, metric_name, window, previous, include_flagged, pairs)
    return table.cells(pair_names(con)) if len(table) else []


def _value_sql(m: v.Metric) -> str:
    """A test's values, one per row: its samples unnested (RTT), or its one value."""
    return f"unnest({m.samples_sql})" if not m.one_value else m.run_sql


def whole_days(a: datetime, b: datetime | None) -> list[tuple[int, date, date | None]]:
    """The summary rows of the whole days after a's day and before b's (all after
    without b): (days, from, to) ranges of `day`, to excluded (None: open): the whole
    quarters as quarter rows, the whole months before and after them as month rows, the
    whole weeks before and after those as week rows, the days left as day rows. Each
    range a filter of its own, which DuckDB prunes by the column's zone maps (an OR of
    them it would not)."""
    return _cover(a.date() + timedelta(days=1), b and b.date(), (92, 31, 7))


def _cover(x: date, y: date | None, spans: Sequence[int]) -> list[tuple[int, date, date | None]]:
    """The days [x, y) (y None: open) as whole_days' ranges, none empty: the whole
    periods of spans[0] (quarters, months, weeks; the rest days), and the days before
    and after them by the shorter spans."""
    if not spans:
        return [(1, x, y)] if y is None or x < y else []
    start = v.period_start(x, spans[0])
    first = start if start == x else v.period_end(start, spans[0])
    last = None if y is None else v.period_start(y, spans[0])
    if last is not None and first >= last:  # no whole period
        return _cover(x, y, spans[1:])
    after = [] if last is None else _cover(last, y, spans[1:])
    return [*_cover(x, first, spans[1:]), (spans[0], first, last), *after]


def _edges(a: datetime, b: datetime | None) -> list[tuple[datetime, datetime | None]]:
    """The parts of [a, b) in the days it starts and ends inside (what whole_days
    leaves), each a range of its own."""
    first_end = datetime.combine(a.date() + timedelta(days=1), datetime.min.time(), a.tzinfo)
    out: list[tuple[datetime, datetime | None]] = [
        (a, first_end if b is None else min(b, first_end))
    ]
    if b is not None:
        last_start = max(first_end, datetime.combine(b.date(), datetime.min.time(), b.tzinfo))
        if last_start < b:
            out.append((last_start, b))
    return out


def _range(
    con: duckdb.DuckDBPyConnection,
    source: str,
    m: v.Metric,
    a: datetime,
    b: datetime | None,
    include_flagged: bool,
    pairs: Sequence[int] | None,
    stats_only: bool = False,
) -> CellTable:
    """The window of the tests starting in [a, b) (b None: from a on)."""
    valid = "" if include_flagged else f" AND {v.valid_sql(m.measure)}"
    # the numbers written out: a list parameter costs DuckDB a failed import per item
    chosen = "" if pairs is None else f" AND pair IN ({', '.join(str(int(p)) for p in pairs)})"
    tests = f"source = ? AND status = 'ok' AND {m.present_sql}{valid} AND started_utc >= ?"

    def pieces(summary: str, keys: list[Any], edge: str) -> tuple[str, list[Any]]:
        """The UNION of `summary`'s rows (matching source and `keys`) of each range of
        whole days and of `edge` ({within}: the filter) over the tests of each edge."""
        parts, params = [], []
        for span, since, until in whole_days(a, b):
            until_sql = " AND day < ?" if until else ""
            parts.append(f"{summary} AND days = {span} AND day >= ?{until_sql}{chosen}")
            params += [source, *keys, since, *([until] if until else [])]
        for since, until in _edges(a, b):
            parts.append(edge.format(within=tests + (" AND started_utc < ?" if until else "")))
            params += [source, since, *([until] if until else [])]
        return " UNION ALL ".join(parts), params

    table, keys = ("rtt_bins", []) if not m.one_value else ("value_bins", [m.name])
    which = " AND metric = ?" if keys else ""
    merged, params = pieces(
        f"SELECT pair, bin, n, lo, hi, total FROM {table} WHERE source = ?{which}{valid}",
        keys,
        f"SELECT p.pair, {histogram.bin_sql('x', m.one_value)} AS bin, 1 AS n, x AS lo, "
        f"x AS hi, {v.total_sql('x', m.total_scale)} AS total FROM (SELECT src, dst, "
        f"{_value_sql(m)} AS x FROM measurements WHERE {{within}}) r JOIN pairs p "
        f"ON r.src = p.src AND r.dst = p.dst WHERE x IS NOT NULL{chosen}",
    )
    found = con.execute(
        "SELECT pair, sum(n) AS n, min(lo) AS lo, max(hi) AS hi, "
        f"CAST(sum(total) AS BIGINT) AS total FROM ({merged}) GROUP BY pair, bin "
        "ORDER BY pair, bin",
        params,
    ).fetchnumpy()
    if stats_only:
        return _table(found, None, m.total_scale)
    # the tests: their counts, newest start and distance, and limiters, merged likewise
    sent, lost = _pings_sql(m)
    summed, summed_params = pieces(
        "SELECT pair, limiter, tests, newest, km, pings_sent, pings_lost FROM test_days "
        f"WHERE source = ? AND metric = ?{valid}",
        [m.name],
        "SELECT p.pair, coalesce(limiter, '') AS limiter, count(*) AS tests, "
        "max(started_utc) AS newest, max(distance_km) AS km, sum(sent) AS pings_sent, "
        "sum(lost) AS pings_lost FROM (SELECT src, dst, limiter, started_utc, distance_km, "
        f"{sent} AS sent, {lost} AS lost FROM measurements WHERE {{within}}) r JOIN pairs p "
        f"ON r.src = p.src AND r.dst = p.dst WHERE true{chosen} GROUP BY p.pair, limiter",
    )
    limiter = "map_from_entries(list((limiter, tests)))" if m.measure == "throughput" else "NULL"
    counted = con.execute(
        "SELECT pair, sum(tests) AS tests, max(km) AS km, epoch_us(max(newest)) AS newest, "
        f"{limiter} AS limiter, sum(pings_sent) AS pings_sent, sum(pings_lost) AS pings_lost "
        "FROM (SELECT pair, limiter, sum(tests) AS tests, max(newest) AS newest, max(km) AS "
        "km, sum(pings_sent) AS pings_sent, sum(pings_lost) AS pings_lost FROM "
        f"({summed}) GROUP BY pair, limiter) GROUP BY pair ORDER BY pair",
        summed_params,
    ).fetchnumpy()
    return _table(found, counted, m.total_scale)


def _pings_sql(m: v.Metric) -> tuple[str, str]:
    """A test's pings sent and lost as test_days sums them (0 unless loss, or unknown)."""
    if m.name != "loss":
        return "0", "0"
    return f"coalesce({v.PINGS_SENT_SQL}, 0)", f"coalesce({v.PINGS_LOST_SQL}, 0)"


def _latest(
    con: duckdb.DuckDBPyConnection,
    source: str,
    m: v.Metric,
    include_flagged: bool,
    pairs: Sequence[int] | None,
) -> CellTable:
    """Each pair's newest test alone: its values binned as the store bins them, in one
    query (so both counts and values are of the same test of a tie)."""
    where = f"source = ? AND status = 'ok' AND {m.present_sql}"
    if not include_flagged:
        where += f" AND {v.valid_sql(m.measure)}"
    params: list[Any] = [source]
    latest = con.execute(
        "SELECT max(started_utc) FROM measurements WHERE source = ?", [source]
    ).fetchone()
    # each pair's newest start by a per-pair max joined back, then one test per pair
    # among the few that start then (a window function over every test is seconds on a
    # year); when every pair has a test in the source's last day, both read that day only
    if latest and latest[0] is not None:
        recent = latest[0] - timedelta(days=1)
        if v.every_pair_since(con, where, params, recent):
            where += " AND started_utc >= ?"
            params.append(recent)
    chosen = "" if pairs is None else f" AND pair IN ({', '.join(str(int(p)) for p in pairs)})"
    sent, lost = _pings_sql(m)
    found = con.execute(
        "WITH t AS (SELECT * FROM (SELECT src, dst, distance_km, started_utc, limiter, "
        f"{sent} AS pings_sent, {lost} AS pings_lost, "
        f"{m.samples_sql} AS s FROM measurements m SEMI JOIN (SELECT src AS a, dst AS b, "
        f"max(started_utc) AS newest FROM measurements WHERE {where} GROUP BY src, dst) n "
        f"ON m.src = n.a AND m.dst = n.b AND m.started_utc = n.newest WHERE {where}) "
        "QUALIFY row_number() OVER (PARTITION BY src, dst ORDER BY started_utc DESC) = 1) "
        f"SELECT p.pair, {histogram.bin_sql('x', m.one_value)} AS bin, count(*) AS n, "
        "min(x) AS lo, "
        f"max(x) AS hi, CAST(sum({v.total_sql('x', m.total_scale)}) AS BIGINT) AS total, "
        "any_value(distance_km) AS km, "
        "epoch_us(any_value(started_utc)) AS newest, any_value(limiter) AS limiter, "
        "any_value(pings_sent) AS pings_sent, any_value(pings_lost) AS pings_lost "
        "FROM (SELECT *, unnest(s) AS x FROM t) r JOIN pairs p ON r.src = p.src AND "
        f"r.dst = p.dst WHERE x IS NOT NULL{chosen} GROUP BY p.pair, bin ORDER BY p.pair, bin",
        params * 2,
    ).fetchnumpy()
    import numpy as np

    firsts = _run_starts(np.asarray(found["pair"], dtype=np.int64))
    limiter = np.ma.filled(np.ma.asarray(found["limiter"], dtype=object), None)[firsts]
    columns = ("pair", "km", "newest", "pings_sent", "pings_lost")
    counted: dict[str, Any] = {k: np.asarray(found[k])[firsts] for k in columns}
    counted["tests"] = np.ones(len(firsts), dtype=np.int64)
    counted["limiter"] = [
        None if m.measure != "throughput" else {x: 1} if x else {} for x in limiter
    ]
    return _table(found, counted, m.total_scale)


def _mode(counts: Any) -> str | None:
    """The most frequent value of a histogram (DuckDB's; None, or a masked NULL, for
    none), the first by name of a tie (DuckDB's mode() picks among ties in an order that
    varies between runs); an empty name is none."""
    named = [kv for kv in counts.items() if kv[0]] if isinstance(counts, dict) else []
    if not named:
        return None
    return min(named, key=lambda kv: (-kv[1], kv[0]))[0]


def _run_starts(sorted_keys: Any) -> Any:
    """The index of the first row of each run of equal keys (numpy)."""
    import numpy as np

    if not len(sorted_keys):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))


def _table(found: Mapping[str, Any], counted: Mapping[str, Any] | None, scale: int) -> CellTable:
    """The CellTable of merged bins (`found`: pair, n, lo, hi, total (in 1 / `scale` of
    the unit: metrics.Metric.total_scale), in pair and value order) and of each pair's
    tests (`counted`: pair, tests, km, newest, limiter, pings_sent, pings_lost, in pair
    order): the pairs that have both (None: the bins' pairs, their tests not counted)."""
    import numpy as np

    n = np.asarray(found["n"], dtype=np.int64)
    if not len(n):
        return empty_table()
    bin_pair = np.asarray(found["pair"], dtype=np.int64)
    firsts = _run_starts(bin_pair)
    pairs = bin_pair[firsts]
    samples = np.add.reduceat(n, firsts)
    qs = histogram.quantiles(firsts, n, found["lo"], found["hi"], list(v.QUANTILES.values()))
    # the bins' sums added exactly (int64: a year of a pair's RTT is 1e13 ns), then scaled
    total = np.add.reduceat(np.asarray(found["total"], dtype=np.int64), firsts)
    mean = total / scale / samples
    stats = np.concatenate([qs, mean[:, None]], axis=1)  # views.STATS: the quantiles, mean
    if counted is None:
        return _uncounted(pairs, samples, stats)
    counted_pair = np.asarray(counted["pair"], dtype=np.int64)
    at = np.minimum(np.searchsorted(counted_pair, pairs), max(len(counted_pair) - 1, 0))
    has = counted_pair[at] == pairs if len(counted_pair) else np.zeros(len(pairs), bool)
    groups, rows = np.flatnonzero(has), at[has]
    # a metric other than throughput has no limiter: a NULL column, not looked at per row
    named = counted["limiter"]
    if isinstance(named, np.ma.MaskedArray) and np.ma.getmaskarray(named).all():
        limiters: list[str | None] = [None] * len(rows)
    else:
        limiters = [_mode(named[r]) for r in rows.tolist()]
    return CellTable(
        pair=pairs[groups],
        tests=np.asarray(counted["tests"], dtype=np.int64)[rows],
        samples=samples[groups],
        stats=stats[groups],
        newest_us=np.asarray(counted["newest"], dtype=np.int64)[rows],
        km=np.ma.filled(np.ma.asarray(counted["km"], dtype=np.float64), np.nan)[rows],
        limiter=limiters,
        pings_sent=_counts(counted["pings_sent"])[rows],
        pings_lost=_counts(counted["pings_lost"])[rows],
    )


def _counts(x: Any) -> Any:
    """A summed count column as int64 (a NULL sum, of no rows, as 0)."""
    import numpy as np

    return np.ma.filled(np.ma.asarray(x, dtype=np.float64), 0.0).astype(np.int64)
