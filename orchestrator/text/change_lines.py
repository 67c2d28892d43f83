"""`interregion changes`'s text: a line per event (REGION/HOST, PATH and its directions,
SUSPECTED, CONFIGURATION), the open count, the pairs not judged yet.

`render(report, calibration)` takes history.change_report.ChangesReport; `calibration`
adds the CALIBRATION line (`--calibrate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from orchestrator.history import format_value
from orchestrator.model import is_emulated
from orchestrator.netmodel import rate_scale_tag

if TYPE_CHECKING:
    from orchestrator.history import ChangesReport


def render(report: ChangesReport, calibration: bool = False) -> list[str]:
    d, c = report.docs, report.calibration
    lines = []
    if calibration and c is not None:
        lines.append(
            f"CALIBRATION {c.beyond} of {c.judged} recent runs beyond 4.5 scales "
            f"({100 * c.rate:.3f} %, normal noise {100 * c.expected:.4f} %): tails x "
            f"{c.inflation:.2f}, k1 {c.k1:g}, k2 {c.k2:g}"
        )
    for x in [*d.hosts, *d.regions]:
        toward = f" toward {x['toward'].split(':', 1)[1]}" if x.get("toward") else ""
        lines.append(
            f"{'REGION' if toward else 'HOST'} {x['status'].upper():<12} {x['metric']:<10} "
            f"{x['host']}{toward}: {x['pairs_changed']} of {x['pairs_evaluated']} pairs "
            f"changed from run {x['started_run']} ({x['started_utc']}) {_tag(x)}"
        )
    for e in d.episodes:
        lines += _path(e)
    for s in d.suspected:
        moves = ", ".join(
            f"{x['src']} -> {x['dst']} {x['change']:+g} (flag {x['flag_threshold']:g})"
            for x in s["directions"]
        )
        lines.append(f"SUSPECTED {s['metric']:<10} run {s['run']} ({s['utc']}): {moves} {_tag(s)}")
    for g in d.configs:
        lines.append(
            f"CONFIGURATION run {g['run']} ({g['utc']}), {len(g['pairs'])} pairs "
            f"{_tag(g)}: {'; '.join(g['fields']) or 'fingerprint changed'}"
        )
    if not (d.hosts or d.regions or d.episodes or d.configs or d.suspected):
        lines.append("no changes")
    lines.append(f"{d.open} open")
    lines += [u["text"] for u in d.waiting]
    if not d.judged_pairs:
        lines.append("no pair judged yet: nothing can have changed")
    return lines


def _path(e: dict[str, Any]) -> list[str]:
    closed = f", closed {e['closed_utc']}" if e["closed_utc"] else ""
    one = " (one direction)" if e["one_direction"] else ""
    lines = [
        f"PATH {e['status'].upper():<12} {e['metric']:<10} {e['src']} <-> {e['dst']}{one} "
        f"from {e['started_utc']}{closed} {_tag(e)} [k1 {e['k1']:g}, k2 {e['k2']:g}]"
    ]
    for x in e["directions"]:
        lines.append(
            f"  {x['src']} -> {x['dst']}: {_level(e, x['old_level'])} -> "
            f"{_level(e, x['new_level'])} ({_delta(e, x)})"
            f"{'' if x['moved'] else ' (did not move)'}; "
            f"flag {x['flag_threshold']:g}, confirm {x['confirm_threshold']:g}"
        )
    return lines


def _tag(doc: dict[str, Any]) -> str:
    return f"[{doc['source']}/{doc['backend']}]"


def _level(doc: dict[str, Any], value: float) -> str:
    if doc["unit"] != "bit/s":
        return format_value(value, doc["unit"]) + " ms"
    scale = f" ({rate_scale_tag()})" if is_emulated(str(doc.get("backend"))) else ""
    return format_value(value, doc["unit"]) + " Mbit/s" + scale


def _delta(doc: dict[str, Any], x: dict[str, Any]) -> str:
    """`+10.0 ms, +6.7 %`: the change, and in % of the old level."""
    change = format_value(x["change"], doc["unit"])
    sign = "+" if x["change"] >= 0 and not change.startswith("-") else ""
    unit = " Mbit/s" if doc["unit"] == "bit/s" else " ms"
    pct = f", {x['change_pct']:+.1f} %" if x.get("change_pct") is not None else ""
    return f"{sign}{change}{unit}{pct}"
