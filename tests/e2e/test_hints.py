"""End to end: the hints a real sweep prints run as printed, from another folder, by a
shell (tests/unit/cli/test_hints.py does the same for the history's). Ctrl-C's "continue
later with '...'" once answered "unknown sweep id ... in ./results" and made ./results."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest
from e2e_support import INTERREGION, cli_env, leftovers, only_sweep, record, rows, run_cli
from hint_support import hints, run_as_printed

pytestmark = [pytest.mark.root, pytest.mark.slow]

TWO = ["--regions", "aws:us-east-1,gcp:us-east4", "--tests", "ping", "--pings", "5"]
ODD = "int $HOME 'q' Zürich"


def _stage_running(sweep_dir, name: str) -> bool:
    try:
        return record(sweep_dir)["stages"].get(name, {}).get("status") == "running"
    except (OSError, ValueError, KeyError):
        return False


def test_the_resume_hint_after_ctrl_c_runs_as_printed_from_another_folder(tmp_path):
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    proc = subprocess.Popen(
        [INTERREGION, "sweep", *TWO, "--yes", "--results", ODD],
        cwd=here, env=cli_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not list((here / ODD).glob("*/sweep.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        sweep_dir = only_sweep(here / ODD)
        while not _stage_running(sweep_dir, "prepare") and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-3000:]
    assert record(sweep_dir)["status"] == "interrupted"
    assert [h for h in hints(out) if "--resume" in h and "--yes" in h], out[-3000:]
    resumed = run_as_printed(out, elsewhere)
    try:
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert record(sweep_dir)["status"] == "done"
        got = rows(sweep_dir)
        assert len(got) == 2 and all(r["status"] == "ok" for r in got.values()), got
        assert list(elsewhere.iterdir()) == []  # no ./results where the hint ran
    finally:
        assert not any(leftovers(sweep_dir).values()), leftovers(sweep_dir)


def test_the_provision_hint_of_a_sweep_without_hosts_runs_as_printed(tmp_path):
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    planned = run_cli(["sweep", *TWO, "--plan-only", "--results", ODD], cwd=here)
    assert planned.returncode == 0, planned.stderr
    sweep_id = planned.stdout.strip()
    first = run_cli(["prepare", "--sweep", sweep_id, "--results", ODD], cwd=here)
    assert first.returncode == 2 and "has no hosts" in first.stderr, first.stderr
    hinted = run_as_printed(first.stderr, elsewhere)
    sweep_dir = here / ODD / sweep_id
    try:
        assert hinted.returncode == 0 and "2 hosts up" in hinted.stdout, hinted.stderr
        assert list(elsewhere.iterdir()) == []
    finally:
        down = run_cli(["teardown", "--sweep", sweep_id, "--results", ODD], cwd=here)
        assert down.returncode == 0, down.stderr
        assert not any(leftovers(sweep_dir).values()), leftovers(sweep_dir)
