"""The static site: `interregion site --out DIR` from the sweeps under results/.

Plain HTML pages with the charts as JSON drawn by a local copy of plotly.js, so the site
works offline and from file:// (docs/reports-and-site.md). sweep.json is published through
an allow-list (PUBLIC_SWEEP_FIELDS). The history store's pages are history_pages'.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plotly.offline import get_plotlyjs

from orchestrator.core import UserError, building, read_manifest, remove_within
from orchestrator.drivers import check_interrupt
from orchestrator.model import Catalog, is_emulated, load_catalog
from orchestrator.netmodel import DEFAULT_MODEL, rate_scale_tag
from orchestrator.report import (
    GROUPS,
    INFLATION_MIN_KM,
    MAX_POINTS,
    MAX_SERIES,
    OUTLIER_COLUMNS,
    OUTLIER_DOCS,
    OUTLIER_MIN_EXCESS_MS,
    PAIR_LABELS,
    SUMMARY_COLUMNS,
    SUMMARY_DOCS,
    TABLE_NOTE,
    GroupSummary,
    Medians,
    PairOutlier,
    Products,
    compact,
    display_cell,
    geo_assets_js,
    input_key,
    load_inputs,
    load_products,
    prune_products,
    read_sweep_meta,
    report_figures,
    save_products,
    series_figure,
    summaries_of,
    sweep_dirs,
    sweep_products,
    table_cells,
    timeseries_figure,
    write_csv,
)
from orchestrator.results import (
    FLAG_REASONS,
    MEASUREMENT_COLUMNS,
    MEASUREMENT_DOCS,
    invalidates_text,
    write_parsed_rows,
)
from orchestrator.site import html
from orchestrator.site.html import esc as _e

ASSETS = Path(__file__).resolve().parent / "assets"

# What a site folder holds (its pages, its folders); build_site replaces only a folder of these.
SITE_FILES = frozenset(
    {"index.html", "latest.html", "methodology.html", "data.html"}
    | {"assets", "data", "sweeps", "history", "studies"}
)


def _copied(names: str) -> dict[str, Any]:
    return dict.fromkeys(names.split(), True)


# The fields of sweep.json the site publishes: True copies the value, a dict filters a
# dict, a one-element list filters each item of a list. Left out on purpose:
# cloud_options (operator CIDR, GCP project, AWS profile, owner), the stages' error texts,
# the rounds' slots (ports, hosts) and anything unknown.
PUBLIC_SWEEP_FIELDS: dict[str, Any] = {
    **_copied(
        "format_version sweep_id backend emulated created_utc started_utc ended_utc status "
        "selection params max_concurrent sequential versions"
    ),
    "plan": _copied(
        "backend emulated params regions pairs rounds round_slots lower_bound_rounds "
        "max_concurrent sequential estimate pricing_as_of"
    ),
    "stages": {"*": _copied("started_utc ended_utc wall_s status")},
    "rounds": [
        _copied("round kind started_utc ended_utc wall_s slot_s overhead_s tests_ok tests_failed")
    ],
    "measure_runs": [
        _copied(
            "kind started_utc ended_utc rounds tests wall_s rounds_x_slot_s overhead_ratio "
            "ansible_rc"
        )
    ],
}


@dataclass
class SweepPage:
    id: str
    products: Products  # what its report computed (orchestrator.report.cache)
    meta: dict[str, Any]  # the published part of sweep.json
    rows_published: int = 0  # rows of measurements.csv that parsed (set by _write_data)
    rows_dropped: int = 0  # and those that did not


@dataclass(frozen=True)
class _Build:
    """What each step of one build_site reads."""

    results: Path
    out: Path
    catalog: Catalog
    max_points: int
    include_flagged: bool
    studies: bool  # the site has TCP study pages (a link in every header)
    before: set[str]  # the files the site at `out` holds (its manifest)
    log: Callable[[str], None]
    warn: Callable[[str], None]


def schema_json() -> dict[str, Any]:
    """The columns of every downloadable CSV, with their meaning."""

    def cols(names: Sequence[str], docs: dict[str, str]) -> list[dict[str, str]]:
        return [{"name": n, "description": docs.get(n, "")} for n in names]

    sweep_json = "the sweep's parameters, plan and timings (public fields only)"
    return {
        "measurements.csv": cols(MEASUREMENT_COLUMNS, MEASUREMENT_DOCS),
        "summary.csv": cols(SUMMARY_COLUMNS, SUMMARY_DOCS),
        "outliers.csv": cols(OUTLIER_COLUMNS, OUTLIER_DOCS),
        "sweep.json": [{"name": "*", "description": sweep_json}],
    }


def build_site(
    out: Path,
    results: Path,
    *,
    catalog: Catalog | Path | None = None,
    max_points: int = MAX_POINTS,
    log: Callable[[str], None] = lambda _msg: None,
    warn: Callable[[str], None] | None = None,
    include_flagged: bool = False,
) -> Path:
    """Write the site for every sweep under `results` into `out`; returns index.html.
    A row's RTT or throughput its flags invalidate is left out unless `include_flagged`.
    `catalog`: the catalog or its file (loaded before the sweeps are looked for); None,
    the shipped one. A sweep that cannot be read is left out with one `warn` line."""
    if isinstance(catalog, Path):
        catalog = load_catalog(catalog)
    dirs = sweep_dirs(results)
    if not dirs:
        raise UserError(f"no sweeps under {results}: run 'interregion sweep' or pass --results")
    catalog = catalog if catalog is not None else load_catalog()
    prune_products(results, {d.name for d in dirs})
    from orchestrator.study import STUDIES_DIR, study_ids

    has_studies = bool(study_ids(results / STUDIES_DIR))
    before = read_manifest(out) if out.is_dir() else set()
    b = _Build(
        results, out, catalog, max_points, include_flagged, has_studies, before, log, warn or log
    )
    with building(out, SITE_FILES, "site", manifest=True, reuse=True) as tmp:
        # the history pages on a thread of their own (DuckDB and numpy, mostly without the
        # GIL) while this one makes the sweeps' pages; in this context (the previous
        # build's files to take: outdir.open_new)
        history = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history")
        computing = history.submit(contextvars.copy_context().run, _history_pages, b, tmp)
        history.shutdown(wait=False)
        try:
            pages = _sweep_pages(b, dirs)
            emulated_any = any(p.products.emulated for p in pages)
            timeseries = _timeseries(b, pages) if len(pages) >= 2 else None
            nav = [p.id for p in pages]
            _write_assets(tmp / "assets")
            for page in pages:
                _write_data(b, page, tmp / "data" / page.id)
                for name in page.products.figures:
                    figure = _figures_js(page.products.figures.only(name).json())
                    html.write(tmp / "data" / page.id / figure_file(name), figure)
            if timeseries is not None:
                figure = _figures_js(compact({"timeseries": timeseries}))
                html.write(tmp / "data" / TIMESERIES_FILE, figure)
            html.write(tmp / "data" / "schema.json", json.dumps(schema_json(), indent=2))
            # an interrupt a library took in this thread (one DuckDB saw between queries)
            # is raised here: the thread's query is stopped below, never waited for
            while not wait([computing], timeout=0.2).done:
                check_interrupt()
            has_history = computing.result()
        except BaseException:
            # the thread writes into the folder being built, which is removed now: after it,
            # its query stopped (an interrupt reaches only this thread's). Again until it
            # ends: an interrupt that comes before its query starts is lost.
            from orchestrator.history import interrupt_queries

            while not computing.done():
                interrupt_queries()
                wait([computing], timeout=0.2)
            raise
        for page in pages:
            text = _sweep_html(page, nav, "../", None, has_history, has_studies)
            html.write(tmp / "sweeps" / f"{page.id}.html", text)
        index = _sweep_html(pages[-1], nav, "", timeseries, has_history, has_studies)
        # the front page is the matrix when there is a history store, else the latest sweep
        html.write(tmp / ("latest.html" if has_history else "index.html"), index)
        methodology = _methodology_html(nav, emulated_any, has_history, has_studies)
        html.write(tmp / "methodology.html", methodology)
        html.write(tmp / "data.html", _data_html(pages, emulated_any, has_history, has_studies))
        studies = _write_study_pages(b, tmp / "studies", has_history)
        if studies:
            log(f"site: {len(studies)} TCP study pages (studies/index.html)")
    try:
        for page in pages:  # the site now holds these copies: a later build may take them
            published = _published(
                out / "data" / page.id / "measurements.csv", page.rows_published, page.rows_dropped
            )
            if page.products.published != published:
                page.products.published = published
                save_products(results / page.id, page.products)
        return out / "index.html"
    finally:
        # the kept states of versions before (the matrix's, pair pages', series'): unread
        with contextlib.suppress(OSError):  # never through a linked .cache
            remove_within(results, results / ".cache" / "site")


def _sweep_pages(b: _Build, dirs: Sequence[Path]) -> list[SweepPage]:
    """The page of each sweep that can be read and has usable measurements (one line for
    each left out); UserError when none has."""
    pages: list[SweepPage] = []
    for sweep_dir in dirs:
        try:
            page = _sweep_page(b, sweep_dir)
        except UserError as e:
            b.warn(f"site: sweep {sweep_dir.name} left out: {e}")
            continue
        if page is None:
            b.log(f"site: {sweep_dir.name} has no usable measurements, left out")
            continue
        pages.append(page)
    if not pages:
        raise UserError(f"no usable measurements in any sweep under {b.results}")
    return pages


def _published(path: Path, rows: int, dropped: int) -> dict[str, int]:
    try:
        st = path.stat()
    except OSError:
        return {}
    return {"rows": rows, "dropped": dropped, "bytes": st.st_size, "mtime_ns": st.st_mtime_ns}


def _timeseries(b: _Build, pages: Sequence[SweepPage]) -> Any:
    """Every pair's median per sweep over time, from each page's medians (read once,
    when its report was computed); from the rows again only when a sweep id's rows are
    in several folders (their medians are of all its rows together)."""
    regions: dict[str, None] = {}
    sweeps: dict[str, None] = {}  # in the order of the rows read, as a whole load has them
    started: dict[str, str] = {}
    medians: Medians = {}
    for page in pages:
        p = page.products
        if any(s in sweeps for s in p.sweeps):
            combined = load_inputs(
                sweep_dirs_=[b.results / q.id for q in pages],
                catalog=b.catalog,
                include_flagged=b.include_flagged,
            )
            started = {s.id: s.started_utc or s.id for s in combined.sweeps.values()}
            return timeseries_figure(combined.data, started, emulated=combined.emulated)
        sweeps.update(dict.fromkeys(p.sweeps))
        regions.update(dict.fromkeys(p.regions))
        started.update(p.started)
        for pair, per_sweep in p.medians.items():
            medians.setdefault(pair, {}).update(per_sweep)
    emulated = any(p.products.emulated for p in pages)
    return series_figure(medians, list(regions), list(sweeps), started, emulated=emulated)


def _write_study_pages(b: _Build, dest: Path, history: bool) -> list[str]:
    """studies/<id>.html from each study's study.md (Markdown, rendered by markdown-it-py
    with the site's header, CSS and banner), and studies/index.html listing them; returns
    the ids written (none: nothing is written)."""
    from markdown_it import MarkdownIt

    from orchestrator.study import REPORT_FILE, STUDIES_DIR, study_ids

    # a study's text is data: raw HTML is escaped, and nothing becomes a link (the site
    # links only to its own files; '<gcp:b>' would read as a URL of scheme 'gcp')
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.disable(["autolink", "link", "image"])
    written = []
    emulated_any = False
    studies = b.results / STUDIES_DIR
    for study_id in study_ids(studies):
        try:
            text = (studies / study_id / REPORT_FILE).read_text(encoding="utf-8")
            meta = read_sweep_meta(studies / study_id)
        except (OSError, UnicodeDecodeError, UserError) as e:
            b.warn(f"site: study {study_id} left out: {e}")
            continue
        emulated = is_emulated(meta.get("backend"))
        emulated_any |= emulated
        title = f"TCP study {study_id}"
        page = [
            html.head(title, "../", history, studies=True),
            html.banner(emulated, "This study's results were"),
            f"<div class='study'>{md.render(text)}</div>\n",
            "<p><a href='index.html'>All TCP studies</a></p>\n",
            html.foot(),
        ]
        html.write(dest / f"{study_id}.html", "".join(page))
        written.append(study_id)
    if not written:
        return []
    items = "".join(f"<li><a href='{_e(i)}.html'>{_e(i)}</a></li>" for i in written)
    html.write(
        dest / "index.html",
        html.head("TCP studies", "../", history, studies=True)
        + html.banner(emulated_any, "Some or all of these studies were")
        + f"<h1>TCP studies</h1>\n<ul id='studies'>{items}</ul>\n"
        + html.foot(),
    )
    return written


def _history_pages(b: _Build, into: Path) -> bool:
    """The history pages and the front page, the matrix, written into `into`, the folder
    being built (the pair pages as soon as their data is there); False without a store or
    with one that cannot be read (one warning)."""
    import duckdb

    from orchestrator.history import StoreBusy, opened, store_path
    from orchestrator.site import history_pages as site_history

    if not store_path(b.results).exists():
        return False

    try:
        with opened(b.results, read_only=True) as con:
            data = site_history.history_data(
                con,
                catalog=b.catalog,
                include_flagged=b.include_flagged,
                pair_pages=lambda pairs: site_history.write_pair_pages(into, pairs, b.studies),
            )
    except (StoreBusy, duckdb.InterruptException):
        raise  # the whole site or none: its history pages are not left out for a lock or ^C
    except UserError as e:
        b.warn(f"site: history pages left out: {e}")
    except duckdb.Error as e:
        b.warn(
            f"site: history pages left out: {' '.join(str(e).split())[:200]}: "
            "run 'interregion history rebuild'"
        )
    else:
        site_history.write_pages(into, data, b.studies, pair_pages=False)
        html.write(into / "index.html", site_history.matrix_html(data, b.studies, prefix=""))
        return True
    shutil.rmtree(into / "history", ignore_errors=True)  # pages written before it failed
    return False


def _sweep_page(b: _Build, sweep_dir: Path) -> SweepPage | None:
    """A sweep's page, from its report's cache entry when its inputs have not changed
    since (orchestrator.report.cache), else computed and the entry written."""
    key = input_key(sweep_dir, b.catalog, b.include_flagged)
    products = load_products(sweep_dir, key)
    if products is None or products.max_points != b.max_points:
        loaded = load_inputs(
            sweep_dirs_=[sweep_dir], catalog=b.catalog, include_flagged=b.include_flagged
        )
        if len(loaded.data) == 0:
            return None
        orders: dict[str, Any] = {}  # each column sorted once, for all that follows
        summaries, outliers = summaries_of(loaded, orders)
        figures = report_figures(loaded, summaries, max_points=b.max_points, orders=orders)
        figures.pop("timeseries", None)  # one sweep: nothing to plot over time
        products = sweep_products(
            loaded, summaries, outliers, figures, key, b.max_points, orders=orders
        )
        save_products(sweep_dir, products)
    for line in products.warnings:
        b.warn(f"site: {line}")
    return SweepPage(sweep_dir.name, products, public_sweep_record(read_sweep_meta(sweep_dir)))


def public_sweep_record(value: Any, spec: Any = PUBLIC_SWEEP_FIELDS) -> Any:
    """The part of a sweep.json (or of one of its values, by `spec`) the site may publish."""
    if spec is True:
        return value
    if isinstance(spec, list):
        return [public_sweep_record(v, spec[0]) for v in value] if isinstance(value, list) else None
    if not isinstance(value, Mapping):
        return None
    if "*" in spec:  # a map of names (the stages) whose values share one spec
        return {str(k): public_sweep_record(v, spec["*"]) for k, v in value.items()}
    return {k: public_sweep_record(value[k], sub) for k, sub in spec.items() if k in value}


def _write_assets(assets: Path) -> None:
    assets.mkdir(parents=True, exist_ok=True)
    html.write(assets / "plotly.min.js", get_plotlyjs())
    html.write(assets / "geo_assets.js", geo_assets_js())
    for name in ("site.js", "site.css", "history.js"):
        shutil.copyfile(ASSETS / name, assets / name)


def _write_data(b: _Build, page: SweepPage, dest: Path) -> None:
    """A sweep's downloads. Its rows are taken from the site at `out` (listed in its
    manifest) when its cache entry says that copy is of the same inputs and the file is
    as written; else parsed again (write_parsed_rows)."""
    dest.mkdir(parents=True, exist_ok=True)
    source = b.results / page.id / "measurements.csv"
    rows = dest / "measurements.csv"
    done = page.products.published
    old = b.out / "data" / page.id / "measurements.csv"
    taken = False
    if done and f"data/{page.id}/measurements.csv" in b.before:
        published = _published(old, done.get("rows", -1), done.get("dropped", -1))
        taken = published == done and _copy(old, rows)
    if taken:
        page.rows_published, page.rows_dropped = done["rows"], done["dropped"]
    elif page.products.verbatim_rows >= 0 and _copy(source, rows, link=False):
        # the report found every row publishable as it is: the file is what parsing it
        # row by row would write
        page.rows_published, page.rows_dropped = page.products.verbatim_rows, 0
    else:
        page.rows_published, page.rows_dropped = write_parsed_rows(source, rows)
    dropped = page.rows_dropped
    if dropped:
        b.warn(f"site: {page.id}: {dropped} damaged row(s) of measurements.csv not published")
    if page.meta:
        html.write(dest / "sweep.json", json.dumps(page.meta, indent=1) + "\n")
    write_csv(dest / "summary.csv", SUMMARY_COLUMNS, (s.row() for s in page.products.summaries))
    write_csv(dest / "outliers.csv", OUTLIER_COLUMNS, (o.__dict__ for o in page.products.outliers))


# --- HTML -------------------------------------------------------------------------


def _copy(src: Path, dest: Path, link: bool = True) -> bool:
    """`dest` as a link to `src` when `link` (the old site goes, the file stays), else
    (never a link to results/, which may change after) a copy written whole."""
    if link:
        with contextlib.suppress(OSError):
            os.link(src, dest)
            return True
    tmp = dest.with_name(dest.name + ".tmp")
    try:
        shutil.copyfile(src, tmp)
        os.replace(tmp, dest)
    except OSError:
        return False
    return True


# A page's figures live in files of their own, not inlined in its HTML (a 77-region
# sweep's figures are MBs): a script, because file:// forbids fetching local JSON.
TIMESERIES_FILE = "timeseries.js"  # data/timeseries.js: every sweep over time


def figure_file(name: str) -> str:
    """data/<sweep>/fig-<name>.js: one file per figure, so that none passes 2 MB at a
    full catalog (the map alone is about 1 MB)."""
    return f"fig-{name}.js"


def _figures_js(text: str) -> str:
    """The figures of `text`, a JSON object of them by name, added to InterregionFigures."""
    return (
        f"window.InterregionFigures = Object.assign(window.InterregionFigures || {{}}, {text});\n"
    )


def _summary_table(summaries: Sequence[GroupSummary], emulated: bool = False) -> str:
    # an emulated throughput says its rate scale beside it (netmodel.rate_scale_tag)
    mbit = f"Mbit/s, {rate_scale_tag()}" if emulated else "Mbit/s"
    cols = [
        ("cloud pair", "cloud_pair", "{}"),
        ("n", "n", "{:d}"),
        ("RTT over the fibre floor (median)", "route_inflation_median", "{:.2f}"),
        ("p25", "route_inflation_p25", "{:.2f}"),
        ("p75", "route_inflation_p75", "{:.2f}"),
        ("Pearson r (RTT, distance)", "rtt_distance_r", "{:.3f}"),
        ("Spearman (RTT, distance)", "rtt_distance_spearman", "{:.3f}"),
        ("fit: RTT at 0 km (ms)", "rtt_intercept_ms", "{:.2f}"),
        ("fit: ms per 1000 km", "rtt_slope_ms_per_1000km", "{:.2f}"),
        ("r (log throughput, distance)", "log_throughput_distance_r", "{:.3f}"),
        ("median over tests of the test's RTT (ms)", "rtt_median_over_tests_ms", "{:.1f}"),
        ("p90 over tests of the test's RTT (ms)", "rtt_p90_over_tests_ms", "{:.1f}"),
        (f"median over tests, throughput ({mbit})", "throughput_median_over_tests_bps", "{:.2f}"),
        (f"p90 over tests, throughput ({mbit})", "throughput_p90_over_tests_bps", "{:.2f}"),
    ]
    rows = []
    for s in summaries:
        row = s.row()
        cells = {key: display_cell(key, row[key], fmt) for _t, key, fmt in cols[1:]}
        if row.get("rtt_intercept_is_rtt_at_0km") is False:  # no pair within 1,000 km
            cells["rtt_intercept_ms"] = f"({cells['rtt_intercept_ms']})"
        rows.append((s.cloud_pair, cells))
    # site.js recomputes the rows from the plotted points when the filter narrows them
    return (
        _pair_table(f"id='summary' data-inflation-km='{INFLATION_MIN_KM:g}'", cols, rows)
        + "<p class='muted' id='summary-note'>Computed from every measurement; with a "
        "filter, from the plotted points that match it.</p>\n"
    )


def _uncertainty_table(summaries: Sequence[GroupSummary]) -> str:
    """The summary's figures with their 95 % intervals over region pairs, the pairs
    beside n, the fit's marks and whether its intercept is an RTT at 0 km."""
    cols = [
        ("cloud pair", "cloud_pair"),
        ("n", "n"),
        ("pairs", "pairs"),
        ("RTT over the fibre floor, median: 95 % CI", "route_inflation_median_ci"),
        ("median RTT 95 % CI (ms)", "rtt_median_ci"),
        ("median throughput 95 % CI (Mbit/s)", "throughput_median_ci"),
        ("ms per 1000 km 95 % CI", "rtt_slope_ci"),
        ("fit intercept (ms)", "rtt_intercept"),
        ("fit marks", "rtt_fit_marks"),
    ]
    rows = [
        (s.cloud_pair, {**s.row(), **table_cells(s.row())})
        for s in summaries
        if s.n and s.uncertainty is not None
    ]
    return (
        "<h3>How sure</h3>\n"
        + _pair_table("id='uncertainty'", cols, rows)
        + f"<p class='muted'>{_e(TABLE_NOTE)} Over every measurement, not the "
        "filter.</p>\n"
    )


def _pair_table(attrs: str, cols: Sequence[Any], rows: list[tuple[str, dict[str, Any]]]) -> str:
    """A row per cloud pair (site.js filters them by data-pair), its label first; `cols`:
    (title, key, ...), a row's other cells by key."""
    head = "".join(f"<th>{_e(col[0])}</th>" for col in cols)
    body = "".join(
        f"<tr data-pair='{_e(pair)}'><td data-col='cloud_pair'>{_e(PAIR_LABELS.get(pair, pair))}"
        + "".join(f"</td><td data-col='{k}'>{_e(str(cells[k]))}" for _t, k, *_f in cols[1:])
        + "</td></tr>"
        for pair, cells in rows
    )
    return f"<table {attrs}><tr>{head}</tr>{body}</table>\n"


def _outlier_table(outliers: Sequence[PairOutlier]) -> str:
    if not outliers:
        return "<p class='muted'>No pair's RTT is far above its cloud pair's fit.</p>\n"
    head = "<tr><th>pair</th><th>distance (km)</th><th>RTT (ms)</th><th>fit (ms)</th>"
    head += "<th>excess (ms)</th><th>robust z</th></tr>"
    more = len(outliers) - 50
    rows = []
    for o in outliers[:50]:
        z = display_cell("robust_z", o.robust_z, "{:.1f}")  # inf when the MAD is 0
        rows.append(
            f"<tr data-pair='{_e(o.cloud_pair)}' data-km='{o.distance_km:.0f}'>"
            f"<td>{_e(o.src)} → {_e(o.dst)}</td>"
            f"<td>{o.distance_km:.0f}</td><td>{o.rtt_ms:.1f}</td><td>{o.fit_rtt_ms:.1f}</td>"
            f"<td>{o.excess_ms:.1f}</td><td>{z}</td></tr>"
        )
    note = f"<p class='muted'>{more} more in outliers.csv</p>" if more > 0 else ""
    return f"<table id='outliers'>{head}{''.join(rows)}</table>\n{note}"


def _filter_form() -> str:
    boxes = "".join(
        f"<label><input type='checkbox' name='pair' value='{g}' checked> "
        f"{_e(PAIR_LABELS[g])}</label>"
        for g in GROUPS[1:]
    )
    return (
        "<form id='filter'><strong>Filter:</strong> "
        f"{boxes}"
        "<label>from <input type='number' name='min_km' min='0' step='100' "
        "placeholder='0'> km</label>"
        "<label>to <input type='number' name='max_km' min='0' step='100' "
        "placeholder='any'> km</label>"
        "<button type='reset'>Reset</button><span id='filter-status'></span></form>\n"
    )


_CHART_TEXT = {
    "distance-all": "RTT and throughput against distance, every cloud pair.",
    "heatmap-rtt": "RTT (each test's median; median over sweeps) from each source region "
    "(rows) to each destination (columns), regions ordered by cloud, then west to east.",
    "heatmap-throughput": "Median throughput by region pair, ordered as the RTT one.",
    "map": "The measured pairs as great-circle lines, coloured by median RTT.",
    "timeseries": f"The {MAX_SERIES} pairs whose median RTT moved most from sweep "
    "to sweep (the widest range of their per-sweep medians), with their throughput; the "
    "picker below draws any other pair.",
}


def _sweep_html(
    page: SweepPage, nav: Sequence[str], prefix: str, timeseries: Any, history: bool, studies: bool
) -> str:
    p = page.products
    title = f"Sweep {page.id}"
    parts = [html.head(title, prefix, history, studies), html.banner(p.emulated)]
    parts.append(f"<h1>{_e(title)}{' (emulated)' if p.emulated else ''}</h1>\n")
    files = ("measurements.csv", "summary.csv", "outliers.csv")
    links = ", ".join(f"<a href='{prefix}data/{_e(page.id)}/{f}'>{f}</a>" for f in files)
    parts.append(
        f"<p>{p.rows} measurements between {len(p.regions)} regions; "
        f"started {_e(p.started_utc)}; backend {_e(', '.join(p.backends))}. "
        f"Downloads: {links} (<a href='{prefix}data.html'>schema</a>).</p>\n"
    )
    parts.extend(f"<p class='flags'>{_e(line)}</p>\n" for line in p.notes)
    parts.append(_filter_form())
    parts.append("<h2>Summary by cloud pair</h2>\n" + _summary_table(p.summaries, p.emulated))
    parts.append(_uncertainty_table(p.summaries))
    parts.append("<h2>Outliers</h2>\n" + _outlier_table(p.outliers))
    names = list(p.figures)
    scripts = [f"{prefix}data/{_e(page.id)}/{figure_file(name)}" for name in names]
    if timeseries is not None:
        names.append("timeseries")
        scripts.append(f"{prefix}data/{TIMESERIES_FILE}")
    parts.append("<h2>Charts</h2>\n")
    for name in names:
        text = _CHART_TEXT.get(name, f"RTT and throughput against distance, {name[9:]}.")
        parts.append(
            f"<h3>{_e(name)}</h3><p class='muted'>{_e(text)}</p>"
            f"<div class='chart' id='chart-{_e(name)}' data-fig='{_e(name)}'></div>\n"
        )
        if name == "timeseries":  # any pair, drawn by site.js from the figure's meta
            parts.append(
                "<form id='series-picker' class='picker'><label>pair "
                "<select name='pair' data-fig='timeseries'><option value=''>the pairs "
                "that moved most</option></select></label> "
                "<span id='series-picker-note' class='muted'></span></form>\n"
            )
    parts.append(_sweep_list(nav, prefix))
    assets = [f"{prefix}assets/{name}" for name in ("plotly.min.js", "geo_assets.js", "site.js")]
    parts += [html.scripts(*scripts, *assets), html.foot()]
    return "".join(parts)


def _sweep_list(nav: Sequence[str], prefix: str) -> str:
    items = "".join(
        f"<li><a href='{prefix}sweeps/{_e(i)}.html'>{_e(i)}</a></li>" for i in reversed(nav)
    )
    return f"<h2>All sweeps</h2><ul id='sweeps'>{items}</ul>\n"


def _methodology_html(nav: Sequence[str], emulated: bool, history: bool, studies: bool) -> str:
    model = _model_text()
    parts = [
        html.head("Methodology", "", history, studies),
        html.banner(emulated, "Some or all results on this site were"),
        "<h1>Methodology</h1>\n",
        "<h2>What is measured</h2>\n<p>One small VM per region. In each round of the "
        "schedule every VM takes part in at most one test, so tests never share a NIC. "
        "For each directed pair: <code>ping</code> (RTT min/avg/percentiles, loss), then "
        "one <code>iperf3</code> TCP test per direction after an omitted warm-up. Results are "
        "one row per directed test in <a href='data.html'>measurements.csv</a>.</p>\n",
        "<h2>Statistics</h2>\n<ul>"
        "<li>Groups: all, and each directed cloud pair (aws-gcp = from AWS to GCP).</li>"
        "<li>The RTT of a test is the <strong>median of its samples</strong> "
        "(<code>rtt_p50_ms</code>), everywhere one RTT is shown. The mean "
        "(<code>rtt_avg_ms</code>) is its own column, named as the mean; it stands in for "
        "the RTT only for imported rows whose source published no median (said where it "
        "happens). A pair's RTT over several sweeps is the median of its tests' RTTs. "
        'Statistics over a group\'s tests ("median over tests") describe the spread '
        "across pairs, not any one pair.</li>"
        "<li>Throughput is <code>throughput_bps</code> at the receiver. Failed tests are "
        "left out.</li>"
        "<li>Flags: every row is checked "
        + "".join(
            f"(<code>{_e(n)}</code>: {_e(w)}; invalidates {_e(invalidates_text(n))}) "
            for n, w in FLAG_REASONS.items()
        )
        + "and a flagged row's RTT (with its loss and jitter) or throughput, whichever its "
        "flags invalidate, is left out of every statistic, fit, chart and matrix unless "
        "asked (<code>--include-flagged</code>): a throughput flag leaves the row's RTT in. "
        "The report says how many and why.</li>"
        "<li>The fibre floor: light in fibre at c x 2/3 = 199,861.6 km/s, so a round trip "
        "costs 2 x distance / (c x 2/3) = 10.0069 ms per 1000 km.</li>"
        "<li>RTT against geodesic distance (WGS-84): a Theil-Sen line (the median of the "
        "slopes between every two points; a random 50,000 of them above that many), held "
        "to an intercept of 0 or more and a slope of at least the fibre's; Pearson's r and "
        "Spearman's rank correlation beside it. log10(throughput) by least squares. "
        "Slopes per 1000 km.</li>"
        "<li>Percentiles by linear interpolation between closest ranks (Hyndman-Fan method 7, "
        "as numpy's default).</li>"
        "<li>Route inflation (the headline figure): RTT over the fibre floor, its median "
        "and quartiles; only pairs at least "
        f"{INFLATION_MIN_KM:.0f} km apart, where the fixed cost of the stack no "
        "longer dominates.</li>"
        "<li>Outliers: a directed pair's median RTT more than 3 robust sigmas "
        "(1.4826 x MAD of the group's residuals) above or below its cloud pair's fit (a "
        "line through one median per directed pair, so pairs measured in many sweeps weigh "
        "no more), and at least "
        f"{OUTLIER_MIN_EXCESS_MS:.0f} ms from it: above, likely detours; below, "
        "faster than the group, worth checking.</li>"
        f"<li>Charts show at most {MAX_POINTS} evenly spaced points each; the CSVs "
        "always hold every row.</li></ul>\n",
        "<h2>The emulated backend</h2>\n"
        "<p>Without a cloud account, sweeps run on an emulated cloud: one network namespace "
        "per region on one machine, with delays from a latency model and a rate cap per "
        "host. Its results show how the tooling works, <strong>not</strong> how the clouds "
        "perform, and are labelled EMULATED everywhere.</p>\n",
        model,
        "<h2>Caveats</h2>\n<ul>"
        "<li>A single small VM per region: throughput is limited by that VM's NIC and "
        "TCP window, not by the backbone.</li>"
        "<li>One TCP stream by default; more streams raise long-haul throughput.</li>"
        "<li>Distances are straight lines: real routes follow cables and peering points.</li>"
        "<li>A sweep is a snapshot: routes and load change over hours and days.</li></ul>\n",
        _sweep_list(nav, ""),
        html.foot(),
    ]
    return "".join(parts)


def _model_text() -> str:
    m = DEFAULT_MODEL
    rows = [
        ("base RTT", f"{m.base_rtt_ms:.2f} ms"),
        ("RTT per 1000 km", f"{m.rtt_ms_per_1000km:.2f} ms"),
        ("extra RTT between AWS and GCP", f"{m.cross_cloud_rtt_ms:.2f} ms"),
        ("jitter (one way)", f"{m.jitter_ms:.2f} ms"),
        ("loss (one way)", f"{m.loss_pct:g} %"),
        ("rate cap per host", f"{m.rate_mbit:g} Mbit/s"),
        ("TCP buffer", f"{m.tcp_buffer_bytes} bytes"),
        ("rate scale (emulated / real small VM)", f"{m.scale:g}"),
    ]
    body = "".join(f"<tr><td>{_e(k)}</td><td>{_e(v)}</td></tr>" for k, v in rows)
    return (
        "<p>Latency model (orchestrator/netmodel/model.py): RTT = base + slope x distance "
        "(+ the cross-cloud extra), calibrated on public measurements between real AWS "
        "and GCP regions. Throughput is capped at the rate below and by the TCP window "
        "over the RTT; emulated rates are the real curve times the scale.</p>\n"
        f"<table id='model'><tr><th>parameter</th><th>value</th></tr>{body}</table>\n"
    )


def _data_html(pages: Sequence[SweepPage], emulated: bool, history: bool, studies: bool) -> str:
    parts = [
        html.head("Data", "", history, studies),
        html.banner(emulated, "Some or all results on this site were"),
        "<h1>Data</h1>\n<p>Every file is also described in "
        "<a href='data/schema.json'>data/schema.json</a>. Rows with backend "
        "<code>local</code> come from the EMULATED cloud.</p>\n<table id='downloads'>"
        "<tr><th>sweep</th><th>rows</th><th>backend</th><th>files</th></tr>",
    ]
    for p in reversed(pages):
        backends = ", ".join(p.products.backends)
        label = " (EMULATED)" if p.products.emulated else ""
        files = " ".join(
            f"<a href='data/{_e(p.id)}/{f}'>{f}</a>"
            for f in ("measurements.csv", "summary.csv", "outliers.csv", "sweep.json")
            if f != "sweep.json" or p.meta
        )
        parts.append(
            f"<tr><td><a href='sweeps/{_e(p.id)}.html'>{_e(p.id)}</a></td>"
            f"<td>{p.rows_published}</td><td>{_e(backends)}{label}</td><td>{files}</td></tr>"
        )
    parts.append("</table>\n")
    for name, columns in schema_json().items():
        if name == "sweep.json":
            continue
        rows = "".join(
            f"<tr><td><code>{_e(c['name'])}</code></td><td>{_e(c['description'])}</td></tr>"
            for c in columns
        )
        parts.append(
            f"<h2>{_e(name)}</h2>\n<table><tr><th>column</th><th>meaning</th></tr>{rows}</table>\n"
        )
    parts.append(html.foot())
    return "".join(parts)
