"""Sweeps whose process died mid-run (kill -9, a reboot): found and torn down.

A sweep run whole (`sweep`, `schedule run`) records its owner process in sweep.json
before provisioning. Whoever takes the results folder's lock next (orchestrator.drivers.lock)
knows that owner is gone, since the kernel freed the lock, and tears down what it left.
Stages run alone (`provision --sweep ID`) record no owner: their hosts are kept on
purpose and are never reaped here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from orchestrator.core import UserError, utc_now
from orchestrator.drivers import remove_views
from orchestrator.emulator import process_start_ticks
from orchestrator.results import SWEEP_FILE, Owner, SweepRecord, SweepStatus, read_record

# where continuous meshes keep their sweep records (orchestrator.mesh): reaped here too
MESH_DIR = "mesh"


def mark_owner(record: SweepRecord, pid: int | None = None) -> None:
    """Record this process (pid and start time, so a reused pid is not taken for it)."""
    pid = pid or os.getpid()
    record.owner = Owner(pid, process_start_ticks(pid))


def owner_alive(record: SweepRecord) -> bool:
    """True while the process that recorded itself as the sweep's owner still runs."""
    owner = record.owner
    if owner is None:
        return False
    start = process_start_ticks(owner.pid)
    return start is not None and start == (
        start if owner.start_ticks is None else owner.start_ticks
    )


def is_abandoned(record: SweepRecord) -> bool:
    """A sweep run whole whose owner died before it finished."""
    return record.owner is not None and not record.status.finished and not owner_alive(record)


def abandoned_sweeps(results: Path) -> list[str]:
    """Ids of the abandoned sweeps under `results`, oldest first (records that cannot be
    read are skipped)."""
    found = []
    for path in sorted(Path(results).glob(f"*/{SWEEP_FILE}")):
        record = read_record(path)
        if record is not None and is_abandoned(record):
            found.append(record.sweep_id)
    return found


def reap_abandoned(results: Path, log: Callable[[str], None]) -> list[str]:
    """Tear down every abandoned sweep (its hosts, connections, local emulation) and mark
    it failed (with `abandoned_utc`), and every abandoned mesh (`results/mesh/`); then
    remove emulations no live process owns. Returns the sweep ids."""
    from orchestrator.sweep import stages
    from orchestrator.sweep.provision import reap_local_leftovers
    from orchestrator.sweep.sweep_folder import open_sweep

    reaped = []
    local = False
    mesh = Path(results) / MESH_DIR
    found = [(results, i) for i in abandoned_sweeps(results)]
    if Path(results).name != MESH_DIR:  # a sweep's lock reaps dead meshes as well
        found += [(mesh, i) for i in abandoned_sweeps(mesh)]
    for folder, sweep_id in found:
        sweep = open_sweep(sweep_id, folder, log)
        log(f"sweep {sweep_id} was left {sweep.record.status} by a dead process: tearing down")
        try:
            stages.teardown(sweep)
        except (UserError, OSError) as e:
            # this run goes on; the next one tries again (the record still says running)
            log(
                f"warning: could not tear down abandoned sweep {sweep_id} ({e}): run "
                f"'{sweep.command(f'teardown --sweep {sweep_id}')}'"
            )
            continue
        remove_views(sweep_id)  # the folders Ansible was shown it in
        sweep.record.status = SweepStatus.FAILED
        sweep.record.abandoned_utc = utc_now()
        sweep.save()
        local = local or sweep.emulated
        reaped.append(sweep_id)
    if local:
        reap_local_leftovers(log)
    return reaped
