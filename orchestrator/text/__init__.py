"""The text faces of the use cases' results: the tables and lines `interregion` prints.

`orchestrator.cli` parses a command's options, calls one use case (in the package that
owns the job) and hands its typed result to a renderer here; the JSON forms come from the
results themselves. Renderers only format: no query, no loop over tests, no file read.

Public API: the modules below; other packages import only these names, never a name
starting with `_`.

- `advice_table`: `render(doc)`: `advise`'s lines and table.
- `change_lines`: `render(report, calibration)`: `changes`' lines (a ChangesReport).
- `cloud_lines`: `preflight`, `regions sync` and `reap`.
- `demo_outcome`: `render(outcome)`: `demo`'s closing lines.
- `emulator_lines`: `emulator up`, `perturb`, `status` and `reap`.
- `matrix_table`: `render(doc)`, `csv_text(doc)`: `matrix`'s tables, or its CSV.
- `pair_series`: `render(series)`: `history show`'s lines (history.views.PairSeries).
- `plan_table`: `plan`'s tables (rich), `plan --mesh`'s lines and `regions`' table.
- `report_tables`: `render(report)`: `report`'s tables and lines (report.build.Report).
- `schedule_lines`: `schedule list`, a tick's ledger line, `schedule install --dry-run`.
- `sweep_lines`: a sweep's plan line and end, `mesh status` and `mesh matrix`.
- `terminal`: `console`, `print_parts`, `WIDTH`: the parts printed, lines as given and tables
  drawn, at the terminal's width or a fixed one.
"""

__all__ = [
    "advice_table",
    "change_lines",
    "cloud_lines",
    "demo_outcome",
    "emulator_lines",
    "matrix_table",
    "pair_series",
    "plan_table",
    "report_tables",
    "schedule_lines",
    "sweep_lines",
    "terminal",
]
