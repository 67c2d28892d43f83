"""Views of the history store: one pair's series, and the From x To matrix.

DuckDB computes the figures (medians, percentiles) in SQL. A window's percentiles are
those of the POOLED samples of every test in the window (each test's ping samples,
`rtt_samples_ms`), never percentiles of per-test percentiles; a test without samples
(an imported row) counts as one sample, its p50 or mean. Throughput has one value per
test. Every statistic (STATS: min, p10, p25, p50, p75, p90, p99, max, mean) carries its
sample count; a tail percentile q from fewer than 10 / min(q, 1 - q) samples (ten
samples beyond it: p25 and p75 need 40, p10 and p90 100, p99 1,000) is not estimated:
None, printed as "—", with the count and the rule beside it (PERCENTILE_RULE). The
median, min, max and mean are shown from one sample on. Sources are never mixed: each
view is of one source and says which.
A test is left out of a metric's view when one of its flags invalidates that metric
(orchestrator.results.flags: RTT, loss and jitter are the ping's figures, `rtt`;
throughput is iperf3's), unless `include_flagged`; each view counts the tests it left
out (`flagged_tests`). A throughput flag leaves the test's RTT in.

A window (1D, 1W, 1M) ends at the latest test of its source, so a dated import has
windows too; `all` takes everything.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from orchestrator.core.errors import UserError
from orchestrator.model.catalog import Catalog, region_order
from orchestrator.results import flags

if TYPE_CHECKING:
    import duckdb

WINDOWS: dict[str, int | None] = {"1D": 1, "1W": 7, "1M": 30, "1Y": 365, "all": None}
# a single_stream row: its measure, or a row from before the measure column
SINGLE_STREAM_SQL = "coalesce(measure, 'single_stream') = 'single_stream'"


def valid_sql(measure: str, also: Sequence[str] = ()) -> str:
    """SQL true for the rows whose flags leave `measure` valid (flags.rtt_invalid and
    flags.throughput_invalid in SQL): no flags (the checks passed, or the row predates
    the column), or only flags that do not invalidate it, or that are in `also` (a name
    not in flags.FLAGS invalidates every measure)."""
    allowed = ", ".join(f"'{f}'" for f in ("", *flags.harmless(measure), *also))
    return f"(coalesce(flags, '') = '' OR list_has_all([{allowed}], string_split(flags, ';')))"


# flags that leave a value in change detection though the views leave it out
DETECTION_KEEPS = (flags.ASYMMETRIC, flags.FEW_SAMPLES)

# every statistic a view computes, and the quantile each percentile is
QUANTILES = {"min": 0.0, "p10": 0.10, "p25": 0.25, "p50": 0.50, "p75": 0.75, "p90": 0.90,
             "p99": 0.99, "max": 1.0}  # fmt: skip
STATS = (*QUANTILES, "mean")
# the site's matrix carries these, each in its own file (orchestrator.site.history_pages)
SITE_STATS = STATS
BEYOND = 10  # samples a tail percentile needs beyond it
PERCENTILE_RULE = (
    f"a percentile q needs {BEYOND} / min(q, 1 - q) samples (p25, p75: 40; p10, p90: 100; "
    "p99: 1,000); below that it is null, with its count"
)


@functools.cache  # asked for every cell of every view (a year's matrix: 220,000 times)
def min_samples(stat: str) -> int:
    """Samples `stat` needs to be shown: 10 / min(q, 1 - q) for a tail percentile, else 1."""
    q = QUANTILES.get(stat)
    if q is None or q in (0.0, 0.5, 1.0):
        return 1
    return math.ceil(BEYOND / min(q, 1.0 - q) - 1e-9)


MATRIX_FORMAT = "interregion.matrix"
# 2: include_flagged, each matrix's flagged_tests, the percentile rule, each cell's
# value_n (the samples its value comes from), stats min..max and mean
MATRIX_VERSION = 2
PAIR_FORMAT = "interregion.pair-history"
PAIR_VERSION = 2  # 2: format and version, every statistic with its count (p99, p99_n)


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    run_sql: str  # one value per test: what change detection and a series use
    samples_sql: str  # the test's samples, pooled into a window's percentiles
    # run_sql IS NOT NULL, without computing it (a median per row is seconds on a year)
    present_sql: str
    measure: str  # what a flag must invalidate to leave a test out (flags.MEASURES)
    # one sample per test (samples_sql is [run_sql] on the present rows): a window's
    # statistics are those of run_sql, without unnesting a list per test
    one_value: bool = False


METRICS = {
    "rtt": Metric(
        "rtt",
        "ms",
        "CASE WHEN len(rtt_samples_ms) > 0 THEN list_median(rtt_samples_ms) "
        "ELSE coalesce(rtt_p50_ms, rtt_avg_ms) END",
        "CASE WHEN len(rtt_samples_ms) > 0 THEN rtt_samples_ms "
        "ELSE [coalesce(rtt_p50_ms, rtt_avg_ms)] END",
        "(len(rtt_samples_ms) > 0 OR coalesce(rtt_p50_ms, rtt_avg_ms) IS NOT NULL)",
        flags.RTT,
    ),
    # throughput is the single_stream measure's; capacity the capacity measure's: never
    # one aggregate (a row from before the measure column is single_stream)
    "throughput": Metric(
        "throughput",
        "bit/s",
        f"CASE WHEN {SINGLE_STREAM_SQL} THEN throughput_bps END",
        "[throughput_bps]",
        f"throughput_bps IS NOT NULL AND {SINGLE_STREAM_SQL}",
        flags.THROUGHPUT,
        one_value=True,
    ),
    "capacity": Metric(
        "capacity",
        "bit/s",
        "CASE WHEN measure = 'capacity' THEN throughput_bps END",
        "[throughput_bps]",
        "throughput_bps IS NOT NULL AND measure = 'capacity'",
        flags.THROUGHPUT,
        one_value=True,
    ),
    # one value per test (ping's own summary): a window pools the tests' values
    "loss": Metric(
        "loss",
        "%",
        "ping_loss_pct",
        "[ping_loss_pct]",
        "ping_loss_pct IS NOT NULL",
        flags.RTT,
        one_value=True,
    ),
    "jitter": Metric(
        "jitter",
        "ms",
        "rtt_mdev_ms",
        "[rtt_mdev_ms]",
        "rtt_mdev_ms IS NOT NULL",
        flags.RTT,
        one_value=True,
    ),
}


def metric(name: str) -> Metric:
    if name not in METRICS:
        raise UserError(f"--metric {name}: one of {', '.join(METRICS)}")
    return METRICS[name]


def window_days(window: str) -> int | None:
    if window not in WINDOWS:
        raise UserError(f"--window {window}: one of {', '.join(WINDOWS)}")
    return WINDOWS[window]


def check_window(window: str) -> None:
    """A matrix's window: one of WINDOWS, or "latest" (each pair's newest test)."""
    if window != "latest":
        window_days(window)


def parse_pairs(text: str) -> list[tuple[str, str]]:
    """`aws:us-east-1/gcp:europe-west1,...` -> directed (src, dst) pairs."""
    pairs = []
    for item in (p.strip() for p in text.split(",")):
        src, sep, dst = item.partition("/")
        if not sep or ":" not in src or ":" not in dst:
            raise UserError(
                f"--pairs '{item}': give a directed pair as SRC/DST, "
                "e.g. aws:us-east-1/gcp:europe-west1"
            )
        pairs.append((src.strip(), dst.strip()))
    return pairs


@dataclass(frozen=True)
class SourceInfo:
    name: str
    label: str
    emulated: bool
    latest: datetime | None


def source_infos(con: duckdb.DuckDBPyConnection) -> dict[str, SourceInfo]:
    rows = con.execute(
        "SELECT s.source, any_value(s.label), bool_or(s.emulated), "
        "(SELECT max(started_utc) FROM measurements m WHERE m.source = s.source) "
        "FROM sweeps s GROUP BY s.source ORDER BY s.source"
    ).fetchall()
    return {r[0]: SourceInfo(r[0], r[1] or r[0], bool(r[2]), r[3]) for r in rows}


def chosen_sources(infos: dict[str, SourceInfo], wanted: Sequence[str] = ()) -> list[SourceInfo]:
    if not infos:
        raise UserError("the history store is empty: run 'interregion history ingest --all'")
    unknown = [s for s in wanted if s not in infos]
    if unknown:
        raise UserError(f"--source {unknown[0]}: not in the store (sources: {', '.join(infos)})")
    return [infos[s] for s in wanted] if wanted else list(infos.values())


def window_bounds(info: SourceInfo, window: str) -> tuple[datetime | None, datetime | None]:
    """(start, end) of a window; "latest" has no start (each pair's newest test)."""
    days = None if window == "latest" else window_days(window)
    if info.latest is None or days is None:
        return None, info.latest
    return info.latest - timedelta(days=days), info.latest


def _stat_value(stat: str, samples: int, quantiles: Sequence[float | None] | None) -> float | None:
    """`stat` of a window from its quantiles (in STATS order), None when there are none
    or too few samples for it (min_samples)."""
    if quantiles is None or samples < min_samples(stat):
        return None
    value = quantiles[STATS.index(stat)]
    return None if value is None else float(value)


def stat_fields(samples: int, quantiles: Sequence[float] | None) -> dict[str, Any]:
    """Every statistic with its sample count: {"p99": None, "p99_n": 60, ...}."""
    out: dict[str, Any] = {}
    for stat in STATS:
        out[stat] = _stat_value(stat, samples, quantiles)
        out[f"{stat}_n"] = samples
    return out


# the SQL of a window's statistics over pooled samples x, in STATS order
_STATS_SQL = f"list_append(quantile_cont(x, {list(QUANTILES.values())}), avg(x))"


def _stats_sql(stats: Sequence[str] | None) -> str:
    """The SQL of `stats` over pooled samples x, a list in the order of _stats_order(stats):
    one quantile_cont of the percentiles, then min, max and mean as min(x), max(x) and
    avg(x) (cheaper than quantiles 0 and 1); all of STATS without (as one quantile_cont
    of eight and the mean)."""
    if stats is None:
        return _STATS_SQL
    qs = [QUANTILES[s] for s in _stats_order(stats) if s not in _PLAIN_SQL]
    parts = [f"quantile_cont(x, {qs})"] if qs else []
    plain = [_PLAIN_SQL[s] for s in _stats_order(stats) if s in _PLAIN_SQL]
    if plain:
        parts.append(f"[{', '.join(plain)}]")
    if not parts:
        return "[]::DOUBLE[]"
    return parts[0] if len(parts) == 1 else f"list_concat({', '.join(parts)})"


# the statistics _stats_sql computes with an aggregate of their own
_PLAIN_SQL = {"min": "min(x)", "max": "max(x)", "mean": "avg(x)"}


def _stats_order(stats: Sequence[str]) -> list[str]:
    """`stats` in the order _stats_sql gives them: the percentiles, then min, max, mean."""
    return [s for s in stats if s not in _PLAIN_SQL] + [s for s in _PLAIN_SQL if s in stats]


@functools.cache  # asked for every cell of every view
def _stats_positions(stats: tuple[str, ...]) -> tuple[int, ...]:
    """Where each value _stats_sql(stats) gives goes among STATS."""
    return tuple(STATS.index(s) for s in _stats_order(stats))


def _in_stats_order(
    found: Sequence[float] | None, stats: Sequence[str] | None
) -> tuple[float | None, ...] | None:
    """The values of `stats` (all of STATS without) as a Cell's quantiles, None elsewhere."""
    if not found:
        return None
    if stats is None:
        return tuple(found)
    values: list[float | None] = [None] * len(STATS)
    for at, x in zip(_stats_positions(tuple(stats)), found, strict=True):
        values[at] = x
    return tuple(values)


def iso_utc(t: datetime | None) -> str | None:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z" if t else None


# ---- one pair -------------------------------------------------------------------------


def pair_history(
    con: duckdb.DuckDBPyConnection,
    pair: tuple[str, str],
    metric_name: str = "rtt",
    window: str = "all",
    sources: Sequence[str] = (),
    detected: Any = None,
    include_flagged: bool = False,
) -> dict[str, Any]:
    """One directed pair's series and its window percentiles, per source; with `detected`
    (a changes.Detection), its scale and smallest detectable change."""
    m = metric(metric_name)
    src, dst = pair
    out = []
    for info in chosen_sources(source_infos(con), sources):
        start, _end = window_bounds(info, window)
        where = "source = ? AND src = ? AND dst = ? AND status = 'ok'"
        params: list[Any] = [info.name, src, dst]
        if start is not None:
            where += " AND started_utc >= ?"
            params.append(start)
        flagged = _flagged_tests(con, f"{where} AND {m.present_sql}", params, m, include_flagged)
        if not include_flagged:
            where += f" AND {valid_sql(m.measure)}"
        # one scan of the store: the CTE, read twice, is materialized once
        found = con.execute(
            f"WITH t AS (SELECT started_utc, sweep_id, fingerprint, {m.run_sql} AS v, "
            f"{m.samples_sql} AS s FROM measurements WHERE {where}) "
            "SELECT (SELECT list((started_utc, sweep_id, fingerprint, v, len(s)) "
            "ORDER BY started_utc) FROM t WHERE v IS NOT NULL), "
            f"(SELECT (count(x), {_STATS_SQL}) FROM "
            "(SELECT unnest(s) AS x FROM t WHERE v IS NOT NULL) WHERE x IS NOT NULL)",
            params,
        ).fetchone()
        runs, pooled = found if found else (None, None)
        if not runs:
            continue
        n, qs = pooled or (0, None)
        out.append(
            {
                "source": info.name,
                "label": info.label,
                "emulated": info.emulated,
                "window_start_utc": iso_utc(start),
                "window_end_utc": iso_utc(info.latest),
                "samples": int(n),
                "tests": len(runs),
                "flagged_tests": flagged,
                **stat_fields(int(n), qs),
                **(detectable(detected, info.name, m.name, src, dst) if detected else {}),
                "runs": [
                    {
                        "started_utc": iso_utc(t),
                        "sweep_id": sid,
                        "fingerprint": fp,
                        "value": float(v),
                        "samples": int(k),
                    }
                    for t, sid, fp, v, k in runs
                ],
            }
        )
    return {"format": PAIR_FORMAT, "version": PAIR_VERSION, "src": src, "dst": dst,
            "metric": m.name, "unit": m.unit, "window": window,
            "percentile_rule": PERCENTILE_RULE, "sources": out}  # fmt: skip


# ---- what change detection can see -----------------------------------------------------

CHANGE_RUNS = 56  # `interregion changes` and the site: each source's latest sweeps
DETECTABLE = "detectable"  # the matrix's metric of each pair's smallest detectable change


def detectable(
    found: Any, source: str, metric_name: str, src: str, dst: str
) -> dict[str, float | None]:
    """A directed pair's change-detection scale and the change it confirms within 3 runs
    with 95 % probability: ms for RTT, a ratio (0.2 = 20 %) for throughput; None before
    it has enough comparable runs. `found` is a changes.Detection."""
    from orchestrator.history import changes as ch

    scales = [
        (k, s)
        for k, s in found.scales.items()
        if (k.source, k.metric, k.src, k.dst) == (source, metric_name, src, dst)
    ]
    if not scales:
        return {"scale": None, "smallest_detectable_change": None}
    key, scale = scales[-1]
    p = found.params
    calibrated = found.calibrations.get((key.source, key.backend, key.metric))
    if p.calibrate and calibrated is not None:  # the k in force
        p = replace(p, k1=calibrated.k1, k2=calibrated.k2)
    change = ch.smallest_change(scale, metric_name, p)
    if metric_name == "throughput":
        return {"scale": round(math.expm1(scale), 4),
                "smallest_detectable_change": round(math.expm1(change), 4)}  # fmt: skip
    return {"scale": round(scale, 3), "smallest_detectable_change": round(change, 2)}


def region_groups() -> dict[str, tuple[str, ...]]:
    """Each catalog region's groups for the region roll-up: its continent and its cloud."""
    from orchestrator.history.continents import continent
    from orchestrator.model.catalog import load_catalog

    out = {}
    for r in load_catalog().regions:
        where = continent(r.country)
        out[r.key] = (*((f"continent:{where}",) if where else ()), f"cloud:{r.cloud}")
    return out


def detection(con: duckdb.DuckDBPyConnection, sources: Sequence[str] = ()) -> Any:
    """What the store judged over each source's latest CHANGE_RUNS sweeps (as
    `interregion changes`): orchestrator.history.judgments.detection."""
    from orchestrator.history import judgments

    return judgments.detection(con, sources, last_runs=CHANGE_RUNS)


def detectable_matrix(
    con: duckdb.DuckDBPyConnection, sources: Sequence[str] = (), keep: PairKeep | None = None
) -> dict[str, Any]:
    """The matrix of each directed pair's smallest detectable RTT change (ms), from change
    detection over the latest runs; same shape as matrix()."""
    found = detection(con, sources)
    matrices = []
    for info in chosen_sources(source_infos(con), sources):
        keys = sorted(
            {(k.src, k.dst) for k in found.scales if k.source == info.name and k.metric == "rtt"}
        )
        cells: list[dict[str, Any]] = []
        for src, dst in keys:
            if keep is not None and not keep(src, dst, None):
                continue
            doc = detectable(found, info.name, "rtt", src, dst)
            cells.append({"src": src, "dst": dst, "value": doc["smallest_detectable_change"],
                          "scale": doc["scale"], "samples": None, "tests": None,
                          "distance_km": None})  # fmt: skip
        matrices.append(
            {
                "source": info.name,
                "label": info.label,
                "emulated": info.emulated,
                "window_start_utc": None,
                "window_end_utc": iso_utc(info.latest),
                "regions": sorted({c["src"] for c in cells} | {c["dst"] for c in cells}),
                "cells": cells,
            }
        )
    return {"format": MATRIX_FORMAT, "version": MATRIX_VERSION, "metric": DETECTABLE,
            "unit": "ms", "stat": "p95 within 3 runs", "window": "latest runs",
            "matrices": matrices}  # fmt: skip


# ---- the matrix -----------------------------------------------------------------------

# The site's windows: "latest" is each pair's newest test, the others as WINDOWS.
SITE_WINDOWS = ("latest", "1D", "1W", "1M", "1Y")


@dataclass(frozen=True)
class Cell:
    """One directed pair of a window: its pooled statistics (STATS order) and counts."""

    src: str
    dst: str
    distance_km: float | None
    tests: int
    samples: int
    # None where not computed (the site's kept matrix windows: SITE_STATS alone)
    quantiles: tuple[float | None, ...] | None
    newest: datetime | None  # the start of the pair's newest test in the window
    # what limited most of the window's tests (results.limiter; throughput rows only)
    limiter: str | None = None

    def stat(self, stat: str) -> float | None:
        return _stat_value(stat, self.samples, self.quantiles)


# a CellTable's newest_us of a cell without a time (the smallest int64)
NO_TIME = -(2**63)


@dataclass
class CellTable:
    """A window's Cells as columns (the site's matrix reads 36 windows of 5,852 pairs):
    `pair` each row's pair number (the store's `pairs`, pair_names), `stats` (rows x
    STATS, NaN where not computed), `tests`, `samples`, `newest_us` (the newest test's
    start, UNIX microseconds), `limiter` (None, or one per row) and `km` (None, or each
    row's distance, NaN when unknown)."""

    pair: Any
    tests: Any
    samples: Any
    stats: Any
    newest_us: Any
    limiter: list[str | None] | None = None
    km: Any = None

    def __len__(self) -> int:
        return len(self.pair)

    def cells(self, names: Mapping[int, tuple[str, str]]) -> list[Cell]:
        """The Cells, sorted by (src, dst); `names` pair_names."""
        import numpy as np

        epoch = datetime(1970, 1, 1)
        computed = ~np.isnan(self.stats).all(axis=0)
        columns = [
            self.stats[:, i].tolist() if computed[i] else [None] * len(self.pair)
            for i in range(len(STATS))
        ]
        times = {
            t: None if t == NO_TIME else epoch + timedelta(microseconds=t)
            for t in set(self.newest_us.tolist())
        }
        none = [None] * len(self.pair)
        kms = none if self.km is None else [None if math.isnan(x) else x for x in self.km.tolist()]
        cells = [
            Cell(*names[p], km, t, k, values, times[newest], lim)
            for p, km, t, k, newest, lim, values in zip(
                self.pair.tolist(), kms, self.tests.tolist(), self.samples.tolist(),
                self.newest_us.tolist(), self.limiter or none, zip(*columns, strict=True),
                strict=True,
            )
        ]  # fmt: skip
        return sorted(cells, key=lambda c: (c.src, c.dst))

    @staticmethod
    def of(cells: Sequence[Cell], numbers: Mapping[tuple[str, str], int]) -> CellTable:
        """Cells as a table (`numbers`: each (src, dst)'s pair number); their distances
        are left out."""
        import numpy as np

        def column(values: list[Any], dtype: Any) -> Any:
            return np.asarray(values, dtype=dtype)

        stats = np.full((len(cells), len(STATS)), np.nan)
        for row, c in enumerate(cells):
            if c.quantiles is not None:
                stats[row] = [np.nan if x is None else x for x in c.quantiles]
        epoch = datetime(1970, 1, 1)
        newest = [
            NO_TIME if c.newest is None else (c.newest - epoch) // timedelta(microseconds=1)
            for c in cells
        ]
        return CellTable(
            pair=column([numbers[c.src, c.dst] for c in cells], np.int64),
            tests=column([c.tests for c in cells], np.int64),
            samples=column([c.samples for c in cells], np.int64),
            stats=stats,
            newest_us=column(newest, np.int64),
            limiter=[c.limiter for c in cells],
        )


def _flagged_tests(
    con: duckdb.DuckDBPyConnection,
    where: str,
    params: Sequence[Any],
    m: Metric,
    include_flagged: bool,
) -> int:
    """Tests matching `where` whose flags invalidate metric `m` (0 when flagged tests
    are included)."""
    if include_flagged:
        return 0
    row = con.execute(
        f"SELECT count(*) FROM measurements WHERE {where} AND NOT {valid_sql(m.measure)}",
        params,
    ).fetchone()
    return int(row[0]) if row else 0


def every_pair_since(
    con: duckdb.DuckDBPyConnection, where: str, params: Sequence[Any], since: datetime
) -> bool:
    """Whether every directed pair of the store (numbered in `pairs`, every pair any row
    has) has a row matching `where` from `since` on: then each pair's newest such row
    is one of those, and a search for it can skip the older rows (a scan of the
    newest day instead of the store)."""
    row = con.execute(
        "SELECT (SELECT count(*) FROM (SELECT DISTINCT src, dst FROM measurements "
        f"WHERE {where} AND started_utc >= ? AND src IS NOT NULL AND dst IS NOT NULL)) "
        ">= (SELECT count(*) FROM pairs)",
        [*params, since],
    ).fetchone()
    return bool(row and row[0])


def window_cells(
    con: duckdb.DuckDBPyConnection,
    info: SourceInfo,
    metric_name: str,
    window: str,
    previous: bool = False,
    include_flagged: bool = False,
    stats: Sequence[str] | None = None,
) -> list[Cell]:
    """Every directed pair of one source and window, its statistics in one query.
    `window` is one of WINDOWS or "latest" (each pair's newest test alone); `previous`:
    the window of the same length just before it (none for "latest" or "all"). Flagged
    rows are left out unless `include_flagged`. `stats`: only those computed (the cells'
    other statistics None)."""
    m = metric(metric_name)
    where = f"source = ? AND status = 'ok' AND {m.present_sql}"
    if not include_flagged:
        where += f" AND {valid_sql(m.measure)}"
    params: list[Any] = [info.name]
    tests = (
        f"SELECT src, dst, distance_km, started_utc, limiter, {m.samples_sql} AS s "
        "FROM measurements"
    )
    if window == "latest":
        # each pair's newest start by a per-pair max joined back, then one test per pair
        # among the few that start then (a window function over every test is seconds
        # on a year); when every pair has a test in the source's last day, both read
        # that day only
        recent = info.latest - timedelta(days=1) if info.latest is not None else None
        if recent is not None and every_pair_since(con, where, params, recent):
            where += " AND started_utc >= ?"
            params.append(recent)
        tests = (
            f"SELECT * FROM ({tests} m SEMI JOIN (SELECT src AS a, dst AS b, "
            f"max(started_utc) AS newest FROM measurements WHERE {where} GROUP BY src, dst) n "
            f"ON m.src = n.a AND m.dst = n.b AND m.started_utc = n.newest WHERE {where}) "
            "QUALIFY row_number() OVER (PARTITION BY src, dst ORDER BY started_utc DESC) = 1"
        )
        params = params * 2
    else:
        start, _end = window_bounds(info, window)
        if previous:
            days = window_days(window)
            if start is None or days is None:
                return []
            where += " AND started_utc >= ? AND started_utc < ?"
            params += [start - timedelta(days=days), start]
        elif start is not None:
            where += " AND started_utc >= ?"
            params.append(start)
        if m.one_value:
            return _one_value_cells(con, m, where, params, stats)
        tests += f" WHERE {where}"
    # a window's tests read twice, by their counts and by their samples: "latest" (a few
    # thousand rows) is materialized once, so both read the same test of a tie; a
    # window's rows are read from the store twice, which costs less than materializing
    # every sample list of a year (a third of the time at 1Y)
    if window == "latest":
        head, source = f"WITH t AS ({tests}), ", "t"
    else:
        head, source = "WITH ", f"({tests})"
        params = params * 2
    rows = con.execute(
        f"{head}"
        "n AS (SELECT src, dst, count(*) AS tests, max(distance_km) AS km, "
        f"max(started_utc) AS newest, histogram(limiter) AS limiter FROM {source} "
        "GROUP BY src, dst), "
        "q AS (SELECT src, dst, count(x) AS samples, "
        f"{_stats_sql(stats)} AS qs "
        f"FROM (SELECT src, dst, unnest(s) AS x FROM {source}) WHERE x IS NOT NULL "
        "GROUP BY src, dst) "
        "SELECT n.src, n.dst, n.km, n.tests, q.samples, q.qs, n.newest, n.limiter FROM n "
        "JOIN q ON n.src = q.src AND n.dst = q.dst ORDER BY n.src, n.dst",
        params,
    ).fetchall()
    return [
        Cell(src, dst, km, int(tests), int(k), _in_stats_order(qs, stats), newest, _mode(limiters))
        for src, dst, km, tests, k, qs, newest, limiters in rows
    ]


def _mode(counts: Mapping[str, int] | None) -> str | None:
    """The most frequent value of a histogram (DuckDB's), the first by name of a tie
    (DuckDB's mode() picks among ties in an order that varies between runs); an empty
    name is none."""
    named = [kv for kv in (counts or {}).items() if kv[0]]
    if not named:
        return None
    return min(named, key=lambda kv: (-kv[1], kv[0]))[0]


def _one_value_cells(
    con: duckdb.DuckDBPyConnection,
    m: Metric,
    where: str,
    params: Sequence[Any],
    stats: Sequence[str] | None = None,
) -> list[Cell]:
    """window_cells of a one-value metric (Metric.one_value) over the rows matching
    `where`: its tests read once, each one sample (present_sql: never null), so the
    samples are the tests."""
    rows = con.execute(
        "SELECT src, dst, max(distance_km), count(*), max(started_utc), histogram(limiter), "
        f"{_stats_sql(stats)} FROM (SELECT src, dst, distance_km, started_utc, limiter, "
        f"{m.run_sql} AS x FROM measurements WHERE {where}) GROUP BY src, dst "
        "ORDER BY src, dst",
        params,
    ).fetchall()
    return [
        Cell(src, dst, km, int(n), int(n), _in_stats_order(qs, stats), newest, _mode(limiters))
        for src, dst, km, n, newest, limiters, qs in rows
    ]


def _weeks_and_days(x: date, y: date) -> list[tuple[int, date, date | None]]:
    """[x, y) as (days, from, to): day rows up to the first Monday, whole weeks, days."""
    wa = x + timedelta(days=(7 - x.weekday()) % 7)  # the first Monday from x on
    if wa >= y:
        return [(1, x, y)]
    we = wa + timedelta(days=7 * ((y - wa).days // 7))  # after the last whole week
    return [(1, x, wa), (7, wa, we), (1, we, y)]


def _whole_days(a: datetime, b: datetime | None) -> list[tuple[int, date, date | None]]:
    """The rtt_bins rows of the whole days after a's day and before b's (all after without
    b): (days, from, to) ranges of `day`, to excluded (None: open): the whole months as
    month rows, the whole weeks before and after them as week rows, the days left as day
    rows. Each range a filter of its own, which DuckDB prunes by the column's zone maps
    (an OR of them it would not)."""
    da = a.date() + timedelta(days=1)
    ma = da if da.day == 1 else (da.replace(day=28) + timedelta(days=4)).replace(day=1)
    if b is None:
        return [*_weeks_and_days(da, ma), (31, ma, None)]
    db = b.date()
    mb = db.replace(day=1)
    if ma >= mb:
        return _weeks_and_days(da, db) if da < db else []
    return [*_weeks_and_days(da, ma), (31, ma, mb), *_weeks_and_days(mb, db)]


def binned_cells(
    con: duckdb.DuckDBPyConnection, info: SourceInfo, window: str, previous: bool = False
) -> list[Cell]:
    """window_cells of RTT for a window of days (1D..1Y, flagged tests left out), its
    percentiles from the store's histograms (orchestrator.history.histogram: within 0.05 %
    of the exact ones; count, min, max and mean exact): the days wholly inside the window
    from rtt_bins, the day it starts in (and, for `previous`, the day it ends in) from the
    tests' samples. The site's matrix reads these: a year of samples is tens of seconds."""
    m = METRICS["rtt"]
    days = window_days(window)
    start, _end = window_bounds(info, window)
    if days is None or start is None:
        return window_cells(con, info, m.name, window, previous=previous)
    a, b = (start - timedelta(days=days), start) if previous else (start, None)
    return bins_cells(con, binned_range(con, info.name, a, b))


# a histogram row's key: its pair number in the high 32 bits, its bin (offset to be
# unsigned) in the low ones; rows sorted by key are in pair, then value, order
_PAIR_SHIFT = 1 << 32
_BIN_OFFSET = 1 << 31


def bin_key_sql(pair: str, bin_: str) -> str:
    return f"(CAST({pair} AS BIGINT) * {_PAIR_SHIFT} + {bin_} + {_BIN_OFFSET})"


@dataclass
class Bins:
    """The RTT histograms of one source's valid ok tests in a time range, per directed
    pair (numbered as in the store's `pairs`): rows sorted by `key` (bin_key_sql), each
    with its samples `n`, smallest `lo` and largest `hi` sample and their sum `total`
    (None where not kept: orchestrator.site.matrix_state); and per pair (`pair`,
    sorted) its tests with an RTT, the newest one's start (`newest_us`, UNIX
    microseconds) and its distance (`km`, NaN when unknown or not kept). `lo_t`, `hi_t`
    (when asked for, UNIX microseconds): per row, a time at or after which a test of the
    range starts that holds a sample equal to `lo` (`hi`)."""

    key: Any
    n: Any
    lo: Any
    hi: Any
    total: Any | None
    pair: Any
    tests: Any
    newest_us: Any
    km: Any
    lo_t: Any | None = None
    hi_t: Any | None = None


def binned_range(
    con: duckdb.DuckDBPyConnection,
    source: str,
    a: datetime,
    b: datetime | None,
    pairs: Sequence[int] | None = None,
    counts: bool = True,
    keys: Sequence[int] | None = None,
    witnesses: bool = False,
) -> Bins:
    """The Bins of the tests starting in [a, b) (b None: from a on), of the `pairs`
    numbers given (all without): the days wholly inside from rtt_bins, the day it starts
    in (and the day b falls in) from the tests' samples, binned as the store bins them.
    Without `counts`, the histograms alone (no pairs, tests, newest: a scan saved).
    `keys`: those rows alone (bin_key_sql; of `pairs`), fewer to group. `witnesses`:
    each row's lo_t and hi_t too, the first day of a day (week, month) or the start of a
    test that holds its lo (hi): the newest of those with `keys` (an aggregate that
    costs, for a few rows), any without."""
    import numpy as np

    from orchestrator.history.histogram import bin_sql

    m = METRICS["rtt"]
    valid = valid_sql(m.measure)
    # the numbers written out: a list parameter costs DuckDB a failed import per item
    chosen = "" if pairs is None else f" AND pair IN ({', '.join(str(int(p)) for p in pairs)})"
    rows = chosen  # of the histograms' rows
    if keys is not None:
        rows += f" AND {bin_key_sql('pair', 'bin')} IN ({', '.join(str(int(k)) for k in keys)})"
    tests = f"source = ? AND status = 'ok' AND {valid} AND started_utc >= ?"
    params: list[Any] = [source, a]
    if b is not None:
        tests += " AND started_utc < ?"
        params.append(b)
    # the days the range starts and ends in (what _whole_days leaves), each a range of
    # its own: DuckDB prunes each by the column's zone maps, a year's rows between them
    # never read
    first_end = datetime.combine(a.date() + timedelta(days=1), datetime.min.time(), a.tzinfo)
    edges: list[tuple[datetime, datetime | None]] = [
        (a, first_end if b is None else min(b, first_end))
    ]
    if b is not None:
        last_start = max(first_end, datetime.combine(b.date(), datetime.min.time(), b.tzinfo))
        if last_start < b:
            edges.append((last_start, b))
    counted = con.execute(
        "SELECT p.pair, count(*) AS tests, max(distance_km) AS km, "
        "epoch_us(max(started_utc)) AS newest FROM measurements m JOIN pairs p "
        f"ON m.src = p.src AND m.dst = p.dst WHERE {tests} AND {m.present_sql}{chosen} "
        f"{'' if counts else 'AND false '}GROUP BY p.pair ORDER BY p.pair",
        params,
    ).fetchnumpy()
    whole: list[str] = []
    whole_params: list[Any] = []
    when = ", epoch_us(day) AS t" if witnesses else ""  # the first day of the row's days
    for span, since, until in _whole_days(a, b):
        whole.append(
            f"SELECT pair, bin, n, lo, hi, total{when} FROM rtt_bins WHERE source = ? AND {valid} "
            f"AND days = {span} AND day >= ?" + (" AND day < ?" if until else "") + rows
        )
        whole_params += [source, since, *([until] if until else [])]
    # the tests of the days the range starts and ends in, binned as the store bins them
    for since, until in edges:
        within = f"source = ? AND status = 'ok' AND {valid} AND started_utc >= ?"
        within += " AND started_utc < ?" if until is not None else ""
        started = ", epoch_us(started_utc) AS t" if witnesses else ""
        whole.append(
            f"SELECT p.pair, {bin_sql('x')} AS bin, 1 AS n, x AS lo, x AS hi, x AS total"
            f"{', t' if witnesses else ''} FROM (SELECT src, dst{started}, "
            f"unnest({m.samples_sql}) AS x FROM measurements WHERE {within}) r "
            f"JOIN pairs p ON r.src = p.src AND r.dst = p.dst WHERE x IS NOT NULL{rows}"
        )
        whole_params += [source, since, *([until] if until is not None else [])]
    # a row whose lo (hi) is the group's; of a few rows, the newest
    seen = ""
    if witnesses:
        lo_by, hi_by = ("[lo, -t]", "[hi, t]") if keys is not None else ("lo", "hi")
        seen = f", arg_min(t, {lo_by}) AS lo_t, arg_max(t, {hi_by}) AS hi_t"
    found = con.execute(
        f"SELECT {bin_key_sql('pair', 'bin')} AS key, sum(n) AS n, min(lo) AS lo, "
        f"max(hi) AS hi, sum(total) AS total{seen} FROM ({' UNION ALL '.join(whole)}) "
        "GROUP BY pair, bin ORDER BY key",
        whole_params,
    ).fetchnumpy()
    return Bins(
        key=np.asarray(found["key"], dtype=np.int64),
        n=np.asarray(found["n"], dtype=np.int64),
        lo=np.asarray(found["lo"], dtype=np.float64),
        hi=np.asarray(found["hi"], dtype=np.float64),
        total=np.asarray(found["total"], dtype=np.float64),
        pair=np.asarray(counted["pair"], dtype=np.int64),
        tests=np.asarray(counted["tests"], dtype=np.int64),
        newest_us=np.asarray(counted["newest"], dtype=np.int64),
        km=np.ma.filled(np.ma.asarray(counted["km"], dtype=np.float64), np.nan),
        lo_t=np.asarray(found["lo_t"], dtype=np.int64) if witnesses else None,
        hi_t=np.asarray(found["hi_t"], dtype=np.int64) if witnesses else None,
    )


def bin_pairs(key: Any) -> Any:
    """The pair number of each histogram row."""
    return key // _PAIR_SHIFT


def bin_numbers(key: Any) -> Any:
    """The bin of each histogram row (as histogram.bin_sql gives it)."""
    return key % _PAIR_SHIFT - _BIN_OFFSET


def run_starts(sorted_keys: Any) -> Any:
    """The index of the first row of each run of equal keys (numpy)."""
    import numpy as np

    if not len(sorted_keys):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], sorted_keys[1:] != sorted_keys[:-1])))


def pair_names(con: duckdb.DuckDBPyConnection) -> dict[int, tuple[str, str]]:
    """Each pair number of the store's `pairs` with its (src, dst)."""
    return {r[0]: (r[1], r[2]) for r in con.execute("SELECT pair, src, dst FROM pairs").fetchall()}


def bins_quantiles(bins: Bins, stats: Sequence[str] = tuple(QUANTILES)) -> tuple[Any, Any]:
    """(index of each pair's first row, its quantiles among `stats` (groups x those, in
    their order; the mean, from the sums, left out)) of bins' histograms (which must
    have rows): from the counts and each pair's smallest and largest sample
    (histogram.quantiles; NaN where one of those is)."""

    from orchestrator.history.histogram import quantiles

    firsts = run_starts(bin_pairs(bins.key))
    qs = [QUANTILES[s] for s in stats if s in QUANTILES]
    return firsts, quantiles(firsts, bin_numbers(bins.key), bins.n, bins.lo, bins.hi, qs)


def bins_cells(
    con: duckdb.DuckDBPyConnection,
    bins: Bins,
    stats: Sequence[str] = tuple(QUANTILES),
    quantiles: tuple[Any, Any] | None = None,
    names: dict[int, tuple[str, str]] | None = None,
) -> list[Cell]:
    """The Cells of bins' pairs that have tests, sorted by (src, dst); each with the
    quantiles `stats` (the others None) and the mean when bins keep their sums.
    `names`: pair_names(con), read already."""
    if not len(bins.n):
        return []
    return bins_table(bins, stats, quantiles).cells(names if names is not None else pair_names(con))


def bins_table(
    bins: Bins, stats: Sequence[str] = tuple(QUANTILES), quantiles: tuple[Any, Any] | None = None
) -> CellTable:
    """bins_cells as a CellTable (rows in pair order)."""
    import numpy as np

    if not len(bins.n):
        return empty_table()
    firsts, qs = quantiles or bins_quantiles(bins, stats)
    pairs = bin_pairs(bins.key)[firsts]
    samples = np.add.reduceat(bins.n, firsts)
    # the groups of pairs with tests, and their rows among the counted pairs
    at = np.minimum(np.searchsorted(bins.pair, pairs), max(len(bins.pair) - 1, 0))
    has = (bins.pair[at] == pairs) if len(bins.pair) else np.zeros(len(pairs), dtype=bool)
    groups, rows = np.flatnonzero(has), at[has]
    table = np.full((len(groups), len(STATS)), np.nan)
    for c, index in enumerate(STATS.index(s) for s in stats if s in QUANTILES):
        table[:, index] = qs[groups, c]
    if bins.total is not None:
        table[:, -1] = (np.add.reduceat(bins.total, firsts) / samples)[groups]
    return CellTable(
        pair=pairs[groups].astype(np.int64),
        tests=np.asarray(bins.tests[rows], dtype=np.int64),
        samples=samples[groups].astype(np.int64),
        stats=table,
        newest_us=np.asarray(bins.newest_us[rows], dtype=np.int64),
        km=np.asarray(bins.km[rows], dtype=np.float64),
    )


def empty_table() -> CellTable:
    import numpy as np

    none = np.zeros(0, dtype=np.int64)
    return CellTable(none, none, none, np.zeros((0, len(STATS))), none)


PairKeep = Callable[[str, str, float | None], bool]


def matrix(
    con: duckdb.DuckDBPyConnection,
    metric_name: str = "rtt",
    stat: str = "p50",
    window: str = "1W",
    sources: Sequence[str] = (),
    keep: PairKeep | None = None,
    catalog: Catalog | None = None,
    include_flagged: bool = False,
) -> dict[str, Any]:
    """The From x To matrix of one statistic, one matrix per source (never mixed).
    The JSON shape (docs/history.md, 'matrix --json') is this dict. `window` is one of WINDOWS or
    "latest" (each pair's newest test); regions in catalog.region_order with a
    `catalog`, else by name. Metric "detectable": each pair's smallest detectable RTT
    change (detectable_matrix; stat and window do not apply)."""
    if metric_name == DETECTABLE:
        return detectable_matrix(con, sources, keep)
    m = metric(metric_name)
    if stat not in STATS:
        raise UserError(f"--stat {stat}: one of {', '.join(STATS)}")
    check_window(window)
    matrices = []
    for info in chosen_sources(source_infos(con), sources):
        start, _end = window_bounds(info, window)
        cells: list[dict[str, Any]] = [
            {
                "src": c.src,
                "dst": c.dst,
                "value": _stat_value(stat, c.samples, c.quantiles),
                "value_n": c.samples,
                "samples": c.samples,
                "tests": c.tests,
                "distance_km": c.distance_km,
            }
            for c in window_cells(con, info, m.name, window, include_flagged=include_flagged)
            if keep is None or keep(c.src, c.dst, c.distance_km)
        ]
        where = f"source = ? AND status = 'ok' AND {m.present_sql}"
        params: list[Any] = [info.name]
        if start is not None:
            where += " AND started_utc >= ?"
            params.append(start)
        used = {c["src"] for c in cells} | {c["dst"] for c in cells}
        regions = region_order(used, catalog) if catalog is not None else sorted(used)
        matrices.append(
            {
                "source": info.name,
                "label": info.label,
                "emulated": info.emulated,
                "window_start_utc": iso_utc(start),
                "window_end_utc": iso_utc(info.latest),
                "regions": regions,
                "flagged_tests": _flagged_tests(con, where, params, m, include_flagged),
                "cells": cells,
            }
        )
    return {
        "format": MATRIX_FORMAT,
        "version": MATRIX_VERSION,
        "metric": m.name,
        "unit": m.unit,
        "stat": stat,
        "window": window,
        "percentile_rule": PERCENTILE_RULE,
        "include_flagged": include_flagged,
        "matrices": matrices,
    }


MATRIX_CSV_COLUMNS = (
    "source", "emulated", "window_start_utc", "window_end_utc", "src", "dst", "metric",
    "stat", "unit", "value", "samples", "tests",
)  # fmt: skip


def matrix_csv_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The matrix as long rows (one per directed pair and source)."""
    return [
        {
            "source": mx["source"],
            "emulated": "true" if mx["emulated"] else "false",
            "window_start_utc": mx["window_start_utc"] or "",
            "window_end_utc": mx["window_end_utc"] or "",
            "src": c["src"],
            "dst": c["dst"],
            "metric": doc["metric"],
            "stat": doc["stat"],
            "unit": doc["unit"],
            "value": "" if c["value"] is None else repr(round(c["value"], 6)),
            "samples": c["samples"],
            "tests": c["tests"],
        }
        for mx in doc["matrices"]
        for c in mx["cells"]
    ]


def source_caption(mx: dict[str, Any]) -> str:
    """What every view prints about its source."""
    kind = "EMULATED" if mx["emulated"] else "real measurements"
    label = f" ({mx['label']})" if mx.get("label") and mx["label"] != mx["source"] else ""
    return f"source: {mx['source']}{label}, {kind}"


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "bit/s":
        return mbit_text(value / 1e6)
    if unit == "%":
        return f"{value:.2f}"
    return f"{value:.1f}"


def mbit_text(mbit: float) -> str:
    """Mbit/s with three significant digits up to 100 (an emulated 4.37 is not "4")."""
    if abs(mbit) >= 100:
        return f"{mbit:.0f}"
    return f"{mbit:.1f}" if abs(mbit) >= 10 else f"{mbit:.2f}"


def config_change_docs(
    con: duckdb.DuckDBPyConnection, found: Sequence[Any], since_iso: str | None = None
) -> list[dict[str, Any]]:
    """changes.ConfigChange items grouped by source, backend, run and the fields that
    differ: [{source, backend, run, utc, fields: ["name: old -> new"], pairs: ["S/D"]}]."""
    from orchestrator.history import store as h
    from orchestrator.history.fingerprint import differences

    fields = h.stored_fingerprints(
        con, sorted({c.old_fingerprint for c in found} | {c.new_fingerprint for c in found})
    )
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    seen: dict[tuple[Any, ...], set[str]] = {}  # each group's pairs (a new image: thousands)
    diffs: dict[tuple[str, str], tuple[str, ...]] = {}  # one per fingerprint change
    for c in found:
        if since_iso and c.t < since_iso:
            continue
        change = (c.old_fingerprint, c.new_fingerprint)
        if change not in diffs:
            diffs[change] = tuple(
                differences(fields.get(c.old_fingerprint, {}), fields.get(c.new_fingerprint, {}))
            )
        diff = diffs[change]
        key = (c.key.source, c.key.backend, c.run_id, diff)
        group = groups.setdefault(key, {"source": c.key.source, "backend": c.key.backend,
                                        "run": c.run_id, "utc": c.t, "fields": list(diff),
                                        "pairs": []})  # fmt: skip
        pair = f"{c.key.src}/{c.key.dst}"
        if pair not in seen.setdefault(key, set()):
            seen[key].add(pair)
            group["pairs"].append(pair)
    return list(groups.values())
