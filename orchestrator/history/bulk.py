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


# an aware UTC datetime written with a Z, which DuckDB reads into a TIMESTAMP faster than
# an offset (change detection's judgments: 12,000 a sweep)
_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_UTC_Z


def table_sql(name: str, columns: Mapping[str, str], create: str = "CREATE TABLE") -> str:
    """`create` (or CREATE OR REPLACE TEMP TABLE, ...) of table `name` with `columns`."""
    return f"{create} {name} (" + ", ".join(f'"{c}" {t}' for c, t in columns.items()) + ")"


def insert(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: Mapping[str, str],
    rows: Iterable[Mapping[str, Any]],
) -> None:
    """Insert `rows` (dicts with the `columns`' names: name -> SQL type; missing keys
    and NaN are NULL; an aware UTC datetime fills a TIMESTAMP) into `table` through a
    temporary JSON-lines file."""
    fd, tmp = tempfile.mkstemp(prefix="interregion-rows-", suffix=".jsonl")
    try:
        n = 0
        with os.fdopen(fd, "wb") as f:
            for row in rows:
                f.write(orjson.dumps(row, option=_OPTIONS))
                n += 1
        if n:
            names = ", ".join(f'"{c}"' for c in columns)
            typed = ", ".join(f"'{c}': '{t}'" for c, t in columns.items())
            con.execute(
                f"INSERT INTO {table} ({names}) SELECT {names} FROM read_json(?, "
                f"format = 'newline_delimited', columns = {{{typed}}})",
                [tmp],
            )
    finally:
        Path(tmp).unlink(missing_ok=True)
