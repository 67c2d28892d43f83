"""Reading measurements, filtering, summary.csv / outliers.csv and the report command."""

import csv
import json
import math
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_support import CATALOG, _sweep, write_catalog

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.plan.selection import SelectionSpec, pair_filter
from orchestrator.report import analyze
from orchestrator.report import build as report
from orchestrator.results import PLAIN_LINE, flags
from orchestrator.results.schema import MEASUREMENT_COLUMNS
from testkit import synthetic


def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def test_minimal_input_gets_distance_from_the_catalog(tmp_path):
    path = _write(
        tmp_path / "theirs.csv",
        ["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_avg_ms"],
        [
            ["aws", "us-east-1", "aws", "eu-west-1", "70.5"],
            ["AWS", "eu-west-1", "gcp", "europe-west1", "12"],
        ],
    )
    loaded = report.load_inputs(input_files=[path], catalog=CATALOG)
    m = loaded.data
    assert len(m) == 2 and loaded.rows_read == 2
    # Ashburn-Dublin is about 5,470 km (geodesic).
    assert m.distance_km[0] == pytest.approx(5470, rel=0.01)
    assert m.rtt_ms[0] == 70.5 and math.isnan(m.throughput_bps[0])
    assert m.cloud_pair(1) == "aws-gcp"  # cloud names are case-insensitive
    assert m.sweeps == ["theirs"]  # no sweep_id column: the file's name


def test_the_hovers_extras_are_read_and_missing_ones_are_nan(tmp_path):
    path = _write(
        tmp_path / "theirs.csv",
        ["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_p50_ms", "rtt_p90_ms",
         "ping_loss_pct", "rtt_samples", "started_utc"],
        [
            ["aws", "us-east-1", "aws", "eu-west-1", "70.5", "71.25", "0.5", "20",
             "2026-11-25T19:06:24.209Z"],
            ["aws", "eu-west-1", "aws", "us-east-1", "70", "", "x", "", "2026-11-25 19:06:24"],
        ],
    )  # fmt: skip
    m = report.load_inputs(input_files=[path], catalog=CATALOG).data
    assert m.rtt_p90_ms[0] == 71.25 and m.loss_pct[0] == 0.5
    assert m.rtt_samples[0] == 20 and m.started_s[0] == pytest.approx(1795633584.209)
    # a cell that does not parse is NaN (the row stays); a time without a zone is UTC
    assert all(math.isnan(c[1]) for c in (m.rtt_p90_ms, m.loss_pct, m.rtt_samples))
    assert m.started_s[1] == 1795633584.0


def test_unknown_regions_are_counted_and_skipped(tmp_path):
    path = _write(
        tmp_path / "theirs.csv",
        ["src_cloud", "src_region", "dst_cloud", "dst_region", "throughput_bps", "distance_km"],
        [
            ["aws", "us-east-1", "gcp", "us-east4", "9e8", "2"],
            ["aws", "mars-north-1", "gcp", "us-east4", "1e6", ""],
            ["azure", "eastus", "aws", "us-east-1", "1e6", ""],
            ["aws", "mars-north-1", "gcp", "us-east4", "1e6", ""],
            ["aws", "us-east-1", "gcp", "us-east4", "", ""],
        ],
    )
    loaded = report.load_inputs(input_files=[path], catalog=CATALOG)
    assert len(loaded.data) == 1
    assert loaded.data.distance_km[0] == 2.0  # a given distance is kept
    assert loaded.skipped["unknown region"] == 3
    assert loaded.skipped["no RTT or throughput_bps"] == 1
    assert loaded.unknown_regions == {"aws:mars-north-1": 2, "azure:eastus": 1}


def test_missing_columns_are_one_line_errors(tmp_path):
    no_metric = _write(
        tmp_path / "a.csv", ["src_cloud", "src_region", "dst_cloud", "dst_region"], []
    )
    with pytest.raises(UserError, match="rtt_avg_ms or throughput_bps"):
        report.load_inputs(input_files=[no_metric], catalog=CATALOG)
    no_dst = _write(tmp_path / "b.csv", ["src_cloud", "src_region", "dst_cloud", "rtt_avg_ms"], [])
    with pytest.raises(UserError, match=r"missing column.*dst_region"):
        report.load_inputs(input_files=[no_dst], catalog=CATALOG)
    empty = tmp_path / "c.csv"
    empty.write_text("")
    with pytest.raises(UserError, match="empty file"):
        report.load_inputs(input_files=[empty], catalog=CATALOG)


def test_failed_tests_are_left_out(tmp_path):
    folder = tmp_path / "s"
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 10, sweep_id="s"))
    rows[3]["status"] = "failed"
    rows[3]["error"] = "iperf3: connection refused"
    synthetic.write_measurements(folder / "measurements.csv", iter(rows))
    loaded = report.load_inputs(sweep_dirs_=[folder], catalog=CATALOG)
    assert len(loaded.data) == 9 and loaded.skipped["failed test"] == 1
    assert loaded.emulated  # backend local


def test_selection_filters_apply_to_rows(tmp_path):
    folder = _sweep(tmp_path, "s1", n=30)  # every ordered pair once
    spec = SelectionSpec(cloud_pairs=(("aws", "gcp"),), min_km=1000.0)
    loaded = report.load_inputs(
        sweep_dirs_=[folder], catalog=CATALOG, keep=pair_filter(spec, CATALOG)
    )
    m = loaded.data
    assert len(m) > 0
    assert all(m.cloud_pair(i) == "aws-gcp" for i in range(len(m)))
    assert all(m.distance_km[i] >= 1000.0 for i in range(len(m)))
    # 9 aws->gcp pairs, two under 1000 km: Ashburn-Ashburn, Dublin-St. Ghislain
    assert len(m) == 7
    assert loaded.skipped["filtered out"] == 23


def test_write_report_files(tmp_path):
    _sweep(tmp_path, "20261122T0100Z-aaaa", n=300)
    loaded = report.load_inputs(sweep_dirs_=report.sweep_dirs(tmp_path), catalog=CATALOG)
    out = tmp_path / "out"
    result = report.write_report(loaded, out, png=False)
    with (out / "summary.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == analyze.SUMMARY_COLUMNS
    assert [r["cloud_pair"] for r in rows] == list(analyze.GROUPS)
    assert int(rows[0]["n"]) == 300
    # the synthetic RTT is the network model's, plus noise
    slope = DEFAULT_MODEL.rtt_ms_per_1000km
    assert float(rows[0]["rtt_slope_ms_per_1000km"]) == pytest.approx(slope, rel=0.05)
    assert float(rows[0]["rtt_distance_r"]) > 0.95
    with (out / "outliers.csv").open() as f:
        assert tuple(next(csv.reader(f))) == analyze.OUTLIER_COLUMNS
    assert json.loads((out / "report.json").read_text())["emulated"] is True
    expected = {"distance-all", "heatmap-rtt", "heatmap-throughput", "map"}
    assert expected <= set(result.charts)
    for pair in ("aws-aws", "aws-gcp", "gcp-aws", "gcp-gcp"):
        assert f"distance-{pair}" in result.charts
    html = (out / "charts" / "distance-all.html").read_text()
    assert "EMULATED" in html
    assert (out / "charts" / "plotly.min.js").exists()  # opens offline
    assert "cdn.plot.ly/plotly" not in html
    assert result.png_skipped == "--no-png given"


def test_nan_cells_are_empty_in_csv(tmp_path):
    path = tmp_path / "x.csv"
    report.write_csv(path, ["a", "rtt_p50_ms", "n"], [{"a": "x", "rtt_p50_ms": math.nan, "n": 3}])
    assert path.read_text() == "a,rtt_p50_ms,n\nx,,3\n"


def test_nothing_usable_is_a_clear_error(tmp_path):
    path = _write(
        tmp_path / "theirs.csv",
        ["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_avg_ms"],
        [["aws", "nowhere-1", "aws", "us-east-1", "5"]],
    )
    loaded = report.load_inputs(input_files=[path], catalog=CATALOG)
    with pytest.raises(UserError, match=r"none of the 1 measurements is usable.*unknown region"):
        report.write_report(loaded, tmp_path / "out", png=False)


def test_build_report_for_a_sweep(tmp_path):
    folder = _sweep(tmp_path, "20261122T0100Z-bbbb", n=60)
    out = report.build_report(folder, catalog=CATALOG, png=False)
    assert out == folder / "report"
    assert (out / "summary.csv").exists() and (out / "charts" / "map.html").exists()


def test_several_sweeps_make_a_time_series(tmp_path):
    dirs = [_sweep(tmp_path, f"2026112{k}T0000Z-cccc", n=60, seed=k) for k in range(3)]
    loaded = report.load_inputs(sweep_dirs_=dirs, catalog=CATALOG)
    assert len(loaded.data.sweeps) == 3
    result = report.write_report(loaded, tmp_path / "all", png=False)
    assert "timeseries" in result.charts


def test_measurement_columns_are_the_contract():
    row = next(synthetic.synthetic_rows(CATALOG.regions, 1))
    assert tuple(row) == MEASUREMENT_COLUMNS


# --- the command ---------------------------------------------------------------------


@pytest.fixture
def catalog_file(tmp_path):
    return write_catalog(tmp_path / "regions.yaml")


def test_report_command(tmp_path, catalog_file):
    results = tmp_path / "results"
    _sweep(results, "20261122T0100Z-dddd", n=90)
    args = ["report", "--sweep", "20261122T0100Z-dddd", "--results", str(results)]
    args += ["--catalog", str(catalog_file), "--no-png", "--cloud-pair", "aws:gcp"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "EMULATED" in result.output
    assert "aws-gcp" in result.output
    assert "filtered out" in result.output
    out = results / "20261122T0100Z-dddd" / "report"
    with (out / "summary.csv").open() as f:
        rows = {r["cloud_pair"]: r for r in csv.DictReader(f)}
    assert rows["gcp-gcp"]["n"] == "0" and rows["aws-gcp"]["n"] == rows["all"]["n"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "one of --sweep ID, --all or --input FILE"),
        (["--sweep", "20261122T0100Z-ffff"], "no sweep '20261122T0100Z-ffff'"),
        (["--sweep", "nope"], "sweep id 'nope' is not of the form"),
        (["--all", "--sweep", "x"], "--all already takes every sweep"),
        (["--all", "--min-km", "5000", "--max-km", "10"], "above --max-km"),
        (["--all", "--max-regions", "3"], "does not filter a report"),
        (["--all", "--spread", "globe"], "--spread chooses regions for a sweep"),
        (["--all", "--cloud-pair", "aws-gcp"], "write it as SRC:DST"),
    ],
)
def test_report_command_errors_are_one_line(tmp_path, catalog_file, args, message):
    results = tmp_path / "results"
    _sweep(results, "20261122T0100Z-eeee", n=30)
    base = ["report", "--results", str(results), "--catalog", str(catalog_file), "--no-png"]
    result = CliRunner().invoke(main, base + args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_report_command_on_an_input_file(tmp_path, catalog_file):
    path = _write(
        tmp_path / "theirs.csv",
        ["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_avg_ms"],
        [
            ["aws", "us-east-1", "aws", "eu-west-1", "70"],
            ["aws", "eu-west-1", "aws", "us-east-1", "71"],
            ["gcp", "asia-northeast1", "aws", "ap-southeast-2", "110"],
            ["aws", "atlantis-1", "aws", "us-east-1", "71"],
        ],
    )
    args = ["report", "--input", str(path), "--catalog", str(catalog_file), "--no-png"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "aws:atlantis-1 (1)" in result.output
    assert "3 of 4 measurements used" in result.output
    assert (tmp_path / "theirs-report" / "summary.csv").exists()
    summary = json.loads((tmp_path / "theirs-report" / "report.json").read_text())
    assert summary["emulated"] is False and summary["unknown_regions"] == {"aws:atlantis-1": 1}


def test_display_cell_by_hand():
    assert report.display_cell("throughput_p50_bps", 12_345_678.0, "{:.1f}") == "12.3"
    assert report.display_cell("rtt_p50_ms", float("nan"), "{:.1f}") == "-"
    assert report.display_cell("throughput_p90_bps", float("nan"), "{:.1f}") == "-"
    assert report.display_cell("robust_z", float("inf"), "{:.1f}") == "-"
    assert report.display_cell("n", 42, "{:d}") == "42"
    assert report.display_cell("cloud_pair", "aws-gcp", "{}") == "aws-gcp"


def test_reports_in_a_results_folder_share_one_plotly_js(tmp_path):
    import plotly

    ids = ["20261122T0100Z-aaaa", "20261122T0200Z-bbbb"]
    for sweep_id in ids:
        _sweep(tmp_path, sweep_id, n=50)
        report.build_report(tmp_path / sweep_id, catalog=CATALOG, png=False)
    shared = tmp_path / "assets" / f"plotly-{plotly.__version__}.min.js"
    assert shared.stat().st_size > 1_000_000
    for sweep_id in ids:
        charts = tmp_path / sweep_id / "report" / "charts"
        assert not (charts / "plotly.min.js").exists()  # no copy per sweep
        html = (charts / "map.html").read_text()
        src = f"../../../assets/plotly-{plotly.__version__}.min.js"
        assert f'src="{src}"' in html and (charts / src).resolve() == shared.resolve()
    # the history store, retention and the site see no sweep in assets/
    assert [d.name for d in report.sweep_dirs(tmp_path)] == ids


def test_capacity_rows_are_kept_apart_from_every_statistic(tmp_path):
    path = _write(
        tmp_path / "both.csv",
        ["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_p50_ms", "throughput_bps",
         "measure"],
        [
            ["aws", "us-east-1", "aws", "eu-west-1", "70", "5000000", "single_stream"],
            ["aws", "us-east-1", "aws", "eu-west-1", "72", "7000000", ""],  # before the column
            ["aws", "us-east-1", "aws", "eu-west-1", "", "40000000", "capacity"],
            ["aws", "us-east-1", "aws", "eu-west-1", "", "60000000", "capacity"],
        ],
    )  # fmt: skip
    loaded = report.load_inputs(input_files=[path], catalog=CATALOG)
    assert len(loaded.data) == 2 and sorted(loaded.data.throughput_bps) == [5e6, 7e6]
    assert loaded.skipped["capacity measure (report.json: capacity)"] == 2
    summaries = {s.cloud_pair: s for s in analyze.summarize(loaded.data)}
    assert summaries["aws-aws"].n == 2  # the two single_stream rows alone
    assert summaries["aws-aws"].throughput_median_over_tests_bps == pytest.approx(6e6)
    assert report.capacity_json(loaded) == [
        {
            "pair": "aws:us-east-1 -> aws:eu-west-1",
            "capacity_tests": 2,
            "capacity_median_bps": 5e7,
            "single_stream_tests": 2,
            "single_stream_median_bps": 6e6,
        }
    ]


# --- flags leave out only the measure they invalidate ----------------------------------


def test_a_throughput_flag_leaves_the_rows_rtt_in_and_an_rtt_flag_its_throughput(tmp_path):
    header = ["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_p50_ms",
              "throughput_bps", "flags"]  # fmt: skip
    path = _write(
        tmp_path / "flagged.csv",
        header,
        [
            ["aws", "us-east-1", "aws", "eu-west-1", "70", "1e8", ""],
            ["aws", "eu-west-1", "aws", "us-east-1", "72", "9e8", "receiver_exceeds_sender"],
            ["aws", "us-east-1", "gcp", "europe-west1", "80", "2e8", "few_samples"],
            ["aws", "eu-west-1", "gcp", "europe-west1", "90", "", "few_samples"],
        ],
    )
    loaded = report.load_inputs(input_files=[path], catalog=CATALOG)
    m = loaded.data
    # the last row had only an RTT, and an RTT flag: nothing of it is left
    assert len(m) == 3 and loaded.rows_flagged == 3 and loaded.rows_flagged_out == 1
    assert list(m.rtt_ms)[:2] == [70.0, 72.0] and math.isnan(m.rtt_ms[2])
    assert m.throughput_bps[0] == 1e8 and math.isnan(m.throughput_bps[1])
    assert m.throughput_bps[2] == 2e8
    assert loaded.measures_flagged == {"rtt": 2, "throughput": 1}
    result = report.write_report(loaded, tmp_path / "out", png=False)
    (every,) = [s.row() for s in result.summaries if s.cloud_pair == "all"]
    assert every["rtt_median_over_tests_ms"] == 71.0  # 70 and 72: not 80
    assert every["throughput_median_over_tests_bps"] == 1.5e8  # 1e8 and 2e8: not 9e8
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["measures_flagged_left_out"] == {"rtt": 2, "throughput": 1}
    assert doc["rows_flagged"] == 3 and doc["rows_flagged_left_out"] == 1
    assert doc["flag_invalidates"]["receiver_exceeds_sender"] == ["throughput"]
    (note,) = report.notes(loaded)
    assert "2 few_samples" in note and "RTT of 2 rows, throughput of 1 rows" in note
    # --include-flagged: every value counts again
    back = report.load_inputs(input_files=[path], catalog=CATALOG, include_flagged=True)
    assert len(back.data) == 4 and back.rows_flagged == 0
    (every,) = [s.row() for s in analyze.summarize(back.data) if s.cloud_pair == "all"]
    assert every["rtt_median_over_tests_ms"] == 76.0  # 70, 72, 80, 90
    assert every["throughput_median_over_tests_bps"] == 2e8  # 1e8, 2e8, 9e8


def test_a_file_without_flags_is_flagged_as_collect_flags_its_full_rows(tmp_path):
    # a far, slow pair's receiver 3.7 % ahead, under one congestion window: collect does
    # not flag it (results.flags), and the report reading a file without a flags column
    # must not either; 7 % over a small window is flagged by both
    header = ["src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_p50_ms",
              "throughput_bps", "throughput_sender_bps", "bytes", "duration_s",
              "max_cwnd_bytes"]  # fmt: skip
    rows = [
        ["aws", "us-east-1", "gcp", "europe-west1", "330", "3.1e6", "2993305.6",
         "1940320", "5.0", "260640"],
        ["aws", "us-east-1", "aws", "eu-west-1", "70", "3.1e6", "2993305.6",
         "2004000", "5.0", "20000"],
    ]  # fmt: skip
    path = _write(tmp_path / "noflags.csv", header, rows)
    loaded = report.load_inputs(input_files=[path], catalog=CATALOG)
    expected = [flags.row_flags(dict(zip(header, row, strict=True))) for row in rows]
    assert expected == [[], [flags.RECEIVER_EXCEEDS_SENDER]]
    assert loaded.rows_flagged == 1
    assert math.isnan(loaded.data.throughput_bps[1]) and loaded.data.throughput_bps[0] == 3.1e6


def test_a_sweep_whose_every_row_has_a_throughput_flag_reports_its_rtt(tmp_path, catalog_file):
    # as a 1 s iperf3 test from 0 s can do: every receiver counted more than was sent
    results = tmp_path / "results"
    folder = _sweep(results, "20261122T0100Z-f1a9", n=30)
    path = folder / "measurements.csv"
    with path.open() as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows):
        row["flags"] = "receiver_exceeds_sender" if i % 2 else "duration_short"
    synthetic.write_measurements(path, iter(rows))
    args = ["report", "--sweep", folder.name, "--results", str(results)]
    result = CliRunner().invoke(main, [*args, "--catalog", str(catalog_file), "--no-png"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # the console wraps long lines
    assert "throughput: not measured/flagged: every measured throughput (30 rows) is flagged" in out
    assert "30 of 30 measurements used" in out
    with (folder / "report" / "summary.csv").open() as f:
        every = next(r for r in csv.DictReader(f) if r["cloud_pair"] == "all")
    assert every["n"] == "30"
    want = sorted(float(r["rtt_p50_ms"]) for r in rows)
    assert float(every["rtt_median_over_tests_ms"]) == pytest.approx((want[14] + want[15]) / 2)
    assert every["throughput_median_over_tests_bps"] == ""
    doc = json.loads((folder / "report" / "report.json").read_text())
    assert doc["measures_flagged_left_out"] == {"rtt": 0, "throughput": 30}
    assert doc["rows_used"] == 30 and doc["rows_flagged_left_out"] == 0
    charts = {p.stem for p in (folder / "report" / "charts").glob("*.html")}
    assert "heatmap-rtt" in charts and "heatmap-throughput" not in charts
    # the sweep's own end-of-run report too (runner -> stages.report -> build_report)
    lines: list[str] = []
    report.build_report(folder, catalog=CATALOG, png=False, log=lines.append)
    assert any("throughput: not measured/flagged" in line for line in lines)


def _every_field(loaded: report.Loaded) -> dict:
    m = loaded.data
    columns = {name: [repr(v) for v in getattr(m, name)] for name in m.__dataclass_fields__}
    # evidence and publishable: what the columnar reader notes of a file for later steps
    # (host evidence, the site's copy), no part of the rows read
    skip = ("data", "catalog", "evidence", "publishable")
    fields = {k: v for k, v in loaded.__dict__.items() if k not in skip}
    fields["sweeps"] = {k: (v.started_utc, sorted(v.backends)) for k, v in loaded.sweeps.items()}
    order = {k: list(v) for k, v in fields.items() if isinstance(v, dict)}  # first seen first
    return {"columns": columns, "fields": fields, "order": order}


@pytest.mark.parametrize("include_flagged", [False, True])
def test_the_columnar_reader_reads_a_sweep_exactly_as_the_row_reader(
    tmp_path, monkeypatch, include_flagged
):
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 400, sweep_id="s2"))
    rows += list(synthetic.synthetic_rows(CATALOG.regions[1:], 300, sweep_id="s1", seed=3))
    for i, row in enumerate(rows):
        if i % 17 == 0:
            row["status"] = "failed"
        if i % 5 == 0:
            row["throughput_bps"] = ""
        if i % 7 == 0:
            row["rtt_p50_ms"] = ""  # the mean stands in, where there is one
        if i % 35 == 0:
            row["rtt_avg_ms"] = ""  # and some rows then have no measure at all
        if i % 9 == 0:
            row["distance_km"] = ""  # computed from the catalog
        if i % 11 == 0:
            row.update(rtt_p90_ms="12.5", ping_loss_pct=str(i % 4), rtt_samples="20")
        if i % 13 == 0:
            row["flags"] = "asymmetric" if i % 2 else "few_samples;receiver_exceeds_sender"
        if i % 19 == 0:
            row.update(sweep_id="", backend="aws", started_utc=f"2026-11-21T0{i % 9}:00:00Z")
    folder = tmp_path / "s"
    synthetic.write_measurements(folder / "measurements.csv", iter(rows))
    row_reader = report._Reader._rows
    monkeypatch.setattr(report._Reader, "_rows", None)  # the columnar reader, or a TypeError
    columnar = report.load_inputs(sweep_dirs_=[folder], include_flagged=include_flagged)
    assert columnar.rtt_from_mean and columnar.skipped["failed test"]
    monkeypatch.setattr(report._Reader, "_rows", row_reader)
    monkeypatch.setattr(report._Reader, "_columns", lambda *_args: False)
    by_row = report.load_inputs(sweep_dirs_=[folder], include_flagged=include_flagged)
    assert _every_field(columnar) == _every_field(by_row)
    assert len(by_row.data) > 500 and (by_row.rows_flagged > 0 or include_flagged)


def test_a_sweeps_start_is_its_earliest_row_as_a_time_in_either_reader(tmp_path, monkeypatch):
    # `...:00.5Z` sorts before `...:00Z` as text, and is half a second later
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 6, sweep_id="s"))
    stamps = ["2026-11-21T06:00:01Z", "2026-11-21T06:00:00.5Z", "2026-11-21T06:00:00Z"]
    for i, row in enumerate(rows):
        row.update(status="ok", rtt_p50_ms="70.5", started_utc=stamps[i % 3])
    folder = tmp_path / "s"
    synthetic.write_measurements(folder / "measurements.csv", iter(rows))
    row_reader = report._Reader._rows
    monkeypatch.setattr(report._Reader, "_rows", None)  # the columnar reader, or a TypeError
    columnar = report.load_inputs(sweep_dirs_=[folder])
    monkeypatch.setattr(report._Reader, "_rows", row_reader)
    monkeypatch.setattr(report._Reader, "_columns", lambda *_args: False)
    by_row = report.load_inputs(sweep_dirs_=[folder])
    for loaded in (columnar, by_row):
        assert loaded.sweeps["s"].started_utc == "2026-11-21T06:00:00Z"


@pytest.mark.parametrize(
    "damage", ["none", "a failed row in another cloud", "a cloud in capitals", "a blank line"]
)
def test_a_plain_file_is_checked_line_by_line_and_read_as_the_row_reader_reads_it(
    tmp_path, monkeypatch, damage
):
    # every line plain: one regex a line, the numbers read as numbers and the ends as
    # the catalog's names; any line that is not (or a read that fails): each cell checked
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 200, sweep_id="s"))
    for i, row in enumerate(rows):
        if i % 9 == 0:
            row.update(rtt_p50_ms="", distance_km="", rtt_p90_ms="12.5", rtt_samples="20")
        if i % 13 == 0:
            row.update(status="failed", throughput_bps="")
    if damage == "a failed row in another cloud":
        rows[2].update(status="failed", src_region="mars-1", dst_cloud="azure")
    if damage == "a cloud in capitals":
        rows[5]["src_cloud"] = rows[5]["src_cloud"].upper()
    folder = tmp_path / "s"
    synthetic.write_measurements(folder / "measurements.csv", iter(rows))
    if damage == "a blank line":
        lines = (folder / "measurements.csv").read_text().splitlines(keepends=True)
        (folder / "measurements.csv").write_text("".join([*lines[:50], "\n", *lines[50:]]))
    checked = []
    clean_lines = report._clean_lines

    def spied(*args):
        checked.append(clean_lines(*args))
        return checked[-1]

    monkeypatch.setattr(report, "_clean_lines", spied)
    reads = []  # each read of the cells: as numbers and the catalog's names (True) or text
    cell_type = report._cell_type
    monkeypatch.setattr(
        report, "_cell_type", lambda name, clean: reads.append(clean) or cell_type(name, clean)
    )
    row_reader = report._Reader._rows
    monkeypatch.setattr(report._Reader, "_rows", None)  # the columnar reader, or a TypeError
    columnar = report.load_inputs(sweep_dirs_=[folder])
    assert checked == [None if damage == "a blank line" else 200]
    # a name not the catalog's fails that read: then each cell checked, as before
    wanted = {"none": [True], "a blank line": [False]}.get(damage, [False, True])
    assert sorted(set(reads)) == wanted
    assert columnar.publishable == (
        {} if damage == "a blank line" else {folder / "measurements.csv": 200}
    )
    monkeypatch.setattr(report._Reader, "_rows", row_reader)
    monkeypatch.setattr(report._Reader, "_columns", lambda *_args: False)
    by_row = report.load_inputs(sweep_dirs_=[folder])
    assert _every_field(columnar) == _every_field(by_row)
    assert len(by_row.data) > 150


def test_the_columnar_reader_leaves_an_unplain_file_to_the_row_reader(tmp_path):
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 20, sweep_id="s"))
    rows[3]["rtt_p50_ms"] = "1e999"  # above any limit: named by its line
    rows[4]["src_region"] = "mars-1"
    synthetic.write_measurements(tmp_path / "s" / "measurements.csv", iter(rows))
    loaded = report.load_inputs(sweep_dirs_=[tmp_path / "s"])
    assert loaded.skipped == {"bad number": 1, "unknown region": 1}
    assert any("line 5" in w for w in loaded.warnings)
    rows[3]["rtt_p50_ms"], rows[4]["src_region"] = "5.0", rows[5]["src_region"]
    rows[6]["measure"] = "capacity"  # kept apart, by the row reader
    synthetic.write_measurements(tmp_path / "s" / "measurements.csv", iter(rows))
    loaded = report.load_inputs(sweep_dirs_=[tmp_path / "s"])
    assert loaded.skipped == {"capacity measure (report.json: capacity)": 1}
    assert len(loaded.data) == 19 and len(loaded.capacity) == 1


@pytest.mark.parametrize("column", report._NUMBERS)
@pytest.mark.parametrize("cell", ["12abc", " 5", "-1", ".5"])
def test_a_number_the_columnar_reader_does_not_take_is_read_row_by_row(
    tmp_path, monkeypatch, column, cell
):
    # in a file a site may publish as it is or not (a column the site does not check,
    # rtt_samples, is checked all the same)
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 20, sweep_id="s"))
    rows[3][column] = cell
    synthetic.write_measurements(tmp_path / "s" / "measurements.csv", iter(rows))
    read_by_row = []
    row_reader = report._Reader._rows

    def by_row(self, *args):
        read_by_row.append(True)
        return row_reader(self, *args)

    monkeypatch.setattr(report._Reader, "_rows", by_row)
    loaded = report.load_inputs(sweep_dirs_=[tmp_path / "s"])
    assert read_by_row == [True]
    assert loaded.publishable == {}


def test_a_failed_row_may_name_any_region_and_the_columnar_reader_still_reads(
    tmp_path, monkeypatch
):
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 20, sweep_id="s"))
    rows[2].update(status="failed", src_region="mars-1", dst_cloud="azure")
    rows[5].update(src_cloud=" AWS ", src_region=f" {rows[5]['src_region']}")  # read as aws
    synthetic.write_measurements(tmp_path / "s" / "measurements.csv", iter(rows))
    monkeypatch.setattr(report._Reader, "_rows", None)  # the columnar reader, or a TypeError
    loaded = report.load_inputs(sweep_dirs_=[tmp_path / "s"])
    assert loaded.skipped == {"failed test": 1} and len(loaded.data) == 19
    assert set(loaded.data.regions) <= {r.key for r in CATALOG.regions}


def test_host_evidence_reads_the_file_again_only_when_a_row_holds_some(tmp_path, monkeypatch):
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 30, sweep_id="s"))
    synthetic.write_measurements(tmp_path / "s" / "measurements.csv", iter(rows))
    scans = []
    host_rows = report._host_rows

    def counted(*args):
        scans.append(args[0])
        return host_rows(*args)

    monkeypatch.setattr(report, "_host_rows", counted)
    loaded = report.load_inputs(sweep_dirs_=[tmp_path / "s"])
    assert scans == [] and loaded.host_flags == []  # none in any row: no second scan
    rows[7]["dst_cpu_steal_pct"] = "12.5"
    synthetic.write_measurements(tmp_path / "s" / "measurements.csv", iter(rows))
    loaded = report.load_inputs(sweep_dirs_=[tmp_path / "s"])
    assert scans == [tmp_path / "s" / "measurements.csv"]
    assert [f["dst"] for f in loaded.host_flags] == [
        f"{rows[7]['dst_cloud']}:{rows[7]['dst_region']}"
    ]


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 23])
def test_a_file_is_plain_bytes_whatever_the_chunks_it_is_read_in(tmp_path, chunk):
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 30, sweep_id="s"))
    path = tmp_path / "measurements.csv"
    synthetic.write_measurements(path, iter(rows))
    good = path.read_bytes()
    assert report._plain_bytes(path, 30, chunk)
    assert not report._plain_bytes(path, 29, chunk) and not report._plain_bytes(path, 31, chunk)
    for damaged in (
        good[:-1],  # the last row cut
        good + b"\n",  # a blank line
        good.replace(b"\n", b"\r\n", 1),
        good[:900] + b'"' + good[900:],
        good[:900] + "é".encode() + good[900:],
        good[:900] + b"\x00" + good[900:],
        b"x" + good,  # not this version's header
    ):
        path.write_bytes(damaged)
        assert not report._plain_bytes(path, 30, chunk), damaged[:40]


def test_the_writer_marks_plain_the_lines_the_reader_would_find_plain():
    # results' PLAIN_LINE (what the writer checks) is the reader's pattern of this
    # version's file, so a marked file is read as it would be checked
    assert report._line_pattern(MEASUREMENT_COLUMNS, True) == PLAIN_LINE


def _read_spied(folder, monkeypatch):
    """load_inputs of `folder` and the checks it ran: [("lines", result), ("bytes", ...)]."""
    monkeypatch.undo()  # the checks themselves, not an earlier call's spies
    ran = []
    clean_lines, plain_bytes = report._clean_lines, report._plain_bytes
    monkeypatch.setattr(
        report, "_clean_lines", lambda *a: ran.append(("lines", clean_lines(*a))) or ran[-1][1]
    )
    monkeypatch.setattr(
        report, "_plain_bytes", lambda *a: ran.append(("bytes", plain_bytes(*a))) or ran[-1][1]
    )
    return report.load_inputs(sweep_dirs_=[folder]), ran


def _outputs(folder):
    """Every file of a report but the charts' HTML (plotly names each chart's div anew)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix != ".html"
    }


def test_a_file_our_writer_marked_plain_gives_the_report_of_the_same_file_checked(
    tmp_path, monkeypatch
):
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 300, sweep_id="s"))
    for i, row in enumerate(rows):
        if i % 9 == 0:
            row.update(rtt_p50_ms="", distance_km="", rtt_p90_ms="12.5", rtt_samples="20")
        if i % 13 == 0:
            row.update(status="failed", throughput_bps="", flags="asymmetric")
    folder = tmp_path / "s"
    csv_path = folder / "measurements.csv"
    synthetic.write_measurements(csv_path, iter(rows), marked=True)
    assert (folder / "measurements.plain.json").exists()
    marked, ran = _read_spied(folder, monkeypatch)
    assert ran == []  # neither its lines nor its bytes checked again
    assert marked.publishable == {csv_path: 300}
    out_marked = report.write_report(marked, tmp_path / "marked", png=False)
    (folder / "measurements.plain.json").unlink()
    checked, ran = _read_spied(folder, monkeypatch)
    assert ran == [("lines", 300), ("bytes", True)]
    assert checked.publishable == marked.publishable
    assert _every_field(marked) == _every_field(checked)
    out_checked = report.write_report(checked, tmp_path / "checked", png=False)
    assert out_marked.summaries == out_checked.summaries
    assert _outputs(tmp_path / "marked") == _outputs(tmp_path / "checked")


@pytest.mark.parametrize(
    ("old", "new"),
    [(b",local,", b",lo\x07al,"), (b",local,aws,", b",local,AWS,"), (b",ok,", b",no,")],
)
def test_a_marked_file_edited_since_is_checked_in_full(tmp_path, monkeypatch, old, new):
    # the same size, the same inode, its modification time put back: still checked
    rows = list(synthetic.synthetic_rows(CATALOG.regions, 60, sweep_id="s"))
    folder = tmp_path / "s"
    csv_path = folder / "measurements.csv"
    synthetic.write_measurements(csv_path, iter(rows), marked=True)
    data, st = csv_path.read_bytes(), csv_path.stat()
    assert old in data
    with csv_path.open("r+b") as f:
        f.write(data.replace(old, new, 1))
    os.utime(csv_path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert csv_path.stat().st_size == st.st_size
    edited, ran = _read_spied(folder, monkeypatch)
    assert ran and ran[0][0] == "lines"  # every line checked again
    (folder / "measurements.plain.json").unlink()
    unmarked, again = _read_spied(folder, monkeypatch)
    assert again == ran
    assert _every_field(edited) == _every_field(unmarked)
    assert edited.publishable == unmarked.publishable
