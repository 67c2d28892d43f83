"""Exporting the history store's rows: `interregion history export`.

Every stored row (from a UTC date or time on), with each test's ping samples, written
to one Parquet or CSV file (CSV times as measurements.csv writes them). An export never
replaces the store, a sweep's files, or any file it did not write itself.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.core import UserError
from orchestrator.history import HISTORY_FILE, opened, store_path, with_store
from orchestrator.results import HOSTS_FILE, MEASUREMENTS_FILE, SWEEP_FILE, not_a_regular_file

if TYPE_CHECKING:
    import duckdb

_SWEEP_FILES = (SWEEP_FILE, MEASUREMENTS_FILE, HOSTS_FILE)


def _check_export_target(
    results: Path, out: Path, fmt: str, columns: list[str], con: duckdb.DuckDBPyConnection
) -> None:
    """UserError unless `out` is new or an earlier export in `fmt` (the same columns): an
    export never replaces the store, a sweep's files, or any file it did not write."""
    if not out.exists():
        return
    store_file = store_path(results)
    for own in (store_file, store_file.with_name(store_file.name + ".wal")):
        with contextlib.suppress(OSError):
            if os.path.samefile(out, own):
                raise UserError(f"--out {out} is the history store itself: give a new file")
    if out.name in _SWEEP_FILES or out.name == HISTORY_FILE:
        raise UserError(f"--out {out} is a sweep's {out.name}: give a new file")
    if _earlier_export(out, fmt, columns, con):
        return
    raise UserError(
        f"--out {out} exists and is not an earlier 'history export --format {fmt}': "
        "give a new file, or remove that one first"
    )


def _earlier_export(
    out: Path, fmt: str, columns: list[str], con: duckdb.DuckDBPyConnection
) -> bool:
    """Whether `out` is a file this export wrote: a CSV whose first line is the export's
    header, or a Parquet file with the export's columns."""
    import duckdb

    try:
        with out.open("rb") as f:
            head = f.read(64 * 1024)
    except OSError:
        return False
    if fmt == "csv":
        return head.split(b"\n", 1)[0].rstrip(b"\r") == ",".join(columns).encode()
    if not head.startswith(b"PAR1"):
        return False
    try:
        found = con.execute("SELECT * FROM read_parquet(?) LIMIT 0", [str(out)]).description
    except duckdb.Error:
        return False
    return [d[0] for d in found] == columns


EXPORT_FORMATS = ("parquet", "csv")


def export(results: Path, out: Path, fmt: str, since: datetime | None = None) -> int:
    """Write every stored row (from `since`, a UTC date or time) to `out`. Returns rows."""
    with_store(results)  # a missing folder or store: one line, whose hint runs as printed
    if fmt not in EXPORT_FORMATS:
        raise UserError(f"--format {fmt}: one of {', '.join(EXPORT_FORMATS)}")
    # the store's times are naive UTC TIMESTAMPs
    since_ts = since.astimezone(UTC).replace(tzinfo=None) if since else None
    where = "WHERE started_utc >= CAST(? AS TIMESTAMP)" if since_ts else ""
    params = [since_ts] if since_ts else []
    # CSV times as measurements.csv writes them (ISO 8601, milliseconds, Z); Parquet
    # keeps its typed timestamps
    options = (
        "FORMAT parquet"
        if fmt == "parquet"
        else "FORMAT csv, HEADER true, TIMESTAMPFORMAT '%Y-%m-%dT%H:%M:%S.%gZ'"
    )
    import duckdb

    out = Path(out)
    problem = not_a_regular_file(out)
    if problem:  # renamed over, a FIFO or a device would be replaced by a plain file
        raise UserError(f"--out {out} is {problem}: give the path of a regular file, or a new one")
    tmp = out.with_name(f".{out.name}.tmp")
    with opened(results, read_only=True) as con:
        # the rows as measured: not the RTT the store computes of each (rtt_run_ms)
        rows = "SELECT * EXCLUDE (rtt_run_ms) FROM measurements"
        columns = [d[0] for d in con.execute(f"{rows} LIMIT 0").description]
        _check_export_target(results, out, fmt, columns, con)
        (count,) = con.execute(f"SELECT count(*) FROM measurements {where}", params).fetchone() or (
            0,
        )
        query = f"{rows} {where} ORDER BY started_utc, sweep_id, src, dst"
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            con.execute(f"COPY ({query}) TO '{_quoted(tmp)}' ({options})", params)
            os.replace(tmp, out)
        except (OSError, duckdb.IOException) as e:
            with contextlib.suppress(OSError):
                tmp.unlink()
            why = getattr(e, "strerror", None) or str(e).splitlines()[0]
            raise UserError(
                f"--out {out}: cannot write it ({why}): give a file in a folder you can write"
            ) from None
    return int(count)


def _quoted(path: Path) -> str:
    return str(path).replace("'", "''")
