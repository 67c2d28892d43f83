"""The emulated cloud: every region a network namespace on this machine.

`python -m orchestrator.emulator up --spec FILE` and `... down --id ID` are what the
infra/local stack's provisioners run.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.emulator import bring_up`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr
from orchestrator.model import LOCAL_MAX_CONCURRENT

if TYPE_CHECKING:
    from orchestrator.emulator.allowance_counters import spec_probes
    from orchestrator.emulator.bringup import UpRequest, UpResult, bring_up, bring_up_spec
    from orchestrator.emulator.delay import delayd_binary
    from orchestrator.emulator.net import HOST_CONGESTION_CONTROL
    from orchestrator.emulator.perturb import Perturbation, check_hosts, gather
    from orchestrator.emulator.perturb import ends as perturbation_ends
    from orchestrator.emulator.perturb import parse as parse_perturbation
    from orchestrator.emulator.runtime import (
        EmulationStatus,
        down,
        hosts_of,
        reap,
        require_root,
        reserve_subnet,
        running_spec,
        set_perturbations,
        status,
        up,
    )
    from orchestrator.emulator.spec import EmulationSpec, HostSpec, PathSpec
    from orchestrator.emulator.stack import EmulationSettings, emulation_id_for, local_variables
    from orchestrator.emulator.state import DEFAULT_ID, process_start_ticks
    from orchestrator.emulator.variation import seed_for

__all__ = [
    "DEFAULT_ID",
    "HOST_CONGESTION_CONTROL",
    "LOCAL_MAX_CONCURRENT",
    "EmulationSettings",
    "EmulationSpec",
    "EmulationStatus",
    "HostSpec",
    "PathSpec",
    "Perturbation",
    "UpRequest",
    "UpResult",
    "bring_up",
    "bring_up_spec",
    "check_hosts",
    "delayd_binary",
    "down",
    "emulation_id_for",
    "gather",
    "hosts_of",
    "local_variables",
    "parse_perturbation",
    "perturbation_ends",
    "process_start_ticks",
    "reap",
    "require_root",
    "reserve_subnet",
    "running_spec",
    "seed_for",
    "set_perturbations",
    "spec_probes",
    "status",
    "up",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
