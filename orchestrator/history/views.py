"""Views of the history store: one pair's series, and the From x To matrix.

A window's statistics are those of the pooled samples of its tests, by the rule of
docs/history.md ('Windows and percentiles'; orchestrator.history.windows computes them).
Sources are never mixed: each view is of one source and says which. A test is left out of
a metric's view when one of its flags invalidates that metric, unless `include_flagged`;
each view counts the tests it left out (`flagged_tests`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.core import CATALOG, UserError, shell_word
from orchestrator.history.metrics import (
    LOSS_RULE,
    MATRIX_FORMAT,
    MATRIX_VERSION,
    MESH_WINDOWS,
    PAIR_FORMAT,
    PAIR_VERSION,
    PERCENTILE_RULE,
    PINGS_LOST_SQL,
    PINGS_SENT_SQL,
    STATS,
    Metric,
    SourceInfo,
    chosen_sources,
    iso_utc,
    loss_fields,
    mesh_sources,
    metric,
    parse_pairs,
    source_infos,
    stat_fields,
    valid_sql,
    window_bounds,
    window_days,
)
from orchestrator.model import Catalog, load_catalog, region_order
from orchestrator.netmodel import DEFAULT_MODEL
from orchestrator.plan import SelectionSpec, pair_filter
from orchestrator.results import format_value as csv_value

if TYPE_CHECKING:
    import duckdb


def existing_results(results: Path) -> Path:
    """--results for a command that reads every sweep: a mistyped folder is an error,
    not an empty store made there."""
    if not Path(results).is_dir():
        raise UserError(f"--results {results}: no such folder: give the folder holding the sweeps")
    return results


def with_store(results: Path) -> Path:
    """--results for a command that reads the store: a one-line error when the folder or
    its store is missing, whose hint runs as printed (it names the folder)."""
    from orchestrator.history import store as h

    if not h.store_path(existing_results(results)).exists():
        raise UserError(
            f"no history store at {h.store_path(results)}: run 'interregion history "
            f"ingest --all --results {shell_word(results)}' first"
        )
    return results


@dataclass(frozen=True)
class PairSeries:
    """`history show`'s result: each pair's pair_history document."""

    window: str
    docs: tuple[dict[str, Any], ...]

    def to_json(self) -> Any:
        return list(self.docs) if len(self.docs) > 1 else self.docs[0]


def pair_series(
    results: Path, pairs: str, metric_name: str = "rtt", window: str = "all",
    sources: Sequence[str] = (),
) -> PairSeries:  # fmt: skip
    """The series of each pair of `pairs` ("SRC/DST,..."), with its smallest detectable change."""
    from orchestrator.history import store as h

    chosen = parse_pairs(pairs)
    with h.opened(with_store(results), read_only=True) as con:
        found = detection(con, sources)
        docs = [pair_history(con, p, metric_name, window, sources, found) for p in chosen]
    return PairSeries(window, tuple(docs))


def pair_history(
    con: duckdb.DuckDBPyConnection,
    pair: tuple[str, str],
    metric_name: str = "rtt",
    window: str = "all",
    sources: Sequence[str] = (),
    detected: Any = None,
) -> dict[str, Any]:
    """One directed pair's series and its window percentiles, per source, its flagged
    tests left out and counted; with `detected` (a changes.Detection), its scale and
    smallest detectable change."""
    from orchestrator.history import windows

    m = metric(metric_name)
    is_loss = m.name == "loss"
    sent, lost = (PINGS_SENT_SQL, PINGS_LOST_SQL) if is_loss else ("NULL", "NULL")
    src, dst = pair
    out = []
    found = con.execute("SELECT pair FROM pairs WHERE src = ? AND dst = ?", [src, dst]).fetchone()
    numbers = [found[0]] if found else []
    for info in chosen_sources(source_infos(con), sources):
        start, _end = window_bounds(info, window)
        where, params = _since(
            "source = ? AND src = ? AND dst = ? AND status = 'ok'", [info.name, src, dst], start
        )
        flagged = _flagged_tests(con, f"{where} AND {m.present_sql}", params, m)
        where += f" AND {valid_sql(m.measure)}"
        runs = con.execute(
            f"SELECT started_utc, sweep_id, fingerprint, v, k, sent, lost FROM (SELECT "
            f"started_utc, sweep_id, fingerprint, {m.run_sql} AS v, len({m.samples_sql}) AS "
            f"k, {sent} AS sent, {lost} AS lost FROM measurements WHERE {where}) "
            "WHERE v IS NOT NULL ORDER BY started_utc",
            params,
        ).fetchall()
        if not runs:
            continue
        # the window's statistics as every view computes them (windows.window_table)
        cells = windows.window_cells(con, info, m.name, window, pairs=numbers)
        n, qs = (cells[0].samples, cells[0].quantiles) if cells else (0, None)
        out.append(
            {
                **_source_doc(info, start),
                "samples": int(n),
                "tests": len(runs),
                "flagged_tests": flagged,
                **rate_scale(info.emulated, m.unit),
                **stat_fields(int(n), qs),
                **((cells[0].loss() if cells else loss_fields(0, 0)) if is_loss else {}),
                **(detectable(detected, info.name, m.name, src, dst) if detected else {}),
                "runs": [
                    {
                        "started_utc": iso_utc(t),
                        "sweep_id": sid,
                        "fingerprint": fp,
                        "value": float(v),
                        "samples": int(k),
                        **(loss_fields(sent or 0, lost or 0) if is_loss else {}),
                    }
                    for t, sid, fp, v, k, sent, lost in runs
                ],
            }
        )
    return {"format": PAIR_FORMAT, "version": PAIR_VERSION, "src": src, "dst": dst,
            "metric": m.name, "unit": m.unit, "window": window,
            "percentile_rule": PERCENTILE_RULE,
            **({"loss_rule": LOSS_RULE} if is_loss else {}),
            "sources": out}  # fmt: skip


def _source_doc(info: SourceInfo, start: datetime | None) -> dict[str, Any]:
    """What every view's document says of its source and window."""
    return {
        "source": info.name,
        "label": info.label,
        "emulated": info.emulated,
        "window_start_utc": iso_utc(start),
        "window_end_utc": iso_utc(info.latest),
    }


def _since(where: str, params: list[Any], start: datetime | None) -> tuple[str, list[Any]]:
    """`where` and its `params` limited to the tests from `start` on (None: all)."""
    if start is None:
        return where, params
    return f"{where} AND started_utc >= ?", [*params, start]


# ---- what change detection can see -----------------------------------------------------

CHANGE_RUNS = 56  # `interregion changes` and the site: each source's latest sweeps
DETECTABLE = "detectable"  # the matrix's metric of each pair's smallest detectable change


def detectable(
    found: Any, source: str, metric_name: str, src: str, dst: str
) -> dict[str, float | None]:
    """A directed pair's detectable_change with the k in force (calibrated or not); None
    before it has enough comparable runs. `found` is a changes.Detection."""
    wanted = (source, metric_name, src, dst)
    key = next(
        (k for k in reversed(found.scales) if (k.source, k.metric, k.src, k.dst) == wanted), None
    )
    if key is None:
        return {"scale": None, "smallest_detectable_change": None}
    return detectable_change(found.scales[key], metric_name, rule_in_force(found, key))


def rule_in_force(found: Any, key: Any) -> Any:
    """The rule (a changes.Params) a series' runs were judged by: the store's, with the
    k1 and k2 of its source's calibration when the rule calibrates. `found` is a
    changes.Detection, `key` one of its series' keys."""
    p = found.params
    calibrated = found.calibrations.get((key.source, key.backend, key.metric))
    if p.calibrate and calibrated is not None:
        p = replace(p, k1=calibrated.k1, k2=calibrated.k2)
    return p


def detectable_change(scale: float, metric_name: str, p: Any) -> dict[str, float | None]:
    """A change-detection scale and the change it confirms within 3 runs with 95 %
    probability under the rule `p` (a changes.Params): ms for RTT, a ratio (0.2 = 20 %)
    for throughput."""
    from orchestrator.history import changes as ch

    change = ch.smallest_change(scale, metric_name, p)
    if metric_name == "throughput":
        return {"scale": round(math.expm1(scale), 4),
                "smallest_detectable_change": round(math.expm1(change), 4)}  # fmt: skip
    return {"scale": round(scale, 3), "smallest_detectable_change": round(change, 2)}


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
                **_source_doc(info, None),
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


def _flagged_tests(
    con: duckdb.DuckDBPyConnection, where: str, params: Sequence[Any], m: Metric
) -> int:
    """Tests matching `where` whose flags invalidate metric `m`."""
    row = con.execute(
        f"SELECT count(*) FROM measurements WHERE {where} AND NOT {valid_sql(m.measure)}",
        params,
    ).fetchone()
    return int(row[0]) if row else 0


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
    from orchestrator.history import windows

    m = metric(metric_name)
    if stat not in STATS:
        raise UserError(f"--stat {stat}: one of {', '.join(STATS)}")
    if window != "latest":  # else one of WINDOWS
        window_days(window)
    matrices = []
    for info in chosen_sources(source_infos(con), sources):
        start, _end = window_bounds(info, window)
        cells: list[dict[str, Any]] = [
            {
                "src": c.src,
                "dst": c.dst,
                "value": c.stat(stat),
                "value_n": c.samples,
                "samples": c.samples,
                "tests": c.tests,
                "distance_km": c.distance_km,
                **(c.loss() if m.name == "loss" else {}),
            }
            for c in windows.window_cells(
                con, info, m.name, window, include_flagged=include_flagged
            )
            if keep is None or keep(c.src, c.dst, c.distance_km)
        ]
        where, params = _since(
            f"source = ? AND status = 'ok' AND {m.present_sql}", [info.name], start
        )
        used = {c["src"] for c in cells} | {c["dst"] for c in cells}
        regions = region_order(used, catalog) if catalog is not None else sorted(used)
        matrices.append(
            {
                **_source_doc(info, start),
                "regions": regions,
                "flagged_tests": 0 if include_flagged else _flagged_tests(con, where, params, m),
                **rate_scale(info.emulated, m.unit),
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
        **({"loss_rule": LOSS_RULE} if m.name == "loss" else {}),
        "include_flagged": include_flagged,
        "matrices": matrices,
    }


@dataclass(frozen=True)
class MatrixRequest:
    results: Path
    metric: str = "rtt"
    stat: str = "p50"
    window: str = "1W"
    sources: tuple[str, ...] = ()
    include_flagged: bool = False
    catalog: Path = CATALOG
    selection: SelectionSpec = field(default_factory=SelectionSpec)  # its filters only
    json_hint: bool = False  # a mesh source's hint names `mesh matrix --json`


@dataclass(frozen=True)
class MatrixReport:
    """`interregion matrix`'s result: matrix()'s document, its JSON (docs/history.md)."""

    doc: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.doc


def matrix_report(request: MatrixRequest) -> MatrixReport:
    """The matrix of the sweeps' sources (or those asked for), the pair filter applied."""
    from orchestrator.history import store as h

    r = request
    regions = load_catalog(r.catalog)
    keep = pair_filter(r.selection, regions) if r.selection != SelectionSpec() else None
    with h.opened(with_store(r.results), read_only=True) as con:
        sources = sweep_sources(con, r.sources, r.window, r.json_hint)
        return MatrixReport(
            matrix(con, r.metric, r.stat, r.window, sources, keep, regions, r.include_flagged)
        )


def sweep_sources(
    con: duckdb.DuckDBPyConnection, sources: Sequence[str], window: str, json_hint: bool
) -> tuple[str, ...]:
    """The sources a sweeps' matrix shows: those given, or every source but the mesh's
    (its bins have a matrix of their own, `mesh matrix`, windows down to an hour). A mesh
    source given is a one-line error naming that command."""
    meshes = mesh_sources(con)
    given = [s for s in sources if s in meshes]
    if given:
        mesh_window = window if window in MESH_WINDOWS else "1H"
        command = f"interregion mesh matrix --source {given[0]} --window {mesh_window}"
        raise UserError(
            f"--source {given[0]} is the continuous mesh's: its matrix (1H, 6H, 1D, 1W) is "
            f"'{command}{' --json' if json_hint else ''}'"
        )
    if sources or not meshes:
        return tuple(sources)
    swept = tuple(name for name in source_infos(con) if name not in meshes)
    if not swept:
        raise UserError(
            "the history store holds the continuous mesh's bins alone, no sweep: its matrix "
            "is 'interregion mesh matrix'"
        )
    return swept


MATRIX_CSV_COLUMNS = (
    "source", "emulated", "window_start_utc", "window_end_utc", "src", "dst", "metric",
    "stat", "unit", "value", "samples", "tests", "pings_sent", "pings_lost", "loss_pct",
    "loss_low_pct", "loss_high_pct",
)  # fmt: skip
_SOURCE_COLUMNS = MATRIX_CSV_COLUMNS[:4]  # the matrix's source and window
_LOSS_COLUMNS = MATRIX_CSV_COLUMNS[-5:]  # loss's own (LOSS_RULE), blank for the others


def matrix_csv_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The matrix as long rows (one per directed pair and source)."""
    return [
        {
            **{k: csv_value(mx[k]) for k in _SOURCE_COLUMNS},
            **{k: doc[k] for k in ("metric", "stat", "unit")},
            **{k: c[k] for k in ("src", "dst", "samples", "tests")},
            **{k: csv_value(c.get(k)) for k in ("value", *_LOSS_COLUMNS)},
        }
        for mx in doc["matrices"]
        for c in mx["cells"]
    ]


def rate_scale(emulated: bool, unit: str) -> dict[str, Any]:
    """`{"rate_scale": s}` for an emulated source's throughput (its rates are the real
    small-VM curve times s; netmodel.rate_scale_tag says it in words), else nothing."""
    return {"rate_scale": DEFAULT_MODEL.scale} if emulated and unit == "bit/s" else {}


def source_caption(mx: dict[str, Any]) -> str:
    """What every view prints about its source, the kind said once: "source: EMULATED"
    for our own emulated sweeps (their source's name says it already), "source: NAME,
    EMULATED" or "source: NAME, real measurements" for the others."""
    label = f" ({mx['label']})" if mx.get("label") and mx["label"] != mx["source"] else ""
    if mx["emulated"] and str(mx["source"]).lower() == "emulated":
        return f"source: EMULATED{label}"
    kind = "EMULATED" if mx["emulated"] else "real measurements"
    return f"source: {mx['source']}{label}, {kind}"


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "bit/s":  # Mbit/s, three significant digits up to 100 (4.37 is not "4")
        mbit = value / 1e6
        digits = 0 if abs(mbit) >= 100 else 1 if abs(mbit) >= 10 else 2
        return f"{mbit:.{digits}f}"
    if unit == "%":
        return f"{value:.2f}"
    return f"{value:.1f}"
