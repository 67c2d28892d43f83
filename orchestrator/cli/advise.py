"""CLI command: advise (how long a transfer between two regions takes)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from orchestrator.cli.jsonout import json_flag
from orchestrator.cli.options import catalog_read_option, results_option


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
@click.option(
    "--streams", default=None, metavar="P",
    help="Parallel TCP streams for the streams option  [default: 4].",
)  # fmt: skip
@click.option(
    "--measured-only", is_flag=True,
    help="Refuse to answer from the network model when the pair has no real measurements.",
)  # fmt: skip
@click.option(
    "--tier", default="premium", show_default=True, metavar="TIER",
    help="GCP network tier of the GCP end(s): premium or standard (or source/destination, "
    "premium/standard). Tests of another tier are never pooled.",
)  # fmt: skip
@json_flag("Print the advice as JSON (docs/advise.md).")
@results_option("Folder holding the history store and one folder per sweep.", "results_dir")
@catalog_read_option("Region catalog.")
def advise(
    src: str, dst: str, size: str, files: str | None, streams: str | None,
    measured_only: bool, tier: str, as_json: bool, results_dir: Path, catalog: Path,
) -> None:  # fmt: skip
    """How long moving SIZE from one region to another takes with default TCP, tuned
    buffers and parallel streams, and what a new connection per file costs.

    Figures come from the pair's newest real test: the history store, else the
    newest sweep folder, else the network model (always so for emulated tests,
    which are never scaled back). The output says which.

    \b
    Examples:
      interregion advise --from aws:us-east-1 --to gcp:asia-northeast1 --size 100GB
      interregion advise --from aws:eu-west-1 --to aws:us-west-2 --size 1.5TiB \\
        --files 20000 --streams 8 --json
    """
    from orchestrator.advise import AdviseRequest, advise_transfer
    from orchestrator.text import TERMINAL_WIDTH, print_parts, render_advice_table

    doc = advise_transfer(
        AdviseRequest(src, dst, size, files, streams, measured_only, tier, results_dir, catalog)
    ).doc
    if as_json:
        click.echo(json.dumps(doc, indent=1))
    else:
        print_parts(render_advice_table(doc), TERMINAL_WIDTH)


COMMANDS: list[click.Command] = [advise]
