"""The report of one or more sweeps: statistics on plain numbers, plotly charts, and the report
folder a sweep ends with.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.report import build_report`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.report.analyze import (
        GROUPS,
        INFLATION_MIN_KM,
        OUTLIER_COLUMNS,
        OUTLIER_DOCS,
        OUTLIER_MIN_EXCESS_MS,
        SUMMARY_COLUMNS,
        SUMMARY_DOCS,
        GroupSummary,
        PairOutlier,
    )
    from orchestrator.report.build import (
        RTT_DEFINITION,
        Report,
        build_report,
        display_cell,
        figure_data,
        load_inputs,
        read_sweep_meta,
        report_figures,
        summaries_of,
        sweep_dirs,
        sweep_products,
        write_csv,
    )
    from orchestrator.report.build import notes as report_notes
    from orchestrator.report.cache import FigureSet, Medians, Products, compact, input_key
    from orchestrator.report.cache import load as load_products
    from orchestrator.report.cache import prune as prune_products
    from orchestrator.report.cache import save as save_products
    from orchestrator.report.charts import (
        MAX_POINTS,
        MAX_SERIES,
        PAIR_LABELS,
        geo_assets_js,
        series_figure,
        timeseries_figure,
    )
    from orchestrator.report.make import ReportRequest, check_sources, make_report
    from orchestrator.report.uncertainty import TABLE_NOTE, table_cells

__all__ = [
    "GROUPS",
    "INFLATION_MIN_KM",
    "MAX_POINTS",
    "MAX_SERIES",
    "OUTLIER_COLUMNS",
    "OUTLIER_DOCS",
    "OUTLIER_MIN_EXCESS_MS",
    "PAIR_LABELS",
    "RTT_DEFINITION",
    "SUMMARY_COLUMNS",
    "SUMMARY_DOCS",
    "TABLE_NOTE",
    "FigureSet",
    "GroupSummary",
    "Medians",
    "PairOutlier",
    "Products",
    "Report",
    "ReportRequest",
    "build_report",
    "check_sources",
    "compact",
    "display_cell",
    "figure_data",
    "geo_assets_js",
    "input_key",
    "load_inputs",
    "load_products",
    "make_report",
    "prune_products",
    "read_sweep_meta",
    "report_figures",
    "report_notes",
    "save_products",
    "series_figure",
    "summaries_of",
    "sweep_dirs",
    "sweep_products",
    "table_cells",
    "timeseries_figure",
    "write_csv",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
