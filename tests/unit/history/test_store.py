"""The history store: real DuckDB files under tmp_path, ingest, rebuild, errors."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import duckdb
import pytest
from click.testing import CliRunner
from history_support import (
    PAIRS,
    V11_TIMES,
    as_version_11,
    as_version_12,
    make_sweep,
    ping_text,
    sweep_id_at,
)

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.exchange import exporter
from orchestrator.history import judgments
from orchestrator.history import store as h
from orchestrator.history.fingerprint import FINGERPRINT_FIELDS, differences, fingerprint
from orchestrator.results import files as store
from orchestrator.results.parse import parse_ping

T0 = datetime(2026, 11, 22, tzinfo=UTC)
A, B = PAIRS[0]


def _sweep(results, i, rtt=80.0, **kw):
    samples = {(A, B): [rtt + 0.1 * k for k in range(20)], (B, A): [rtt + 1.0] * 20}
    t = T0 + timedelta(hours=6 * i)
    return make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t, **kw)


def _table(path, query="SELECT * FROM measurements ORDER BY sweep_id, src, dst"):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def _refused_then_upgraded(path, version):
    """A store of an older schema `version`: a read-only open refuses it, nothing
    changed; a writer upgrades it to this version's."""
    with pytest.raises(UserError, match=f"schema version {version}"):
        h.connect(path, read_only=True)
    h.connect(path).close()
    assert _table(path, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(h.STORE_SCHEMA_VERSION),)
    ]


def test_fingerprint_fields_are_the_documented_constant_list():
    assert FINGERPRINT_FIELDS == (
        "backend",
        "src_zone", "src_image_id", "src_kernel", "src_machine_type",
        "dst_zone", "dst_image_id", "dst_kernel", "dst_machine_type",
        "probe_tool", "probe_version", "packet_size_bytes", "pings", "ping_interval_s",
        "streams", "window", "congestion", "duration_s", "network_tier",
    )  # fmt: skip
    old = dict.fromkeys(FINGERPRINT_FIELDS, "x")
    new = {**old, "src_kernel": "6.1.0-29", "window": ""}
    assert differences(old, new) == ["src_kernel: x -> 6.1.0-29", "window: x -> -"]
    assert fingerprint(old) != fingerprint(new)
    assert fingerprint(old) == fingerprint(dict(old))


def test_ingest_keeps_each_tests_ping_samples_from_raw(tmp_path):
    folder = _sweep(tmp_path, 0)
    assert h.ingest_sweep(tmp_path, folder.name) == 2
    rows = _table(
        tmp_path / "history.duckdb",
        "SELECT src, dst, source, rtt_samples_ms, rtt_avg_ms, started_utc, fingerprint "
        "FROM measurements ORDER BY src",
    )
    (src1, dst1, source, samples, avg, started, fp), second = rows
    assert (src1, dst1, source) == (A, B, "emulated")
    assert samples == pytest.approx([80.0 + 0.1 * k for k in range(20)])
    assert avg == pytest.approx(80.95)
    assert started == datetime(2026, 11, 22, 0, 0, 0)
    assert second[3] == [81.0] * 20
    assert len(fp) == 16


def test_captured_ping_output_in_raw_gives_the_parsers_samples(tmp_path):
    folder = _sweep(tmp_path, 0)
    captured = (h.Path(__file__).resolve().parents[2] / "data" / "ping_ok.txt").read_text()
    raw = store.raw_path(folder, 1, A)
    raw.write_text(h.json.dumps({"agent_version": 2, "ping": {"stdout": captured}}))
    assert h.ping_samples(folder, 1, A) == parse_ping(captured)["samples_ms"]
    assert len(h.ping_samples(folder, 1, A)) == 10


def test_ingest_is_idempotent_and_replaces_a_sweeps_rows(tmp_path):
    folder = _sweep(tmp_path, 0)
    h.ingest_sweep(tmp_path, folder.name)
    first = _table(tmp_path / "history.duckdb")
    h.ingest_sweep(tmp_path, folder.name)
    assert _table(tmp_path / "history.duckdb") == first
    # the sweep's rows changed (collect again): ingest replaces, never adds
    _sweep(tmp_path, 0, rtt=90.0)
    h.ingest_sweep(tmp_path, folder.name)
    again = _table(tmp_path / "history.duckdb", "SELECT rtt_avg_ms FROM measurements ORDER BY 1")
    assert [r[0] for r in again] == pytest.approx([90.95, 91.0])


@pytest.mark.slow
def test_rebuild_equals_ingesting_each_sweep(tmp_path):
    for i in range(3):
        _sweep(tmp_path, i, rtt=80.0 + i)
    for sweep_id in h.sweep_ids(tmp_path):
        h.ingest_sweep(tmp_path, sweep_id)
    query = "SELECT * EXCLUDE (ingested_utc) FROM sweeps ORDER BY sweep_id"
    before = (_table(tmp_path / "history.duckdb"), _table(tmp_path / "history.duckdb", query))
    (tmp_path / "history.duckdb").write_bytes(b"not a database at all" * 100)
    assert h.rebuild(tmp_path) == (3, 6)
    after = (_table(tmp_path / "history.duckdb"), _table(tmp_path / "history.duckdb", query))
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["history.duckdb"]


def test_corrupt_store_is_a_one_line_error(tmp_path):
    _sweep(tmp_path, 0)
    (tmp_path / "history.duckdb").write_bytes(b"\x00garbage" * 1000)
    result = CliRunner().invoke(main, ["history", "ingest", "--all", "--results", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert "not a readable DuckDB file" in result.output and "history rebuild" in result.output


def test_store_locked_by_another_process_is_a_one_line_error(tmp_path):
    folder = _sweep(tmp_path, 0)
    h.ingest_sweep(tmp_path, folder.name)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
         "print('open', flush=True); time.sleep(60)", str(tmp_path / "history.duckdb")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(UserError, match="in use by another process") as e:
            h.ingest_sweep(tmp_path, folder.name)
        assert "\n" not in str(e.value)
        assert f"process {holder.pid}" in str(e.value)
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    assert h.ingest_sweep(tmp_path, folder.name) == 2  # free again


def test_other_store_schema_version_is_refused(tmp_path):
    folder = _sweep(tmp_path, 0)
    h.ingest_sweep(tmp_path, folder.name)
    con = duckdb.connect(str(tmp_path / "history.duckdb"))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(UserError, match=r"schema version 99.*history rebuild"):
        h.ingest_sweep(tmp_path, folder.name)


def test_sweep_of_another_format_version_is_a_one_line_error(tmp_path):
    folder = _sweep(tmp_path, 0, format_version=99)
    args = ["history", "ingest", "--sweep", folder.name, "--results", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "format version 99" in result.output
    # --all leaves it out with a warning and keeps the others
    _sweep(tmp_path, 1)
    result = CliRunner().invoke(main, ["history", "ingest", "--all", "--results", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "1 sweep, 2 rows" in result.output


def test_write_is_one_transaction(tmp_path, monkeypatch):
    folder = _sweep(tmp_path, 0)
    h.ingest_sweep(tmp_path, folder.name)
    before = _table(tmp_path / "history.duckdb")
    real = h._write_batch

    def half(con, batch):
        con.execute("DELETE FROM recent WHERE sweep_id = ?", [batch.sweep["sweep_id"]])
        raise RuntimeError("crash after the delete")

    monkeypatch.setattr(h, "_write_batch", half)
    with pytest.raises(RuntimeError):
        h.ingest_sweep(tmp_path, folder.name)
    monkeypatch.setattr(h, "_write_batch", real)
    assert _table(tmp_path / "history.duckdb") == before


def test_missing_store_is_a_one_line_error(tmp_path):
    with pytest.raises(UserError, match="history ingest --all"):
        exporter.export(tmp_path, tmp_path / "x.csv", "csv")


def test_a_sweep_that_ends_joins_the_store_and_a_damaged_store_only_warns(tmp_path):
    """runner.ingest, what a sweep calls when it ends (after its report)."""
    from orchestrator.sweep import runner
    from orchestrator.sweep.sweep_folder import open_sweep

    folder = _sweep(tmp_path, 0)
    lines: list[str] = []
    sweep = open_sweep(folder.name, tmp_path, log=lines.append)
    runner.ingest(sweep)
    assert len(_table(h.store_path(tmp_path))) == 2  # both directions of the one pair
    assert any(line.startswith("history: ") for line in lines), lines
    h.store_path(tmp_path).write_bytes(b"not a duckdb file" * 100)
    lines.clear()
    before = (folder / "measurements.csv").read_text()
    runner.ingest(sweep)  # no exception: the sweep's own files are complete without it
    assert [x for x in lines if x.startswith("warning: not added to the history store")]
    assert (folder / "measurements.csv").read_text() == before


@pytest.mark.parametrize("command", [["rebuild"], ["ingest", "--all"]])
def test_a_mistyped_results_folder_is_an_error_not_an_empty_store(tmp_path, command):
    missing = tmp_path / "reslts"
    result = CliRunner().invoke(main, ["history", *command, "--results", str(missing)])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert f"--results {missing}: no such folder" in result.stderr
    assert not missing.exists()


def test_ping_text_helper_parses_back():
    assert parse_ping(ping_text([1.5, 2.5]))["samples_ms"] == [1.5, 2.5]


def test_ingest_prints_which_fingerprint_fields_changed(tmp_path):
    first = _sweep(tmp_path, 0)
    second = _sweep(tmp_path, 1, kernel="6.1.0-29-amd64")
    for folder in (first, second):
        args = ["history", "ingest", "--sweep", folder.name, "--results", str(tmp_path)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("configuration")]
    assert line == (
        "configuration changed for 2 pairs since their previous test: "
        "src_kernel: 6.1.0-28-amd64 -> 6.1.0-29-amd64; dst_kernel: 6.1.0-28-amd64 -> 6.1.0-29-amd64"
    )
    third = _sweep(tmp_path, 2, kernel="6.1.0-29-amd64")
    result = CliRunner().invoke(main, ["history", "ingest", "--sweep", third.name,
                                       "--results", str(tmp_path)])  # fmt: skip
    assert "configuration" not in result.output


@pytest.mark.slow
def test_old_rows_move_to_the_archive_in_pair_order_a_week_at_a_time(tmp_path):
    # one sweep a day for 45 days: rows from before the day 35 days before the latest
    # move once more than 7 days of them are due: on day 43, days 0..7 (2 pairs each)
    path = tmp_path / "history.duckdb"
    for day in range(45):
        _sweep(tmp_path, 4 * day, rtt=80.0 + day)
        h.ingest_sweep(tmp_path, sweep_id_at(T0 + timedelta(days=day), f"{4 * day:04x}"))
        archived = _table(path, "SELECT count(*) FROM archive")[0][0]
        assert archived == (0 if day <= 42 else 16), day
    assert _table(path, "SELECT count(*) FROM recent")[0][0] == 2 * 45 - 16
    # in pair order, then time: one pair's tests are one stretch
    order = _table(path, "SELECT src, dst, rtt_avg_ms FROM archive")
    assert order == sorted(order)
    assert [r[0] for r in order] == [min(A, B)] * 8 + [max(A, B)] * 8
    # the view holds every row once; an archived sweep ingested again is replaced
    assert _table(path, "SELECT count(*) FROM measurements")[0][0] == 90
    first = sweep_id_at(T0, "0000")
    h.ingest_sweep(tmp_path, first)
    assert _table(path, "SELECT count(*) FROM measurements")[0][0] == 90
    assert _table(path, f"SELECT count(*) FROM measurements WHERE sweep_id = '{first}'") == [(2,)]


def test_a_version_1_store_migrates_on_its_first_write(tmp_path):
    folder = _sweep(tmp_path, 0)
    path = tmp_path / "history.duckdb"
    con = duckdb.connect(str(path))
    # version 3's host evidence, version 4's limiter, rtt_samples and flags, 5's measure
    added = [
        c
        for c in h.STORE_COLUMNS
        if "allowance" in c
        or "steal" in c
        or c in ("limiter", "limiter_detail", "rtt_samples", "flags", "measure")
    ]
    assert len(added) == 11
    for statement in h._SCHEMA:
        if any(x in statement for x in ("archive", "VIEW", "_bins", "test_days", "TABLE pairs")):
            continue
        if statement in judgments.TABLES:  # version 7's
            continue
        for column in added:  # a version-1 table had none of them
            statement = statement.replace(f'"{column}" {h._COLUMN_TYPES[column]}, ', "")
        con.execute(statement.replace("TABLE recent", "TABLE measurements"))
    assert not set(added) & {r[0] for r in con.execute("DESCRIBE measurements").fetchall()}
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute(
        "INSERT INTO measurements (source, sweep_id, src, dst, rtt_avg_ms) "
        "VALUES ('emulated', 'old', 'a', 'b', 1.0)"
    )
    con.close()
    with pytest.raises(
        UserError, match=r"schema version 1.*history ingest --all --results .*\(it upgrades"
    ):
        h.connect(path, read_only=True)
    h.ingest_sweep(tmp_path, folder.name)
    assert _table(path, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(h.STORE_SCHEMA_VERSION),)
    ]
    # the columns added since are there, empty in the old row; its measure single_stream
    for column in (added[0], "limiter"):
        got = _table(path, f"SELECT {column} FROM measurements WHERE sweep_id = 'old'")
        assert got == [(None,)]
    got = _table(path, "SELECT measure FROM measurements WHERE sweep_id = 'old'")
    assert got == [("single_stream",)]
    assert _table(path, "SELECT sweep_id, count(*) FROM measurements GROUP BY 1 ORDER BY 1") == [
        (folder.name, 2),
        ("old", 1),
    ]


def test_a_version_7_store_bins_its_one_value_metrics_again(tmp_path):
    """Version 7 kept value_bins in the RTT's 0.05 % bins; 8 in 1 % bins: the first
    write computes them again, as a fresh ingest bins them."""
    for i in range(2):
        h.ingest_sweep(tmp_path, _sweep(tmp_path, i, rtt=80.0 + i).name)
    path = tmp_path / "history.duckdb"
    query = "SELECT * FROM value_bins ORDER BY ALL"
    fresh = _table(path, query)
    assert fresh
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM value_bins")
    for table in ("mesh_samples", "mesh_bins"):  # version 9's, not 7's
        con.execute(f"DROP TABLE {table}")
    for column in ("pings_sent", "pings_lost"):  # version 10's
        con.execute(f"ALTER TABLE test_days DROP COLUMN {column}")
    con.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    con.close()
    h.ingest_sweep(tmp_path, _sweep(tmp_path, 1, rtt=81.0).name)  # as it was: no change
    assert _table(path, "SELECT value FROM meta WHERE key = 'schema_version'") == [
        (str(h.STORE_SCHEMA_VERSION),)
    ]
    assert _table(path, query) == fresh
    assert _table(path, "SELECT count(*) FROM mesh_bins") == [(0,)]


def test_a_version_8_store_gains_the_mesh_tables_and_keeps_its_rows(tmp_path):
    """Version 9 adds mesh_samples and mesh_bins: a version-8 store gains them, empty,
    its rows and day summaries as they were."""
    for i in range(2):
        h.ingest_sweep(tmp_path, _sweep(tmp_path, i, rtt=80.0 + i).name)
    path = tmp_path / "history.duckdb"
    before = _table(path, "SELECT * FROM value_bins ORDER BY ALL")
    rows = _table(path, "SELECT count(*) FROM measurements")
    con = duckdb.connect(str(path))
    for table in ("mesh_samples", "mesh_bins"):
        con.execute(f"DROP TABLE {table}")
    for column in ("pings_sent", "pings_lost"):  # version 10's
        con.execute(f"ALTER TABLE test_days DROP COLUMN {column}")
    con.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    con.close()
    _refused_then_upgraded(path, 8)
    assert _table(path, "SELECT count(*) FROM mesh_samples") == [(0,)]
    assert _table(path, "SELECT count(*) FROM mesh_bins") == [(0,)]
    assert _table(path, "SELECT * FROM value_bins ORDER BY ALL") == before
    assert _table(path, "SELECT count(*) FROM measurements") == rows


def test_a_version_9_store_counts_its_pings_from_the_stored_rows(tmp_path):
    """Version 10 keeps each day's pings sent and lost in test_days (what a window's loss
    and its Wilson interval need): a version-9 store gains them, filled from its rows,
    the same as a fresh ingest gives; its other summaries as they were."""
    from orchestrator.core.stats import wilson
    from orchestrator.history import views as v

    for i in range(2):
        h.ingest_sweep(tmp_path, _sweep(tmp_path, i, rtt=80.0 + i).name)
    path = tmp_path / "history.duckdb"
    con = duckdb.connect(str(path))
    # A -> B lost 20 % of its pings: 20 replies of 25 sent, 5 lost, in each sweep
    con.execute("UPDATE recent SET ping_loss_pct = 20.0 WHERE src = ? AND dst = ?", [A, B])
    con.close()
    with h.opened(tmp_path) as writer, h.transaction(writer):
        h.refresh_bins(writer)
    query = "SELECT * FROM test_days ORDER BY ALL"
    fresh = _table(path, query)
    counts = "SELECT days, pings_sent, pings_lost FROM test_days t JOIN pairs p USING (pair) "
    counts += f"WHERE metric = 'loss' AND p.src = '{A}' AND p.dst = '{B}' ORDER BY days"
    assert _table(path, counts) == [(1, 50, 10), (7, 50, 10), (31, 50, 10), (92, 50, 10)]
    values = _table(path, "SELECT * FROM value_bins ORDER BY ALL")
    con = duckdb.connect(str(path))
    for column in ("pings_sent", "pings_lost"):
        con.execute(f"ALTER TABLE test_days DROP COLUMN {column}")
    con.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
    con.close()
    _refused_then_upgraded(path, 9)
    assert _table(path, query) == fresh
    assert _table(path, "SELECT * FROM value_bins ORDER BY ALL") == values
    # a window's loss is lost / sent of its tests, with its Wilson interval
    with h.opened(tmp_path, read_only=True) as con:
        doc = v.matrix(con, "loss", "p50", "all")
    cell = next(c for c in doc["matrices"][0]["cells"] if (c["src"], c["dst"]) == (A, B))
    low, high = wilson(10, 50)
    assert (cell["pings_sent"], cell["pings_lost"], cell["loss_pct"]) == (50, 10, 20.0)
    assert cell["loss_low_pct"] == pytest.approx(100 * low, abs=1e-6)
    assert cell["loss_high_pct"] == pytest.approx(100 * high, abs=1e-6)


def test_a_version_10_store_gains_its_quarter_rows_from_its_day_rows(tmp_path):
    """Version 11 keeps each day summary per quarter too (what a year's window merges
    instead of its months): a version-10 store gains them, the same rows as the ingest
    keeps, its other rows as they were."""
    for i in range(3):  # the last sweep in the next quarter: two quarters
        h.ingest_sweep(tmp_path, _sweep(tmp_path, i * 200, rtt=80.0 + i).name)
    path = tmp_path / "history.duckdb"
    tables = ("rtt_bins", "value_bins", "test_days")
    fresh = {t: _table(path, f"SELECT * FROM {t} ORDER BY ALL") for t in tables}
    quarters = _table(path, "SELECT DISTINCT day FROM rtt_bins WHERE days = 92 ORDER BY 1")
    assert [q[0].month for q in quarters] == [10, 1]  # T0's quarter and the next
    # each summary's quarters hold what its days hold: 3 sweeps of 2 pairs, 20 samples each
    tests = "SELECT days, sum(tests) FROM test_days WHERE metric = 'rtt' GROUP BY 1 ORDER BY 1"
    assert _table(path, tests) == [(1, 6), (7, 6), (31, 6), (92, 6)]
    samples = "SELECT days, sum(n) FROM rtt_bins GROUP BY 1 ORDER BY 1"
    assert _table(path, samples) == [(1, 120), (7, 120), (31, 120), (92, 120)]
    con = duckdb.connect(str(path))
    for t in tables:
        con.execute(f"DELETE FROM {t} WHERE days = 92")
    con.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    con.close()
    _refused_then_upgraded(path, 10)
    for t in tables:
        assert _table(path, f"SELECT * FROM {t} ORDER BY ALL") == fresh[t], t


def _changes(results, *args):
    got = CliRunner().invoke(main, ["changes", "--results", str(results), *args])
    assert got.exit_code in (0, 3), got.output
    return got.stdout


def test_a_version_11_store_types_its_change_times_and_shows_the_same_changes(tmp_path):
    """Version 12 keeps the times of episodes and configuration changes as TIMESTAMP, not
    text: a version-11 store's are converted in place (an episode not closed: NULL, not
    ""), and `changes` shows what it showed, to the byte."""
    levels = [80.0] * 9 + [95.0] * 3 + [80.0] * 2 + [80.0] * 2  # open at 11, reverted at 13
    for i, rtt in enumerate(levels):  # a new image at 14: a configuration change
        h.ingest_sweep(tmp_path, _sweep(tmp_path, i, rtt, kernel=f"6.1.{i >= 14}").name)
    path = tmp_path / "history.duckdb"
    shown = {args: _changes(tmp_path, *args) for args in [(), ("--json", "--runs", "100")]}
    assert '"status": "reverted"' in shown[("--json", "--runs", "100")]
    assert "CONFIGURATION" in shown[()]
    tables = {t: _table(path, f"SELECT * FROM {t} ORDER BY ALL") for t in V11_TIMES}
    as_version_11(path)
    # the text version 11 wrote: what the episode's state (JSON) holds too
    (started, closed, state) = _table(path, "SELECT started_t, closed_t, state FROM episodes")[0]
    assert started == h.json.loads(state)["started_t"] == "2026-11-24T06:00:00.000Z"
    assert closed == h.json.loads(state)["closed_t"] == "2026-11-25T06:00:00.000Z"
    _refused_then_upgraded(path, 11)
    types = "SELECT table_name, column_name, data_type FROM information_schema.columns"
    kinds = {(t, c): k for t, c, k in _table(path, types)}
    assert {kinds[(t, c)] for t, cs in V11_TIMES.items() for c in cs} == {"TIMESTAMP"}
    assert {t: _table(path, f"SELECT * FROM {t} ORDER BY ALL") for t in V11_TIMES} == tables
    assert {args: _changes(tmp_path, *args) for args in shown} == shown
    # judged on from the converted store as from the fresh one
    h.ingest_sweep(tmp_path, _sweep(tmp_path, 16, 80.0, kernel="6.1.True").name)
    assert _table(path, "SELECT count(*) FROM judgments WHERE status = 'normal'")[0][0] > 0


def test_a_version_12_store_keeps_its_bins_sums_as_integers_and_shows_the_same_numbers(
    tmp_path,
):
    """Version 13 keeps a bin's sum as an integer (metrics.Metric.total_scale: added
    exactly, in any order, and faster than a decimal) and each test's RTT (rtt_run_ms,
    computed once): a version-12 store's DOUBLE sums are converted in place, to the rows a
    fresh ingest writes, its tests' RTTs stored as an ingest stores them, and `matrix` and
    `history show` show what they showed."""
    from orchestrator.history import views as v

    for i in range(3):
        h.ingest_sweep(tmp_path, _sweep(tmp_path, i, rtt=80.0 + i).name)
    path = tmp_path / "history.duckdb"
    tables = ("rtt_bins", "value_bins")
    fresh = {t: _table(path, f"SELECT * FROM {t} ORDER BY ALL") for t in tables}
    # 20 samples of A -> B each 80.0 .. 81.9 in the first sweep: their sum in nanoseconds
    day = "SELECT sum(total) FROM rtt_bins r JOIN pairs p USING (pair) WHERE days = 92 "
    assert _table(path, day + f"AND p.src = '{A}' AND p.dst = '{B}'") == [
        (3 * 1619_000_000 + 3 * 20_000_000,)
    ]

    runs = "SELECT sweep_id, src, dst, rtt_run_ms FROM measurements ORDER BY ALL"
    stored = _table(path, runs)
    assert [r[3] for r in stored if (r[1], r[2]) == (A, B)] == [80.95, 81.95, 82.95]  # medians

    def shown():
        with h.opened(tmp_path, read_only=True) as con:
            windows = [v.matrix(con, m, "mean", "all") for m in ("rtt", "jitter", "throughput")]
            return windows, v.pair_history(con, (A, B))

    before = shown()
    as_version_12(path)
    _refused_then_upgraded(path, 12)
    types = "SELECT DISTINCT data_type FROM information_schema.columns WHERE column_name = 'total'"
    assert _table(path, types) == [("BIGINT",)]
    assert {t: _table(path, f"SELECT * FROM {t} ORDER BY ALL") for t in tables} == fresh
    assert _table(path, runs) == stored
    assert shown() == before
