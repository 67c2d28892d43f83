"""The mesh's rows in the store beside the sweeps': a rebuild keeps every sample, bin and
judgment of the mesh as it was (no folder a rebuild reads holds them)."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest
from history_support import PAIRS, as_version_11, make_sweep, sweep_id_at
from mesh_support import MESH_ID, SOURCE, add_mesh

from orchestrator.history import store

# a store judged bin by bin (20 transactions): seconds; `make unit` skips them
pytestmark = pytest.mark.slow

MESH_TABLES = {
    "mesh_samples": "SELECT * FROM mesh_samples ORDER BY ALL",
    "mesh_bins": "SELECT * FROM mesh_bins ORDER BY ALL",
    **{
        table: f"SELECT * FROM {table} WHERE source = '{SOURCE}' ORDER BY ALL"
        for table in ("judgments", "episodes", "calibrations", "detection_state")
    },
    "sweeps": f"SELECT * EXCLUDE (ingested_utc) FROM sweeps WHERE source = '{SOURCE}'",
    "meta": "SELECT * FROM meta WHERE starts_with(key, 'mesh_') ORDER BY ALL",
}


def _tables(path):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {name: con.execute(query).fetchall() for name, query in MESH_TABLES.items()}
    finally:
        con.close()


@pytest.fixture
def results(tmp_path):
    from datetime import UTC, datetime

    t = datetime(2026, 11, 22, tzinfo=UTC)
    folder = make_sweep(tmp_path, sweep_id_at(t), {PAIRS[0]: [80.0] * 20, PAIRS[1]: [81.0] * 20})
    store.ingest_sweep(tmp_path, folder.name)
    with store.opened(tmp_path) as con:
        add_mesh(con)
    return tmp_path


def test_rebuild_keeps_every_mesh_row_as_it_was(results):
    path = results / store.HISTORY_FILE
    before = _tables(path)
    assert len(before["mesh_samples"]) == 20 * 5 * 6 and len(before["mesh_bins"]) == 20 * 6
    assert len(before["episodes"]) == 1 and len(before["judgments"]) > 100
    assert len(before["sweeps"]) == 1 and before["sweeps"][0][0] == MESH_ID
    assert len(before["meta"]) == 3 + 1  # three hosts' positions, the last bin judged
    assert store.rebuild(results) == (1, 2)
    assert _tables(path) == before
    con = duckdb.connect(str(path), read_only=True)
    try:  # the sweep's own rows and judgments are there too, its source apart
        assert con.execute("SELECT count(*) FROM measurements").fetchone()[0] == 2
        sources = con.execute("SELECT DISTINCT source FROM judgments ORDER BY 1").fetchall()
        assert sources == [("emulated",), (SOURCE,)]
    finally:
        con.close()
    # rebuilt again from a rebuilt store: the same
    store.rebuild(results)
    assert _tables(path) == before


def test_rebuild_of_a_store_held_by_another_process_keeps_the_old(results):
    path = results / store.HISTORY_FILE
    before = _tables(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
         "print('open', flush=True); time.sleep(60)", str(path)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(store.StoreBusy, match="in use by another process"):
            store.rebuild(results)
    finally:
        holder.kill()
        holder.wait()
    assert _tables(path) == before  # not replaced by a store without them
    assert sorted(p.name for p in results.iterdir() if p.is_file()) == [store.HISTORY_FILE]


def test_rebuild_of_an_unreadable_store_warns_that_the_mesh_rows_are_gone(results):
    path = results / store.HISTORY_FILE
    path.write_bytes(b"not a database at all" * 100)
    warned = []
    assert store.rebuild(results, warn=warned.append) == (1, 2)
    assert warned == [f"the mesh's rows of {path} are not kept: it cannot be read"]
    assert _tables(path)["mesh_bins"] == []


def test_the_sweeps_matrix_names_the_meshs_own_for_a_mesh_source(results):
    from click.testing import CliRunner

    from orchestrator.cli import main

    def run(*args):
        return CliRunner().invoke(main, [*args, "--results", str(results)])

    given = run("matrix", "--source", SOURCE, "--window", "1D", "--json")
    assert given.exit_code == 2 and given.output.count("\n") == 1, given.output
    command = f"interregion mesh matrix --source {SOURCE} --window 1D --json"
    assert f"--source {SOURCE} is the continuous mesh's" in given.output
    assert command in given.output
    # the command it names runs as printed
    mesh = run("mesh", "matrix", "--source", SOURCE, "--window", "1D", "--json")
    assert mesh.exit_code == 0, mesh.output
    assert len(json.loads(mesh.output)["cells"]) == 6
    # a window both have is carried over; one the mesh has not becomes its 1H
    week = run("matrix", "--source", SOURCE, "--window", "1W").output
    assert f"'interregion mesh matrix --source {SOURCE} --window 1W'" in week
    latest = run("matrix", "--source", SOURCE, "--window", "latest").output
    assert f"interregion mesh matrix --source {SOURCE} --window 1H'" in latest
    # no --source: every sweep source, the mesh's left to its own matrix (no empty table)
    every = run("matrix", "--window", "all", "--json")
    assert every.exit_code == 0, every.output
    assert [t["source"] for t in json.loads(every.output)["matrices"]] == ["emulated"]


def test_rebuild_of_a_version_11_store_keeps_its_mesh_judgments_with_typed_times(results):
    """A version-11 store (change times as text) rebuilt: its mesh episodes are kept,
    their times as TIMESTAMP, as they were before it was made version 11."""
    path = results / store.HISTORY_FILE
    before = _tables(path)
    assert before["episodes"]
    as_version_11(path)
    assert store.rebuild(results) == (1, 2)
    assert _tables(path) == before
