"""Change detection in the store: each run judged once, at ingest, and kept.

When a sweep's rows are written (ingest, import, rebuild), `judge_sweeps` judges each new
run of each path (changes.PathJudge) from the path's kept state, and writes the tables
docs/history.md describes ('What the store keeps'): `judgments` (never changed
afterwards), `episodes`, `config_changes`, `calibrations` and `detection_state`, which
`detection` reads: `changes`, the site and notifications never judge anything again. A
run out of order, or a sweep replaced or gone, judges its paths again (`_repair`; 'Order
and repair'); a changed rule, everything (`rejudge`).
"""

from __future__ import annotations

import bisect
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, astuple, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson

from orchestrator.core import counted, gc_paused, of_epoch_ms, read_utc, stamp, warning
from orchestrator.history import bulk
from orchestrator.history import changes as ch

if TYPE_CHECKING:
    import duckdb

RULE_KEY = "detection_rule"
_JUDGMENT_COLUMNS = {
    "source": "VARCHAR", "backend": "VARCHAR", "metric": "VARCHAR", "src": "VARCHAR",
    "dst": "VARCHAR", "sweep_id": "VARCHAR", "t": "TIMESTAMP", "fingerprint": "VARCHAR",
    "value": "DOUBLE", "status": "VARCHAR", "baseline": "DOUBLE", "scale": "DOUBLE",
    "own_scale": "DOUBLE", "pooled_scale": "DOUBLE", "baseline_runs": "INTEGER",
    "k1": "DOUBLE", "k2": "DOUBLE", "deviation": "DOUBLE", "flag_threshold": "DOUBLE",
    "flagged": "BOOLEAN", "episode": "VARCHAR",
}  # fmt: skip
_EPISODE_COLUMNS = {
    "id": "VARCHAR", "source": "VARCHAR", "backend": "VARCHAR", "metric": "VARCHAR",
    "src": "VARCHAR", "dst": "VARCHAR", "status": "VARCHAR", "started_run": "VARCHAR",
    "started_t": "TIMESTAMP", "confirmed_run": "VARCHAR", "confirmed_t": "TIMESTAMP",
    "closed_run": "VARCHAR", "closed_t": "TIMESTAMP", "direction": "INTEGER",
    "old_level": "DOUBLE", "new_level": "DOUBLE", "z": "DOUBLE", "k1": "DOUBLE",
    "k2": "DOUBLE", "state": "VARCHAR",
}  # fmt: skip
_CONFIG_COLUMNS = {
    "source": "VARCHAR", "backend": "VARCHAR", "metric": "VARCHAR", "src": "VARCHAR",
    "dst": "VARCHAR", "sweep_id": "VARCHAR", "t": "TIMESTAMP", "old_fingerprint": "VARCHAR",
    "new_fingerprint": "VARCHAR",
}  # fmt: skip
# the times of the tables above: DuckDB's TIMESTAMP, naive, in UTC (as the store's
# started_utc), to the millisecond; before store version 12 those of `episodes` and
# `config_changes` were text ("" for none), which typed_time converts
TIMES = {"episodes": ("started_t", "confirmed_t", "closed_t"), "config_changes": ("t",)}


_STATE_COLUMNS = {c: "VARCHAR" for c in
                  ("source", "backend", "metric", "src", "dst", "state", "shown")}  # fmt: skip
TABLES = (
    bulk.table_sql("judgments", _JUDGMENT_COLUMNS),
    bulk.table_sql("episodes", _EPISODE_COLUMNS),
    bulk.table_sql("config_changes", _CONFIG_COLUMNS),
    "CREATE TABLE calibrations (source VARCHAR, backend VARCHAR, metric VARCHAR, "
    "sweep_id VARCHAR, judged INTEGER, beyond INTEGER, expected DOUBLE, inflation DOUBLE, "
    "k1 DOUBLE, k2 DOUBLE)",
    bulk.table_sql("detection_state", _STATE_COLUMNS),
)
JUDGED = ("judgments", "episodes", "config_changes", "calibrations", "detection_state")
# a run's time as detection judges it: its test's start, to the millisecond, read as
# whole milliseconds since the epoch (core.of_epoch_ms)
T_SQL = "epoch_ms(started_utc)"


def typed_time(column: str) -> str:
    """SQL: a time column of a version-11 store (text, "" for none) or of this one
    (TIMESTAMP) as a TIMESTAMP."""
    return f"CAST(nullif(CAST({column} AS VARCHAR), '') AS TIMESTAMP)"


def typed_select(table: str) -> str:
    """The select list of `table`'s rows with their times typed (typed_time)."""
    times = TIMES.get(table)
    if not times:
        return "*"
    return f"* REPLACE ({', '.join(f'{typed_time(c)} AS {c}' for c in times)})"


def type_times(con: duckdb.DuckDBPyConnection) -> None:
    """Version 11 -> 12: the times of `episodes` and `config_changes`, text until then,
    as TIMESTAMP (inside the caller's transaction). The states' JSON keeps its text."""
    for table, columns in TIMES.items():
        for column in columns:
            con.execute(
                f"ALTER TABLE {table} ALTER {column} SET DATA TYPE TIMESTAMP "
                f"USING {typed_time(column)}"
            )


def rule(con: duckdb.DuckDBPyConnection) -> ch.Params:
    """The rule the store judges with (changes.Params; the default until set_rule)."""
    row = con.execute("SELECT value FROM meta WHERE key = ?", [RULE_KEY]).fetchone()
    if not row:
        return ch.Params()
    try:
        return ch.Params.from_doc(json.loads(row[0]))
    except ValueError as e:  # kept state damaged: every later build would fail on it
        warning(
            f"the store's judging rule cannot be read ({e}): judging with the default; "
            "set one again with 'interregion changes --baseline-runs N'"
        )
        return ch.Params()


def set_rule(con: duckdb.DuckDBPyConnection, p: ch.Params) -> None:
    """Store `p` as the rule (inside the caller's transaction; the caller judges every
    path again when it changed: rejudge)."""
    if p != rule(con):
        con.execute("DELETE FROM meta WHERE key = ?", [RULE_KEY])
        con.execute("INSERT INTO meta VALUES (?, ?)", [RULE_KEY, json.dumps(asdict(p))])


# ---- what detection reads of a sweep ---------------------------------------------------


def _inputs(
    con: duckdb.DuckDBPyConnection, where: str, params: Sequence[Any]
) -> list[tuple[ch.SeriesKey, ch.Run]]:
    """(directed key, run) of the ok tests matching `where`, both metrics, in time order;
    only the values detection judges (changes.judgeable)."""
    from orchestrator.history import metrics as v

    # a test's value as detection reads it (the views' run values), less the values whose
    # flags say they are wrong: asymmetric and few_samples stay (a direction that moved
    # alone is what detection judges per direction; a few echoes still give a level)
    keeps = v.DETECTION_KEEPS
    rows = con.execute(
        f"SELECT source, coalesce(backend, ''), src, dst, sweep_id, {T_SQL}, "
        "coalesce(fingerprint, ''), "
        f"CASE WHEN {v.valid_sql('rtt', keeps)} THEN {v.METRICS['rtt'].run_sql} END, "
        f"CASE WHEN {v.valid_sql('throughput', keeps)} AND {v.SINGLE_STREAM_SQL} "
        "THEN throughput_bps END "
        f"FROM measurements WHERE status = 'ok' AND started_utc IS NOT NULL AND ({where}) "
        "ORDER BY started_utc, src, dst",
        list(params),
    ).fetchall()
    out = []
    for source, backend, src, dst, sweep_id, t, fp, rtt, tput in rows:
        when = of_epoch_ms(t)
        for metric, value in (("rtt", rtt), ("throughput", tput)):
            if value is not None and ch.judgeable(metric, value):
                key = ch.SeriesKey(source, backend, metric, src, dst)
                out.append((key, ch.Run(sweep_id, when, float(value), fp)))
    return out


def _sweep_order(con: duckdb.DuckDBPyConnection, ids: Iterable[str]) -> list[str]:
    """`ids` in the order they are judged: by their start, then id (gone ones first)."""
    found = "SELECT sweep_id, started_utc FROM sweeps WHERE sweep_id IN (SELECT unnest(?))"
    starts = dict(con.execute(found, [sorted(set(ids))]).fetchall())
    return sorted(set(ids), key=lambda s: (starts.get(s) is not None, starts.get(s) or 0, s))


# ---- the states ------------------------------------------------------------------------


def _load(
    con: duckdb.DuckDBPyConnection, sources: Iterable[str], p: ch.Params
) -> dict[ch.SeriesKey, ch.PathJudge]:
    rows = con.execute(
        "SELECT source, backend, metric, src, dst, state FROM detection_state "
        "WHERE source IN (SELECT unnest(?))",
        [sorted(set(sources))],
    ).fetchall()
    out = {}
    with gc_paused():
        for *names, state in rows:
            key = ch.SeriesKey(*names)
            out[key] = ch.PathJudge.of_doc(key, p, orjson.loads(state))
    return out


def _shown(judge: ch.PathJudge) -> dict[str, Any]:
    """What `detection` reads of a path's state."""
    baselines = judge.baselines()
    return {
        "baselines": [[k.src, k.dst, level, scale] for k, (level, scale) in baselines.items()],
        "suspects": [[s.run_id, stamp(s.t), [list(d) for d in s.deviations]]
                     for s in judge.suspects()],
        "waiting": [[k.src, k.dst, runs, needed] for k, runs, needed in judge.waiting()],
    }  # fmt: skip


def _save_states(
    con: duckdb.DuckDBPyConnection, judges: Mapping[ch.SeriesKey, ch.PathJudge]
) -> None:
    """Replace the states of `judges`' paths (through a temporary table: a list of
    thousands of keys as a query parameter costs DuckDB seconds)."""
    if not judges:
        return
    con.execute(bulk.table_sql("new_state", _STATE_COLUMNS, "CREATE OR REPLACE TEMP TABLE"))
    bulk.insert(con, "new_state", _STATE_COLUMNS, (
        {**k._asdict(), "shown": orjson.dumps(_shown(j)).decode(),
         "state": orjson.dumps(j.doc()).decode()}
        for k, j in judges.items()
    ))  # fmt: skip
    con.execute(
        "DELETE FROM detection_state d USING new_state n WHERE d.source = n.source AND "
        "d.backend = n.backend AND d.metric = n.metric AND d.src = n.src AND d.dst = n.dst"
    )
    con.execute("INSERT INTO detection_state SELECT * FROM new_state")
    con.execute("DROP TABLE new_state")


# ---- writing what was judged -----------------------------------------------------------


def _episode_row(e: ch.Episode) -> dict[str, Any]:
    """Its path's columns, then each other column the episode's attribute of that name."""
    own = [c for c in _EPISODE_COLUMNS if c not in (*ch.SeriesKey._fields, "state")]
    state = orjson.dumps(ch.episode_state(e)).decode()
    return {**e.key._asdict(), **{c: getattr(e, c) for c in own}, "state": state}


def _write(con: duckdb.DuckDBPyConnection, judged: ch.Judged, sweep_id: str) -> None:
    # orjson writes the aware times, DuckDB reads them into UTC
    bulk.insert(con, "judgments", _JUDGMENT_COLUMNS, (
        {"source": path.source, "backend": path.backend, "metric": path.metric,
         **j._asdict(), "sweep_id": j.run_id} for path, j in judged.judgments
    ))  # fmt: skip
    if judged.episodes:
        con.execute("DELETE FROM episodes WHERE id IN (SELECT unnest(?))", [list(judged.episodes)])
        bulk.insert(con, "episodes", _EPISODE_COLUMNS,
                (_episode_row(e) for e in judged.episodes.values()))  # fmt: skip
    bulk.insert(con, "config_changes", _CONFIG_COLUMNS, (
        {**c.key._asdict(), "sweep_id": c.run_id, "t": c.t,
         "old_fingerprint": c.old_fingerprint, "new_fingerprint": c.new_fingerprint}
        for c in judged.config_changes
    ))  # fmt: skip
    for group, cal in judged.calibrations.items():
        con.execute(
            "INSERT INTO calibrations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [*group, sweep_id, *astuple(cal)],
        )


# ---- judging ---------------------------------------------------------------------------


CHUNK_SWEEPS = 32  # sweeps read at a time (a year's rebuild: 1,460 of 12,000 runs each)


def judge_sweeps(con: duckdb.DuckDBPyConnection, sweep_ids: Sequence[str]) -> list[str]:
    """Judge the runs of the sweeps just written, replaced or removed (inside the
    caller's transaction, after their rows were written): in order where they come after
    each path's latest judged run, else by judging those paths again. Returns a line per
    source whose paths were judged again."""
    p = rule(con)
    ids = _sweep_order(con, sweep_ids)
    if not ids:
        return []
    sources = {r[0] for r in con.execute(
        "SELECT DISTINCT source FROM sweeps WHERE sweep_id IN (SELECT unnest(?)) UNION "
        "SELECT DISTINCT source FROM judgments WHERE sweep_id IN (SELECT unnest(?))",
        [ids, ids]).fetchall()}  # fmt: skip
    judges = _load(con, sources, p)
    judge = ch.Judge(p, judges)
    touched: set[ch.SeriesKey] = set()
    stale: set[ch.SeriesKey] = set()
    since: dict[str, datetime] = {}  # per source: the earliest run judged again
    with gc_paused():
        for at in range(0, len(ids), CHUNK_SWEEPS):
            chunk = ids[at : at + CHUNK_SWEEPS]
            new = _inputs(con, "sweep_id IN (SELECT unnest(?))", [chunk])
            had = _by_path(_judged_inputs(con, chunk))  # none unless ingested before
            mine = _by_path(new) if had else {}
            earliest: dict[ch.SeriesKey, tuple[datetime, str]] = {}
            for key, run in new:  # in time order: a path's first is its earliest
                earliest.setdefault(key.path(), (run.t, run.run_id))
            for path in earliest.keys() | had.keys():
                if path in stale:
                    continue
                before = had.get(path)
                if before is not None and mine.get(path) == before:
                    continue  # ingested again as it was
                known = judges.get(path)
                first = min(x for x in (earliest.get(path), *(
                    (r[3], r[2]) for r in before or ())) if x is not None)  # fmt: skip
                if before or (known is not None and known.last and first <= known.last):
                    stale.add(path)
                    since[path.source] = min(since.get(path.source, first[0]), first[0])
            by_sweep: dict[str, list[tuple[ch.SeriesKey, ch.Run]]] = defaultdict(list)
            for key, run in new:
                path = key.path()
                if path not in stale and path not in had:
                    by_sweep[run.run_id].append((key, run))
                    touched.add(path)
            for sweep_id in chunk:
                if by_sweep.get(sweep_id):
                    _write(con, judge.sweep(sweep_id, by_sweep[sweep_id]), sweep_id)
    judges.update(_repair(con, stale, p))
    _save_states(con, {k: judges[k] for k in touched | stale})
    pairs = {s: len({(k.backend, k.src, k.dst) for k in stale if k.source == s}) for s in since}
    return [
        f"history: {counted(pairs[s], 'pair')} of {s} judged again from {stamp(since[s])} on "
        "(a sweep added out of order, replaced or removed)"
        for s in sorted(since)
    ]


def _by_path(
    runs: Iterable[tuple[ch.SeriesKey, ch.Run]],
) -> dict[ch.SeriesKey, set[tuple[Any, ...]]]:
    out: dict[ch.SeriesKey, set[tuple[Any, ...]]] = defaultdict(set)
    for key, run in runs:
        out[key.path()].add((key.src, key.dst, *run))
    return out


def _judged_inputs(
    con: duckdb.DuckDBPyConnection, ids: Sequence[str]
) -> list[tuple[ch.SeriesKey, ch.Run]]:
    rows = con.execute(
        "SELECT source, backend, metric, src, dst, sweep_id, epoch_ms(t), fingerprint, value "
        "FROM judgments WHERE sweep_id IN (SELECT unnest(?))",
        [list(ids)],
    ).fetchall()
    return [(ch.SeriesKey(*r[:5]), ch.Run(r[5], of_epoch_ms(r[6]), r[8], r[7])) for r in rows]


_STALE_COLUMNS = {c: "VARCHAR" for c in ("source", "backend", "metric", "a", "b")}
_ON_STALE = (
    "x.source = s.source AND x.backend = s.backend AND x.metric = s.metric AND "
    "least(x.src, x.dst) = s.a AND greatest(x.src, x.dst) = s.b"
)


def _repair(
    con: duckdb.DuckDBPyConnection, paths: set[ch.SeriesKey], p: ch.Params
) -> dict[ch.SeriesKey, ch.PathJudge]:
    """Judge `paths` again from their first run, each run with the pooled scale and k
    its row had (or its nearest earlier run's); their rows, episodes and configuration
    changes replaced. In bulk: a full sweep replaced is thousands of paths."""
    if not paths:
        return {}
    con.execute(bulk.table_sql("stale", _STALE_COLUMNS, "CREATE OR REPLACE TEMP TABLE"))
    bulk.insert(con, "stale", _STALE_COLUMNS, (dict(zip(_STALE_COLUMNS, k, strict=True))
                                           for k in paths))  # fmt: skip
    inputs = _inputs(
        con,
        "EXISTS (SELECT 1 FROM stale s WHERE s.source = measurements.source AND "
        "s.backend = coalesce(measurements.backend, '') AND "
        "s.a = least(measurements.src, measurements.dst) AND "
        "s.b = greatest(measurements.src, measurements.dst))",
        [],
    )
    runs: dict[ch.SeriesKey, list[ch.Series]] = defaultdict(list)
    for key, run in inputs:
        if key.path() in paths:
            runs[key.path()].append(ch.Series(key, [run]))
    priors: dict[ch.SeriesKey, list[_Prior]] = defaultdict(list)
    for *names, run_id, t, pooled, k1, k2 in con.execute(
        "SELECT x.source, x.backend, x.metric, x.src, x.dst, x.sweep_id, epoch_ms(x.t), "
        f"x.pooled_scale, x.k1, x.k2 FROM judgments x JOIN stale s ON {_ON_STALE} "
        "ORDER BY x.t, x.sweep_id"
    ).fetchall():
        priors[ch.SeriesKey(*names)].append((of_epoch_ms(t), run_id, pooled, k1, k2))
    for table in ("judgments", "episodes", "config_changes"):
        con.execute(f"DELETE FROM {table} x USING stale s WHERE {_ON_STALE}")
    con.execute("DROP TABLE stale")
    out: dict[ch.SeriesKey, ch.PathJudge] = {}
    judged = ch.Judged()
    for path in sorted(paths):
        judge = out[path] = ch.PathJudge(path, p)
        for run_id, sweep_runs in ch.sweeps_of(runs.get(path, [])):
            by_direction = {0 if k.src == path.src else 1: r for k, r in sweep_runs}
            ks: tuple[float, float] | None = None
            for i, run in by_direction.items():
                d = judge.direction(i)
                prior = _prior(priors.get(d.key, []), (run.t, run_id))
                d.pooled = prior[0] if prior else None
                ks = ks or (prior[1:] if prior else None)
            rule_now = replace(p, k1=ks[0], k2=ks[1]) if (p.calibrate and ks) else p
            judge.step(run_id, by_direction[min(by_direction)].t, by_direction, rule_now, judged)
    _write(con, judged, "")
    return out


_Prior = tuple[datetime, str, float | None, float, float]  # t, run id, pooled scale, k1, k2


def _prior(
    rows: Sequence[_Prior], at: tuple[datetime, str]
) -> tuple[float | None, float, float] | None:
    """The (pooled scale, k1, k2) of the row of run `at` (t, run id), or of the nearest
    earlier one (the earliest when none is earlier)."""
    if not rows:
        return None
    for _t, run_id, pooled, k1, k2 in rows:
        if run_id == at[1]:
            return pooled, k1, k2
    i = bisect.bisect_right([(r[0], r[1]) for r in rows], at) - 1
    row = rows[max(i, 0)]
    return row[2], row[3], row[4]


def judge_runs(
    con: duckdb.DuckDBPyConnection,
    runs: Sequence[tuple[str, Sequence[tuple[ch.SeriesKey, ch.Run]]]],
    p: ch.Params,
) -> None:
    """Runs that are not sweeps (the mesh's 5-minute bins: (run id, its directed runs),
    oldest first, each after every path's latest), judged once with their own rule `p`
    from the paths' kept states (inside the caller's transaction)."""
    judges = _load(con, {k.source for _, rs in runs for k, _ in rs}, p)
    judge = ch.Judge(p, judges)
    touched: set[ch.SeriesKey] = set()
    with gc_paused():
        for run_id, rs in runs:
            _write(con, judge.sweep(run_id, rs), run_id)
            touched |= {k.path() for k, _ in rs}
    _save_states(con, {k: judges[k] for k in touched if k in judges})


# the mesh's sources: judged by judge_runs with the mesh's rule, never by rejudge
_NOT_MESH = "source NOT IN (SELECT DISTINCT source FROM mesh_bins)"


def rejudge(con: duckdb.DuckDBPyConnection) -> None:
    """Every sweep judged again from scratch, in time order (inside the caller's
    transaction); the mesh's judgments are kept."""
    for table in JUDGED:
        con.execute(f"DELETE FROM {table} WHERE {_NOT_MESH}")
    judge_sweeps(con, [r[0] for r in con.execute("SELECT sweep_id FROM sweeps").fetchall()])


# ---- reading what was judged -----------------------------------------------------------


def region_groups() -> dict[str, tuple[str, ...]]:
    """Each catalog region's groups for the region roll-up: its continent and its cloud."""
    from orchestrator.history.continents import continent
    from orchestrator.model import load_catalog

    out = {}
    for r in load_catalog().regions:
        where = continent(r.country)
        out[r.key] = (*((f"continent:{where}",) if where else ()), f"cloud:{r.cloud}")
    return out


def detection(
    con: duckdb.DuckDBPyConnection,
    sources: Sequence[str] = (),
    last_runs: int | None = None,
    since: datetime | None = None,
) -> ch.Detection:
    """What the store judged, as a changes.Detection (nothing judged again): every open
    episode, and those that started or closed within each source's latest `last_runs`
    sweeps or from `since` (aware; both None: all), folded into host and region
    changes; the configuration changes of that span; each path's suspected runs,
    baselines and scales as its latest run left them; the calibration in force."""
    from orchestrator.history import metrics as v

    p = rule(con)
    names = [i.name for i in v.chosen_sources(v.source_infos(con), sources)]
    cuts = {name: _cutoff(con, name, last_runs, since) for name in names}
    results: dict[ch.SeriesKey, ch.SeriesResult] = {}

    def result(key: ch.SeriesKey) -> ch.SeriesResult:
        return results.setdefault(key, ch.SeriesResult(key))

    def recent(source: str, *times: datetime | None) -> bool:
        cut = cuts[source]
        return cut is None or any(t is not None and t >= cut for t in times)

    started: set[str] = set()
    for (state,) in con.execute(
        "SELECT state FROM episodes WHERE source IN (SELECT unnest(?)) "
        "ORDER BY started_t, started_run",
        [names],
    ).fetchall():
        e = ch.episode_of_state(orjson.loads(state))
        if e.status == "open" or recent(e.key.source, e.started_t, e.closed_t):
            result(e.key).episodes.append(e)
            started.add(e.started_run)
    for *path, run_id in con.execute(
        "SELECT DISTINCT source, backend, metric, least(src, dst), greatest(src, dst), "
        "sweep_id FROM judgments WHERE status <> ? AND sweep_id IN (SELECT unnest(?)) "
        "AND source IN (SELECT unnest(?)) ORDER BY ALL",  # the results' order: fixed
        [ch.LEARNING, sorted(started), names],
    ).fetchall():
        result(ch.SeriesKey(*path)).evaluated_runs.add(run_id)
    waiting = []
    for *names_, shown in con.execute(
        "SELECT source, backend, metric, src, dst, shown FROM detection_state "
        "WHERE source IN (SELECT unnest(?)) ORDER BY source, backend, metric, src, dst",
        [names],
    ).fetchall():
        key = ch.SeriesKey(*names_)
        doc = orjson.loads(shown)
        r = result(key)
        for src, dst, level, scale in doc["baselines"]:
            directed = ch.SeriesKey(key.source, key.backend, key.metric, src, dst)
            r.baselines[directed], r.scales[directed] = level, scale
        for run_id, text, deviations in doc["suspects"]:
            t = read_utc(text, "a kept suspected run's time")
            if recent(key.source, t):
                r.suspects.append(ch.Suspect(key, run_id, t, tuple(map(tuple, deviations))))
        waiting += [(ch.SeriesKey(key.source, key.backend, key.metric, src, dst), runs, needed)
                    for src, dst, runs, needed in doc["waiting"]]  # fmt: skip
    for *names_, run_id, t, old, new in con.execute(
        "SELECT source, backend, metric, src, dst, sweep_id, epoch_ms(t), old_fingerprint, "
        "new_fingerprint FROM config_changes WHERE source IN (SELECT unnest(?)) "
        "ORDER BY t, sweep_id, src, dst",
        [names],
    ).fetchall():
        key, t = ch.SeriesKey(*names_), of_epoch_ms(t)
        if recent(key.source, t):
            result(key.path()).config_changes.append(ch.ConfigChange(key, run_id, t, old, new))
    return ch.detection_of(
        list(results.values()), p, region_groups(), calibrations(con, names),
        ch.unjudged(waiting),
    )  # fmt: skip


def _cutoff(
    con: duckdb.DuckDBPyConnection, source: str, last_runs: int | None, since: datetime | None
) -> datetime | None:
    """`since`, else the start (to the millisecond, as the judgments' times) of
    `source`'s `last_runs`-th latest sweep; None: no limit."""
    if since is not None or last_runs is None:
        return since
    row = con.execute(
        f"SELECT {T_SQL} FROM sweeps WHERE source = ? ORDER BY started_utc DESC LIMIT 1 OFFSET ?",
        [source, max(last_runs - 1, 0)],
    ).fetchone()
    return of_epoch_ms(row[0]) if row and row[0] is not None else None


def calibrations(
    con: duckdb.DuckDBPyConnection, sources: Sequence[str]
) -> dict[ch.Group, ch.Calibration]:
    """Per source, backend and metric: the calibration in force for its latest sweep."""
    rows = con.execute(
        "SELECT c.source, c.backend, c.metric, judged, beyond, expected, inflation, k1, k2 "
        "FROM calibrations c JOIN sweeps s USING (sweep_id) WHERE c.source IN "
        "(SELECT unnest(?)) QUALIFY row_number() OVER (PARTITION BY c.source, c.backend, "
        "c.metric ORDER BY s.started_utc DESC, c.sweep_id DESC) = 1",
        [list(sources)],
    ).fetchall()
    return {(s, b, m): ch.Calibration(*rest) for s, b, m, *rest in rows}
