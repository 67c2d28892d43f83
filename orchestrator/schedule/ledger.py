"""The schedule ledger: one JSON line per tick in `results/schedule-ledger.jsonl`.

Every start of `schedule run` (and `sweep --profile`) appends exactly one record,
whatever the outcome: ok, partial, failed, skipped-locked or skipped-budget, with
the reason. Lines are appended with one write each (O_APPEND), so two writers never
interleave within a line; a torn last line (a crash mid-write) is skipped on reading.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, parse_utc
from orchestrator.schedule.cadence import Cadence

LEDGER_FILE = "schedule-ledger.jsonl"
OUTCOMES = ("ok", "partial", "failed", "skipped-locked", "skipped-budget")


def ledger_path(results: Path) -> Path:
    return Path(results) / LEDGER_FILE


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise UserError(f"{path}: is a folder, expected the schedule ledger (a file)")


def append(results: Path, record: Mapping[str, Any]) -> None:
    """Append the record as one whole line. A last line left without its newline (a
    crash mid-write, an editor) is ended first, so it cannot swallow this record."""
    if record.get("outcome") not in OUTCOMES:
        raise ValueError(f"ledger outcome {record.get('outcome')!r} not in {OUTCOMES}")
    path = ledger_path(results)
    _check_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(dict(record), sort_keys=False) + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_checked(results: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """(the records, the numbers of the lines that are not one): a line torn by a crash
    or edited by hand is left out, and said, while the others still count."""
    path = ledger_path(results)
    _check_file(path)
    if not path.exists():
        return [], []
    out, bad = [], []
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except ValueError:  # also UnicodeDecodeError
            bad.append(number)
            continue
        if _well_formed(record):
            out.append(record)
        else:
            bad.append(number)
    return out, bad


def _well_formed(record: Any) -> bool:
    """A record this module wrote: a profile, a known outcome, UTC times, a number of
    dollars; anything else (edited by hand, another tool's line) is not counted."""
    if not isinstance(record, dict) or not isinstance(record.get("profile"), str):
        return False
    if record.get("outcome") not in OUTCOMES:
        return False
    for key in ("started_utc", "scheduled_utc"):
        value = record.get(key)
        if value is None and key == "scheduled_utc":
            continue
        if parse_utc(value) is None:
            return False
    cost = record.get("cost_usd", 0.0)
    return isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost)


def read(results: Path) -> list[dict[str, Any]]:
    return read_checked(results)[0]


def of_profile(records: Iterable[Mapping[str, Any]], profile: str) -> list[Mapping[str, Any]]:
    return [r for r in records if r.get("profile") == profile]


def month_spend_usd(records: Iterable[Mapping[str, Any]], profile: str, now: datetime) -> float:
    """Actual spend (from bytes moved, see orchestrator.plan.spend) of the profile's runs that
    started in `now`'s UTC month."""
    month = (now.year, now.month)
    return sum(
        float(r.get("cost_usd") or 0.0)
        for r in of_profile(records, profile)
        if (started := parse_utc(r.get("started_utc"))) and (started.year, started.month) == month
    )


def missed_ticks(
    records: Sequence[Mapping[str, Any]], profile: str, cadence: Cadence, slip_s: int, now: datetime
) -> list[datetime]:
    """Due times since the profile's first ledger record that have no record at all:
    the timer never fired (machine off, timer not installed, runner queue dropped it).
    A tick still inside its slip window (or the hour after) is not missed yet."""
    mine = of_profile(records, profile)
    if not mine:
        return []
    seen = {parse_utc(r.get("scheduled_utc")) for r in mine}
    dated = [parse_utc(r.get("scheduled_utc") or r.get("started_utc")) for r in mine]
    start = min((t for t in dated if t is not None), default=None)
    if start is None:  # kept out by valid_record: never here
        return []
    until = now - timedelta(seconds=slip_s + 3600)
    return [t for t in cadence.ticks(start, until) if t not in seen]
