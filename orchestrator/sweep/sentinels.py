"""Sentinel pairs in the measure stage, and their late results (`sentinels.csv`).

Two slots of a throughput run's first round are measured again at its end
(plan.rounds.add_sentinels; the plan estimates them the same way). The early results are
the tests' own rows in measurements.csv; the late repeats are rows of the same
contract in `sentinels.csv`, so every reader of measurements.csv still sees one row
per directed test. The report compares the two, like with like: the same source,
destination, measure and streams (allowance.sentinel_check).

The measure stage calls `add_sentinel_rounds` on the rounds it planned; the round
tracker and `collect` split a round's rows with `split_rows` and keep the late ones
with `merge_sentinel_rows`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from orchestrator.core import counted
from orchestrator.model import iperf3_port
from orchestrator.plan import SENTINEL_SLOTS, add_sentinels
from orchestrator.results import (
    SlotPlan,
    csv_text,
    measure_of,
    merge_rows,
    pair_key,
    read_rows,
    write_atomic,
)

SENTINELS_FILE = "sentinels.csv"


def add_sentinel_rounds(
    planned: Sequence[Any],
    count: int = SENTINEL_SLOTS,
    max_concurrent: int | None = None,
) -> list[Any]:
    """Throughput rounds (rounds.PlannedRound, not imported: rounds splits its rows with
    this module) with their sentinels: the first round's first `count` slots again
    at the end, marked `sentinel`, on the port of the round they join. Their time is the
    first round's (they are among its slots). A ping phase is left as it is."""
    if not planned or any(p.phase_tests is not None for p in planned):
        return list(planned)
    slots = add_sentinels(
        [p.slots for p in planned],
        count,
        max_concurrent,
        regions=lambda s: (s.client, s.server),
        mark=lambda s: replace(s, sentinel=True),
    )
    out = []
    for i, round_slots in enumerate(slots):
        if i < len(planned):
            base = planned[i]
            port = base.slots[0].port if base.slots else iperf3_port(base.number)
            fixed = [replace(s, port=port) if s.sentinel else s for s in round_slots]
            grew = len(fixed) > len(base.slots)
            expected = max(base.expected_s, planned[0].expected_s) if grew else base.expected_s
            out.append(replace(base, slots=fixed, expected_s=expected))
        else:
            number = planned[-1].number + 1
            fixed = [replace(s, port=iperf3_port(number)) for s in round_slots]
            out.append(
                replace(planned[-1], number=number, slots=fixed, expected_s=planned[0].expected_s)
            )
    return out


def describe(planned: Sequence[Any], before: int) -> str:
    """The line the measure stage logs for the sentinels `add_sentinel_rounds` added to
    `before` rounds: which slots run again, where, and why ("" when none were added)."""
    late = [(p.number, s) for p in planned for s in p.slots if s.sentinel]
    if not late:
        return ""
    first = planned[0].number
    names = ", ".join(f"{s.client} <> {s.server}" for _n, s in late)
    where = (
        f"in one more round (#{late[0][0]}) after the {before} planned"
        if len(planned) > before
        else f"in the last round (#{late[0][0]})"
    )
    return (
        f"sentinels: {counted(len(late), 'slot')} of round #{first} ({names}) run again {where}; "
        "their late results, set against the early ones, show a host whose bandwidth fell "
        "during the sweep (sentinels.csv)"
    )


def split_rows(
    slots: Sequence[SlotPlan], rows: Iterable[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A round's rows -> (the tests' own rows, the sentinels' late rows). A row belongs to
    a sentinel slot when its two regions and its measure are that slot's (a round has
    each host once; the report then sets each late row against the early row of the same
    test: allowance.sentinel_check)."""
    late_tests = {(frozenset((s.client, s.server)), s.measure) for s in slots if s.sentinel}
    own: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    for row in rows:
        src, dst = pair_key(row)
        key = (frozenset((src, dst)), measure_of(row))
        (late if key in late_tests else own).append(dict(row))
    return own, late


def sentinels_path(sweep_dir: Path) -> Path:
    return Path(sweep_dir) / SENTINELS_FILE


def read_sentinel_rows(sweep_dir: Path) -> list[dict[str, str]]:
    """The late sentinel rows of a sweep ([] when it has none)."""
    return read_rows(sentinels_path(sweep_dir))


def merge_sentinel_rows(sweep_dir: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Add late sentinel rows to sentinels.csv (a newer attempt of a test replaces the
    older, as in measurements.csv); written whole, atomically."""
    if not rows:
        return
    merged = merge_rows(read_sentinel_rows(sweep_dir), rows)
    write_atomic(sentinels_path(sweep_dir), csv_text(merged))
