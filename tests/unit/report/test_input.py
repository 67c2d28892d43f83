"""`report --input` on files people actually have: other encodings, delimiters,
compressed or binary files, bad numbers, repeated options (issue 10)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from report_support import CATALOG, _sweep, write_catalog

from orchestrator.cli import main
from orchestrator.report import build as report

HEADER = "src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms,throughput_bps"
GOOD = [
    "aws,us-east-1,aws,eu-west-1,70.5,9e8",
    "aws,eu-west-1,gcp,europe-west1,12,",
    "gcp,asia-northeast1,aws,ap-southeast-2,110,1e8",
]


@pytest.fixture
def catalog_file(tmp_path):
    return write_catalog(tmp_path / "regions.yaml")


def _csv(path: Path, lines: list[str], *, sep: str = ",", bom: bool = False) -> Path:
    text = "\n".join([HEADER, *lines]).replace(",", sep) + "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def _run(args: list[str], catalog: Path):
    return CliRunner().invoke(main, ["report", *args, "--catalog", str(catalog), "--no-png"])


def _one_line_error(result, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# --- encodings and file kinds ------------------------------------------------------


def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    loaded = report.load_inputs(input_files=[_csv(tmp_path / "x.csv", GOOD, bom=True)],
                                catalog=CATALOG)  # fmt: skip
    assert len(loaded.data) == 3


def test_latin1_is_a_one_line_error_naming_the_line(tmp_path, catalog_file):
    path = tmp_path / "latin1.csv"
    text = "\n".join([HEADER, GOOD[0], "aws,us-east-1,aws,eu-west-1,70,1e8 # Zürich", ""])
    path.write_bytes(text.encode("latin-1"))
    result = _run(["--input", str(path)], catalog_file)
    _one_line_error(result, "not UTF-8", "byte 0xfc on line 3", "save it as UTF-8")
    assert not (tmp_path / "latin1-report").exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (gzip.compress(("\n".join([HEADER, *GOOD]) + "\n").encode()), "gzip-compressed"),
        (bytes(range(256)) * 4, "binary"),
        (("\n".join([HEADER, *GOOD])).encode("utf-16"), "UTF-16"),
        (b"PK\x03\x04" + bytes(60), "ZIP"),
    ],
)
def test_files_that_are_not_csv_text_are_one_line_errors(tmp_path, catalog_file, content, needle):
    path = tmp_path / "theirs.csv"
    path.write_bytes(content)
    _one_line_error(_run(["--input", str(path)], catalog_file), needle, str(path))


# --- delimiters --------------------------------------------------------------------


@pytest.mark.parametrize(("sep", "name"), [(";", "';'"), ("\t", "tab")])
def test_other_delimiters_are_detected_and_said(tmp_path, catalog_file, sep, name):
    path = _csv(tmp_path / "theirs.csv", GOOD, sep=sep)
    result = _run(["--input", str(path)], catalog_file)
    assert result.exit_code == 0, result.output
    assert f" WARNING {path}: read as {name}-separated" in result.stderr
    assert "3 of 3 measurements used" in result.stdout


def test_a_header_without_the_columns_says_what_it_found(tmp_path, catalog_file):
    path = tmp_path / "theirs.csv"
    path.write_text("from;to;latency\naws:us-east-1;aws:eu-west-1;70\n")
    _one_line_error(
        _run(["--input", str(path)], catalog_file),
        "missing column(s) src_cloud",
        "found 3 column(s) (';'-separated): from, to, latency",
    )


# --- bad numbers -------------------------------------------------------------------


def test_bad_numbers_drop_their_rows_with_a_warning(tmp_path, catalog_file):
    lines = [
        GOOD[0],
        "aws,us-east-1,aws,eu-west-1,-3,9e8",  # line 3: negative RTT
        "aws,us-east-1,aws,eu-west-1,fast,9e8",  # line 4: text
        GOOD[1],
        "aws,us-east-1,aws,eu-west-1,nan,9e8",  # line 6
        "aws,us-east-1,aws,eu-west-1,70,inf",  # line 7
        "aws,us-east-1,aws,eu-west-1,70,-1e6",  # line 8
        "aws,us-east-1,aws,eu-west-1,Infinity,",  # line 9
        "aws,us-east-1,aws,eu-west-1,1.9e154,",  # line 10: would overflow the fit
        GOOD[2],
    ]
    path = _csv(tmp_path / "theirs.csv", lines)
    result = _run(["--input", str(path)], catalog_file)
    assert result.exit_code == 0, result.output
    warnings = [
        line.split(" WARNING ", 1)[1] for line in result.stderr.splitlines() if " WARNING " in line
    ]
    assert warnings == [
        f"{path}: 7 row(s) dropped for a bad number (line 3: rtt_avg_ms '-3'; "
        "lines 3, 4, 6, 7, 8, ...): values must be numbers from 0 to a plausible maximum "
        "(RTT 1 h, throughput 1 Pbit/s, distance 20,040 km), empty when not measured"
    ]
    assert "3 of 10 measurements used; skipped: 7 bad number" in result.stdout
    summary = json.loads((tmp_path / "theirs-report" / "report.json").read_text())
    assert summary["rows_used"] == 3 and summary["rows_skipped"] == {"bad number": 7}
    by = {row["cloud_pair"]: row for row in summary["summary"]}
    assert by["all"]["n"] == 3 and by["aws-aws"]["n"] == 1
    assert (
        by["aws-aws"]["rtt_median_over_tests_ms"] == 70.5
    )  # the negative and NaN RTTs are not in it


def test_the_fit_never_sees_a_negative_rtt(tmp_path):
    lines = [GOOD[0], "aws,eu-west-1,aws,us-east-1,-500,", GOOD[2]]
    loaded = report.load_inputs(input_files=[_csv(tmp_path / "x.csv", lines)], catalog=CATALOG)
    assert sorted(loaded.data.rtt_ms) == [70.5, 110.0]
    assert all(math.isfinite(v) and v >= 0 for v in loaded.data.rtt_ms)


def test_nothing_left_after_bad_numbers_is_an_error(tmp_path, catalog_file):
    path = _csv(tmp_path / "theirs.csv", ["aws,us-east-1,aws,eu-west-1,x,y"])
    result = _run(["--input", str(path)], catalog_file)
    assert result.exit_code == 2
    assert "none of the 1 measurements is usable (1 bad number)" in result.stderr
    assert not (tmp_path / "theirs-report").exists()


def test_a_row_cut_short_is_skipped(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("\n".join([HEADER, *GOOD, "aws,us-east-1,aws,eu-we"]))
    loaded = report.load_inputs(input_files=[path], catalog=CATALOG)
    assert len(loaded.data) == 3 and loaded.skipped == {"short row": 1}


# --- options -----------------------------------------------------------------------


def test_the_same_input_twice_is_read_once(tmp_path, catalog_file, monkeypatch):
    path = _csv(tmp_path / "theirs.csv", GOOD)
    monkeypatch.chdir(tmp_path)
    result = _run(["--input", str(path), "--input", "theirs.csv"], catalog_file)
    assert result.exit_code == 0, result.output
    # the same file, once relative: paths are absolute from the CLI edge on
    assert f" WARNING --input {path} given more than once: read once" in result.stderr
    assert "3 of 3 measurements used" in result.stdout
    summary = json.loads((tmp_path / "theirs-report" / "report.json").read_text())
    assert summary["rows_read"] == 3 and summary["sources"] == [str(path)]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--input", "{csv}", "--all"], ["--input and --all both given", "drop one"]),
        (["--input", "{csv}", "--sweep", "20261122T0100Z-eeee"], ["--input and --sweep both"]),
        (["--all", "--sweep", "20261122T0100Z-eeee"], ["--all already takes every sweep"]),
        (["--sweep", "../20261122T0100Z-eeee"], ["'../20261122T0100Z-eeee' is not of the form"]),
        (["--sweep", "20261122T0100Z-eeee/.."], ["is not of the form"]),
    ],
)
def test_conflicting_or_unsafe_sources_are_one_line_errors(tmp_path, catalog_file, args, needles):
    results = tmp_path / "results"
    _sweep(results, "20261122T0100Z-eeee", n=30)
    csv_path = _csv(tmp_path / "theirs.csv", GOOD)
    args = [a.replace("{csv}", str(csv_path)) for a in args]
    _one_line_error(_run([*args, "--results", str(results)], catalog_file), *needles)
