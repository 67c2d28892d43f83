"""`interregion schedule list|run|install`: their results as lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from orchestrator.core import iso

if TYPE_CHECKING:
    from orchestrator.schedule import ScheduleStatus, Written


def status_lines(found: ScheduleStatus) -> list[str]:
    """`schedule list`: each profile's next tick, last outcome and spend, its missed ticks."""
    lines = []
    for p in found.profiles:
        at = iso(p.last_started_utc) if p.last_started_utc else "?"
        last = f"last {p.last_outcome} at {at}" if p.runs else "no run yet"
        spend = f"month-to-date ${p.month_spend_usd:.2f} of {p.budget_usd_month:g}"
        nxt = iso(p.next_utc) if p.next_utc else "-"
        lines.append(f"{p.profile}: next {nxt} (+ up to {p.slip_s} s slip); "
                     f"{last}; {spend}")  # fmt: skip
        if p.missed_ticks:
            missed = p.missed_ticks
            more = f" (last 5 of {len(missed)})" if len(missed) > 5 else ""
            lines.append(f"  missed {len(missed)} ticks that never ran{more}: "
                         f"{', '.join(iso(t) for t in missed[-5:])}")  # fmt: skip
    return lines


def tick_line(profile: str, record: Mapping[str, Any] | None) -> str:
    """One tick's ledger record (None: not this tick's drawn hour) as a log line."""
    if record is None:
        return f"{profile}: not this tick's drawn hour; nothing to do"
    reason = f": {record['reason']}" if record.get("reason") else ""
    sweep = f" sweep {record['sweep_id']}" if record.get("sweep_id") else ""
    return f"{profile}{sweep}: {record['outcome']}{reason}"


def written_lines(files: Sequence[Written]) -> list[str]:
    """`schedule install --dry-run`: each file, under its path."""
    return [f"# {f.path}\n{f.text}" for f in files]


def reaped_line(reaped: Sequence[str]) -> str:
    """`schedule reap`: how many abandoned sweeps were torn down, and which."""
    listed = f": {', '.join(reaped)}" if reaped else ""
    return f"tore down {len(reaped)} abandoned sweeps{listed}"
