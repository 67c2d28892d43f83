"""Where each profile stands: `interregion schedule list`'s figures, from the profiles file
and the ledger.

    status(schedules, results, now)   -> ScheduleStatus: per profile its next tick, last
                                         outcome, month-to-date spend and missed ticks
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from orchestrator.core import iso, parse_utc
from orchestrator.schedule import ledger
from orchestrator.schedule.profiles import load_profiles


@dataclass(frozen=True)
class ProfileStatus:
    """One profile: when it runs next, how its last tick ended, what it spent this month
    and the due times with no ledger record at all (the timer never fired)."""

    profile: str
    next_utc: datetime | None
    slip_s: int
    last_outcome: str | None
    last_started_utc: datetime | None
    month_spend_usd: float
    budget_usd_month: float
    missed_ticks: tuple[datetime, ...]
    runs: int = 0  # its ledger records

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "next_utc": iso(self.next_utc) if self.next_utc else None,
            "slip_s": self.slip_s,
            "last_outcome": self.last_outcome,
            "last_started_utc": iso(self.last_started_utc) if self.last_started_utc else None,
            "month_spend_usd": round(self.month_spend_usd, 4),
            "budget_usd_month": self.budget_usd_month,
            "missed_ticks": [iso(t) for t in self.missed_ticks],
        }


@dataclass(frozen=True)
class ScheduleStatus:
    """Every profile of the profiles file, in its order; `bad_lines`: the ledger's line
    numbers that are not a record (left out of the figures)."""

    profiles: tuple[ProfileStatus, ...]
    ledger: Path
    bad_lines: tuple[int, ...] = ()

    def to_json(self) -> list[dict[str, Any]]:
        """What `schedule list --json` prints in its envelope: each profile's status."""
        return [p.to_json() for p in self.profiles]

    def bad_lines_warning(self) -> str | None:
        """The one line that says which ledger lines were left out (None: none)."""
        if not self.bad_lines:
            return None
        bad = self.bad_lines
        lines = ", ".join(str(n) for n in bad[:5]) + (
            f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        )
        return f"{self.ledger}: line {lines} is not a ledger record (left out of the figures below)"


def status(
    schedules: Path, results: Path, now: datetime, warn: Callable[[str], None]
) -> ScheduleStatus:
    """Each profile of `schedules` as of `now` (UTC), from the ledger under `results`; the
    ledger's lines that are not a record are left out, and `warn`ed of in one line."""
    records, bad = ledger.read_checked(results)
    found = []
    for name, profile in load_profiles(schedules).items():
        mine = ledger.of_profile(records, name)
        last = mine[-1] if mine else None
        nxt = profile.cadence.next_tick(now)
        found.append(
            ProfileStatus(
                profile=name,
                next_utc=nxt,
                slip_s=profile.slip_s,
                last_outcome=last.get("outcome") if last else None,
                last_started_utc=parse_utc(last.get("started_utc")) if last else None,
                month_spend_usd=ledger.month_spend_usd(records, name, now),
                budget_usd_month=profile.budget_usd_month,
                missed_ticks=tuple(
                    ledger.missed_ticks(records, name, profile.cadence, profile.slip_s, now)
                ),
                runs=len(mine),
            )
        )
    done = ScheduleStatus(tuple(found), ledger.ledger_path(results), tuple(bad))
    if said := done.bad_lines_warning():
        warn(said)
    return done
