"""A sweep's results: the `measurements.csv` contract, the sweep's results folder, and pure
functions from tool output (iperf3, ping) to rows.

Public API: the modules below; other packages import only these names
(`from orchestrator.results import collect`), never a name starting with `_`.

- `collect`: From one round's raw agent outputs to measurements.csv rows (pure functions).
- `flags`: Physics and consistency checks on measurement rows: the `flags` column.
- `limiter`: What limited a throughput test: one pure function from a row, its iperf3 figures and
  the facts of its two hosts to a named limiter and the figures that decided it.
- `parse`: Tool output -> numbers: pure functions over the text iperf3 and ping printed.
- `ping_rows`: Rows of the ping phase: each source host's samples of its peers -> measurements
  rows.
- `record`: sweep.json as types: the sweep's record, read once into dataclasses and written back
  with the same keys, values and key order.
- `schema`: The results contract: columns of measurements.csv, one row per directed test.
- `tiers`: GCP network tiers as a key: a row's tier, its reverse, its name in a report.
- `stalls`: Host-wide stalls in a ping phase: samples that a host's machine delayed, not its
  paths.
- `store`: The results folder of a sweep: `results/<sweep-id>/`, written so a crash loses little.
"""

__all__ = [
    "collect",
    "flags",
    "limiter",
    "parse",
    "ping_rows",
    "record",
    "schema",
    "stalls",
    "store",
    "tiers",
]
