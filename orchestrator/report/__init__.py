"""The report of one or more sweeps: statistics on plain numbers, plotly charts, and the report
folder a sweep ends with.

Public API: the modules below; other packages import only these names
(`from orchestrator.report import analyze`), never a name starting with `_`.

- `analyze`: Statistics for the report: pure functions on plain sequences of floats.
- `build`: The report of one or more sweeps: read measurements, summarise, chart.
- `cache`: A sweep's computed report, kept so that a site over the same inputs does not compute it
  again: `results/.cache/report/<sweep id>.json`.
- `charts`: Plotly figures of a report: distance charts, heatmaps, the world map, time series.
- `make`: `make_report(ReportRequest, log) -> build.Report`: `interregion report`'s use case (the
  sources checked and read, filtered, the report written).
- `uncertainty`: How far a report's figures can be trusted: bootstrap intervals over pairs, the
  marks of a weak fit, and Wilson's interval of a loss rate.
"""

__all__ = [
    "analyze",
    "build",
    "cache",
    "charts",
    "make",
    "uncertainty",
]
