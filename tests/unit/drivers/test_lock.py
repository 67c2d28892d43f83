"""The results folder's lock: two real processes, a kill -9, and what the next run reaps."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.drivers.lock import LOCK_FILE, LockHeld, lock_path, read_holder, results_lock
from orchestrator.results.record import SweepRecord, SweepStatus
from orchestrator.schedule import ledger
from orchestrator.sweep import abandoned

RECORD = Path(__file__).resolve().parents[2] / "data" / "records" / "sweep-done.json"

HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from orchestrator.drivers.lock import results_lock
    with results_lock(Path(sys.argv[1]), trigger="test") as lock:
        lock.note(sweep_id="20261123T0600Z-beef")
        print("held", flush=True)
        time.sleep(600)
    """
)


def _hold(results: Path) -> subprocess.Popen[str]:
    """Another process that holds the lock until it is killed."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(results)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_holder_is_refused_with_the_first_ones_sweep(tmp_path):
    proc = _hold(tmp_path)
    try:
        with pytest.raises(LockHeld) as caught, results_lock(tmp_path):
            pass
        assert caught.value.holder["sweep_id"] == "20261123T0600Z-beef"
        assert caught.value.holder["pid"] == proc.pid
        assert caught.value.holder["started_utc"].endswith("Z")
        assert "\n" not in str(caught.value)
    finally:
        proc.kill()
        proc.wait()


def test_kill_9_frees_the_lock(tmp_path):
    proc = _hold(tmp_path)
    with pytest.raises(LockHeld), results_lock(tmp_path):
        pass
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with results_lock(tmp_path, trigger="next") as lock:
        assert read_holder(lock.path)["pid"] == os.getpid()
    assert read_holder(tmp_path / LOCK_FILE) == {}  # released: no holder shown


def test_the_lock_is_not_inherited_by_children(tmp_path):
    """A child (terraform, ansible) outliving its parent must not keep the folder locked."""
    with results_lock(tmp_path):
        child = subprocess.Popen(["sleep", "30"])
    try:
        with results_lock(tmp_path):
            pass
    finally:
        child.kill()
        child.wait()


def test_schedule_run_beside_a_held_lock_is_recorded_as_skipped(tmp_path):
    """`schedule run` while another sweep holds the folder: exit 0, a skipped-locked
    ledger record naming the holder's sweep, nothing planned or created."""
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(
        "profiles:\n  tiny:\n    every: PT1H\n    regions: aws:us-east-1,gcp:us-east4\n"
        "    budget_usd: 1\n    budget_usd_month: 10\n"
    )
    results = tmp_path / "results"
    proc = _hold(results)
    try:
        out = CliRunner().invoke(
            main,
            ["schedule", "run", "tiny", "--file", str(schedules), "--results", str(results)],
        )
    finally:
        proc.kill()
        proc.wait()
    assert out.exit_code == 0, out.output
    # what a cron.d entry appends to its log: dated lines with a level, the outcome last
    lines = out.stderr.splitlines()
    assert lines and all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ INFO ", x) for x in lines)
    assert " INFO tiny: skipped-locked: " in lines[-1] and out.stdout == ""
    (record,) = ledger.read(results)
    assert record["outcome"] == "skipped-locked"
    assert record["holder_sweep_id"] == "20261123T0600Z-beef"
    assert record["holder_pid"] == proc.pid
    assert record["scheduled_utc"].endswith(":00:00Z")
    assert sorted(p.name for p in results.iterdir()) == sorted([LOCK_FILE, ledger.LEDGER_FILE])


def test_sweep_by_hand_takes_the_same_lock(tmp_path):
    proc = _hold(tmp_path)
    try:
        out = CliRunner().invoke(
            main,
            [
                "sweep",
                "--regions",
                "aws:us-east-1,gcp:us-east4",
                "--yes",
                "--results",
                str(tmp_path),
            ],
        )
    finally:
        proc.kill()
        proc.wait()
    assert out.exit_code == 1  # a failed run (busy), not bad input: retrying may succeed
    assert "20261123T0600Z-beef" in out.output
    assert not list(tmp_path.glob("*/sweep.json"))


@pytest.mark.parametrize("command", [["schedule", "run", "tiny"], ["sweep", "--profile", "tiny"]])
def test_a_results_folder_that_cannot_be_made_is_one_line(tmp_path, command):
    """--results under a plain file: a one-line error naming the option, no traceback."""
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(
        "profiles:\n  tiny:\n    every: PT1H\n    regions: aws:us-east-1,gcp:us-east4\n"
        "    budget_usd: 1\n    budget_usd_month: 10\n"
    )
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    results = blocker / "results"
    out = CliRunner().invoke(main, [*command, "--file", str(schedules), "--results", str(results)])
    assert out.exit_code == 2, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"error: --results {results}: cannot write there"), line


DIES_MID_SWEEP = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from orchestrator.drivers.lock import results_lock
    from orchestrator.model.catalog import load_catalog
    from orchestrator.plan.selection import SelectionSpec
    from orchestrator.plan.sweep_plan import make_plan
    from orchestrator.results.record import SweepStatus
    from orchestrator.sweep import abandoned
    from orchestrator.sweep.sweep_folder import create_sweep
    results = Path(sys.argv[1])
    spec = SelectionSpec(regions=("aws:us-east-1", "gcp:us-east4"))
    with results_lock(results) as lock:
        sweep = create_sweep(make_plan(load_catalog(), spec), spec, results)
        lock.note(sweep_id=sweep.id)
        abandoned.mark_owner(sweep.record)
        sweep.record.status = SweepStatus.MEASURING
        sweep.save()
        (sweep.dir / "raw").mkdir()
        print(sweep.id, flush=True)
        time.sleep(600)
    """
)


@pytest.mark.slow
def test_after_kill_9_the_next_holder_tears_the_dead_sweep_down(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.Popen(
        [sys.executable, "-c", DIES_MID_SWEEP, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    sweep_id = proc.stdout.readline().strip()
    assert abandoned.abandoned_sweeps(tmp_path) == []  # its owner still runs
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert abandoned.abandoned_sweeps(tmp_path) == [sweep_id]
    # the next tick takes the freed lock, tears the dead sweep down, then goes on (here
    # to a budget skip, so that nothing new is provisioned)
    from orchestrator.schedule.profiles import parse_profile
    from orchestrator.schedule.tick import run_tick

    profile = parse_profile(
        "p",
        {"every": "PT1H", "regions": "aws:us-east-1,aws:eu-west-1", "backend": "aws",
         "budget_usd": 0.0001, "budget_usd_month": 1},
        None,
    )  # fmt: skip
    lines: list[str] = []
    record = run_tick(profile, tmp_path, log=lines.append)
    assert record["reaped"] == [sweep_id]
    assert record["outcome"] == "skipped-budget"
    record = json.loads((tmp_path / sweep_id / "sweep.json").read_text())
    assert record["status"] == "failed" and record["abandoned_utc"]
    assert record["stages"]["teardown"]["status"] == "done"
    assert (tmp_path / sweep_id / "raw").is_dir()  # what it measured is kept
    assert abandoned.abandoned_sweeps(tmp_path) == []  # and it is reaped once
    assert any(sweep_id in line for line in lines)


def test_a_sweep_run_stage_by_stage_is_never_reaped(tmp_path):
    """`provision --sweep ID` keeps hosts up on purpose: no owner, not abandoned."""
    folder = tmp_path / "20261123T0600Z-0001"
    folder.mkdir()
    (folder / "sweep.json").write_text(
        json.dumps({"sweep_id": folder.name, "status": "provisioned"})
    )
    assert abandoned.abandoned_sweeps(tmp_path) == []
    record = SweepRecord.from_json(
        {**json.loads(RECORD.read_text()), "status": "provisioned"}, "sweep.json"
    )
    record.owner_pid = record.owner_start_ticks = None
    assert not abandoned.is_abandoned(record)  # no owner: stages run alone
    abandoned.mark_owner(record, pid=os.getpid())
    assert not abandoned.is_abandoned(record)
    record.owner_start_ticks = -1  # the pid was reused by another process
    assert abandoned.is_abandoned(record)
    record.status = SweepStatus.TORN_DOWN  # finished: nothing left to reap
    assert not abandoned.is_abandoned(record)


def test_an_ended_holder_leaves_no_lock_file_and_a_racing_taker_retakes(tmp_path):
    with results_lock(tmp_path, trigger="test") as lock:
        assert lock.path.exists()
        # a second taker that opened the file before the holder removed it
        stale = os.open(lock.path, os.O_RDWR)
    assert not lock_path(tmp_path).exists()
    try:
        with results_lock(tmp_path, trigger="next") as again:  # a new file, really held
            assert again.path.exists()
            assert os.fstat(again.fd).st_ino != os.fstat(stale).st_ino
    finally:
        os.close(stale)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_sweep_that_fails_before_provisioning_leaves_no_folder_keys_or_lock(tmp_path):
    """No cloud credentials: the preflight fails before Terraform runs."""
    env = {
        **os.environ,
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_ACCESS_KEY_ID": "",
        "AWS_SECRET_ACCESS_KEY": "",
        "AWS_PROFILE": "",
    }
    env = {k: v for k, v in env.items() if v != ""}
    results = tmp_path / "res dir"
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "sweep", "--backend", "aws", "--clouds", "aws",
         "--max-regions", "2", "--yes", "--operator-cidr", "198.51.100.7/32",
         "--results", str(results)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode != 0
    assert "nothing was provisioned or measured: removed" in done.stderr
    assert list(results.iterdir()) == []  # no sweep folder, no keys, no lock file
