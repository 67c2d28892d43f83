"""`interregion history show`'s text: each pair's series and its window's statistics.

`render(series)` takes history.views.PairSeries (pair_history's documents) and returns the
lines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from orchestrator.core import counted
from orchestrator.history import PERCENTILE_RULE, STATS, format_value, loss_text, source_caption
from orchestrator.netmodel import rate_scale_tag

if TYPE_CHECKING:
    from orchestrator.history import PairSeries


def render(series: PairSeries) -> list[str]:
    lines, window = [], series.window
    for doc in series.docs:
        unit = "Mbit/s" if doc["unit"] == "bit/s" else doc["unit"]
        lines.append(f"{doc['src']} -> {doc['dst']}: {doc['metric']} ({unit}), window {window}")
        if not doc["sources"]:
            lines.append("  no tests of this pair in the store")
        for s in doc["sources"]:
            lines += _source(doc, s, unit)
    return lines


def _source(doc: dict[str, Any], s: dict[str, Any], unit: str) -> list[str]:
    scale = f" ({unit}, {rate_scale_tag()})" if s.get("rate_scale") else ""
    lines = [f"  {source_caption(s)}{scale}; {counted(s['tests'], 'test')}, "
             f"{counted(s['samples'], 'sample')}"]  # fmt: skip
    stats = ", ".join(f"{k} {format_value(s[k], doc['unit'])}" for k in STATS if s[k] is not None)
    missing = [k for k in STATS if s[k] is None]
    if missing:
        stats += (
            f"; {', '.join(missing)} — (from {counted(s['samples'], 'sample')}: {PERCENTILE_RULE})"
        )
    lines.append(f"  window {s['window_start_utc'] or 'start'} .. {s['window_end_utc']}: {stats}")
    if doc["metric"] == "loss":
        lines.append(f"  window's pings lost / sent: {loss_text(s)}")
    if s.get("smallest_detectable_change") is not None:
        size = s["smallest_detectable_change"]
        shown = f"{size:g} ms" if doc["metric"] == "rtt" else f"{100 * size:.0f} %"
        lines.append(f"  smallest change detected within 3 runs (95 %): {shown}")
    for run in s["runs"]:
        counted_ = _run_pings(run) if doc["metric"] == "loss" else counted(run["samples"], "sample")
        lines.append(
            f"    {run['started_utc']}  {run['sweep_id']:<20} "
            f"{format_value(run['value'], doc['unit']):>10}  ({counted_})"
        )
    return lines


def _run_pings(run: dict[str, Any]) -> str:
    """A test's loss interval: "95 %: 0.00-16.11 % of 20 pings"."""
    if run.get("loss_pct") is None:
        return "pings not counted"
    return (
        f"95 %: {run['loss_low_pct']:.2f}-{run['loss_high_pct']:.2f} % of "
        f"{run['pings_sent']:,} pings"
    )
