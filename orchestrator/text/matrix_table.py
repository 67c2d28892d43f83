"""`interregion matrix`'s text: one From x To table per source, captioned with its source.

`render(doc)` takes history.views.matrix's document and returns the parts to print (the
caption lines and a rich Table per source); `csv_text(doc)` its long rows as CSV (`--csv`).
"""

from __future__ import annotations

import csv
import io
from typing import Any

from rich.table import Table

from orchestrator.history import MATRIX_CSV_COLUMNS, format_value, matrix_csv_rows, source_caption
from orchestrator.netmodel import rate_scale_tag
from orchestrator.text.terminal import Part

WIDTH = 400  # without a terminal: a table of many regions is wide


def render(doc: dict[str, Any]) -> list[Part]:
    unit = "Mbit/s" if doc["unit"] == "bit/s" else doc["unit"]
    parts: list[Part] = []
    for mx in doc["matrices"]:
        span = (
            f"(each pair's newest test, up to {mx['window_end_utc']})"
            if doc["window"] == "latest"
            else f"{mx['window_start_utc'] or 'start'} .. {mx['window_end_utc']}"
        )
        shown = f"{unit}, {rate_scale_tag()}" if mx.get("rate_scale") else unit
        parts.append(
            f"{doc['metric']} {doc['stat']} ({shown}), window {doc['window']} {span}; "
            f"{source_caption(mx)}"
        )
        if mx.get("flagged_tests"):  # none in the detectable matrix
            parts.append(
                f"{mx['flagged_tests']} flagged tests left out: their flags invalidate their "
                f"{doc['metric']} (docs/results.md, 'Flags'); --include-flagged keeps them"
            )
        if doc["metric"] == "loss" and mx["cells"]:
            parts.append(
                f"below each {doc['stat']}: the window's pings lost / sent (%) "
                "with its Wilson 95 % interval (low-high)"
            )
        parts.append(_table(doc, mx) if mx["cells"] else "no tests in the window")
    return parts


def _table(doc: dict[str, Any], mx: dict[str, Any]) -> Table:
    cells = {(c["src"], c["dst"]): cell_text(doc, c) for c in mx["cells"]}
    # the matrix's own order (by cloud, then west to east), as on the site
    srcs = [r for r in mx["regions"] if any(c["src"] == r for c in mx["cells"])]
    dsts = [r for r in mx["regions"] if any(c["dst"] == r for c in mx["cells"])]
    table = Table()
    table.add_column("From \\ To")
    for d in dsts:
        table.add_column(d, justify="right")
    for s in srcs:
        table.add_row(s, *(cells.get((s, d), "") for d in dsts))
    return table


def cell_text(doc: dict[str, Any], cell: dict[str, Any]) -> str:
    """A matrix cell as text: its statistic; for loss, the window's pooled loss and its
    Wilson interval below it."""
    text = format_value(cell["value"], doc["unit"])
    if doc["metric"] == "loss" and cell.get("loss_pct") is not None:
        text += f"\n{cell['loss_pct']:.2f} ({cell['loss_low_pct']:.2f}-{cell['loss_high_pct']:.2f})"
    return text


def csv_text(doc: dict[str, Any]) -> str:
    """One CSV row per directed pair and source, under a header."""
    out = io.StringIO()
    writer = csv.DictWriter(out, MATRIX_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(matrix_csv_rows(doc))
    return out.getvalue()
