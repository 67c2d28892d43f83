"""A mesh's life: up (provision, prepare, agents started), the collection loop, down.

A mesh is a sweep record that is never measured in rounds: `results/mesh/<id>/` holds
its sweep.json (with a `mesh` field: the request), hosts.json, state/ (keys, Terraform,
inventory) and what the controller pulled (`pulled/<host>.jsonl`, verbatim, and
`state/pull.json`, each host's position). Everything that provisions and tears down is
the sweep's own (orchestrator.sweep.stages): the same backends, Terraform stacks, keys
and Ansible. The controller that ran `mesh up` is the mesh's owner: it collects every
`collect_every_s` until it is stopped (`mesh down`, Ctrl-C, SIGTERM), then tears down.
Killed outright, it leaves a sweep record whose owner is dead: the next `mesh` command
tears it down (sweep.abandoned, as for sweeps), and the emulator's reap removes its
namespaces and agents before any local run; on the clouds, `interregion reap` finds
its tagged resources.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.clouds import CloudOptions
from orchestrator.core import UserError
from orchestrator.drivers import (
    Event,
    check_interrupt,
    deferred,
    plain_view,
    run_playbook,
    stop_all,
    write_document,
)
from orchestrator.emulator import process_start_ticks
from orchestrator.model import Host, is_emulated
from orchestrator.plan import PREPARE_FORKS, Plan, SelectionSpec
from orchestrator.results import HOSTS_FILE, SWEEP_FILE, SweepStatus, read_record, safe_name
from orchestrator.sweep import MESH_DIR as ABANDONED_MESH_DIR
from orchestrator.sweep import (
    Emulation,
    Sweep,
    load_hosts,
    local_agent_dir,
    locked,
    mark_owner,
    open_sweep,
    owner_alive,
    prepare,
    provision_stage,
    state_folder,
    teardown_stage,
    write_sweep_inventory,
)
from orchestrator.sweep import create as launch_create

Log = Callable[[str], None]
# under the results folder: meshes are not sweeps to the report or site
MESH_DIR = ABANDONED_MESH_DIR
PULLED_DIR = "pulled"
UNIT = "interregion-mesh.service"


@dataclass(frozen=True)
class MeshRequest:
    """What a mesh's agents and controller do (checked where it enters: `check`)."""

    interval_s: int = 60
    pings: int = 5
    collect_every_s: int = 60
    reply_wait_s: float = 2.0
    rotate_bytes: int = 8 << 20
    keep_files: int = 8
    bin_s: int = 300  # the store's bins; shorter only to test detection in minutes

    def check(self) -> MeshRequest:
        if not 1 <= self.interval_s <= 3600:
            raise UserError(f"--interval {self.interval_s}: give 1 to 3600 seconds")
        if not 1 <= self.pings <= 100:
            raise UserError(f"--pings {self.pings}: give 1 to 100 echoes per peer and interval")
        if not 5 <= self.collect_every_s <= 3600:
            raise UserError(f"--collect-every {self.collect_every_s}: give 5 to 3600 seconds")
        if self.bin_s % self.interval_s or not 1 <= self.bin_s // self.interval_s <= 3600:
            raise UserError(
                f"--bin-seconds {self.bin_s}: give a multiple of --interval {self.interval_s}"
            )
        return self


def mesh_results(results: Path) -> Path:
    return Path(results) / MESH_DIR


def source_of(emulated: bool) -> str:
    """The store's source of a mesh: never mixed with sweeps' (emulated, measured)."""
    return "mesh-emulated" if emulated else "mesh"


def request_of(sweep: Sweep) -> MeshRequest:
    doc = sweep.record.extra.get("mesh")
    if not isinstance(doc, dict):
        raise UserError(f"{sweep.dir} is a sweep, not a mesh")
    return MeshRequest(**doc["request"])


# ---- finding meshes -------------------------------------------------------------------


def mesh_ids(results: Path) -> list[str]:
    folder = mesh_results(results)
    return sorted(p.parent.name for p in folder.glob(f"*/{SWEEP_FILE}"))


def running(results: Path) -> list[str]:
    """The meshes whose owner still runs (normally none or one)."""
    out = []
    for mesh_id in mesh_ids(results):
        record = read_record(mesh_results(results) / mesh_id / SWEEP_FILE)
        if record is not None and not record.status.finished and owner_alive(record):
            out.append(mesh_id)
    return out


def open_mesh(results: Path, mesh_id: str | None, log: Log) -> Sweep:
    """A mesh by id, or the running one (the latest one when none runs)."""
    ids = mesh_ids(results)
    if not ids:
        raise UserError(
            f"no mesh under {mesh_results(results)}: start one with 'interregion mesh up'"
        )
    if mesh_id is None:
        live = running(results)
        mesh_id = live[-1] if live else ids[-1]
    elif mesh_id not in ids:
        raise UserError(f"--mesh {mesh_id}: no such mesh (meshes: {', '.join(ids[-5:])})")
    return open_sweep(mesh_id, mesh_results(results), log)


# ---- up -------------------------------------------------------------------------------


def create(
    plan: Plan,
    spec: SelectionSpec,
    results: Path,
    request: MeshRequest,
    log: Log,
    *,
    cloud_options: CloudOptions | None = None,
    emulation: Emulation | None = None,
) -> Sweep:
    """The mesh's record, under the mesh folder's lock (which tears down dead meshes
    first), its owner this process."""
    with locked(mesh_results(results), trigger="mesh", log=log):
        run = launch_create(
            plan,
            spec,
            mesh_results(results),
            cloud_options=cloud_options,
            emulation=emulation,
            log=log,
        )
        run.record.extra["mesh"] = {
            "request": asdict(request),
            "source": source_of(plan_emulated(plan)),
        }
        mark_owner(run.record)
        run.save()
    return run


def plan_emulated(plan: Plan) -> bool:
    return is_emulated(plan.backend)


def agent_dir(sweep: Sweep, host: Host, facts: dict[str, Any]) -> str:
    """Where a host's agent keeps its records: emulated hosts share this machine's file
    system, so each has a folder of its own under the sweep's agent folder."""
    base = str(facts.get(host.name, {}).get("agent_dir") or local_agent_dir(sweep))
    return f"{base}/mesh/{safe_name(host.name)}" if is_emulated(host.backend) else f"{base}/mesh"


def host_facts(sweep: Sweep) -> dict[str, Any]:
    doc = json.loads((sweep.dir / HOSTS_FILE).read_text())
    facts = doc.get("facts", {})
    return facts if isinstance(facts, dict) else {}


def parts(sweep: Sweep, request: MeshRequest) -> dict[str, dict[str, Any]]:
    """Each host's part: its peers (every other host) and the request."""
    hosts = load_hosts(sweep)
    facts = host_facts(sweep)
    return {
        h.name: {
            "host": h.name,
            "peers": [{"name": p.name, "address": p.address} for p in hosts if p.name != h.name],
            "interval_s": request.interval_s,
            "pings": request.pings,
            "reply_wait_s": request.reply_wait_s,
            "rotate_bytes": request.rotate_bytes,
            "keep_files": request.keep_files,
            "dir": agent_dir(sweep, h, facts),
        }
        for h in hosts
    }


def start_agents(sweep: Sweep, request: MeshRequest) -> list[str]:
    """playbooks/mesh.yml: each host's part copied, its agent started (in the background
    on emulated hosts, under systemd on cloud hosts). Returns the hosts that failed."""
    problems: dict[str, str] = {}
    started: set[str] = set()
    hosts = load_hosts(sweep)
    by_alias = {safe_name(h.name): h.name for h in hosts}

    def on_event(event: Event) -> None:
        name = by_alias.get(event.get("host", ""), "")
        if event["event"] in ("failed", "unreachable"):
            problems[name] = f"{event['event']} at '{event.get('task')}': {event.get('msg')}"
        elif event["event"] == "ok" and str(event.get("task", "")).startswith("Mesh agent runs"):
            started.add(name)

    folder = sweep.state / "mesh-parts"
    folder.mkdir(exist_ok=True)
    for name, part in parts(sweep, request).items():
        (folder / f"{safe_name(name)}.json").write_text(json.dumps(part))
    with plain_view(state_folder(sweep)) as view:
        inv = write_sweep_inventory(sweep, hosts, view)
        variables = sweep.state / "mesh-vars.yml"
        write_document(variables, {"ir_mesh_parts_dir": str(view.state / "mesh-parts")})
        run_playbook(
            "mesh.yml",
            inv,
            on_event=on_event,
            log_path=sweep.state / "ansible-mesh.log",
            forks=min(len(hosts), PREPARE_FORKS),
            extra_vars=view.state / variables.name,
            view=view,
        )
    for h in hosts:
        if h.name not in started and h.name not in problems:
            problems[h.name] = "Ansible reported nothing for it"
    for name, why in sorted(problems.items()):
        sweep.log(f"warning: {name}: its mesh agent did not start ({why})")
    if len(problems) == len(hosts):
        raise UserError(f"no mesh agent started: see {sweep.state / 'ansible-mesh.log'}")
    return sorted(problems)


def serve(sweep: Sweep, collect: Callable[[Sweep], object], every_s: float,
          until: Callable[[], bool] = lambda: False) -> None:  # fmt: skip
    """Collect every `every_s` until interrupted (or `until()`). A collection runs whole
    (a stop signal waits for its end); one that fails (the store busy with another
    command, a host unreachable) is a warning and is tried again next time: what it did
    not store is pulled again."""
    next_at = time.monotonic() + every_s
    while not until():
        check_interrupt()
        if time.monotonic() >= next_at:
            try:
                with deferred():
                    collect(sweep)
            except (UserError, OSError) as e:
                sweep.log(f"warning: collection failed, tried again in {every_s:g} s: {e}")
            next_at = time.monotonic() + every_s
        time.sleep(0.5)


def up(sweep: Sweep, collect: Callable[[Sweep], object], *, ready: Log | None = None,
       until: Callable[[], bool] = lambda: False) -> Sweep:  # fmt: skip
    """Provision, prepare, start the agents, then collect until stopped; teardown always
    (the last records are pulled first)."""
    request = request_of(sweep)
    try:
        provision_stage(sweep, owner_pid=os.getpid())
        prepare(sweep)
        start_agents(sweep, request)
        sweep.record.status = SweepStatus.MEASURING
        sweep.save()
        if ready is not None:
            ready(f"mesh {sweep.id} is up: collecting every {request.collect_every_s} s")
        serve(sweep, collect, request.collect_every_s, until)
        sweep.record.status = SweepStatus.DONE
    except KeyboardInterrupt:
        sweep.record.status = SweepStatus.DONE  # a mesh ends by being stopped
        raise
    except BaseException:
        sweep.record.status = SweepStatus.FAILED
        raise
    finally:
        with deferred():
            if (sweep.dir / HOSTS_FILE).exists() and sweep.record.status == SweepStatus.DONE:
                try:
                    collect(sweep)
                except (UserError, OSError) as e:
                    sweep.log(f"warning: the last collection failed ({e})")
            stop_all()
            teardown_stage(sweep)
            sweep.save()
    return sweep


# ---- down -----------------------------------------------------------------------------


def down(results: Path, mesh_id: str | None, log: Log, wait_s: float = 300.0) -> Sweep:
    """Stop a mesh: its owner is sent SIGTERM and tears down; a mesh whose owner is dead
    is torn down here."""
    sweep = open_mesh(results, mesh_id, log)
    owner = sweep.record.owner
    if owner is not None and owner_alive(sweep.record) and owner.pid != os.getpid():
        log(f"mesh {sweep.id}: stopping its controller (process {owner.pid})")
        os.kill(owner.pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        while _alive(owner.pid, owner.start_ticks):
            if time.monotonic() > deadline:
                raise UserError(
                    f"mesh {sweep.id}: its controller (process {owner.pid}) did not stop in "
                    f"{wait_s:g} s: run 'interregion mesh down' again"
                )
            time.sleep(0.5)
        return open_sweep(sweep.id, mesh_results(results), log)
    if not sweep.record.status.finished or stages_left(sweep):
        log(f"mesh {sweep.id}: its controller is gone: tearing down")
        teardown_stage(sweep)
        if not sweep.record.status.finished:
            sweep.record.status = SweepStatus.FAILED
        sweep.save()
    return sweep


def _alive(pid: int, start_ticks: int | None) -> bool:
    """The process still runs (a zombie, ended but not yet waited for by its parent, does
    not): its teardown is over."""
    if process_start_ticks(pid) != start_ticks:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def stages_left(sweep: Sweep) -> bool:
    """Whether a Terraform stack of the mesh is still applied."""
    from orchestrator.sweep import existing_stacks

    return bool(existing_stacks(sweep.state)) if sweep.state.is_dir() else False
