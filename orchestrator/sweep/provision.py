"""Backend -> the Terraform stack that makes its hosts, and that stack's variables.

`local` is the emulated cloud (infra/local). `aws`, `gcp` and `cloud` go through
orchestrator.clouds.stacks, which knows the cloud stacks' variables; everything
after provisioning only sees the host contract, whatever the backend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.clouds import CloudOptions
from orchestrator.core import CATALOG, INFRA, RunFailure, UserError
from orchestrator.drivers import SweepKeys, TerraformStack
from orchestrator.model import Region, backend_info
from orchestrator.results import EmulationRecord


@dataclass(frozen=True)
class StackPlan:
    source: Path  # the stack folder in infra/
    workdir: Path  # its per-sweep working copy and state
    variables: dict[str, Any]

    def stack(self) -> TerraformStack:
        return TerraformStack(self.source, self.workdir)


def workdir_for(state_dir: Path, backend: str) -> Path:
    return Path(state_dir) / f"tf-{backend}"


def controller_region(key: str | None) -> Region | None:
    """The catalog region of a `--controller` key ("aws:us-east-1"); None for None or ""."""
    if not key:
        return None
    from orchestrator.model import load_catalog

    try:
        return load_catalog(CATALOG).get(key)
    except UserError as exc:
        raise UserError(f"--controller: {exc}") from None


def local_stack(
    sweep_id: str,
    regions: Sequence[Region],
    keys: SweepKeys,
    state_dir: Path,
    owner_pid: int,
    controller: str | None = None,
    emulated_type: str = "",
    emulation: EmulationRecord | None = None,
) -> StackPlan:
    """The emulated cloud's stack; `controller` (a region key or None) places the
    controller in that region, so its traffic to the hosts gets the modelled delay;
    `emulated_type` is the hosts' emulated machine type ("": the default).
    `emulation`: the sweep record's seed and perturbations (emulator.stack.EmulationSettings)."""
    from orchestrator.emulator import EmulationSettings, delayd_binary, local_variables

    delayd_binary()  # built (first use of an installed package) before anything is applied
    workdir = workdir_for(state_dir, "local")
    variables = local_variables(
        sweep_id,
        regions,
        keys,
        workdir,
        owner_pid=owner_pid,
        controller=controller_region(controller),
        machine_type=emulated_type,
        settings=EmulationSettings.of_record(emulation.to_json() if emulation else None, sweep_id),
    )
    return StackPlan(INFRA / "local", workdir, variables)


def cloud_stack(
    backend: str,
    sweep_id: str,
    regions: Sequence[Region],
    keys: SweepKeys,
    state_dir: Path,
    *,
    machine_types: dict[str, str],
    estimate_wall_s: float,
    cloud_options: CloudOptions | None = None,
    log: Callable[[str], None] = print,
) -> StackPlan:
    """The seam to the clouds: orchestrator.clouds.stack_setup (preflight, then the stack and
    its variables), with the cloud options the sweep records (None: the defaults)."""
    # Imported here, not at the top: the cloud SDKs take seconds to import and a local
    # sweep never needs them.
    from orchestrator.clouds import prepare_clouds

    options = cloud_options or CloudOptions()
    for line in leftover_warnings(backend, options, log):
        log(line)
    source, variables, checked = prepare_clouds(
        backend,
        sweep_id,
        regions,
        keys,
        machine_types,
        estimate_wall_s,
        options,
        log,
    )
    dropped = sorted({r.key for r in regions} - {r.key for r in checked.regions})
    if dropped:
        raise UserError(
            f"preflight cannot host {', '.join(dropped)}: leave them out with --exclude"
        )
    return StackPlan(Path(source), workdir_for(state_dir, Path(source).name), variables)


def leftover_warnings(backend: str, options: CloudOptions, log: Callable[[str], None]) -> list[str]:
    """The reaper's dry run before provisioning: expired interregion resources still on
    the clouds. It only warns: any failure here (no credentials, unknown profile) is a
    warning too, and the preflight that follows fails with its own one-line error."""
    from orchestrator.clouds import AwsApi, GcpApi
    from orchestrator.clouds import leftover_warnings as reap_leftover_warnings

    try:
        lines = reap_leftover_warnings(
            backend_info(backend).clouds,
            lambda msg: log(f"warning: {msg}"),
            aws_api=lambda: AwsApi(profile=options.aws_profile),
            gcp_api=lambda: GcpApi(options.gcp_project),
        )
    except Exception as e:  # a check for leftovers must never stop a sweep
        return [f"warning: could not look for leftover resources ({type(e).__name__}: {e})"]
    return [f"warning: {line}" if i == 0 else line for i, line in enumerate(lines)]


def reap_local_leftovers(log: Callable[[str], None] = print) -> list[str]:
    """Before a local sweep: remove what crashed runs left (emulations whose owner
    process died, orphaned `ir-*` namespaces and links); live emulations are kept."""
    from orchestrator import emulator

    removed = emulator.reap()
    if removed:
        more = f" and {len(removed) - 5} more" if len(removed) > 5 else ""
        log(f"removed what crashed runs left: {', '.join(removed[:5])}{more}")
    return removed


def existing_stacks(state_dir: Path) -> list[TerraformStack]:
    """The stacks a sweep applied (for teardown): every tf-* working copy with state."""
    found = []
    for workdir in sorted(Path(state_dir).glob("tf-*")):
        source = INFRA / workdir.name.removeprefix("tf-")
        stack = TerraformStack(source, workdir)
        if stack.applied():
            found.append(stack)
    return found


def destroy_all(
    state_dir: Path, sweep_id: str, log: Callable[[str], None], local: bool = False
) -> list[str]:
    """Destroy every stack of the sweep; for the emulated cloud (`local`, or a tf-local
    working copy), also make sure the emulation is gone even if Terraform could not run,
    e.g. because the state folder was deleted. Returns what it destroyed."""
    done = []
    problems = []
    for stack in existing_stacks(state_dir):
        try:
            stack.destroy()
            done.append(stack.workdir.name)
        except UserError as e:
            problems.append(f"{stack.workdir.name}: {e}")
    if local or (Path(state_dir) / "tf-local").exists():
        from orchestrator.emulator import down, emulation_id_for

        removed = down(emulation_id_for(sweep_id))
        if removed:
            log(f"emulation leftovers removed directly: {len(removed)} items")
    if problems:
        raise RunFailure("teardown incomplete: " + "; ".join(problems))
    return done
