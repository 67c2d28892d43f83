"""The TCP study (`interregion study tcp`): its plan of variants, how it runs, its estimate, its
report and the emulator's check of it.

Public API: the modules below; other packages import only these names
(`from orchestrator.study import check`), never a name starting with `_`.

- `check`: The emulator check of a TCP study (issue 13 part 4): does an emulated study show the
  relations its model says it should? Not evidence about clouds: the emulator is built from the
  same model. What bench/study.py prints and tests/e2e/test_study.py asserts.
- `estimate`: What a TCP study runs, in time, bytes and money: the sweep plan's estimate, redone
  for the study's own measure stage (orchestrator.study.run). Pure; nothing is measured.
- `plan`: The TCP study's plan: which variants of the forward test, how often, in which order, and
  with what buffers (issue 13). Pure functions; running it is orchestrator.study.run.
- `report`: A TCP study's results per pair, its recommendation, and the per cloud pair fit of
  throughput = min(cap, W / RTT): pure functions over study.csv's rows, then the files
  (study_summary.csv, study.md, study.html).
- `run`: Running a TCP study: the sweep's stages around a measure stage of its own.
- `tcp`: `study tcp`'s use case: `plan_tcp_study(TcpStudyRequest) -> TcpStudyPlan` (checked,
  planned, estimated; what the budget question reads), then `run_tcp_study` (made and run).
"""

__all__ = [
    "check",
    "estimate",
    "plan",
    "report",
    "run",
    "tcp",
]
