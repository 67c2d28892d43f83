"""The site's pages built from the history store: the matrix, the changes and the pairs.

Every figure is computed here at build time, so the browser (assets/history.js) only
switches between precomputed arrays, put in the pages as JSON (the matrix's in .js files:
file:// forbids fetching local JSON). Sources are never mixed (docs/reports-and-site.md).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.core import UserError, gc_paused, wilson
from orchestrator.history import (
    CHANGE_RUNS,
    METRICS,
    NO_TIME,
    PERCENTILE_RULE,
    PINGS_LOST_SQL,
    PINGS_SENT_SQL,
    SITE_WINDOWS,
    STATS,
    UNITS,
    CellTable,
    Detection,
    Params,
    SourceInfo,
    change_docs,
    combined_calibration,
    detectable_change,
    detection,
    empty_table,
    every_pair_since,
    format_value,
    iso_utc,
    loss_fields,
    loss_text,
    mesh_sources,
    min_samples,
    pair_names,
    rule_in_force,
    source_caption,
    source_infos,
    window_bounds,
    window_table,
)
from orchestrator.model import Catalog, load_catalog, region_order
from orchestrator.netmodel import DEFAULT_MODEL, rate_scale_tag
from orchestrator.site import html
from orchestrator.site.html import esc as _e
from orchestrator.site.mesh_pairs import is_mesh, mesh_html, mesh_pair_data

if TYPE_CHECKING:
    import duckdb

MATRIX_DATA_FORMAT = "interregion.site-matrix"
MATRIX_DATA_VERSION = 1
PAIR_WINDOW = "1M"  # pair pages: the last 30 days (and each pair's newest test)
# The matrix's metrics: also ping's loss and jitter (rtt_mdev_ms).
MATRIX_METRICS = ("rtt", "loss", "jitter", "throughput")
# Shown units: ms, and Mbit/s (a matrix of 9-digit bit/s is unreadable and heavier).
DISPLAY_UNITS = {"rtt": "ms", "loss": "%", "jitter": "ms", "throughput": "Mbit/s"}
_DISPLAY_SCALE = {"rtt": 1.0, "loss": 1.0, "jitter": 1.0, "throughput": 1e-6}
METRIC_TITLES = {"rtt": "RTT", "loss": "loss", "jitter": "jitter", "throughput": "throughput"}
# the statistic every metric's matrix file holds (the one shown first, and what the change
# and deviation colours compare); each other statistic is a file of its own
FILE_STAT = "p50"


@dataclass
class HistoryData:
    matrix: dict[str, Any]  # what matrix-data.js holds
    matrix_files: dict[str, list[Any]]  # each matrix-*.js's arguments to InterregionMatrixPart
    changes: dict[str, Any]  # open and closed episodes, configuration changes
    pairs: dict[tuple[str, str], dict[str, Any]]  # unordered pair -> its page's data
    emulated: dict[str, bool]  # source -> emulated?
    meshes: list[str] = field(default_factory=list)  # the mesh's sources: in no matrix


def shown(metric: str, value: float | None) -> float | None:
    """A value in the metric's display unit, rounded for the page: 0.01 ms, 0.01 %, and
    three significant digits of Mbit/s (0.01 below 10, 0.1 below 100, else 1)."""
    if value is None:
        return None
    x = value * _DISPLAY_SCALE[metric]  # a float, also of an int
    if metric == "throughput":
        return round(x, 2 if abs(x) < 10 else 1 if abs(x) < 100 else 0)
    return round(x, 2)


def pair_file(a: str, b: str) -> str:
    """The page of an unordered pair: `aws_us-east-1--gcp_europe-west1.html` (no ':' in a
    relative link, where it would read as a URL scheme). history.js builds the same name."""
    return "--".join(_slug(region) for region in sorted((a, b))) + ".html"


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9-]", "_", name.lower())


def history_data(
    con: duckdb.DuckDBPyConnection,
    catalog: Catalog | None = None,
    include_flagged: bool = False,
    pair_pages: Callable[[dict[tuple[str, str], dict[str, Any]]], None] | None = None,
) -> HistoryData:
    """Every figure of the history pages, from the store alone (catalog: the regions'
    order and cities). `pair_pages` is given the pair pages' data (HistoryData.pairs) as
    soon as it is computed, to write them while the matrix's windows still are."""
    infos = list(source_infos(con).values())
    if not infos:
        raise UserError("the history store holds no sweep yet: a sweep adds itself as it ends")
    infos.sort(key=lambda i: (i.name not in ("measured", "emulated"), i.name != "measured", i.name))
    # the mesh's sources: on the pair pages and the changes page, in no matrix
    meshes = set(mesh_sources(con))
    sweep_infos = [i for i in infos if i.name not in meshes]
    if not sweep_infos:
        raise UserError(
            "the history store holds no sweep yet, only the mesh's bins: the history pages "
            "come with the first sweep ('interregion mesh matrix' shows the mesh)"
        )
    # the matrix's windows (DuckDB and numpy, without the GIL) on a thread and a cursor of
    # their own while the rest runs; the collector paused: millions of objects, no cycle
    cursor = con.cursor()
    try:
        with gc_paused(), ThreadPoolExecutor(max_workers=1) as pool:
            windows = pool.submit(_source_windows, cursor, sweep_infos, include_flagged)
            found = detection(con, last_runs=CHANGE_RUNS)
            emulated = {i.name: i.emulated for i in infos}
            changes = changes_data(con, found, emulated)
            pairs = pair_data(con, sweep_infos, found, [i for i in infos if i.name in meshes])
            if pair_pages is not None:
                pair_pages(pairs)
            cells = windows.result()
    finally:
        cursor.close()
    with gc_paused():
        matrix, files = matrix_files(con, sweep_infos, found, catalog or load_catalog(), cells)
    return HistoryData(matrix, files, changes, pairs, emulated, sorted(meshes))


# ---- the matrix -----------------------------------------------------------------------


WindowCells = dict[tuple[str, str], CellTable]


def _window_cells(
    con: duckdb.DuckDBPyConnection, info: SourceInfo, include_flagged: bool = False
) -> tuple[WindowCells, WindowCells]:
    """Every (metric, window)'s cells, and those of the window just before it
    (windows.window_table, as every view reads them). A window reaching back past the
    source's first test holds what the narrower one before it holds when that one
    reached back too (a month-old store's 1Y is its 1M): computed once; and the window
    before it is empty."""
    (first,) = con.execute(
        "SELECT min(started_utc) FROM measurements WHERE source = ?", [info.name]
    ).fetchone() or (None,)
    cells: WindowCells = {}
    before: WindowCells = {}
    for metric in MATRIX_METRICS:
        whole = None  # the first window that holds every test
        for window in SITE_WINDOWS:
            start = None if window == "latest" else window_bounds(info, window)[0]
            covers = window != "latest" and (start is None or first is None or start <= first)
            before[metric, window] = (
                empty_table()
                if window == "latest" or covers
                else window_table(con, info, metric, window, True, include_flagged, stats_only=True)
            )
            if covers and whole is not None:
                cells[metric, window] = cells[metric, whole]
                continue
            cells[metric, window] = window_table(con, info, metric, window, False, include_flagged)
            if covers:
                whole = window
    return cells, before


def _source_windows(
    con: duckdb.DuckDBPyConnection, infos: Sequence[SourceInfo], include_flagged: bool = False
) -> dict[str, tuple[WindowCells, WindowCells]]:
    """Each source's _window_cells."""
    return {i.name: _window_cells(con, i, include_flagged) for i in infos}


def _rounded(metric: str, x: Any) -> Any:
    """shown() of each of the array `x` (NaN stays NaN): the same numbers as Python's
    round, which rounds the exact binary value (numpy's rounds x scaled, which differs
    where that lands on a half: those few are rounded by Python's)."""
    import numpy as np

    x = np.asarray(x, dtype=np.float64) * _DISPLAY_SCALE[metric]
    if metric == "throughput":
        size = np.abs(x)
        digits = np.where(size < 10, 2, np.where(size < 100, 1, 0))
    else:
        digits = np.full(len(x), 2)
    scaled = x * 10.0**digits
    out = np.round(scaled) / 10.0**digits
    near = np.abs(np.abs(scaled - np.floor(scaled)) - 0.5) < 1e-6
    for i in np.flatnonzero(near):
        out[i] = round(float(x[i]), int(digits[i]))
    return out


def _placed(size: int, at: Any, values: Any) -> list[Any]:
    """A list of `size` Nones with `values` (an array; NaN is None) at `at` (-1: not placed)."""
    import numpy as np

    out = np.full(size, None, dtype=object)
    objects = values.astype(object)  # Python's numbers
    if values.dtype.kind == "f":
        objects[np.isnan(values)] = None
    placed = at >= 0
    out[at[placed]] = objects[placed]
    return out.tolist()


def _stat(metric: str, table: CellTable, stat: str) -> Any:
    """A table's `stat` as shown (_rounded), NaN below its min_samples."""
    import numpy as np

    column = table.stats[:, STATS.index(stat)]
    return _rounded(metric, np.where(table.samples >= min_samples(stat), column, np.nan))


def _loss_arrays(size: int, at: Any, table: CellTable) -> dict[str, list[Any]]:
    """A loss view's window loss per cell: pings lost / sent (%) with its Wilson 95 %
    interval (core.stats.wilson; null where no pings are counted), and the pings sent."""
    import numpy as np

    sent = np.asarray(table.pings_sent, dtype=np.float64)
    lost = np.asarray(table.pings_lost, dtype=np.float64)
    bounds = [wilson(a, b) for a, b in zip(lost.tolist(), sent.tolist(), strict=True)]
    low, high = np.array(bounds, dtype=np.float64).reshape(-1, 2).T
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = np.where(sent > 0, 100.0 * lost / sent, np.nan)
    return {
        "loss_pct": _placed(size, at, np.round(pct, 3)),
        "loss_low_pct": _placed(size, at, np.round(100.0 * low, 3)),
        "loss_high_pct": _placed(size, at, np.round(100.0 * high, 3)),
        "pings_sent": _placed(size, at, np.asarray(table.pings_sent, dtype=np.int64)),
    }


def matrix_files(
    con: duckdb.DuckDBPyConnection,
    infos: Sequence[SourceInfo],
    found: Detection,
    catalog: Catalog,
    windows: Mapping[str, tuple[WindowCells, WindowCells]],
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The From x To matrix for the page: an index (matrix-data.js: each source's regions
    and the name of each file), and each file's arguments to InterregionMatrixPart. One
    file per source and metric: its (metric, window) views (`windows`: _source_windows),
    each an array per figure, row-major over the source's regions (R x R), a statistic
    null below its min_samples, of the statistics the FILE_STAT alone; and each cell's
    change-detection `baseline` and the cells of an `open` episode. One file per source,
    metric and other statistic, which history.js loads when first shown (a year of a full
    catalog's nine statistics in one file would pass 2 MB)."""
    import numpy as np

    # each directed pair's baseline; with several backends, the one last run (written last)
    baselines = sorted(found.baselines.items(), key=lambda kv: kv[0].backend)
    opened = {  # a path event's open cells: those of the directions that moved
        (e.key.source, e.key.metric, d.key.src, d.key.dst)
        for e in found.path_episodes()
        if e.status == "open"
        for d in e.directions
        if d.moved
    }
    names = pair_names(con)
    known = {r.key: r.city for r in catalog.regions}
    index: dict[str, Any] = {
        "format": MATRIX_DATA_FORMAT,
        "version": MATRIX_DATA_VERSION,
        "units": DISPLAY_UNITS,
        "metrics": list(MATRIX_METRICS),
        # emulated throughput is the real curve times this (Methodology)
        "emulated_rate_scale": DEFAULT_MODEL.scale,
        "stats": list(STATS),
        # the samples each statistic needs to be shown (views.PERCENTILE_RULE)
        "min_samples": {s: min_samples(s) for s in STATS},
        "windows": list(SITE_WINDOWS),
        "sources": [],
    }
    files: dict[str, list[Any]] = {}
    for n, info in enumerate(infos):
        cells, previous = windows[info.name]
        numbers = np.unique(np.concatenate([t.pair for t in cells.values()] or [[]]))
        regions = region_order({r for p in numbers.tolist() for r in names[p]}, catalog)
        row = {r: i for i, r in enumerate(regions)}
        cell = {(a, b): row[a] * len(regions) + row[b] for a in regions for b in regions}
        size = len(cell)
        # each pair number's cell (-1: a pair of no cell)
        place = np.full(max(names, default=-1) + 1, -1, dtype=np.int64)
        for p, pair in names.items():
            place[p] = cell.get(pair, -1)
        # the metrics change detection follows: each cell's baseline, the cells of open episodes
        baseline: dict[str, list[float | None]] = {m: [None] * size for m in UNITS}
        open_cells: dict[str, list[int]] = {m: [] for m in UNITS}
        for k, level in baselines:
            if k.source == info.name and (k.src, k.dst) in cell:
                baseline[k.metric][cell[k.src, k.dst]] = shown(k.metric, level)
        for source, m, src, dst in opened:
            if source == info.name and (src, dst) in cell:
                open_cells[m].append(cell[src, dst])
        about = {"source": info.name, "label": info.label, "emulated": info.emulated}
        meta: dict[str, Any] = {
            **about,
            "caption": source_caption(about),
            "latest_utc": iso_utc(info.latest),
            "regions": regions,
            "cities": [known.get(r, "") for r in regions],
            "files": {},
            "stat_files": {},
        }
        for metric in MATRIX_METRICS:
            views: dict[str, Any] = {}
            others: dict[str, dict[str, Any]] = {s: {} for s in STATS if s != FILE_STAT}
            for window in SITE_WINDOWS:
                table = cells[metric, window]
                k = place[table.pair]
                for stat, values in others.items():
                    values[window] = _placed(size, k, _stat(metric, table, stat))
                # UNIX seconds (floor, as int(timestamp)); null: no test
                newest = (table.newest_us // 1_000_000).astype(object)
                newest[table.newest_us == NO_TIME] = None
                start = None if window == "latest" else window_bounds(info, window)[0]
                prev = previous[metric, window]
                views[window] = {
                    "window_start_utc": iso_utc(start),
                    "window_end_utc": iso_utc(info.latest),
                    "pairs": len(table),
                    FILE_STAT: _placed(size, k, _stat(metric, table, FILE_STAT)),
                    "samples": _placed(size, k, table.samples),
                    "tests": _placed(size, k, table.tests),
                    "newest_s": _placed(size, k, newest),
                    # what limited the cell's tests (throughput's; None for the other metrics)
                    "limiter": _placed(size, k, np.asarray(table.limiter, dtype=object)),
                    **(_loss_arrays(size, k, table) if metric == "loss" else {}),
                    # the p50 of the window just before, for the "change vs previous window"
                    "prev_p50": _placed(size, place[prev.pair], _stat(metric, prev, "p50")),
                }
            stem = f"matrix-{n}-{_slug(info.name)}-{metric}"
            meta["files"][metric] = f"{stem}.js"
            opens = sorted(open_cells.get(metric, []))
            part = {"views": views, "baseline": baseline.get(metric), "open": opens}
            files[f"{stem}.js"] = [info.name, metric, part]
            meta["stat_files"][metric] = {s: f"{stem}-{s}.js" for s in others}
            for stat, values in others.items():
                files[f"{stem}-{stat}.js"] = [info.name, metric, values, stat]
        index["sources"].append(meta)
    return index, files


# ---- changes --------------------------------------------------------------------------


def changes_data(
    con: duckdb.DuckDBPyConnection, found: Detection, emulated: Mapping[str, bool]
) -> dict[str, Any]:
    """Pair and host episodes (open and closed) and configuration changes, apart; the
    pairs not judged yet (too few comparable runs), counted (`emulated`: each source's)."""
    d = change_docs(con, found)  # as `interregion changes`
    for doc in [*d.episodes, *d.hosts, *d.regions, *d.configs, *d.suspected]:
        doc["emulated"] = emulated.get(doc["source"], False)
    return {
        "open": d.open,
        "episodes": sorted(d.episodes, key=lambda d: d["started_utc"], reverse=True),
        "hosts": sorted(d.hosts, key=lambda d: d["started_utc"], reverse=True),
        "suspected": sorted(d.suspected, key=lambda d: d["utc"], reverse=True),
        "regions": sorted(d.regions, key=lambda d: d["started_utc"], reverse=True),
        "configuration_changes": sorted(d.configs, key=lambda d: d["utc"], reverse=True),
        "judged_pairs": d.judged_pairs,
        "not_judged": d.waiting,
        "calibrated": found.params.calibrate,
        "calibration": combined_calibration(found),
    }


# ---- pairs ----------------------------------------------------------------------------


def pair_data(
    con: duckdb.DuckDBPyConnection,
    infos: Sequence[SourceInfo],
    found: Detection,
    meshes: Sequence[SourceInfo] = (),
) -> dict[tuple[str, str], dict[str, Any]]:
    """Per unordered pair: each source's runs in both directions over the PAIR_WINDOW
    (a pair without a test there shows its newest one), with its episodes and
    configuration changes as markers (_pair_marks); then the `meshes`' bins."""
    marks = _pair_marks(found)
    episodes, configs = marks["episodes"], marks["configs"]
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    detectable = _detectable_rtt(found)
    for info in infos:
        start = window_bounds(info, PAIR_WINDOW)[0]
        shown_from, shown_to = iso_utc(start), iso_utc(info.latest)
        since = shown_from or ""  # the marks that show (an old span would stretch the axis)
        about = {"source": info.name, "label": info.label, "emulated": info.emulated}
        caption = source_caption(about)
        for src, dst, times, sweeps, rtts, throughputs, pings in _pair_series(
            con, info.name, start
        ):
            key = (min(src, dst), max(src, dst))
            entries = pairs.setdefault(key, {"a": key[0], "b": key[1], "sources": {}})["sources"]
            if info.name not in entries:
                here = (info.name, *key)
                entries[info.name] = {
                    "source": info.name,
                    "emulated": info.emulated,
                    "caption": caption,
                    # its throughput is the real small-VM curve times this (Methodology)
                    **({"rate_scale_tag": rate_scale_tag()} if info.emulated else {}),
                    "window_start_utc": shown_from,
                    "window_end_utc": shown_to,
                    "directions": [],
                    "episodes": [
                        e for e in episodes.get(here, []) if (e["closed_utc"] or "~") >= since
                    ],
                    "configuration_changes": [
                        c for c in configs.get(here, []) if c["utc"] >= since
                    ],
                }
            entries[info.name]["directions"].append(
                {
                    "src": src,
                    "dst": dst,
                    # what change detection can see on this direction (RTT, ms)
                    "smallest_detectable_change_ms": detectable.get((info.name, src, dst)),
                    "t": times,
                    "sweep": sweeps,
                    "rtt": rtts,
                    "throughput": throughputs,
                    # the tests' pings lost / sent with its Wilson 95 % interval
                    "loss": loss_fields(*pings),
                }
            )
    mesh_pair_data(con, meshes, episodes, pairs)
    for page in pairs.values():
        page["sources"] = list(page["sources"].values())
        for entry in page["sources"]:
            entry["directions"].sort(key=lambda d: (d["src"] != page["a"], d["src"]))
    return pairs


def _detectable_rtt(found: Detection) -> dict[tuple[str, str, str], float | None]:
    """(source, src, dst) -> the smallest detectable RTT change, under the rule in force;
    once per scale and rule (a bisection: many pairs' scales are the floor)."""
    last = {(k.source, k.src, k.dst): k for k in found.scales if k.metric == "rtt"}

    @functools.cache
    def size(scale: float, rule: Any) -> float | None:
        return detectable_change(scale, "rtt", rule)["smallest_detectable_change"]

    return {pair: size(found.scales[k], rule_in_force(found, k)) for pair, k in last.items()}


PairSeries = tuple[str, str, list[Any], list[Any], list[Any], list[Any], tuple[int, int]]


def _pair_series(
    con: duckdb.DuckDBPyConnection, source: str, start: datetime | None
) -> list[PairSeries]:
    """A source's tests from `start` on, per directed pair: (src, dst, [t], [sweep], [rtt],
    [throughput], (pings sent, lost)), rounded as shown(); a pair with none there, its
    newest (the store searched for those only when a pair lacks one: a year is millions
    of tests)."""
    columns = (
        f"src, dst, started_utc, sweep_id, {METRICS['rtt'].run_sql} AS rtt, "
        f"{METRICS['throughput'].run_sql} AS throughput_bps, "
        f"coalesce({PINGS_SENT_SQL}, 0) AS sent, coalesce({PINGS_LOST_SQL}, 0) AS lost"
    )
    ok = "source = ? AND status = 'ok'"
    params: list[Any]
    if start is None:
        chosen = f"SELECT {columns} FROM measurements WHERE {ok}"
        params = [source]
    elif every_pair_since(con, ok, [source], start):
        # no pair lacks a test in the window (the search for those is a scan of the store)
        chosen = f"SELECT {columns} FROM measurements WHERE {ok} AND started_utc >= ?"
        params = [source, start]
    else:
        # the window, and the newest test of each pair that has none in it (a per-pair max
        # joined back, not a window function over every older test)
        chosen = (
            f"SELECT {columns} FROM measurements WHERE {ok} AND started_utc >= ? "
            f"UNION ALL SELECT * FROM (SELECT {columns} FROM measurements m SEMI JOIN ("
            "SELECT src AS a, dst AS b, max(started_utc) AS newest FROM measurements "
            f"WHERE {ok} GROUP BY src, dst HAVING max(started_utc) < ?) s "
            f"ON m.src = s.a AND m.dst = s.b AND m.started_utc = s.newest WHERE {ok} "
            "QUALIFY row_number() OVER (PARTITION BY src, dst ORDER BY started_utc DESC) = 1)"
        )
        params = [source, start, source, start, source]
    rtt_scale, tput_scale = _DISPLAY_SCALE["rtt"], _DISPLAY_SCALE["throughput"]
    found = con.execute(
        "SELECT src, dst, strftime(started_utc, '%Y-%m-%dT%H:%M:%S.%gZ') AS t, sweep_id, "
        f"round(rtt * {rtt_scale!r}, 2) AS rtt, "
        f"round(throughput_bps * {tput_scale!r}, 2) AS tput, sent, lost "
        f"FROM ({chosen}) ORDER BY src, dst, started_utc",
        params,
    ).fetchnumpy()
    return _per_pair(found)


def _per_pair(found: dict[str, Any]) -> list[PairSeries]:
    """_pair_series of DuckDB's columns, in (src, dst, start) order: the lists made whole,
    then cut (a list per test costs twice)."""
    import numpy as np

    src, dst = found["src"], found["dst"]
    n = len(src)
    if not n:
        return []
    cuts = (np.flatnonzero((src[1:] != src[:-1]) | (dst[1:] != dst[:-1])) + 1).tolist()
    firsts, ends = [0, *cuts], [*cuts, n]

    def listed(name: str) -> list[Any]:
        values = np.ma.filled(np.ma.asarray(found[name], dtype=np.float64), np.nan)
        return np.ma.masked_invalid(values).tolist()  # NaN: None

    times, sweeps = found["t"].tolist(), found["sweep_id"].tolist()
    rtts, tputs = listed("rtt"), listed("tput")
    sent = np.add.reduceat(np.asarray(found["sent"], dtype=np.int64), firsts).tolist()
    lost = np.add.reduceat(np.asarray(found["lost"], dtype=np.int64), firsts).tolist()
    return [
        (src[i], dst[i], times[i:j], sweeps[i:j], rtts[i:j], tputs[i:j], (a, b))
        for i, j, a, b in zip(firsts, ends, sent, lost, strict=True)
    ]


def _pair_marks(found: Detection) -> dict[str, dict[tuple[str, str, str], list[Any]]]:
    """(source, a, b) -> that pair's episodes (both directions and metrics), and apart its
    configuration changes."""
    episodes: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for e in found.path_episodes():
        k = e.key
        key = (k.source, min(k.src, k.dst), max(k.src, k.dst))
        for d in e.directions:  # a path event marks each direction that moved
            if not d.moved:
                continue
            episodes[key].append(
                {
                    "metric": k.metric,
                    "src": d.key.src,
                    "dst": d.key.dst,
                    "status": e.status,
                    "started_utc": iso_utc(e.started_t),
                    "confirmed_utc": iso_utc(e.confirmed_t),
                    "closed_utc": iso_utc(e.closed_t),
                    "old_level": shown(k.metric, d.old_level),
                    "new_level": shown(k.metric, d.new_level),
                }
            )
    runs: dict[tuple[str, str, str], dict[str, datetime]] = defaultdict(dict)
    for c in found.config_changes:  # one marker per run and pair
        k = c.key
        runs[k.source, min(k.src, k.dst), max(k.src, k.dst)].setdefault(c.run_id, c.t)
    configs = {
        key: [{"utc": iso_utc(t), "run": r} for r, t in rs.items()] for key, rs in runs.items()
    }
    return {"episodes": dict(episodes), "configs": configs}


# ---- pages ----------------------------------------------------------------------------


def write_pages(
    root: Path, data: HistoryData, studies: bool = False, pair_pages: bool = True
) -> None:
    """history/ under `root`, a folder being built: the matrix and its data, the changes
    and the pair pages (unless not `pair_pages`: written already); `studies`: the site has
    TCP study pages (a link in every header)."""
    folder = root / "history"
    matrix = html.json_text(data.matrix)
    html.write(folder / "matrix-data.js", f"window.InterregionMatrix = {matrix};\n")
    for name, args in data.matrix_files.items():
        html.write(folder / name, f"window.InterregionMatrixPart({html.json_text(args)[1:-1]});\n")
    html.write(folder / "matrix.html", matrix_html(data, studies))
    html.write(folder / "changes.html", changes_html(data, studies))
    if pair_pages:
        write_pair_pages(root, data.pairs, studies)


def write_pair_pages(
    root: Path, pairs: dict[tuple[str, str], dict[str, Any]], studies: bool = False
) -> None:
    """history/pairs/*.html under `root`, a folder being built, from `pairs` (HistoryData's)."""
    folder = root / "history" / "pairs"
    folder.mkdir(parents=True, exist_ok=True)
    with gc_paused():
        for (a, b), page in pairs.items():
            html.write_new(folder / pair_file(a, b), pair_html(page, studies))


def _select(name: str, label: str, options: Mapping[str, str], chosen: str = "") -> str:
    """A selector of `options` (value: text), `chosen` selected (else the first)."""
    chosen = chosen or next(iter(options))
    items = "".join(
        f"<option value='{_e(value)}'{' selected' if value == chosen else ''}>{_e(text)}</option>"
        for value, text in options.items()
    )
    return f"<label>{_e(label)} <select name='{name}'>{items}</select></label>"


def matrix_html(data: HistoryData, studies: bool = False, prefix: str = "../") -> str:
    """The matrix page: history/matrix.html (`prefix` "../"), and the site's front page
    index.html (`prefix` ""), both drawn from history/matrix-data.js."""
    sources = data.matrix["sources"]
    first = sources[0]
    here = "" if prefix else "history/"  # where matrix-data.js and pairs/ are
    hidden = "" if first["emulated"] else " hidden"
    windows = {
        "latest": "latest (each pair's newest test)",
        "1D": "1 day",
        "1W": "1 week",
        "1M": "1 month (30 days)",
        "1Y": "1 year (365 days)",
    }
    metrics = {
        "rtt": "RTT (ms)",
        "loss": "loss (ping_loss_pct, %)",
        "jitter": "jitter (ping's rtt_mdev_ms)",
        "throughput": "throughput (Mbit/s)",
    }
    colours = {
        "absolute": "absolute buckets",
        "delta": "change vs the previous window",
        "deviation": "deviation from baseline",
    }
    controls = [
        _select("source", "source", {s["source"]: s["caption"] for s in sources}),
        _select("metric", "metric", {m: metrics[m] for m in MATRIX_METRICS}),
        _select("stat", "statistic", {s: s for s in STATS}, "p50"),
        _select("window", "window", {w: windows[w] for w in SITE_WINDOWS}, "1W"),
        _select("colour", "colour", colours),
        _select("show", "cells show", {"value": "the value", "detail": "value, n and age"}),
        _select("heads", "regions as", {"both": "code and city", "code": "code", "city": "city"}),
    ]
    return "".join(
        [
            html.head("Matrix", prefix, history=True, studies=studies),
            # history.js shows or hides it as the source changes
            html.banner(True, "The results shown were", f" id='source-banner'{hidden}"),
            "<h1>From x To matrix</h1>\n",
            "<p class='lead'>Rows send, columns receive. Point at a cell for its samples and "
            "tests; a cell links to its pair's page.</p>\n",
            f"<form id='matrix-controls'>{''.join(controls)}</form>\n",
            f"<p id='matrix-caption' class='caption'>{_e(first['caption'])}</p>\n",
            (
                f"<p class='mesh-note'>The continuous mesh ({_e(', '.join(data.meshes))}) is not "
                "in this matrix: its 5-minute bins and changes are on the pair pages, its matrix "
                "over an hour to a week is <code>interregion mesh matrix</code>.</p>\n"
                if data.meshes
                else ""
            ),
            "<p id='matrix-scale' class='emulated-tag' hidden></p>\n",
            "<div id='matrix-legend'></div>\n",
            "<p id='matrix-detail' class='muted'>&nbsp;</p>\n",
            f"<div class='matrix-wrap'><table id='matrix' class='matrix' "
            f"data-pairs='{here}pairs/' data-base='{here}'></table></div>\n",
            "<details id='matrix-about'><summary>How a cell is computed</summary><p>The statistic "
            "chosen (min, p10 to p99, max or mean) of the pooled samples of every test in "
            f"the window. As in <code>interregion matrix</code>, {_e(PERCENTILE_RULE)} "
            "(null is shown as —; point at a cell for its samples and tests). "
            "Every window is read from histograms kept as each sweep is stored (RTT's bins "
            "0.05 % wide: a percentile within 0.05 % of the exact value, 0.1 ms at 200 ms; "
            "loss, jitter and throughput within 1 %; "
            "exact where its bin holds one value; the counts, min, max and mean exact), as "
            "<code>interregion matrix</code> reads them: the same numbers. "
            "Regions are ordered by cloud, then west to east. Loss and jitter are ping's "
            "(<code>ping_loss_pct</code>, <code>rtt_mdev_ms</code>), one value per test; "
            "a loss cell's hover also gives the window's pings lost over its pings sent "
            "(each test's replies over 1 - its loss) with its Wilson 95 % interval: 0 lost "
            "of 200 is 0-1.9 %, not a plain 0. "
            "Colours run from good (light) to bad (dark) for every metric. "
            "Point at a cell for its samples (n), tests, the age of its newest test and its "
            "baseline; a cell links to the pair's page. Whatever the stat shown, change vs the "
            "previous window compares "
            "the window's p50 with the p50 of the window of the same length just before it. "
            "Deviation compares the window's p50, "
            "whatever the stat shown, with the change-detection baseline (the median of the "
            "pair's last 28 comparable runs' medians); "
            "cells with an open episode are outlined. Sources are never mixed: the caption "
            "names the one shown.</p></details>\n",
            "<noscript><p>The matrix is drawn by JavaScript from matrix-data.js.</p></noscript>\n",
            html.scripts(f"{here}matrix-data.js", f"{prefix}assets/history.js"),
            html.foot(),
        ]
    )


def _level(doc: dict[str, Any], value: float) -> str:
    return f"{format_value(value, doc['unit'])} {DISPLAY_UNITS[doc['metric']]}"


def _tag(doc: dict[str, Any]) -> str:
    label = " <strong class='emulated-tag'>EMULATED</strong>" if doc["emulated"] else ""
    return f"{_e(doc['source'])}/{_e(doc['backend'])}{label}"


def _pair_link(src: str, dst: str, sep: str = "→") -> str:
    return f"<a href='pairs/{_e(pair_file(src, dst))}'>{_e(src)} {sep} {_e(dst)}</a>"


def _threshold(doc: dict[str, Any], x: float) -> str:
    return f"{x:g} ms" if doc["metric"] == "rtt" else f"{100 * x:.0f} %"


def _direction_lines(doc: dict[str, Any]) -> str:
    """Each direction of a path event: its change and its thresholds."""
    return "<br>".join(
        f"{_e(d['src'])} → {_e(d['dst'])}: {_e(_level(doc, d['old_level']))} → "
        f"{_e(_level(doc, d['new_level']))}{'' if d['moved'] else ' (did not move)'}; "
        f"scale {_e(_threshold(doc, d['scale']))}, flag ≥ "
        f"{_e(_threshold(doc, d['flag_threshold']))}, confirm ≥ "
        f"{_e(_threshold(doc, d['confirm_threshold']))}"
        for d in doc["directions"]
    )


def _delta_lines(doc: dict[str, Any]) -> tuple[str, str]:
    """Each direction's change (ms or Mbit/s) and its change in % of the old level."""
    unit = DISPLAY_UNITS[doc["metric"]]
    deltas, percents = [], []
    for d in doc["directions"]:
        text = format_value(d["change"], doc["unit"])
        deltas.append(f"{'+' if not text.startswith('-') else ''}{text} {unit}")
        pct = d.get("change_pct")
        percents.append("—" if pct is None else f"{pct:+.1f} %")
    return "<br>".join(_e(x) for x in deltas), "<br>".join(_e(x) for x in percents)


def _episode_rows(docs: Sequence[dict[str, Any]]) -> str:
    head = (
        "<tr><th>path</th><th>metric</th><th>status</th><th>each direction: change and "
        "thresholds</th><th>Δ</th><th>%</th><th>k1, k2</th><th>started</th><th>confirmed</th>"
        "<th>closed</th><th>source</th></tr>"
    )
    return head + "".join(
        f"<tr data-status='{_e(d['status'])}' class='path-event'>"
        f"<td>{_pair_link(d['src'], d['dst'], sep='↔')}"
        f"{' (one direction)' if d['one_direction'] else ''}</td>"
        f"<td>{_e(METRIC_TITLES[d['metric']])}</td><td>{_e(d['status'])}</td>"
        f"<td class='directions'>{_direction_lines(d)}</td>"
        f"<td class='delta'>{_delta_lines(d)[0]}</td><td class='pct'>{_delta_lines(d)[1]}</td>"
        f"<td class='thresholds'>{d['k1']:g}, {d['k2']:g}</td>"
        f"<td>{_e(d['started_utc'])}</td><td>{_e(d['confirmed_utc'])}</td>"
        f"<td>{_e(d['closed_utc'] or '')}</td><td>{_tag(d)}</td></tr>"
        for d in docs
    )


def _suspect_rows(docs: Sequence[dict[str, Any]]) -> str:
    head = (
        "<tr><th>path</th><th>metric</th><th>run</th><th>when</th>"
        "<th>each direction: change (flag threshold)</th><th>source</th></tr>"
    )
    return head + "".join(
        f"<tr class='suspected'><td>{_pair_link(d['src'], d['dst'], sep='↔')}</td>"
        f"<td>{_e(METRIC_TITLES[d['metric']])}</td><td>{_e(d['run'])}</td>"
        f"<td>{_e(d['utc'])}</td><td>"
        + "<br>".join(
            f"{_e(x['src'])} → {_e(x['dst'])}: {x['change']:+g} "
            f"({_e(_threshold(d, x['flag_threshold']))})"
            for x in d["directions"]
        )
        + f"</td><td>{_tag(d)}</td></tr>"
        for d in docs
    )


def _host_rows(docs: Sequence[dict[str, Any]]) -> str:
    head = (
        "<tr><th>host / region (toward)</th><th>metric</th><th>status</th><th>pairs changed</th>"
        "<th>started</th><th>source</th></tr>"
    )
    return head + "".join(
        f"<tr data-status='{_e(d['status'])}'><td>{_e(d['host'])}"
        f"{' → ' + _e(d['toward'].split(':', 1)[1]) if d.get('toward') else ''}</td>"
        f"<td>{_e(METRIC_TITLES[d['metric']])}</td><td>{_e(d['status'])}</td>"
        f"<td>{d['pairs_changed']} of {d['pairs_evaluated']}: "
        + ", ".join(_pair_link(p["src"], p["dst"]) for p in d["pairs"])
        + f"</td><td>{_e(d['started_utc'])}</td><td>{_tag(d)}</td></tr>"
        for d in docs
    )


def _config_rows(docs: Sequence[dict[str, Any]]) -> str:
    head = "<tr><th>when</th><th>sweep</th><th>what changed</th><th>pairs</th><th>source</th></tr>"
    return head + "".join(
        f"<tr><td>{_e(c['utc'])}</td><td>{_e(c['run'])}</td>"
        f"<td>{_e('; '.join(c['fields']) or 'fingerprint changed')}</td>"
        f"<td>{len(c['pairs'])}</td><td>{_tag(c)}</td></tr>"
        for c in docs
    )


# the rows each table of the changes page shows, the newest first: a network-wide event
# (every path's run flagged at once) would be thousands of rows, a page of megabytes
TABLE_ROWS = 200


def _table(
    docs: Sequence[dict[str, Any]], element_id: str, rows: Callable[[Sequence[Any]], str]
) -> str:
    """The table of the TABLE_ROWS first of docs (newest first; `rows`: its head and
    rows), then the line saying how many more there are and where every one is."""
    if not docs:
        return f"<p class='muted' id='{element_id}-none'>None.</p>\n"
    table = f"<table id='{element_id}'>{rows(docs[:TABLE_ROWS])}</table>\n"
    if len(docs) <= TABLE_ROWS:
        return table
    return table + (
        f"<p class='muted' id='{element_id}-more'>The first {TABLE_ROWS} of {len(docs):,} "
        "shown; every one: <code>interregion changes --json</code>.</p>\n"
    )


def changes_html(data: HistoryData, studies: bool = False) -> str:
    doc = data.changes
    parts = [
        html.head("Changes", "../", history=True, studies=studies),
        html.banner(any(data.emulated.values()), "Some or all results on this page were"),
        "<h1>Changes</h1>\n",
        f"<p>Change detection over each source's latest {CHANGE_RUNS} sweeps "
        "(orchestrator/history/changes.py, as <code>interregion changes</code>): each path's two "
        "directions' median RTT or throughput against their baselines, an event confirmed "
        "by 3 runs on the same side (each event shows each direction's change and the "
        "thresholds it was judged by: flag at k1 scales, confirm at k2, never under 2 ms); "
        "a host or region change when most of one host's paths moved in the same run. "
        "Suspected runs are flagged runs not (yet) confirmed: shown, never notified. "
        "Configuration changes (a "
        "new kernel, image, tool version or test parameters) are listed apart: they start "
        f"a new baseline and are never counted as network changes. <strong id='open-count'>"
        f"{doc['open']} open</strong>.</p>\n",
    ]
    waiting = doc.get("not_judged") or []
    if waiting:
        judged = doc.get("judged_pairs", 0)
        parts.append(
            "<ul id='not-judged'>"
            + "".join(f"<li>{_e(u['text'])}</li>" for u in waiting)
            + "</ul>\n"
            + f"<p class='muted' id='judged-count'>{judged} directed pairs judged (per metric)"
            + (": nothing can have changed yet" if not judged else "")
            + ".</p>\n"
        )
    for key, is_open in (("open", True), ("closed", False)):
        mine = [d for d in doc["episodes"] if (d["status"] == "open") == is_open]
        mine_hosts = [
            d for d in doc["hosts"] + doc["regions"] if (d["status"] == "open") == is_open
        ]
        parts.append(f"<h2>{key.title()} episodes</h2>\n")
        if mine_hosts:
            parts.append(_table(mine_hosts, f"hosts-{key}", _host_rows))
        if mine or not mine_hosts:
            parts.append(_table(mine, f"episodes-{key}", _episode_rows))
    cal = doc.get("calibration")
    if cal is not None:
        rule = (
            "the store judges with them"
            if doc.get("calibrated")
            else f"the store judges with k1 {Params.k1:g}, k2 {Params.k2:g}; "
            "<code>interregion changes --calibrate</code> judges every run again with these"
        )
        parts.append(
            f"<p id='calibration'>Calibration over each direction's last 28 runs outside "
            f"episodes: {cal.beyond} of {cal.judged} judged runs were 4.5 scales or more "
            f"from their baseline ({100 * cal.rate:.3f} %; normal noise: "
            f"{100 * cal.expected:.4f} %), tails {cal.inflation:.2f} x a normal's: "
            f"thresholds k1 {cal.k1:g}, k2 {cal.k2:g} ({rule}).</p>\n"
        )
    parts.append("<h2>Suspected runs</h2>\n")
    parts.append(_table(doc["suspected"], "suspected", _suspect_rows))
    parts.append("<h2>Configuration changes</h2>\n")
    parts.append(_table(doc["configuration_changes"], "configuration-changes", _config_rows))
    parts.append(html.foot())
    return "".join(parts)


def pair_html(page: dict[str, Any], studies: bool = False) -> str:
    title = f"{page['a']} ↔ {page['b']}"
    emulated = any(s["emulated"] for s in page["sources"])
    parts = [
        html.head(title, "../../", history=True, studies=studies),
        html.banner(emulated, "Some or all results on this page were"),
        f"<h1>{_e(title)}</h1>\n",
        "<p>Both directions over time: each point is one test (median of its ping samples; "
        "throughput of its iperf3 run). Shaded spans are change episodes (red: worse, "
        "green: better; open ones run to the latest test), dotted lines configuration "
        "changes. <a href='../matrix.html'>Matrix</a>, "
        "<a href='../changes.html'>changes</a>.</p>\n",
    ]
    for n, entry in enumerate(page["sources"]):
        if is_mesh(entry):
            parts.append(mesh_html(entry, n))
            continue
        parts.append(
            f"<h2 class='caption'>{_e(entry['caption'])}</h2>\n"
            f"<p class='muted'>{_e(entry['window_start_utc'] or 'all tests')} .. "
            f"{_e(entry['window_end_utc'] or '')}</p>\n"
        )
        sizes = [
            f"{_e(d['src'])} → {_e(d['dst'])} {d['smallest_detectable_change_ms']:g} ms"
            for d in entry["directions"]
            if d.get("smallest_detectable_change_ms") is not None
        ]
        if sizes:
            parts.append(
                f"<p class='detectable' id='detectable-{n}'>Smallest RTT change detected within "
                f"3 runs (95 %): {', '.join(sizes)}.</p>\n"
            )
        losses = [
            f"{_e(d['src'])} → {_e(d['dst'])} {_e(loss_text(d['loss']))}"
            for d in entry["directions"]
            if d["loss"]["loss_pct"] is not None
        ]
        if losses:
            parts.append(
                f"<p class='loss' id='loss-{n}'>Pings lost / sent over the tests shown, with "
                f"the Wilson 95 % interval: {'; '.join(losses)}.</p>\n"
            )
        for metric in UNITS:
            if all(x is None for d in entry["directions"] for x in d[metric]):
                continue  # e.g. an import of RTT only: no empty chart
            parts.append(
                f"<div class='chart pair-chart' id='pair-{n}-{metric}' data-pair='pair-data' "
                f"data-source='{n}' data-metric='{metric}'></div>\n"
            )
    parts.append(html.json_script("pair-data", page))
    parts.append(html.scripts("../../assets/plotly.min.js", "../../assets/history.js"))
    parts.append(html.foot())
    return "".join(parts)
