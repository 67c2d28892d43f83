"""`interregion demo` (what `make demo` runs), small: real sweeps on the emulated cloud
with the seeded variation on, one injected change, the real `interregion changes`,
the site; and a Ctrl-C in the middle leaves nothing behind."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from e2e_support import leftovers, nothing_left, record, run_cli, start_cli, wait_for

from orchestrator.results import files as store

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, iptables)"),
]

# four AWS regions whose pairs share one cloud pair and distance band (3000-6000 km)
# with the perturbed one, so the pooled scale of that group is not the change's own
REGIONS = "aws:us-east-1,aws:us-west-2,aws:eu-west-1,aws:ca-central-1"
SMALL = ["--regions", REGIONS, "--sweeps", "5", "--change-from", "3", "--min-runs", "2",
         "--perturb", "aws:us-east-1/aws:eu-west-1,delay_ms=10"]  # fmt: skip


def sweeps_in(results: Path) -> list[Path]:
    """The demo's sweeps in the order they were made (ids made in one minute differ
    only by a random suffix, so their names do not sort by time)."""
    folders = [p.parent for p in results.glob(f"*/{store.SWEEP_FILE}")]
    return sorted(folders, key=lambda d: (record(d)["created_utc"], d.name))


def test_a_small_demo_finds_its_injected_change_and_nothing_else(tmp_path):
    out = tmp_path / "demo"
    done = run_cli(["demo", "--out", str(out), *SMALL], timeout_s=900)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert "demo check passed" in done.stdout
    found = [line for line in done.stdout.splitlines() if line.startswith("found:")]
    assert len(found) == 2 and all("aws:us-east-1" in x and "aws:eu-west-1" in x for x in found)
    assert (out / "site" / "index.html").exists()
    sweeps = sweeps_in(out / "results")
    assert len(sweeps) == 5
    emulations = [record(s)["emulation"] for s in sweeps]
    # every sweep has its own recorded seed; the last three carry the perturbation
    assert len({e["seed"] for e in emulations}) == 5
    assert sum(bool(e["perturbations"]) for e in emulations) == 3
    for s in sweeps:
        assert record(s)["status"] == "done"
        assert nothing_left(s), leftovers(s)
    # the same history, asked by hand: the change is open (exit 3)
    changes = run_cli(["changes", "--json", "--min-runs", "2", "--results", str(out / "results")])
    assert changes.returncode == 3, changes.stderr
    doc = json.loads(changes.stdout)
    (event,) = doc["episodes"]  # one path event, both directions moved by ~20 ms
    assert {(d["src"], d["dst"]) for d in event["directions"] if d["moved"]} == {
        ("aws:us-east-1", "aws:eu-west-1"),
        ("aws:eu-west-1", "aws:us-east-1"),
    }
    assert all(15 < d["change"] < 25 for d in event["directions"])  # 10 ms each way
    # a second demo into the same folder needs --replace; nothing is touched without it
    again = run_cli(["demo", "--out", str(out), *SMALL])
    assert again.returncode == 2 and "--replace" in again.stderr
    assert len(sweeps_in(out / "results")) == 5


def test_ctrl_c_in_the_middle_of_a_demo_leaves_nothing(tmp_path):
    out = tmp_path / "demo"
    proc = start_cli(["demo", "--out", str(out), *SMALL, "--no-site"])
    results = out / "results"
    try:
        wait_for(lambda: len(sweeps_in(results)) >= 2, 300, "the second sweep", proc)
        second = sweeps_in(results)[-1]
        wait_for(lambda: "provision" in record(second).get("stages", {}), 60, "provisioning",
                 proc, 0.05)  # fmt: skip
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, output[-3000:]
    sweeps = sweeps_in(results)
    assert len(sweeps) == 2  # nothing new started after the interrupt
    assert record(sweeps[0])["status"] == "done"
    assert record(sweeps[1])["status"] == "interrupted"
    for s in sweeps:
        assert nothing_left(s), leftovers(s)
