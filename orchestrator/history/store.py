"""History across sweeps: one DuckDB file, `results/history.duckdb`; its tables are
docs/history.md's ('The store').

`measurements` is a view over two tables of the same columns: `recent`, each source's
last ARCHIVE_AFTER_DAYS days in arrival order (what windows, the matrix and detection
read), and `archive`, older rows moved a week or more at a time and written in pair order,
so that one pair's year is a few contiguous stretches, not one row in every block of the
sample column. The day summaries (SUMMARIES) are merged at every ingest, and every window
of every view is a merge of them (orchestrator.history.windows).

The store is derived data: `rebuild` recreates it from `results/*/` and
`results/imports/` alone (the continuous mesh's rows copied from the old store). Every
write runs in one transaction, so a reader sees a sweep's rows all or none.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.core import (
    RunFailure,
    UserError,
    counted,
    csv_errors,
    debug,
    info,
    parse_utc,
    read_text,
)
from orchestrator.history import bulk, judgments
from orchestrator.history.fingerprint import (
    FINGERPRINT_FIELDS,
    fingerprint,
    fingerprint_fields,
    imported_fields,
)
from orchestrator.history.histogram import bin_sql
from orchestrator.history.metrics import (
    METRICS,
    PINGS_LOST_SQL,
    PINGS_SENT_SQL,
    RTT_RUN_SQL,
    period_end,
    period_start,
    total_sql,
)
from orchestrator.model import is_emulated
from orchestrator.results import (
    DEFAULT_TIER,
    HOST_STALL,
    HOSTS_FILE,
    MEASUREMENT_COLUMNS,
    MEASUREMENTS_FILE,
    MEASURES,
    RAW_DIR,
    SINGLE_STREAM,
    SWEEP_FILE,
    YEARS,
    SweepRecord,
    flagged,
    host_doc,
    is_study_dir,
    load_record,
    measure_of,
    number_problem,
    parse_flags,
    read_raw_round,
    read_rows,
    round_stalls,
    safe_name,
    samples_of,
    value_range,
)
from orchestrator.results import ping_samples as parse_ping_samples
from orchestrator.results import sweep_dir as store_sweep_dir

if TYPE_CHECKING:
    import duckdb

HISTORY_FILE = "history.duckdb"
IMPORTS_DIR = "imports"
# 2: measurements split into recent + archive; 3: the host evidence columns; 4: the
# limiter columns, rtt_samples and flags; 5: the measure column (1 to 4 migrate, their
# rows single_stream); 6: rtt_bins (5 migrates: filled from the stored rows); 7:
# value_bins, test_days and change detection's tables (6 migrates: filled from the stored
# rows, every stored run judged in time order); 8: value_bins in bins of 1 % (7 migrates:
# value_bins computed again); 9: mesh_samples and mesh_bins (8 migrates: both empty; 7:
# value_bins computed again and both); 10: test_days' pings_sent and pings_lost (7 to 9
# migrate: filled from the stored rows); 11: the day summaries' quarter rows (6 to 10
# migrate: from their day rows); 12: change detection's times (episodes', configuration
# changes') as TIMESTAMP, no longer text (7 to 11 migrate: converted in place); 13: the
# bins' totals as integers (metrics.Metric.total_scale), and each test's RTT stored
# (rtt_run_ms; 1 to 12 migrate: converted in place, filled from the stored rows)
STORE_SCHEMA_VERSION = 13
# Rows older than this (from their source's latest sweep) move to `archive`, once at
# least ARCHIVE_CHUNK_DAYS of them are due: the 1M window stays in `recent`.
ARCHIVE_AFTER_DAYS = 35
ARCHIVE_CHUNK_DAYS = 7
# Sources of our own sweeps; an imported source takes any other name.
EMULATED, MEASURED = "emulated", "measured"
OWN_SOURCES = (EMULATED, MEASURED)

_DOUBLE = {
    "distance_km", "rtt_min_ms", "rtt_avg_ms", "rtt_p10_ms", "rtt_p25_ms", "rtt_p50_ms",
    "rtt_p75_ms", "rtt_p90_ms", "rtt_p99_ms", "rtt_run_ms",
    "rtt_max_ms", "rtt_mdev_ms", "ping_loss_pct", "throughput_bps", "throughput_sender_bps",
    "tcp_rtt_ms", "duration_s", "src_cpu_steal_pct", "dst_cpu_steal_pct",
}  # fmt: skip
_BIGINT = {"bytes", "retransmits", "max_cwnd_bytes", "streams", "round",
           "src_bw_out_allowance_exceeded_packets", "dst_bw_in_allowance_exceeded_packets",
           "src_pps_allowance_exceeded_packets", "dst_pps_allowance_exceeded_packets"}  # fmt: skip


def _sql_type(column: str) -> str:
    if column == "started_utc":
        return "TIMESTAMP"
    if column == "rtt_samples_ms":
        return "DOUBLE[]"
    if column in _DOUBLE:
        return "DOUBLE"
    if column in _BIGINT:
        return "BIGINT"
    return "VARCHAR"


STORE_COLUMNS: tuple[str, ...] = (
    "source",
    *MEASUREMENT_COLUMNS,
    "src",
    "dst",
    "fingerprint",
    "rtt_samples_ms",
    "rtt_run_ms",  # metrics.RTT_RUN_SQL of the row, computed as it is written (fill_run_values)
)
_COLUMN_TYPES = {c: _sql_type(c) for c in STORE_COLUMNS}

_QUOTED_COLUMNS = ", ".join(f'"{c}"' for c in STORE_COLUMNS)
_VIEW = "CREATE VIEW measurements AS SELECT * FROM recent UNION ALL SELECT * FROM archive"
_MESH = (
    "CREATE TABLE mesh_samples (source VARCHAR, mesh_id VARCHAR, src VARCHAR, dst VARCHAR, "
    "t TIMESTAMP, sent INTEGER, rtt_ms DOUBLE[])",
    "CREATE TABLE mesh_bins (source VARCHAR, mesh_id VARCHAR, src VARCHAR, dst VARCHAR, "
    "t TIMESTAMP, sent BIGINT, received BIGINT, rtt_p50_ms DOUBLE, rtt_p90_ms DOUBLE, "
    "rtt_p99_ms DOUBLE, rtt_sum_ms DOUBLE, loss_ratio DOUBLE, loss_lo DOUBLE, "
    "loss_hi DOUBLE, rtt_samples_ms DOUBLE[])",
)
# the one-value metrics (one value per test) and each test's value: what value_bins
# summarises
VALUE_METRICS = {m: METRICS[m].run_sql for m in ("loss", "jitter", "throughput", "capacity")}
# a test has a value of each metric
PRESENT_SQL = {
    "rtt": METRICS["rtt"].present_sql,
    **{m: f"({sql}) IS NOT NULL" for m, sql in VALUE_METRICS.items()},
}
# a number per directed pair, for rtt_bins: a year's window groups millions of bins by
# pair, in half the time by a number than by two names
_PAIRS = "CREATE TABLE pairs (pair INTEGER PRIMARY KEY, src VARCHAR, dst VARCHAR)"
# a test's RTT samples as the views pool them: its ping samples, or its one p50 (or mean)
# when it has none (an imported row)
RTT_SAMPLES_SQL = METRICS["rtt"].samples_sql


def store_path(results: Path) -> Path:
    return Path(results) / HISTORY_FILE


# ---- opening the store ----------------------------------------------------------------


class StoreBusy(RunFailure):
    """The store is held by another process (DuckDB's file lock): exit 1, and never a
    smaller result in place of the whole one (a site without its history pages)."""


def _open_error(path: Path, e: Exception) -> UserError:
    text = " ".join(str(e).split())
    if "lock" in text.lower():
        pid = re.search(r"PID (\d+)", text)
        who = f" (process {pid.group(1)})" if pid else ""
        return StoreBusy(
            f"{path} is in use by another process{who}: wait for it to finish, then retry"
        )
    return UserError(
        f"{path} is not a readable DuckDB file (damaged?): run 'interregion history rebuild "
        f"{_results_option(path)}' to recreate it from the sweep folders"
    )


def _results_option(path: Path) -> str:
    """`--results DIR` of a store at `path`, quoted for a shell: hints run as printed."""
    return f"--results {shlex.quote(str(Path(path).absolute().parent))}"


def connect(
    path: Path, *, read_only: bool = False, create: bool = False
) -> duckdb.DuckDBPyConnection:
    """The store at `path`, its schema version checked. `create` makes a missing store;
    otherwise a missing one is a one-line error (so is a damaged or locked one)."""
    import duckdb

    path = Path(path)
    if not path.exists() and not create:
        raise UserError(
            f"no history store at {path}: run 'interregion history ingest --all "
            f"{_results_option(path)}' first"
        )
    fresh = not path.exists()
    try:
        con = duckdb.connect(str(path), read_only=read_only and not fresh)
    except duckdb.Error as e:
        raise _open_error(path, e) from None
    try:
        # no progress bar of DuckDB's on a long statement (an upgrade): our lines say it
        con.execute("SET enable_progress_bar = false")
        if fresh:
            with transaction(con):
                for statement in _SCHEMA:
                    con.execute(statement)
                con.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?)", [str(STORE_SCHEMA_VERSION)]
                )
        if not read_only:
            _migrate(con)
        _check_version(con, path)
    except BaseException:
        con.close()
        raise
    return con


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    """An older store (version 1 to 12) upgraded to this version's in place, in one
    transaction: what each version added, as STORE_SCHEMA_VERSION's comment lists it."""
    found = _version(con)
    if found not in [str(n) for n in range(1, STORE_SCHEMA_VERSION)]:
        return
    v = int(found)
    info(f"history: upgrading the store from version {v} to {STORE_SCHEMA_VERSION} ({_says(v)})")
    # the summaries computed again from every stored row: each from a version before the
    # one that last changed its rows (6: rtt_bins, 8: value_bins' bins of 1 %, 10:
    # test_days' pings sent and lost)
    redone = [t for t, since in zip(SUMMARY_TABLES, (6, 8, 10), strict=True) if v < since]
    with transaction(con):
        _exact_totals(con)
        if v < 5:
            _migrate_columns(con, v)
        _add_run_values(con)
        for statement in _SCHEMA[_SCHEMA.index(_PAIRS) :]:  # the tables added since 5
            con.execute(statement.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
        for column in ("pings_sent", "pings_lost"):
            con.execute(f"ALTER TABLE test_days ADD COLUMN IF NOT EXISTS {column} BIGINT")
        if redone:
            refresh_bins(con, tables=redone)
        if v < 11:  # 6 to 10 -> 11: the others' quarter rows, from their day rows
            for table in (t for t in SUMMARY_TABLES if t not in redone):
                con.execute(f"DELETE FROM {table} WHERE days = 92")
                select = _period_select(table, PERIODS[92], 92, "")
                con.execute(f"INSERT INTO {table} {select} ORDER BY first")
        if v < 12:  # the times of change detection's tables typed (empty ones before 7)
            judgments.type_times(con)
        if v < 7:  # change detection's tables filled: every stored run judged in time order
            judgments.rejudge(con)
        con.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(STORE_SCHEMA_VERSION)]
        )


def _says(version: int) -> str:
    """What upgrading a store of `version` does, in words."""
    if version < 7:
        return (
            "day summaries and change detection's judgments from every stored test: minutes "
            "for a year of full-catalog sweeps, once"
        )
    if version < 11:
        redone = {7: "value_bins and test_days computed again, ", 10: ""}.get(
            version, "test_days computed again: each day's pings sent and lost; "
        )
        return f"{redone}the quarter rows from the day rows"
    typed = "change detection's times typed, " if version == 11 else ""
    return f"{typed}the bins' sums as integers, each test's RTT stored"


def _version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The store's schema version (None: none, or no meta table)."""
    import duckdb

    try:
        found = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except duckdb.Error:
        return None
    return found[0] if found else None


def _exact_totals(con: duckdb.DuckDBPyConnection) -> None:
    """6 to 12 -> 13: the bins' sums (`total`) as integers of metrics.Metric.total_scale,
    converted in place, each stored sum rounded once (inside the caller's transaction)."""
    for table, value in (
        ("rtt_bins", total_sql("total", METRICS["rtt"].total_scale)),
        ("value_bins", _value_total("total")),
    ):
        typed = con.execute(
            "SELECT data_type FROM duckdb_columns() WHERE table_name = ? AND column_name = 'total'",
            [table],
        ).fetchone()
        if typed and typed[0] == "DOUBLE":
            con.execute(f"ALTER TABLE {table} ALTER total TYPE BIGINT USING {value}")


def _add_run_values(con: duckdb.DuckDBPyConnection) -> None:
    """1 to 12 -> 13: each stored test's RTT (rtt_run_ms), from its samples (inside the
    caller's transaction)."""
    for table in ("recent", "archive"):
        con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS rtt_run_ms DOUBLE")
    fill_run_values(con, "archive")
    fill_run_values(con)


def fill_run_values(
    con: duckdb.DuckDBPyConnection, table: str = "recent", sweep_id: str | None = None
) -> None:
    """Store the RTT (metrics.RTT_RUN_SQL) of each row of `table` (of `sweep_id`'s, all
    without) that has none: what every view and change detection read as a test's RTT."""
    where = "" if sweep_id is None else " AND sweep_id = ?"
    con.execute(
        f"UPDATE {table} SET rtt_run_ms = {RTT_RUN_SQL} WHERE rtt_run_ms IS NULL{where}",
        [] if sweep_id is None else [sweep_id],
    )


def _migrate_columns(con: duckdb.DuckDBPyConnection, version: int) -> None:
    """Versions 1 to 4 -> 5 (inside the caller's transaction)."""
    if version == 1:
        con.execute("ALTER TABLE measurements RENAME TO recent")
        con.execute("CREATE TABLE archive AS SELECT * FROM recent LIMIT 0")
    else:
        con.execute("DROP VIEW measurements")
    for table in ("recent", "archive"):
        have = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
        for column in STORE_COLUMNS:
            if column not in have:
                con.execute(f'ALTER TABLE {table} ADD COLUMN "{column}" {_COLUMN_TYPES[column]}')
        # every row before the column was measured as single_stream is today
        con.execute(f"UPDATE {table} SET measure = ? WHERE measure IS NULL", [SINGLE_STREAM])
    con.execute(_VIEW)


@dataclass(frozen=True)
class _Summary:
    """A day-summary table: its columns in order (source, what tells its rows apart
    within a day, day, days, the values), the SELECT of its day rows from the ok tests
    matching {where}, and how each value of two rows of one key merges."""

    columns: tuple[str, ...]
    select: str
    merges: dict[str, str]  # value column -> sum, min or max

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in ("source", "day", "days", *self.merges))


_TEST_VALUES = ("tests", "newest", "km", "pings_sent", "pings_lost")  # test_days' values
_SUMMARY_TYPES = {
    "source": "VARCHAR", "metric": "VARCHAR", "pair": "INTEGER", "day": "DATE", "days": "INTEGER",
    "flags": "VARCHAR", "bin": "INTEGER", "n": "BIGINT", "lo": "DOUBLE", "hi": "DOUBLE",
    "total": "BIGINT", "limiter": "VARCHAR", "tests": "BIGINT", "newest": "TIMESTAMP",
    "km": "DOUBLE", "pings_sent": "BIGINT", "pings_lost": "BIGINT",
}  # fmt: skip
_MERGED = {"sum": "{b} + {a}", "min": "least({b}, {a})", "max": "greatest({b}, {a})"}
_BINS_MERGE = {"n": "sum", "lo": "min", "hi": "max", "total": "sum"}
_OK_TESTS = "FROM measurements WHERE status = 'ok' AND started_utc IS NOT NULL {where}"
_DAY = "CAST(started_utc AS DATE) AS day, 1 AS days, coalesce(flags, '') AS flags"
_BIN_VALUES = "count(*) AS n, min(x) AS lo, max(x) AS hi, sum({total}) AS total"


def _value_total(x: str) -> str:
    """A one-value metric's share of its bin's sum, by its metric (metrics.total_sql)."""
    scales = " ".join(f"WHEN {m!r} THEN {METRICS[m].total_scale}" for m in VALUE_METRICS)
    return total_sql(x, f"CASE metric {scales} END")


_JOIN_PAIRS = "JOIN pairs p ON m.src = p.src AND m.dst = p.dst"
# the day summaries (each also per week and month): the histogram of each pair's RTT
# samples (rtt_bins) and of each one-value metric's values (value_bins), and each
# metric's tests (test_days: their count, newest start and distance, per limiter for
# throughput and capacity; loss's pings sent and lost, history.metrics.PINGS_SENT_SQL),
# per source, directed pair, UTC day and flags value
SUMMARIES = {
    "rtt_bins": _Summary(
        ("source", "pair", "day", "days", "flags", "bin", *_BINS_MERGE),
        f"SELECT source, p.pair, {_DAY}, {bin_sql('x')} AS bin, "
        f"{_BIN_VALUES.format(total=total_sql('x', METRICS['rtt'].total_scale))} FROM (SELECT "
        "source, src, dst, "
        f"started_utc, flags, unnest({RTT_SAMPLES_SQL}) AS x {_OK_TESTS}) m {_JOIN_PAIRS} "
        "WHERE x IS NOT NULL GROUP BY ALL",
        _BINS_MERGE,
    ),
    # the metrics' values side by side, unnested together: one scan of the rows
    "value_bins": _Summary(
        ("source", "metric", "pair", "day", "days", "flags", "bin", *_BINS_MERGE),
        f"SELECT source, metric, p.pair, {_DAY}, {bin_sql('x', True)} AS bin, "
        f"{_BIN_VALUES.format(total=_value_total('x'))} "
        "FROM (SELECT source, src, "
        f"dst, started_utc, flags, unnest({list(VALUE_METRICS)}) AS metric, "
        f"unnest([{', '.join(VALUE_METRICS.values())}]) AS x {_OK_TESTS}) m {_JOIN_PAIRS} "
        "WHERE x IS NOT NULL GROUP BY ALL",
        _BINS_MERGE,
    ),
    "test_days": _Summary(
        ("source", "metric", "pair", "day", "days", "flags", "limiter", *_TEST_VALUES),
        f"SELECT source, metric, p.pair, {_DAY}, CASE WHEN metric IN "
        "('throughput', 'capacity') THEN coalesce(limiter, '') ELSE '' END AS limiter, "
        "count(*) AS tests, max(started_utc) AS newest, max(distance_km) AS km, "
        "sum(CASE WHEN metric = 'loss' THEN coalesce(sent, 0) ELSE 0 END) AS pings_sent, "
        "sum(CASE WHEN metric = 'loss' THEN coalesce(lost, 0) ELSE 0 END) AS pings_lost "
        "FROM (SELECT source, src, dst, started_utc, flags, limiter, distance_km, "
        f"{PINGS_SENT_SQL} AS sent, {PINGS_LOST_SQL} AS lost, "
        f"unnest({list(PRESENT_SQL)}) AS metric, unnest([{', '.join(PRESENT_SQL.values())}]) "
        f"AS present {_OK_TESTS}) m {_JOIN_PAIRS} WHERE present GROUP BY ALL",
        {"tests": "sum", "newest": "max", "km": "max", "pings_sent": "sum", "pings_lost": "sum"},
    ),
}
SUMMARY_TABLES = tuple(SUMMARIES)
# the week rows (days = 7, day = its Monday), month rows (days = 31, day = its first) and
# quarter rows (days = 92, day = the first of January, April, July or October) from the
# day rows: a year's window reads quarters, then months, weeks and days only at its ends
# (a pair's quarter holds few more bins than its month: a third of the rows to merge)
PERIODS = {7: "week", 31: "month", 92: "quarter"}

_SCHEMA = [
    "CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    "CREATE TABLE sweeps (sweep_id VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, "
    "backend VARCHAR, emulated BOOLEAN, label VARCHAR, started_utc TIMESTAMP, "
    "rows BIGINT, format_version BIGINT, record VARCHAR, ingested_utc TIMESTAMP)",
    *(bulk.table_sql(table, _COLUMN_TYPES) for table in ("recent", "archive")),
    _VIEW,
    _PAIRS,
    *(bulk.table_sql(t, {c: _SUMMARY_TYPES[c] for c in s.columns}) for t, s in SUMMARIES.items()),
    "CREATE TABLE fingerprints (fingerprint VARCHAR PRIMARY KEY, "
    + ", ".join(f'"{f}" VARCHAR' for f in FINGERPRINT_FIELDS)
    + ")",
    "CREATE TABLE notified (episode_id VARCHAR PRIMARY KEY, status VARCHAR, sent_utc TIMESTAMP)",
    *judgments.TABLES,
    *_MESH,
]


def _period_select(table: str, unit: str, span: int, where: str) -> str:
    """The week, month or quarter rows of `table` from its day rows matching `where`."""
    summary = SUMMARIES[table]
    out = {"day": f"CAST(date_trunc('{unit}', day) AS DATE) AS first", "days": str(span)}
    out.update({c: f"{how}({c})" for c, how in summary.merges.items()})
    keys = ", ".join(("source", *summary.keys))
    return (
        f"SELECT {', '.join(out.get(c, c) for c in summary.columns)} FROM {table} "
        f"WHERE days = 1 {where} GROUP BY {keys}, first"
    )


def _number_pairs(
    con: duckdb.DuckDBPyConnection, where: str = "", params: Sequence[Any] = ()
) -> None:
    """Give the directed pairs of the rows matching `where` that have none a number."""
    con.execute(
        "INSERT INTO pairs SELECT (SELECT coalesce(max(pair), 0) FROM pairs) + "
        "CAST(row_number() OVER (ORDER BY src, dst) AS INTEGER), src, dst FROM ("
        "SELECT DISTINCT m.src, m.dst FROM measurements m ANTI JOIN pairs p "
        "ON m.src = p.src AND m.dst = p.dst "
        f"WHERE m.src IS NOT NULL AND m.dst IS NOT NULL {where})",
        list(params),
    )


_DAY_SCOPE = (
    "AND source = ? AND started_utc >= CAST(? AS DATE) "
    "AND started_utc < CAST(? AS DATE) + INTERVAL 1 DAY"
)


def refresh_bins(
    con: duckdb.DuckDBPyConnection,
    days: Iterable[tuple[str, str]] | None = None,
    tables: Sequence[str] = SUMMARY_TABLES,
) -> None:
    """Compute the day summaries (`tables`, of SUMMARIES) again for the (source, UTC
    day 'YYYY-MM-DD') given, and their weeks and months, from the stored rows; every
    day without `days` (inside the caller's transaction)."""
    if days is None:
        _number_pairs(con)
        for table in tables:
            con.execute(f"DELETE FROM {table}")
            # in day order: a window's filter on the day skips the blocks before it
            select = SUMMARIES[table].select.format(where="")
            con.execute(f"INSERT INTO {table} {select} ORDER BY day")
            for span, unit in PERIODS.items():
                select = _period_select(table, unit, span, "")
                con.execute(f"INSERT INTO {table} {select} ORDER BY first")
        return
    periods = set()
    for source, day in sorted(set(days)):
        _number_pairs(con, _DAY_SCOPE, [source, day, day])
        for table in tables:
            con.execute(
                f"DELETE FROM {table} WHERE source = ? AND days = 1 AND day = CAST(? AS DATE)",
                [source, day],
            )
            con.execute(
                f"INSERT INTO {table} " + SUMMARIES[table].select.format(where=_DAY_SCOPE),
                [source, day, day],
            )
        for span in PERIODS:
            periods.add((source, span, period_start(date.fromisoformat(day), span)))
    for source, span, first in sorted(periods):
        for table in tables:
            con.execute(
                f"DELETE FROM {table} WHERE source = ? AND days = {span} AND day = ?",
                [source, first],
            )
            where = "AND source = ? AND day >= ? AND day < ?"
            con.execute(
                f"INSERT INTO {table} " + _period_select(table, PERIODS[span], span, where),
                [source, first, period_end(first, span)],
            )


def add_bins(
    con: duckdb.DuckDBPyConnection, sweep_id: str, days: Iterable[tuple[str, str]]
) -> None:
    """Merge the day summaries of a sweep's rows on the (source, day)s given into those
    of those days and their weeks and months, the sweep new to them (inside the caller's
    transaction). The same rows as refresh_bins: counts and sums (integers) add up,
    smallest and largest are the smaller and larger of the two."""
    for source, day in sorted(set(days)):
        when = date.fromisoformat(day)
        scope = f"AND sweep_id = ? {_DAY_SCOPE}"
        _number_pairs(con, scope, [sweep_id, source, day, day])
        for table, summary in SUMMARIES.items():
            match = " AND ".join(f"a.{k} = b.{k}" for k in summary.keys)
            merged = ", ".join(
                f"{c} = " + _MERGED[how].format(b=f"b.{c}", a=f"a.{c}")
                for c, how in summary.merges.items()
            )
            con.execute(
                "CREATE OR REPLACE TEMP TABLE added AS " + summary.select.format(where=scope),
                [sweep_id, source, day, day],
            )
            # in place: the rows it shares with the day (week, month) updated, its others
            # added (a third of the time of rewriting the week's rows), in one statement
            # (MERGE: half the time of an UPDATE and an INSERT of the rows it lacks)
            for span, first in ((1, when), *((n, period_start(when, n)) for n in PERIODS)):
                values = {"day": "CAST(? AS DATE)", "days": str(span)}
                con.execute(
                    f"MERGE INTO {table} b USING added a ON (b.source = ? AND b.days = {span} "
                    f"AND b.day = CAST(? AS DATE) AND {match}) WHEN MATCHED THEN UPDATE SET "
                    f"{merged} WHEN NOT MATCHED THEN INSERT VALUES ("
                    + ", ".join(values.get(c, f"a.{c}") for c in summary.columns)
                    + ")",
                    [source, first, first],
                )
            con.execute("DROP TABLE added")


def delete_sweep(con: duckdb.DuckDBPyConnection, sweep_id: str) -> None:
    """Remove a sweep's rows and its sweeps row, and refresh the bins of its days (inside
    the caller's transaction)."""
    refresh_bins(con, _delete_rows(con, sweep_id))


def _delete_rows(con: duckdb.DuckDBPyConnection, sweep_id: str) -> set[tuple[str, str]]:
    """Remove a sweep's rows and its sweeps row; returns the (source, day)s they were on,
    whose bins the caller refreshes."""
    days = con.execute(
        "SELECT DISTINCT source, strftime(CAST(started_utc AS DATE), '%Y-%m-%d') "
        "FROM measurements WHERE sweep_id = ? AND started_utc IS NOT NULL",
        [sweep_id],
    ).fetchall()
    for table in ("recent", "archive", "sweeps"):
        con.execute(f"DELETE FROM {table} WHERE sweep_id = ?", [sweep_id])
    return {(r[0], r[1]) for r in days}


def _check_version(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    version = _version(con)
    if version != str(STORE_SCHEMA_VERSION):
        older = version is not None and version.isdigit() and int(version) < STORE_SCHEMA_VERSION
        fix = (
            f"run 'interregion history ingest --all {_results_option(path)}' (it upgrades an "
            "older store in place)"
            if older
            else "use the interregion that wrote it, or run 'interregion history rebuild "
            f"{_results_option(path)}'"
        )
        raise UserError(
            f"{path}: history store schema version {version or 'unknown'}, this interregion "
            f"uses version {STORE_SCHEMA_VERSION}: {fix}"
        )


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    con.begin()
    try:
        yield
    except BaseException:
        _stop(con)
        con.rollback()
        raise
    con.commit()


def _stop(con: duckdb.DuckDBPyConnection) -> None:
    """Stop what `con` may still be running: after ^C DuckDB's Python client raises while
    the query goes on, and a rollback or close waits for it to end (minutes)."""
    with contextlib.suppress(Exception):
        con.interrupt()


@contextlib.contextmanager
def opened(
    results: Path, *, read_only: bool = False, create: bool = False, path: Path | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the store of `results` (or the file `path`), closed on exit."""
    path = Path(path) if path is not None else store_path(results)
    con = connect(path, read_only=read_only, create=create)
    _OPEN.add(con)
    try:
        yield con
    except BaseException as e:
        _stop(con)
        refused = _system_refused(e)
        if refused:  # a full disk: one line; the transaction was rolled back
            raise RunFailure(
                f"{path}: the system refused a write ({refused}): the store "
                "keeps every row it held (the write was rolled back); free space and run the "
                "command again"
            ) from None
        raise
    finally:
        _OPEN.discard(con)
        con.close()


_OPEN: set[Any] = set()  # the connections opened() holds, on any thread
# what DuckDB says when the system refuses one of its writes (its IOException, or a
# TransactionException at commit carrying the OS error)
_REFUSED = ("No space left on device", "Disk quota exceeded", "Read-only file system")


def _system_refused(error: BaseException) -> str | None:
    """The OS error's words when `error` is DuckDB's report of a write the system refused
    (a full disk), else None."""
    if isinstance(error, OSError) and error.strerror:
        return error.strerror if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) else None
    text = str(error)
    return next((said for said in _REFUSED if said in text), None)


def interrupt_queries() -> None:
    """Stop the query each connection of opened() is running, on whatever thread: a signal
    reaches only the main thread's, and a process waits for its threads before it exits.
    The interrupted query raises in its own thread."""
    for con in list(_OPEN):
        _stop(con)


# ---- rows of a sweep ------------------------------------------------------------------


def _utc(text: str) -> str | None:
    """ISO 8601 (with Z) -> 'YYYY-MM-DD HH:MM:SS.ffffff' in UTC, naive; None if empty/bad."""
    t = parse_utc(text)
    if t is None or not YEARS[0] <= t.year <= YEARS[1]:
        return None
    return t.replace(tzinfo=None).isoformat(sep=" ")


_ANY = (-1e300, 1e300)  # a number without a range of its own: finite, at least


def _typed(column: str, text: Any) -> Any:
    if text is None or text == "":
        return None
    return _CONVERT[column](text)


def _converter(column: str) -> Callable[[Any], Any]:
    """A non-empty cell of `column` -> its value in the store (None: not a value)."""
    kind = _COLUMN_TYPES[column]
    if kind == "TIMESTAMP":
        return lambda text: _utc(str(text))
    if kind not in ("DOUBLE", "BIGINT"):
        return str
    low, high = value_range(column) or _ANY
    whole = kind == "BIGINT"

    def number(text: Any) -> float | int | None:
        try:
            value = float(text)
        except ValueError:
            return None
        # infinite, NaN or out of its range: not a value (and int(inf) would raise)
        if not low <= value <= high:  # False for NaN too
            return None
        return int(value) if whole else value

    return number


# each column's conversion, looked up once: a full-catalog sweep converts 350,000 cells
_CONVERT = {c: _converter(c) for c in _COLUMN_TYPES}
_MEASUREMENT_CONVERT = tuple((c, _CONVERT[c]) for c in MEASUREMENT_COLUMNS)


def ping_samples(sweep_dir: Path, round_no: int, host: str) -> list[float]:
    """The RTT samples (ms) host `host` pinged in round `round_no`, from its raw output
    (the path of store.raw_path, built as text: this runs once per row)."""
    path = os.path.join(sweep_dir, RAW_DIR, f"round-{round_no:03d}", f"{safe_name(host)}.json")
    try:
        with open(path, "rb") as f:  # its bytes: no decoding but the sample text's
            text = f.read()
    except OSError:
        return []
    doc, _why = host_doc(text)
    ping = (doc or {}).get("ping") or {}
    return parse_ping_samples(str(ping.get("stdout", "")))


def phase_samples(
    sweep_dir: Path, record: SweepRecord
) -> dict[tuple[str, str], tuple[list[float], list[float]]]:
    """{(src, dst): (RTT samples, those outside a host-wide stall)} of the sweep's ping
    phases, the last phase that probed a test winning (a retry's, as the test's row is
    the retry's). A row flagged host_stall holds the second: its figures leave the
    stalled samples out (orchestrator.results.stalls)."""
    out: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for entry in record.rounds:
        if not entry.ping_phase:
            continue
        raw = read_raw_round(sweep_dir, int(entry.round))
        texts = {src: raw.get(safe_name(src)) for src in {t[0] for t in entry.tests or []}}
        stalled = round_stalls(texts)
        for src, text in texts.items():
            for dst, values in samples_of(text).items():
                out_ = stalled.get((src, dst), set())
                kept = [x for i, x in enumerate(values) if i not in out_]
                out[(src, dst)] = (values, kept)
    return out


def _hosts_json(sweep_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(facts, placement) per host key from hosts.json; {} for what is not there."""
    try:
        doc = json.loads((sweep_dir / HOSTS_FILE).read_text())
    except (OSError, ValueError):
        return {}, {}
    if not isinstance(doc, dict):
        return {}, {}
    facts = doc.get("facts") or {}
    placement = {
        h["name"]: {"zone": h.get("zone", ""), "image_id": h.get("image_id", "")}
        for h in doc.get("hosts") or []
        if isinstance(h, dict) and "name" in h
    }
    return facts, placement


@dataclass
class Batch:
    """What one ingest or import writes: a sweeps row, its measurements and fingerprints."""

    sweep: dict[str, Any]
    rows: list[dict[str, Any]]
    fingerprints: dict[str, dict[str, str]]


def sweep_batch(results: Path, sweep_id: str) -> Batch:
    """The store's rows of one sweep folder (its record's format version checked)."""
    folder = store_sweep_dir(results, sweep_id)
    if is_study_dir(folder):  # before reading it as a sweep's record
        raise UserError(f"{folder} is a TCP study, not a sweep: the history holds sweeps only")
    record = load_record(results, sweep_id)
    csv_rows = read_rows(folder / MEASUREMENTS_FILE)
    # computed again: a folder written before the column has none
    csv_rows = flagged(csv_rows, record.params.duration_s)
    facts, placement = _hosts_json(folder)
    recorded = {name: p.to_json() for name, p in (record.placement or {}).items()}
    placement = {**placement, **recorded}
    source = EMULATED if record.emulated or is_emulated(record.backend) else MEASURED
    rows, prints = [], {}
    samples: dict[tuple[int, str], list[float]] = {}
    phase = phase_samples(folder, record)
    hashed: dict[tuple[str, ...], str] = {}  # a sweep's rows share a few fingerprints
    ping_phase = any(r.ping_phase for r in record.rounds)  # its pings: the agent's echoes
    for raw in csv_rows:
        # most cells of a row are empty: None without a call
        row = {c: None if (v := raw.get(c)) is None or v == "" else convert(v)
               for c, convert in _MEASUREMENT_CONVERT}  # fmt: skip
        src = f"{raw['src_cloud']}:{raw['src_region']}"
        fields = fingerprint_fields(
            row=raw, record=record, facts=facts, placement=placement, phase=ping_phase
        )
        values = tuple(fields.values())
        fp = hashed.get(values) or hashed.setdefault(values, fingerprint(fields))
        prints[fp] = fields
        round_no = row["round"] or 0
        dst = f"{raw['dst_cloud']}:{raw['dst_region']}"
        row["measure"] = measure_of(raw)
        if row["measure"] != SINGLE_STREAM:
            test_samples = []  # its pair's pings are its single_stream row's
        elif (src, dst) in phase:
            every, kept = phase[(src, dst)]
            test_samples = kept if HOST_STALL in parse_flags(raw.get("flags")) else every
        elif round_no:
            if (round_no, src) not in samples:
                samples[(round_no, src)] = ping_samples(folder, round_no, src)
            test_samples = samples[(round_no, src)]
        else:
            test_samples = []
        row.update(source=source, src=src, dst=dst, fingerprint=fp, rtt_samples_ms=test_samples)
        rows.append(row)
    started = min((r["started_utc"] for r in rows if r["started_utc"]), default=None)
    sweep = {
        "sweep_id": sweep_id,
        "source": source,
        "backend": record.backend,
        "emulated": source == EMULATED,
        "label": source,
        "started_utc": started or record.created_utc.replace(tzinfo=None).isoformat(sep=" "),
        "rows": len(rows),
        "format_version": record.format_version,
        "record": json.dumps(record.to_json()),
    }
    return Batch(sweep, rows, prints)


def _write_batch(con: duckdb.DuckDBPyConnection, batch: Batch) -> None:
    """Replace the batch's sweep in the store (inside the caller's transaction)."""
    sweep_id = batch.sweep["sweep_id"]
    # a new sweep has no rows to replace: skip scanning a year of rows for them
    replaced = bool(con.execute("SELECT 1 FROM sweeps WHERE sweep_id = ?", [sweep_id]).fetchone())
    old_days = _delete_rows(con, sweep_id) if replaced else set()
    con.execute(
        "INSERT INTO sweeps VALUES ($sweep_id, $source, $backend, $emulated, $label, "
        "CAST($started_utc AS TIMESTAMP), $rows, $format_version, $record, "
        "CAST(current_timestamp AS TIMESTAMP))",
        batch.sweep,
    )
    for fp, fields in batch.fingerprints.items():
        con.execute(
            f"INSERT OR IGNORE INTO fingerprints VALUES ({', '.join('?' * (1 + len(fields)))})",
            [fp, *(fields[k] for k in FINGERPRINT_FIELDS)],
        )
    bulk.insert(con, "recent", _COLUMN_TYPES, batch.rows)
    fill_run_values(con, sweep_id=sweep_id)
    days = {(r["source"], r["started_utc"][:10]) for r in batch.rows if r["started_utc"]}
    if replaced:  # the days of its old rows and of its new ones, once
        refresh_bins(con, old_days | days)
    else:  # its samples merged into its days' and weeks' bins: a quarter of a day's samples
        add_bins(con, sweep_id, days)


def _write_judged(con: duckdb.DuckDBPyConnection, batches: Sequence[Batch]) -> None:
    """Write `batches`, judge their paths and move old rows to the archive (inside the
    caller's transaction)."""
    for batch in batches:
        _write_batch(con, batch)
    debug(f"history: {counted(len(batches), 'batch', 'batches')} written; judging their paths")
    _judge(con, [b.sweep["sweep_id"] for b in batches])
    archive_old_rows(con)


def _judge(con: duckdb.DuckDBPyConnection, sweep_ids: Sequence[str]) -> None:
    """Change detection's judgments of the sweeps just written, saying which paths were
    judged again."""
    for line in judgments.judge_sweeps(con, sweep_ids):
        info(line)


def archive_old_rows(con: duckdb.DuckDBPyConnection) -> None:
    """Move each source's rows from before the day ARCHIVE_AFTER_DAYS before its latest
    sweep from `recent` to `archive`, ordered by pair, once more than ARCHIVE_CHUNK_DAYS
    of them are due (inside the caller's transaction)."""
    # cut at the start of a day: a sweep is not split unless it runs over midnight
    due = con.execute(
        "SELECT source, cutoff FROM (SELECT r.source, min(r.started_utc) AS oldest, "
        "date_trunc('day', any_value(l.latest)) - to_days(CAST(? AS INTEGER)) AS cutoff "
        "FROM recent r JOIN (SELECT source, max(started_utc) AS latest FROM sweeps "
        "GROUP BY source) l ON r.source = l.source GROUP BY r.source) "
        "WHERE oldest < cutoff - to_days(CAST(? AS INTEGER))",
        [ARCHIVE_AFTER_DAYS, ARCHIVE_CHUNK_DAYS],
    ).fetchall()
    for source, cutoff in due:
        where = "source = ? AND started_utc < ?"
        con.execute(
            f"INSERT INTO archive ({_QUOTED_COLUMNS}) SELECT {_QUOTED_COLUMNS} FROM recent "
            f"WHERE {where} "
            "ORDER BY src, dst, started_utc",
            [source, cutoff],
        )
        con.execute(f"DELETE FROM recent WHERE {where}", [source, cutoff])


def _shrinks(con: duckdb.DuckDBPyConnection, batch: Batch) -> str | None:
    """Why writing `batch` would lose stored rows (fewer rows than the store holds for
    its sweep: a file damaged, cut short or gone); None when it would not."""
    sweep_id = batch.sweep["sweep_id"]
    held = con.execute("SELECT rows FROM sweeps WHERE sweep_id = ?", [sweep_id]).fetchone()
    if held is None or len(batch.rows) >= held[0]:
        return None
    return (
        f"{sweep_id}: its files give {len(batch.rows)} rows, the store holds {held[0]}: not "
        "replacing them (pass --replace to replace them anyway)"
    )


def ingest_sweep(results: Path, sweep_id: str, replace: bool = False) -> int:
    """Put one sweep's rows into `results/history.duckdb`, replacing any it had there,
    but never with fewer rows unless `replace` (an unreadable or shorter CSV would
    lose what was measured). Returns the number of rows. A sweep calls it as it ends."""
    batch = sweep_batch(results, sweep_id)
    debug(f"history: {sweep_id}: {counted(len(batch.rows), 'row')} read")
    with opened(results, create=True) as con, transaction(con):
        problem = None if replace else _shrinks(con, batch)
        if problem:
            raise UserError(problem)
        _write_judged(con, [batch])
    return len(batch.rows)


def sweep_ids(results: Path) -> list[str]:
    """Ids of the sweep folders under `results` (those with a sweep.json), oldest first."""
    found = (p.parent for p in Path(results).glob(f"*/{SWEEP_FILE}"))
    return sorted(p.name for p in found if not is_study_dir(p))  # a study is no sweep


def ingest_all(
    results: Path,
    warn: Any = None,
    path: Path | None = None,
    replace: bool = False,
    rule: Any = None,
) -> tuple[int, int]:
    """Ingest every sweep under `results` and every imported file. A sweep that cannot be
    read (another format version, a damaged record), or whose files now give fewer rows
    than the store holds (unless `replace`), is left out with a one-line warning.
    Returns (sweeps, rows)."""
    batches: list[Batch] = []
    for sweep_id in sweep_ids(results):
        try:
            batches.append(sweep_batch(results, sweep_id))
            debug(f"history: {sweep_id}: {counted(len(batches[-1].rows), 'row')} read")
        except UserError as e:
            if warn:
                warn(f"{sweep_id} left out: {e}")
    batches.extend(_imported_batches(results, warn))
    written = []
    with opened(results, create=True, path=path) as con, transaction(con):
        if rule is not None:  # a rebuild's: the old store's change-detection rule
            judgments.set_rule(con, rule)
        for batch in batches:
            problem = None if replace else _shrinks(con, batch)
            if not problem:
                written.append(batch)
            elif warn:
                warn(f"{batch.sweep['sweep_id']} left out: {problem}")
        _write_judged(con, written)
    return len(written), sum(len(b.rows) for b in written)


def rebuild(results: Path, warn: Any = None) -> tuple[int, int]:
    """Recreate the store from `results/*/` and `results/imports/` alone: built under a
    temporary name, then renamed over the old one (a failed rebuild keeps the old)."""
    path = store_path(results)
    tmp = path.with_name(f".{path.name}.rebuild-{os.getpid()}")
    rule = None
    with contextlib.suppress(UserError, OSError), opened(results, read_only=True) as con:
        rule = judgments.rule(con)  # kept: the store's change detection goes on as set
    try:
        counts = ingest_all(results, warn, path=tmp, rule=rule)
        if path.exists():
            with opened(results, path=tmp) as con:
                _keep_mesh(con, path, warn)
        os.replace(tmp, path)
        Path(f"{path}.wal").unlink(missing_ok=True)
    finally:
        for leftover in (tmp, Path(f"{tmp}.wal")):
            leftover.unlink(missing_ok=True)
    return counts


def _keep_mesh(con: duckdb.DuckDBPyConnection, old: Path, warn: Any = None) -> None:
    """The mesh's rows, which no folder a rebuild reads holds, copied as they are from the
    store at `old` into `con` (a rebuilt store): its samples, bins and judgments (made
    once), its rows of `sweeps` and `notified`, and its `meta` (where the next pull goes
    on). A store that cannot be read loses them with a warning (its pulled records are
    kept in results/mesh/<id>/pulled/); one in use stops the rebuild."""
    import duckdb

    quoted = str(old).replace("'", "''")
    try:
        con.execute(f"ATTACH '{quoted}' AS old (READ_ONLY)")
    except duckdb.Error as e:
        error = _open_error(old, e)
        if isinstance(error, StoreBusy):
            raise error from None
        if warn:
            warn(f"the mesh's rows of {old} are not kept: it cannot be read")
        return
    try:
        held = {r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'old'"
        ).fetchall()}  # fmt: skip
        if "mesh_bins" not in held:
            return
        mesh = "source IN (SELECT DISTINCT source FROM old.mesh_bins)"
        ids = (
            "(SELECT DISTINCT mesh_id FROM old.mesh_bins "
            "UNION SELECT DISTINCT mesh_id FROM old.mesh_samples)"
        )
        with transaction(con):
            for table in ("mesh_samples", "mesh_bins"):
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM old.{table}")
            for table in judgments.JUDGED:  # the mesh's rows in them: its judgments
                con.execute(
                    f"INSERT INTO {table} BY NAME SELECT {judgments.typed_select(table)} "
                    f"FROM old.{table} WHERE {mesh}"
                )
            con.execute(f"DELETE FROM sweeps WHERE sweep_id IN {ids}")
            con.execute(
                f"INSERT INTO sweeps BY NAME SELECT * FROM old.sweeps WHERE sweep_id IN {ids}"
            )
            con.execute(
                "INSERT INTO notified BY NAME SELECT * FROM old.notified WHERE episode_id IN "
                f"(SELECT id FROM old.episodes WHERE {mesh})"
            )
            con.execute("DELETE FROM meta WHERE starts_with(key, 'mesh_')")
            con.execute("INSERT INTO meta SELECT * FROM old.meta WHERE starts_with(key, 'mesh_')")
    finally:
        con.execute("DETACH old")


# ---- imported measurements ------------------------------------------------------------


REQUIRED_IMPORT = ("src_cloud", "src_region", "dst_cloud", "dst_region")


def read_import_csv(text: str, name: str) -> list[dict[str, str]]:
    """Rows of an external CSV in our schema: the four region columns and rtt_avg_ms and/or
    throughput_bps are required (as `report --input`); columns outside the schema are
    ignored. One-line errors for what cannot be read."""
    text = text.lstrip("\ufeff")
    header = text.split("\n", 1)[0]
    for delimiter in (",", ";", "\t", "|"):
        columns = [c.strip() for c in header.split(delimiter)]
        if set(REQUIRED_IMPORT) <= set(columns):
            break
    else:
        raise UserError(
            f"{name}: the header lacks {', '.join(REQUIRED_IMPORT)}: import takes a CSV in "
            "the results schema (see docs/results.md); convert other formats "
            "with 'interregion history convert'"
        )
    if not {"rtt_avg_ms", "throughput_bps"} & set(columns):
        raise UserError(
            f"{name}: neither rtt_avg_ms nor throughput_bps is a column: nothing to load"
        )
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    numeric = [(i, c) for i, c in enumerate(columns) if c in _COLUMN_TYPES and value_range(c)]
    rows = []
    with csv_errors(name, reader):
        next(reader)
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            for i, column in numeric:
                problem = number_problem(column, cells[i].strip()) if i < len(cells) else None
                if problem:
                    raise UserError(
                        f"{name}: line {reader.line_num}, {column}: {problem}: fix or remove "
                        "the row"
                    )
            rows.append(
                {c: (cells[i].strip() if i < len(cells) else "") for i, c in enumerate(columns)}
            )
    return rows


def import_batch(rows: Sequence[Mapping[str, str]], source: str, month: str, label: str) -> Batch:
    """The store's rows of an imported file: a dated, labelled source of its own."""
    sweep_id = f"{source}@{month}"
    first_of_month = f"{month}-01 00:00:00"
    out, prints = [], {}
    for raw in rows:
        row = {c: _typed(c, raw.get(c)) for c in MEASUREMENT_COLUMNS}
        fields = imported_fields(raw, source)
        fp = fingerprint(fields)
        prints[fp] = fields
        measure = measure_of(raw)
        if measure not in MEASURES:
            raise UserError(
                f"imported row {raw.get('src_cloud')}:{raw.get('src_region')} -> "
                f"{raw.get('dst_cloud')}:{raw.get('dst_region')}: measure {measure!r} is not "
                f"one of {', '.join(MEASURES)} (empty: single_stream)"
            )
        if not any(row[k] is not None and row[k] >= 0 for k in ("rtt_avg_ms", "throughput_bps")):
            continue
        row.update(
            measure=measure,
            sweep_id=sweep_id,
            started_utc=row["started_utc"] or first_of_month,
            status=row["status"] or "ok",
            source=source,
            src=f"{raw['src_cloud']}:{raw['src_region']}",
            dst=f"{raw['dst_cloud']}:{raw['dst_region']}",
            fingerprint=fp,
            rtt_samples_ms=[],
        )
        out.append(row)
    sweep = {
        "sweep_id": sweep_id,
        "source": source,
        "backend": f"import:{source}",
        "emulated": False,
        "label": label,
        "started_utc": first_of_month,
        "rows": len(out),
        "format_version": None,
        "record": json.dumps({"source": source, "date": month, "label": label}),
    }
    return Batch(sweep, out, prints)


def tier_source(source: str, tier: str | None) -> str:
    """The source an imported row belongs to: `source` for the default tier (or none
    named), `source-<tier>` for another (skyplane-standard, skyplane-premium-standard):
    rows of different network tiers are different measurements, never pooled."""
    tier = (tier or "").strip().upper()
    if tier in ("", DEFAULT_TIER):
        return source
    return f"{source}-{re.sub(r'[^a-z0-9]+', '-', tier.lower()).strip('-')}"


def import_batches(
    rows: Sequence[Mapping[str, str]], source: str, month: str, label: str
) -> list[Batch]:
    """The store's rows of an imported file, one batch (a source of its own) per network
    tier its rows name (tier_source); flags computed over the whole file first."""
    if rows and "flags" not in rows[0]:
        rows = flagged(rows)
    groups: dict[str, list[Mapping[str, str]]] = {}
    for raw in rows:
        groups.setdefault(tier_source(source, raw.get("network_tier")), []).append(raw)
    batches = []
    for name, group in groups.items():
        tier = "" if name == source else f" ({name[len(source) + 1 :]} tier)"
        batches.append(import_batch(group, name, month, label + tier))
    return batches


def _imported_batches(results: Path, warn: Any = None) -> list[Batch]:
    """The kept copies of imported files; one that cannot be read (damaged, not UTF-8)
    is left out with a warning, or is an error without `warn`."""
    batches = []
    for meta_path in sorted((Path(results) / IMPORTS_DIR).glob("*/*.json")):
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(meta, dict):
            meta = {}  # kept state of another shape: left out with a warning (KeyError)
        csv_path = meta_path.with_suffix(".csv")
        try:
            rows = read_import_csv(read_text(csv_path, "CSV file"), str(csv_path))
            batches.extend(
                import_batches(rows, str(meta["source"]), str(meta["date"]), str(meta["label"]))
            )
        except (UserError, FileNotFoundError, KeyError, TypeError, ValueError) as e:
            if not warn:
                raise UserError(f"{csv_path}: cannot be loaded again ({e})") from None
            warn(f"{csv_path} left out: {e}")
    return batches


def write_batches(
    results: Path, batches: Sequence[Batch], before_commit: Callable[[], None] | None = None
) -> None:
    """Write `batches` (an imported file's: a source per network tier) in one transaction,
    judge their paths and move old rows to the archive; `before_commit` runs last, inside
    the transaction, so what it raises undoes the write (orchestrator.exchange.importer
    puts its kept copies in place there)."""
    with opened(results, create=True) as con, transaction(con):
        _write_judged(con, batches)
        if before_commit is not None:
            before_commit()


# ---- reading the store ----------------------------------------------------------------


def stored_fingerprints(
    con: duckdb.DuckDBPyConnection, fps: Sequence[str]
) -> dict[str, dict[str, str]]:
    """{fingerprint: its fields} for the given fingerprints."""
    if not fps:
        return {}
    cur = con.execute(
        "SELECT * FROM fingerprints WHERE fingerprint IN (SELECT unnest(?))", [list(fps)]
    )
    names = [d[0] for d in cur.description]
    return {r[0]: dict(zip(names[1:], r[1:], strict=True)) for r in cur.fetchall()}


def notified(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """{episode id: the status last sent}."""
    return dict(con.execute("SELECT episode_id, status FROM notified").fetchall())


def mark_notified(con: duckdb.DuckDBPyConnection, episode_id: str, status: str) -> None:
    with transaction(con):
        con.execute("DELETE FROM notified WHERE episode_id = ?", [episode_id])
        con.execute(
            "INSERT INTO notified VALUES (?, ?, CAST(current_timestamp AS TIMESTAMP))",
            [episode_id, status],
        )


def fingerprint_changes(
    con: duckdb.DuckDBPyConnection, sweep_id: str
) -> list[tuple[list[str], int]]:
    """How a sweep's configuration differs from each pair's previous test of the same source
    and backend: [(the fields that differ, as `name: old -> new`, number of pairs)]."""
    from orchestrator.history.fingerprint import differences

    rows = con.execute(
        "WITH cur AS (SELECT source, backend, src, dst, fingerprint, started_utc "
        "FROM measurements WHERE sweep_id = ?), "
        "prev AS (SELECT m.src, m.dst, arg_max(m.fingerprint, m.started_utc) AS fp "
        "FROM measurements m JOIN cur ON m.source = cur.source AND m.backend = cur.backend "
        "AND m.src = cur.src AND m.dst = cur.dst AND m.started_utc < cur.started_utc "
        "WHERE m.sweep_id <> ? GROUP BY m.src, m.dst) "
        "SELECT prev.fp, cur.fingerprint, count(*) FROM cur JOIN prev "
        "ON cur.src = prev.src AND cur.dst = prev.dst WHERE prev.fp <> cur.fingerprint "
        "GROUP BY prev.fp, cur.fingerprint ORDER BY 3 DESC",
        [sweep_id, sweep_id],
    ).fetchall()
    fields = stored_fingerprints(con, sorted({r[0] for r in rows} | {r[1] for r in rows}))
    merged: dict[tuple[str, ...], int] = {}
    for old, new, count in rows:
        diff = tuple(differences(fields.get(old, {}), fields.get(new, {})))
        merged[diff] = merged.get(diff, 0) + int(count)
    return [(list(d), n) for d, n in merged.items()]
