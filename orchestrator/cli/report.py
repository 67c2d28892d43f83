"""CLI commands: report, site, publish."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from orchestrator.cli.options import choosers_given, filter_options, selection_from
from orchestrator.cli.pathopt import UserPath, folder_or_url
from orchestrator.core import log, paths
from orchestrator.core.errors import UserError

_RESULTS_OPTION = click.option(
    "--results",
    "results_dir",
    type=UserPath(file_okay=False),
    default=paths.RESULTS,
    show_default=True,
    help="Folder holding one folder per sweep.",
)


@click.command()
@click.option("--sweep", "sweep", multiple=True, metavar="ID", help="Sweep id, repeatable.")
@click.option("--all", "all_", is_flag=True, help="Every sweep under --results.")
@click.option(
    "--input",
    "input_files",
    multiple=True,
    type=UserPath(dir_okay=False, exists=True),
    help="An external measurements CSV (src_cloud, src_region, dst_cloud, dst_region and "
    "rtt_p50_ms, or rtt_avg_ms when only the mean is known, and/or throughput_bps), "
    "repeatable.",
)
@click.option(
    "--include-flagged",
    is_flag=True,
    help="Keep the rows with flags (below the fibre floor, asymmetric, ...; docs/results.md) in "
    "every statistic and fit; by default a flagged row's RTT or throughput is left out (what "
    "its flag invalidates) and counted.",
)
@click.option(
    "--include-injected",
    is_flag=True,
    help="Keep the tests the emulator perturbed on purpose (loss episodes, --perturb; "
    "sweep.json emulation.injected) in the summary and its fits; by default they are "
    "marked on the charts and left out of both.",
)
@_RESULTS_OPTION
@click.option(
    "--out",
    type=UserPath(),  # a file given here is a one-line UserError later
    default=None,
    help="Output folder. Default: results/<id>/report, results/all-sweeps/report for "
    "several sweeps, <input>-report beside an --input file.",
)
@click.option("--no-png", is_flag=True, help="Skip the PNG copies of the charts.")
@click.option(
    "--catalog",
    type=UserPath(dir_okay=False, exists=True),
    default=paths.CATALOG,
    show_default=True,
    help="Region catalog (coordinates for distances and maps).",
)
@filter_options
def report(
    sweep: tuple[str, ...],
    all_: bool,
    input_files: tuple[Path, ...],
    results_dir: Path,
    out: Path | None,
    no_png: bool,
    catalog: Path,
    include_flagged: bool,
    include_injected: bool,
    **selection: Any,
) -> None:
    """Summarise sweeps: statistics per cloud pair, outliers, charts.

    Writes summary.csv, outliers.csv, report.json and charts/ (HTML, and PNG
    when Chromium is available). The selection options filter the
    measurements.

    \b
    Examples:
      interregion report --sweep 20261122T0130Z-3fa2
      interregion report --all --cloud-pair aws:gcp --min-km 1000
      interregion report --input theirs.csv --out /tmp/theirs-report --include-flagged
    """
    from orchestrator.report.make import ReportRequest, check_sources, make_report

    request = ReportRequest(
        sweeps=sweep,
        all_sweeps=all_,
        input_files=input_files,
        results=results_dir,
        out=out,
        png=not no_png,
        catalog=catalog,
        include_flagged=include_flagged,
        include_injected=include_injected,
    )
    check_sources(request)
    chooser = choosers_given(selection)
    if chooser:
        raise UserError(f"{chooser} chooses regions for a sweep: it does not filter a report")
    console = _console()
    result = make_report(replace(request, selection=selection_from(selection)), console.print)
    # after the report: when it fails, its one error line says enough on its own
    for line in result.loaded.warnings:
        log.warning(line)
    _print_report(console, result)


def _console() -> Console:
    # Without a terminal rich assumes 80 columns, too narrow for the summary.
    return Console() if sys.stdout.isatty() else Console(width=160)


def _uncertainty_table(summaries: Any, label: str) -> Table:
    """The summary's figures with their 95 % intervals, pairs beside n, the fit's marks."""
    from orchestrator.report import uncertainty
    from orchestrator.report.build import display_cell

    table = Table(title=f"How sure: 95 % intervals over region pairs{label}")
    columns = (
        ("pair", "cloud_pair", "{}"),
        ("n", "n", "{:d}"),
        ("pairs", "pairs", "{:d}"),
        ("inflation median", "route_inflation_median", "{:.2f}"),
        ("its CI", "route_inflation_median_ci", "{}"),
        ("RTT median over tests", "rtt_median_over_tests_ms", "{:.1f}"),
        ("its CI", "rtt_median_ci", "{}"),
        ("Mbit/s median", "throughput_median_over_tests_bps", "{:.1f}"),
        ("its CI", "throughput_median_ci", "{}"),
        ("ms/1000km", "rtt_slope_ms_per_1000km", "{:.2f}"),
        ("its CI", "rtt_slope_ci", "{}"),
        ("RTT ms @0", "rtt_intercept", "{}"),
        ("fit marks", "rtt_fit_marks", "{}"),
    )
    for title, _key, _fmt in columns:
        table.add_column(title, justify="left" if title in ("pair", "fit marks") else "right")
    for s in summaries:
        if not s.n:
            continue
        row = s.row()
        row.update(uncertainty.table_cells(row))
        table.add_row(*(display_cell(key, row[key], fmt) for _title, key, fmt in columns))
    return table


def _print_report(console: Console, result: Any) -> None:
    from orchestrator.report import uncertainty
    from orchestrator.report.build import RTT_DEFINITION, display_cell, notes

    loaded = result.loaded
    label = " [bold red](EMULATED)[/]" if loaded.emulated else ""
    table = Table(title=f"Summary by cloud pair{label}")
    columns = (
        ("pair", "cloud_pair", "{}"),
        ("n", "n", "{:d}"),
        ("inflation median", "route_inflation_median", "{:.2f}"),
        ("p25", "route_inflation_p25", "{:.2f}"),
        ("p75", "route_inflation_p75", "{:.2f}"),
        ("Pearson r", "rtt_distance_r", "{:.3f}"),
        ("Spearman", "rtt_distance_spearman", "{:.3f}"),
        ("RTT ms @0", "rtt_intercept", "{}"),
        ("ms/1000km", "rtt_slope_ms_per_1000km", "{:.2f}"),
        ("r log tput", "log_throughput_distance_r", "{:.3f}"),
        ("RTT median over tests", "rtt_median_over_tests_ms", "{:.1f}"),
        ("RTT p90 over tests", "rtt_p90_over_tests_ms", "{:.1f}"),
        ("Mbit/s median over tests", "throughput_median_over_tests_bps", "{:.1f}"),
    )
    if loaded.emulated:  # an emulated rate says its scale beside it
        from orchestrator.netmodel.model import rate_scale_tag

        columns = (*columns[:-1], (f"Mbit/s median over tests ({rate_scale_tag()})",
                                   *columns[-1][1:]))  # fmt: skip
    for title, _key, _fmt in columns:
        table.add_column(title, justify="left" if title == "pair" else "right")
    for s in result.summaries:
        row = s.row()
        row.update(uncertainty.table_cells(row))
        table.add_row(*(display_cell(key, row[key], fmt) for _title, key, fmt in columns))
    console.print(table)
    console.print(_uncertainty_table(result.summaries, label))
    console.print(
        f"RTT: {RTT_DEFINITION}. Inflation: RTT over the fibre floor 2 x distance / (c x 2/3). "
        "Fit: Theil-Sen, intercept >= 0, slope >= 10.007 ms per 1000 km (the fibre's). "
        "-: not measured/flagged. " + uncertainty.TABLE_NOTE
    )
    for line in notes(loaded):
        console.print(line)
    skipped = ", ".join(f"{n} {why}" for why, n in loaded.skipped.most_common())
    console.print(
        f"{len(loaded.data)} of {loaded.rows_read} measurements used"
        + (f"; skipped: {skipped}" if skipped else "")
    )
    if loaded.unknown_regions:
        names = ", ".join(f"{k} ({n})" for k, n in loaded.unknown_regions.most_common(10))
        more = len(loaded.unknown_regions) - 10
        console.print(
            f"unknown regions (not in the catalog, rows skipped): {names}"
            + (f" and {more} more" if more > 0 else "")
        )
    if result.outliers:
        console.print(f"{len(result.outliers)} outliers (RTT far from the pair's fit):")
        for o in result.outliers[:10]:
            side = "above" if o.excess_ms > 0 else "below"
            console.print(
                f"  {o.src} → {o.dst}: {o.rtt_ms:.1f} ms at {o.distance_km:.0f} km, "
                f"{abs(o.excess_ms):.1f} ms {side} the fit"
            )
    else:
        console.print("no outliers (no pair's RTT is far from its cloud pair's fit)")
    console.print(f"report: {result.out_dir}")
    if result.png_skipped:
        console.print(f"PNG charts: skipped ({result.png_skipped})")


@click.command()
@click.option(
    "--out",
    type=UserPath(),  # a file given here is a one-line UserError later
    required=True,
    help="Folder to write the site into (created if missing).",
)
@_RESULTS_OPTION
@click.option(
    "--catalog",
    type=UserPath(dir_okay=False, exists=True),
    default=paths.CATALOG,
    show_default=True,
    help="Region catalog (coordinates for distances and maps).",
)
@click.option(
    "--include-flagged",
    is_flag=True,
    help="Keep the tests with flags (below the fibre floor, asymmetric, ...; "
    "docs/results.md); by default every page leaves out and counts a flagged test's RTT or "
    "throughput (what its flag invalidates).",
)
def site(out: Path, results_dir: Path, catalog: Path, include_flagged: bool) -> None:
    """Build the static site: latest sweep, a page per sweep, methodology, data.

    With a history store (results/history.duckdb) also the From x To matrix,
    the changes and a page per pair, built from it. The site works offline and
    from file:// (plotly.js is bundled); emulated results are labelled on every
    page and chart.

    \b
    Example:
      interregion site --out site/ && xdg-open site/index.html
    """
    from orchestrator.model.catalog import load_catalog
    from orchestrator.site.build import build_site

    console = _console()
    index = build_site(
        out,
        results_dir,
        catalog=load_catalog(catalog),
        log=console.print,
        warn=lambda line: log.warning(line),
        include_flagged=include_flagged,
    )
    console.print(f"site: {index}")


@click.command()
@click.option(
    "--site",
    "site_dir",
    type=UserPath(file_okay=False, exists=True),
    required=True,
    help="The folder 'interregion site' wrote.",
)
@click.option(
    "--to",
    "target",
    required=True,
    metavar="TARGET",
    callback=folder_or_url,
    help="A folder, s3://bucket/prefix or gs://bucket/prefix.",
)
def publish(site_dir: Path, target: str) -> None:
    """Publish the site: copy or upload every file, the index pages last.

    Readers see the old site until the new index is in place.

    \b
    Examples:
      interregion publish --site site/ --to /var/www/interregion
      interregion publish --site site/ --to s3://my-bucket/interregion
      interregion publish --site site/ --to gs://my-bucket/interregion
    """
    from orchestrator.publish.upload import publish_site

    console = _console()
    result = publish_site(site_dir, target, log=console.print)
    console.print(
        f"published {result.files} files to {target}: {len(result.uploaded)} sent "
        f"({result.bytes} bytes), {result.unchanged} unchanged"
    )


COMMANDS: list[click.Command] = [report, site, publish]
