"""One RTT: wherever a single RTT is shown (charts, heatmaps, map, fits, outliers, summary,
matrix, pair pages, advise, exports) it is the median of the test's samples, rtt_p50_ms.
The mean, rtt_avg_ms, is read only where a source published no median, and named."""

import re
from pathlib import Path

from orchestrator.core import paths
from orchestrator.model.catalog import load_catalog
from orchestrator.report import build as report
from orchestrator.results import flags

PACKAGE = Path(report.__file__).resolve().parents[1]
# the modules that compute or show a statistic of RTT
SHOWN = ("report", "site", "history", "advise")
# the only places the mean may stand in for the RTT: the named fallbacks
FALLBACKS = (
    re.compile(r"coalesce\(rtt_p50_ms, rtt_avg_ms\)"),  # the store's views (SQL)
    re.compile(r'^RTT_MEAN_COLUMN = "rtt_avg_ms"$'),  # the report's reader
)
READ = re.compile(r"""(\.get\(|\[)\s*["']rtt_avg_ms["']""")


def _lines():
    for package in SHOWN:
        for path in sorted((PACKAGE / package).glob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                if "rtt_avg_ms" in line:
                    yield path.relative_to(PACKAGE), number, line.strip()


def test_no_chart_table_or_page_computes_an_rtt_from_the_mean():
    offending = []
    for where, number, line in _lines():
        if where.parts[0] == "history" and where.name == "store.py":
            continue  # the store's columns and an import's rows: no statistic shown
        if any(p.search(line) for p in FALLBACKS):
            continue
        # anything else naming the column must say it is the mean, and never read it
        if READ.search(line) or "mean" not in line:
            offending.append(f"{where}:{number}: {line}")
    assert offending == []
    # the row-level rule lives in one function
    assert flags.row_rtt_ms({"rtt_p50_ms": "50", "rtt_avg_ms": "80"}) == 50.0
    assert flags.row_rtt_ms({"rtt_p50_ms": "", "rtt_avg_ms": "80"}) == 80.0


def test_the_report_charts_and_summary_show_the_median_not_the_mean(tmp_path):
    # every test's median 50 ms, mean 80 ms (a spike): only 50 may appear as its RTT
    header = "src_cloud,src_region,dst_cloud,dst_region,rtt_p50_ms,rtt_avg_ms,rtt_samples\n"
    rows = [
        "aws,us-east-1,aws,eu-west-2,75,90,20",
        "aws,eu-west-2,aws,us-east-1,76,91,20",
        "aws,us-east-1,gcp,us-east4,9,30,20",
        "gcp,us-east4,aws,us-east-1,9.5,31,20",
    ]
    path = tmp_path / "spiky.csv"
    path.write_text(header + "\n".join(rows) + "\n")
    loaded = report.load_inputs(input_files=[path], catalog=load_catalog(paths.CATALOG))
    assert loaded.rows_flagged == 0 and loaded.rtt_from_mean == 0
    assert list(loaded.data.rtt_ms) == [75.0, 76.0, 9.0, 9.5]
    result = report.write_report(loaded, tmp_path / "out", png=False)
    by = {s.cloud_pair: s.row() for s in result.summaries}
    assert by["aws-aws"]["rtt_median_over_tests_ms"] == 75.5
    figures = report.report_figures(loaded, result.summaries)
    heat = figures["heatmap-rtt"]["data"][0]
    shown = sorted(v for row in heat["z"] for v in row if v is not None and v == v)
    assert shown == [9.0, 9.5, 75.0, 76.0]
    points = [
        y
        for trace in figures["distance-all"]["data"]
        if trace.get("meta", {}).get("filter") == "points" and trace.get("xaxis") in (None, "x")
        for y in trace["y"]
    ]
    assert sorted(points) == [9.0, 9.5, 75.0, 76.0]
    assert "median of samples" in figures["heatmap-rtt"]["layout"]["title"]["text"]
