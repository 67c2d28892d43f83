"""`interregion demo`'s text: each direction of the injected change found, the site, the
sweeps and the time they took.

`render(outcome)` takes demo.DemoOutcome and returns the lines; `passed_line(outcome)` is
the last line of a demo whose check passed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.core import counted

if TYPE_CHECKING:
    from orchestrator.demo import DemoOutcome


def render(outcome: DemoOutcome) -> list[str]:
    lines = [
        f"found: {e['metric']} {way['src']} -> {way['dst']} {way['old_level']:.1f} -> "
        f"{way['new_level']:.1f} ms from {e['started_run']} ({e['status']})"
        for e in outcome.changes.get("episodes", [])  # a path event: a line per direction moved
        for way in e.get("directions", [])
        if way["moved"]
    ]
    if outcome.site is not None:
        lines.append(f"site: {outcome.site}")
    lines.append(f"demo: {counted(len(outcome.sweep_ids), 'sweep')} in {outcome.wall_s:.0f} s")
    return lines


def passed_line(outcome: DemoOutcome) -> str:
    return (
        f"demo check passed: the injected change {outcome.plan.perturbation.text} and nothing else"
    )
