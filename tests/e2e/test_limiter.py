"""End to end: the emulated cloud shows its limiters and every row names the one that
bound it. Three regions: two close (aws:us-east-1, gcp:us-east4, a few ms: the 50 Mbit/s
cap binds, so capacity) and one far (aws:ap-southeast-2, ~200 ms: the 131 kB window
binds). The allowance limiter is shown by tests/e2e/test_allowance.py (drained buckets).
Real Terraform, namespaces, delayd, sshd, Ansible and iperf3.
"""

from __future__ import annotations

import pytest
from e2e_support import nothing_left, only_sweep, record, rows, run_cli

from orchestrator.results import limiter

pytestmark = [pytest.mark.root, pytest.mark.slow]

NEAR = ("aws:us-east-1", "gcp:us-east4")
FAR = "aws:ap-southeast-2"
ARGS = ["--regions", ",".join((*NEAR, FAR)), "--pings", "5", "--duration", "5", "--omit", "1"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    out = run_cli(["sweep", *ARGS, "--yes", "--no-report", "--results", str(results)])
    sweep_dir = only_sweep(results)
    yield out, sweep_dir
    if not nothing_left(sweep_dir):
        run_cli(["teardown", "--sweep", sweep_dir.name, "--results", str(results)])


def test_each_row_names_the_limiter_its_pair_was_set_up_for(swept):
    out, sweep_dir = swept
    assert out.returncode == 0, out.stderr[-3000:]
    got = rows(sweep_dir)
    assert all(r["status"] == "ok" for r in got.values()), {k: r["error"] for k, r in got.items()}
    found = {pair: (r["limiter"], r["limiter_detail"]) for pair, r in got.items()}
    for (src, dst), (name, detail) in found.items():
        expected = limiter.WINDOW if FAR in (src, dst) else limiter.CAPACITY
        assert name == expected, (src, dst, detail)
    assert nothing_left(sweep_dir)


def test_the_plan_records_each_tests_omit_from_its_ramp(swept):
    _, sweep_dir = swept
    timings = record(sweep_dir)["plan"]["timings"]
    assert len(timings) == 6
    for key, t in timings.items():
        assert t["omit_s"] >= 1 and t["duration_s"] == 5
        assert t["omit_s"] >= t["ramp_s"]
        if FAR in key:
            assert t["rtt_ms"] > 150 and t["omit_s"] == 2  # 7.45 RTTs to 2.53 MB
