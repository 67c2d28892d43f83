"""Rows into a DuckDB table in one bulk read (executemany inserts them one by one)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import duckdb


def insert(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Mapping[str, str],
    rows: Iterable[Mapping[str, Any]],
) -> int:
    """Insert `rows` (dicts with the `columns`' names: name -> SQL type; missing keys
    and NaN are NULL) into `table` through a temporary JSON-lines file. Returns the
    rows inserted."""
    fd, tmp = tempfile.mkstemp(prefix="interregion-rows-", suffix=".jsonl")
    try:
        n = 0
        with os.fdopen(fd, "wb") as f:
            for row in rows:
                f.write(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE))
                n += 1
        if n:
            names = ", ".join(f'"{c}"' for c in columns)
            typed = ", ".join(f"'{c}': '{t}'" for c, t in columns.items())
            con.execute(
                f"INSERT INTO {table} ({names}) SELECT {names} FROM read_json(?, "
                f"format = 'newline_delimited', columns = {{{typed}}})",
                [tmp],
            )
        return n
    finally:
        Path(tmp).unlink(missing_ok=True)
