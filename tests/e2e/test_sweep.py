"""End to end: `interregion sweep` on the emulated cloud, six regions on both clouds.

Real Terraform (infra/local), real namespaces, sshd, Ansible over SSH, iperf3 and
ping; the measured figures are checked against the emulator's own model.
"""

from __future__ import annotations

import json

import pytest
from e2e_support import SHORT, hosts, leftovers, nothing_left, only_sweep, record, rows, run_cli

from orchestrator.emulator.stack import expected_rtts_ms, sweep_spec
from orchestrator.results import files as store
from orchestrator.results.schema import MEASUREMENT_COLUMNS, RESULTS_FORMAT_VERSION

pytestmark = [pytest.mark.root, pytest.mark.slow]

# Two neighbours in Virginia (the shortest pair), Europe, Asia, South America.
REGIONS = (
    "aws:us-east-1",
    "gcp:us-east4",
    "gcp:europe-west1",
    "aws:ap-southeast-1",
    "gcp:asia-northeast1",
    "aws:sa-east-1",
)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    args = ["sweep", "--regions", ",".join(REGIONS), *SHORT, "--yes", "--no-report"]
    out = run_cli([*args, "--results", str(results)])
    sweep_dir = only_sweep(results)
    yield out, sweep_dir
    # whatever the assertions say, leave nothing behind for the next test
    if not nothing_left(sweep_dir):
        run_cli(["teardown", "--sweep", sweep_dir.name, "--results", str(results)])


def test_sweep_succeeds_and_logs_a_line_per_round(swept):
    out, sweep_dir = swept
    assert out.returncode == 0, out.stderr[-3000:]
    meta = record(sweep_dir)
    assert [line for line in out.stderr.splitlines() if ": round " in line]
    assert len([line for line in out.stderr.splitlines() if ": round " in line]) == len(
        meta["rounds"]
    )


def test_every_directed_test_is_present_and_ok(swept):
    _, sweep_dir = swept
    got = rows(sweep_dir)
    expected = {(a, b) for a in REGIONS for b in REGIONS if a != b}
    assert set(got) == expected
    bad = {k: r["error"] for k, r in got.items() if r["status"] != "ok"}
    assert not bad
    header = (sweep_dir / store.MEASUREMENTS_FILE).read_text().splitlines()[0]
    assert tuple(header.split(",")) == MEASUREMENT_COLUMNS
    for r in got.values():
        assert r["backend"] == "local"  # emulated results say so
        assert r["sweep_id"] == sweep_dir.name
        assert float(r["throughput_bps"]) > 0 and float(r["bytes"]) > 0
        assert float(r["rtt_min_ms"]) <= float(r["rtt_p50_ms"]) <= float(r["rtt_max_ms"])
        assert r["streams"] == "1" and r["src_machine_type"]


def test_rtt_matches_the_emulation(swept):
    """Each pair's RTT is what its emulation set: the measured route (or the distance
    model) with the sweep's recorded variation."""
    _, sweep_dir = swept
    spec = sweep_spec(sweep_dir / "state")
    assert spec.seed == record(sweep_dir)["emulation"]["seed"]
    expected = expected_rtts_ms(spec)
    for (src, dst), r in rows(sweep_dir).items():
        model_ms = expected[(src, dst)]
        measured = float(r["rtt_p50_ms"])
        assert abs(measured - model_ms) <= 2 + 0.05 * model_ms, (src, dst, measured, model_ms)


def test_throughput_falls_with_distance(swept):
    _, sweep_dir = swept
    got = list(rows(sweep_dir).values())
    shortest = min(got, key=lambda r: float(r["distance_km"]))
    longest = max(got, key=lambda r: float(r["distance_km"]))
    assert float(longest["throughput_bps"]) < float(shortest["throughput_bps"])


def test_results_folder_follows_the_contract(swept):
    _, sweep_dir = swept
    meta = record(sweep_dir)
    assert meta["format_version"] == RESULTS_FORMAT_VERSION
    assert meta["status"] == "done" and meta["backend"] == "local" and meta["emulated"]
    assert meta["params"]["duration_s"] == 2 and meta["params"]["pings"] == 10
    assert meta["started_utc"] < meta["ended_utc"]
    for stage in ("provision", "prepare", "measure", "collect", "teardown"):
        assert meta["stages"][stage]["status"] == "done", stage
    assert meta["versions"]["interregion"] and meta["versions"]["terraform"]
    assert meta["versions"]["iperf3"].startswith("iperf 3") and meta["versions"]["kernel"]
    phase_run, run = meta["measure_runs"][:2]  # the ping phase, then the throughput rounds
    assert phase_run["phase"] == "ping" and phase_run["rounds"] == 1
    first = [r for r in meta["rounds"] if r["kind"] == "main"]
    assert first[0]["phase"] == "ping" and len(first[0]["tests"]) == 30
    assert run["rounds"] + 1 == len(first) == run["rounds_closed"] + 1 and run["wall_s"] > 0
    # no test of ours fails at the first attempt (the retry must not hide a defect)
    failed_first = first_attempt_errors(sweep_dir, first)
    assert not failed_first, failed_first
    assert run["overhead_ratio"] is not None
    for entry in meta["rounds"]:
        raw = store.read_raw_round(sweep_dir, entry["round"])
        # both ends of every slot, or every host of the ping phase, as received
        assert len(raw) == (len(REGIONS) if entry.get("phase") else 2 * len(entry["slots"]))
    assert set(hosts(sweep_dir)) == set(REGIONS)
    host_facts = json.loads((sweep_dir / store.HOSTS_FILE).read_text())["facts"]
    assert set(host_facts) == set(REGIONS)
    for f in host_facts.values():
        # the agent ran from the sweep's private state folder, not a guessable /tmp name
        assert f["agent_dir"] == str(sweep_dir / "state" / "agent")
        assert f["kernel"] and f["iperf3_version"].startswith("iperf 3")
        assert f["tcp_congestion_control"] and f["tcp_rmem"]


def test_nothing_left_behind(swept):
    _, sweep_dir = swept
    assert nothing_left(sweep_dir), leftovers(sweep_dir)


def first_attempt_errors(sweep_dir, rounds):
    """Rows of the first attempts that were not ok, recomputed from raw/ (the CSV keeps
    the last attempt only)."""
    from orchestrator.results.raw_rows import RowContext, SlotPlan, round_rows

    meta = record(sweep_dir)
    distances = {(p["src"], p["dst"]): p["distance_km"] for p in meta["plan"]["pairs"]}
    ctx = RowContext(sweep_dir.name, "local", 1, {}, distances)
    bad = []
    for entry in rounds:
        slots = [SlotPlan(**s) for s in entry["slots"]]
        raw = store.read_raw_round(sweep_dir, entry["round"])
        texts = {n: raw.get(store.safe_name(n)) for s in slots for n in (s.client, s.server)}
        bad += [
            (entry["round"], r["src_region"], r["dst_region"], r["status"], r["error"])
            for r in round_rows(entry["round"], slots, texts, ctx)
            if r["status"] != "ok"
        ]
    return bad


def test_a_latency_only_sweep_of_12_regions_is_one_ping_phase_within_the_emulators_accuracy(
    tmp_path,
):
    # its wall time against pings x interval + 15 s is bench/sweep.py --latency's figure:
    # tests never assert on time
    args = ["sweep", "--tests", "ping", "--max-regions", "12", "--yes", "--no-report"]
    out = run_cli([*args, "--results", str(tmp_path)])
    assert out.returncode == 0, out.stderr[-3000:]
    sweep_dir = only_sweep(tmp_path)
    meta = record(sweep_dir)
    (run,) = meta["measure_runs"]  # the ping phase alone: no rounds, no iperf3
    assert run["phase"] == "ping" and run["tests"] == 132
    got = rows(sweep_dir)
    assert len(got) == 132 and all(r["status"] == "ok" for r in got.values())
    rtts = expected_rtts_ms(sweep_spec(sweep_dir / "state"))
    for (src, dst), r in got.items():
        assert r["throughput_bps"] == "" and r["bytes"] == ""
        expected = rtts[(src, dst)]
        # the emulator's accuracy bound (bench/emulator.py), on the median of 20 probes
        assert abs(float(r["rtt_p50_ms"]) - expected) <= 0.5 + 0.02 * expected, (src, dst, r)
    assert nothing_left(sweep_dir), leftovers(sweep_dir)


def test_a_sweep_whose_every_row_is_flagged_ends_well_and_joins_the_store(tmp_path):
    # 4 pings a test: every row has fewer than 5 RTT samples (few_samples), so the report
    # has nothing usable; the measurements stand (a loss episode on a 2-region sweep of 5
    # pings did this by chance, and the sweep exited 2 without joining the store)
    args = ["sweep", "--max-regions", "2", "--tests", "ping", "--pings", "4", "--yes"]
    out = run_cli([*args, "--results", str(tmp_path)], timeout_s=300)
    sweep_dir = only_sweep(tmp_path)
    try:
        assert out.returncode == 0, out.stderr[-3000:]
        got = rows(sweep_dir)
        assert len(got) == 2 and all(r["flags"] == "few_samples" for r in got.values()), got
        assert "WARNING no report: none of the 2 measurements is usable" in out.stderr
        assert f"interregion report --sweep {sweep_dir.name}` builds it" in out.stderr
        assert record(sweep_dir)["stages"]["report"]["status"] == "failed"
        assert "history: 2 rows added to" in out.stderr
    finally:
        assert nothing_left(sweep_dir), leftovers(sweep_dir)
