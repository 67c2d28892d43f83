"""CLI commands: history (ingest, rebuild, export, import, convert, show), matrix, changes."""

from __future__ import annotations

from pathlib import Path

import click

from orchestrator import paths
from orchestrator.errors import UserError

_RESULTS_OPTION = click.option(
    "--results",
    "results_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=paths.RESULTS,
    show_default=True,
    help="Folder holding one folder per sweep, and history.duckdb.",
)


def _warn(line: str) -> None:
    click.echo(f"warning: {line}", err=True)


@click.group()
def history() -> None:
    """History across sweeps: one DuckDB store, results/history.duckdb.

    \b
    Examples:
      interregion history ingest --all
      interregion history show --pairs aws:us-east-1/gcp:europe-west1 --window 1W
    """


@history.command()
@click.option("--sweep", "sweep_id", default=None, metavar="ID", help="One sweep's id.")
@click.option("--all", "all_", is_flag=True, help="Every sweep under --results.")
@_RESULTS_OPTION
def ingest(sweep_id: str | None, all_: bool, results_dir: Path) -> None:
    """Put sweeps' rows into the store; a sweep ingested again replaces its rows.

    \b
    Examples:
      interregion history ingest --sweep 20261122T0130Z-3fa2
      interregion history ingest --all
    """
    from orchestrator import history as h

    if bool(sweep_id) == all_:
        raise UserError("say which sweeps: --sweep ID or --all (not both)")
    if sweep_id:
        rows = h.ingest_sweep(results_dir, sweep_id)
        click.echo(f"{sweep_id}: {rows} rows in {h.store_path(results_dir)}")
        return
    sweeps, rows = h.ingest_all(results_dir, warn=_warn)
    click.echo(f"{sweeps} sweeps, {rows} rows in {h.store_path(results_dir)}")


@history.command()
@_RESULTS_OPTION
def rebuild(results_dir: Path) -> None:
    """Recreate the store from results/*/ and results/imports/ alone.

    \b
    Example:
      interregion history rebuild --results results/
    """
    from orchestrator import history as h

    sweeps, rows = h.rebuild(results_dir, warn=_warn)
    click.echo(f"rebuilt {h.store_path(results_dir)}: {sweeps} sweeps, {rows} rows")


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
    type=click.Path(path_type=Path, dir_okay=False),
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
    from orchestrator import history as h

    target = out or results_dir / f"history.{fmt}"
    rows = h.export(results_dir, target, fmt, since)
    click.echo(f"{rows} rows -> {target}")


@history.command(name="import")
@click.option("--source", required=True, metavar="NAME", help="The publisher, e.g. skyplane.")
@click.option("--date", "month", required=True, metavar="YYYY-MM", help="When it was measured.")
@click.option("--label", default="", help="A longer label shown with the source.")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@_RESULTS_OPTION
def import_(source: str, month: str, label: str, file: Path, results_dir: Path) -> None:
    """Load published measurements (a CSV in our schema) as a dated, labelled source.

    A copy goes to results/imports/NAME/YYYY-MM.csv, so 'history rebuild' loads it
    again; importing the same source and month again replaces it. Convert the
    vendored public data first with 'history convert'.

    \b
    Examples:
      interregion history convert --from skyplane data/skyplane-latency-2022.csv --out /tmp/s.csv
      interregion history import --source skyplane --date 2022-11 /tmp/s.csv
    """
    from orchestrator import history as h

    rows = h.import_file(results_dir, file, source, month, label)
    click.echo(f"{source} {month}: {rows} rows in {h.store_path(results_dir)}")


@history.command()
@click.option(
    "--from", "fmt", type=click.Choice(["skyplane", "doit"]), required=True, help="Its format."
)
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--out", type=click.Path(path_type=Path, dir_okay=False), required=True, help="CSV to write."
)
def convert(fmt: str, file: Path, out: Path) -> None:
    """Rewrite a vendored public data file (data/) in our CSV schema, for 'history import'.

    \b
    Examples:
      interregion history convert --from skyplane data/skyplane-latency-2022.csv --out s.csv
      interregion history convert --from doit data/doit-intercloud-throughput-2022-02.csv \\
        --out d.csv
    """
    from orchestrator import store
    from orchestrator.catalog import load_catalog
    from orchestrator.public_data import convert as convert_rows

    rows = convert_rows(fmt, file.read_text(encoding="utf-8"), load_catalog())
    store.write_atomic(out, store.csv_text(rows))
    click.echo(f"{len(rows)} rows -> {out}")


COMMANDS: list[click.Command] = [history]
