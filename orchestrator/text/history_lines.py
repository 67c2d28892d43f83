"""The lines `interregion history ingest`, `history rebuild` and `history convert` print.

ingest_lines(done)     history.Ingested: the sweep's rows and store, then a line per
                       set of configuration fields that changed, with its pairs
filled_line(done)      history.Filled of `ingest --all`: sweeps, rows, the store
rebuilt_line(done)     history.Filled of `rebuild`: the store, sweeps, rows
converted_line(done)   exchange.Converted: rows, the file, the rows per flag
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.core import counted

if TYPE_CHECKING:
    from orchestrator.exchange import Converted
    from orchestrator.history import Filled, Ingested


def ingest_lines(done: Ingested) -> list[str]:
    return [f"{done.sweep_id}: {counted(done.rows, 'row')} in {done.store}"] + [
        f"configuration changed for {counted(pairs, 'pair')} since their previous test: "
        f"{'; '.join(fields) or 'fingerprint differs'}"
        for fields, pairs in done.config_changes
    ]


def filled_line(done: Filled) -> str:
    return f"{counted(done.sweeps, 'sweep')}, {counted(done.rows, 'row')} in {done.store}"


def rebuilt_line(done: Filled) -> str:
    return f"rebuilt {done.store}: {counted(done.sweeps, 'sweep')}, {counted(done.rows, 'row')}"


def converted_line(done: Converted) -> str:
    found = ", ".join(f"{n} {name}" for name, n in done.flagged.items() if n)
    return f"{counted(done.rows, 'row')} -> {done.out} (flagged: {found or 'none'})"
