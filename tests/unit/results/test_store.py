"""The results folder: atomic writes, the CSV contract, merging attempts, loading errors."""

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orchestrator.core.errors import UserError
from orchestrator.results import files as store
from orchestrator.results.schema import MEASUREMENT_COLUMNS, RESULTS_FORMAT_VERSION


def row(src="aws:us-east-1", dst="gcp:europe-west1", status="ok", round_no=1, **extra):
    sc, sr = src.split(":")
    dc, dr = dst.split(":")
    return {
        "sweep_id": "s",
        "src_cloud": sc,
        "src_region": sr,
        "dst_cloud": dc,
        "dst_region": dr,
        "status": status,
        "round": round_no,
        **extra,
    }


def test_sweep_ids_sort_by_time_and_are_unique():
    a = store.new_sweep_id(datetime(2026, 11, 22, 1, 30, tzinfo=UTC), "3fa2")
    assert a == "20261122T0130Z-3fa2"
    ids = {store.new_sweep_id() for _ in range(50)}
    assert len(ids) > 40  # 4 hex digits: collisions are possible but rare
    assert all(re.fullmatch(r"\d{8}T\d{4}Z-[0-9a-f]{4}", i) for i in ids)
    assert store.new_sweep_id(datetime(2026, 1, 1, tzinfo=UTC)) < a


def test_atomic_write_replaces_whole_file_and_leaves_no_temporaries(tmp_path):
    path = tmp_path / "deep" / "f.txt"
    store.write_atomic(path, "one")
    store.write_atomic(path, "two")
    assert path.read_text() == "two"
    assert os.listdir(path.parent) == ["f.txt"]


def test_atomic_write_that_fails_keeps_the_old_version(tmp_path, monkeypatch):
    path = tmp_path / "measurements.csv"
    store.write_atomic(path, "old complete content")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.write_atomic(path, "new")
    assert path.read_text() == "old complete content"
    assert os.listdir(tmp_path) == ["measurements.csv"]


def test_csv_has_exactly_the_contract_columns_and_round_trips(tmp_path):
    rows = [row(throughput_bps=12345678.123456789, rtt_avg_ms=1.5, retransmits=3, error="")]
    store.write_rows(tmp_path, rows)
    text = (tmp_path / store.MEASUREMENTS_FILE).read_text()
    assert text.splitlines()[0] == ",".join(MEASUREMENT_COLUMNS)
    back = store.read_rows(tmp_path / store.MEASUREMENTS_FILE)
    assert back[0]["throughput_bps"] == "12345678.123457"
    assert back[0]["rtt_avg_ms"] == "1.5"
    assert back[0]["retransmits"] == "3"
    assert back[0]["tcp_rtt_ms"] == ""  # missing values are empty, never "None"


def test_csv_refuses_columns_outside_the_contract(tmp_path):
    with pytest.raises(ValueError, match="bitrate"):
        store.csv_text([row(bitrate=1)])


def test_csv_of_another_version_is_a_one_line_error(tmp_path):
    path = tmp_path / store.MEASUREMENTS_FILE
    path.write_text("sweep_id,rtt\nx,1\n")
    with pytest.raises(UserError, match="another version") as e:
        store.read_rows(path)
    assert "\n" not in str(e.value)


def test_merge_keeps_one_row_per_directed_test_newest_first_but_never_loses_an_ok():
    first = [row(status="ok"), row("gcp:europe-west1", "aws:us-east-1", status="failed")]
    retry = [
        row(status="failed", round_no=5),  # a failed retry must not hide the ok result
        row("gcp:europe-west1", "aws:us-east-1", status="ok", round_no=5),
    ]
    merged = store.merge_rows(first, retry)
    assert len(merged) == 2
    by_key = {store.pair_key(r): r for r in merged}
    assert by_key[("aws:us-east-1", "gcp:europe-west1")]["round"] == 1
    assert by_key[("gcp:europe-west1", "aws:us-east-1")]["status"] == "ok"
    assert store.ok_tests(merged) == set(by_key)


def test_unknown_sweep_id_is_a_one_line_error_naming_it(tmp_path):
    with pytest.raises(UserError) as e:
        store.load_record(tmp_path, "20990101T0000Z-dead")
    assert "unknown sweep id '20990101T0000Z-dead'" in str(e.value)
    assert "\n" not in str(e.value)


ID = "20261122T0130Z-3fa2"


def test_results_of_another_format_version_are_refused(tmp_path):
    (tmp_path / ID).mkdir()
    (tmp_path / ID / store.SWEEP_FILE).write_text(
        json.dumps({"sweep_id": ID, "format_version": RESULTS_FORMAT_VERSION + 1})
    )
    with pytest.raises(UserError, match="format version"):
        store.load_record(tmp_path, ID)


def test_damaged_sweep_record_is_a_one_line_error(tmp_path):
    (tmp_path / ID).mkdir()
    (tmp_path / ID / store.SWEEP_FILE).write_text('{"sweep_id": ')
    with pytest.raises(UserError, match="damaged"):
        store.load_record(tmp_path, ID)


def test_record_round_trip(tmp_path):
    """A real record (tests/data/records) saved and loaded: the typed record, written back
    as it was."""
    doc = json.loads((Path(__file__).parents[2] / "data/records/sweep-done.json").read_text())
    store.save_record(tmp_path, doc)
    record = store.load_record(tmp_path, doc["sweep_id"])
    assert record.sweep_id == doc["sweep_id"] and record.to_json() == doc


def test_a_record_that_is_not_one_is_a_one_line_error_naming_the_file(tmp_path):
    store.save_record(tmp_path, {"sweep_id": ID, "format_version": RESULTS_FORMAT_VERSION})
    with pytest.raises(UserError) as e:
        store.load_record(tmp_path, ID)
    assert str(tmp_path / ID / store.SWEEP_FILE) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("bad", ["../x", "x", "20261122T0130Z-3fa2/..", "/tmp/x", ""])
def test_sweep_ids_that_are_not_ids_never_become_paths(tmp_path, bad):
    for call in (
        lambda: store.load_record(tmp_path, bad),
        lambda: store.sweep_dir(tmp_path, bad),
        lambda: store.save_record(tmp_path, {"sweep_id": bad}),
    ):
        with pytest.raises(UserError) as e:
            call()
        assert str(e.value) == f"sweep id '{bad}' is not of the form 20261122T0130Z-3fa2"
    assert not list(tmp_path.iterdir())


def test_record_of_another_sweep_in_a_folder_is_refused(tmp_path):
    other = "20261122T0131Z-beef"
    store.save_record(tmp_path, {"sweep_id": other, "format_version": RESULTS_FORMAT_VERSION})
    (tmp_path / other).rename(tmp_path / ID)  # a copied or renamed results folder
    with pytest.raises(UserError) as e:
        store.load_record(tmp_path, ID)
    assert f"'{other}', not '{ID}'" in str(e.value) and "\n" not in str(e.value)


def test_state_folder_is_private_even_under_a_permissive_umask(tmp_path):
    old = os.umask(0)
    try:
        state = store.make_state_dir(tmp_path / ID)
    finally:
        os.umask(old)
    assert state == tmp_path / ID / store.STATE_DIR
    assert state.stat().st_mode & 0o777 == 0o700
    state.chmod(0o755)  # a folder made by an older version
    store.make_state_dir(tmp_path / ID)
    assert state.stat().st_mode & 0o777 == 0o700


def test_raw_files_are_named_by_round_and_host(tmp_path):
    path = store.raw_path(tmp_path, 7, "aws:us-east-1")
    assert path == tmp_path / "raw" / "round-007" / "aws_us-east-1.json"
    store.write_atomic(path, "{}")
    assert store.read_raw_round(tmp_path, 7) == {"aws_us-east-1": "{}"}
    assert store.read_raw_round(tmp_path, 8) == {}


def test_a_pair_has_one_test_per_measure_and_each_keeps_its_ok():
    single = row(measure="single_stream", throughput_bps=5e6)
    capacity = row(measure="capacity", throughput_bps=4e7, round_no=4)
    failed_retry = row(measure="capacity", status="failed", round_no=6)
    merged = store.merge_rows([single], [capacity, failed_retry])
    assert sorted(r["measure"] for r in merged) == ["capacity", "single_stream"]
    assert all(r["status"] == "ok" for r in merged)
    pair = ("aws:us-east-1", "gcp:europe-west1")
    assert store.ok_tests(merged, ("throughput",)) == {pair}
    assert store.ok_tests(merged, ("throughput",), "capacity") == {pair}
    assert store.ok_tests([single], ("throughput",), "capacity") == set()


def test_a_capacity_row_is_never_completed_from_the_ping_phase(tmp_path):
    # a capacity retry after a failed capacity test: it replaces it as it is, ok
    phase = row(measure="single_stream", rtt_avg_ms=80.0, rtt_p50_ms=80.0)
    failed = row(measure="capacity", status="failed", round_no=4)
    retry = row(measure="capacity", throughput_bps=4e7, round_no=7)

    def complete(old, new):
        return {**new, "rtt_avg_ms": old["rtt_avg_ms"], "status": old["status"]}

    merged = store.add_round_rows([phase, failed], [retry], complete)
    by_measure = {r["measure"]: r for r in merged}
    assert by_measure["capacity"]["status"] == "ok"
    assert "rtt_avg_ms" not in by_measure["capacity"]
    assert by_measure["single_stream"]["rtt_avg_ms"] == 80.0


def test_a_csv_from_before_the_measure_column_reads_as_single_stream(tmp_path):
    old = tuple(c for c in MEASUREMENT_COLUMNS if c != "measure")
    values = {c: "" for c in old} | {"src_cloud": "aws", "src_region": "us-east-1",
                                      "dst_cloud": "gcp", "dst_region": "us-east4",
                                      "status": "ok", "throughput_bps": "5000000"}  # fmt: skip
    path = tmp_path / "measurements.csv"
    path.write_text(",".join(old) + "\n" + ",".join(values[c] for c in old) + "\n")
    (got,) = store.read_rows(path)
    assert got["measure"] == "single_stream" and got["throughput_bps"] == "5000000"
    assert tuple(got) == MEASUREMENT_COLUMNS
