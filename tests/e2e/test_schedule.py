"""End to end: one real `interregion schedule run` on the emulated cloud (2 regions,
short tests): sweep, report, site, publish to a folder, retention and the ledger."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import duckdb
import pytest
from e2e_support import leftovers, run_cli, start_cli, wait_for

from orchestrator.drivers.lock import LOCK_FILE, read_holder
from orchestrator.results import files as store
from orchestrator.schedule import ledger

pytestmark = [pytest.mark.root, pytest.mark.slow]

OLD_ID = "20250101T0000Z-0001"


def test_a_scheduled_tick_runs_publishes_retains_and_records(tmp_path):
    results = tmp_path / "results"
    old = results / OLD_ID  # a finished sweep from long ago: loses raw/ and state/ only
    (old / "raw" / "round-001").mkdir(parents=True)
    (old / "state").mkdir()
    # a whole record (an older version's, tests/data/records), moved to that day
    record = json.loads((Path(__file__).parent.parent / "data/records/sweep-done.json").read_text())
    record.update(sweep_id=OLD_ID, status="done", created_utc="2025-01-01T00:00:00.000Z")
    (old / "sweep.json").write_text(json.dumps(record))
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(
        f"""profiles:
  tiny:
    every: PT1H
    regions: aws:us-east-1,gcp:europe-west1
    pings: 10  # fewer than 5 echoes is a flagged RTT (few_samples): room for a lost one
    duration: 1  # from 0 s it can count more received than sent: a throughput flag, and
    omit: 0  # the report still shows the RTT (docs/results.md, 'Flags')
    backend: local
    budget_usd: 1
    budget_usd_month: 10
    site: {tmp_path / "site"}
    publish: {tmp_path / "www"}
    keep_raw_days: 30
"""
    )
    out = run_cli(["schedule", "run", "tiny", "--file", str(schedules), "--results", str(results)])
    assert out.returncode == 0, out.stdout + out.stderr
    (record,) = ledger.read(results)
    assert record["outcome"] == "ok", record
    assert record["tests_ok"] == 2 and record["tests_failed"] == 0
    assert record["bytes"] > 0 and record["cost_usd"] == 0  # emulated: nothing billed
    assert record["provision_s"] > 0 and record["measure_s"] > 0
    assert record["scheduled_utc"].endswith(":00:00Z")
    assert record["retention_deleted"] == [f"{OLD_ID}/raw", f"{OLD_ID}/state"]
    assert sorted(p.name for p in old.iterdir()) == ["sweep.json"]
    sweep_dir = results / record["sweep_id"]
    meta = json.loads((sweep_dir / store.SWEEP_FILE).read_text())
    assert meta["status"] == "done"
    assert meta["schedule"]["profile"] == "tiny" and meta["schedule"]["hour_utc"] in range(24)
    assert (sweep_dir / "raw").is_dir()  # today's sweep keeps its raw outputs
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "www" / "index.html").is_file()
    assert record["published_to"] == str(tmp_path / "www")
    assert read_holder(results / LOCK_FILE) == {}
    assert not any(leftovers(sweep_dir).values()), leftovers(sweep_dir)
    # the sweep joined the history store when it ended (runner.ingest)
    con = duckdb.connect(str(results / "history.duckdb"), read_only=True)
    try:
        (count,) = con.execute(
            "SELECT count(*) FROM measurements WHERE sweep_id = ?", [record["sweep_id"]]
        ).fetchone()
    finally:
        con.close()
    assert count == 2


def test_two_ticks_at_once_one_measures_the_other_is_skipped_and_harms_nothing(tmp_path):
    results = tmp_path / "results"
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(
        """profiles:
  tiny:
    every: PT1H
    regions: aws:us-east-1,gcp:europe-west1,aws:eu-west-1
    pings: 10  # fewer than 5 echoes is a flagged RTT (few_samples): room for a lost one
    duration: 1  # from 0 s it can count more received than sent: a throughput flag, and
    omit: 0  # the report still shows the RTT (docs/results.md, 'Flags')
    backend: local
    budget_usd: 1
    budget_usd_month: 10
"""
    )
    tick = ["schedule", "run", "tiny", "--file", str(schedules), "--results", str(results)]
    first = start_cli(tick)
    try:
        wait_for(lambda: read_holder(results / LOCK_FILE).get("sweep_id"), 60, "the lock", first)
        holder = read_holder(results / LOCK_FILE)
        second = run_cli(tick)
        out, _ = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
    assert second.returncode == 0, second.stdout + second.stderr
    assert first.returncode == 0, out[-3000:]
    records = ledger.read(results)
    skipped = [r for r in records if r["outcome"] == "skipped-locked"]
    done = [r for r in records if r["outcome"] == "ok"]
    assert len(skipped) == 1 and len(done) == 1, records
    assert holder["sweep_id"] == done[0]["sweep_id"] == skipped[0]["holder_sweep_id"]
    assert skipped[0]["holder_started_utc"] == holder["started_utc"]
    # the skipped tick made no sweep folder; the one that ran is whole
    folders = [p for p in results.iterdir() if (p / store.SWEEP_FILE).exists()]
    assert [p.name for p in folders] == [done[0]["sweep_id"]]
    got = store.read_rows(folders[0] / store.MEASUREMENTS_FILE)
    assert len(got) == 6 and all(r["status"] == "ok" for r in got)
    assert not any(leftovers(folders[0]).values()), leftovers(folders[0])


def test_kill_9_of_a_running_tick_the_next_tick_takes_the_lock_and_cleans_up(tmp_path):
    """A tick killed -9 while its hosts are up: the kernel frees the lock, and the next
    tick tears the dead sweep's emulation down, marks it failed and runs its own."""
    results = tmp_path / "results"
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(
        """profiles:
  tiny:
    every: PT1H
    regions: aws:us-east-1,gcp:europe-west1,aws:eu-west-1
    pings: 40
    duration: 2
    omit: 0
    backend: local
    budget_usd: 1
    budget_usd_month: 10
"""
    )
    tick = ["schedule", "run", "tiny", "--file", str(schedules), "--results", str(results)]
    first = start_cli(tick)
    try:

        def measuring() -> bool:
            sweep_id = read_holder(results / LOCK_FILE).get("sweep_id")
            if not sweep_id:
                return False
            path = results / sweep_id / store.SWEEP_FILE
            return path.exists() and json.loads(path.read_text()).get("status") == "measuring"

        wait_for(measuring, 300, "the sweep to measure", first)
        dead_id = read_holder(results / LOCK_FILE)["sweep_id"]
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    dead = results / dead_id
    assert any(leftovers(dead).values())  # its hosts are still up: something to clean
    second = run_cli(tick)
    assert second.returncode == 0, second.stdout + second.stderr
    (record,) = ledger.read(results)  # the killed tick never got to write its line
    assert record["outcome"] == "ok" and record["reaped"] == [dead_id], record
    meta = json.loads((dead / store.SWEEP_FILE).read_text())
    assert meta["status"] == "failed" and meta["abandoned_utc"].endswith("Z")
    # what the killed process left (ansible it had started, the emulation) ends in time
    wait_for(lambda: not any(leftovers(dead).values()), 120, "the dead sweep's leftovers")
    assert not any(leftovers(results / record["sweep_id"]).values())
