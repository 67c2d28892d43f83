"""The emulated cloud: every region a network namespace on this machine.

`python -m orchestrator.emulator up --spec FILE` and `... down --id ID` are what the
infra/local stack's provisioners run.

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.emulator import bring_up`),
never a module of this package (tests/check_layers.py).

- `allowance`: `spec_probes`.
- `bringup`: `DEFAULT_ID`, `UpRequest`, `UpResult`, `bring_up`, `bring_up_spec`.
- `delay`: `delayd_binary`.
- `net`: `HOST_CONGESTION_CONTROL`.
- `perturb`: `Perturbation`, `check_hosts`, `gather`, `parse_perturbation`, `perturbation_ends`.
- `runtime`: `EmulationStatus`, `down`, `hosts_of`, `reap`, `require_root`, `reserve_subnet`,
  `running_spec`, `set_perturbations`, `status`, `up`.
- `spec`: `EmulationSpec`, `HostSpec`, `PathSpec`.
- `stack`: `EmulationSettings`, `emulation_id_for`, `local_variables`.
- `state`: `process_start_ticks`.
- `variation`: `seed_for`.
- `orchestrator.model.backend_facts`: `LOCAL_MAX_CONCURRENT`.
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr
from orchestrator.model import LOCAL_MAX_CONCURRENT

if TYPE_CHECKING:
    from orchestrator.emulator.allowance_counters import spec_probes
    from orchestrator.emulator.bringup import (
        DEFAULT_ID,
        UpRequest,
        UpResult,
        bring_up,
        bring_up_spec,
    )
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
    from orchestrator.emulator.state import process_start_ticks
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

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "spec_probes": ("orchestrator.emulator.allowance_counters", "spec_probes"),
    "DEFAULT_ID": ("orchestrator.emulator.bringup", "DEFAULT_ID"),
    "UpRequest": ("orchestrator.emulator.bringup", "UpRequest"),
    "UpResult": ("orchestrator.emulator.bringup", "UpResult"),
    "bring_up": ("orchestrator.emulator.bringup", "bring_up"),
    "bring_up_spec": ("orchestrator.emulator.bringup", "bring_up_spec"),
    "delayd_binary": ("orchestrator.emulator.delay", "delayd_binary"),
    "HOST_CONGESTION_CONTROL": ("orchestrator.emulator.net", "HOST_CONGESTION_CONTROL"),
    "Perturbation": ("orchestrator.emulator.perturb", "Perturbation"),
    "check_hosts": ("orchestrator.emulator.perturb", "check_hosts"),
    "gather": ("orchestrator.emulator.perturb", "gather"),
    "parse_perturbation": ("orchestrator.emulator.perturb", "parse"),
    "perturbation_ends": ("orchestrator.emulator.perturb", "ends"),
    "EmulationStatus": ("orchestrator.emulator.runtime", "EmulationStatus"),
    "down": ("orchestrator.emulator.runtime", "down"),
    "hosts_of": ("orchestrator.emulator.runtime", "hosts_of"),
    "reap": ("orchestrator.emulator.runtime", "reap"),
    "require_root": ("orchestrator.emulator.runtime", "require_root"),
    "reserve_subnet": ("orchestrator.emulator.runtime", "reserve_subnet"),
    "running_spec": ("orchestrator.emulator.runtime", "running_spec"),
    "set_perturbations": ("orchestrator.emulator.runtime", "set_perturbations"),
    "status": ("orchestrator.emulator.runtime", "status"),
    "up": ("orchestrator.emulator.runtime", "up"),
    "EmulationSpec": ("orchestrator.emulator.spec", "EmulationSpec"),
    "HostSpec": ("orchestrator.emulator.spec", "HostSpec"),
    "PathSpec": ("orchestrator.emulator.spec", "PathSpec"),
    "EmulationSettings": ("orchestrator.emulator.stack", "EmulationSettings"),
    "emulation_id_for": ("orchestrator.emulator.stack", "emulation_id_for"),
    "local_variables": ("orchestrator.emulator.stack", "local_variables"),
    "process_start_ticks": ("orchestrator.emulator.state", "process_start_ticks"),
    "seed_for": ("orchestrator.emulator.variation", "seed_for"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)
