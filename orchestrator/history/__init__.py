"""History across sweeps: the DuckDB store and its views, change detection, configuration
fingerprints and change notifications (importing, converting and exporting measurements is
orchestrator.exchange's).

Public API: the modules below; other packages import only these names
(`from orchestrator.history import changes`), never a name starting with `_`.

- `change_report`: `interregion changes`' use case (`changes_report`), the change documents
  the CLI and the site show (`change_docs`), `history ingest --sweep`'s (`ingest_with_changes`).
- `changes`: Change detection per path, each run judged once, in time order (pure: no store).
- `continents`: The continent of each country of the catalog (ISO 3166 alpha-2): change detection
  groups one region's simultaneous path changes toward one continent into one event.
- `fingerprint`: The configuration fingerprint of a measurement: what must stay the same for two
  runs of a pair to be comparable.
- `histogram`: Log-binned histograms (the store's day summaries), and every percentile read from
  them.
- `judgments`: Change detection in the store: each run judged once, at ingest, and kept.
- `metrics`: The metrics of the views and the rules every view reads them by (which values,
  which flags, which statistics and windows, which sources).
- `notify`: Change notifications: one JSON document POSTed to a URL per new or closed episode.
- `store`: History across sweeps: one DuckDB file, `results/history.duckdb`.
- `views`: Views of the history store: one pair's series, and the From x To matrix (the use
  cases of `history show` and `matrix`).
- `windows`: Windows of the history store, and every statistic shown of them.
"""

__all__ = [
    "change_report",
    "changes",
    "continents",
    "fingerprint",
    "histogram",
    "judgments",
    "metrics",
    "notify",
    "store",
    "views",
    "windows",
]
