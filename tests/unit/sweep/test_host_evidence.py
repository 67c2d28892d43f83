"""Host allowance against path: the hosts' own counters, the plan's baseline check,
sentinel pairs and the report's flags (orchestrator.plan.allowance and its callers).

Parsers read captured real output (tests/data/host/README.md says where each is from).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.emulator.shaping import allowance_probes, tc_batch
from orchestrator.emulator.spec import EmulationSpec, HostSpec
from orchestrator.model.catalog import CatalogError, load_catalog, parse_catalog
from orchestrator.netmodel.model import DEFAULT_MODEL, emulated_type, emulated_types
from orchestrator.plan import allowance
from orchestrator.plan.rounds import add_sentinels, schedule
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import TestParams, make_plan
from orchestrator.report.build import build_report
from orchestrator.results import files as store
from orchestrator.results import parse
from orchestrator.results.raw_rows import RowContext, SlotPlan, slot_rows
from orchestrator.results.schema import MEASUREMENT_COLUMNS, PREVIOUS_COLUMNS
from orchestrator.sweep import sentinels
from orchestrator.sweep.events import PlannedRound

HOST = Path(__file__).resolve().parents[2] / "data" / "host"
DATA = Path(__file__).resolve().parents[2] / "data"
CATALOG = load_catalog()
CLOSE = ("aws:us-east-1", "gcp:us-east4", "aws:us-east-2")  # a few ms apart: the cap binds


def text(name: str) -> str:
    return (HOST / name).read_text()


# ---- parsers on captured output --------------------------------------------------------


def test_ethtool_stats_of_a_real_ena_listing():
    stats = parse.parse_ethtool_stats(text("ethtool_ena.txt"))
    assert stats["queue_0_tx_cnt"] == 33539 and stats["ena_admin_q_submitted_cmd"] == 174
    assert parse.allowance_counters(text("ethtool_ena.txt")) == {
        "bw_in_allowance_exceeded": 0,
        "bw_out_allowance_exceeded": 0,
        "pps_allowance_exceeded": 0,
    }


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ethtool_ena_throttled_grep.txt", {"bw_out_allowance_exceeded": 14368}),
        ("ethtool_ena_bw_in_grep.txt", {"bw_in_allowance_exceeded": 9}),
    ],
)
def test_allowance_counters_of_throttled_instances(name, expected):
    found = parse.allowance_counters(text(name))
    assert found.items() >= expected.items() and len(found) == 3


@pytest.mark.parametrize("name", ["ethtool_veth.txt", "ethtool_lo.txt"])
def test_a_nic_without_ena_counters_has_none(name):
    assert parse.allowance_counters(text(name)) == {}


def test_emulated_counter_from_tc_json():
    assert parse.tc_allowance_counter(text("tc_tbf_fresh.json")) == 0
    assert parse.tc_allowance_counter(text("tc_tbf_drained.json")) == 1886 + 1  # overlimits + drops
    assert parse.tc_allowance_counter(text("tc_no_tbf.json")) is None
    assert parse.tc_allowance_counter(text("tc_tbf_drained.json")[:100]) is None
    assert parse.tc_allowance_counter("") is None


def test_steal_between_two_real_proc_stat_readings():
    # user +359, system +45, softirq +1, steal +3 ticks: 3 of 408
    assert parse.steal_pct(text("proc_stat_before.txt"), text("proc_stat_after.txt")) == 0.735
    # user + nice + system + idle + iowait + irq + softirq + steal of the "cpu" line
    total = 563826 + 87092 + 372277 + 1058929 + 4493 + 0 + 40998 + 221
    assert parse.parse_proc_stat_cpu(text("proc_stat_before.txt")) == (221, total)
    no_steal = ("proc_stat_no_steal_before.txt", "proc_stat_no_steal_after.txt")
    assert parse.steal_pct(text(no_steal[0]), text(no_steal[1])) == 0.0
    # counters that went back (readings swapped): unknown, not a negative steal
    assert parse.steal_pct(text("proc_stat_after.txt"), text("proc_stat_before.txt")) is None
    assert parse.steal_pct("", text("proc_stat_after.txt")) is None
    assert parse.steal_pct("cpu  1 2 3", "cpu  4 5 6") is None  # no steal field


def test_counter_delta():
    assert parse.counter_delta(5, 9) == 4
    assert parse.counter_delta(None, 9) is None
    assert parse.counter_delta(9, 5) is None  # a reset driver: the move is unknown


# ---- rows: the agent's samples around each test ----------------------------------------


def sample(ethtool: str = "", proc: str = "proc_stat_before.txt", tc_out: str = "") -> dict:
    cpu = next(line for line in text(proc).splitlines() if line.startswith("cpu "))
    out = {"at_utc": "2026-11-23T17:00:00.000Z", "proc_stat_cpu": cpu}
    if ethtool:
        out["ethtool"] = {"rc": 0, "stdout": text(ethtool), "stderr": ""}
    if tc_out:
        out["emulated_bw_out"] = {"rc": 0, "stdout": text(tc_out)}
        out["emulated_bw_in"] = {"rc": 0, "stdout": text(tc_out)}
    return out


def agent_docs(client_samples, server_samples):
    """A slot's two agent documents, the iperf3 outputs being real captures."""
    forward = (DATA / "iperf3_forward.json").read_text()
    reverse = (DATA / "iperf3_reverse.json").read_text()
    tests = []
    for i, out in enumerate((forward, reverse)):
        tests.append(
            {
                "direction": ("forward", "reverse")[i],
                "attempts": 1,
                "peer_late": False,
                "run": {"rc": 0, "stdout": out, "stderr": ""},
                "host_before": client_samples[2 * i],
                "host_after": client_samples[2 * i + 1],
            }
        )
    client = {"agent_version": 3, "host": "aws:us-east-1", "round": 1, "role": "client",
              "peer": "aws:us-east-2", "ping": None, "iperf3": tests}  # fmt: skip
    server = {"agent_version": 3, "host": "aws:us-east-2", "round": 1, "role": "server",
              "peer": "aws:us-east-1", "ping": None, "iperf3_server": [],
              "host_samples": server_samples}  # fmt: skip
    return {"aws:us-east-1": json.dumps(client), "aws:us-east-2": json.dumps(server)}


CTX = RowContext(
    sweep_id="20261123T1700Z-0001",
    backend="aws",
    streams=1,
    machine_types={"aws:us-east-1": "t3.small", "aws:us-east-2": "t3.small"},
    distances_km={
        ("aws:us-east-1", "aws:us-east-2"): 500.0,
        ("aws:us-east-2", "aws:us-east-1"): 500.0,
    },
)
SLOT = SlotPlan(client="aws:us-east-1", server="aws:us-east-2", reverse=True, port=5201)


def test_rows_carry_each_sides_counters_over_its_own_test():
    calm, throttled = "ethtool_ena.txt", "ethtool_ena_throttled_grep.txt"
    # client: forward calm -> throttled (bw_out +14368), reverse calm -> calm
    client = [sample(calm), sample(throttled, "proc_stat_after.txt"), sample(calm), sample(calm)]
    # server: listening, after forward, after reverse: its inbound counter moves in the
    # reverse test only, where it is the sender (bw_out of ethtool_ena_bw_in_grep is 0)
    server = [sample(calm), sample(calm), sample("ethtool_ena_bw_in_grep.txt")]
    forward, reverse = slot_rows(1, SLOT, agent_docs(client, server), CTX)
    assert forward["status"] == reverse["status"] == "ok"
    assert forward["src_bw_out_allowance_exceeded_packets"] == 14368
    assert forward["dst_bw_in_allowance_exceeded_packets"] == 0
    assert forward["src_cpu_steal_pct"] == 0.735 and forward["dst_cpu_steal_pct"] is None
    assert reverse["src_bw_out_allowance_exceeded_packets"] == 0  # the server sent
    assert reverse["dst_bw_in_allowance_exceeded_packets"] == 0
    assert reverse["src_pps_allowance_exceeded_packets"] == 0
    assert set(forward) <= set(MEASUREMENT_COLUMNS)
    flagged = allowance.host_flags([forward, reverse])
    assert [f["src"] for f in flagged] == ["aws:us-east-1"]
    assert flagged[0]["evidence"] == "src_bw_out_allowance_exceeded +14368"


def test_rows_read_the_emulated_counter_where_ethtool_has_none():
    client = [sample("ethtool_veth.txt", tc_out="tc_tbf_fresh.json"),
              sample("ethtool_veth.txt", tc_out="tc_tbf_drained.json")] * 2  # fmt: skip
    server = [sample(tc_out="tc_tbf_fresh.json")] * 3
    forward, _ = slot_rows(1, SLOT, agent_docs(client, server), CTX)
    assert forward["src_bw_out_allowance_exceeded_packets"] == 1887
    assert forward["dst_bw_in_allowance_exceeded_packets"] == 0
    assert forward["src_pps_allowance_exceeded_packets"] is None  # not emulated


def test_rows_of_an_older_agent_have_no_host_evidence():
    docs = agent_docs([None] * 4, [])
    forward, _ = slot_rows(1, SLOT, docs, CTX)
    assert forward["status"] == "ok"
    assert [forward[c] for c in allowance.ALLOWANCE_COLUMNS + allowance.STEAL_COLUMNS] == [None] * 6


def test_a_measurements_file_of_the_previous_contract_reads_with_empty_host_columns(tmp_path):
    path = tmp_path / "measurements.csv"
    row = {c: "" for c in PREVIOUS_COLUMNS} | {"src_cloud": "aws", "status": "ok"}
    path.write_text(",".join(PREVIOUS_COLUMNS) + "\n" + ",".join(row.values()) + "\n")
    rows = store.read_rows(path)
    assert tuple(rows[0]) == MEASUREMENT_COLUMNS and rows[0]["src_cpu_steal_pct"] == ""
    assert rows[0]["src_cloud"] == "aws"


# ---- the plan: mean egress against the baseline ----------------------------------------


def test_catalog_baselines_and_a_covering_type():
    t3 = CATALOG.bandwidth["t3.small"]
    assert (t3.baseline_bps, t3.burst_bps, t3.cloud) == (0.128e9, 5e9, "aws")
    assert "DescribeInstanceTypes" in t3.source
    types = CATALOG.bandwidth.values()
    assert allowance.covering_type("aws", 0.3e9, types) == "t3.large"  # 0.512 >= 0.3
    assert allowance.covering_type("aws", 0.76e9, types) == "t3.xlarge"  # 1.024 >= 0.76
    assert allowance.covering_type("gcp", 2e9, types) == "e2-standard-2"
    assert allowance.covering_type("aws", 99e9, types) == ""


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"cloud": "aws", "baseline_gbps": 2, "burst_gbps": 1, "source": "s"}, "above burst"),
        ({"cloud": "aws", "baseline_gbps": 1, "burst_gbps": 1, "source": "x"}, "not in machine"),
        ({"cloud": "azure", "baseline_gbps": 1, "burst_gbps": 1, "source": "s"}, "unknown cloud"),
        ({"cloud": "aws", "baseline_gbps": -1, "burst_gbps": 1, "source": "s"}, "positive"),
        ({"cloud": "aws", "burst_gbps": 1, "source": "s"}, "missing 'baseline_gbps'"),
    ],
)
def test_bad_machine_type_entries_are_named(entry, message):
    data = {
        "clouds": {"aws": {"machine_type": "t3.small"}, "gcp": {"machine_type": "e2-small"}},
        "regions": [],
        "machine_types": {"t9.odd": entry},
        "machine_type_sources": {"s": "a source"},
    }
    with pytest.raises(CatalogError, match=message):
        parse_catalog(data)


def test_a_local_plan_on_a_burstable_type_warns_and_names_a_covering_type():
    spec = SelectionSpec(regions=CLOSE)
    params = TestParams(duration_s=3, pings=5)
    plan = make_plan(CATALOG, spec, params, backend="local", emulated="emulated-t3.small-5s")
    hosts = {s.host: s for s in plan.shortfalls}
    assert set(hosts) == set(CLOSE)
    us_east_1 = hosts["aws:us-east-1"]
    assert us_east_1.baseline_bps == emulated_type("emulated-t3.small-5s").baseline_bps
    # what it sends (its tests as source, and the sentinels' repeat) over the wall time
    assert us_east_1.mean_egress_bps > us_east_1.baseline_bps
    assert us_east_1.covering_type == "emulated-50mbit"  # the cap alone: no allowance
    doc = plan.to_json()
    assert doc["emulated_type"] == "emulated-t3.small-5s"
    assert {s["host"] for s in doc["allowance_shortfalls"]} == set(CLOSE)
    plain = make_plan(CATALOG, spec, params, backend="local")
    assert plain.shortfalls == () and plain.to_json()["emulated_type"] == "emulated-50mbit"


def test_a_cloud_plan_compares_with_the_catalog_type_and_its_overrides():
    spec = SelectionSpec(regions=("aws:us-east-1", "aws:us-east-2"))
    plan = make_plan(CATALOG, spec, TestParams(duration_s=10), backend="aws")
    assert [s.machine_type for s in plan.shortfalls] == ["t3.small", "t3.small"]
    assert all(s.covering_type for s in plan.shortfalls)
    big = make_plan(
        CATALOG, spec, TestParams(duration_s=10), backend="aws", machine_types={"aws": "c5n.xlarge"}
    )
    assert big.shortfalls == ()  # 5 Gbit/s baseline covers what the model sends
    latency = make_plan(CATALOG, spec, TestParams(tests=("ping",)), backend="aws")
    assert latency.shortfalls == () and latency.sentinels == ()


def plan_cli(*args):
    return CliRunner().invoke(main, ["plan", *args])


def test_plan_cli_warns_and_strict_refuses_in_one_line():
    args = ["--regions", ",".join(CLOSE), "--duration", "3", "--emulated-type",
            "emulated-t3.small-5s"]  # fmt: skip
    warned = plan_cli(*args, "--json")
    assert warned.exit_code == 0, warned.output
    json.loads(warned.stdout)  # the warning is on stderr: stdout stays JSON
    assert "WARNING 3 hosts send more on average than their machine type sustains" in (
        warned.stderr
    )
    assert "emulated-50mbit covers it" in warned.stderr
    refused = plan_cli(*args, "--strict")
    assert refused.exit_code == 2
    assert len(refused.stderr.strip().splitlines()) == 1 and "(--strict)" in refused.stderr
    assert plan_cli("--regions", ",".join(CLOSE), "--strict").exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--emulated-type", "emulated-t9"], "unknown emulated machine type"),
        (["--emulated-type", "emulated-t3.small", "--backend", "aws", "--clouds", "aws"],
         "applies to --backend local"),
    ],
)  # fmt: skip
def test_bad_emulated_types_are_one_line_errors(args, message):
    result = plan_cli("--max-regions", "2", *args)
    assert result.exit_code == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# ---- sentinels -------------------------------------------------------------------------


def test_sentinels_repeat_the_first_rounds_first_slots_at_the_end():
    spec = SelectionSpec(regions=("aws:us-east-1", "aws:eu-west-1", "aws:us-west-2",
                                  "gcp:us-east4", "gcp:europe-west1"))  # fmt: skip
    from orchestrator.plan.selection import select

    pairs = select(CATALOG, spec).pairs
    rounds = schedule(pairs)  # 5 regions: 5 rounds of 2 slots, one host idle each
    out = add_sentinels(rounds)
    late = [s for r in out for s in r if s.sentinel]
    assert [s.regions for s in late] == [s.regions for s in rounds[0][:2]]
    for rnd in out:  # still no host twice in a round
        keys = [k for s in rnd for k in s.regions]
        assert len(keys) == len(set(keys))
    assert sum(len(r) for r in out) == sum(len(r) for r in rounds) + 2
    capped = add_sentinels(rounds, max_concurrent=2)
    assert len(capped) == len(rounds) + 1 and all(s.sentinel for s in capped[-1])
    assert add_sentinels(rounds[:1]) == [list(rounds[0])]  # nothing late to compare with


def test_sentinel_rounds_of_the_measure_stage_use_their_rounds_port():
    a, b, c, d = "aws:a", "aws:b", "aws:c", "aws:d"
    planned = [
        PlannedRound(7, [SlotPlan(a, b, True, 5207), SlotPlan(c, d, True, 5207)], 20.0),
        PlannedRound(8, [SlotPlan(a, c, True, 5208)], 30.0),
    ]
    out = sentinels.add_sentinel_rounds(planned)
    assert [r.number for r in out] == [7, 8, 9]  # a and c are busy in round 8
    assert out[2].slots == [
        SlotPlan(a, b, True, 5209, sentinel=True),
        SlotPlan(c, d, True, 5209, sentinel=True),
    ]
    assert out[2].expected_s == 20.0
    joined = sentinels.add_sentinel_rounds([planned[0], replace(planned[1], slots=[])], count=1)
    assert joined[1].slots == [SlotPlan(a, b, True, 5208, sentinel=True)]
    # the measure stage's line: which slots, where, and why
    said = sentinels.describe(out, len(planned))
    assert said.startswith(
        "sentinels: 2 slots of round #7 (aws:a <> aws:b, aws:c <> aws:d) run again in one "
        "more round (#9) after the 2 planned;"
    ), said
    assert "in the last round (#8)" in sentinels.describe(joined, 2)
    assert sentinels.describe(planned, 2) == ""  # none added


def row(src: str, dst: str, bps: float | None, status: str = "ok", round_no: int = 1) -> dict:
    s_cloud, s_region = src.split(":")
    d_cloud, d_region = dst.split(":")
    return {c: "" for c in MEASUREMENT_COLUMNS} | {
        "sweep_id": "20261123T1700Z-0001",
        "src_cloud": s_cloud,
        "src_region": s_region,
        "dst_cloud": d_cloud,
        "dst_region": d_region,
        "distance_km": "300.0",
        "rtt_avg_ms": "5.0",
        "throughput_bps": "" if bps is None else str(bps),
        "round": str(round_no),
        "status": status,
    }


def test_sentinel_check_by_hand():
    early = [row("aws:a", "aws:b", 40e6), row("aws:b", "aws:a", 50e6), row("aws:c", "aws:d", 9e6)]
    late = [row("aws:a", "aws:b", 10e6), row("aws:b", "aws:a", 30e6)]
    check = allowance.sentinel_check(early, late)
    # medians over the two tests both have: early 45 Mbit/s, late 20: 55.6 % less
    assert (check.tests, check.early_bps, check.late_bps) == (2, 45e6, 20e6)
    assert check.drop == pytest.approx(1 - 20 / 45) and check.flagged
    steady = allowance.sentinel_check(early, [row("aws:a", "aws:b", 33e6)])
    assert steady.drop == pytest.approx(0.175) and not steady.flagged  # within 20 %
    assert allowance.sentinel_check(early, [row("aws:x", "aws:y", 1e6)]) is None


def test_sentinels_compare_like_with_like():
    """Issue 29: an early 8-stream capacity row was set against a late single_stream row of
    the same pair ("47 % less at the end (49.7 -> 26.4 Mbit/s)"). A late row meets only the
    early row of its own source, destination, measure and streams."""
    capacity = {**row("aws:a", "aws:b", 49.7e6), "measure": "capacity", "streams": "8"}
    single = {**row("aws:a", "aws:b", 26.1e6), "measure": "single_stream", "streams": "1"}
    late_single = {**row("aws:a", "aws:b", 26.4e6, round_no=9), "measure": "single_stream"}
    for early in ([capacity, single], [single, capacity]):
        check = allowance.sentinel_check(early, [late_single])
        assert (check.tests, check.early_bps, check.late_bps) == (1, 26.1e6, 26.4e6)
        assert check.drop == pytest.approx(1 - 26.4 / 26.1) and not check.flagged  # +1.1 %
    # no late capacity row: the early capacity row has nothing to meet
    assert allowance.sentinel_check([capacity], [late_single]) is None
    # a row without measure or streams (a file before them) is single_stream, one stream
    assert allowance.sentinel_key(row("aws:a", "aws:b", 1.0)) == (
        "aws:a",
        "aws:b",
        "single_stream",
        1,
    )
    # the same measure with other streams (an older sweep's single test of several) is not
    # the same test
    four = {**single, "streams": "4"}
    assert allowance.sentinel_check([four], [late_single]) is None
    # both measures repeated, no drift: nothing flagged, each against its own
    late_cap = {**capacity, "throughput_bps": "49.9e6", "round": "9"}
    both = allowance.sentinel_check([capacity, single], [late_single, late_cap])
    assert both.tests == 2 and not both.flagged
    assert both.early_bps == pytest.approx((49.7e6 + 26.1e6) / 2)
    assert both.late_bps == pytest.approx((49.9e6 + 26.4e6) / 2)


def test_split_rows_takes_the_sentinel_slots_measure_only():
    slots = [SlotPlan("aws:a", "aws:b", True, 5201, sentinel=True, measure="capacity")]
    cap = {**row("aws:a", "aws:b", 1e6), "measure": "capacity"}
    single = {**row("aws:b", "aws:a", 2e6), "measure": "single_stream"}
    own, late = sentinels.split_rows(slots, [cap, single])
    assert [r["measure"] for r in late] == ["capacity"]
    assert [r["measure"] for r in own] == ["single_stream"]


def test_split_and_keep_the_late_rows(tmp_path):
    slots = [
        SlotPlan("aws:a", "aws:b", True, 5201, sentinel=True),
        SlotPlan("aws:c", "aws:d", True, 5201),
    ]
    rows = [row("aws:a", "aws:b", 1e6), row("aws:b", "aws:a", 2e6), row("aws:c", "aws:d", 3e6)]
    own, late = sentinels.split_rows(slots, rows)
    assert [store.pair_key(r) for r in own] == [("aws:c", "aws:d")]
    assert len(late) == 2
    sentinels.merge_sentinel_rows(tmp_path, late)
    sentinels.merge_sentinel_rows(tmp_path, [row("aws:a", "aws:b", 5e6, round_no=9)])
    kept = sentinels.read_sentinel_rows(tmp_path)
    assert {(r["src_region"], r["throughput_bps"]) for r in kept} == {
        ("a", "5000000.0"),
        ("b", "2000000.0"),
    }


def test_report_flags_the_sweep_and_the_tests_whose_counters_moved(tmp_path):
    sweep_dir = tmp_path / "20261123T1700Z-0001"
    sweep_dir.mkdir()
    rows = [
        row("aws:us-east-1", "aws:us-east-2", 45e6),
        row("aws:us-east-2", "aws:us-east-1", 47e6),
        row("aws:us-east-1", "gcp:us-east4", 44e6, round_no=2),
    ]
    rows[2]["src_bw_out_allowance_exceeded_packets"] = "1887"
    rows[1]["dst_cpu_steal_pct"] = "12.5"
    store.write_rows(sweep_dir, rows)
    late = [row("aws:us-east-1", "aws:us-east-2", 9e6, round_no=4),
            row("aws:us-east-2", "aws:us-east-1", 8e6, round_no=4)]  # fmt: skip
    sentinels.merge_sentinel_rows(sweep_dir, late)
    logged: list[str] = []
    out = build_report(sweep_dir, png=False, log=logged.append)
    doc = json.loads((out / "report.json").read_text())
    assert doc["sentinels"]["20261123T1700Z-0001"]["flagged"] is True
    assert doc["sentinels"]["20261123T1700Z-0001"]["tests"] == 2
    assert doc["host_flags"] == 2
    flags = (out / "host-flags.csv").read_text().splitlines()
    assert flags[0] == ",".join(allowance_report_columns())
    assert any("src_bw_out_allowance_exceeded +1887" in line for line in flags)
    assert any("dst_cpu_steal 12.5%" in line for line in flags)
    assert any("sentinel tests measured" in m and "% less at the end" in m for m in logged)
    assert any("2 tests where a host's own counters moved" in m for m in logged)


def test_report_reads_only_the_rows_host_evidence_uses_and_they_are_the_strict_readers(tmp_path):
    from orchestrator.report.build import _host_rows

    rows = [row("aws:us-east-1", "aws:us-east-2", 45e6, round_no=n) for n in range(1, 4)]
    rows += [row("aws:us-east-2", "aws:us-east-1", 47e6), row("aws:us-east-1", "gcp:us-east4", 1e6)]
    rows[1]["src_pps_allowance_exceeded_packets"] = "3"
    rows[2]["status"] = "failed"
    rows[4]["dst_cpu_steal_pct"] = "0.5"  # read, but under the flag
    store.write_rows(tmp_path, rows)
    path = tmp_path / store.MEASUREMENTS_FILE
    every = store.read_rows(path)
    late = {("aws:us-east-1", "aws:us-east-2")}
    # the sentinel's ok rows (the failed one is no early result) and the two with counters
    assert _host_rows(path, late) == [every[0], every[1], every[4]]
    assert _host_rows(path, set()) == [every[1], every[4]]
    assert allowance.host_flags(_host_rows(path, set()) or []) == allowance.host_flags(every)
    # a damaged file is left to the strict reader, which names the line
    path.write_text(path.read_text() + "aws,1\n")
    assert _host_rows(path, late) is None


def allowance_report_columns():
    from orchestrator.report.build import HOST_FLAGS_COLUMNS

    return HOST_FLAGS_COLUMNS


# ---- the emulated cloud ----------------------------------------------------------------


def spec_of(machine: str) -> EmulationSpec:
    t = emulated_type(machine)
    hosts = (HostSpec("aws:a", "aws", "a", "198.18.9.10", t.name),
             HostSpec("aws:b", "aws", "b", "198.18.9.11", t.name))  # fmt: skip
    return EmulationSpec(
        id="allowt",
        subnet="198.18.9.0/24",
        hosts=hosts,
        client_pub="ssh-ed25519 AAAA",
        host_key="/nonexistent",
        host_pub="ssh-ed25519 AAAA",
        rate_mbit=DEFAULT_MODEL.rate_mbit,
        allowance_baseline_mbit=t.baseline_mbit,
        allowance_bucket_bytes=t.bucket_bytes,
    )


def test_emulated_burstable_type_is_t3_small_scaled_like_the_cap():
    t = emulated_types()["emulated-t3.small"]
    assert t.baseline_mbit == pytest.approx(128 * DEFAULT_MODEL.scale, abs=0.001)
    assert t.rate_mbit == DEFAULT_MODEL.rate_mbit
    # the bucket holds 5 minutes above the baseline at the cap
    assert t.bucket_bytes == round((t.rate_mbit - t.baseline_mbit) * 1e6 / 8 * 300)
    assert emulated_types()["emulated-t3.small-5s"].bucket_bytes == round(t.bucket_bytes / 60)
    with pytest.raises(UserError, match="known: emulated-50mbit"):
        emulated_type("t3.small")


def test_a_burstable_emulation_puts_a_token_bucket_under_each_cap():
    batch = tc_batch(spec_of("emulated-t3.small-5s"))
    tbf = [line for line in batch.splitlines() if " tbf " in line]
    assert len(tbf) == 4  # egress (ifb q<n>) and ingress (port p<n>) of both hosts
    assert "rate 6913kbit" in tbf[0]  # 6.612 Mbit/s of goodput x 1514 / 1448 (frames)
    assert "bfifo" not in batch
    plain = tc_batch(spec_of("emulated-50mbit"))
    assert " tbf " not in plain and plain.count("bfifo") == 4
    probes = allowance_probes(spec_of("emulated-t3.small-5s"), "ir-allowt-hub")
    assert probes["aws:b"]["bw_out"][-1] == "q2" and probes["aws:b"]["bw_in"][-1] == "p2"
    assert allowance_probes(spec_of("emulated-50mbit"), "ir-allowt-hub") == {}


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=12),
    density=st.floats(min_value=0.2, max_value=1.0),
    cap=st.one_of(st.none(), st.integers(min_value=1, max_value=6)),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_sentinels_keep_every_round_a_matching_under_the_cap(n, density, cap, seed):
    import random

    from orchestrator.model.catalog import Region
    from orchestrator.plan.selection import Pair

    rng = random.Random(seed)
    regions = [Region("aws", f"r{i}", "C", "US", 0.0, float(i), "t") for i in range(n)]
    pairs = [
        Pair(a, b, 0.0)
        for i, a in enumerate(regions)
        for b in regions[i + 1 :]
        if rng.random() < density
    ]
    if not pairs:
        return
    rounds = schedule(pairs, max_concurrent=cap)
    out = add_sentinels(rounds, max_concurrent=cap)
    late = [s for r in out for s in r if s.sentinel]
    if len(rounds) < 2:
        assert out == [list(r) for r in rounds] and not late
        return
    assert [s.regions for s in late] == [s.regions for s in rounds[0][:2]]
    assert len(out) in (len(rounds), len(rounds) + 1)
    for rnd in out:
        keys = [k for s in rnd for k in s.regions]
        assert len(keys) == len(set(keys))  # no host in two tests at once
        assert cap is None or len(rnd) <= cap
