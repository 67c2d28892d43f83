"""`interregion report`'s text: the summary by cloud pair, its 95 % intervals, the notes,
the rows used and skipped, the outliers, where the report went.

`render(report)` takes report.build.Report and returns the parts to print (rich markup in
the lines: print them with markup).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.table import Table

from orchestrator.netmodel import rate_scale_tag
from orchestrator.report import RTT_DEFINITION, TABLE_NOTE, display_cell, table_cells
from orchestrator.report import report_notes as notes
from orchestrator.text.terminal import Part

if TYPE_CHECKING:
    from orchestrator.report import Report

Columns = tuple[tuple[str, str, str], ...]  # (title, summary.csv column, format)
SUMMARY: Columns = (
    ("pair", "cloud_pair", "{}"),
    ("n", "n", "{:d}"),
    ("inflation median", "route_inflation_median", "{:.2f}"),
    ("p25", "route_inflation_p25", "{:.2f}"),
    ("p75", "route_inflation_p75", "{:.2f}"),
    ("Pearson r", "rtt_distance_r", "{:.3f}"),
    ("Spearman", "rtt_distance_spearman", "{:.3f}"),
    ("RTT ms @0", "rtt_intercept", "{}"),
    ("ms/1000km", "rtt_slope_ms_per_1000km", "{:.2f}"),
    ("r log tput", "log_throughput_distance_r", "{:.3f}"),
    ("RTT median over tests", "rtt_median_over_tests_ms", "{:.1f}"),
    ("RTT p90 over tests", "rtt_p90_over_tests_ms", "{:.1f}"),
    ("Mbit/s median over tests", "throughput_median_over_tests_bps", "{:.1f}"),
)
INTERVALS: Columns = (
    ("pair", "cloud_pair", "{}"),
    ("n", "n", "{:d}"),
    ("pairs", "pairs", "{:d}"),
    ("inflation median", "route_inflation_median", "{:.2f}"),
    ("its CI", "route_inflation_median_ci", "{}"),
    ("RTT median over tests", "rtt_median_over_tests_ms", "{:.1f}"),
    ("its CI", "rtt_median_ci", "{}"),
    ("Mbit/s median", "throughput_median_over_tests_bps", "{:.1f}"),
    ("its CI", "throughput_median_ci", "{}"),
    ("ms/1000km", "rtt_slope_ms_per_1000km", "{:.2f}"),
    ("its CI", "rtt_slope_ci", "{}"),
    ("RTT ms @0", "rtt_intercept", "{}"),
    ("fit marks", "rtt_fit_marks", "{}"),
)


def render(result: Report) -> list[Part]:
    loaded = result.loaded
    label = " [bold red](EMULATED)[/]" if loaded.emulated else ""
    columns = SUMMARY
    if loaded.emulated:  # an emulated rate says its scale beside it
        columns = (*SUMMARY[:-1], (f"{SUMMARY[-1][0]} ({rate_scale_tag()})", *SUMMARY[-1][1:]))
    parts: list[Part] = [
        _table(f"Summary by cloud pair{label}", columns, ("pair",), result.summaries),
        _table(
            f"How sure: 95 % intervals over region pairs{label}",
            INTERVALS,
            ("pair", "fit marks"),
            [s for s in result.summaries if s.n],
        ),
        f"RTT: {RTT_DEFINITION}. Inflation: RTT over the fibre floor 2 x distance / (c x 2/3). "
        "Fit: Theil-Sen, intercept >= 0, slope >= 10.007 ms per 1000 km (the fibre's). "
        "-: not measured/flagged. " + TABLE_NOTE,
        *notes(loaded),
    ]
    skipped = ", ".join(f"{n} {why}" for why, n in loaded.skipped.most_common())
    parts.append(
        f"{len(loaded.data)} of {loaded.rows_read} measurements used"
        + (f"; skipped: {skipped}" if skipped else "")
    )
    if loaded.unknown_regions:
        names = ", ".join(f"{k} ({n})" for k, n in loaded.unknown_regions.most_common(10))
        more = len(loaded.unknown_regions) - 10
        parts.append(
            f"unknown regions (not in the catalog, rows skipped): {names}"
            + (f" and {more} more" if more > 0 else "")
        )
    if result.outliers:
        parts.append(f"{len(result.outliers)} outliers (RTT far from the pair's fit):")
        for o in result.outliers[:10]:
            side = "above" if o.excess_ms > 0 else "below"
            parts.append(
                f"  {o.src} → {o.dst}: {o.rtt_ms:.1f} ms at {o.distance_km:.0f} km, "
                f"{abs(o.excess_ms):.1f} ms {side} the fit"
            )
    else:
        parts.append("no outliers (no pair's RTT is far from its cloud pair's fit)")
    parts.append(f"report: {result.out_dir}")
    if result.png_skipped:
        parts.append(f"PNG charts: skipped ({result.png_skipped})")
    return parts


def _table(title: str, columns: Columns, left: tuple[str, ...], summaries: Iterable[Any]) -> Table:
    """A row per summary (analyze.GroupSummary), its intervals as ranges (table_cells)."""
    table = Table(title=title)
    for name, _key, _fmt in columns:
        table.add_column(name, justify="left" if name in left else "right")
    for s in summaries:
        row = s.row()
        row.update(table_cells(row))
        table.add_row(*(display_cell(key, row[key], fmt) for _name, key, fmt in columns))
    return table
