"""The emulated cloud: every region a network namespace on this machine.

Public API (what the rest of interregion and the `infra/local` Terraform stack
use): `up(spec)`, `down(emulation_id)`, `set_perturbations(emulation_id, perturbations)`,
`reap()`, `status()`, and
`LOCAL_MAX_CONCURRENT`, the default number of tests a sweep runs at once on the
emulated cloud (orchestrator.model.backends holds it). The sweep stages and the CLI
also use its modules `stack` (a sweep's regions -> an EmulationSpec and the stack's
variables), `spec`, `perturb` (injected changes), `variation` (run-to-run variation),
`state` (what runs on this machine), `allowance` (a burstable host's counters) and
`net` (the hosts' kernel settings). `python -m orchestrator.emulator up --spec FILE` and
`... down --id ID` are what the stack's provisioners run.
"""

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
    "allowance",
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
