"""CLI commands: report, site, publish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from orchestrator import publish, report, site, text
from orchestrator.cli import options as opt
from orchestrator.core import warning


@opt.examples(
    "interregion report --sweep 20261122T0130Z-3fa2",
    "interregion report --all --cloud-pair aws:gcp --min-km 1000",
    "interregion report --input theirs.csv --out /tmp/theirs-report --include-flagged",
)
@click.command("report")
@click.option("--sweep", "sweep", multiple=True, metavar="ID", help="Sweep id, repeatable.")
@click.option("--all", "all_", is_flag=True, help="Every sweep under --results.")
@click.option(
    "--input", "input_files", multiple=True, type=opt.UserPath(dir_okay=False, exists=True),
    help="An external measurements CSV (src_cloud, src_region, dst_cloud, dst_region and "
    "rtt_p50_ms, or rtt_avg_ms when only the mean is known, and/or throughput_bps), "
    "repeatable.",
)  # fmt: skip
@opt.include_flagged_option
@click.option(
    "--include-injected", is_flag=True,
    help="Keep the tests the emulator perturbed on purpose (loss episodes, --perturb; "
    "sweep.json emulation.injected) in the summary and its fits; by default they are "
    "marked on the charts and left out of both.",
)  # fmt: skip
@opt.results_option
@click.option(
    "--out", type=opt.UserPath(), default=None,  # a file given here is a one-line UserError later
    help="Output folder. Default: results/<id>/report, results/all-sweeps/report for "
    "several sweeps, <input>-report beside an --input file.",
)  # fmt: skip
@click.option("--no-png", is_flag=True, help="Skip the PNG copies of the charts.")
@opt.catalog_option
@opt.filter_options
def report_command(
    sweep: tuple[str, ...], all_: bool, input_files: tuple[Path, ...], results: Path,
    out: Path | None, no_png: bool, catalog: Path, include_flagged: bool,
    include_injected: bool, **selection: Any,
) -> None:  # fmt: skip
    """Summarise sweeps: statistics per cloud pair, outliers, charts.

    Writes summary.csv, outliers.csv, report.json and charts/ (HTML, and PNG when
    Chromium is available), of the measurements the selection options keep.
    """
    request = report.ReportRequest(sweep, all_, input_files, results, out, not no_png, catalog,
                                   opt.filters_from(selection, "a report"), include_flagged,
                                   include_injected)  # fmt: skip
    result = report.make_report(request, _say, warn=warning)
    text.print_parts(text.render_report_tables(result), text.TERMINAL_WIDTH, markup=True)


def _say(line: str) -> None:
    text.console(text.TERMINAL_WIDTH).print(line)


@opt.examples("interregion site --out site/ && xdg-open site/index.html")
@click.command("site")
@click.option(
    "--out", type=opt.UserPath(), required=True,  # a file given here is a one-line UserError later
    help="Folder to write the site into (created if missing).",
)  # fmt: skip
@opt.results_option
@opt.catalog_option
@opt.include_flagged_option
def site_command(out: Path, results: Path, catalog: Path, include_flagged: bool) -> None:
    """Build the static site: latest sweep, a page per sweep, methodology, data.

    With a history store also the From x To matrix, the changes and a page per pair.
    It works offline and from file:// (docs/reports-and-site.md).
    """
    index = site.build_site(out, results, catalog=catalog, log=_say, warn=warning,
                            include_flagged=include_flagged)  # fmt: skip
    _say(f"site: {index}")


@opt.examples(
    "interregion publish --site site/ --to /var/www/interregion",
    "interregion publish --site site/ --to s3://my-bucket/interregion",
    "interregion publish --site site/ --to gs://my-bucket/interregion",
)
@click.command("publish")
@click.option("--site", "site_dir", type=opt.UserPath(file_okay=False, exists=True), required=True,
              help="The folder 'interregion site' wrote.")  # fmt: skip
@click.option("--to", "target", required=True, metavar="TARGET", callback=opt.folder_or_url,
              help="A folder, s3://bucket/prefix or gs://bucket/prefix.")  # fmt: skip
def publish_command(site_dir: Path, target: str) -> None:
    """Publish the site: copy or upload every file, the index pages last."""
    done = publish.publish_site(site_dir, target, log=_say)
    _say(f"published {done.files} files to {target}: {len(done.uploaded)} sent "
         f"({done.bytes} bytes), {done.unchanged} unchanged")  # fmt: skip


COMMANDS: list[click.Command] = [report_command, site_command, publish_command]
