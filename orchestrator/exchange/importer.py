"""Importing measurements that other tools made: `interregion history import`.

An external CSV in the results schema (docs/results.md; `history convert` makes one from
the public data, orchestrator.exchange.public_data) is loaded as a dated, labelled source
of its own, one per network tier its rows name. A copy is kept under
`results/imports/<source>/<month>.csv` with what was asked (`<month>.json`), so the
store's `rebuild` loads it again (orchestrator.history.store reads those copies: the
store is derived data). The copies take their places only once the store holds the new
rows: a failed import leaves the store and the copies as they were.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, read_text
from orchestrator.history import (
    IMPORTS_DIR,
    OWN_SOURCES,
    import_batches,
    read_import_csv,
    store_path,
    write_batches,
)
from orchestrator.results import YEARS, not_a_regular_file, write_atomic

_SOURCE_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,39}$")
_MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")


def check_source_name(name: str) -> str:
    if name in OWN_SOURCES:
        raise UserError(
            f"--source {name}: that name is kept for interregion's own sweeps; "
            "name the publisher, e.g. skyplane or doit"
        )
    if not _SOURCE_NAME.fullmatch(name):
        raise UserError(
            f"--source '{name}': use lower-case letters, digits, '.', '_' or '-' "
            "(up to 40), e.g. skyplane"
        )
    return name


def check_month(date: str) -> str:
    found = _MONTH.fullmatch(date)
    if not found:
        raise UserError(f"--date '{date}': give the month the data was measured, as YYYY-MM")
    if not YEARS[0] <= int(found.group(1)) <= YEARS[1]:
        raise UserError(f"--date '{date}': give a year from {YEARS[0]} to {YEARS[1]}")
    return date


def previous_import(results: Path, source: str, month: str) -> dict[str, Any] | None:
    """What an import of `source` for `month` kept before (its file name, label); None."""
    meta_path = Path(results) / IMPORTS_DIR / source / f"{month}.json"
    try:
        meta = json.loads(read_text(meta_path, "JSON file"))
    except (FileNotFoundError, UserError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


@dataclass(frozen=True)
class Imported:
    """`history import`'s result: the rows loaded into `store`, and the file of the import
    it replaced (None: none)."""

    rows: int
    store: Path
    replaced: str | None


def import_source(
    results: Path, path: Path, source: str, month: str, label: str = "", replace: bool = False
) -> Imported:
    """`history import`'s use case: import_file, saying which import it replaced."""
    before = previous_import(results, source, month)
    rows = import_file(results, path, source, month, label, replace=replace)
    replaced = None if before is None else str(before.get("file", "?"))
    return Imported(rows, store_path(results), replaced)


def import_file(
    results: Path, path: Path, source: str, month: str, label: str = "", replace: bool = False
) -> int:
    """Load an external CSV as source `source`, dated `month`. A copy is kept under
    results/imports/<source>/<month>.csv so `rebuild` can load it again; importing the
    same source and month again needs `replace`. Returns the rows loaded."""
    check_source_name(source)
    check_month(month)
    before = previous_import(results, source, month)
    if before is not None and not replace:
        raise UserError(
            f"{source} {month} was imported before (from {before.get('file', '?')}): pass "
            "--replace to replace it, or give another --date or --source"
        )
    try:
        text = read_text(Path(path), "CSV file")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    rows = read_import_csv(text, str(path))
    batches = [b for b in import_batches(rows, source, month, label or source) if b.rows]
    if not batches:
        raise UserError(f"{path}: no row has a usable rtt_avg_ms or throughput_bps")
    folder = Path(results) / IMPORTS_DIR / source
    meta = {"source": source, "date": month, "label": label or source, "file": Path(path).name}
    # the copies are written beside the kept ones and take their places only once the
    # store has the new rows: a failed import leaves the store and the copies as they
    # were (none, for a first import), so a retry and a rebuild find what was there
    with _kept_beside(
        [
            (folder / f"{month}.csv", text),
            (folder / f"{month}.json", json.dumps(meta, indent=1) + "\n"),
        ]
    ) as swap_in:
        write_batches(results, batches, before_commit=swap_in)
    return sum(len(b.rows) for b in batches)


@contextlib.contextmanager
def _kept_beside(files: list[tuple[Path, str]]) -> Iterator[Any]:
    """Each (path, text) written whole beside `path`; the block calls the function it is
    given to move them into place (the old files kept aside). An exception in the block,
    before or after that call, puts the old files back (removes the new ones where there
    were none); at a normal end the old ones are removed."""
    tag = f"{os.getpid()}-{secrets.token_hex(3)}"
    new = [path.with_name(f".{path.name}.new-{tag}") for path, _ in files]
    old = [path.with_name(f".{path.name}.old-{tag}") for path, _ in files]
    placed: list[int] = []
    for path, _ in files:
        problem = not_a_regular_file(path)
        if problem:
            raise UserError(f"{path} is {problem}: move it away, then import again")
        path.parent.mkdir(parents=True, exist_ok=True)

    def swap_in() -> None:
        for i, (path, _) in enumerate(files):
            if os.path.lexists(path):
                os.replace(path, old[i])
            placed.append(i)
            os.replace(new[i], path)

    try:
        for (_, text), tmp in zip(files, new, strict=True):
            write_atomic(tmp, text)
        yield swap_in
    except BaseException:
        for i in reversed(placed):
            path = files[i][0]
            if os.path.lexists(old[i]):
                os.replace(old[i], path)
            else:
                path.unlink(missing_ok=True)
        for tmp in new:
            tmp.unlink(missing_ok=True)
        raise
    for path in old:
        path.unlink(missing_ok=True)
