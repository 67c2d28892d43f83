"""The text faces of the use cases' results: the tables and lines `interregion` prints.

`orchestrator.cli` parses a command's options, calls one use case (in the package that
owns the job) and hands its typed result to a renderer here; the JSON forms come from the
results themselves. Renderers only format: no query, no loop over tests, no file read.

Public API: the modules below; other packages import only these names, never a name
starting with `_`.

- `cloud_lines`: `preflight`, `regions sync` and `reap`.
- `emulator_lines`: `emulator up`, `perturb` and `status`.
- `plan_table`: `plan`'s tables (rich), `plan --mesh`'s lines and `regions`' table.
- `schedule_lines`: `schedule list`, a tick's ledger line, `schedule install --dry-run`.
- `sweep_lines`: a sweep's plan line and end, `mesh status` and `mesh matrix`.
"""

__all__ = ["cloud_lines", "emulator_lines", "plan_table", "schedule_lines", "sweep_lines"]
