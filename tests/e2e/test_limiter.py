"""End to end: the emulated cloud shows its limiters and every row names the one that
bound it. Three regions: two close (aws:us-east-1, gcp:us-east4, a few ms: the 50 Mbit/s
cap binds, so capacity) and one far (aws:ap-southeast-2, ~200 ms: the 131 kB window
binds). The allowance limiter is shown by tests/e2e/test_allowance.py (drained buckets).
The sweep runs both measures: after the single_stream rounds, capacity rounds of 8
streams on buffers sized for the BDP, which lift the far pairs from the window to the
line rate; the hosts' settings are back after them.
Real Terraform, namespaces, delayd, sshd, Ansible and iperf3.
"""

from __future__ import annotations

import pytest
from e2e_support import calm_seed, nothing_left, only_sweep, record, rows, run_cli

from orchestrator.results import files as store
from orchestrator.results import limiter

pytestmark = [pytest.mark.root, pytest.mark.slow]

NEAR = ("aws:us-east-1", "gcp:us-east4")
FAR = "aws:ap-southeast-2"
SEED = calm_seed((*NEAR, FAR))  # no drawn loss episode: each pair is what it was set up as
ARGS = [
    "--regions", ",".join((*NEAR, FAR)), "--pings", "5", "--duration", "5", "--omit", "1",
    "--measures", "single_stream,capacity", "--emulation-seed", str(SEED),
]  # fmt: skip


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


def test_capacity_rows_exceed_the_single_stream_on_the_window_limited_path(swept):
    _, sweep_dir = swept
    single, capacity = rows(sweep_dir), rows(sweep_dir, "capacity")
    assert set(capacity) == set(single)  # every directed pair, once per measure
    assert all(r["status"] == "ok" for r in capacity.values()), {
        k: r["error"] for k, r in capacity.items()
    }
    for pair, row in capacity.items():
        assert row["streams"] == "8" and single[pair]["streams"] == "1"
        assert row["rtt_p50_ms"] == ""  # the pair's RTT is its single_stream row's
        ratio = float(row["throughput_bps"]) / float(single[pair]["throughput_bps"])
        if FAR in pair:
            # 131 kB / ~200 ms is ~5 Mbit/s; eight streams on 2 x BDP buffers fill the line
            assert ratio > 3, (pair, row["throughput_bps"], single[pair]["throughput_bps"])
            # at the 50 Mbit/s line, and named capacity: both ends agree (a sender ahead by
            # what the path held in flight, and a reverse test's server by what it sent
            # while its clock ran one RTT past the client's, still agree)
            assert float(row["throughput_bps"]) == pytest.approx(50e6, rel=0.1), pair
            assert row["limiter"] == limiter.CAPACITY, (pair, row["limiter_detail"])
            assert "receiver_exceeds_sender" not in row["flags"], pair
        else:
            assert ratio > 0.8, pair  # the line already bound one stream
    # the hosts' buffers were put back after the capacity rounds
    restored = record(sweep_dir)["restore"]
    assert restored and not any("error" in r for r in restored.values()), restored
    assert store.read_rows(sweep_dir / store.MEASUREMENTS_FILE)  # read with both measures


def test_the_plan_records_the_capacity_tests_timings(swept):
    _, sweep_dir = swept
    plan = record(sweep_dir)["plan"]
    assert plan["params"]["measures"] == ["single_stream", "capacity"]
    assert plan["params"]["streams"] == 8
    assert set(plan["capacity_timings"]) == set(plan["timings"])
