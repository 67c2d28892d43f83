"""The emulated cloud: every region a network namespace on this machine.

`python -m orchestrator.emulator up --spec FILE` and `... down --id ID` are what the
infra/local stack's provisioners run.

Public API (what the rest of interregion and the `infra/local` Terraform stack
use): `bring_up(UpRequest) -> UpResult` (`emulator up`: regions chosen, keys made, a
subnet reserved, the spec built and brought up) and `bring_up_spec(path)` (module
`bringup`); `up(spec)`, `down(emulation_id)`, `set_perturbations(emulation_id, perturbations)`,
`reap()`, `status()`, `delayd_binary()` (the delay program, built from its source on
first use by an installed package), and
`LOCAL_MAX_CONCURRENT`, the default number of tests a sweep runs at once on the
emulated cloud (orchestrator.model.backends holds it). The sweep stages and the CLI
also use its modules `stack` (a sweep's regions -> an EmulationSpec and the stack's
variables), `spec`, `perturb` (injected changes), `variation` (run-to-run variation),
`state` (what runs on this machine), `allowance` (a burstable host's counters) and
`net` (the hosts' kernel settings).
"""

from orchestrator.emulator.bringup import UpRequest, UpResult, bring_up, bring_up_spec
from orchestrator.emulator.delay import delayd_binary
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
from orchestrator.model.backends import LOCAL_MAX_CONCURRENT  # defined with the backend

__all__ = [
    "LOCAL_MAX_CONCURRENT",
    "EmulationSpec",
    "EmulationStatus",
    "HostSpec",
    "PathSpec",
    "UpRequest",
    "UpResult",
    "allowance",
    "bring_up",
    "bring_up_spec",
    "bringup",
    "delayd_binary",
    "down",
    "hosts_of",
    "net",
    "perturb",
    "reap",
    "require_root",
    "reserve_subnet",
    "running_spec",
    "set_perturbations",
    "spec",
    "stack",
    "state",
    "status",
    "up",
    "variation",
]
