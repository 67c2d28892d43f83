"""`report --input` on generated files, through the real CLI: whatever the bytes,
the answer is a report (exit 0) or one line on stderr (exit 2), never a traceback."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from report_support import CATALOG, write_catalog

from orchestrator.cli import main

COLUMNS = [
    "src_cloud", "src_region", "dst_cloud", "dst_region", "rtt_avg_ms", "throughput_bps",
    "distance_km", "status", "sweep_id", "backend", "started_utc", "comment",
]  # fmt: skip
CLOUDS = ["aws", "gcp", "AWS", "azure", ""]
REGIONS = [r.id for r in CATALOG.regions] + ["mars-north-1", ""]
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(0, 1e10).map(lambda v: f"{v:g}"),
    st.integers(-10**6, 10**12).map(str),
    st.sampled_from(["", " ", "nan", "NaN", "inf", "-inf", "Infinity", "1e309", "-0", "12,5",
                     "0x10", "1_000", "abc", "—", "\u00a012"]),
)  # fmt: skip
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


NUMERIC = ("rtt_avg_ms", "throughput_bps", "distance_km")
GOOD_NUMBERS = st.floats(0, 1e9).map(lambda v: f"{v:.6g}")


def _fault(column: str) -> st.SearchStrategy[str]:
    if column.endswith("_cloud"):
        return st.one_of(st.sampled_from(CLOUDS), TEXT)
    if column.endswith("_region"):
        return st.one_of(st.sampled_from(REGIONS), TEXT)
    if column in ("rtt_avg_ms", "throughput_bps", "distance_km"):
        return NUMBERS
    return TEXT


@st.composite
def csv_files(draw: st.DrawFn) -> bytes:
    """A measurements CSV with the faults people's files have (most of them
    readable, so the report itself runs too)."""
    faults = draw(st.integers(0, 3))  # 0: a clean file; else how wild the cells are
    header = list(draw(st.permutations(COLUMNS[:5])))
    if faults == 3:  # columns missing, repeated or unknown
        header = draw(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=len(COLUMNS)))
    elif draw(st.booleans()):
        header += draw(st.lists(st.sampled_from(COLUMNS[5:]), max_size=4, unique=True))
    sep = draw(st.sampled_from([",", ",", ";", "\t", "|", " "] if faults else [","]))
    lines = [sep.join(header)]
    for _ in range(draw(st.integers(0, 12))):
        src, dst = draw(st.sampled_from(CATALOG.regions)), draw(st.sampled_from(CATALOG.regions))
        good = {
            "src_cloud": src.cloud,
            "src_region": src.id,
            "dst_cloud": dst.cloud,
            "dst_region": dst.id,
            "status": draw(st.sampled_from(["ok", "", "failed"])),
        }
        cells = [
            draw(_fault(c))
            if faults and draw(st.integers(0, 4)) == 0
            else good.get(c) or draw(GOOD_NUMBERS if c in NUMERIC else TEXT)
            for c in header
        ]
        width = len(cells)
        if faults:
            width = draw(st.sampled_from([width] * 6 + [0, 1, width + 1]))
        lines.append(sep.join([*cells, "x"][:width]))
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n"]))
    encodings = ["utf-8", "utf-8-sig"] + (["latin-1", "utf-16"] if faults else [])
    data = text.encode(draw(st.sampled_from(encodings)), errors="replace")
    if faults and draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(max_size=8)) + data[at:]
    return data


def _check(data: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="ir-fuzz-") as tmp:
        path = Path(tmp) / "theirs.csv"
        path.write_bytes(data)
        catalog = write_catalog(Path(tmp) / "regions.yaml")
        out = Path(tmp) / "out"
        args = ["report", "--input", str(path), "--catalog", str(catalog), "--no-png"]
        result = CliRunner().invoke(main, [*args, "--out", str(out)])
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
        assert result.exit_code in (0, 2), result.output
        event(f"exit {result.exit_code}")
        if result.exit_code == 2:
            lines = result.stderr.splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
            assert not out.exists()
            return
        assert all(" WARNING " in line for line in result.stderr.splitlines())
        summary = json.loads((out / "report.json").read_text())
        assert 0 < summary["rows_used"] <= summary["rows_read"]
        assert summary["summary"][0]["n"] == summary["rows_used"]
        for group in summary["summary"]:
            for key in ("rtt_median_over_tests_ms", "rtt_p90_over_tests_ms"):
                assert group[key] is None or group[key] >= 0


_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(csv_files())
def test_generated_csvs_give_a_report_or_one_line(data):
    _check(data)


@settings(max_examples=25, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_give_a_report_or_one_line(data):
    _check(data)
