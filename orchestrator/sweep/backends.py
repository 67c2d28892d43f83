"""The backend seam: what a sweep does differently on the emulated cloud and on the clouds.

A backend's facts are data (orchestrator.model.backend_facts.BackendInfo); its behaviour is
one small protocol with two implementations, looked up by name from a plain dict:

    before_provision   clean what crashed runs left that would stand in the way
    stack_plan         the Terraform stack that makes the hosts, with its variables
    host_settings      per-host settings the agent takes beside its part
    after_teardown     remove what the hosts left on this machine

No other module compares a backend's name to a string: they ask `get(name)` or the
BackendInfo's fields.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from orchestrator.clouds import CloudOptions
from orchestrator.drivers import SweepKeys
from orchestrator.model import BACKENDS, BackendInfo, Region, backend_info
from orchestrator.results import EmulationRecord
from orchestrator.sweep.provision import (
    StackPlan,
    cloud_stack,
    controller_region,
    local_stack,
    reap_local_leftovers,
    workdir_for,
)

Log = Callable[[str], None]


@dataclass(frozen=True)
class StackRequest:
    """What a backend's stack is planned from (stack_plan's arguments, in one place)."""

    sweep_id: str
    regions: Sequence[Region]
    keys: SweepKeys
    state_dir: Path
    owner_pid: int = 0
    machine_types: dict[str, str] | None = None
    estimate_wall_s: float = 0.0
    cloud_options: CloudOptions | None = None
    log: Log = print
    controller: str | None = None
    emulated_type: str = ""
    emulation: EmulationRecord | None = None


class Backend(Protocol):
    """What differs per backend in a sweep's stages."""

    info: BackendInfo

    def before_provision(self, log: Log) -> None: ...

    def stack_plan(self, request: StackRequest) -> StackPlan: ...

    def host_settings(
        self, host_names: Sequence[str], state_dir: Path
    ) -> dict[str, dict[str, Any]]: ...

    def after_teardown(self, agent_dir: Path) -> None: ...


class LocalBackend:
    """The emulated cloud: namespaces on this machine (orchestrator.emulator)."""

    def __init__(self, info: BackendInfo) -> None:
        self.info = info

    def before_provision(self, log: Log) -> None:
        reap_local_leftovers(log)

    def stack_plan(self, request: StackRequest) -> StackPlan:
        r = request
        return local_stack(
            r.sweep_id,
            r.regions,
            r.keys,
            r.state_dir,
            r.owner_pid,
            r.controller,
            r.emulated_type,
            r.emulation,
        )

    def host_settings(
        self, host_names: Sequence[str], state_dir: Path
    ) -> dict[str, dict[str, Any]]:
        """The congestion control of a cloud image's kernel (a test that names none runs
        it) and the commands that print a burstable host's allowance counters."""
        from orchestrator.emulator import HOST_CONGESTION_CONTROL, spec_probes

        settings: dict[str, dict[str, Any]] = {
            name: {"default_congestion": HOST_CONGESTION_CONTROL} for name in host_names
        }
        for name, probe in spec_probes(workdir_for(state_dir, self.info.name)).items():
            settings.setdefault(name, {})["allowance_probe"] = probe
        return settings

    def after_teardown(self, agent_dir: Path) -> None:
        # emulated hosts share this machine's filesystem: their agent copies are ours
        shutil.rmtree(agent_dir, ignore_errors=True)


class CloudBackend:
    """A real cloud, or both (orchestrator.clouds: preflight, then the stack)."""

    def __init__(self, info: BackendInfo) -> None:
        self.info = info

    def before_provision(self, log: Log) -> None:
        """Nothing: the leftover check runs with the preflight, in stack_plan."""

    def stack_plan(self, request: StackRequest) -> StackPlan:
        machine_types = request.machine_types
        if machine_types is None:
            from orchestrator.model import load_catalog

            machine_types = load_catalog().machine_types
        return cloud_stack(
            self.info.name,
            request.sweep_id,
            request.regions,
            request.keys,
            request.state_dir,
            machine_types=machine_types,
            estimate_wall_s=request.estimate_wall_s,
            cloud_options=request.cloud_options,
            log=request.log,
        )

    def host_settings(
        self, host_names: Sequence[str], state_dir: Path
    ) -> dict[str, dict[str, Any]]:
        return {}

    def after_teardown(self, agent_dir: Path) -> None:
        """Nothing: the hosts and what they held went with the stack."""


IMPLEMENTATIONS: dict[str, Backend] = {
    name: LocalBackend(info) if info.emulated else CloudBackend(info)
    for name, info in BACKENDS.items()
}


def get(name: str) -> Backend:
    """The backend called `name`; a one-line error naming the known ones otherwise."""
    backend_info(name)
    return IMPLEMENTATIONS[name]


def stack_plan(
    backend: str,
    sweep_id: str,
    regions: Sequence[Region],
    keys: SweepKeys,
    state_dir: Path,
    *,
    owner_pid: int = 0,
    machine_types: dict[str, str] | None = None,
    estimate_wall_s: float = 0.0,
    cloud_options: CloudOptions | None = None,
    log: Log = print,
    controller: str | None = None,
    emulated_type: str = "",
    emulation: EmulationRecord | None = None,
) -> StackPlan:
    """The stack that makes the sweep's hosts on `backend`, with its variables.

    `controller`: the region key ("aws:us-east-1") where the controller is taken
    to be. On `local` the emulator delays controller<->host traffic as that
    region's modelled RTT to each host; on the clouds the real network does, so
    it changes nothing there. None: no emulated controller delay.
    `emulation`: on `local`, the sweep record's `emulation` (seed, perturbations).
    `machine_types`: per cloud; None takes the catalog's.
    """
    controller_region(controller)  # a mistyped region is an error on every backend
    request = StackRequest(
        sweep_id,
        regions,
        keys,
        state_dir,
        owner_pid=owner_pid,
        machine_types=machine_types,
        estimate_wall_s=estimate_wall_s,
        cloud_options=cloud_options,
        log=log,
        controller=controller,
        emulated_type=emulated_type,
        emulation=emulation,
    )
    return get(backend).stack_plan(request)
