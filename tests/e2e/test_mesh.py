"""A short continuous mesh on the emulated cloud (issue 32): 3 regions, 2-second probes,
10-second bins (the detection rule counts bins, so a change is confirmed in seconds
instead of minutes), a +10 ms RTT change injected on one path and detected with nothing
else reported, the bins and the metrics checked (promtool, prometheus_client's
OpenMetrics parser), an agent killed and started again by the next pull, then `mesh down`
and nothing left."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest
from e2e_support import calm_seed, leftovers, run_cli, start_cli, wait_for
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from orchestrator.core import paths
from orchestrator.emulator.stack import emulation_id_for

pytestmark = [pytest.mark.root, pytest.mark.slow]

REGIONS = ("aws:us-east-1", "gcp:europe-west1", "aws:ap-northeast-1")
CHANGED = ("aws:us-east-1", "gcp:europe-west1")
PAIRS = {(a, b) for a in REGIONS for b in REGIONS if a != b}


def promtool_path() -> str | None:
    """promtool: `make promtool`'s copy (.tools/bin), else one on PATH."""
    local = paths.ROOT / ".tools" / "bin" / "promtool"
    return str(local) if local.is_file() else shutil.which("promtool")


def _json(args: list[str], tries: int = 20) -> dict:
    """A reading command's JSON; the store is busy for a moment at each collection.
    (`changes` exits 3 while a change is open.)"""
    for _ in range(tries):
        out = run_cli(args, timeout_s=60)
        if out.returncode in (0, 3) and out.stdout:
            return json.loads(out.stdout)
        assert "in use" in out.stderr, out.stderr
        time.sleep(0.5)
    raise AssertionError(f"{args}: the store stayed busy")


def _status(results) -> dict:
    return _json(["mesh", "status", "--json", "--results", str(results)])


def _episodes(results) -> list[dict]:
    return _json(["changes", "--json", "--results", str(results)])["episodes"]


def test_a_short_mesh_bins_metrics_a_detected_change_and_a_clean_teardown(tmp_path):
    results = tmp_path / "r"
    proc = start_cli([
        "mesh", "up", "--backend", "local", "--regions", ",".join(REGIONS),
        "--interval", "2", "--bin-seconds", "10", "--collect-every", "5",
        "--emulation-seed", str(calm_seed(REGIONS)), "--results", str(results),
    ])  # fmt: skip
    mesh_dir = None
    try:
        wait_for(lambda: list((results / "mesh").glob("*/state/collect.json")), 180,
                 "the first collection", proc)  # fmt: skip
        mesh_dir = next((results / "mesh").glob("*/sweep.json")).parent
        status = _status(results)
        assert status["running"] and len(status["hosts"]) == 3
        # the baseline: 6 bins at least (RULE.min_runs), and a few judged beyond it
        time.sleep(95)
        status = _status(results)
        for host in status["hosts"]:
            assert not host["error"], host
            assert host["lag_s"] is not None, host  # its figure: bench/mesh.py
            assert host["probes_per_s"] == pytest.approx(2 * 5 / 2, rel=0.1), host
        assert _episodes(results) == []
        changed_at = time.time()
        out = run_cli([
            "emulator", "perturb", "--id", emulation_id_for(mesh_dir.name),
            "--perturb", f"{CHANGED[0]}/{CHANGED[1]},delay_ms=5",
        ])  # fmt: skip
        assert out.returncode == 0, out.stderr
        applied_at = time.time()

        def confirmed() -> bool:
            return any(e["status"] == "open" for e in _episodes(results))

        wait_for(confirmed, 90, "the injected change confirmed", proc, poll_s=3)
        # in the data's own time (never the test's wall clock): the episode starts in the
        # bin of the change or the next, and is confirmed by the bin after its first
        (opened,) = _episodes(results)
        started = datetime.fromisoformat(opened["started_utc"].replace("Z", "+00:00"))
        confirmed_t = datetime.fromisoformat(opened["confirmed_utc"].replace("Z", "+00:00"))
        assert changed_at - 10 <= started.timestamp() <= applied_at + 10, opened
        assert (confirmed_t - started).total_seconds() == 10, opened
        # the metrics while the change is open (6 bins at its new level close it)
        prom = tmp_path / "interregion.prom"
        om = tmp_path / "interregion.om"
        for path, fmt in ((prom, "prometheus"), (om, "openmetrics")):
            for _ in range(20):
                out = run_cli(["metrics", "--format", fmt, "--out", str(path),
                               "--results", str(results)])  # fmt: skip
                if out.returncode == 0:
                    break
                time.sleep(0.5)
            assert out.returncode == 0, out.stderr
        # an open episode's new level follows the bins after it (the first was partly
        # before the change): three more bins
        time.sleep(35)
        (episode,) = _episodes(results)  # nothing else reported
        assert {episode["src"], episode["dst"]} == set(CHANGED)
        assert episode["source"] == "mesh-emulated"
        assert episode["status"] in ("open", "new normal")
        for d in episode["directions"]:
            assert d["new_level"] - d["old_level"] == pytest.approx(10.0, abs=2.0), d

        matrix = _json(["mesh", "matrix", "--json", "--results", str(results)])
        assert {(c["src"], c["dst"]) for c in matrix["cells"]} == PAIRS
        for c in matrix["cells"]:
            assert c["samples"] >= 100 and c["loss_ratio"] == 0.0, c
            assert c["p90_ms"] is not None  # 100 samples and more: the rule shows p90

        promtool = promtool_path()
        assert promtool, "promtool is missing: 'make promtool' puts it in .tools/bin"
        checked = subprocess.run([promtool, "check", "metrics"], stdin=prom.open(),
                                 capture_output=True, text=True)  # fmt: skip
        assert checked.returncode == 0, checked.stdout + checked.stderr
        families = {f.name: f for f in text_string_to_metric_families(om.read_text())}
        assert set(families) == {"interregion_rtt_seconds", "interregion_loss_ratio",
                                 "interregion_probes", "interregion_probe_failures",
                                 "interregion_change_delta_seconds"}  # fmt: skip
        (change,) = families["interregion_change_delta_seconds"].samples
        assert 0.004 < change.value < 0.012  # seconds; its new level still settling
        medians = {
            (s.labels["src_region"], s.labels["dst_region"]): s.value
            for s in families["interregion_rtt_seconds"].samples
            if s.labels.get("quantile") == "0.5"
        }
        assert len(medians) == len(PAIRS)
        assert all(0.001 < v < 1.0 for v in medians.values())  # seconds, not ms

        # an agent killed: no systemd on emulated hosts, the next pull starts it again
        folder = mesh_dir / "state" / "agent" / "mesh" / REGIONS[2].replace(":", "_")
        killed = int((folder / "agent.pid").read_text())
        assert b"--mesh" in Path(f"/proc/{killed}/cmdline").read_bytes()
        os.kill(killed, signal.SIGKILL)

        def revived() -> bool:
            host = json.loads((mesh_dir / "state" / "collect.json").read_text())["hosts"]
            pid = int((folder / "agent.pid").read_text())
            return (
                host[REGIONS[2]].get("restarts") == 1
                and pid != killed
                and Path(f"/proc/{pid}/cmdline").exists()
            )

        wait_for(revived, 60, "the killed agent started again", proc, poll_s=1)
        records = sum(p.stat().st_size for p in folder.glob("records-*.jsonl"))
        wait_for(lambda: sum(p.stat().st_size for p in folder.glob("records-*.jsonl")) > records,
                 30, "the revived agent's records", proc, poll_s=1)  # fmt: skip
    finally:
        if proc.poll() is None:
            down = run_cli(["mesh", "down", "--results", str(results)], timeout_s=300)
            assert down.returncode == 0, down.stderr
        proc.wait(timeout=120)
    assert proc.returncode == 0, proc.stdout.read()
    assert mesh_dir is not None
    assert not any(leftovers(mesh_dir).values()), leftovers(mesh_dir)
    record = json.loads((mesh_dir / "sweep.json").read_text())
    assert record["status"] == "done"
    assert (mesh_dir / "pulled").is_dir()  # what was pulled is kept, verbatim
    # a rebuild of the store (from the sweep folders: none here) keeps the mesh's rows
    matrix = _json(["mesh", "matrix", "--json", "--results", str(results)])
    episodes = _episodes(results)
    out = run_cli(["history", "rebuild", "--results", str(results)], timeout_s=300)
    assert out.returncode == 0, out.stderr
    assert _json(["mesh", "matrix", "--json", "--results", str(results)]) == matrix
    assert _episodes(results) == episodes and len(episodes) == 1
