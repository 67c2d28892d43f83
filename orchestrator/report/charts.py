"""Plotly figures of a report: distance charts, heatmaps, the world map, time series.

Figures are built from analyze.Measurements and never change the data (which
figures a report has is report.report_figures's choice): a
chart with more points than `max_points` shows an evenly spaced subset and
says so; the CSVs keep every row. Traces carry a `meta` dict that the site's
client-side filter reads (cloud pair, distances), so the page can filter
without a server.
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from plotly.colors import get_colorscale, sample_colorscale

if TYPE_CHECKING:  # plotly's figure classes: only the time series builds one
    import plotly.graph_objects as go

from orchestrator.core import fibre_rtt_ms, min_samples_for
from orchestrator.netmodel import rate_scale_tag
from orchestrator.report import analyze, uncertainty

PAIR_COLOURS = {
    "aws-aws": "#ff9900",
    "aws-gcp": "#d62728",
    "gcp-aws": "#9467bd",
    "gcp-gcp": "#1f77b4",
}
CLOUD_COLOURS = {"aws": "#ff9900", "gcp": "#1f77b4"}
PAIR_LABELS = {g: g.replace("-", "→") for g in analyze.GROUPS}


def pair_label(group: str) -> str:
    """A group's name on a chart: "gcp→gcp", "gcp→gcp standard" (a tier apart)."""
    return PAIR_LABELS.get(group) or group.replace("-", "→", 1)


def pair_colour(group: str) -> str:
    """A group's colour: its cloud pair's, whatever its tier."""
    return PAIR_COLOURS.get(group.split(" ", 1)[0], "#7f7f7f")


# Above this many points a scatter gets slow to pan in a browser.
MAX_POINTS = 4000
ROUTE_POINTS = 16  # points per great-circle line on the map
RTT_BINS = 8  # map lines are drawn in this many colours
RTT_COLORSCALE = "Viridis"
MAX_SERIES = 8  # pairs drawn in the time series chart: one colour each, no spaghetti
# The time series' picker (any pair, drawn by the site's JS) holds at most this many
# values; beyond it, the latest sweeps that fit (a data file stays under 2 MB).
PICKER_VALUES = 150_000

TEMPLATE = "plotly_white"
EMULATED_NOTE = (
    f"EMULATED: measured on the emulated cloud, not on AWS or GCP; throughput at the "
    f"{rate_scale_tag().removeprefix('emulated: ')}"
)

# Hovers print values in ms and Mbit/s with fixed decimals, never d3's SI format
# (".4s" prints 0.5 ms as "500.0m ms"); tests/unit/report/test_build.py checks every figure.
MBIT = 1e-6  # the charts draw throughput in Mbit/s
HOVER = {"ms": ":.1f", "Mbit/s": ":.3~r", "km": ":.0f"}


def shown_unit(unit: str, emulated: bool) -> str:
    """The unit a hover prints after a value: an emulated throughput says its rate scale."""
    return f"{unit} ({rate_scale_tag()})" if emulated and unit == "Mbit/s" else unit


def _mbit(bps: float) -> float:
    """Mbit/s rounded to the 3 significant digits a hover shows (lighter JSON)."""
    return float(f"{bps * MBIT:.3g}") if _finite(bps) else math.nan


def label(fig: go.Figure, title: str, emulated: bool, template: bool = True) -> go.Figure:
    """Title the figure; emulated results get the label on the chart itself. Without
    `template`, the template is left for _figure to add (as JSON, made once)."""
    if emulated:
        title = f"{title} [EMULATED]"
        fig.add_annotation(
            text=EMULATED_NOTE,
            xref="paper",
            yref="paper",
            x=1.0,
            xanchor="right",
            y=1.0,
            yanchor="bottom",
            yshift=30,
            showarrow=False,
            font={"color": "#b00020", "size": 12},
            bgcolor="#fff3cd",
            bordercolor="#b00020",
        )
    fig.update_layout(title={"text": title, "y": 0.98, "yanchor": "top"}, margin={"t": 110})
    if template:
        fig.update_layout(template=TEMPLATE)
    return fig


def _finite(v: float) -> bool:
    return math.isfinite(v)


# ---- what hovers add: customdata, rounded as shown; "—" where a value is missing ----
# (plotly prints a null as 0 under a number format, so the numbers go in rounded and
# printed as they are)
MISSING = "—"


def _num(x: float, digits: int) -> float | int | str:
    if not _finite(x):
        return MISSING
    return round(x) if digits == 0 else round(x, digits)


def iso_time(seconds: float) -> str:
    """UNIX seconds as ISO 8601 UTC with milliseconds and Z; "—" when unknown: one value,
    as datetime gives it (iso_times, which the figures use, is held to it)."""
    if not _finite(seconds):
        return MISSING
    t = datetime.fromtimestamp(seconds, UTC)  # isoformat's milliseconds are truncated
    return t.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def _extras(m: analyze.Measurements) -> bool:
    """True when the loader read the hovers' extra columns."""
    n = len(m)
    return all(len(c) == n for c in (m.rtt_p90_ms, m.loss_pct, m.rtt_samples, m.started_s))


def _tests_data(m: analyze.Measurements, rows: Sequence[int]) -> list[list[Any]]:
    """The hover extras of each of `rows` (tests): [RTT p90 ms, loss %, ping samples, start
    time], a column at a time (the times by iso_times)."""
    idx = np.asarray(rows, dtype=np.intp)
    p90, loss, samples = (
        analyze.column(c)[idx].tolist() for c in (m.rtt_p90_ms, m.loss_pct, m.rtt_samples)
    )
    times = iso_times(analyze.column(m.started_s)[idx])
    return [
        [_test_p90(a, c), _test_loss(b, c), _num(c, 0), t]
        for a, b, c, t in zip(p90, loss, samples, times, strict=True)
    ]


P90_SAMPLES = min_samples_for(90)  # the matrix's sample rule (core.stats)


def _test_p90(p90_ms: float, samples: float) -> Any:
    """A test's RTT p90 as its hover says it: blank, with why, below the sample rule
    (a row written before the rule may hold one)."""
    if not math.isfinite(p90_ms):
        return "—"
    if not (math.isfinite(samples) and samples >= P90_SAMPLES):
        return f"— ({samples:.0f} samples; a p90 needs {P90_SAMPLES})"
    return f"{p90_ms:.1f} ms"


def _test_loss(loss_pct: float, received: float) -> Any:
    """A test's ping loss with its Wilson 95 % interval: 0 lost of 20 is 0-16.1 %, not
    a plain 0 %. The pings sent are the replies over (1 - loss)."""
    if not math.isfinite(loss_pct):
        return "—"
    if not (math.isfinite(received) and received > 0 and loss_pct < 100.0):
        return f"{loss_pct:g} %"
    sent = round(received / (1.0 - loss_pct / 100.0))
    ci = uncertainty.loss_interval(sent - received, sent)
    return f"{loss_pct:.2g} % (95 %: {ci.low * 100:.1f}-{ci.high * 100:.1f} % of {sent} pings)"


def iso_times(seconds: np.ndarray) -> list[str]:
    """iso_time of each value, to the character, by numpy: the second and microsecond
    datetime.fromtimestamp takes (the fraction rounded half to even), then the
    milliseconds isoformat keeps (truncated)."""
    finite = np.isfinite(seconds)
    s = np.where(finite, seconds, 0.0)
    whole = np.trunc(s)
    us = np.rint((s - whole) * 1e6)  # the fraction is exact, as C's modf gives it
    whole = whole + (us >= 1e6) - (us < 0)
    us = np.where(us >= 1e6, us - 1e6, np.where(us < 0, us + 1e6, us))
    ms = whole.astype(np.int64) * 1000 + (us // 1000).astype(np.int64)
    text = np.datetime_as_string(ms.astype("datetime64[ms]"), unit="ms")
    return [
        f"{t}Z" if ok else MISSING for t, ok in zip(text.tolist(), finite.tolist(), strict=True)
    ]


TEST_HOVER = (
    "<br>test's RTT p90 %{customdata[0]}, loss %{customdata[1]}, "
    "n %{customdata[2]} samples<br>%{customdata[3]}"
)


@dataclass(frozen=True)
class PairStats:
    """Per region pair (directed, or unordered low index first), over its tests with a
    value: the median and p90 of the value (core.stats', to the bit), the tests, the
    median loss % and the newest test's time (hover extras), and the median distance
    over all of the pair's tests."""

    median: dict[tuple[int, int], float]
    extra: dict[tuple[int, int], list[Any]]  # [tests, p90, median loss %, newest test]
    distance: dict[tuple[int, int], float]


Orders = analyze.Orders  # each column sorted once for a report (analyze.by_value)


def pair_stats(
    m: analyze.Measurements, name: str, ordered: bool = True, orders: Orders | None = None
) -> PairStats:
    """PairStats of the column `name` of `m` (rtt_ms, throughput_bps) by numpy (a sort of
    each column, shared through `orders` by the figures of one report; no loop per row)."""
    column = analyze.column(getattr(m, name))
    src = np.asarray(m.src, dtype=np.int64)
    dst = np.asarray(m.dst, dtype=np.int64)
    if not ordered:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    width = max(len(m.regions), 1)
    keys = src * width + dst

    def pair(k: int) -> tuple[int, int]:
        return (k // width, k % width)

    def runs_of(field: str, mask: np.ndarray) -> tuple[np.ndarray, ...]:
        of = analyze.column(getattr(m, field))
        mask = mask & np.isfinite(of)
        if not mask.any():
            return analyze.segments(keys, of, mask, np.zeros(0, np.intp))
        return analyze.segments(keys, of, mask, analyze.by_value(m, field, orders))

    key_order: list[np.ndarray] = []  # every row by key (a stable sort), made once

    def by_key(field: str, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The field's values of the rows in `mask` in order of key (not of value), the
        first index of each key's run and the keys of the runs: the rows of one stable
        sort of every row's key, in the same order as a sort of theirs alone."""
        of = analyze.column(getattr(m, field))
        if not key_order:
            key_order.append(np.argsort(analyze.small_ints(keys), kind="stable"))
        rows = key_order[0][(mask & np.isfinite(of))[key_order[0]]]
        k = keys[rows]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]]) if len(k) else rows[:0]
        return of[rows], starts, k[starts]

    def medians(field: str, mask: np.ndarray) -> dict[int, float]:
        v, starts, counts, runs = runs_of(field, mask)
        return dict(
            zip(runs.tolist(), analyze.segment_medians(v, starts, counts).tolist(), strict=True)
        )

    def same_medians(field: str) -> dict[int, float]:
        """medians() of a field that is the same on every row of a pair (a distance):
        that value, found without sorting values; sorted as medians() when it is not."""
        v, starts, runs = by_key(field, np.ones(len(keys), dtype=bool))
        if not len(v):
            return {}
        low, high = np.minimum.reduceat(v, starts), np.maximum.reduceat(v, starts)
        if not np.array_equal(low, high):
            return medians(field, np.ones(len(keys), dtype=bool))
        return dict(zip(runs.tolist(), low.tolist(), strict=True))

    has = np.isfinite(column)
    v, starts, counts, runs = runs_of(name, has)
    median = analyze.segment_medians(v, starts, counts).tolist()
    p90 = analyze.segment_percentiles(v, starts, counts, 90.0).tolist()
    loss: dict[int, float] = {}
    newest: dict[int, str] = {}
    if _extras(m):
        loss = medians("loss_pct", has)
        t, t_starts, t_runs = by_key("started_s", has)
        if len(t):
            latest = iso_times(np.maximum.reduceat(t, t_starts))
            newest = dict(zip(t_runs.tolist(), latest, strict=True))
    extra = {}
    for k, n, p in zip(runs.tolist(), counts.tolist(), p90, strict=True):
        extra[pair(k)] = [
            n,
            p,
            _num(loss[k], 2) if k in loss else MISSING,
            newest.get(k, MISSING),
        ]
    distance = same_medians("distance_km")
    return PairStats(
        median={pair(k): x for k, x in zip(runs.tolist(), median, strict=True)},
        extra=extra,
        distance={pair(k): x for k, x in distance.items()},
    )


def _figure(
    layout: dict[str, Any], title: str, emulated: bool, traces: list[dict[str, Any]]
) -> dict[str, Any]:
    """Figure JSON: `layout` (from _layout) titled, the template and `traces` built here
    as plain data, JSON-ready (None, never NaN). Plotly's validation of a full catalog's
    points took seconds; the JSON is what it would have written."""
    layout["title"]["text"] = f"{title} [EMULATED]" if emulated else title  # as label()
    return {"data": traces, "layout": {**layout, "template": _template()}}


def _layout(kind: str, both: bool, emulated: bool) -> dict[str, Any]:
    """The layout of a distance, heatmap or map figure as plotly writes it (axes,
    subplots, the EMULATED label; tests/unit/report/test_charts.py holds it to what
    plotly's make_subplots and update_* build), without its template (_figure adds it)."""
    layout: dict[str, Any] = {}
    if kind == "distance":
        rtt = "RTT (each test's median) against distance"
        titles = [(rtt, 0.23), ("Throughput against distance", 0.77)] if both else [(rtt, 0.5)]
        x = {"title": {"text": "distance (km)"}, "rangemode": "tozero"}
        layout["xaxis"] = {"anchor": "y", "domain": [0.0, 0.46 if both else 1.0], **x}
        layout["yaxis"] = {
            "anchor": "x",
            "domain": [0.0, 1.0],
            "title": {"text": "RTT, median of samples (ms)"},
            "rangemode": "tozero",
        }
        if both:
            layout["xaxis2"] = {"anchor": "y2", "domain": [0.54, 1.0], **x}
            layout["yaxis2"] = {
                "anchor": "x2",
                "domain": [0.0, 1.0],
                "title": {"text": "throughput (Mbit/s, log)"},
                "type": "log",
            }
        layout["annotations"] = [
            {
                "font": {"size": 16},
                "showarrow": False,
                "text": text,
                "x": at,
                "xanchor": "center",
                "xref": "paper",
                "y": 1.0,
                "yanchor": "bottom",
                "yref": "paper",
            }
            for text, at in titles
        ]
        layout["legend"] = {"orientation": "h", "y": -0.18}
        layout["height"] = 520
    elif kind == "heatmap":
        layout["xaxis"] = {
            "title": {"text": "destination (by cloud, west → east)"},
            "tickangle": -60,
        }
        layout["yaxis"] = {
            "title": {"text": "source (by cloud, west → east)"},
            "autorange": "reversed",
        }
    else:
        layout["geo"] = {
            "projection": {"type": "natural earth"},
            "showcountries": True,
            "countrycolor": "#ccc",
            "showland": True,
            "landcolor": "#f3f3f3",
        }
        layout["legend"] = {"orientation": "h", "y": -0.05}
        layout["height"] = 560
    if emulated:  # as label() adds it
        layout.setdefault("annotations", []).append(
            {
                "bgcolor": "#fff3cd",
                "bordercolor": "#b00020",
                "font": {"color": "#b00020", "size": 12},
                "showarrow": False,
                "text": EMULATED_NOTE,
                "x": 1.0,
                "xanchor": "right",
                "xref": "paper",
                "y": 1.0,
                "yanchor": "bottom",
                "yref": "paper",
                "yshift": 30,
            }
        )
    layout["title"] = {"text": "", "y": 0.98, "yanchor": "top"}
    layout["margin"] = {"t": 110}
    return layout


@functools.cache
def _template() -> dict[str, Any]:
    """The template as a figure's JSON holds it: plotly's own file of it (what plotly
    copies into every figure; a test holds the two equal), read once and shared by every
    figure: figure JSON is written, never changed."""
    text = (
        resources.files("plotly") / "package_data" / "templates" / f"{TEMPLATE}.json"
    ).read_text(encoding="utf-8")
    template: dict[str, Any] = json.loads(text)
    return template


def _sample(rows: np.ndarray, keep: int) -> np.ndarray:
    """`keep` evenly spaced rows of `rows` (all of them when there are fewer)."""
    if len(rows) <= keep:
        return rows
    step = len(rows) / keep
    return rows[(np.arange(keep) * step).astype(np.intp)]


def distance_figure(
    m: analyze.Measurements,
    group: str,
    groups: Mapping[str, Sequence[int] | np.ndarray],
    summaries: Mapping[str, analyze.GroupSummary],
    *,
    emulated: bool,
    max_points: int = MAX_POINTS,
    cities: Mapping[str, str] | None = None,
    injected: Mapping[int, tuple[str, tuple[str, ...]]] | None = None,
) -> dict[str, Any]:
    """RTT and throughput (log axis) against distance with fit lines, r in the legend;
    a point's hover names the pair and, from `cities`, their cities.

    The 'all' chart colours points by cloud pair and fits each pair; a pair's
    chart shows that pair alone. `injected`: row -> (what the emulator injected on its
    path, the measures that moved): such points are drawn apart, as crosses, and said
    so in their hover (the fits leave them out: build.fit_data).
    """
    wanted = analyze.GROUPS[1:] if group == "all" else (group,)  # "all": the default tier
    pairs = [g for g in wanted if len(groups.get(g, ()))]
    injected = injected or {}
    rows_of = {p: np.asarray(groups[p], dtype=np.intp) for p in pairs}
    total = sum(len(r) for r in rows_of.values())
    km, rtt, thr = (analyze.column(c) for c in (m.distance_km, m.rtt_ms, m.throughput_bps))
    # latency-only data (an import, a ping-only sweep): no empty throughput axis
    both = any(bool(np.isfinite(thr[r]).any()) for r in rows_of.values())
    traces: list[dict[str, Any]] = []
    names = [_named(r, cities) for r in m.regions]
    extra = _extras(m)
    tests: dict[int, list[Any]] = {}
    shown = 0
    for pair in pairs:
        rows = rows_of[pair]
        keep = max(1, round(max_points * len(rows) / total)) if total > max_points else len(rows)
        sample = _sample(rows, keep)
        shown += len(sample)
        colour = pair_colour(pair)
        name = f"{pair_label(pair)} (n={len(rows)})"
        columns = ((1, rtt, "ms", "rtt"), (2, thr, "Mbit/s", "throughput"))
        for col, values, unit, measure in columns[: 2 if both else 1]:
            pts = sample[np.isfinite(values[sample])].tolist()
            odd = [i for i in pts if i in injected and measure in injected[i][1]]
            if odd:
                pts = [i for i in pts if not (i in injected and measure in injected[i][1])]
                traces.append(
                    {
                        "type": "scatter",
                        "x": [round(x) for x in km[odd].tolist()],
                        "y": [round(v, 2) for v in values[odd].tolist()]
                        if col == 1
                        else [_mbit(v) for v in values[odd].tolist()],
                        "mode": "markers",
                        "marker": {"color": colour, "size": 8, "symbol": "x"},
                        "name": f"{pair_label(pair)} injected on purpose, not in the fits",
                        "legendgroup": pair,
                        "showlegend": True,
                        "text": [
                            f"{names[m.src[i]]} → {names[m.dst[i]]}<br>{injected[i][0]}"
                            for i in odd
                        ],
                        "hovertemplate": f"%{{text}}<br>%{{x{HOVER['km']}}} km, "
                        f"%{{y{HOVER[unit]}}} {shown_unit(unit, emulated)}<extra></extra>",
                        "meta": {"filter": "injected", "cloud_pair": pair},
                        "xaxis": "x" if col == 1 else "x2",
                        "yaxis": "y" if col == 1 else "y2",
                    }
                )
            trace: dict[str, Any] = {
                "type": "scatter",
                "x": [round(x) for x in km[pts].tolist()],
                "y": [round(v, 2) for v in values[pts].tolist()]
                if col == 1
                else [_mbit(v) for v in values[pts].tolist()],
                "mode": "markers",
                "marker": {"color": colour, "size": 5, "opacity": 0.6},
                "name": name,
                "legendgroup": pair,
                "showlegend": col == 1,
                "text": [f"{names[m.src[i]]} → {names[m.dst[i]]}" for i in pts],
                "hovertemplate": f"%{{text}}<br>%{{x{HOVER['km']}}} km, "
                f"%{{y{HOVER[unit]}}} {shown_unit(unit, emulated)}"
                f"{TEST_HOVER if extra else ''}<extra></extra>",
                "meta": {"filter": "points", "cloud_pair": pair},
                "xaxis": "x" if col == 1 else "x2",
                "yaxis": "y" if col == 1 else "y2",
            }
            if extra:  # the same tests in both columns: each made once
                new = [i for i in pts if i not in tests]
                tests.update(zip(new, _tests_data(m, new), strict=True))
                trace["customdata"] = [tests[i] for i in pts]
            traces.append(trace)
        summary = summaries.get(pair)
        if summary is None:
            continue
        lo, hi = float(km[rows].min()), float(km[rows].max())
        fit = summary.rtt_fit
        if _finite(fit.slope):
            traces.append(
                {
                    "type": "scatter",
                    "x": [lo, hi],
                    "y": [fit.at(lo), fit.at(hi)],
                    "mode": "lines",
                    "line": {"color": colour, "width": 2},
                    "name": f"{pair_label(pair)} RTT fit (Theil-Sen), Pearson r={_r(fit.r)}"
                    + _fit_marks(summary),
                    "legendgroup": pair,
                    "meta": {"filter": "fit", "cloud_pair": pair},
                    "xaxis": "x",
                    "yaxis": "y",
                }
            )
        fit = summary.log_throughput_fit
        if both and _finite(fit.slope):
            traces.append(
                {
                    "type": "scatter",
                    "x": [lo, hi],
                    "y": [_mbit(10 ** fit.at(lo)), _mbit(10 ** fit.at(hi))],
                    "mode": "lines",
                    "line": {"color": colour, "width": 2, "dash": "dash"},
                    "name": f"{pair_label(pair)} log throughput fit, r={_r(fit.r)}",
                    "legendgroup": pair,
                    "meta": {"filter": "fit", "cloud_pair": pair},
                    "xaxis": "x2",
                    "yaxis": "y2",
                }
            )
    far = max((float(km[r].max()) for r in rows_of.values()), default=0.0)
    if far > 0.0:
        traces.append(
            {
                "type": "scatter",
                "x": [0.0, far],
                "y": [0.0, fibre_rtt_ms(far)],
                "mode": "lines",
                "line": {"color": "black", "width": 1, "dash": "dot"},
                "name": "fibre floor: 2 x distance / (c x 2/3)",
                "meta": {"filter": "floor"},
                "xaxis": "x",
                "yaxis": "y",
            }
        )
    title = "All cloud pairs" if group == "all" else f"{pair_label(group)}"
    if shown < total:
        title += f" ({shown} of {total} points shown)"
    return _figure(_layout("distance", both, emulated), title, emulated, traces)


def _fit_marks(summary: analyze.GroupSummary) -> str:
    """The fit's marks (uncertainty.FIT_MARKS) and its pairs, for its legend entry."""
    u = summary.uncertainty
    if u is None:
        return ""
    note = u.fit_note()
    return f", {u.pairs} pairs" + (f" [{note}]" if note else "")


def _named(region: str, cities: Mapping[str, str] | None) -> str:
    """`aws:ap-southeast-2 (Sydney)`, or the code alone without its city."""
    city = (cities or {}).get(region)
    return f"{region} ({city})" if city else region


def _r(r: float) -> str:
    return f"{r:.3f}" if _finite(r) else "n/a"


def geographic_order(keys: Sequence[str], coords: Mapping[str, tuple[float, float]]) -> list[str]:
    """Regions by cloud, then west to east (by longitude), as model.catalog.region_order
    orders the matrix and the CLI: one order everywhere."""
    return sorted(
        keys, key=lambda k: (k.split(":", 1)[0], round(coords[k][1], 1), -coords[k][0], k)
    )


def heatmap_figure(
    m: analyze.Measurements,
    coords: Mapping[str, tuple[float, float]],
    metric: str,
    *,
    emulated: bool,
    cities: Mapping[str, str] | None = None,
    orders: Orders | None = None,
) -> dict[str, Any]:
    """Median RTT or throughput, source region (rows) by destination (columns); a cell's
    hover has the pair, km, the median and p90 over its tests, their count, the median
    loss and the newest test's time."""
    stats = pair_stats(m, "rtt_ms" if metric == "rtt" else "throughput_bps", orders=orders)
    medians = stats.median
    used = sorted({k for pair in medians for k in pair})
    names = geographic_order([m.regions[i] for i in used], coords)
    index = {name: n for n, name in enumerate(names)}
    z: list[list[float | None]] = [[None] * len(names) for _ in names]
    km: list[list[float | None]] = [[None] * len(names) for _ in names]
    # per cell: [km, tests, p90 over tests, median loss %, newest test] for the hover
    cells: list[list[Any]] = [[None] * len(names) for _ in names]
    dist = stats.distance
    extra = stats.extra
    unit = "ms" if metric == "rtt" else "Mbit/s"
    for (s, d), v in medians.items():
        row, col = index[m.regions[s]], index[m.regions[d]]
        z[row][col] = round(v, 2) if metric == "rtt" else _mbit(v)
        km[row][col] = round(dist[(s, d)]) if (s, d) in dist else None
        tests, p90, loss, newest = extra[(s, d)]
        cells[row][col] = [
            km[row][col] if km[row][col] is not None else MISSING,
            tests,
            _num(p90, 1) if metric == "rtt" else _num(_mbit(p90), 3),
            loss,
            newest,
        ]
    clouds = [n.split(":", 1)[0] for n in names]
    heads = [_named(n, cities) for n in names]
    trace = {
        "type": "heatmap",
        "z": z,
        "x": heads,
        "y": heads,
        "colorscale": _colorscale(RTT_COLORSCALE),
        "colorbar": {"title": {"text": unit}},
        "hoverongaps": False,
        "hovertemplate": f"%{{y}} → %{{x}}<br>median %{{z{HOVER[unit]}}} {unit}, p90 "
        f"%{{customdata[2]}} {shown_unit(unit, emulated)} over %{{customdata[1]}} tests<br>"
        "%{customdata[0]} km, "
        "median loss %{customdata[3]} %<br>newest %{customdata[4]}<extra></extra>",
        "customdata": cells,
        "meta": {"filter": "heatmap", "clouds_y": clouds, "clouds_x": clouds, "km": km},
    }
    layout = _layout("heatmap", False, emulated)
    layout["height"] = max(500, 14 * len(names) + 250)
    what = "RTT (median of samples)" if metric == "rtt" else "Throughput"
    return _figure(layout, f"{what} by region pair, median over sweeps", emulated, [trace])


def _colorscale(name: str) -> list[list[Any]]:
    """A named colour scale as the [position, colour] pairs plotly writes for it (its
    colours evenly spaced, as plotly's own validator spaces them)."""
    colours = get_colorscale(name)
    return [[k / (len(colours) - 1), colour] for k, (_at, colour) in enumerate(colours)]


def great_circle(
    a: tuple[float, float], b: tuple[float, float], points: int = ROUTE_POINTS
) -> tuple[list[float], list[float]]:
    """Latitudes and longitudes of `points` points along the great circle from a to b."""
    (lat1, lon1), (lat2, lon2) = a, b
    p1, l1, p2, l2 = map(math.radians, (lat1, lon1, lat2, lon2))
    v1 = (math.cos(p1) * math.cos(l1), math.cos(p1) * math.sin(l1), math.sin(p1))
    v2 = (math.cos(p2) * math.cos(l2), math.cos(p2) * math.sin(l2), math.sin(p2))
    dot = max(-1.0, min(1.0, sum(x * y for x, y in zip(v1, v2, strict=True))))
    omega = math.acos(dot)
    lats, lons = [], []
    for k in range(points):
        t = k / (points - 1)
        if omega < 1e-9:
            w1, w2 = 1.0 - t, t
        else:
            w1 = math.sin((1 - t) * omega) / math.sin(omega)
            w2 = math.sin(t * omega) / math.sin(omega)
        x, y, zc = (w1 * c1 + w2 * c2 for c1, c2 in zip(v1, v2, strict=True))
        lats.append(math.degrees(math.atan2(zc, math.hypot(x, y))))
        lons.append(math.degrees(math.atan2(y, x)))
    return lats, lons


def great_circles(
    a: Sequence[tuple[float, float]], b: Sequence[tuple[float, float]], points: int = ROUTE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """great_circle of every a[i] to b[i] at once (numpy): latitudes and longitudes, one
    row of `points` per line."""
    p1, l1 = np.radians(np.asarray(a, dtype=np.float64).reshape(-1, 2)).T
    p2, l2 = np.radians(np.asarray(b, dtype=np.float64).reshape(-1, 2)).T
    v1 = np.stack([np.cos(p1) * np.cos(l1), np.cos(p1) * np.sin(l1), np.sin(p1)], axis=1)
    v2 = np.stack([np.cos(p2) * np.cos(l2), np.cos(p2) * np.sin(l2), np.sin(p2)], axis=1)
    omega = np.arccos(np.clip(np.sum(v1 * v2, axis=1), -1.0, 1.0))[:, None]
    t = (np.arange(points) / (points - 1))[None, :]
    near = omega < 1e-9  # the same place: a straight blend
    sin_omega = np.where(near, 1.0, np.sin(omega))
    w1 = np.where(near, 1.0 - t, np.sin((1 - t) * omega) / sin_omega)[:, :, None]
    w2 = np.where(near, t, np.sin(t * omega) / sin_omega)[:, :, None]
    xyz = w1 * v1[:, None, :] + w2 * v2[:, None, :]
    x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
    return np.degrees(np.arctan2(z, np.hypot(x, y))), np.degrees(np.arctan2(y, x))


def map_figure(
    m: analyze.Measurements,
    coords: Mapping[str, tuple[float, float]],
    *,
    emulated: bool,
    cities: Mapping[str, str] | None = None,
    orders: Orders | None = None,
) -> dict[str, Any]:
    """Regions on a world map; measured pairs as great-circle lines coloured by median RTT."""
    stats = pair_stats(m, "rtt_ms", ordered=False, orders=orders)
    medians, dist, extra = stats.median, stats.distance, stats.extra
    traces: list[dict[str, Any]] = []
    if medians:
        lo, hi = min(medians.values()), max(medians.values())
        span = (hi - lo) or 1.0
        colours = sample_colorscale(RTT_COLORSCALE, [b / (RTT_BINS - 1) for b in range(RTT_BINS)])
        bins: list[list[tuple[int, int]]] = [[] for _ in range(RTT_BINS)]
        # the lines' hovers: one point at the middle of each line (a hover text on every
        # point of every line would weigh ROUTE_POINTS times more)
        mid_lat: list[float] = []
        mid_lon: list[float] = []
        mid_text: list[str] = []
        mid_data: list[list[Any]] = []  # [tests, p90 ms, median loss %, newest test]
        mid_segments: list[list[Any]] = []
        for pair, rtt in sorted(medians.items()):
            bins[min(RTT_BINS - 1, int((rtt - lo) / span * RTT_BINS))].append(pair)
        # every line at once; 0.01 degrees (about 1 km) is finer than a line on a world map
        lines = sorted(medians)
        line_lats, line_lons = great_circles(
            [coords[m.regions[s]] for s, _d in lines], [coords[m.regions[d]] for _s, d in lines]
        )
        line_of = {pair: k for k, pair in enumerate(lines)}
        for b, pairs in enumerate(bins):
            if not pairs:
                continue
            lats: list[float | None] = []
            lons: list[float | None] = []
            segments = []
            for s, d in pairs:
                la = line_lats[line_of[(s, d)]].tolist()
                lo_ = line_lons[line_of[(s, d)]].tolist()
                lats += [*(round(v, 2) for v in la), None]
                lons += [*(round(v, 2) for v in lo_), None]
                cloud_s, cloud_d = m.regions[s].split(":")[0], m.regions[d].split(":")[0]
                km = round(dist.get((s, d), 0.0))
                segments.append([cloud_s, cloud_d, km])
                mid_lat.append(round(la[len(la) // 2], 2))
                mid_lon.append(round(lo_[len(lo_) // 2], 2))
                mid_text.append(
                    f"{_named(m.regions[s], cities)} ↔ {_named(m.regions[d], cities)}<br>"
                    f"{km:,} km, median RTT "
                    f"{medians[(s, d)]:.1f} ms"
                )
                tests, p90, loss, newest = extra[(s, d)]
                mid_data.append([tests, _num(p90, 1), loss, newest])
                mid_segments.append([cloud_s, cloud_d, km])
            low = lo + span * b / RTT_BINS
            traces.append(
                dict(
                    type="scattergeo",
                    lat=lats,
                    lon=lons,
                    mode="lines",
                    line={"color": colours[b], "width": 1.2},
                    opacity=0.7,
                    name=f"RTT {low:.0f}-{low + span / RTT_BINS:.0f} ms ({len(pairs)} pairs)",
                    hoverinfo="skip",
                    meta={"filter": "routes", "segments": segments, "points": ROUTE_POINTS + 1},
                )
            )
        traces.append(
            dict(
                type="scattergeo",
                lat=mid_lat,
                lon=mid_lon,
                text=mid_text,
                customdata=mid_data,
                mode="markers",
                marker={"size": 5, "color": "#555", "opacity": 0.35},
                name="pairs (hover a line's middle)",
                hovertemplate="%{text}, p90 %{customdata[1]} ms over %{customdata[0]} tests "
                "(both directions)<br>median loss %{customdata[2]} %, newest "
                "%{customdata[3]}<extra></extra>",
                meta={"filter": "routes", "segments": mid_segments, "points": 1},
            )
        )
        # An invisible marker trace carries the colour bar for the lines.
        traces.append(
            dict(
                type="scattergeo",
                lat=[None],
                lon=[None],
                mode="markers",
                marker={
                    "color": [lo, hi],
                    "cmin": lo,
                    "cmax": hi,
                    "colorscale": _colorscale(RTT_COLORSCALE),
                    "showscale": True,
                    "colorbar": {"title": {"text": "RTT (ms)"}},
                },
                showlegend=False,
                hoverinfo="skip",
            )
        )
    used = sorted({m.regions[k] for pair in medians for k in pair} or set(m.regions))
    for cloud in ("aws", "gcp"):
        keys = [k for k in used if k.startswith(cloud + ":")]
        if not keys:
            continue
        traces.append(
            dict(
                type="scattergeo",
                lat=[coords[k][0] for k in keys],
                lon=[coords[k][1] for k in keys],
                text=[_named(k, cities) for k in keys],
                mode="markers",
                marker={"color": CLOUD_COLOURS[cloud], "size": 8, "line": {"width": 1}},
                name=f"{cloud} regions",
                hovertemplate="%{text}<extra></extra>",
            )
        )
    layout = _layout("map", False, emulated)
    return _figure(layout, "Measured pairs, coloured by median RTT", emulated, traces)


# (src, dst) region keys -> sweep id -> (median RTT ms, median throughput bps) of the
# pair's rows in that sweep: what the time series draws, and all it needs of the rows
SweepMedians = dict[tuple[str, str], dict[str, tuple[float, float]]]


def sweep_medians(m: analyze.Measurements, orders: Orders | None = None) -> SweepMedians:
    """Each directed pair's median RTT and throughput in each sweep of `m` (NaN where the
    pair has none in that sweep); pairs and sweeps in the order of their first row.
    `orders`: the columns' sorts a report's figures made already (pair_stats)."""
    src = np.asarray(m.src, dtype=np.int64)
    dst = np.asarray(m.dst, dtype=np.int64)
    sweep = np.asarray(m.sweep, dtype=np.int64)
    regions, sweeps = max(len(m.regions), 1), max(len(m.sweeps), 1)
    keys = (src * regions + dst) * sweeps + sweep
    by_key = np.argsort(analyze.small_ints(keys), kind="stable")
    ordered = keys[by_key]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(keys) else by_key
    found, first = ordered[starts], by_key[starts]  # each key and its first row
    of: list[dict[int, float]] = []
    for name in ("rtt_ms", "throughput_bps"):
        values = analyze.column(getattr(m, name))
        has = np.isfinite(values)
        order = analyze.by_value(m, name, orders) if has.any() else np.zeros(0, np.intp)
        v, run_starts, counts, runs = analyze.segments(keys, values, has, order)
        medians = analyze.segment_medians(v, run_starts, counts).tolist()
        of.append(dict(zip(runs.tolist(), medians, strict=True)))
    out: SweepMedians = {}
    for key in found[np.argsort(first, kind="stable")].tolist():
        pair, k = divmod(key, sweeps)
        s, d = divmod(pair, regions)
        out.setdefault((m.regions[s], m.regions[d]), {})[m.sweeps[k]] = (
            of[0].get(key, math.nan),
            of[1].get(key, math.nan),
        )
    return out


def timeseries_figure(
    m: analyze.Measurements,
    started: Mapping[str, str],
    *,
    emulated: bool,
    max_series: int = MAX_SERIES,
    picker_values: int = PICKER_VALUES,
) -> dict[str, Any]:
    """Median RTT and throughput per directed pair across the sweeps of `m` (series_figure)."""
    return series_figure(
        sweep_medians(m),
        m.regions,
        m.sweeps,
        started,
        emulated=emulated,
        max_series=max_series,
        picker_values=picker_values,
    )


def series_figure(
    medians: SweepMedians,
    regions: Sequence[str],
    sweeps: Sequence[str],
    started: Mapping[str, str],
    *,
    emulated: bool,
    max_series: int = MAX_SERIES,
    picker_values: int = PICKER_VALUES,
) -> dict[str, Any]:
    """Median RTT and throughput per directed pair across `sweeps`, from each pair's
    medians per sweep; `regions` and `sweeps` in the order ties are broken in.

    Only pairs measured in two or more sweeps; `max_series` of them drawn, those whose
    median RTT moved most (the widest range of their per-sweep medians), so the chart
    stays readable. Every pair's medians go in `layout.meta.picker` (sweep times `x`,
    `pairs`, `codes`, `rtt` and, with throughput, `tput` in Mbit/s, null where a sweep
    missed the pair), from which the site's picker draws any one pair.
    """
    rindex = {r: i for i, r in enumerate(regions)}
    sindex = {s: i for i, s in enumerate(sweeps)}
    series = []
    for (src, dst), per_sweep in medians.items():
        if len(per_sweep) < 2:
            continue
        points = sorted((started.get(s, s), r, t, sindex[s]) for s, (r, t) in per_sweep.items())
        rtts = analyze.finite([p[1] for p in points])
        spread = (max(rtts) - min(rtts)) if rtts else 0.0
        series.append((spread, (rindex[src], rindex[dst]), points))
    series.sort(key=lambda s: (-s[0], s[1]))
    # latency-only data (an import, a ping-only sweep): no empty throughput axis
    both = any(_finite(p[2]) for _s, _pair, points in series for p in points)
    import plotly.graph_objects as go  # ~40 ms to import: only for a figure built this way
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=2 if both else 1,
        cols=1,
        shared_xaxes=True,
        subplot_titles=("Median RTT", "Median throughput") if both else ("Median RTT",),
    )
    for _spread, (s, d), points in series[:max_series]:
        name = f"{regions[s]} → {regions[d]}"
        code = f"{regions[s].split(':')[0]}-{regions[d].split(':')[0]}"
        for row in (1, 2)[: 2 if both else 1]:
            unit = "ms" if row == 1 else "Mbit/s"
            fig.add_trace(
                go.Scatter(
                    x=[p[0] for p in points],
                    y=[_rounded(p[1]) if row == 1 else _mbit(p[2]) for p in points],
                    hovertemplate=f"{name}<br>%{{x}}<br>%{{y{HOVER[unit]}}} "
                    f"{shown_unit(unit, emulated)}<extra></extra>",
                    mode="lines+markers",
                    name=name,
                    legendgroup=name,
                    showlegend=row == 1,
                    meta={"filter": "series", "cloud_pair": code, "pair": name},
                ),
                row=row,
                col=1,
            )
    fig.update_yaxes(title_text="RTT (ms)", row=1, col=1)
    if both:
        fig.update_yaxes(title_text="throughput (Mbit/s, log)", type="log", row=2, col=1)
    fig.update_xaxes(title_text="sweep start (UTC)", row=2 if both else 1, col=1)
    shown = min(len(series), max_series)
    picker = _picker(regions, series, both, picker_values)
    fig.update_layout(height=700, meta={"picker": {**picker, "shown": shown}})
    title = (
        f"The {shown} pairs whose median RTT moved most across {len(sweeps)} sweeps "
        f"(of {len(series)} pairs)"
    )
    return figure_json(label(fig, title, emulated))


def _rounded(ms: float) -> float | None:
    """0.01 ms, as a hover shows it (None for a sweep without the value)."""
    return round(ms, 2) if _finite(ms) else None


def _picker(
    regions: Sequence[str],
    series: Sequence[tuple[float, tuple[int, int], Sequence[tuple[str, float, float, int]]]],
    both: bool,
    limit: int,
) -> dict[str, Any]:
    """Every pair's per-sweep medians on one shared time axis: `x` (the sweeps' start
    times), `pairs` (in the order of how much they moved), `codes` (cloud pairs), `rtt`
    (ms) and `tput` (Mbit/s, with throughput only), null where a sweep missed a pair.
    Above `limit` values, only the latest sweeps that fit (`sweeps_kept` of `sweeps`)."""
    # one column per sweep (two sweeps may share a start time), in time order
    sweeps = sorted({(p[0], p[3]) for _spread, _pair, points in series for p in points})
    per_value = 2 if both else 1
    fit = max(2, limit // max(1, len(series) * per_value))
    kept = sweeps[-fit:]
    where = {sweep: k for k, (_t, sweep) in enumerate(kept)}
    pairs, codes, rtt, tput = [], [], [], []
    for _spread, (s, d), points in series:
        pairs.append(f"{regions[s]} → {regions[d]}")
        codes.append(f"{regions[s].split(':')[0]}-{regions[d].split(':')[0]}")
        r: list[float | None] = [None] * len(kept)
        t: list[float | None] = [None] * len(kept)
        for _when, rtt_ms, bps, sweep in points:
            k = where.get(sweep)
            if k is not None:
                r[k] = _rounded(rtt_ms)
                t[k] = _mbit(bps) if _finite(bps) else None
        rtt.append(r)
        tput.append(t)
    doc: dict[str, Any] = {
        "x": [t for t, _sweep in kept],
        "pairs": pairs,
        "codes": codes,
        "rtt": rtt,
        "sweeps": len(sweeps),
        "sweeps_kept": len(kept),
    }
    if both:
        doc["tput"] = tput
    return doc


def find_browser() -> str | None:
    """The Chromium kaleido should drive: $BROWSER_PATH, else Debian's chromium."""
    configured = os.environ.get("BROWSER_PATH")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


ASSETS = Path(__file__).resolve().parent.parent / "site" / "assets"
WORLD_TOPOJSON = ASSETS / "world_110m.json"


def geo_assets_js() -> str:
    """JavaScript that preloads the world map, so plotly.js never fetches it from a CDN."""
    return (
        "window.PlotlyGeoAssets = window.PlotlyGeoAssets || {topojson: {}};\n"
        "window.PlotlyGeoAssets.topojson = window.PlotlyGeoAssets.topojson || {};\n"
        f"window.PlotlyGeoAssets.topojson.world_110m = {WORLD_TOPOJSON.read_text()};\n"
    )


def write_pngs(figures: Mapping[str, Mapping[str, Any]], out_dir: Path) -> tuple[list[Path], str]:
    """Every figure as <name>.png via kaleido; ([], reason) when no renderer works.

    A missing renderer never fails a report: the HTML charts are the product,
    the PNGs are a convenience. Kaleido's page is given the local plotly.js,
    the preloaded world map and no MathJax, so rendering requests nothing
    from the network.
    """
    browser = find_browser()
    if browser is None:
        return [], "no Chromium found (install Debian's chromium or set BROWSER_PATH)"
    try:
        import kaleido
        from kaleido import PageGenerator
    except ImportError:
        return [], "kaleido is not installed: it comes with the [png] extra: " + (
            "pip install 'interregion[png]'"
        )
    os.environ.setdefault("BROWSER_PATH", browser)  # choreographer reads it
    names = list(figures)
    files = [out_dir / f"{n}.png" for n in names]
    with tempfile.TemporaryDirectory(prefix="interregion-png-") as tmp:
        geo = Path(tmp) / "geo_assets.js"
        geo.write_text(geo_assets_js())
        page = PageGenerator(mathjax=False, others=[geo.as_uri()])
        specs = []
        for name, path in zip(names, files, strict=True):
            width, height = _png_size(figures[name])
            specs.append(
                {
                    "fig": figures[name],
                    "path": path,
                    "opts": {"format": "png", "width": width, "height": height},
                }
            )
        try:
            kaleido.write_fig_from_object_sync(specs, kopts={"page_generator": page})
        except Exception as e:  # kaleido raises many kinds; any of them means "no PNGs"
            text = str(e).strip()
            first = text.splitlines()[0] if text else ""
            return [], f"{type(e).__name__}: {first}"[:300]
    written = [f for f in files if f.exists()]
    if len(written) < len(files):
        missing = ", ".join(f.name for f in files if not f.exists())
        return written, f"kaleido wrote no {missing}"
    return written, ""


def _png_size(fig: Mapping[str, Any]) -> tuple[int, int]:
    height = fig.get("layout", {}).get("height") or 520
    return 1200, int(height)


def figure_json(fig: go.Figure | dict[str, Any]) -> dict[str, Any]:
    """A figure as plain JSON data (what Plotly.newPlot takes), NaN as null; a figure
    already built as data is returned as it is."""
    if isinstance(fig, dict):
        return fig
    doc: dict[str, Any] = json.loads(fig.to_json())
    return doc
