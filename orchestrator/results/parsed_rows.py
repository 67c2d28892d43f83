"""The rows of a measurements.csv that parse, copied: what the site publishes as a
sweep's download (the report's SQL tells which files are already all such rows:
report.build, cache.Products.verbatim_rows)."""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from orchestrator.results.schema import MEASUREMENT_COLUMNS, NUMERIC_COLUMNS


def write_parsed_rows(src: Path, dest: Path) -> tuple[int, int]:
    """Copy the rows of a sweep's measurements.csv that parse to `dest` (columns
    MEASUREMENT_COLUMNS); returns (rows written, rows left out). A row is left out
    when its width differs from the header's, a numeric cell is not a number >= 0,
    or it is the last line and has no newline (the file was cut while written).
    Streams: a million rows never sit in memory."""
    cut = _last_byte(src) not in (b"\n", b"")
    written = dropped = 0
    tmp = dest.with_name(dest.name + ".tmp")
    with (
        src.open(newline="", encoding="utf-8-sig") as f,
        tmp.open("w", newline="", encoding="utf-8") as g,
    ):
        reader = csv.reader(f)
        writer = csv.writer(g, lineterminator="\n")
        writer.writerow(MEASUREMENT_COLUMNS)
        header = [name.strip() for name in next(reader, [])]
        index = [header.index(c) if c in header else -1 for c in MEASUREMENT_COLUMNS]
        same = index == list(range(len(header)))  # the columns as they are: rows as read
        numeric = [i for i, name in enumerate(header) if name in NUMERIC_COLUMNS]
        # a row of blank cells is no row (one join and strip, not a strip per cell)
        records = (cells for cells in reader if "".join(cells).strip())
        for cells, is_last in _flag_last(records):
            if (is_last and cut) or len(cells) != len(header) or not _numbers_ok(numeric, cells):
                dropped += 1
                continue
            writer.writerow(cells if same else [cells[i] if i >= 0 else "" for i in index])
            written += 1
    os.replace(tmp, dest)
    return written, dropped


def _flag_last(items: Iterator[list[str]]) -> Iterator[tuple[list[str], bool]]:
    """(item, is it the last one?) for each item, reading one ahead."""
    previous = next(items, None)
    if previous is None:
        return
    for item in items:
        yield previous, False
        previous = item
    yield previous, True


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as f:
        if f.seek(0, os.SEEK_END) == 0:
            return b""
        f.seek(-1, os.SEEK_END)
        return f.read(1)


def _numbers_ok(numeric: Sequence[int], cells: Sequence[str]) -> bool:
    """Every cell at the `numeric` positions empty or a number >= 0."""
    for i in numeric:
        cell = cells[i]
        if cell.strip():
            try:
                value = float(cell)
            except ValueError:
                return False
            if not 0.0 <= value < math.inf:
                return False
    return True
