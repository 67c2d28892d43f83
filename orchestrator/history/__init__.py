"""History across sweeps: the DuckDB store and its views, change detection, configuration
fingerprints, change notifications, and imports of the public measurements.

Public API: the modules below; other packages import only these names
(`from orchestrator.history import changes`), never a name starting with `_`.

- `changes`: Change detection per directed pair over per-run values (pure: no store, no clock).
- `fingerprint`: The configuration fingerprint of a measurement: what must stay the same for two
  runs of a pair to be comparable.
- `notify`: Change notifications: one JSON document POSTed to a URL per new or closed episode.
- `public_data`: Converters: the public AWS/GCP measurements vendored in data/ -> our CSV schema.
- `store`: History across sweeps: one DuckDB file, `results/history.duckdb`.
- `views`: Views of the history store: one pair's series, and the From x To matrix.
"""

__all__ = [
    "changes",
    "fingerprint",
    "notify",
    "public_data",
    "store",
    "views",
]
