"""The tools a sweep drives and the process machinery around them: Terraform, Ansible, per-sweep
ssh keys, child processes, interrupts, the results-folder lock and progress output.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.drivers import as_data`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.drivers.ansible import (
        Event,
        View,
        as_data,
        close_control_sockets,
        plain_view,
        remove_views,
        run_playbook,
        write_document,
        write_playbook,
    )
    from orchestrator.drivers.interrupts import Interrupted, deferred, on_signal
    from orchestrator.drivers.interrupts import check as check_interrupt
    from orchestrator.drivers.interrupts import requested as interrupt_requested
    from orchestrator.drivers.interrupts import reset as reset_interrupts
    from orchestrator.drivers.keys import SweepKeys, ensure_sweep_keys, write_known_hosts
    from orchestrator.drivers.lock import LockHeld, ResultsLock, results_lock
    from orchestrator.drivers.processes import stop_all
    from orchestrator.drivers.progress import RoundProgress
    from orchestrator.drivers.terraform import TerraformStack

__all__ = [
    "Event",
    "Interrupted",
    "LockHeld",
    "ResultsLock",
    "RoundProgress",
    "SweepKeys",
    "TerraformStack",
    "View",
    "as_data",
    "check_interrupt",
    "close_control_sockets",
    "deferred",
    "ensure_sweep_keys",
    "interrupt_requested",
    "on_signal",
    "plain_view",
    "remove_views",
    "reset_interrupts",
    "results_lock",
    "run_playbook",
    "stop_all",
    "write_document",
    "write_known_hosts",
    "write_playbook",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
