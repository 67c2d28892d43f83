"""The emulator's pure parts: spec checks, names, batches, tables, subnets, stale state."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.core.errors import UserError
from orchestrator.core.geo import distance_km
from orchestrator.drivers.keys import SweepKeys
from orchestrator.emulator import delay, net, runtime, shaping, state
from orchestrator.emulator.spec import (
    CONTROLLER,
    EmulationSpec,
    HostSpec,
    PathSpec,
    all_subnets,
    host_addresses,
)
from orchestrator.emulator.stack import build_spec, emulation_id_for, stack_variables
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.netmodel.routes import EMPTY, controller_rtt_ms
from orchestrator.sweep.backends import stack_plan
from orchestrator.sweep.provision import controller_region

KEYS = SweepKeys(
    Path("/k/client"), "ssh-ed25519 AAAAclient c", Path("/k/host"), "ssh-ed25519 AAAAhost h"
)


def spec_of(n: int, **kw) -> EmulationSpec:
    addresses = host_addresses("198.18.7.0/24", n)
    hosts = tuple(HostSpec(f"aws:r{i}", "aws", f"r{i}", a) for i, a in enumerate(addresses))
    args = dict(
        id="abc",
        subnet="198.18.7.0/24",
        hosts=hosts,
        client_pub=KEYS.client_pub,
        host_key=str(KEYS.host_key),
        host_pub=KEYS.host_pub,
    )
    return EmulationSpec(**{**args, **kw})


def test_addresses_controller_and_hosts_share_one_24_inside_the_benchmark_range():
    spec = spec_of(3)
    assert spec.controller_address == "198.18.7.1"
    assert [h.address for h in spec.hosts] == ["198.18.7.10", "198.18.7.11", "198.18.7.12"]
    assert len(all_subnets()) == 512
    assert all(
        ipaddress.ip_network(s).subnet_of(ipaddress.ip_network("198.18.0.0/15"))
        for s in all_subnets()
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"subnet": "203.0.113.0/24"}, "outside 198.18.0.0/15"),
        ({"subnet": "100.64.0.0/24"}, "outside 198.18.0.0/15"),
        ({"subnet": "198.18.0.0/23"}, "one /24"),
        ({"id": "Has-Dash"}, "emulation id 'Has-Dash' is invalid"),
        ({"id": "elevenchars"}, "is invalid"),
        ({"hosts": ()}, "has no hosts"),
        ({"hosts": (HostSpec("aws:x", "aws", "x", "198.18.8.10"),)}, "outside 198.18.7.0/24"),
    ],
)
def test_bad_specs_are_one_line_errors(change, message):
    with pytest.raises(UserError, match=message) as info:
        spec_of(2, **change)
    assert "\n" not in str(info.value)


def test_duplicate_hosts_are_refused():
    hosts = (
        HostSpec("aws:x", "aws", "x", "198.18.7.10"),
        HostSpec("aws:x", "aws", "x", "198.18.7.11"),
    )
    with pytest.raises(UserError, match="duplicate"):
        spec_of(2, hosts=hosts)


def test_spec_round_trips_through_json(tmp_path):
    spec = spec_of(3, paths=(PathSpec("aws:r0", "aws:r1", 1500, 250, 0),), rate_mbit=50.0)
    (tmp_path / "s.json").write_text(spec.to_json())
    assert EmulationSpec.load(tmp_path / "s.json") == spec


def test_broken_spec_files_are_one_line_errors(tmp_path):
    with pytest.raises(UserError, match="not found"):
        EmulationSpec.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(UserError, match="not JSON"):
        EmulationSpec.load(tmp_path / "bad.json")
    (tmp_path / "partial.json").write_text('{"id": "x"}')
    with pytest.raises(UserError, match="malformed"):
        EmulationSpec.load(tmp_path / "partial.json")


def test_interface_and_namespace_names_fit_the_kernel_limits_at_full_size():
    spec = spec_of(240, id="abcdefghij")
    assert len(net.root_link(spec.id)) <= 15
    batch = net.root_batch(spec)
    # Every link is created inside its namespace: nothing named in the root ns but ir-<id>.
    for line in batch.splitlines():
        if line.startswith("link add") and "type bridge" not in line:
            assert " netns " in line or line.startswith(f"link add {net.root_link(spec.id)} ")
        for word in line.split():
            if word.startswith(("p", "q")) and word[1:].isdigit():
                assert len(word) <= 15
    assert batch.count("netns add ") == 241
    assert net.emulation_of_namespace(net.host_ns("abcdefghij", 239)) == "abcdefghij"
    assert net.emulation_of_namespace(net.hub_ns("abc")) == "abc"
    assert net.emulation_of_namespace("irtest-dly-hub") is None
    assert net.emulation_of_namespace("ir-abc") is None


def test_hosts_get_an_address_and_no_default_route():
    batch = net.host_batch(spec_of(2), 1)
    assert "addr add 198.18.7.11/24 dev eth0" in batch
    assert "route" not in batch


def test_a_window_clamp_rides_on_the_subnet_route():
    batch = net.host_batch(spec_of(2, tcp_window_bytes=131000), 0)
    assert "addr add 198.18.7.10/24 dev eth0 noprefixroute" in batch
    assert "route add 198.18.7.0/24 dev eth0 proto kernel scope link src 198.18.7.10 " in batch
    assert "window 131000\n" in batch
    assert "default" not in batch


def test_every_host_knows_every_peers_fixed_mac_and_asks_no_one():
    spec = spec_of(3)
    batches = [net.host_batch(spec, i) for i in range(3)]
    assert net.host_mac("198.18.7.11") == "02:49:52:12:07:0b"
    assert "link set dev eth0 address 02:49:52:12:07:0b" in batches[1]
    for i, batch in enumerate(batches):
        neighbours = [line for line in batch.splitlines() if line.startswith("neigh ")]
        peers = [h for j, h in enumerate(spec.hosts) if j != i]
        assert neighbours == [
            f"neigh replace {p.address} lladdr {net.host_mac(p.address)} dev eth0 nud permanent"
            for p in peers
        ]


def test_tcp_buffers_are_set_per_host_only_when_the_model_says_so():
    assert "net.ipv4.tcp_rmem" not in net.host_sysctls(0)
    values = net.host_sysctls(262144)
    assert values["net.ipv4.tcp_rmem"].split()[-1] == "262144"
    assert values["net.ipv4.tcp_wmem"].split()[-1] == "262144"
    assert net.hub_sysctls()["net.bridge.bridge-nf-call-iptables"] == "1"


def test_queue_is_30_ms_at_the_link_rate():
    assert shaping.queue_bytes(50.0) == 187_500  # 50e6 / 8 * 0.030
    assert shaping.queue_bytes(0.1) == 4 * 1514  # never below a few packets
    assert shaping.burst_bytes(50.0) >= 65536  # a GSO packet fits the bucket


def test_one_tc_batch_caps_both_directions_of_every_host_and_spares_the_controller():
    assert shaping.tc_batch(spec_of(3)) == ""  # no cap, no qdisc
    batch = shaping.tc_batch(spec_of(3, rate_mbit=50.0))
    lines = batch.splitlines()
    for n in (1, 2, 3):
        assert f"qdisc add dev p{n} root handle 1: htb default 10" in lines
        assert f"qdisc add dev q{n} root handle 1: htb default 10" in lines
        assert any(
            f"dev p{n} parent ffff:" in line and f"redirect dev q{n}" in line for line in lines
        )
    assert shaping.htb_rate_kbit(50.0) == 52279  # 50 Mbit/s of goodput in 1514-byte frames
    assert sum("rate 52279kbit ceil 52279kbit" in line for line in lines) == 6
    assert sum("match ip src 198.18.7.1/32 flowid 1:20" in line for line in lines) == 3
    assert sum("match ip dst 198.18.7.1/32 flowid 1:20" in line for line in lines) == 3


def test_delay_table_has_one_line_per_direction_in_delayds_format():
    paths = (PathSpec("aws:r0", "aws:r1", 1500, 250, 10), PathSpec("aws:r1", "aws:r0", 1600))
    text = delay.table(spec_of(2, paths=paths))
    rows = [line.split() for line in text.splitlines() if not line.startswith("#")]
    assert rows == [
        ["198.18.7.10", "198.18.7.11", "1500", "250", "10"],
        ["198.18.7.11", "198.18.7.10", "1600", "0", "0"],
    ]


def test_iptables_queues_host_traffic_only():
    rules = delay.iptables_rules(spec_of(2)).splitlines()
    ctl = [i for i, r in enumerate(rules) if "198.18.7.1/32 -j ACCEPT" in r]
    queue = [i for i, r in enumerate(rules) if "NFQUEUE" in r]
    assert len(ctl) == 2 and len(queue) == 1
    assert max(ctl) < queue[0]  # controller packets are accepted before the queue rule
    assert "--queue-balance 0:1" in rules[queue[0]]
    assert "--queue-bypass" not in rules[queue[0]]


@pytest.mark.slow
def test_subnet_choice_skips_taken_routed_and_reserved_subnets():
    first = runtime.choose_subnet("abc", set(), [])
    assert runtime.choose_subnet("abc", set(), []) == first  # deterministic per id
    second = runtime.choose_subnet("abc", {first}, [])
    assert second != first
    routed = runtime.choose_subnet("abc", set(), [first.replace(".0/24", ".7")])
    assert routed != first
    # A less specific route does not take the /24's traffic away.
    assert runtime.choose_subnet("abc", set(), ["198.18.0.0/15", "198.0.0.0/8"]) == first
    assert "198.19.250.0/24" not in {runtime.choose_subnet(str(i), set(), []) for i in range(600)}
    with pytest.raises(UserError, match="reap"):
        runtime.choose_subnet("abc", set(all_subnets()), [])


def test_conflicting_routes_are_the_equal_or_more_specific_ones():
    assert runtime.conflicts("198.18.7.0/24", ["198.18.7.0/24"]) == ["198.18.7.0/24"]
    assert runtime.conflicts("198.18.7.0/24", ["198.18.7.9"]) == ["198.18.7.9"]
    assert runtime.conflicts("198.18.7.0/24", ["198.18.0.0/15", "default", "fe80::/64"]) == []


def test_emulation_ids_from_sweep_ids_are_short_stable_and_distinct():
    assert emulation_id_for("abc123") == "abc123"
    long = emulation_id_for("2026-11-22T00-15-sweep")
    assert long == emulation_id_for("2026-11-22T00-15-sweep")
    assert long != emulation_id_for("2026-11-22T00-16-sweep")
    assert len(long) <= 10 and long.isalnum() and long.islower()
    assert emulation_id_for("ABC") != "ABC"


def test_build_spec_applies_the_model_to_every_direction():
    catalog = load_catalog()
    regions = [catalog.get(k) for k in ("aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1")]
    spec = build_spec("abc", "198.18.7.0/24", regions, KEYS, DEFAULT_MODEL, baseline_rtt_ms=0.25)
    assert len(spec.paths) == 6
    assert spec.rate_mbit == DEFAULT_MODEL.rate_mbit
    assert spec.tcp_buffer_bytes == DEFAULT_MODEL.tcp_buffer_bytes
    assert spec.tcp_window_bytes == round(DEFAULT_MODEL.window_bytes)
    by_pair = {(p.src, p.dst): p for p in spec.paths}
    a, b = regions[0], regions[1]
    km = distance_km(a.lat, a.lon, b.lat, b.lon)
    expected_rtt_ms = DEFAULT_MODEL.rtt_ms(km, cross_cloud=True)
    forth, back = by_pair[(a.key, b.key)], by_pair[(b.key, a.key)]
    assert forth.delay_us == back.delay_us
    assert abs((forth.delay_us + back.delay_us) / 1000 + 0.25 - expected_rtt_ms) < 0.01
    assert forth.jitter_us == DEFAULT_MODEL.jitter_us


def test_stack_variables_are_the_host_contract_inputs(tmp_path):
    spec = spec_of(2)
    spec_file = tmp_path / "emulation.json"
    spec_file.write_text(spec.to_json())
    variables = stack_variables(spec, spec_file, "/usr/bin/python3")
    assert variables["emulation_id"] == "abc"
    assert variables["spec_file"] == str(spec_file)
    assert len(variables["spec_sha256"]) == 64
    assert variables["hosts"]["aws:r1"] == {
        "cloud": "aws",
        "region": "r1",
        "address": "198.18.7.11",
        "machine_type": "emulated",
        "host_key": KEYS.host_pub,
    }


def test_state_is_stale_when_its_owner_is_gone_or_it_expired(tmp_path):
    alive = state.owner_record(os.getpid())
    assert not state.is_stale(alive)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    record = state.owner_record(child.pid)
    child.wait()
    assert state.is_stale(record)
    reused = {"owner_pid": os.getpid(), "owner_start": alive["owner_start"] + 1}
    assert state.is_stale(reused)  # same pid, other process
    assert not state.is_stale({"owner_pid": 0, "expires_at": time.time() + 60})
    assert state.is_stale({"owner_pid": 0, "expires_at": time.time() - 60})
    assert not state.is_stale({"owner_pid": 0, "expires_at": 0})


def test_state_files_are_written_whole_and_removed(tmp_path):
    state.write_state("abc", {"id": "abc", "subnet": "198.18.7.0/24"}, root=tmp_path)
    assert state.read_state("abc", root=tmp_path) == {"id": "abc", "subnet": "198.18.7.0/24"}
    assert state.known_ids(tmp_path) == ["abc"]
    (tmp_path / "abc" / "state.json").write_text("{")
    assert state.read_state("abc", root=tmp_path) is None
    assert state.remove_state("abc", root=tmp_path)
    assert not state.remove_state("abc", root=tmp_path)
    assert state.known_ids(tmp_path) == []


def test_pid_scan_finds_processes_by_network_namespace():
    own = int(os.readlink("/proc/self/ns/net")[5:-1])
    assert os.getpid() in net.pids_in_netns({own})
    assert net.pids_in_netns(set()) == {}


def test_up_without_root_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(UserError, match="needs root") as info:
        runtime.up(spec_of(2))
    assert "\n" not in str(info.value)
    with pytest.raises(UserError, match="needs root"):
        runtime.down("abc")
    with pytest.raises(UserError, match="needs root"):
        runtime.reap()


def stack_variables_of(spec: EmulationSpec, directory: Path) -> dict:
    spec_file = directory / "emulation.json"
    spec_file.write_text(spec.to_json())
    return stack_variables(spec, spec_file, "/usr/bin/python3")


def test_without_a_controller_location_controller_traffic_is_not_delayed(tmp_path):
    catalog = load_catalog()
    regions = [catalog.get(k) for k in ("aws:us-east-1", "aws:ap-southeast-2")]
    spec = build_spec("abc", "198.18.7.0/24", regions, KEYS, DEFAULT_MODEL)
    assert spec.controller == "" and spec.controller_paths == ()
    assert "198.18.7.1 " not in delay.table(spec)
    assert stack_variables_of(spec, tmp_path)["controller"] == ""


def test_a_controller_location_delays_its_traffic_to_every_host_by_the_model(tmp_path):
    catalog = load_catalog()
    ctl = catalog.get("aws:us-east-1")
    regions = [catalog.get(k) for k in ("aws:us-east-1", "aws:ap-southeast-2", "gcp:us-east4")]
    spec = build_spec(
        "abc", "198.18.7.0/24", regions, KEYS, DEFAULT_MODEL, baseline_rtt_ms=0.2, controller=ctl
    )
    assert spec.controller == "aws:us-east-1" and spec.delayed
    assert len(spec.paths) == 6  # host pairs as without a controller
    by_pair = {(p.src, p.dst): p for p in spec.controller_paths}
    assert len(by_pair) == 6
    for r in regions:
        out, back = by_pair[(CONTROLLER, r.key)], by_pair[(r.key, CONTROLLER)]
        km = distance_km(ctl.lat, ctl.lon, r.lat, r.lon)
        expected_rtt_ms = DEFAULT_MODEL.rtt_ms(km, ctl.cloud != r.cloud)
        assert abs((out.delay_us + back.delay_us) / 1000 + 0.2 - expected_rtt_ms) < 0.01
        assert out.jitter_us == back.jitter_us == DEFAULT_MODEL.jitter_us
    # Sydney is the farthest: its RTT is what a round waits for.
    sydney = by_pair[(CONTROLLER, "aws:ap-southeast-2")]
    assert 2 * sydney.delay_us / 1000 + 0.2 == pytest.approx(
        controller_rtt_ms(ctl, regions, routes=EMPTY), abs=0.01
    )
    # delayd's table names the controller by its address, both directions.
    rows = {tuple(line.split()[:3]) for line in delay.table(spec).splitlines() if line[0] != "#"}
    assert ("198.18.7.1", "198.18.7.11", str(sydney.delay_us)) in rows
    assert ("198.18.7.11", "198.18.7.1", str(sydney.delay_us)) in rows
    # ... and the hub queues its packets instead of waving them through.
    rules = delay.iptables_rules(spec)
    assert "198.18.7.1/32 -j ACCEPT" not in rules
    assert "-A FORWARD -s 198.18.7.0/24 -d 198.18.7.0/24 -j NFQUEUE" in rules
    # It stays out of the hosts' rate cap: the control class still matches it.
    assert "match ip src 198.18.7.1/32 flowid 1:20" in shaping.tc_batch(spec)
    assert stack_variables_of(spec, tmp_path)["controller"] == "aws:us-east-1"


def test_controller_paths_round_trip_and_are_checked():
    paths = (PathSpec(CONTROLLER, "aws:r0", 900, 430), PathSpec("aws:r0", CONTROLLER, 900, 430))
    spec = spec_of(2, controller="aws:us-east-1", controller_paths=paths)
    assert EmulationSpec.from_dict(json.loads(spec.to_json())) == spec
    with pytest.raises(UserError, match="without a controller region"):
        spec_of(2, controller_paths=paths)
    for bad in (PathSpec("aws:r0", "aws:r1", 1), PathSpec(CONTROLLER, "aws:nowhere", 1)):
        with pytest.raises(UserError, match="must join the controller and a host"):
            spec_of(2, controller="aws:us-east-1", controller_paths=(bad,))


def test_a_mistyped_controller_region_is_a_one_line_error_on_every_backend(tmp_path):
    assert controller_region(None) is None and controller_region("") is None
    assert controller_region("aws:us-east-1").key == "aws:us-east-1"
    with pytest.raises(UserError, match="us-east-9") as info:
        stack_plan("aws", "s1", [], KEYS, tmp_path, controller="aws:us-east-9")
    assert "\n" not in str(info.value)
