"""Retention: old sweeps lose their raw/ and state/ folders, never their results.

measurements.csv and sweep.json (and hosts.json, the report) stay forever; raw/
(every host's tool output) and state/ (keys, Terraform state, logs) go once a sweep
is older than `keep_raw_days`. A sweep that has not finished keeps everything: its
state/ is what tears its hosts down.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from orchestrator.core import remove_within, within
from orchestrator.results import RAW_DIR, STATE_DIR, SWEEP_FILE, read_record


def expired_folders(
    results: Path,
    keep_raw_days: float,
    now: datetime,
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    """raw/ and state/ folders of finished sweeps created before now - keep_raw_days. A
    sweep whose record cannot be read may still be running, so it is kept, and `warn`
    is told so."""
    cutoff = now - timedelta(days=keep_raw_days)
    found: list[Path] = []
    for path in sorted(Path(results).glob(f"*/{SWEEP_FILE}")):
        if not within(results, path.parent):
            # a sweep folder that is a link holds another folder's raw/ and state/
            if warn is not None:
                warn(
                    f"retention kept {path.parent.name}: it is a symlink, and retention "
                    "deletes only in folders of the results folder itself"
                )
            continue
        record = read_record(path)
        if record is None:
            if warn is not None:
                warn(
                    f"retention kept {path.parent.name}: its {SWEEP_FILE} cannot be "
                    "read; repair it, or remove the folder once it is not running"
                )
            continue
        if not record.status.finished:
            continue
        if record.created_utc >= cutoff:
            continue
        for name in (RAW_DIR, STATE_DIR):
            folder = path.parent / name
            if folder.is_dir() and within(results, folder):
                found.append(folder)
    return found


def apply_retention(
    results: Path,
    keep_raw_days: float,
    now: datetime,
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    """Delete the expired raw/ and state/ folders; returns what was deleted."""
    folders = expired_folders(results, keep_raw_days, now, warn)
    return [folder for folder in folders if remove_within(results, folder)]
