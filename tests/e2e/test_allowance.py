"""End to end: a sweep of burstable emulated hosts that drains their allowance.

Three close regions (the cap binds, not the window) of type emulated-t3.small-5s: a
token bucket of 5 s at the cap over a 6.6 Mbit/s baseline (t3.small scaled like the
cap). The plan warns that the hosts send more than their baseline; the first round
measures at the cap, later tests drain the buckets, so the hosts' allowance counters
move and the sentinel slot, measured again at the end, falls far below its early
result. Real Terraform, namespaces, sshd, Ansible, iperf3 and tc.
"""

from __future__ import annotations

import json

import pytest
from e2e_support import calm_seed, nothing_left, only_sweep, record, rows, run_cli

from orchestrator.plan import allowance
from orchestrator.report.build import build_report
from orchestrator.sweep import sentinels

pytestmark = [pytest.mark.root, pytest.mark.slow]

REGIONS = ("aws:us-east-1", "gcp:us-east4", "aws:us-east-2")
ARGS = ["--regions", ",".join(REGIONS), "--pings", "5", "--duration", "3", "--omit", "1",
        "--emulated-type", "emulated-t3.small-5s"]  # fmt: skip
# no drawn loss episode: a loss-limited pair would never drain its bucket
SEED = ["--emulation-seed", str(calm_seed(REGIONS))]


def test_plan_warns_that_the_hosts_send_above_their_baseline():
    out = run_cli(["plan", *ARGS])
    assert out.returncode == 0, out.stderr
    assert "WARNING 3 hosts send more on average than their machine type sustains" in out.stderr
    strict = run_cli(["plan", *ARGS, "--strict"])
    assert strict.returncode == 2 and len(strict.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def drained(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    out = run_cli(["sweep", *ARGS, *SEED, "--yes", "--no-report", "--results", str(results)])
    sweep_dir = only_sweep(results)
    yield out, sweep_dir
    if not nothing_left(sweep_dir):
        run_cli(["teardown", "--sweep", sweep_dir.name, "--results", str(results)])


def test_the_sweep_measures_every_test_and_its_sentinels(drained):
    out, sweep_dir = drained
    assert out.returncode == 0, out.stderr[-3000:]
    assert "WARNING 3 hosts send more on average" in out.stderr
    got = rows(sweep_dir)
    assert set(got) == {(a, b) for a in REGIONS for b in REGIONS if a != b}
    assert all(r["status"] == "ok" for r in got.values()), {k: r["error"] for k, r in got.items()}
    meta = record(sweep_dir)
    assert meta["plan"]["emulated_type"] == "emulated-t3.small-5s"
    late = sentinels.read_sentinel_rows(sweep_dir)
    (sentinel,) = meta["plan"]["sentinels"]  # three regions: one slot per round
    assert {(r["src_cloud"] + ":" + r["src_region"]) for r in late} == set(sentinel)
    assert all(r["status"] == "ok" for r in late)
    assert nothing_left(sweep_dir)


def test_the_hosts_counters_move_once_the_buckets_drain(drained):
    _, sweep_dir = drained
    got = rows(sweep_dir)
    first = min(int(r["round"]) for r in got.values())
    for r in got.values():
        moved = int(r["src_bw_out_allowance_exceeded_packets"])
        if int(r["round"]) == first:
            assert moved == 0  # a fresh bucket holds a whole test at the cap
        assert r["src_cpu_steal_pct"] != "" and r["dst_bw_in_allowance_exceeded_packets"] != ""
    assert allowance.host_flags(got.values())  # later tests find drained buckets
    # the limiter reads the same evidence: a test whose counters moved is `allowance`
    for r in got.values():
        if int(r["src_bw_out_allowance_exceeded_packets"] or 0):
            assert r["limiter"] == "allowance", r["limiter_detail"]
    assert any(r["limiter"] == "allowance" for r in got.values())


def test_the_sentinel_flags_the_sweep_and_the_report_says_so(drained):
    _, sweep_dir = drained
    late = sentinels.read_sentinel_rows(sweep_dir)
    early = list(rows(sweep_dir).values())
    check = allowance.sentinel_check(early, late)
    assert check is not None and check.tests == 2
    assert check.flagged, check  # drained: far more than 20 % below the early results
    logged: list[str] = []
    out = build_report(sweep_dir, png=False, log=logged.append)
    doc = json.loads((out / "report.json").read_text())
    assert doc["sentinels"][sweep_dir.name]["flagged"] is True
    assert doc["host_flags"] > 0 and (out / "host-flags.csv").exists()
    assert any("sentinel tests measured" in line for line in logged)


def test_collect_rebuilds_both_files_from_raw(drained):
    _, sweep_dir = drained
    before = (sweep_dir / "measurements.csv").read_text()
    late = (sweep_dir / sentinels.SENTINELS_FILE).read_text()
    (sweep_dir / sentinels.SENTINELS_FILE).unlink()
    out = run_cli(["collect", "--sweep", sweep_dir.name, "--results", str(sweep_dir.parent)])
    assert out.returncode == 0, out.stderr
    assert (sweep_dir / "measurements.csv").read_text() == before
    assert (sweep_dir / sentinels.SENTINELS_FILE).read_text() == late
