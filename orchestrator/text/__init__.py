"""The text faces of the use cases' results: the tables and lines `interregion` prints.

`orchestrator.cli` parses a command's options, calls one use case (in the package that
owns the job) and hands its typed result to a renderer here; the JSON forms come from the
results themselves. Renderers only format: no query, no loop over tests, no file read.

Public API: the modules below; other packages import only these names, never a name
starting with `_`.
"""

__all__: list[str] = []
