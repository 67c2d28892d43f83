"""Faults during real sweeps on the emulated cloud: a host killed mid-sweep, an iperf3
server that never starts, Ctrl-C in the middle of a round (then --resume)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_support import (
    hosts,
    leftovers,
    netns_of,
    nothing_left,
    only_sweep,
    record,
    rows,
    run_cli,
    start_cli,
    wait_for,
)

pytestmark = [pytest.mark.root, pytest.mark.slow]

# Short paths and short tests: faults, not figures, are what these tests look at.
FAST = ["--pings", "5", "--duration", "1", "--omit", "0"]
FOUR = ("aws:us-east-1", "gcp:us-east4", "aws:eu-west-1", "gcp:europe-west1")


def all_tests(regions):
    return {(a, b) for a in regions for b in regions if a != b}


@pytest.fixture
def results(tmp_path):
    yield tmp_path
    for sweep_dir in tmp_path.iterdir():
        if (sweep_dir / "sweep.json").exists() and not nothing_left(sweep_dir):
            run_cli(["teardown", "--sweep", sweep_dir.name, "--results", str(tmp_path)])


def kill_namespace(name: str) -> list[int]:
    """The host dies: its sshd at once (SIGKILL), everything else it runs with SIGTERM,
    so shells still run their exit traps (a login shell killed -9 in the middle of
    `pyenv rehash` would leave this machine's pyenv lock behind)."""
    out = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True).stdout
    pids = [int(p) for p in out.split()]
    for pid in pids:
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL if comm == "sshd" else signal.SIGTERM)
    return pids


def test_host_killed_mid_sweep_fails_only_its_tests_which_are_retried(results):
    victim = "aws:eu-west-1"
    args = ["sweep", "--regions", ",".join(FOUR), *FAST, "--yes", "--no-report"]
    proc = start_cli([*args, "--results", str(results)])
    try:
        wait_for(lambda: list(results.glob("*/sweep.json")), 60, "the sweep folder", proc)
        sweep_dir = only_sweep(results)
        wait_for(lambda: record(sweep_dir)["rounds"], 180, "the first round", proc)
        address = hosts(sweep_dir)[victim]["address"]
        assert kill_namespace(netns_of(sweep_dir.name, address))  # sshd and all: the host is gone
        out, _ = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out[-3000:]  # the sweep goes on
    meta = record(sweep_dir)
    first = meta["rounds"][0]
    before = {(s["client"], s["server"]) for s in first["slots"]}
    before |= {(b, a) for a, b in before}
    got = rows(sweep_dir)
    assert set(got) == all_tests(FOUR)
    for key, r in got.items():
        if victim not in key or key in before:
            assert r["status"] == "ok", (key, r["error"])
        else:
            assert r["status"] == "failed", key
            assert r["error"], key
    assert any(run["kind"] == "retry" for run in meta["measure_runs"])
    # the sweep said why the retry ran: which tests, each with why it failed
    (line,) = [x for x in out.splitlines() if " INFO retrying " in x]
    failed = sorted(k for k, r in got.items() if r["status"] != "ok")
    assert f"retrying {len(failed)} failed tests once: " in line, line
    named = [(a, b) for a, b in failed if f"{a} -> {b} (" in line]
    assert len(named) == min(len(failed), 5), line  # the first 5 by name, then a count
    if len(failed) > 5:
        assert line.endswith(f"; and {len(failed) - 5} more (measurements.csv)"), line
    retried = [r for r in meta["rounds"] if r["kind"] == "retry"]
    assert retried and all(
        victim in (s["client"], s["server"]) for r in retried for s in r["slots"]
    )
    assert nothing_left(sweep_dir), leftovers(sweep_dir)


def test_iperf3_server_that_never_starts_fails_its_tests_with_the_reason(results):
    regions = ("aws:us-east-1", "gcp:us-east4", "gcp:europe-west1")
    args = ["sweep", "--regions", ",".join(regions), *FAST, "--yes", "--plan-only"]
    out = run_cli([*args, "--results", str(results)])
    assert out.returncode == 0, out.stderr
    sweep_id = out.stdout.strip()
    stage = ["--sweep", sweep_id, "--results", str(results)]
    assert run_cli(["provision", *stage]).returncode == 0
    sweep_dir = results / sweep_id
    victim = "gcp:europe-west1"
    # Every port a round may use is bound (never listening) in the victim's namespace:
    # its iperf3 server cannot start, exactly as when another program holds the port.
    ns = netns_of(sweep_id, hosts(sweep_dir)[victim]["address"])
    squat = (
        "import socket, time\n"
        "held = [socket.socket() for _ in range(99)]\n"
        "[s.bind(('0.0.0.0', 5201 + i)) for i, s in enumerate(held)]\n"
        "print('bound', flush=True)\n"
        "time.sleep(600)\n"
    )
    squatter = subprocess.Popen(
        ["ip", "netns", "exec", ns, sys.executable, "-c", squat],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert squatter.stdout.readline().strip() == "bound"
        assert run_cli(["prepare", *stage]).returncode == 0
        measured = run_cli(["measure", "--no-retry", *stage])
        assert measured.returncode == 0, measured.stderr[-3000:]
    finally:
        squatter.kill()
        squatter.wait()
    meta = record(sweep_dir)
    slots = [s for r in meta["rounds"] for s in r["slots"]]
    served_by_victim = [s for s in slots if s["server"] == victim]
    assert served_by_victim, "the victim must serve at least one slot for this test to mean much"
    got = rows(sweep_dir)
    for s in slots:
        for key in ((s["client"], s["server"]), (s["server"], s["client"])):
            if s["server"] == victim:
                assert got[key]["status"] == "failed"
                assert "iperf3 server never started" in got[key]["error"]
                assert "Address already in use" in got[key]["error"]
            else:
                assert got[key]["status"] == "ok", (key, got[key]["error"])
    # collect alone rebuilds the same rows from raw/
    before = rows(sweep_dir)
    assert run_cli(["collect", *stage]).returncode == 0
    assert rows(sweep_dir) == before
    # a corrupted output (here: cut in half on disk) fails only the tests that need it
    ok_slot = next(s for s in slots if s["server"] != victim)
    entry = next(r for r in meta["rounds"] if ok_slot in r["slots"])
    raw = (
        sweep_dir
        / "raw"
        / f"round-{entry['round']:03d}"
        / (ok_slot["client"].replace(":", "_") + ".json")
    )
    raw.write_text(raw.read_text()[: len(raw.read_text()) // 2])
    # collect never turns ok rows into failed ones on its own: it says so and keeps the file
    refused = run_cli(["collect", *stage])
    assert refused.returncode == 2 and "pass --force" in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert rows(sweep_dir) == before
    assert run_cli(["collect", "--force", *stage]).returncode == 0
    after = rows(sweep_dir)
    hit = {(ok_slot["client"], ok_slot["server"]), (ok_slot["server"], ok_slot["client"])}
    for key, r in after.items():
        if key in hit:
            assert r["status"] == "failed" and "corrupted output" in r["error"], key
        else:
            assert r == before[key]
    torn = run_cli(["teardown", *stage])
    assert torn.returncode == 0, torn.stderr
    assert record(sweep_dir)["stages"]["teardown"]["status"] == "done"
    assert nothing_left(sweep_dir), leftovers(sweep_dir)
    assert run_cli(["teardown", *stage]).returncode == 0  # idempotent


def test_ctrl_c_mid_round_keeps_completed_rounds_tears_down_and_resume_finishes(results):
    args = ["sweep", "--regions", ",".join(FOUR), *FAST, "--yes", "--no-report"]
    proc = start_cli([*args, "--max-concurrent", "1", "--results", str(results)])
    try:
        wait_for(lambda: list(results.glob("*/sweep.json")), 60, "the sweep folder", proc)
        sweep_dir = only_sweep(results)
        # the ping phase, then the first throughput round
        wait_for(lambda: len(record(sweep_dir)["rounds"]) >= 2, 180, "the first round", proc)
        time.sleep(1.5)  # the next round has started (a slot lasts about 3 s): interrupt it
        assert len(record(sweep_dir)["rounds"]) == 2
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-3000:]
    assert "interregion sweep --resume" in out
    meta = record(sweep_dir)
    assert meta["status"] == "interrupted"
    assert meta["stages"]["measure"]["status"] == "interrupted"
    assert meta["stages"]["teardown"]["status"] == "done"
    assert nothing_left(sweep_dir), leftovers(sweep_dir)
    got = rows(sweep_dir)
    assert set(got) == all_tests(FOUR)  # the ping phase measured every RTT first
    assert all(r["status"] == "ok" and r["rtt_avg_ms"] for r in got.values())
    kept = {k: r for k, r in got.items() if r["throughput_bps"]}
    done_rounds = {r["round"] for r in meta["rounds"] if not r.get("phase")}
    assert kept and len(kept) < len(all_tests(FOUR))
    assert {int(r["round"]) for r in kept.values()} == done_rounds  # exactly the completed rounds

    args = ["sweep", "--resume", sweep_dir.name, "--yes", "--no-report"]
    resumed = run_cli([*args, "--results", str(results)])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    final = rows(sweep_dir)
    assert set(final) == all_tests(FOUR)
    assert all(r["status"] == "ok" for r in final.values())
    for key, r in kept.items():
        assert final[key] == r  # completed tests are kept, not repeated
    meta = record(sweep_dir)
    assert meta["status"] == "done"
    assert any(run["kind"] == "resume" for run in meta["measure_runs"])
    assert nothing_left(sweep_dir), leftovers(sweep_dir)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_tear_down_like_ctrl_c(results, sig):
    regions = ("aws:us-east-1", "gcp:us-east4", "gcp:europe-west1")
    args = ["sweep", "--regions", ",".join(regions), *FAST, "--yes", "--no-report"]
    proc = start_cli([*args, "--results", str(results)])
    try:
        wait_for(lambda: list(results.glob("*/hosts.json")), 120, "the hosts", proc)
        sweep_dir = only_sweep(results)
        wait_for(lambda: "measure" in record(sweep_dir)["stages"], 120, "measuring", proc)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-3000:]
    meta = record(sweep_dir)
    assert meta["status"] == "interrupted" and meta["interrupted_by"] == sig.name
    assert meta["stages"]["teardown"]["status"] == "done"
    assert nothing_left(sweep_dir), leftovers(sweep_dir)


def stage_running(sweep_dir: Path, name: str) -> bool:
    try:
        return record(sweep_dir)["stages"].get(name, {}).get("status") == "running"
    except (OSError, ValueError):
        return False  # sweep.json is being replaced


def test_ctrl_c_during_provision_stops_terraform_politely_and_leaves_nothing(results):
    regions = ",".join(FOUR)
    proc = start_cli(["sweep", "--regions", regions, *FAST, "--yes", "--results", str(results)])
    try:
        wait_for(lambda: list(results.glob("*/sweep.json")), 60, "the sweep folder", proc)
        sweep_dir = only_sweep(results)
        wait_for(lambda: stage_running(sweep_dir, "provision"), 60, "provisioning", proc, 0.02)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-3000:]
    meta = record(sweep_dir)
    assert meta["status"] == "interrupted"
    assert meta["stages"]["provision"]["status"] == "interrupted"
    assert "prepare" not in meta["stages"]  # nothing new starts after an interrupt
    assert meta["stages"]["teardown"]["status"] == "done"
    assert nothing_left(sweep_dir), leftovers(sweep_dir)
    # and a teardown by hand afterwards has nothing to do but succeeds
    again = run_cli(["teardown", "--sweep", sweep_dir.name, "--results", str(results)])
    assert again.returncode == 0, again.stderr


def test_sigterm_during_teardown_lets_it_finish_then_exits_interrupted(results):
    regions = ",".join(FOUR[:2])
    args = ["sweep", "--regions", regions, *FAST, "--yes", "--results", str(results)]
    proc = start_cli(args)
    try:
        wait_for(lambda: list(results.glob("*/sweep.json")), 60, "the sweep folder", proc)
        sweep_dir = only_sweep(results)
        wait_for(lambda: stage_running(sweep_dir, "teardown"), 180, "teardown", proc, 0.02)
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGTERM)  # twice: still not cut short
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out[-3000:]
    meta = record(sweep_dir)
    assert meta["stages"]["teardown"]["status"] == "done"
    assert "report" not in meta["stages"]  # the interrupt is honoured once teardown is done
    assert meta["status"] == "done"  # every test was measured before it
    assert nothing_left(sweep_dir), leftovers(sweep_dir)


def test_a_sweep_whose_state_folder_vanishes_says_so_and_removes_its_hosts(results):
    args = ["sweep", "--regions", ",".join(FOUR), *FAST, "--yes", "--no-report"]
    proc = start_cli([*args, "--max-concurrent", "1", "--results", str(results)])
    try:
        wait_for(lambda: list(results.glob("*/sweep.json")), 60, "the sweep folder", proc)
        sweep_dir = only_sweep(results)
        wait_for(lambda: record(sweep_dir)["rounds"], 180, "the first round", proc)
        # the sweep writes into state/ as it goes (temporary files renamed): delete until
        # nothing is left, however the two interleave
        for _ in range(100):
            shutil.rmtree(sweep_dir / "state", ignore_errors=True)
            if not (sweep_dir / "state").exists():
                break
            time.sleep(0.1)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out[-3000:]  # a failed run (core.errors.RunFailure)
    assert "vanished while it ran" in out
    assert "Traceback" not in out
    assert len(record(sweep_dir)["rounds"]) < 6  # it stopped instead of carrying on
    assert nothing_left(sweep_dir), leftovers(sweep_dir)


def test_a_congestion_control_the_hosts_lack_stops_before_measuring(results):
    args = ["sweep", "--regions", ",".join(FOUR[:2]), *FAST, "--yes", "--no-report"]
    out = run_cli([*args, "--congestion", "nosuchcc", "--results", str(results)])
    assert out.returncode == 2, out.stderr[-3000:]
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("error: --congestion nosuchcc: ") and "nothing was measured" in line
    sweep_dir = only_sweep(results)
    assert "measure" not in record(sweep_dir)["stages"]
    assert nothing_left(sweep_dir), leftovers(sweep_dir)
