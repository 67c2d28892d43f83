"""CLI commands: history (ingest, rebuild, export, import, convert, show), matrix, changes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from orchestrator.cli.options import choosers_given, filter_options, selection_from
from orchestrator.cli.pathopt import UserPath
from orchestrator.core import log, paths
from orchestrator.core.errors import UserError
from orchestrator.core.textfile import read_text
from orchestrator.history.changes import MAX_RUNS, Params

F = TypeVar("F", bound=Callable[..., Any])

_RESULTS_OPTION = click.option(
    "--results",
    "results_dir",
    type=UserPath(file_okay=False),
    default=paths.RESULTS,
    show_default=True,
    help="Folder holding one folder per sweep, and history.duckdb.",
)


def _existing_results(results_dir: Path) -> Path:
    """--results for a command that reads every sweep: a mistyped folder is an error,
    not an empty store made there."""
    if not Path(results_dir).is_dir():
        raise UserError(
            f"--results {results_dir}: no such folder: give the folder holding the sweeps"
        )
    return results_dir


def _with_store(results_dir: Path) -> Path:
    """--results for a command that reads the store: a one-line error when the folder or
    its store is missing, whose hint runs as printed (it names the folder)."""
    from orchestrator.history import store as h

    _existing_results(results_dir)
    if not h.store_path(results_dir).exists():
        raise UserError(
            f"no history store at {h.store_path(results_dir)}: run 'interregion history "
            f"ingest --all --results {paths.shell_word(results_dir)}' first"
        )
    return results_dir


def _warn(line: str) -> None:
    log.warning(line)


def _metric_option(f: F) -> F:
    return click.option(
        "--metric",
        type=click.Choice(["rtt", "loss", "jitter", "throughput", "capacity"]),
        default="rtt",
        show_default=True,
        help="RTT (ping samples, ms), loss (ping_loss_pct, %), jitter (ping's rtt_mdev_ms), "
        "throughput (iperf3's single_stream measure, bit/s) or capacity (the capacity "
        "measure: several streams, buffers sized for the BDP).",
    )(f)


def _matrix_metric_option(f: F) -> F:
    return click.option(
        "--metric",
        type=click.Choice(["rtt", "loss", "jitter", "throughput", "capacity", "detectable"]),
        default="rtt",
        show_default=True,
        help="RTT (ping samples, ms), loss (ping_loss_pct, %), jitter (ping's rtt_mdev_ms), "
        "throughput (iperf3's single_stream measure, bit/s), capacity (the capacity "
        "measure, bit/s), or detectable: each pair's smallest RTT change (ms) "
        "change detection confirms within 3 runs with 95 % probability (--stat and "
        "--window do not apply).",
    )(f)


def _window_option(default: str, latest: bool = False) -> Callable[[F], F]:
    return click.option(
        "--window",
        type=click.Choice([*(["latest"] if latest else []), "1D", "1W", "1M", "1Y", "all"]),
        default=default,
        show_default=True,
        help=("Each pair's newest test (latest), or the tests" if latest else "Tests")
        + " of the last day, week, 30 days, 365 days (up to the source's latest test), or all.",
    )


_SOURCE_OPTION = click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="NAME",
    help="Source to show (emulated, measured, or an imported name), repeatable. "
    "Default: each source, one after the other, never mixed.",
)


def _query_options(f: F) -> F:
    for option in reversed(
        [
            click.option(
                "--pairs",
                default=None,
                metavar="LIST",
                help="Directed pairs SRC/DST, comma-separated.",
            ),
            _metric_option,
            _window_option("all"),
            _SOURCE_OPTION,
            click.option("--json", "as_json", is_flag=True, help="Print JSON."),
        ]
    ):
        f = option(f)
    return f


@click.group(invoke_without_command=True)
@_query_options
@_RESULTS_OPTION
@click.pass_context
def history(ctx: click.Context, pairs: str | None, **query: Any) -> None:
    """History across sweeps: one DuckDB store, results/history.duckdb.

    With --pairs (and no subcommand), prints those pairs' series and window
    percentiles, as 'history show'.

    \b
    Examples:
      interregion history ingest --all
      interregion history --pairs aws:us-east-1/gcp:europe-west1 --window 1W
    """
    if ctx.invoked_subcommand is not None:
        if pairs:
            raise UserError("--pairs is for the pair query: drop it, or drop the subcommand")
        return
    if not pairs:
        click.echo(ctx.get_help())
        ctx.exit(0)
    _show(pairs, **query)


@history.command()
@_query_options
@_RESULTS_OPTION
def show(pairs: str | None, **query: Any) -> None:
    """One pair's series (a value per test) and its window percentiles.

    The window's percentiles pool every sample of every test in it; p99 needs
    100 samples ("—" below that).

    \b
    Examples:
      interregion history show --pairs aws:us-east-1/gcp:europe-west1 --window 1W
      interregion history show --pairs gcp:asia-east1/aws:eu-west-1 --metric throughput --json
    """
    if not pairs:
        raise UserError("--pairs is required, e.g. --pairs aws:us-east-1/gcp:europe-west1")
    _show(pairs, **query)


def _show(
    pairs: str, metric: str, window: str, sources: tuple[str, ...], as_json: bool,
    results_dir: Path,
) -> None:  # fmt: skip
    from orchestrator.history import store as h
    from orchestrator.history import views as v
    from orchestrator.netmodel.model import rate_scale_tag

    chosen = v.parse_pairs(pairs)
    with h.opened(_with_store(results_dir), read_only=True) as con:
        found = v.detection(con, sources)
        docs = [v.pair_history(con, p, metric, window, sources, found) for p in chosen]
    if as_json:
        click.echo(json.dumps(docs if len(docs) > 1 else docs[0], indent=1))
        return
    for doc in docs:
        unit = "Mbit/s" if doc["unit"] == "bit/s" else doc["unit"]
        click.echo(f"{doc['src']} -> {doc['dst']}: {doc['metric']} ({unit}), window {window}")
        if not doc["sources"]:
            click.echo("  no tests of this pair in the store")
        for s in doc["sources"]:
            scale = f" ({unit}, {rate_scale_tag()})" if s.get("rate_scale") else ""
            click.echo(
                f"  {v.source_caption(s)}{scale}; {log.counted(s['tests'], 'test')}, "
                f"{log.counted(s['samples'], 'sample')}"
            )
            stats = ", ".join(
                f"{k} {v.format_value(s[k], doc['unit'])}" for k in v.STATS if s[k] is not None
            )
            missing = [k for k in v.STATS if s[k] is None]
            if missing:
                stats += (
                    f"; {', '.join(missing)} — (from {log.counted(s['samples'], 'sample')}: "
                    f"{v.PERCENTILE_RULE})"
                )
            click.echo(f"  window {s['window_start_utc'] or 'start'} .. {s['window_end_utc']}: "
                       f"{stats}")  # fmt: skip
            if doc["metric"] == "loss":
                click.echo(f"  window's pings lost / sent: {v.loss_text(s)}")
            if s.get("smallest_detectable_change") is not None:
                size = s["smallest_detectable_change"]
                shown = f"{size:g} ms" if doc["metric"] == "rtt" else f"{100 * size:.0f} %"
                click.echo(f"  smallest change detected within 3 runs (95 %): {shown}")
            for run in s["runs"]:
                counted = (
                    _run_pings(run)
                    if doc["metric"] == "loss"
                    else log.counted(run["samples"], "sample")
                )
                click.echo(
                    f"    {run['started_utc']}  {run['sweep_id']:<20} "
                    f"{v.format_value(run['value'], doc['unit']):>10}  ({counted})"
                )


def _run_pings(run: dict[str, Any]) -> str:
    """A test's loss interval: "95 %: 0.00-16.11 % of 20 pings"."""
    if run.get("loss_pct") is None:
        return "pings not counted"
    return (
        f"95 %: {run['loss_low_pct']:.2f}-{run['loss_high_pct']:.2f} % of "
        f"{run['pings_sent']:,} pings"
    )


@history.command()
@click.option("--sweep", "sweep_id", default=None, metavar="ID", help="One sweep's id.")
@click.option("--all", "all_", is_flag=True, help="Every sweep under --results.")
@click.option(
    "--replace",
    is_flag=True,
    help="Replace stored rows even with fewer (a sweep's CSV cut short or gone).",
)
@_RESULTS_OPTION
def ingest(sweep_id: str | None, all_: bool, replace: bool, results_dir: Path) -> None:
    """Put sweeps' rows into the store; a sweep ingested again replaces its rows, never
    with fewer rows than the store holds unless --replace.

    \b
    Examples:
      interregion history ingest --sweep 20261122T0130Z-3fa2
      interregion history ingest --all
    """
    from orchestrator.history import store as h

    if bool(sweep_id) == all_:
        raise UserError("say which sweeps: --sweep ID or --all (not both)")
    if sweep_id:
        with log.step(f"ingesting sweep {sweep_id}", after_s=STEP_AFTER_S):
            rows = h.ingest_sweep(results_dir, sweep_id, replace=replace)
        click.echo(f"{sweep_id}: {log.counted(rows, 'row')} in {h.store_path(results_dir)}")
        with h.opened(results_dir, read_only=True) as con:
            for fields, pairs in h.fingerprint_changes(con, sweep_id):
                click.echo(
                    f"configuration changed for {log.counted(pairs, 'pair')} since their "
                    "previous test: " + ("; ".join(fields) or "fingerprint differs")
                )
        return
    folder = _existing_results(results_dir)
    with log.step(f"ingesting every sweep and import of {folder}", after_s=STEP_AFTER_S):
        sweeps, rows = h.ingest_all(folder, warn=_warn, replace=replace)
    click.echo(
        f"{log.counted(sweeps, 'sweep')}, {log.counted(rows, 'row')} in {h.store_path(results_dir)}"
    )


@history.command()
@_RESULTS_OPTION
def rebuild(results_dir: Path) -> None:
    """Recreate the store from results/*/ and results/imports/ alone.

    \b
    Example:
      interregion history rebuild --results results/
    """
    from orchestrator.history import store as h

    sweeps, rows = h.rebuild(_existing_results(results_dir), warn=_warn)
    click.echo(
        f"rebuilt {h.store_path(results_dir)}: {log.counted(sweeps, 'sweep')}, "
        f"{log.counted(rows, 'row')}"
    )


@history.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "csv"]),
    default="parquet",
    show_default=True,
    help="File format.",
)
@click.option("--since", default=None, metavar="T", help="Only rows from this UTC date/time.")
@click.option(
    "--out",
    type=UserPath(dir_okay=False),
    default=None,
    help="File to write. Default: results/history.parquet (or .csv).",
)
@_RESULTS_OPTION
def export(fmt: str, since: str | None, out: Path | None, results_dir: Path) -> None:
    """Export the stored rows (with each test's ping samples) as Parquet or CSV.

    \b
    Examples:
      interregion history export --format parquet --out /tmp/history.parquet
      interregion history export --format csv --since 2026-11-01
    """
    from orchestrator.exchange import exporter

    target = out or results_dir / f"history.{fmt}"
    rows = exporter.export(_with_store(results_dir), target, fmt, since)
    click.echo(f"{log.counted(rows, 'row')} -> {target}")


@history.command(name="import")
@click.option("--source", required=True, metavar="NAME", help="The publisher, e.g. skyplane.")
@click.option("--date", "month", required=True, metavar="YYYY-MM", help="When it was measured.")
@click.option("--label", default="", help="A longer label shown with the source.")
@click.option(
    "--replace", is_flag=True, help="Replace an earlier import of the same source and date."
)
@click.argument("file", type=UserPath(dir_okay=False, exists=True))
@_RESULTS_OPTION
def import_(
    source: str, month: str, label: str, replace: bool, file: Path, results_dir: Path
) -> None:
    """Load published measurements (a CSV in our schema) as a dated, labelled source.

    A copy goes to results/imports/NAME/YYYY-MM.csv, so 'history rebuild' loads it
    again; importing the same source and month again needs --replace. Convert the
    vendored public data first with 'history convert'.

    \b
    Examples:
      interregion history convert --from skyplane builtin --out s.csv
      interregion history import --source skyplane --date 2022-11 s.csv
    """
    from orchestrator.exchange import importer
    from orchestrator.history import store as h

    before = importer.previous_import(results_dir, source, month)
    rows = importer.import_file(results_dir, file, source, month, label, replace=replace)
    if before is not None:
        click.echo(f"replaced the import of {source} {month} from {before.get('file', '?')}")
    click.echo(f"{source} {month}: {log.counted(rows, 'row')} in {h.store_path(results_dir)}")


# a step of a command that bad input can end at once says it is running only after this
STEP_AFTER_S = 2.0


class _BuiltinOrPath(UserPath):
    """A file, or the word 'builtin' (a file that ships with the package), kept as is."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "builtin":
            return value
        return super().convert(value, param, ctx)


@history.command()
@click.option(
    "--from", "fmt", type=click.Choice(["skyplane", "doit"]), required=True, help="Its format."
)
@click.argument("file", type=_BuiltinOrPath(dir_okay=False, exists=True))
@click.option("--out", type=UserPath(dir_okay=False), required=True, help="CSV to write.")
def convert(fmt: str, file: Path | str, out: Path) -> None:
    """Rewrite a public data file in our CSV schema, for 'history import'. FILE 'builtin'
    is the format's file that ships with interregion (skyplane-latency-2022.csv,
    doit-intercloud-throughput-2022-02.csv; their sources in data/README.md); write
    ./builtin for a file of that name.

    \b
    Examples:
      interregion history convert --from skyplane builtin --out s.csv
      interregion history convert --from doit builtin --out d.csv
    """
    from orchestrator.exchange.public_data import BUILTIN, EXTRA_COLUMNS, builtin_file
    from orchestrator.exchange.public_data import convert as convert_rows
    from orchestrator.model.catalog import load_catalog
    from orchestrator.results import flags, store

    path = builtin_file(fmt) if file == BUILTIN else Path(file)
    rows = convert_rows(fmt, read_text(path, "CSV file"), load_catalog())
    store.write_atomic(out, store.csv_text(rows, extra=EXTRA_COLUMNS))
    counts = flags.count(r.get("flags") for r in rows)
    found = ", ".join(f"{n} {name}" for name, n in counts.items() if n)
    click.echo(f"{log.counted(len(rows), 'row')} -> {out} (flagged: {found or 'none'})")


@click.command()
@_matrix_metric_option
@click.option(
    "--stat", type=click.Choice(["min", "p10", "p25", "p50", "p75", "p90", "p99", "max", "mean"]),
    default="p50", show_default=True,
    help="Percentile of the window's pooled samples.",
)  # fmt: skip
@_window_option("1W", latest=True)
@_SOURCE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as JSON (docs/history.md).")
@click.option(
    "--include-flagged",
    is_flag=True,
    help="Keep the tests with flags (below the fibre floor, asymmetric, ...; docs/results.md); "
    "by default a test whose flags invalidate the metric is left out and counted.",
)
@click.option("--csv", "as_csv", is_flag=True, help="Print one CSV row per pair and source.")
@_RESULTS_OPTION
@click.option(
    "--catalog",
    type=UserPath(dir_okay=False, exists=True),
    default=paths.CATALOG,
    show_default=True,
    help="Region catalog (opt-in regions for --no-opt-in).",
)
@filter_options
def matrix(
    metric: str, stat: str, window: str, sources: tuple[str, ...], as_json: bool,
    include_flagged: bool, as_csv: bool, results_dir: Path, catalog: Path, **selection: Any,
) -> None:  # fmt: skip
    """The From x To table of one statistic from the history store.

    One table per source (emulated, measured, or an imported name), never mixed,
    each captioned with its source. A cell pools every sample of every test of
    the window; a tail percentile q from fewer than 10 / min(q, 1 - q) samples (p90:
    100, p99: 1,000) shows "—" (null in JSON, with value_n, the samples it had).
    The continuous mesh's sources are not shown: `interregion mesh matrix` is theirs.

    \b
    Examples:
      interregion matrix --metric rtt --stat p90 --window 1W --source emulated
      interregion matrix --window latest
      interregion matrix --source skyplane --window all --cloud-pair aws:gcp --json
      interregion matrix --metric detectable --json
    """
    from orchestrator.history import store as h
    from orchestrator.history import views as v
    from orchestrator.model.catalog import load_catalog
    from orchestrator.plan.selection import pair_filter

    if as_json and as_csv:
        raise UserError("--json and --csv both given: pick one")
    chooser = choosers_given(selection)
    if chooser:
        raise UserError(f"{chooser} chooses regions for a sweep: it does not filter a matrix")
    spec = selection_from(selection)
    regions = load_catalog(catalog)
    keep = pair_filter(spec, regions) if spec != type(spec)() else None
    with h.opened(_with_store(results_dir), read_only=True) as con:
        sources = _sweep_sources(con, sources, window, as_json)
        doc = v.matrix(
            con,
            metric,
            stat,
            window,
            sources,
            keep,
            catalog=regions,
            include_flagged=include_flagged,
        )
    if as_json:
        click.echo(json.dumps(doc, indent=1))
    elif as_csv:
        import csv

        writer = csv.DictWriter(sys.stdout, v.MATRIX_CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(v.matrix_csv_rows(doc))
    else:
        _print_matrix(doc)


def _sweep_sources(
    con: Any, sources: tuple[str, ...], window: str, as_json: bool
) -> tuple[str, ...]:
    """The sources a sweeps' matrix shows: those given, or every source but the mesh's
    (its bins have a matrix of their own, `mesh matrix`, windows down to an hour). A mesh
    source given is a one-line error naming that command."""
    from orchestrator.history import views as v
    from orchestrator.mesh import views as mesh_views

    meshes = mesh_views.mesh_sources(con)
    given = [s for s in sources if s in meshes]
    if given:
        mesh_window = window if window in mesh_views.WINDOWS else "1H"
        command = f"interregion mesh matrix --source {given[0]} --window {mesh_window}"
        raise UserError(
            f"--source {given[0]} is the continuous mesh's: its matrix (1H, 6H, 1D, 1W) is "
            f"'{command}{' --json' if as_json else ''}'"
        )
    if sources or not meshes:
        return sources
    swept = tuple(name for name in v.source_infos(con) if name not in meshes)
    if not swept:
        raise UserError(
            "the history store holds the continuous mesh's bins alone, no sweep: its matrix "
            "is 'interregion mesh matrix'"
        )
    return swept


def _print_matrix(doc: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from orchestrator.history import views as v
    from orchestrator.netmodel.model import rate_scale_tag

    console = Console() if sys.stdout.isatty() else Console(width=400)
    unit = "Mbit/s" if doc["unit"] == "bit/s" else doc["unit"]
    for mx in doc["matrices"]:
        span = (
            f"(each pair's newest test, up to {mx['window_end_utc']})"
            if doc["window"] == "latest"
            else f"{mx['window_start_utc'] or 'start'} .. {mx['window_end_utc']}"
        )
        shown = f"{unit}, {rate_scale_tag()}" if mx.get("rate_scale") else unit
        title = (
            f"{doc['metric']} {doc['stat']} ({shown}), window {doc['window']} {span}; "
            f"{v.source_caption(mx)}"
        )
        cells = {(c["src"], c["dst"]): _matrix_cell(doc, c) for c in mx["cells"]}
        # the matrix's own order (by cloud, then west to east), as on the site
        srcs = [r for r in mx["regions"] if any(c["src"] == r for c in mx["cells"])]
        dsts = [r for r in mx["regions"] if any(c["dst"] == r for c in mx["cells"])]
        console.print(title, soft_wrap=True, highlight=False)
        if mx.get("flagged_tests"):  # none in the detectable matrix
            console.print(
                f"{mx['flagged_tests']} flagged tests left out: their flags invalidate their "
                f"{doc['metric']} (docs/results.md, 'Flags'); --include-flagged keeps them",
                highlight=False,
            )
        if doc["metric"] == "loss" and mx["cells"]:
            console.print(
                f"below each {doc['stat']}: the window's pings lost / sent (%) "
                "with its Wilson 95 % interval (low-high)",
                highlight=False,
            )
        table = Table()
        table.add_column("From \\ To")
        for d in dsts:
            table.add_column(d, justify="right")
        for s in srcs:
            table.add_row(
                s,
                *(cells.get((s, d), "") for d in dsts),
            )
        console.print(table if mx["cells"] else "no tests in the window")


def _matrix_cell(doc: dict[str, Any], cell: dict[str, Any]) -> str:
    """A matrix cell as text: its statistic; for loss, the window's pooled loss and its
    Wilson interval below it."""
    from orchestrator.history import views as v

    text = v.format_value(cell["value"], doc["unit"])
    if doc["metric"] == "loss" and cell.get("loss_pct") is not None:
        text += f"\n{cell['loss_pct']:.2f} ({cell['loss_low_pct']:.2f}-{cell['loss_high_pct']:.2f})"
    return text


UNITS = {"rtt": "ms", "throughput": "bit/s"}


@click.command()
@click.option(
    "--since", default=None, metavar="T",
    help="Only changes that started or closed from this UTC date/time (open ones always).",
)  # fmt: skip
@_SOURCE_OPTION
@click.option(
    "--runs", "last_runs", type=click.IntRange(2, MAX_RUNS), default=56, show_default=True,
    help="The latest sweeps of each source to examine (2 x the 28-run baseline).",
)  # fmt: skip
@click.option(
    "--baseline-runs", type=click.IntRange(2, MAX_RUNS), default=None,
    help=f"N: a pair's baseline is the median of its last N comparable runs (the store's "
    f"rule; {Params.window_runs} until set). Another value judges every run again with it.",
)  # fmt: skip
@click.option(
    "--min-runs", type=click.IntRange(2, MAX_RUNS), default=None,
    help=f"Comparable runs a pair needs before any of its runs is judged (the store's rule; "
    f"{Params.min_runs} until set). Another value judges every run again with it.",
)  # fmt: skip
@click.option(
    "--calibrate/--no-calibrate", default=None,
    help="Judge with k1, k2 set by each sweep's calibration (the rate of runs beyond 4.5 "
    "scales over each direction's last 28 runs outside episodes; within 3-4.5 and "
    "3.75-5.5), or with the fixed 3 and 3.75. The store's rule until given; another "
    "value judges every run again.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--notify", "url", default=None, metavar="URL", envvar="INTERREGION_NOTIFY_URL",
    help="POST one JSON document per new or closed episode to this URL (or "
    "INTERREGION_NOTIFY_URL; user:password@ in it is sent as basic auth, never printed).",
)  # fmt: skip
@click.option(
    "--notify-file", type=UserPath(dir_okay=False), default=None, metavar="FILE",
    help="Read the --notify URL from the first line of FILE (keeps it out of ps and logs).",
)  # fmt: skip
@_RESULTS_OPTION
def changes(
    since: str | None, sources: tuple[str, ...], last_runs: int, baseline_runs: int | None,
    min_runs: int | None, calibrate: bool | None, as_json: bool, url: str | None,
    notify_file: Path | None, results_dir: Path,
) -> None:  # fmt: skip
    """Changes of median RTT and throughput per path; exit 3 while any is open.

    Each run was judged once, when its sweep joined the store, against the runs before
    it; this shows what was judged. Path events (both directions judged together, each
    direction's change shown), host/region changes (most of one host's paths in the same
    run), suspected runs (flagged, not confirmed: never notified) and configuration
    changes (a fingerprint changed: never counted as a network change). With --notify,
    each new or closed event is POSTed once as JSON.

    \b
    Examples:
      interregion changes --since 2026-11-01
      interregion changes --json --notify http://127.0.0.1:8080/hook
      INTERREGION_NOTIFY_URL=https://user:secret@hooks.example/x interregion changes
      interregion changes --min-runs 4 --baseline-runs 12
      interregion changes --calibrate --json
    """
    from dataclasses import replace
    from datetime import datetime

    from orchestrator.history import changes as ch
    from orchestrator.history import judgments, notify
    from orchestrator.history import store as h
    from orchestrator.history import views as v

    if min_runs is not None and baseline_runs is not None and min_runs > baseline_runs:
        raise UserError(f"--min-runs {min_runs} is above --baseline-runs {baseline_runs}")
    if notify_file is not None:
        if url:
            raise UserError(
                "give the URL once: --notify (or INTERREGION_NOTIFY_URL) or --notify-file"
            )
        url = notify.url_from_file(notify_file)
    if url:
        notify.check_url(url)
    since_iso = v.iso_utc(datetime.fromisoformat(h.parse_since(since))) if since else None
    with h.opened(results_dir, read_only=True) as con:
        kept = judgments.rule(con)
    rule = replace(
        kept,
        window_runs=kept.window_runs if baseline_runs is None else baseline_runs,
        min_runs=kept.min_runs if min_runs is None else min_runs,
        calibrate=kept.calibrate if calibrate is None else calibrate,
    )
    if rule.min_runs > rule.window_runs:
        raise UserError(f"--min-runs {rule.min_runs} is above --baseline-runs {rule.window_runs}")
    with h.opened(results_dir, read_only=not url and rule == kept) as con:
        if rule != kept:
            _warn(
                f"the rule changed ({_rule_text(rule)}; it was {_rule_text(kept)}): every "
                "run of the store is judged again with it"
            )
            with h.transaction(con):
                judgments.set_rule(con, rule)
                judgments.rejudge(con)
        found = judgments.detection(con, sources, last_runs, since_iso)
        episodes = [ch.episode_doc(e, UNITS) for e in found.episodes]
        hosts = [ch.host_doc(x, UNITS) for x in found.hosts]
        hosts += [ch.group_doc(x, UNITS) for x in found.groups]
        suspected = [ch.suspect_doc(x, UNITS) for x in found.suspects]
        configs = v.config_change_docs(con, found.config_changes)
        waiting = [ch.unjudged_doc(u) for u in found.waiting]
        if url:
            _notify(con, url, [*hosts, *episodes])
    calibration = ch.combined_calibration(found)
    open_count = sum(d["status"] == "open" for d in [*episodes, *hosts])
    if as_json:
        doc = {"open": open_count, "hosts": hosts, "episodes": episodes,
               "suspected": suspected, "configuration_changes": configs,
               "judged_pairs": len(found.baselines), "not_judged": waiting,
               "rule": _rule_doc(rule)}  # fmt: skip
        if calibration is not None:
            doc["calibration"] = _calibration_doc(calibration)
        click.echo(json.dumps(doc, indent=1))
    else:
        if calibrate and calibration is not None:
            c = calibration
            click.echo(
                f"CALIBRATION {c.beyond} of {c.judged} recent runs beyond 4.5 scales "
                f"({100 * c.rate:.3f} %, normal noise {100 * c.expected:.4f} %): tails x "
                f"{c.inflation:.2f}, k1 {c.k1:g}, k2 {c.k2:g}"
            )
        _print_changes(hosts, episodes, configs, open_count, suspected)
        for u in waiting:
            click.echo(u["text"])
        if not found.baselines:
            click.echo("no pair judged yet: nothing can have changed")
    if open_count:
        sys.exit(3)


def _rule_text(p: Params) -> str:
    calibrated = "calibrated k" if p.calibrate else f"k1 {p.k1:g}, k2 {p.k2:g}"
    return f"--baseline-runs {p.window_runs}, --min-runs {p.min_runs}, {calibrated}"


def _rule_doc(p: Params) -> dict[str, Any]:
    return {"baseline_runs": p.window_runs, "min_runs": p.min_runs, "calibrate": p.calibrate,
            "k1": p.k1, "k2": p.k2}  # fmt: skip


def _calibration_doc(c: Any) -> dict[str, Any]:
    return {"judged_runs": c.judged, "beyond_4_5_scales": c.beyond, "rate": c.rate,
            "normal_rate": c.expected, "tail_inflation": round(c.inflation, 3),
            "k1": c.k1, "k2": c.k2}  # fmt: skip


def _notify(con: Any, url: str, docs: list[dict[str, Any]]) -> None:
    from orchestrator.history import notify
    from orchestrator.history import store as h

    sent = h.notified(con)
    for doc in docs:
        event = notify.event_of(doc, sent.get(doc["id"]))
        if event is None:
            continue
        problem = notify.post_json(url, {"type": "interregion.change", "event": event, **doc})
        if problem:
            shown = notify.redacted(url)
            _warn(f"--notify {shown}: {problem}: episode {doc['id']} will be sent next time")
            continue
        h.mark_notified(con, doc["id"], doc["status"])


def _print_changes(
    hosts: list[dict[str, Any]], episodes: list[dict[str, Any]], configs: list[dict[str, Any]],
    open_count: int, suspected: list[dict[str, Any]],
) -> None:  # fmt: skip
    from orchestrator.history import views as v
    from orchestrator.model.backends import is_emulated
    from orchestrator.netmodel.model import rate_scale_tag

    def level(doc: dict[str, Any], value: float) -> str:
        if doc["unit"] != "bit/s":
            return v.format_value(value, doc["unit"]) + " ms"
        scale = f" ({rate_scale_tag()})" if is_emulated(str(doc.get("backend"))) else ""
        return v.format_value(value, doc["unit"]) + " Mbit/s" + scale

    def tag(doc: dict[str, Any]) -> str:
        return f"[{doc['source']}/{doc['backend']}]"

    def delta(doc: dict[str, Any], x: dict[str, Any]) -> str:
        """`+10.0 ms, +6.7 %`: the change, and in % of the old level."""
        change = v.format_value(x["change"], doc["unit"])
        sign = "+" if x["change"] >= 0 and not change.startswith("-") else ""
        unit = " Mbit/s" if doc["unit"] == "bit/s" else " ms"
        pct = f", {x['change_pct']:+.1f} %" if x.get("change_pct") is not None else ""
        return f"{sign}{change}{unit}{pct}"

    for d in hosts:
        toward = f" toward {d['toward'].split(':', 1)[1]}" if d.get("toward") else ""
        click.echo(
            f"{'REGION' if toward else 'HOST'} {d['status'].upper():<12} {d['metric']:<10} "
            f"{d['host']}{toward}: "
            f"{d['pairs_changed']} of {d['pairs_evaluated']} pairs changed from run "
            f"{d['started_run']} ({d['started_utc']}) {tag(d)}"
        )
    for d in episodes:
        closed = f", closed {d['closed_utc']}" if d["closed_utc"] else ""
        one = " (one direction)" if d["one_direction"] else ""
        click.echo(
            f"PATH {d['status'].upper():<12} {d['metric']:<10} {d['src']} <-> {d['dst']}{one} "
            f"from {d['started_utc']}{closed} {tag(d)} [k1 {d['k1']:g}, k2 {d['k2']:g}]"
        )
        for x in d["directions"]:
            click.echo(
                f"  {x['src']} -> {x['dst']}: {level(d, x['old_level'])} -> "
                f"{level(d, x['new_level'])} ({delta(d, x)})"
                f"{'' if x['moved'] else ' (did not move)'}; "
                f"flag {x['flag_threshold']:g}, confirm {x['confirm_threshold']:g}"
            )
    for d in suspected:
        moves = ", ".join(
            f"{x['src']} -> {x['dst']} {x['change']:+g} (flag {x['flag_threshold']:g})"
            for x in d["directions"]
        )
        click.echo(f"SUSPECTED {d['metric']:<10} run {d['run']} ({d['utc']}): {moves} {tag(d)}")
    for d in configs:
        click.echo(
            f"CONFIGURATION run {d['run']} ({d['utc']}), {len(d['pairs'])} pairs "
            f"[{d['source']}/{d['backend']}]: {'; '.join(d['fields']) or 'fingerprint changed'}"
        )
    if not (hosts or episodes or configs or suspected):
        click.echo("no changes")
    click.echo(f"{open_count} open")


COMMANDS: list[click.Command] = [history, matrix, changes]
