"""The metrics of the history store's views and the rules every view reads them by:
which values each metric pools (METRICS), which flags leave a test out (valid_sql), the
statistics and their sample rule (STATS, PERCENTILE_RULE), the windows and the sources.
Below views, windows and judgments, which all read them (no module of the store above
it is imported here)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from orchestrator.core import BEYOND, UserError, min_samples_for, stamp, wilson
from orchestrator.results import ASYMMETRIC, FEW_SAMPLES, RTT, THROUGHPUT, harmless_flags

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
    allowed = ", ".join(f"'{f}'" for f in ("", *harmless_flags(measure), *also))
    return f"(coalesce(flags, '') = '' OR list_has_all([{allowed}], string_split(flags, ';')))"


# flags that leave a value in change detection though the views leave it out
DETECTION_KEEPS = (ASYMMETRIC, FEW_SAMPLES)

# every statistic a view computes, and the quantile each percentile is
QUANTILES = {"min": 0.0, "p10": 0.10, "p25": 0.25, "p50": 0.50, "p75": 0.75, "p90": 0.90,
             "p99": 0.99, "max": 1.0}  # fmt: skip
STATS = (*QUANTILES, "mean")
# BEYOND: the samples a tail percentile needs beyond it (core.stats: one rule)
PERCENTILE_RULE = (
    f"a percentile q needs {BEYOND} / min(q, 1 - q) samples (p25, p75: 40; p10, p90: 100; "
    "p99: 1,000); below that it is null, with its count"
)


@functools.cache  # asked for every cell of every view (a year's matrix: 220,000 times)
def min_samples(stat: str) -> int:
    """Samples `stat` needs to be shown: 10 / min(q, 1 - q) for a tail percentile, else 1."""
    q = QUANTILES.get(stat)
    return 1 if q is None else min_samples_for(q * 100.0)


# the JSON documents' formats; what each version added: docs/history.md, 'matrix --json'
MATRIX_FORMAT = "interregion.matrix"
MATRIX_VERSION = 4
PAIR_FORMAT = "interregion.pair-history"
PAIR_VERSION = 4


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
    # a bin's sum (a window's mean) is stored as an integer of 1 / total_scale of the
    # unit, each value rounded once: added exactly in any order (DuckDB's threads add in
    # an order that varies), and faster than a decimal; a nanosecond of RTT, a bit/s
    total_scale: int = 1_000_000


def _one_value(
    name: str, unit: str, column: str, measure: str, when: str = "", total_scale: int = 1_000_000
) -> Metric:
    """A metric of one value per test, `column` (of the rows where `when` holds)."""
    run_sql = f"CASE WHEN {when} THEN {column} END" if when else column
    present_sql = f"{column} IS NOT NULL" + (f" AND {when}" if when else "")
    return Metric(name, unit, run_sql, f"[{column}]", present_sql, measure, True, total_scale)


def total_sql(x: str, scale: int | str) -> str:
    """A value's share of its bin's sum: x in 1 / `scale` (Metric.total_scale, or SQL
    giving it) of its unit."""
    return f"CAST(round({x} * {scale}) AS BIGINT)"


# a test's RTT: the median of its ping samples, or its one p50 (or mean) when it has none
# (an imported row); computed once, as the store writes the row (its `rtt_run_ms`: a
# median per row is most of the time of reading a month of tests)
RTT_RUN_SQL = (
    "CASE WHEN len(rtt_samples_ms) > 0 THEN list_median(rtt_samples_ms) "
    "ELSE coalesce(rtt_p50_ms, rtt_avg_ms) END"
)
METRICS = {
    "rtt": Metric(
        "rtt",
        "ms",
        "rtt_run_ms",  # RTT_RUN_SQL, stored as the row is written
        "CASE WHEN len(rtt_samples_ms) > 0 THEN rtt_samples_ms "
        "ELSE [coalesce(rtt_p50_ms, rtt_avg_ms)] END",
        "(len(rtt_samples_ms) > 0 OR coalesce(rtt_p50_ms, rtt_avg_ms) IS NOT NULL)",
        RTT,
    ),
    # throughput is the single_stream measure's; capacity the capacity measure's: never
    # one aggregate (a row from before the measure column is single_stream)
    "throughput": _one_value(
        "throughput", "bit/s", "throughput_bps", THROUGHPUT, SINGLE_STREAM_SQL, total_scale=1
    ),
    "capacity": _one_value(
        "capacity", "bit/s", "throughput_bps", THROUGHPUT, "measure = 'capacity'", total_scale=1
    ),
    # one value per test (ping's own summary): a window pools the tests' values
    "loss": _one_value("loss", "%", "ping_loss_pct", RTT),
    "jitter": _one_value("jitter", "ms", "rtt_mdev_ms", RTT),
}


# A test's pings, what a window's loss and its Wilson interval are counted from: the
# replies are its rtt_samples (or its samples' count), the pings sent the replies over
# (1 - loss), as the report's tables take them. NULL where they are not known: a row
# without a count of replies (an import of summaries), or every ping lost (a failed
# test, never in a view).
RECEIVED_SQL = (
    "coalesce(TRY_CAST(rtt_samples AS DOUBLE), "
    "CASE WHEN len(rtt_samples_ms) > 0 THEN len(rtt_samples_ms) END)"
)
PINGS_SENT_SQL = (
    f"CASE WHEN ping_loss_pct >= 0 AND ping_loss_pct < 100 AND {RECEIVED_SQL} > 0 "
    f"THEN CAST(round({RECEIVED_SQL} / (1 - ping_loss_pct / 100)) AS BIGINT) END"
)
PINGS_LOST_SQL = f"({PINGS_SENT_SQL}) - CAST(round({RECEIVED_SQL}) AS BIGINT)"
LOSS_RULE = (
    "loss_pct is the window's pings lost over its pings sent (pooled over its tests, "
    "pings_sent = replies / (1 - loss) of each), loss_low_pct..loss_high_pct its Wilson "
    "95 % interval; null where no test of the window has its pings counted"
)


def loss_fields(sent: int, lost: int) -> dict[str, Any]:
    """A window's (or a test's) loss from its pings: lost / sent in percent with its
    Wilson 95 % interval (core.stats.wilson), None for none counted."""
    sent, lost = int(sent), int(lost)
    if sent <= 0:
        return {"pings_sent": 0, "pings_lost": 0, "loss_pct": None, "loss_low_pct": None,
                "loss_high_pct": None}  # fmt: skip
    low, high = wilson(lost, sent)
    return {"pings_sent": sent, "pings_lost": lost,
            "loss_pct": round(100.0 * lost / sent, 6),
            "loss_low_pct": round(100.0 * low, 6),
            "loss_high_pct": round(100.0 * high, 6)}  # fmt: skip


def loss_text(fields: dict[str, Any]) -> str:
    """loss_fields in words: "0.12 % (95 %: 0.07-0.21 %, 12 of 10,000 pings)"."""
    if fields.get("loss_pct") is None:
        return "— (no pings counted)"
    return (
        f"{fields['loss_pct']:.2f} % (95 %: {fields['loss_low_pct']:.2f}-"
        f"{fields['loss_high_pct']:.2f} %, {fields['pings_lost']:,} of "
        f"{fields['pings_sent']:,} pings)"
    )


def metric(name: str) -> Metric:
    if name not in METRICS:
        raise UserError(f"--metric {name}: one of {', '.join(METRICS)}")
    return METRICS[name]


def window_days(window: str) -> int | None:
    if window not in WINDOWS:
        raise UserError(f"--window {window}: one of {', '.join(WINDOWS)}")
    return WINDOWS[window]


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


# the continuous mesh's windows (its bins in the store, `mesh matrix`), and its sources
MESH_WINDOWS = {"1H": 3600, "6H": 6 * 3600, "1D": 86400, "1W": 7 * 86400}


def mesh_sources(con: Any) -> list[str]:
    return [
        r[0] for r in con.execute("SELECT DISTINCT source FROM mesh_bins ORDER BY 1").fetchall()
    ]


def source_infos(con: duckdb.DuckDBPyConnection) -> dict[str, SourceInfo]:
    rows = con.execute(
        "SELECT s.source, any_value(s.label), bool_or(s.emulated), "
        "(SELECT max(started_utc) FROM measurements m WHERE m.source = s.source) "
        "FROM sweeps s GROUP BY s.source ORDER BY s.source"
    ).fetchall()
    return {r[0]: SourceInfo(r[0], r[1] or r[0], bool(r[2]), r[3]) for r in rows}


def chosen_sources(infos: dict[str, SourceInfo], wanted: Sequence[str] = ()) -> list[SourceInfo]:
    if not infos:
        raise UserError("the history store holds no sweep yet: a sweep adds itself as it ends")
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


def period_start(day: date, span: int) -> date:
    """The first day of the week (Monday), month or quarter holding `day`."""
    if span == 7:
        return day - timedelta(days=day.weekday())
    return day.replace(month=day.month - (day.month - 1) % 3 if span == 92 else day.month, day=1)


def period_end(first: date, span: int) -> date:
    """The first day after the week, month or quarter starting on `first`."""
    if span == 7:
        return first + timedelta(days=7)
    month = first.month - 1 + (3 if span == 92 else 1)
    return date(first.year + month // 12, month % 12 + 1, 1)


def stat_value(stat: str, samples: int, quantiles: Sequence[float | None] | None) -> float | None:
    """`stat` of a window from its quantiles (in STATS order), None when there are none
    or too few samples for it (min_samples)."""
    if quantiles is None or samples < min_samples(stat):
        return None
    value = quantiles[STATS.index(stat)]
    return None if value is None else float(value)


def stat_fields(samples: int, quantiles: Sequence[float | None] | None) -> dict[str, Any]:
    """Every statistic with its sample count: {"p99": None, "p99_n": 60, ...}."""
    out: dict[str, Any] = {}
    for stat in STATS:
        out[stat] = stat_value(stat, samples, quantiles)
        out[f"{stat}_n"] = samples
    return out


def iso_utc(t: datetime | None) -> str | None:
    """A stored time (DuckDB's TIMESTAMP: naive, in UTC) as a record writes it (`stamp`)."""
    return stamp(t if t.tzinfo else t.replace(tzinfo=UTC)) if t else None


# ---- one pair -------------------------------------------------------------------------


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
