"""`interregion advise`'s text: the pair, where its figures come from, the costs, a row per
option (default TCP, tuned buffers, parallel streams) and what a new connection per file costs.

`render(doc)` takes advise.transfer.TransferAdvice's document (`advise --json`'s) and returns
the parts to print (lines, then the table, then the notes and the sysctl lines).
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from orchestrator.advise import format_bytes, format_duration, format_rate
from orchestrator.results import describe_tier as describe
from orchestrator.text.terminal import Part

OPTION_LABELS = {"default": "default TCP", "tuned": "tuned buffers", "streams": "{n} streams"}


def render(doc: dict[str, Any]) -> list[Part]:
    parts: list[Part] = []
    say = parts.append
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
    parts.append(table)
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
    return parts
