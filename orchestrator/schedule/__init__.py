"""Scheduled sweeps: profiles (`schedules.yaml`), cadences, one tick, the timers that start
ticks (systemd, cron, GitHub Actions), the ledger and retention.

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.schedule import check_name`),
never a module of this package (tests/check_layers.py).

- `profiles`: `DEFAULT_FILE`, `check_name`, `write_sample`.
- `status`: `ScheduleStatus`, `schedule_status`.
- `tick`: `run_named`.
- `timers`: `Written`, `export_named`, `install_named`, `remove`, `remove_named`.
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.schedule.profiles import DEFAULT_FILE, check_name, write_sample
    from orchestrator.schedule.status import ScheduleStatus
    from orchestrator.schedule.status import status as schedule_status
    from orchestrator.schedule.tick import run_named
    from orchestrator.schedule.timers import (
        Written,
        export_named,
        install_named,
        remove,
        remove_named,
    )

__all__ = [
    "DEFAULT_FILE",
    "ScheduleStatus",
    "Written",
    "check_name",
    "export_named",
    "install_named",
    "remove",
    "remove_named",
    "run_named",
    "schedule_status",
    "write_sample",
]

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "DEFAULT_FILE": ("orchestrator.schedule.profiles", "DEFAULT_FILE"),
    "check_name": ("orchestrator.schedule.profiles", "check_name"),
    "write_sample": ("orchestrator.schedule.profiles", "write_sample"),
    "ScheduleStatus": ("orchestrator.schedule.status", "ScheduleStatus"),
    "schedule_status": ("orchestrator.schedule.status", "status"),
    "run_named": ("orchestrator.schedule.tick", "run_named"),
    "Written": ("orchestrator.schedule.timers", "Written"),
    "export_named": ("orchestrator.schedule.timers", "export_named"),
    "install_named": ("orchestrator.schedule.timers", "install_named"),
    "remove": ("orchestrator.schedule.timers", "remove"),
    "remove_named": ("orchestrator.schedule.timers", "remove_named"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)
