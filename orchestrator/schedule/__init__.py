"""Scheduled sweeps: profiles (`schedules.yaml`), cadences, one tick, the timers that start
ticks (systemd, cron, GitHub Actions), the ledger and retention.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.schedule import check_name`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.schedule.profiles import DEFAULT_FILE, check_name, write_sample
    from orchestrator.schedule.status import ScheduleStatus
    from orchestrator.schedule.status import status as schedule_status
    from orchestrator.schedule.tick import reap_abandoned, run_named
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
    "reap_abandoned",
    "remove",
    "remove_named",
    "run_named",
    "schedule_status",
    "write_sample",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
