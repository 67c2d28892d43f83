"""`history ingest --all`'s and `history rebuild`'s use cases: every sweep and import of a
results folder into its store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.history.store import ingest_all, rebuild, store_path
from orchestrator.history.views import existing_results


@dataclass(frozen=True)
class Filled:
    """What a store now holds from the folder: its sweeps, its rows, and where it is."""

    sweeps: int
    rows: int
    store: Path


def ingest_every_sweep(results: Path, warn: Callable[[str], None], replace: bool = False) -> Filled:
    """Every sweep and import under `results` (a folder that must exist) into its store."""
    sweeps, rows = ingest_all(existing_results(results), warn=warn, replace=replace)
    return Filled(sweeps, rows, store_path(results))


def rebuild_history(results: Path, warn: Callable[[str], None]) -> Filled:
    """The store of `results` (a folder that must exist) recreated from its sweeps and
    imports alone."""
    sweeps, rows = rebuild(existing_results(results), warn=warn)
    return Filled(sweeps, rows, store_path(results))
