"""Sweeps whose process died mid-run (kill -9, a reboot): found and torn down.

A sweep run whole (`sweep`, `schedule run`) records its owner process in sweep.json
before provisioning. Whoever takes the results folder's lock next (orchestrator.drivers.lock)
knows that owner is gone, since the kernel freed the lock, and tears down what it left.
Stages run alone (`provision --sweep ID`) record no owner: their hosts are kept on
purpose and are never reaped here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.core.errors import UserError
from orchestrator.emulator.state import process_start_ticks
from orchestrator.results import store
from orchestrator.results.store import utc_now

FINISHED = frozenset({"done", "failed", "interrupted", "torn down", "planned"})


def mark_owner(record: dict[str, Any], pid: int | None = None) -> None:
    """Record this process (pid and start time, so a reused pid is not taken for it)."""
    pid = pid or os.getpid()
    record["owner_pid"] = pid
    record["owner_start_ticks"] = process_start_ticks(pid)


def owner_alive(record: dict[str, Any]) -> bool:
    """True while the process that recorded itself as the sweep's owner still runs."""
    pid = int(record.get("owner_pid") or 0)
    if not pid:
        return False
    start = process_start_ticks(pid)
    return start is not None and start == record.get("owner_start_ticks", start)


def is_abandoned(record: dict[str, Any]) -> bool:
    """A sweep run whole whose owner died before it finished."""
    return (
        bool(record.get("owner_pid"))
        and record.get("status") not in FINISHED
        and not owner_alive(record)
    )


def abandoned_sweeps(results: Path) -> list[str]:
    """Ids of the abandoned sweeps under `results`, oldest first."""
    found = []
    for path in sorted(Path(results).glob(f"*/{store.SWEEP_FILE}")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and is_abandoned(record):
            found.append(str(record.get("sweep_id")))
    return found


def reap_abandoned(results: Path, log: Callable[[str], None]) -> list[str]:
    """Tear down every abandoned sweep (its hosts, connections, local emulation) and mark
    it failed (with `abandoned_utc`); then remove emulations no live process owns.
    Returns the sweep ids."""
    from orchestrator.sweep import stages
    from orchestrator.sweep.provision import reap_local_leftovers
    from orchestrator.sweep.record import open_sweep

    reaped = []
    local = False
    for sweep_id in abandoned_sweeps(results):
        sweep = open_sweep(sweep_id, results, log)
        log(
            f"sweep {sweep_id} was left {sweep.record.get('status')} by a dead process: "
            "tearing down"
        )
        try:
            stages.teardown(sweep)
        except (UserError, OSError) as e:
            # this run goes on; the next one tries again (the record still says running)
            log(
                f"warning: could not tear down abandoned sweep {sweep_id} ({e}): run "
                f"'interregion teardown --sweep {sweep_id}'"
            )
            continue
        sweep.record["status"] = "failed"
        sweep.record["abandoned_utc"] = utc_now()
        sweep.save()
        local = local or sweep.emulated
        reaped.append(sweep_id)
    if local:
        reap_local_leftovers(log)
    return reaped
