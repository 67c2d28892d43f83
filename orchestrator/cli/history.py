"""CLI commands that read the history store: history (ingest, rebuild, export, import,
convert, show), matrix, changes, advise."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from orchestrator import advise as advising
from orchestrator import exchange, history, text
from orchestrator.cli import options as opt
from orchestrator.core import UserError, counted, step, warning
from orchestrator.history import MAX_RUNS, Params

STEP_AFTER_S = 2.0  # a step that bad input can end at once says it runs only after this
_METRICS = ["rtt", "loss", "jitter", "throughput", "capacity"]
_METRIC_HELP = (
    "RTT (ping samples, ms), loss (ping_loss_pct, %), jitter (ping's rtt_mdev_ms), throughput "
    "(iperf3's single_stream measure, bit/s)"
)


def _window_option(default: str, latest: bool = False) -> Callable[[opt.F], opt.F]:
    return click.option(
        "--window",
        type=click.Choice([*(["latest"] if latest else []), "1D", "1W", "1M", "1Y", "all"]),
        default=default, show_default=True,
        help=("Each pair's newest test (latest), or the tests" if latest else "Tests")
        + " of the last day, week, 30 days, 365 days (up to the source's latest test), or all.",
    )  # fmt: skip


_SOURCE_OPTION = click.option(
    "--source", "sources", multiple=True, metavar="NAME",
    help="Source to show (emulated, measured, or an imported name), repeatable. "
    "Default: each source, one after the other, never mixed.",
)  # fmt: skip


def _query_options(f: opt.F) -> opt.F:
    return opt.stack(f, [
        click.option("--pairs", default=None, metavar="LIST",
                     help="Directed pairs SRC/DST, comma-separated."),
        click.option("--metric", type=click.Choice(_METRICS), default="rtt", show_default=True,
                     help=_METRIC_HELP + " or capacity (the capacity measure: several "
                     "streams, buffers sized for the BDP)."),
        _window_option("all"), _SOURCE_OPTION,
        opt.json_flag("Print JSON."),
        opt.results_option,
    ])  # fmt: skip


@opt.examples("interregion history --pairs aws:us-east-1/gcp:europe-west1 --window 1W")
@click.group("history", invoke_without_command=True)
@_query_options
@click.pass_context
def history_group(ctx: click.Context, pairs: str | None, **query: Any) -> None:
    """History across sweeps: one DuckDB store, results/history.duckdb.

    With --pairs and no subcommand: 'history show'.
    """
    if ctx.invoked_subcommand is not None:
        if pairs:
            raise UserError("--pairs is for the pair query: drop it, or drop the subcommand")
        return
    if not pairs:
        click.echo(ctx.get_help())
        ctx.exit(0)
    ctx.invoke(show, pairs=pairs, **query)


@opt.examples(
    "interregion history show --pairs aws:us-east-1/gcp:europe-west1 --window 1W",
    "interregion history show --pairs gcp:asia-east1/aws:eu-west-1 --metric throughput --json",
)
@history_group.command()
@_query_options
def show(pairs: str | None, metric: str, window: str, sources: tuple[str, ...], as_json: bool,
         results: Path) -> None:  # fmt: skip
    """One pair's series (a value per test) and its window percentiles."""
    if not pairs:
        raise UserError("--pairs is required, e.g. --pairs aws:us-east-1/gcp:europe-west1")
    found = history.pair_series(results, pairs, metric, window, sources)
    opt.echo_result(found, as_json, text.render_pair_series)


@opt.examples(
    "interregion history ingest --sweep 20261122T0130Z-3fa2", "interregion history ingest --all"
)
@history_group.command()
@click.option("--sweep", "sweep_id", default=None, metavar="ID", help="One sweep's id.")
@click.option("--all", "all_", is_flag=True, help="Every sweep under --results.")
@click.option(
    "--replace", is_flag=True,
    help="Replace stored rows even with fewer (a sweep's CSV cut short or gone).",
)  # fmt: skip
@opt.results_option
def ingest(sweep_id: str | None, all_: bool, replace: bool, results: Path) -> None:
    """Put sweeps' rows into the store, replacing a sweep's rows ingested before."""
    if bool(sweep_id) == all_:
        raise UserError("say which sweeps: --sweep ID or --all (not both)")
    if sweep_id:
        with step(f"ingesting sweep {sweep_id}", after_s=STEP_AFTER_S):
            done = history.ingest_with_changes(results, sweep_id, replace)
        click.echo("\n".join(text.ingest_lines(done)))
        return
    with step(f"ingesting every sweep and import of {results}", after_s=STEP_AFTER_S):
        every = history.ingest_every_sweep(results, warning, replace)
    click.echo(text.filled_line(every))


@opt.examples("interregion history rebuild --results results/")
@history_group.command()
@opt.results_option
def rebuild(results: Path) -> None:
    """Recreate the store from results/*/ and results/imports/ alone."""
    click.echo(text.rebuilt_line(history.rebuild_history(results, warning)))


@opt.examples(
    "interregion history export --format parquet --out /tmp/history.parquet",
    "interregion history export --format csv --since 2026-11-01",
)
@history_group.command()
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet",
              show_default=True, help="File format.")  # fmt: skip
@click.option("--since", callback=opt.utc_time, metavar="T",
              help="Only rows from this UTC date/time.")  # fmt: skip
@click.option("--out", type=opt.UserPath(dir_okay=False), default=None,
              help="File to write. Default: results/history.parquet (or .csv).")  # fmt: skip
@opt.results_option
def export(fmt: str, since: datetime | None, out: Path | None, results: Path) -> None:
    """Export the stored rows (with each test's ping samples) as Parquet or CSV."""
    target = out or results / f"history.{fmt}"
    rows = exchange.export_measurements(results, target, fmt, since)
    click.echo(f"{counted(rows, 'row')} -> {target}")


@opt.examples(
    "interregion history convert --from skyplane builtin --out s.csv",
    "interregion history import --source skyplane --date 2022-11 s.csv",
)
@history_group.command(name="import")
@click.option("--source", required=True, metavar="NAME", help="The publisher, e.g. skyplane.")
@click.option("--date", "month", required=True, metavar="YYYY-MM", help="When it was measured.")
@click.option("--label", default="", help="A longer label shown with the source.")
@click.option("--replace", is_flag=True,
              help="Replace an earlier import of the same source and date.")  # fmt: skip
@click.argument("file", type=opt.UserPath(dir_okay=False, exists=True))
@opt.results_option
def import_(source: str, month: str, label: str, replace: bool, file: Path, results: Path) -> None:
    """Load published measurements (a CSV in our schema) as a dated, labelled source.

    A copy in results/imports/ keeps it for 'history rebuild'.
    """
    done = exchange.import_source(results, file, source, month, label, replace=replace)
    if done.replaced is not None:
        click.echo(f"replaced the import of {source} {month} from {done.replaced}")
    click.echo(f"{source} {month}: {counted(done.rows, 'row')} in {done.store}")


class _BuiltinOrPath(opt.UserPath):
    """A file, or the word 'builtin' (a file that ships with the package), kept as is."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value if value == "builtin" else super().convert(value, param, ctx)


@opt.examples(
    "interregion history convert --from skyplane builtin --out s.csv",
    "interregion history convert --from doit builtin --out d.csv",
)
@history_group.command()
@click.option("--from", "fmt", type=click.Choice(["skyplane", "doit"]), required=True,
              help="Its format.")  # fmt: skip
@click.argument("file", type=_BuiltinOrPath(dir_okay=False, exists=True))
@click.option("--out", type=opt.UserPath(dir_okay=False), required=True, help="CSV to write.")
def convert(fmt: str, file: Path | str, out: Path) -> None:
    """Rewrite a public data file in our CSV schema, for 'history import'. FILE 'builtin'
    is the format's file that ships with interregion (data/README.md); ./builtin is a
    file of that name.
    """
    click.echo(text.converted_line(exchange.convert_file(fmt, file, out)))


@opt.examples(
    "interregion matrix --metric rtt --stat p90 --window 1W --source emulated",
    "interregion matrix --window latest",
    "interregion matrix --source skyplane --window all --cloud-pair aws:gcp --json",
    "interregion matrix --metric detectable --json",
)
@click.command()
@click.option(
    "--metric", type=click.Choice([*_METRICS, "detectable"]), default="rtt", show_default=True,
    help=_METRIC_HELP + ", capacity (the capacity measure, bit/s), or detectable: each pair's "
    "smallest RTT change (ms) change detection confirms within 3 runs with 95 % probability "
    "(--stat and --window do not apply).",
)  # fmt: skip
@click.option(
    "--stat", type=click.Choice(["min", "p10", "p25", "p50", "p75", "p90", "p99", "max", "mean"]),
    default="p50", show_default=True,
    help="Percentile of the window's pooled samples.",
)  # fmt: skip
@_window_option("1W", latest=True)
@_SOURCE_OPTION
@opt.json_flag("Print the matrix as JSON (docs/history.md).")
@opt.include_flagged_option
@click.option("--csv", "as_csv", is_flag=True, help="Print one CSV row per pair and source.")
@opt.results_option
@opt.catalog_option
@opt.filter_options
def matrix(
    metric: str, stat: str, window: str, sources: tuple[str, ...], as_json: bool,
    include_flagged: bool, as_csv: bool, results: Path, catalog: Path, **selection: Any,
) -> None:  # fmt: skip
    """The From x To table of one statistic from the history store, one per source.

    A cell pools every sample of every test of the window (docs/history.md). The mesh's
    sources are `interregion mesh matrix`'s.
    """
    if as_json and as_csv:
        raise UserError("--json and --csv both given: pick one")
    found = history.matrix_report(history.MatrixRequest(
        results, metric, stat, window, sources, include_flagged, catalog,
        opt.filters_from(selection, "a matrix"), json_hint=as_json,
    ))  # fmt: skip
    if as_csv:
        click.echo(text.csv_text(found.doc), nl=False)
    else:
        opt.echo_result(found, as_json, lambda f: text.render_matrix_table(f.doc),
                        width=text.MATRIX_WIDTH)  # fmt: skip


@opt.examples(
    "interregion changes --since 2026-11-01",
    "interregion changes --json --notify http://127.0.0.1:8080/hook",
    "INTERREGION_NOTIFY_URL=https://user:secret@hooks.example/x interregion changes",
    "interregion changes --min-runs 4 --baseline-runs 12",
    "interregion changes --calibrate --json",
)
@click.command()
@click.option(
    "--since", callback=opt.utc_time, metavar="T",
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
    f"rule; {Params.window_runs} until set).",
)  # fmt: skip
@click.option(
    "--min-runs", type=click.IntRange(2, MAX_RUNS), default=None,
    help=f"Comparable runs a pair needs before any of its runs is judged (the store's rule; "
    f"{Params.min_runs} until set).",
)  # fmt: skip
@click.option(
    "--calibrate/--no-calibrate", default=None,
    help="Judge with k1, k2 set by each sweep's calibration (docs/history.md), or with the "
    "fixed 3 and 3.75 (the store's rule until given).",
)  # fmt: skip
@opt.json_flag("Print JSON.")
@click.option(
    "--notify", "url", default=None, metavar="URL", envvar="INTERREGION_NOTIFY_URL",
    help="POST one JSON document per new or closed episode to this URL (or "
    "INTERREGION_NOTIFY_URL; user:password@ in it is sent as basic auth, never printed).",
)  # fmt: skip
@click.option(
    "--notify-file", type=opt.UserPath(dir_okay=False), default=None, metavar="FILE",
    help="Read the --notify URL from the first line of FILE (keeps it out of ps and logs).",
)  # fmt: skip
@opt.results_option
def changes(
    since: datetime | None, sources: tuple[str, ...], last_runs: int, baseline_runs: int | None,
    min_runs: int | None, calibrate: bool | None, as_json: bool, url: str | None,
    notify_file: Path | None, results: Path,
) -> None:  # fmt: skip
    """Changes of median RTT and throughput per path; exit 3 while any is open.

    Each run was judged once, when its sweep joined the store; this shows what was judged,
    unless --baseline-runs, --min-runs or --calibrate asks for another rule, which judges
    every run again (docs/history.md).
    """
    request = history.ChangesRequest(results, since, sources, last_runs, baseline_runs,
                                     min_runs, calibrate, url, notify_file)  # fmt: skip
    found = history.changes_report(request, warning)
    calibration = bool(calibrate)
    opt.echo_result(found, as_json, lambda f: text.render_change_lines(f, calibration=calibration))
    if found.docs.open:
        sys.exit(3)


@opt.examples(
    "interregion advise --from aws:us-east-1 --to gcp:asia-northeast1 --size 100GB",
    "interregion advise --from aws:eu-west-1 --to aws:us-west-2 --size 1.5TiB \\\n"
    "  --files 20000 --streams 8 --json",
)
@click.command()
@click.option("--from", "src", required=True, metavar="REGION", help="Source, e.g. aws:us-east-1.")
@click.option("--to", "dst", required=True, metavar="REGION", help="Destination region.")
@click.option(
    "--size", required=True, metavar="SIZE",
    help="How much to move: 100GB, 1.5TiB, 500MB (GB = 10^9 bytes, GiB = 2^30; any case, "
    "but 100Gb is bits).",
)  # fmt: skip
@click.option(
    "--files", default=None, metavar="N",
    help="Split into N equal files: compare a new connection per file with one reused.",
)  # fmt: skip
@click.option("--streams", default=None, metavar="P",
              help="Parallel TCP streams for the streams option  [default: 4].")  # fmt: skip
@click.option(
    "--measured-only", is_flag=True,
    help="Refuse to answer from the network model when the pair has no real measurements.",
)  # fmt: skip
@click.option(
    "--tier", default="premium", show_default=True, metavar="TIER",
    help="GCP network tier of the GCP end(s): premium or standard (or source/destination, "
    "premium/standard). Tests of another tier are never pooled.",
)  # fmt: skip
@opt.json_flag("Print the advice as JSON (docs/advise.md).")
@opt.results_option
@opt.catalog_option
def advise(
    src: str, dst: str, size: str, files: str | None, streams: str | None,
    measured_only: bool, tier: str, as_json: bool, results: Path, catalog: Path,
) -> None:  # fmt: skip
    """How long moving SIZE from one region to another takes with default TCP, tuned
    buffers and parallel streams, and what a new connection per file costs.

    Figures come from the pair's newest real test, else the network model; the output says
    which (docs/advise.md).
    """
    request = advising.AdviseRequest(src, dst, size, files, streams, measured_only, tier,
                                     results, catalog)  # fmt: skip
    found = advising.advise_transfer(request)
    opt.echo_result(found, as_json, lambda f: text.render_advice_table(f.doc),
                    width=text.TERMINAL_WIDTH)  # fmt: skip


COMMANDS: list[click.Command] = [history_group, matrix, changes, advise]
