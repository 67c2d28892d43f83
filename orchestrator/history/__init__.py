"""History across sweeps: the DuckDB store and its views, change detection, configuration
fingerprints and change notifications (importing, converting and exporting measurements is
orchestrator.exchange's).

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.history import change_docs`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.history.change_report import (
        UNITS,
        ChangesReport,
        ChangesRequest,
        Ingested,
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
    from orchestrator.history.ingest import Filled, ingest_every_sweep, rebuild_history
    from orchestrator.history.judgments import detection, judge_runs
    from orchestrator.history.metrics import (
        MESH_WINDOWS,
        METRICS,
        PERCENTILE_RULE,
        PINGS_LOST_SQL,
        PINGS_SENT_SQL,
        QUANTILES,
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
        detectable_change,
        existing_results,
        format_value,
        matrix_csv_rows,
        matrix_report,
        pair_series,
        rule_in_force,
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
    "SITE_WINDOWS",
    "STATS",
    "UNITS",
    "CellTable",
    "ChangesReport",
    "ChangesRequest",
    "Detection",
    "Filled",
    "Ingested",
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
    "detectable_change",
    "detection",
    "empty_table",
    "every_pair_since",
    "existing_results",
    "format_value",
    "import_batches",
    "ingest_all",
    "ingest_every_sweep",
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
    "read_import_csv",
    "rebuild_history",
    "rebuild_store",
    "rule_in_force",
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


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
