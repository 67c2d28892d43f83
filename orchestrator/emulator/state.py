"""Where a running emulation keeps its state, and when it counts as abandoned.

Everything an emulation needs for teardown lives in `/run/interregion/<id>/`
(tmpfs: it vanishes with the namespaces on reboot), written before anything is
created, so `down` and `reap` work after a crash of the process that ran `up`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DEFAULT_ID = "local"  # the emulation a command means when it names none
RUN_ROOT = Path("/run/interregion")
STATE_FILE = "state.json"


def state_dir(emulation_id: str, root: Path = RUN_ROOT) -> Path:
    return root / emulation_id


def read_state(emulation_id: str, root: Path = RUN_ROOT) -> dict[str, Any] | None:
    try:
        data = json.loads((state_dir(emulation_id, root) / STATE_FILE).read_text())
    except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def write_state(emulation_id: str, data: dict[str, Any], root: Path = RUN_ROOT) -> Path:
    """Write atomically (rename), so a crash never leaves half a state file."""
    directory = state_dir(emulation_id, root)
    # Readable by all (status works without root); keys inside are 0600.
    directory.mkdir(parents=True, exist_ok=True, mode=0o755)
    tmp = directory / f".{STATE_FILE}.{os.getpid()}"
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    tmp.replace(directory / STATE_FILE)
    return directory


def remove_state(emulation_id: str, root: Path = RUN_ROOT) -> bool:
    directory = state_dir(emulation_id, root)
    if not directory.exists():
        return False
    shutil.rmtree(directory, ignore_errors=True)
    return True


def known_ids(root: Path = RUN_ROOT) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


@contextlib.contextmanager
def locked(root: Path = RUN_ROOT) -> Iterator[None]:
    """Serialise subnet choice and set-up checks between concurrent runs."""
    root.mkdir(parents=True, exist_ok=True, mode=0o755)
    with open(root / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def process_start_ticks(pid: int) -> int | None:
    """The start time of a process (clock ticks since boot), None if it is gone.

    Kept with a pid so that a reused pid is not mistaken for the owner.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    after = stat.rsplit(")", 1)[1].split()
    return int(after[19])  # field 22 of proc(5), counted from field 3


def owner_record(pid: int) -> dict[str, int]:
    return {"owner_pid": pid, "owner_start": (process_start_ticks(pid) or 0) if pid else 0}


def is_stale(state: dict[str, Any], now: float | None = None) -> bool:
    """True when nobody wants the emulation any more.

    With an owner process: once that process is gone. Without one (emulations
    made through Terraform outlive the command that made them): once expired.
    """
    pid = int(state.get("owner_pid") or 0)
    if pid:
        start = process_start_ticks(pid)
        return start is None or start != int(state.get("owner_start") or start)
    expires = float(state.get("expires_at") or 0)
    return bool(expires) and (time.time() if now is None else now) > expires
