"""CLI command: advise (how long a transfer between two regions takes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from orchestrator.cli.pathopt import UserPath
from orchestrator.core import paths

OPTION_LABELS = {"default": "default TCP", "tuned": "tuned buffers", "streams": "{n} streams"}


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
@click.option("--json", "as_json", is_flag=True, help="Print the advice as JSON (docs/advise.md).")
@click.option(
    "--results", "results_dir", type=UserPath(file_okay=False),
    default=paths.RESULTS, show_default=True,
    help="Folder holding the history store and one folder per sweep.",
)  # fmt: skip
@click.option(
    "--catalog", type=UserPath(dir_okay=False, exists=True),
    default=paths.CATALOG, show_default=True, help="Region catalog.",
)  # fmt: skip
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
    from orchestrator.advise.transfer import AdviseRequest, advise_transfer

    doc = advise_transfer(
        AdviseRequest(src, dst, size, files, streams, measured_only, tier, results_dir, catalog)
    ).doc
    if as_json:
        click.echo(json.dumps(doc, indent=1))
    else:
        print_advice(doc)


def print_advice(doc: dict[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from orchestrator.advise.model import format_bytes, format_duration, format_rate
    from orchestrator.results.tiers import describe

    console = Console() if sys.stdout.isatty() else Console(width=160)

    def say(text: str) -> None:
        console.print(text, soft_wrap=True, highlight=False, markup=False)

    path, src = doc["path"], doc["source"]
    tier = doc.get("network_tier") or ""
    tier_text = f", GCP {describe(tier)}" if "gcp" in (doc["src"] + doc["dst"]) else ""
    say(f"{doc['src']} -> {doc['dst']}: {format_bytes(doc['size_bytes'])} "
        f"({doc['size_bytes']:,} bytes){tier_text}")  # fmt: skip
    say(f"source: {src['detail']}")
    loaded = f", {path['loaded_rtt_ms']:.1f} ms under load" if path["loaded_rtt_ms"] else ""
    measured = (
        f"; measured {format_rate(path['measured_bps'])} over {path['measured_streams']} stream(s)"
        if path["measured_bps"]
        else ""
    )
    say(
        f"path: idle RTT {path['rtt_ms']:.1f} ms{loaded}; line rate "
        f"{format_rate(path['line_rate_bps'])}; BDP {format_bytes(path['bdp_bytes'])}{measured}"
    )
    say(f"RTT from: {path['rtt_source']}")
    say(f"throughput from: {path['throughput_source']}")
    cost = doc.get("cost")
    if cost:
        say(
            f"egress cost: ${cost['egress_usd']:,.2f} ({cost['kind']}, "
            f"${cost['usd_per_gb']:g}/GB; {cost['source']})"
        )
    vm = (cost or {}).get("vm")
    if vm:
        types = ", ".join(f"{t} at {k}" for k, t in vm["machine_types"].items())
        say(
            f"VM cost: ${vm['usd_per_hour']:.4f}/h for the two VMs ({types}; {vm['source']}), "
            "for each option's time in the table"
        )
    files = doc["files"]
    table = Table(box=box.SIMPLE)
    ranged = doc.get("range")
    names = ["option", "streams", "window/stream", "throughput", "limited by", "time"]
    if ranged:
        names.append("range (low-high)")
    for name in names:
        table.add_column(name, justify="left" if name in ("option", "limited by") else "right")
    if files:
        table.add_column("new connection per file", justify="right")
    if vm:
        table.add_column("VM cost", justify="right")
    for o in doc["options"]:
        cells = [
            OPTION_LABELS[o["name"]].format(n=o["streams"]),
            str(o["streams"]),
            format_bytes(o["window_bytes"]),
            format_rate(o["throughput_bps"]),
            o["limit"]
            + (f", then baseline {format_rate(o['sustained_bps'])}" if o["sustained_bps"] else ""),
            format_duration(o["time_s"]),
        ]
        if ranged:
            span = ranged["options"][o["name"]]
            cells.append(f"{format_duration(span['low_s'])} - {format_duration(span['high_s'])}")
        if files:
            cells.append(format_duration(o["files_time_s"]))
        if vm:
            cells.append(f"${o['vm_usd']:,.2f}")
        table.add_row(*cells)
    console.print(table)
    if files:
        say(
            f"{files['count']:,} files of {format_bytes(files['file_bytes'])}: each new "
            f"connection costs TCP handshake {format_duration(files['tcp_handshake_s'])} + "
            f"TLS 1.3 {format_duration(files['tls_handshake_s'])} + slow start "
            f"{format_duration(files['slow_start_s'])} = "
            f"{format_duration(files['per_file_overhead_s'])} (default TCP); one reused "
            f"connection {format_duration(files['reused_connection_s'])}, a new one per file "
            f"{format_duration(files['new_connection_per_file_s'])}"
        )
    for note in doc["notes"]:
        say(f"note: {note}")
    say(f"buffers: {doc['buffers']}")
    say("tuned buffers, on both hosts:")
    for line in doc["sysctl"]:
        say(f"  {line}")
    say("assumptions:")
    for line in doc["assumptions"]:
        say(f"  - {line}")


COMMANDS: list[click.Command] = [advise]
