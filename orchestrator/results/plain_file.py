"""A plain measurements.csv, and the mark its writer leaves beside it.

A plain file is what csv.writer writes of this version's columns when no cell needs
quoting: the header `MEASUREMENT_COLUMNS`, then lines of printable ASCII without a
quote, each ending in a newline, whose numeric cells are empty or plain decimals
(`PUBLISHED_NUMBER`; `rtt_samples`, which the report reads too, a `PLAIN_NUMBER`), whose
start is empty or a UTC time (`STAMP`) and whose source cloud is not blank: `PLAIN_LINE`
matches each of its lines. The report reads such a file by its numbers and names at
once, and a site may publish it as it is; any other file has each cell checked
(report.build).

Our writer checks the text it writes (`plain_rows`) and, when it is plain, writes
`measurements.plain.json` beside it (files.write_measurements, `mark_text`): the number
of rows and the file's size, modification and change times and inode as it left it.
`marked_rows` gives that number only while the file is the one it marked; a file
written, touched, replaced or copied since is checked in full, as an unmarked one is.
The mark states a fact of the file, never a result: deleting it changes no output, only
the time taken.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from orchestrator.results.schema import MEASUREMENT_COLUMNS, NUMERIC_COLUMNS

PLAIN_MARK = "measurements.plain.json"  # beside measurements.csv
_MARK_FORMAT = 1

HEADER_LINE = ",".join(MEASUREMENT_COLUMNS) + "\n"
# A number as float() and DuckDB read it alike.
PLAIN_NUMBER = r"[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?"
# A numeric cell a site publishes as it is: a plain decimal, small enough to be finite
# (at most 30 digits each side of the point, a two-digit exponent): float() reads it.
PUBLISHED_NUMBER = r"[0-9]{1,30}(\.[0-9]{0,30})?([eE][-+]?[0-9]{1,2})?"
STAMP = r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?Z"
# A cell of a plain line: printable ASCII but the quote and the comma; FILLED: not blank.
TEXT = r"[\x20\x21\x23-\x2b\x2d-\x7e]*"
FILLED = r"[\x20\x21\x23-\x2b\x2d-\x7e]*[\x21\x23-\x2b\x2d-\x7e][\x20\x21\x23-\x2b\x2d-\x7e]*"


# Read by the report as numbers too, beside NUMERIC_COLUMNS: a test's count of pings.
_COUNTS = ("rtt_samples",)


def _cell(name: str) -> str:
    if name in NUMERIC_COLUMNS:
        return f"(?:{PUBLISHED_NUMBER})?"
    if name in _COUNTS:
        return f"(?:{PLAIN_NUMBER})?"
    if name == "started_utc":
        return f"(?:{STAMP})?"
    return FILLED if name == "src_cloud" else TEXT


# What each line of a plain file after its header matches (RE2, DuckDB's, and Python's
# re read it alike: classes, counts and optional groups only).
PLAIN_LINE = ",".join(_cell(name) for name in MEASUREMENT_COLUMNS)
_LINE = re.compile(PLAIN_LINE)


def plain_rows(text: str) -> int | None:
    """The number of rows of a measurements.csv's `text` when it is plain; else None."""
    if not text.startswith(HEADER_LINE) or not text.endswith("\n"):
        return None
    body = text[len(HEADER_LINE) : -1]
    if not body:
        return 0 if len(text) == len(HEADER_LINE) else None
    lines = body.split("\n")
    fullmatch = _LINE.fullmatch
    for line in lines:
        if fullmatch(line) is None:
            return None
    return len(lines)


def _identity(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def mark_text(path: Path, rows: int) -> str:
    """The mark of the plain file `path` of `rows` rows, as it is now (just written)."""
    return json.dumps({"format": _MARK_FORMAT, "rows": rows, "file": _identity(path)}) + "\n"


def marked_rows(path: Path) -> int | None:
    """The rows of the plain file `path` when its mark describes it as it is now; None
    when there is no mark, it cannot be read, or the file changed since (then every
    line is checked)."""
    path = Path(path)
    try:
        doc = json.loads(path.with_name(PLAIN_MARK).read_text(encoding="utf-8"))
        if (
            isinstance(doc, dict)
            and doc.get("format") == _MARK_FORMAT
            and doc.get("file") == _identity(path)
            and isinstance(doc.get("rows"), int)
            and not isinstance(doc["rows"], bool)
            and doc["rows"] >= 0
        ):
            return int(doc["rows"])
    except (OSError, ValueError):
        pass
    return None
