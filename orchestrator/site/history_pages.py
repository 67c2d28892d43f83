"""The site's pages built from the history store: the matrix, the changes and the pairs.

Everything the pages show is computed here at build time, in DuckDB and
orchestrator.history.changes: the matrix of every (source, metric, window) with all three
percentiles, freshness, samples and the change-detection baseline of each cell, so
the browser only switches between precomputed arrays. The data goes into the pages
as JSON (a local .js file for the matrix: file:// forbids fetching local JSON), drawn
by assets/history.js. Sources are never mixed; every view names its source, and an
emulated source is labelled EMULATED.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.history import changes as ch
from orchestrator.history import views as v
from orchestrator.site.html import banner as _banner
from orchestrator.site.html import esc as _e
from orchestrator.site.html import foot as _foot
from orchestrator.site.html import head as _head
from orchestrator.site.html import json_script as _json_script
from orchestrator.site.html import write as _write

if TYPE_CHECKING:
    import duckdb

MATRIX_DATA_FORMAT = "interregion.site-matrix"
MATRIX_DATA_VERSION = 1
CHANGE_RUNS = 56  # as `interregion changes`: each source's latest sweeps
PAIR_WINDOW = "1M"  # pair pages: the matrix's widest window (and each pair's newest test)
METRIC_UNITS = {"rtt": "ms", "throughput": "bit/s"}
# Shown units: ms, and Mbit/s (a matrix of 9-digit bit/s is unreadable and heavier).
DISPLAY_UNITS = {"rtt": "ms", "throughput": "Mbit/s"}
_DISPLAY_SCALE = {"rtt": 1.0, "throughput": 1e-6}
METRIC_TITLES = {"rtt": "RTT", "throughput": "throughput"}


@dataclass
class HistoryData:
    matrix: dict[str, Any]  # what matrix-data.js holds
    changes: dict[str, Any]  # open and closed episodes, configuration changes
    pairs: dict[tuple[str, str], dict[str, Any]]  # unordered pair -> its page's data
    emulated: dict[str, bool]  # source -> emulated?


def shown(metric: str, value: float | None) -> float | None:
    """A value in the metric's display unit, rounded for the page (0.01 ms, 0.01 Mbit/s)."""
    if value is None:
        return None
    return round(value * _DISPLAY_SCALE[metric], 2)


def pair_file(a: str, b: str) -> str:
    """The page of an unordered pair: `aws_us-east-1--gcp_europe-west1.html` (no ':' in a
    relative link, where it would read as a URL scheme). history.js builds the same name."""
    first, second = sorted((a, b))

    def part(region: str) -> str:
        return re.sub(r"[^a-z0-9-]", "_", region.lower())

    return f"{part(first)}--{part(second)}.html"


def _epoch_s(t: datetime | None) -> int | None:
    return int(t.replace(tzinfo=UTC).timestamp()) if t is not None else None


def history_data(con: duckdb.DuckDBPyConnection, now: datetime | None = None) -> HistoryData:
    """Every figure of the history pages, from the store (read only)."""
    infos = list(v.source_infos(con).values())
    if not infos:
        from orchestrator.core.errors import UserError

        raise UserError("the history store is empty: run 'interregion history ingest --all'")
    infos.sort(key=lambda i: (i.name not in ("measured", "emulated"), i.name != "measured", i.name))
    found = ch.detect(v.change_series(con, CHANGE_RUNS))
    built = now or datetime.now(UTC)
    return HistoryData(
        matrix=matrix_data(con, infos, found, built),
        changes=changes_data(con, found, infos),
        pairs=pair_data(con, infos, found),
        emulated={i.name: i.emulated for i in infos},
    )


# ---- the matrix -----------------------------------------------------------------------


def _baselines(found: ch.Detection) -> dict[tuple[str, str, str, str], float]:
    """(source, metric, src, dst) -> baseline; with several backends, the one last run."""
    return {
        (k.source, k.metric, k.src, k.dst): level
        for k, level in sorted(found.baselines.items(), key=lambda kv: kv[0].backend)
    }


def _open_episodes(found: ch.Detection) -> set[tuple[str, str, str, str]]:
    out = set()
    episodes = [*found.episodes, *(e for host in found.hosts for e in host.pairs)]
    for e in episodes:
        if e.status == "open":
            out.add((e.key.source, e.key.metric, e.key.src, e.key.dst))
    return out


def matrix_data(
    con: duckdb.DuckDBPyConnection,
    infos: Sequence[v.SourceInfo],
    found: ch.Detection,
    built: datetime,
) -> dict[str, Any]:
    """Every (source, metric, window) view of the From x To matrix, with all three stats.

    A view's arrays are row-major over the source's regions (From x To, R x R):
    `p50`, `p90`, `p99` (display unit; p99 null below 100 samples), `samples`, `tests`
    and `newest_s` (UNIX time of the newest test). `baseline` (per metric) is the
    change-detection baseline of each cell, `open` the cells with an open episode."""
    baselines = _baselines(found)
    opened = _open_episodes(found)
    sources = []
    for info in infos:
        cells = {
            (metric, window): v.window_cells(con, info, metric, window)
            for metric in METRIC_UNITS
            for window in v.SITE_WINDOWS
        }
        regions = sorted(
            {c.src for cs in cells.values() for c in cs}
            | {c.dst for cs in cells.values() for c in cs}
        )
        index = {r: i for i, r in enumerate(regions)}
        width = len(regions)
        size = width**2

        def at(src: str, dst: str, index: dict[str, int] = index, width: int = width) -> int:
            return index[src] * width + index[dst]

        views = {}
        for (metric, window), found_cells in cells.items():
            arrays: dict[str, list[Any]] = {
                k: [None] * size for k in (*v.STATS, "samples", "tests", "newest_s")
            }
            for c in found_cells:
                k = at(c.src, c.dst)
                for stat in v.STATS:
                    arrays[stat][k] = shown(metric, c.stat(stat))
                arrays["samples"][k] = c.samples
                arrays["tests"][k] = c.tests
                arrays["newest_s"][k] = _epoch_s(c.newest)
            start = None if window == "latest" else v.window_bounds(info, window)[0]
            views[f"{metric}|{window}"] = {
                "window_start_utc": v.iso_utc(start),
                "window_end_utc": v.iso_utc(info.latest),
                "pairs": len(found_cells),
                **arrays,
            }
        baseline: dict[str, list[float | None]] = {}
        open_cells: dict[str, list[int]] = {}
        for metric in METRIC_UNITS:
            baseline[metric] = [None] * size
            for (source, m, src, dst), level in baselines.items():
                if source == info.name and m == metric and src in index and dst in index:
                    baseline[metric][at(src, dst)] = shown(metric, level)
            open_cells[metric] = sorted(
                at(src, dst)
                for source, m, src, dst in opened
                if source == info.name and m == metric and src in index and dst in index
            )
        sources.append(
            {
                "source": info.name,
                "label": info.label,
                "emulated": info.emulated,
                "caption": v.source_caption(
                    {"source": info.name, "label": info.label, "emulated": info.emulated}
                ),
                "latest_utc": v.iso_utc(info.latest),
                "regions": regions,
                "views": views,
                "baseline": baseline,
                "open": open_cells,
            }
        )
    return {
        "format": MATRIX_DATA_FORMAT,
        "version": MATRIX_DATA_VERSION,
        "built_utc": v.iso_utc(built.astimezone(UTC).replace(tzinfo=None)),
        "built_s": int(built.timestamp()),
        "units": DISPLAY_UNITS,
        "stats": list(v.STATS),
        "windows": list(v.SITE_WINDOWS),
        "sources": sources,
    }


# ---- changes --------------------------------------------------------------------------


def changes_data(
    con: duckdb.DuckDBPyConnection, found: ch.Detection, infos: Sequence[v.SourceInfo]
) -> dict[str, Any]:
    """Pair and host episodes (open and closed) and configuration changes, apart."""
    emulated = {i.name: i.emulated for i in infos}
    episodes = [ch.episode_doc(e, METRIC_UNITS) for e in found.episodes]
    hosts = [ch.host_doc(h, METRIC_UNITS) for h in found.hosts]
    configs = v.config_change_docs(con, found.config_changes)
    for doc in [*episodes, *hosts, *configs]:
        doc["emulated"] = emulated.get(doc["source"], False)
    latest_first = sorted(episodes, key=lambda d: d["started_utc"], reverse=True)
    return {
        "open": sum(d["status"] == "open" for d in [*episodes, *hosts]),
        "episodes": latest_first,
        "hosts": sorted(hosts, key=lambda d: d["started_utc"], reverse=True),
        "configuration_changes": sorted(configs, key=lambda d: d["utc"], reverse=True),
    }


# ---- pairs ----------------------------------------------------------------------------


def pair_data(
    con: duckdb.DuckDBPyConnection, infos: Sequence[v.SourceInfo], found: ch.Detection
) -> dict[tuple[str, str], dict[str, Any]]:
    """Per unordered pair: each source's runs in both directions over the PAIR_WINDOW
    (a pair without a test there shows its newest one), with its episodes and
    configuration changes as markers."""
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    marks = _pair_marks(found)
    for info in infos:
        start, _end = v.window_bounds(info, PAIR_WINDOW)
        shown_from = v.iso_utc(start)
        for src, dst, times, sweeps, rtts, throughputs in _pair_rows(con, info.name, start):
            key = (min(src, dst), max(src, dst))
            page = pairs.setdefault(key, {"a": key[0], "b": key[1], "sources": {}})
            entry = page["sources"].setdefault(
                info.name,
                {
                    "source": info.name,
                    "emulated": info.emulated,
                    "caption": v.source_caption(
                        {"source": info.name, "label": info.label, "emulated": info.emulated}
                    ),
                    "window_start_utc": v.iso_utc(start),
                    "window_end_utc": v.iso_utc(info.latest),
                    "directions": [],
                    # only what shows in the window (an old span would stretch the axis)
                    "episodes": [
                        e
                        for e in marks["episodes"].get((info.name, *key), [])
                        if shown_from is None or (e["closed_utc"] or "~") >= shown_from
                    ],
                    "configuration_changes": [
                        c
                        for c in marks["configs"].get((info.name, *key), [])
                        if shown_from is None or c["utc"] >= shown_from
                    ],
                },
            )
            entry["directions"].append(
                {
                    "src": src,
                    "dst": dst,
                    "t": times,
                    "sweep": sweeps,
                    "rtt": rtts,
                    "throughput": throughputs,
                }
            )
    for page in pairs.values():
        page["sources"] = list(page["sources"].values())
        for entry in page["sources"]:
            entry["directions"].sort(key=lambda d: (d["src"] != page["a"], d["src"]))
    return pairs


def _pair_rows(
    con: duckdb.DuckDBPyConnection, source: str, start: datetime | None
) -> list[tuple[Any, ...]]:
    """Per directed pair: (src, dst, [t], [sweep], [rtt ms], [throughput Mbit/s]), oldest
    first, rounded as shown(): its tests from `start` on, or its newest test when it has
    none there. One row per pair, the lists built by DuckDB (a year of a full catalog is
    millions of tests)."""
    columns = f"src, dst, started_utc, sweep_id, {v.METRICS['rtt'].run_sql} AS rtt, throughput_bps"
    ok = "source = ? AND status = 'ok'"
    if start is None:
        chosen = f"SELECT {columns} FROM measurements WHERE {ok}"
        params: list[Any] = [source]
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
    # one ordered list of structs per pair (four ordered lists would sort four times),
    # split into the page's arrays, values in their display units (as shown())
    rtt_scale, tput_scale = _DISPLAY_SCALE["rtt"], _DISPLAY_SCALE["throughput"]
    return con.execute(
        "SELECT src, dst, [x.t FOR x IN l], [x.sweep FOR x IN l], "
        f"[round(x.rtt * {rtt_scale!r}, 2) FOR x IN l], "
        f"[round(x.tput * {tput_scale!r}, 2) FOR x IN l] FROM (SELECT src, dst, "
        "list({'t': strftime(started_utc, '%Y-%m-%dT%H:%M:%SZ'), 'sweep': sweep_id, "
        "'rtt': rtt, 'tput': throughput_bps} ORDER BY started_utc) AS l "
        f"FROM ({chosen}) GROUP BY src, dst) ORDER BY src, dst",
        params,
    ).fetchall()


def _pair_marks(found: ch.Detection) -> dict[str, dict[tuple[str, str, str], list[Any]]]:
    """(source, a, b) -> that pair's episodes (both directions, both metrics) and
    configuration changes."""
    episodes: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    for e in [*found.episodes, *(x for host in found.hosts for x in host.pairs)]:
        k = e.key
        key = (k.source, min(k.src, k.dst), max(k.src, k.dst))
        episodes[key].append(
            {
                "metric": k.metric,
                "src": k.src,
                "dst": k.dst,
                "status": e.status,
                "started_utc": e.started_t,
                "closed_utc": e.closed_t or None,
                "old_level": shown(k.metric, e.old_level),
                "new_level": shown(k.metric, e.new_level),
            }
        )
    configs: dict[tuple[str, str, str], list[Any]] = defaultdict(list)
    seen = set()
    for c in found.config_changes:
        k = c.key
        key = (k.source, min(k.src, k.dst), max(k.src, k.dst))
        if (key, c.run_id) in seen:  # one marker per run, whatever the metric/direction
            continue
        seen.add((key, c.run_id))
        configs[key].append({"utc": c.t, "run": c.run_id})
    return {"episodes": dict(episodes), "configs": dict(configs)}


# ---- pages ----------------------------------------------------------------------------


def write_pages(root: Path, data: HistoryData, studies: bool = False) -> None:
    """history/matrix.html (+ matrix-data.js), history/changes.html, history/pairs/*.html;
    `studies`: the site has TCP study pages (a link in every header)."""
    folder = root / "history"
    text = json.dumps(data.matrix, separators=(",", ":"))
    _write(folder / "matrix-data.js", f"window.InterregionMatrix = {text};\n")
    _write(folder / "matrix.html", matrix_html(data, studies))
    _write(folder / "changes.html", changes_html(data, studies))
    for (a, b), page in data.pairs.items():
        _write(folder / "pairs" / pair_file(a, b), pair_html(page, studies))


def _source_banner(emulated: bool, hidden: bool = False) -> str:
    """The EMULATED banner, which history.js shows or hides as the source changes."""
    text = _banner(True, "The results shown were").strip()
    text = text.replace(
        "<div class='emulated-banner'>",
        "<div class='emulated-banner' "
        f"id='source-banner'{' hidden' if hidden or not emulated else ''}>",
    )
    return text + "\n"


def _select(name: str, label: str, options: Iterable[tuple[str, str]], chosen: str) -> str:
    items = "".join(
        f"<option value='{_e(value)}'{' selected' if value == chosen else ''}>{_e(text)}</option>"
        for value, text in options
    )
    return f"<label>{_e(label)} <select name='{name}'>{items}</select></label>"


def matrix_html(data: HistoryData, studies: bool = False) -> str:
    sources = data.matrix["sources"]
    first = sources[0]
    windows = {
        "latest": "latest (each pair's newest test)",
        "1D": "1 day",
        "1W": "1 week",
        "1M": "1 month (30 days)",
    }
    controls = "".join(
        [
            _select(
                "source", "source", [(s["source"], s["caption"]) for s in sources], first["source"]
            ),
            _select(
                "metric",
                "metric",
                [("rtt", "RTT (ms)"), ("throughput", "throughput (Mbit/s)")],
                "rtt",
            ),
            _select("stat", "statistic", [(s, s) for s in v.STATS], "p50"),
            _select("window", "window", [(w, windows[w]) for w in v.SITE_WINDOWS], "1W"),
            _select(
                "colour",
                "colour",
                [("absolute", "absolute buckets"), ("deviation", "deviation from baseline")],
                "absolute",
            ),
            _select(
                "show",
                "cells show",
                [("value", "the value"), ("detail", "value, n and age")],
                "value",
            ),
        ]
    )
    return "".join(
        [
            _head("Matrix", "../", history=True, studies=studies),
            _source_banner(first["emulated"]),
            "<h1>From x To matrix</h1>\n",
            "<p>Each cell is one directed pair: the percentile of the pooled samples of every "
            "test in the window (p99 needs 100 samples, else —), rows send, columns receive. "
            "Point at a cell for its samples (n), tests, the age of its newest test and its "
            "baseline; a cell links to the pair's page. Deviation compares the window's p50, "
            "whatever the stat shown, with the change-detection baseline (the median of the "
            "pair's last 28 comparable runs' medians); "
            "cells with an open episode are outlined. Sources are never mixed: the caption "
            "names the one shown.</p>\n",
            f"<form id='matrix-controls'>{controls}</form>\n",
            f"<p id='matrix-caption' class='caption'>{_e(first['caption'])}</p>\n",
            "<div id='matrix-legend'></div>\n",
            "<p id='matrix-detail' class='muted'>&nbsp;</p>\n",
            "<div class='matrix-wrap'><table id='matrix' class='matrix'></table></div>\n",
            "<noscript><p>The matrix is drawn by JavaScript from matrix-data.js.</p></noscript>\n",
            "<script src='matrix-data.js'></script>\n",
            "<script src='../assets/history.js'></script>\n",
            _foot(),
        ]
    )


def _level(doc: dict[str, Any], value: float) -> str:
    return f"{v.format_value(value, doc['unit'])} {DISPLAY_UNITS[doc['metric']]}"


def _tag(doc: dict[str, Any]) -> str:
    label = " <strong class='emulated-tag'>EMULATED</strong>" if doc["emulated"] else ""
    return f"{_e(doc['source'])}/{_e(doc['backend'])}{label}"


def _pair_link(src: str, dst: str, prefix: str = "pairs/") -> str:
    return f"<a href='{prefix}{_e(pair_file(src, dst))}'>{_e(src)} → {_e(dst)}</a>"


def _episode_rows(docs: Sequence[dict[str, Any]]) -> str:
    head = (
        "<tr><th>pair</th><th>metric</th><th>status</th><th>from</th><th>to</th>"
        "<th>started</th><th>confirmed</th><th>closed</th><th>source</th></tr>"
    )
    rows = [
        f"<tr data-status='{_e(d['status'])}'><td>{_pair_link(d['src'], d['dst'])}</td>"
        f"<td>{_e(METRIC_TITLES[d['metric']])}</td><td>{_e(d['status'])}</td>"
        f"<td>{_e(_level(d, d['old_level']))}</td><td>{_e(_level(d, d['new_level']))}</td>"
        f"<td>{_e(d['started_utc'])}</td><td>{_e(d['confirmed_utc'])}</td>"
        f"<td>{_e(d['closed_utc'] or '')}</td><td>{_tag(d)}</td></tr>"
        for d in docs
    ]
    return head + "".join(rows)


def _host_rows(docs: Sequence[dict[str, Any]]) -> str:
    head = (
        "<tr><th>host / region</th><th>metric</th><th>status</th><th>pairs changed</th>"
        "<th>started</th><th>source</th></tr>"
    )
    rows = [
        f"<tr data-status='{_e(d['status'])}'><td>{_e(d['host'])}</td>"
        f"<td>{_e(METRIC_TITLES[d['metric']])}</td><td>{_e(d['status'])}</td>"
        f"<td>{d['pairs_changed']} of {d['pairs_evaluated']}: "
        + ", ".join(_pair_link(p["src"], p["dst"]) for p in d["pairs"])
        + f"</td><td>{_e(d['started_utc'])}</td><td>{_tag(d)}</td></tr>"
        for d in docs
    ]
    return head + "".join(rows)


def changes_html(data: HistoryData, studies: bool = False) -> str:
    doc = data.changes
    episodes, hosts = doc["episodes"], doc["hosts"]
    parts = [
        _head("Changes", "../", history=True, studies=studies),
        _banner(any(data.emulated.values()), "Some or all results on this page were"),
        "<h1>Changes</h1>\n",
        f"<p>Change detection over each source's latest {CHANGE_RUNS} sweeps "
        "(orchestrator/history/changes.py, as <code>interregion changes</code>): a pair's "
        "median RTT or throughput against its baseline, confirmed by 2 runs; a host or "
        "region change when most of one host's pairs moved in the same run. Configuration "
        "changes (a new kernel, image, tool version or test parameters) are listed apart: "
        "they start a new baseline and are never counted as network changes. "
        "<strong id='open-count'>"
        f"{doc['open']} open</strong>.</p>\n",
    ]
    for title, status_open in (("Open", True), ("Closed", False)):
        mine = [d for d in episodes if (d["status"] == "open") == status_open]
        mine_hosts = [d for d in hosts if (d["status"] == "open") == status_open]
        key = "open" if status_open else "closed"
        parts.append(f"<h2>{title} episodes</h2>\n")
        if mine_hosts:
            parts.append(f"<table id='hosts-{key}'>{_host_rows(mine_hosts)}</table>\n")
        if mine:
            parts.append(f"<table id='episodes-{key}'>{_episode_rows(mine)}</table>\n")
        if not (mine or mine_hosts):
            parts.append(f"<p class='muted' id='episodes-{key}-none'>None.</p>\n")
    parts.append("<h2>Configuration changes</h2>\n")
    configs = doc["configuration_changes"]
    if configs:
        rows = "".join(
            f"<tr><td>{_e(c['utc'])}</td><td>{_e(c['run'])}</td>"
            f"<td>{_e('; '.join(c['fields']) or 'fingerprint changed')}</td>"
            f"<td>{len(c['pairs'])}</td><td>{_tag(c)}</td></tr>"
            for c in configs
        )
        parts.append(
            "<table id='configuration-changes'><tr><th>when</th><th>sweep</th>"
            "<th>what changed</th><th>pairs</th><th>source</th></tr>" + rows + "</table>\n"
        )
    else:
        parts.append("<p class='muted' id='configuration-changes-none'>None.</p>\n")
    parts.append(_foot())
    return "".join(parts)


def pair_html(page: dict[str, Any], studies: bool = False) -> str:
    a, b = page["a"], page["b"]
    title = f"{a} ↔ {b}"
    emulated = any(s["emulated"] for s in page["sources"])
    parts = [
        _head(title, "../../", history=True, studies=studies),
        _banner(emulated, "Some or all results on this page were"),
        f"<h1>{_e(title)}</h1>\n",
        "<p>Both directions over time: each point is one test (median of its ping samples; "
        "throughput of its iperf3 run). Shaded spans are change episodes (red: worse, "
        "green: better; open ones run to the latest test), dotted lines configuration "
        "changes. <a href='../matrix.html'>Matrix</a>, "
        "<a href='../changes.html'>changes</a>.</p>\n",
    ]
    for n, entry in enumerate(page["sources"]):
        parts.append(
            f"<h2 class='caption'>{_e(entry['caption'])}</h2>\n"
            f"<p class='muted'>{_e(entry['window_start_utc'] or 'all tests')} .. "
            f"{_e(entry['window_end_utc'] or '')}</p>\n"
        )
        for metric in METRIC_UNITS:
            if all(x is None for d in entry["directions"] for x in d[metric]):
                continue  # e.g. an import of RTT only: no empty chart
            parts.append(
                f"<div class='chart pair-chart' id='pair-{n}-{metric}' data-pair='pair-data' "
                f"data-source='{n}' data-metric='{metric}'></div>\n"
            )
    parts.append(_json_script("pair-data", page))
    parts.append(
        "<script src='../../assets/plotly.min.js'></script>\n"
        "<script src='../../assets/history.js'></script>\n"
    )
    parts.append(_foot())
    return "".join(parts)
