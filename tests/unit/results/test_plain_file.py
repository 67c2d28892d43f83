"""The writer's mark that a measurements.csv is plain (results.plain_file): written only
for a plain text, and trusted only while the file is the one it marked."""

import os
import shutil

import pytest

from orchestrator.model import load_catalog
from orchestrator.results import files, plain_file
from testkit import synthetic

CATALOG = load_catalog()


def _rows(n=30):
    rows = list(synthetic.synthetic_rows(CATALOG.regions, n, sweep_id="20261122T0000Z-b0c4"))
    for i, row in enumerate(rows):
        if i % 7 == 0:
            row.update(rtt_p50_ms="", flags="asymmetric", error="")
    return rows


def test_the_text_csv_writer_writes_of_plain_rows_is_plain():
    text = files.csv_text(_rows())
    assert plain_file.plain_rows(text) == 30
    assert plain_file.plain_rows(files.csv_text([])) == 0


@pytest.mark.parametrize(
    ("column", "cell"),
    [
        ("error", "timeout, retried"),  # quoted by csv.writer
        ("error", 'said "no"'),
        ("backend", "lo\x07cal"),  # a control character
        ("limiter_detail", "é"),
        ("rtt_p50_ms", "-1"),
        ("rtt_p50_ms", "1e999"),
        ("throughput_bps", "nan"),
        ("started_utc", "2026-11-22 00:00:00"),
        ("src_cloud", "  "),
        ("rtt_samples", "-1"),
        ("rtt_samples", " 5"),
    ],
)
def test_a_text_with_one_cell_that_is_not_plain_is_not(column, cell):
    rows = _rows()
    rows[11][column] = cell
    assert plain_file.plain_rows(files.csv_text(rows)) is None


def test_a_text_of_another_header_or_cut_is_not_plain():
    text = files.csv_text(_rows())
    assert plain_file.plain_rows(text[:-1]) is None  # the last row cut
    assert plain_file.plain_rows(text + "\n") is None  # a blank line
    assert plain_file.plain_rows(text.replace("\n", "\r\n")) is None
    assert plain_file.plain_rows("x" + text) is None
    assert plain_file.plain_rows(files.csv_text(_rows(), extra=("source",))) is None


def test_the_writer_marks_a_plain_file_and_unmarks_it_when_it_is_not(tmp_path):
    path = tmp_path / "s" / files.MEASUREMENTS_FILE
    mark = path.with_name(plain_file.PLAIN_MARK)
    files.write_rows(tmp_path / "s", _rows())
    assert mark.exists() and plain_file.marked_rows(path) == 30
    rows = _rows()
    rows[3]["error"] = "a, b"
    files.write_rows(tmp_path / "s", rows)
    assert not mark.exists() and plain_file.marked_rows(path) is None


def _edit_in_place(path, old: bytes, new: bytes):
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    with path.open("r+b") as f:  # the same inode, the same size
        f.write(data.replace(old, new, 1))


def test_a_file_changed_after_it_was_marked_is_not_marked(tmp_path):
    path = tmp_path / files.MEASUREMENTS_FILE
    files.write_measurements(path, files.csv_text(_rows()))
    assert plain_file.marked_rows(path) == 30
    st = path.stat()
    _edit_in_place(path, b",local,", b",lo\x07al,")  # same size, other content
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # its time put back, too
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert plain_file.marked_rows(path) is None  # its change time moved
    files.write_measurements(path, files.csv_text(_rows()))
    copy = tmp_path / "copy.csv"
    shutil.copy2(path, copy)
    os.replace(copy, path)  # the same bytes and times, another inode
    assert plain_file.marked_rows(path) is None


@pytest.mark.parametrize(
    "mark", ["", "{", "[]", '{"format": 1, "rows": true}', '{"format": 9, "rows": 30}']
)
def test_a_mark_that_cannot_be_read_is_no_mark(tmp_path, mark):
    path = tmp_path / files.MEASUREMENTS_FILE
    files.write_measurements(path, files.csv_text(_rows()))
    path.with_name(plain_file.PLAIN_MARK).write_text(mark)
    assert plain_file.marked_rows(path) is None
