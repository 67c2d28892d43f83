"""The emulated cloud: every region a network namespace on this machine.

Public API (what the rest of interregion and the `infra/local` Terraform stack
use): `up(spec)`, `down(emulation_id)`, `reap()`, `status()`, and
`LOCAL_MAX_CONCURRENT`, the default number of tests a sweep runs at once on the
emulated cloud. `python -m orchestrator.emulator up --spec FILE` and
`... down --id ID` are what the stack's provisioners run.
"""

from orchestrator.emulator.runtime import (
    EmulationStatus,
    down,
    hosts_of,
    reap,
    require_root,
    reserve_subnet,
    status,
    up,
)
from orchestrator.emulator.spec import EmulationSpec, HostSpec, PathSpec

# Default --max-concurrent of a sweep on the emulated cloud. bench/emulator.py
# on the 2-core reference machine: single-stream 50 Mbit/s tests kept their
# single-test accuracy up to 24 at once (-5.6% vs -4.4% alone, RTT within
# 0.2 ms), fell to -13.6% at 32 and -17.9% at 38, with the CPUs saturated from
# about 20. Half of 24 leaves the controller (Ansible, ssh) its share.
LOCAL_MAX_CONCURRENT = 12

__all__ = [
    "LOCAL_MAX_CONCURRENT",
    "EmulationSpec",
    "EmulationStatus",
    "HostSpec",
    "PathSpec",
    "down",
    "hosts_of",
    "reap",
    "require_root",
    "reserve_subnet",
    "status",
    "up",
]
