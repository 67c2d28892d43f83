"""The text faces of the use cases' results: the tables and lines `interregion` prints.

`orchestrator.cli` parses a command's options, calls one use case (in the package that
owns the job) and hands its typed result to a renderer here; the JSON forms come from the
results themselves. Renderers only format: no query, no loop over tests, no file read.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.text import console`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.text.advice_table import render as render_advice_table
    from orchestrator.text.change_lines import render as render_change_lines
    from orchestrator.text.cloud_lines import preflight_lines, reap_lines, sync_lines
    from orchestrator.text.demo_outcome import passed_line as demo_passed_line
    from orchestrator.text.demo_outcome import render as render_demo_outcome
    from orchestrator.text.emulator_lines import (
        down_line,
        perturbed_lines,
        reaped_lines,
        up_lines,
    )
    from orchestrator.text.emulator_lines import status_lines as emulator_status_lines
    from orchestrator.text.history_lines import (
        converted_line,
        filled_line,
        ingest_lines,
        rebuilt_line,
    )
    from orchestrator.text.matrix_table import WIDTH as MATRIX_WIDTH
    from orchestrator.text.matrix_table import csv_text
    from orchestrator.text.matrix_table import render as render_matrix_table
    from orchestrator.text.pair_series import render as render_pair_series
    from orchestrator.text.plan_table import mesh_plan_lines, plan_tables, regions_table
    from orchestrator.text.report_tables import render as render_report_tables
    from orchestrator.text.schedule_lines import reaped_line as reaped_sweeps_line
    from orchestrator.text.schedule_lines import status_lines as schedule_status_lines
    from orchestrator.text.schedule_lines import tick_line, written_lines
    from orchestrator.text.sweep_lines import (
        Announcement,
        announcement,
        done_lines,
        mesh_matrix_lines,
        mesh_status_lines,
    )
    from orchestrator.text.terminal import WIDTH as TERMINAL_WIDTH
    from orchestrator.text.terminal import console, print_parts

__all__ = [
    "MATRIX_WIDTH",
    "TERMINAL_WIDTH",
    "Announcement",
    "announcement",
    "console",
    "converted_line",
    "csv_text",
    "demo_passed_line",
    "done_lines",
    "down_line",
    "emulator_status_lines",
    "filled_line",
    "ingest_lines",
    "mesh_matrix_lines",
    "mesh_plan_lines",
    "mesh_status_lines",
    "perturbed_lines",
    "plan_tables",
    "preflight_lines",
    "print_parts",
    "reap_lines",
    "reaped_lines",
    "reaped_sweeps_line",
    "rebuilt_line",
    "regions_table",
    "render_advice_table",
    "render_change_lines",
    "render_demo_outcome",
    "render_matrix_table",
    "render_pair_series",
    "render_report_tables",
    "schedule_status_lines",
    "sync_lines",
    "tick_line",
    "up_lines",
    "written_lines",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
