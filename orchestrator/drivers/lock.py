"""One sweep at a time per results folder: a kernel lock (flock) on `results/.sweep.lock`.

The kernel drops the lock when its holder's process dies, however it dies (kill -9
included), so there is no stale pid to clean up; a holder that ends removes the file.
The holder writes who it is (pid, sweep id, start time, profile) into the locked file
itself, in place: a rename would swap the inode and let a second process lock the new
file beside the first.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.core import RunFailure, UserError, stamp, utc_now

LOCK_FILE = ".sweep.lock"


class LockHeld(RunFailure):
    """Another sweep holds the results folder; `holder` is what it wrote into the lock."""

    def __init__(self, path: Path, holder: dict[str, Any]) -> None:
        self.holder = holder
        who = holder.get("sweep_id") or "a sweep not yet planned"
        super().__init__(
            f"{path.parent} is busy: {who} (pid {holder.get('pid', '?')}, started "
            f"{holder.get('started_utc', '?')}) is running there; wait for it to end"
        )


@dataclass
class ResultsLock:
    """A held lock; `note(sweep_id=...)` records more about the holder."""

    path: Path
    fd: int
    holder: dict[str, Any] = field(default_factory=dict)

    def note(self, **fields: Any) -> None:
        self.holder.update(fields)
        data = (json.dumps(self.holder) + "\n").encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)
        os.fsync(self.fd)


def read_holder(path: Path) -> dict[str, Any]:
    """What the holder wrote into the lock file; {} when nothing (yet) or unreadable."""
    try:
        data = json.loads(Path(path).read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def lock_path(results: Path) -> Path:
    return Path(results) / LOCK_FILE


@contextmanager
def results_lock(results: Path, **holder: Any) -> Iterator[ResultsLock]:
    """Hold the results folder's lock for the block, or raise LockHeld at once (no wait).

    The holder removes the lock file as it releases it, so an ended run leaves nothing
    behind; a taker checks that the file it locked is still the one at the path (a
    holder may have removed it in between) and takes the new one if not."""
    path = lock_path(results)
    for _attempt in range(20):
        fd = _open(path, results)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(path, read_holder(path)) from None
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = -1
        if current == os.fstat(fd).st_ino:
            break
        os.close(fd)  # locked a file its holder had just removed: take the new one
    else:
        raise UserError(f"{path}: could not take the results folder's lock: try again")
    try:
        lock = ResultsLock(path, fd)
        lock.note(pid=os.getpid(), started_utc=stamp(utc_now()), **holder)
        try:
            yield lock
        finally:
            os.ftruncate(fd, 0)  # a reader of a kept file sees no holder, not a finished one
            path.unlink(missing_ok=True)  # still held: no one else has locked this file
    finally:
        os.close(fd)  # closing the last descriptor releases the flock


def _open(path: Path, results: Path) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise UserError(
            f"--results {results}: cannot write there ({e.strerror}): give a folder you can write"
        ) from None
