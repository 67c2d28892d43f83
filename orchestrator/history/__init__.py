"""History across sweeps: the DuckDB store and its views, change detection, configuration
fingerprints and change notifications (importing, converting and exporting measurements is
orchestrator.exchange's).

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.history import change_docs`),
never a module of this package (tests/check_layers.py).

- `change_report`: `ChangesReport`, `ChangesRequest`, `UNITS`, `change_docs`, `changes_report`,
  `ingest_with_changes`.
- `changes`: `Detection`, `MAX_RUNS`, `Params`, `Run`, `SeriesKey`, `combined_calibration`.
- `judgments`: `detection`, `judge_runs`.
- `metrics`: `MESH_WINDOWS`, `METRICS`, `PERCENTILE_RULE`, `PINGS_LOST_SQL`, `PINGS_SENT_SQL`,
  `QUANTILES`, `SITE_STATS`, `STATS`, `SourceInfo`, `every_pair_since`, `iso_utc`,
  `loss_fields`, `loss_text`, `mesh_sources`, `min_samples`, `source_infos`, `valid_sql`,
  `window_bounds`.
- `store`: `HISTORY_FILE`, `IMPORTS_DIR`, `OWN_SOURCES`, `StoreBusy`, `import_batches`,
  `ingest_all`, `ingest_sweep`, `interrupt_queries`, `opened`, `parse_since`, `read_import_csv`,
  `rebuild_store`, `store_path`, `transaction`, `write_batches`.
- `views`: `CHANGE_RUNS`, `MATRIX_CSV_COLUMNS`, `MatrixRequest`, `PairSeries`, `SITE_WINDOWS`,
  `detectable`, `existing_results`, `format_value`, `matrix_csv_rows`, `matrix_report`,
  `pair_series`, `source_caption`, `with_store`.
- `windows`: `CellTable`, `NO_TIME`, `empty_table`, `pair_names`, `window_table`.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.history.change_report import (
        UNITS,
        ChangesReport,
        ChangesRequest,
        change_docs,
        changes_report,
        ingest_with_changes,
    )
    from orchestrator.history.changes import (
        MAX_RUNS,
        Detection,
        Params,
        Run,
        SeriesKey,
        combined_calibration,
    )
    from orchestrator.history.judgments import detection, judge_runs
    from orchestrator.history.metrics import (
        MESH_WINDOWS,
        METRICS,
        PERCENTILE_RULE,
        PINGS_LOST_SQL,
        PINGS_SENT_SQL,
        QUANTILES,
        SITE_STATS,
        STATS,
        SourceInfo,
        every_pair_since,
        iso_utc,
        loss_fields,
        loss_text,
        mesh_sources,
        min_samples,
        source_infos,
        valid_sql,
        window_bounds,
    )
    from orchestrator.history.store import (
        HISTORY_FILE,
        IMPORTS_DIR,
        OWN_SOURCES,
        StoreBusy,
        import_batches,
        ingest_all,
        ingest_sweep,
        interrupt_queries,
        opened,
        parse_since,
        read_import_csv,
        store_path,
        transaction,
        write_batches,
    )
    from orchestrator.history.store import rebuild as rebuild_store
    from orchestrator.history.views import (
        CHANGE_RUNS,
        MATRIX_CSV_COLUMNS,
        SITE_WINDOWS,
        MatrixRequest,
        PairSeries,
        detectable,
        existing_results,
        format_value,
        matrix_csv_rows,
        matrix_report,
        pair_series,
        source_caption,
        with_store,
    )
    from orchestrator.history.windows import (
        NO_TIME,
        CellTable,
        empty_table,
        pair_names,
        window_table,
    )

__all__ = [
    "CHANGE_RUNS",
    "HISTORY_FILE",
    "IMPORTS_DIR",
    "MATRIX_CSV_COLUMNS",
    "MAX_RUNS",
    "MESH_WINDOWS",
    "METRICS",
    "NO_TIME",
    "OWN_SOURCES",
    "PERCENTILE_RULE",
    "PINGS_LOST_SQL",
    "PINGS_SENT_SQL",
    "QUANTILES",
    "SITE_STATS",
    "SITE_WINDOWS",
    "STATS",
    "UNITS",
    "CellTable",
    "ChangesReport",
    "ChangesRequest",
    "Detection",
    "MatrixRequest",
    "PairSeries",
    "Params",
    "Run",
    "SeriesKey",
    "SourceInfo",
    "StoreBusy",
    "change_docs",
    "changes_report",
    "combined_calibration",
    "detectable",
    "detection",
    "empty_table",
    "every_pair_since",
    "existing_results",
    "format_value",
    "import_batches",
    "ingest_all",
    "ingest_sweep",
    "ingest_with_changes",
    "interrupt_queries",
    "iso_utc",
    "judge_runs",
    "loss_fields",
    "loss_text",
    "matrix_csv_rows",
    "matrix_report",
    "mesh_sources",
    "min_samples",
    "opened",
    "pair_names",
    "pair_series",
    "parse_since",
    "read_import_csv",
    "rebuild_store",
    "source_caption",
    "source_infos",
    "store_path",
    "transaction",
    "valid_sql",
    "window_bounds",
    "window_table",
    "with_store",
    "write_batches",
]

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "ChangesReport": ("orchestrator.history.change_report", "ChangesReport"),
    "ChangesRequest": ("orchestrator.history.change_report", "ChangesRequest"),
    "UNITS": ("orchestrator.history.change_report", "UNITS"),
    "change_docs": ("orchestrator.history.change_report", "change_docs"),
    "changes_report": ("orchestrator.history.change_report", "changes_report"),
    "ingest_with_changes": ("orchestrator.history.change_report", "ingest_with_changes"),
    "Detection": ("orchestrator.history.changes", "Detection"),
    "MAX_RUNS": ("orchestrator.history.changes", "MAX_RUNS"),
    "Params": ("orchestrator.history.changes", "Params"),
    "Run": ("orchestrator.history.changes", "Run"),
    "SeriesKey": ("orchestrator.history.changes", "SeriesKey"),
    "combined_calibration": ("orchestrator.history.changes", "combined_calibration"),
    "detection": ("orchestrator.history.judgments", "detection"),
    "judge_runs": ("orchestrator.history.judgments", "judge_runs"),
    "MESH_WINDOWS": ("orchestrator.history.metrics", "MESH_WINDOWS"),
    "METRICS": ("orchestrator.history.metrics", "METRICS"),
    "PERCENTILE_RULE": ("orchestrator.history.metrics", "PERCENTILE_RULE"),
    "PINGS_LOST_SQL": ("orchestrator.history.metrics", "PINGS_LOST_SQL"),
    "PINGS_SENT_SQL": ("orchestrator.history.metrics", "PINGS_SENT_SQL"),
    "QUANTILES": ("orchestrator.history.metrics", "QUANTILES"),
    "SITE_STATS": ("orchestrator.history.metrics", "SITE_STATS"),
    "STATS": ("orchestrator.history.metrics", "STATS"),
    "SourceInfo": ("orchestrator.history.metrics", "SourceInfo"),
    "every_pair_since": ("orchestrator.history.metrics", "every_pair_since"),
    "iso_utc": ("orchestrator.history.metrics", "iso_utc"),
    "loss_fields": ("orchestrator.history.metrics", "loss_fields"),
    "loss_text": ("orchestrator.history.metrics", "loss_text"),
    "mesh_sources": ("orchestrator.history.metrics", "mesh_sources"),
    "min_samples": ("orchestrator.history.metrics", "min_samples"),
    "source_infos": ("orchestrator.history.metrics", "source_infos"),
    "valid_sql": ("orchestrator.history.metrics", "valid_sql"),
    "window_bounds": ("orchestrator.history.metrics", "window_bounds"),
    "HISTORY_FILE": ("orchestrator.history.store", "HISTORY_FILE"),
    "IMPORTS_DIR": ("orchestrator.history.store", "IMPORTS_DIR"),
    "OWN_SOURCES": ("orchestrator.history.store", "OWN_SOURCES"),
    "StoreBusy": ("orchestrator.history.store", "StoreBusy"),
    "import_batches": ("orchestrator.history.store", "import_batches"),
    "ingest_all": ("orchestrator.history.store", "ingest_all"),
    "ingest_sweep": ("orchestrator.history.store", "ingest_sweep"),
    "interrupt_queries": ("orchestrator.history.store", "interrupt_queries"),
    "opened": ("orchestrator.history.store", "opened"),
    "parse_since": ("orchestrator.history.store", "parse_since"),
    "read_import_csv": ("orchestrator.history.store", "read_import_csv"),
    "rebuild_store": ("orchestrator.history.store", "rebuild"),
    "store_path": ("orchestrator.history.store", "store_path"),
    "transaction": ("orchestrator.history.store", "transaction"),
    "write_batches": ("orchestrator.history.store", "write_batches"),
    "CHANGE_RUNS": ("orchestrator.history.views", "CHANGE_RUNS"),
    "MATRIX_CSV_COLUMNS": ("orchestrator.history.views", "MATRIX_CSV_COLUMNS"),
    "MatrixRequest": ("orchestrator.history.views", "MatrixRequest"),
    "PairSeries": ("orchestrator.history.views", "PairSeries"),
    "SITE_WINDOWS": ("orchestrator.history.views", "SITE_WINDOWS"),
    "detectable": ("orchestrator.history.views", "detectable"),
    "existing_results": ("orchestrator.history.views", "existing_results"),
    "format_value": ("orchestrator.history.views", "format_value"),
    "matrix_csv_rows": ("orchestrator.history.views", "matrix_csv_rows"),
    "matrix_report": ("orchestrator.history.views", "matrix_report"),
    "pair_series": ("orchestrator.history.views", "pair_series"),
    "source_caption": ("orchestrator.history.views", "source_caption"),
    "with_store": ("orchestrator.history.views", "with_store"),
    "CellTable": ("orchestrator.history.windows", "CellTable"),
    "NO_TIME": ("orchestrator.history.windows", "NO_TIME"),
    "empty_table": ("orchestrator.history.windows", "empty_table"),
    "pair_names": ("orchestrator.history.windows", "pair_names"),
    "window_table": ("orchestrator.history.windows", "window_table"),
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        module, there = _LAZY[name]
        return getattr(importlib.import_module(module), there)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
