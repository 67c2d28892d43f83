"""The measure playbook's event stream, turned into raw files and rows round by round.

The generated playbook (orchestrator.sweep.measure) has one play per round, named
"Round N". `RoundTracker.on_event` is fed the callback's events in order:

    play "Round N"          -> the previous round is closed, round N begins
    ok/failed/unreachable   -> that host's raw output of the current round is written
    stats                   -> the last round is closed

Closing a round fills in the hosts that said nothing (they left the play earlier)
and hands the round's rows to `on_round`. The tracker itself writes only raw files;
it is a state machine a test can drive with a synthetic event stream.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from orchestrator.core import utc_now
from orchestrator.results import (
    RoundEntry,
    RowContext,
    SlotPlan,
    host_rows,
    phase_rows,
    raw_path,
    round_rows,
    safe_name,
    write_atomic,
)
from orchestrator.sweep.sentinels import merge_sentinel_rows, split_rows

Event = dict[str, Any]
ROUND_PLAY = re.compile(r"^Round (\d+)$")
ROUND_TASK = "Round:"


@dataclass(frozen=True)
class PlannedRound:
    """A round of exclusive slots, or the ping phase (`phase_tests`: every directed test
    probed at once, orchestrator.sweep.pingphase)."""

    number: int
    slots: list[SlotPlan]
    expected_s: float  # the plan's time for the round's slowest slot (or the phase)
    phase_tests: list[tuple[str, str]] | None = None

    @property
    def hosts(self) -> list[str]:
        """Region keys of the hosts whose documents the round expects."""
        if self.phase_tests is not None:
            return list(dict.fromkeys(src for src, _ in self.phase_tests))
        return [name for slot in self.slots for name in (slot.client, slot.server)]

    def rows(
        self,
        texts: Mapping[str, str | None],
        ctx: RowContext,
        done: Mapping[str, list[dict[str, Any]]] | None = None,
    ) -> list[dict[str, Any]]:
        """The round's rows; `done`: the ping phase's rows of hosts already read."""
        if self.phase_tests is not None:
            return phase_rows(self.number, self.phase_tests, texts, ctx, done)
        return round_rows(self.number, self.slots, texts, ctx)

    def host_rows(self, name: str, text: str, ctx: RowContext) -> list[dict[str, Any]] | None:
        """The ping phase's rows of one source host, from its document; None in a round of
        slots (a slot's row needs both ends)."""
        if self.phase_tests is None:
            return None
        dsts = [dst for src, dst in self.phase_tests if src == name]
        return host_rows(self.number, name, dsts, text, ctx)


@dataclass(frozen=True)
class ClosedRound:
    """What the record keeps of a finished round, and its rows."""

    number: int
    slots: list[SlotPlan]
    started_utc: datetime
    ended_utc: datetime
    wall_s: float
    expected_s: float
    rows: list[dict[str, Any]]
    phase_tests: list[tuple[str, str]] | None = None

    @property
    def ok(self) -> int:
        return sum(r["status"] == "ok" for r in self.rows)

    def entry(self, kind: str) -> RoundEntry:
        """The round as sweep.json's `rounds` list keeps it (its keys in this order)."""
        phase = {} if self.phase_tests is None else {"phase": "ping", "tests": self.phase_tests}
        fields: dict[str, Any] = {
            "round": self.number,
            "kind": kind,
            **phase,
            "slots": [s.to_dict() for s in self.slots],
            "started_utc": self.started_utc,
            "ended_utc": self.ended_utc,
            "wall_s": round(self.wall_s, 3),
            "slot_s": self.expected_s,
            "overhead_s": round(self.wall_s - self.expected_s, 3),
            "tests_ok": self.ok,
            "tests_failed": len(self.rows) - self.ok,
        }
        return RoundEntry(**fields, _keys=tuple(fields))


@dataclass
class RoundTracker:
    sweep_dir: Path
    hosts: Sequence[str]  # region keys of the sweep's hosts
    rounds: Mapping[int, PlannedRound]
    ctx: RowContext
    on_round: Callable[[ClosedRound], None]
    clock: Callable[[], float] = time.monotonic
    current: PlannedRound | None = None
    started: float = 0.0
    started_utc: datetime | None = None
    closed: list[int] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)
    first_round_at: float | None = None  # clock() when the first round began
    # the ping phase's rows per source host, made as each document arrives: the phase's
    # end then only merges them (77 hosts' 5,852 rows take a second or more to make)
    host_rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._by_alias = {safe_name(n): n for n in self.hosts}

    def on_event(self, event: Event) -> None:
        kind = event.get("event")
        if kind == "play":
            self.close()
            match = ROUND_PLAY.match(str(event.get("name", "")))
            if match and int(match.group(1)) in self.rounds:
                self.current = self.rounds[int(match.group(1))]
                self.started, self.started_utc = self.clock(), utc_now()
                if self.first_round_at is None:
                    self.first_round_at = self.started
        elif kind == "stats":
            self.close()
        elif (
            kind in ("ok", "failed", "unreachable")
            and self.current is not None
            and str(event.get("task", "")).startswith(ROUND_TASK)
        ):
            self._host_result(kind, event)

    def _host_result(self, kind: str, event: Event) -> None:
        assert self.current is not None
        alias = str(event.get("host", ""))
        name = self._by_alias.get(alias, alias)
        if kind == "ok" and event.get("stdout"):
            text = str(event["stdout"])  # the agent's document, as received
        else:
            if kind == "unreachable":
                self.unreachable[name] = str(event.get("msg", ""))
            text = json.dumps(
                {
                    "ansible_event": kind,
                    "msg": event.get("msg") or event.get("stderr") or "no output",
                    "rc": event.get("rc"),
                    "stderr": event.get("stderr", ""),
                }
            )
        write_atomic(raw_path(self.sweep_dir, self.current.number, name), text)
        if name in self.current.hosts:
            rows = self.current.host_rows(name, text, self.ctx)
            if rows is not None:
                self.host_rows[name] = rows

    def close(self) -> None:
        """The current round is over: fill in the silent hosts, hand on its rows."""
        planned, self.current = self.current, None
        if planned is None:
            return
        wall_s = self.clock() - self.started
        texts: dict[str, str | None] = {}
        done, self.host_rows = self.host_rows, {}
        for name in planned.hosts:
            path = raw_path(self.sweep_dir, planned.number, name)
            if name in done:
                # the phase's rows need every document: a stall shows across hosts
                texts[name] = path.read_text()
                continue
            if not path.exists():
                why = self.unreachable.get(name) or "no result"
                write_atomic(
                    path,
                    json.dumps(
                        {"ansible_event": "unreachable", "msg": f"left the play earlier: {why}"}
                    ),
                )
            texts[name] = path.read_text()
        # a sentinel's late repeat is kept apart: measurements.csv has one row per test
        rows, late = split_rows(planned.slots, planned.rows(texts, self.ctx, done))
        merge_sentinel_rows(self.sweep_dir, late)
        self.closed.append(planned.number)
        self.on_round(
            ClosedRound(
                number=planned.number,
                slots=planned.slots,
                started_utc=self.started_utc or utc_now(),
                ended_utc=utc_now(),
                wall_s=wall_s,
                expected_s=planned.expected_s,
                rows=rows,
                phase_tests=planned.phase_tests,
            )
        )
