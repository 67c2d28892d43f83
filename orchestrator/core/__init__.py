"""Foundations every layer uses: errors a user can act on, where the project's files live,
order statistics, geodesic distances, UTC times, and output folders that appear whole.

Public API: the modules below; other packages import only these names
(`from orchestrator.core import durations`), never a name starting with `_`.

- `durations`: One grammar for every duration a user writes: ISO 8601 or short units.
- `errors`: Errors a user can act on, and the exit codes they end the command with.
- `geo`: Distances between regions: geodesic on the WGS-84 ellipsoid (geopy).
- `grammar`: The grammars of values that reach a file we generate, checked where they enter.
- `log`: Log lines on stderr: a UTC time, a level, the message.
- `outdir`: Output folders that appear whole: build beside the target, then swap it in.
- `paths`: Where the project's files live. Everything else takes paths as arguments.
- `stats`: Order statistics of plain samples: percentiles and the median.
- `times`: Times, parsed once where they enter and formatted once where they leave.
- `textfile`: Reading the files a user gives us: text only, UTF-8 only, and YAML without surprises.
"""

__all__ = [
    "durations",
    "errors",
    "geo",
    "grammar",
    "log",
    "outdir",
    "paths",
    "stats",
    "textfile",
    "times",
]
