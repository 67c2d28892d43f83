"""Scheduled sweeps: profiles (`schedules.yaml`), cadences, one tick, the timers that start
ticks (systemd, cron, GitHub Actions), the ledger and retention.

Public API: the modules below; other packages import only these names
(`from orchestrator.schedule import cadence`), never a name starting with `_`.

- `cadence`: When a scheduled sweep is due: ISO 8601 durations, `every` on a UTC grid, cron lines.
- `ledger`: The schedule ledger: one JSON line per tick in `results/schedule-ledger.jsonl`.
- `profiles`: Named sweep profiles: `schedules.yaml`, loaded and checked before anything is spent.
- `retention`: Retention: old sweeps lose their raw/ and state/ folders, never their results.
- `status`: Where each profile stands (`schedule list`): next tick, last outcome, month-to-date
  spend, missed ticks.
- `tick`: One tick of a scheduled sweep: what `interregion schedule run NAME` does.
- `timers`: What starts a profile's ticks: a systemd timer, a cron entry or a GitHub Actions
  workflow.
"""

__all__ = [
    "cadence",
    "ledger",
    "profiles",
    "retention",
    "status",
    "tick",
    "timers",
]
