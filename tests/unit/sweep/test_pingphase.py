"""The ping phase: the agent's own timed ICMP echoes, their schedule, their rows; and on
the emulated cloud, sub-millisecond samples at every RTT, agreeing with iputils ping."""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from emulator_support import make_spec, new_id

from orchestrator import emulator as emu
from orchestrator.core import paths
from orchestrator.model.catalog import load_catalog
from orchestrator.plan.ping_timing import (
    LAUNCH_BASE_S,
    MIN_GAP_S,
    PER_HOST_S,
    PHASE_FORKS,
    REPLY_WAIT_S,
    START_MARGIN_S,
    collect_seconds,
    host_seconds,
    launch_seconds,
    phase_seconds,
    probing_seconds,
)
from orchestrator.results.parse import summarize_probes
from orchestrator.results.ping_rows import phase_rows
from orchestrator.results.raw_rows import RowContext
from orchestrator.sweep.pingphase import phase_parts, phase_play, write_parts

AGENT = paths.PLAYBOOKS / "files" / "ir_agent.py"
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:ap-southeast-2"
CTX = RowContext("s", "local", 1, {}, {(a, b): 1000.0 for a in (A, B, C) for b in (A, B, C)})


def agent_module():
    spec = importlib.util.spec_from_file_location("ir_agent", AGENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_probe_summary_by_hand():
    s = summarize_probes(4, [10.0, 10.2, 10.4], "icmp-raw")
    assert s["ok"] and s["ping_loss_pct"] == 25.0
    assert s["rtt_min_ms"] == 10.0 and s["rtt_max_ms"] == 10.4 and s["rtt_avg_ms"] == 10.2
    assert s["rtt_p50_ms"] == pytest.approx(10.2)
    assert s["rtt_mdev_ms"] == pytest.approx((0.08 / 3) ** 0.5, abs=1e-4)  # iputils: pop. sd
    lost = summarize_probes(5, [], "icmp-raw")
    assert not lost["ok"] and lost["error"] == "icmp-raw: no reply (100% loss)"
    assert summarize_probes(0, [])["error"] == "icmp: no probe was sent"


def test_probes_leave_a_host_at_least_the_minimum_gap_apart_with_no_burst_per_peer():
    agent = agent_module()
    peers = [{"name": f"p{i}", "address": f"198.18.0.{i}"} for i in range(76)]
    plan, gap = agent.probe_plan("aws:us-east-1", peers, 20, 0.2, MIN_GAP_S)
    assert gap == MIN_GAP_S and len(plan) == 20 * 76
    offsets = [t for t, _ in plan]
    assert all(b - a >= MIN_GAP_S - 1e-9 for a, b in itertools.pairwise(offsets))
    for peer in range(76):  # each peer's probes from this host are evenly spaced
        times = [t for t, p in plan if p == peer]
        assert len(times) == 20
        assert min(b - a for a, b in itertools.pairwise(times)) >= 0.2
    # hosts start at different peers, so no peer gets every host's first probe at once
    firsts = {agent.probe_plan(f"h{i}", peers, 1, 0.2, MIN_GAP_S)[0][0][1] for i in range(20)}
    assert len(firsts) > 10
    # few peers: the interval, not the gap, spaces the probes
    assert agent.probe_plan("h", peers[:2], 3, 0.2, MIN_GAP_S)[1] == pytest.approx(0.1)


def test_phase_time_is_starting_the_agents_the_busiest_hosts_probing_and_collecting():
    tests = [(a, b) for a in (A, B, C) for b in (A, B, C) if a != b]
    assert host_seconds(2, 5, 0.2) == pytest.approx(9 * 0.1)
    assert probing_seconds(tests, 5, 0.2) == pytest.approx(0.9 + 1.0)
    # 3 hosts: all started, then all waited for at once (fewer than the forks)
    assert phase_seconds(tests, 5, 0.2) == pytest.approx(LAUNCH_BASE_S + 3 * PER_HOST_S + 1.9)
    # the full catalog: the hosts beyond the forks are collected one by one after
    assert collect_seconds(77) == pytest.approx((77 - PHASE_FORKS) * PER_HOST_S)
    assert collect_seconds(PHASE_FORKS) == 0.0
    # a distant controller: two exchanges to start the last host, one to collect it
    assert launch_seconds(77, 200.0) == pytest.approx(launch_seconds(77) + 0.4)
    assert collect_seconds(77, 200.0) == pytest.approx(collect_seconds(77) + 0.2)
    # the full catalog: 76 peers x 20 pings at the 10 ms floor
    assert host_seconds(76, 20, 0.2) == pytest.approx((20 * 76 - 1) * 0.01)


def doc(host, peers):
    return json.dumps(
        {
            "agent_version": 2,
            "host": host,
            "phase": "ping",
            "started_utc": "t",
            "probe": "icmp-raw",
            "peers": peers,
        }
    )


def test_rows_come_from_each_sources_samples_of_its_destination():
    tests = [(A, B), (A, C), (B, A)]
    texts = {
        A: doc(A, {B: {"sent": 3, "rtt_ms": [80.1, 80.3, 80.2]}, C: {"sent": 3, "rtt_ms": []}}),
        B: None,  # the host said nothing
    }
    rows = {(r["src_region"], r["dst_region"]): r for r in phase_rows(7, tests, texts, CTX)}
    ab = rows[("us-east-1", "europe-west1")]
    assert ab["status"] == "ok" and ab["rtt_p50_ms"] == pytest.approx(80.2) and ab["round"] == 7
    assert "throughput_bps" not in ab  # a latency-only row leaves the throughput cells empty
    ac = rows[("us-east-1", "ap-southeast-2")]
    assert ac["status"] == "failed" and "no reply" in ac["error"]
    ba = rows[("europe-west1", "us-east-1")]
    assert ba["status"] == "failed" and ba["error"] == f"host {B} no result from the host"


def test_parts_list_each_sources_peers_and_addresses():
    class H:
        def __init__(self, address):
            self.address = address

    hosts = {A: H("198.18.0.10"), B: H("198.18.0.11"), C: H("198.18.0.12")}
    parts = phase_parts([(A, B), (A, C), (B, A)], hosts, 20, 0.2)
    assert set(parts) == {"aws_us-east-1", "gcp_europe-west1"}
    assert [p["address"] for p in parts["aws_us-east-1"]["peers"]] == ["198.18.0.11", "198.18.0.12"]
    assert parts["gcp_europe-west1"]["reply_wait_s"] == REPLY_WAIT_S


def test_each_part_is_a_file_of_its_own_and_the_play_carries_no_peers(tmp_path):
    """The play's variables are the same few whatever the catalog: no host's peers in
    them (Ansible would hold and template all of them for every host's task)."""

    class H:
        def __init__(self, address):
            self.address = address

    hosts = {A: H("198.18.0.10"), B: H("198.18.0.11"), C: H("198.18.0.12")}
    tests = [(a, b) for a in (A, B, C) for b in (A, B, C) if a != b]
    parts = phase_parts(tests, hosts, 20, 0.2)
    folder = write_parts(tmp_path / "phase-007", parts)
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{h}.json" for h in parts)
    for host, part in parts.items():
        assert json.loads((folder / f"{host}.json").read_text()) == part
    play = phase_play(7, list(parts), folder, 30.0, controller_rtt_ms=100.0)
    text = json.dumps(play)
    assert not any(h.address in text for h in hosts.values()) and "peers" not in text
    assert set(play["vars"]) == {
        "ir_phase_parts_dir",
        "ir_phase_out_prefix",
        "ir_phase_per_host_s",
        "ir_phase_start_margin_s",
        "ir_round_timeout_s",
    }
    # each host's document has a file of its own: emulated hosts share the agent folder
    assert play["vars"]["ir_phase_out_prefix"] == "phase-007-"
    assert play["vars"]["ir_phase_start_margin_s"] == pytest.approx(START_MARGIN_S + 0.2)


def phase_tasks():
    import yaml

    return yaml.safe_load((paths.PLAYBOOKS / "tasks" / "ping_phase.yml").read_text())


@functools.cache
def plugins():
    """Ansible's plugins (the lookups among them), loaded once as ansible-playbook does."""
    from ansible.plugins.loader import init_plugin_loader

    init_plugin_loader()


def render(task, variables):
    """A task's raw command as Ansible templates it for one host (its task variables
    over the play's and the host's)."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    plugins()

    def trusted(value):
        return trust_as_template(value) if isinstance(value, str) else value

    merged = {k: trusted(v) for k, v in {**variables, **task.get("vars", {})}.items()}
    templar = Templar(loader=DataLoader(), variables=merged)
    return str(templar.template(trust_as_template(task["ansible.builtin.raw"])))


def test_the_start_reads_its_own_part_and_the_collector_waits_on_the_agents_lock(tmp_path):
    """Rendered as Ansible would for the first of 3 hosts and run by a shell: the agent
    starts in the background, told to begin when the other 2 should be started; the
    collector waits on the lock the agent holds, not by polling (no `sleep` at all),
    and prints the agent's document."""
    import time

    parts = {h: {"host": h, "pings": 1, "ping_interval_s": 0.05, "reply_wait_s": 0.2,
                 "peers": []} for h in ("h1", "h2", "h3")}  # fmt: skip
    folder = write_parts(tmp_path / "parts", parts)
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "ir_agent.py").write_text(AGENT.read_text())
    play = phase_play(3, list(parts), folder, 10.0)
    variables = {
        **play["vars"],
        "inventory_hostname": "h1",
        "ansible_play_hosts_all": ["h1", "h2", "h3"],
        "ir_agent_dir": str(agent_dir),
        "ir_python": sys.executable,
    }
    start, collect = phase_tasks()
    command = render(start, variables)
    assert json.dumps(parts["h1"], separators=(",", ":")) in command  # its part alone
    at = float(re.search(r"--start-at (\S+)", command).group(1))
    assert at - time.time() == pytest.approx(2 * PER_HOST_S + START_MARGIN_S, abs=1.0)
    # a `sleep` that says each time it is called: the old collector polled with it
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "sleep").write_text(f'#!/bin/sh\necho x >> {tmp_path}/sleeps\nexec /bin/sleep "$@"\n')
    (shims / "sleep").chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}:{os.environ['PATH']}"}
    assert subprocess.run(["sh", "-c", command], env=env, timeout=30).returncode == 0
    out = subprocess.run(
        ["sh", "-c", render(collect, variables)],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    doc = json.loads(out.stdout)
    assert doc["host"] == "h1" and doc["phase"] == "ping" and "error" not in doc
    assert not (tmp_path / "sleeps").exists()
    assert sorted(p.name for p in agent_dir.iterdir()) == ["ir_agent.py"]  # nothing left
    # an agent that ends without a document: the collector says so at once
    variables["ir_python"] = "false"
    subprocess.run(["sh", "-c", render(start, variables)], env=env, timeout=30, check=True)
    out = subprocess.run(
        ["sh", "-c", render(collect, variables)],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert json.loads(out.stdout)["error"].startswith("the agent wrote no result")


def test_the_tracker_makes_each_hosts_rows_as_its_document_arrives(tmp_path):
    """The phase's end then only merges them: a host's rows exist once its event is read,
    and the round's rows are those phase_rows makes from the raw files."""
    from orchestrator.sweep.events import PlannedRound, RoundTracker

    tests = [(A, B), (A, C), (B, A)]
    texts = {
        A: doc(A, {B: {"sent": 3, "rtt_ms": [80.1, 80.3, 80.2]}, C: {"sent": 3, "rtt_ms": [9.0]}})
    }
    closed = []
    tracker = RoundTracker(tmp_path, [A, B, C], {5: PlannedRound(5, [], 10.0, tests)}, CTX,
                           closed.append)  # fmt: skip
    tracker.on_event({"event": "play", "name": "Round 5"})
    event = {"event": "ok", "host": "aws_us-east-1", "task": "Round: x", "stdout": texts[A]}
    tracker.on_event(event)
    assert [r["dst_region"] for r in tracker.host_rows[A]] == ["europe-west1", "ap-southeast-2"]
    assert B not in tracker.host_rows
    tracker.on_event({"event": "stats"})
    (done,) = closed
    assert done.rows == phase_rows(5, tests, {A: texts[A], B: None}, CTX)[:2] + done.rows[2:]
    assert done.rows[2]["status"] == "failed" and "left the play earlier" in done.rows[2]["error"]
    assert tracker.host_rows == {}


def test_ansible_skips_the_per_host_lookups_the_playbooks_never_use():
    """Facts as plain variables and host_vars/group_vars folders cost the controller
    milliseconds per host and task (the ping phase: 154 tasks at 77 hosts)."""
    out = subprocess.run(
        [str(paths.ROOT / ".venv" / "bin" / "ansible-config"), "dump", "--only-changed"],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "ANSIBLE_CONFIG": str(paths.PLAYBOOKS / "ansible.cfg")},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [line.split(" = ", 1) for line in out.stdout.splitlines() if " = " in line]
    changed = {key.split("(")[0]: value for key, value in lines}
    assert changed["INJECT_FACTS_AS_VARS"] == "False"
    assert "host_group_vars" not in changed["VARIABLE_PLUGINS_ENABLED"]


def test_a_host_whose_agent_wrote_nothing_fails_its_tests_saying_so():
    # what ping_phase.yml prints for a host whose agent wrote no document in time
    silent = json.dumps(
        {"agent_version": 0, "phase": "ping", "error": "the agent wrote no result within 81 s"}
    )
    rows = phase_rows(3, [(A, B), (A, C)], {A: silent}, CTX)
    assert [r["status"] for r in rows] == ["failed", "failed"]
    assert rows[0]["error"] == f"host {A}: the agent wrote no result within 81 s"


def test_the_agent_writes_its_document_whole_to_a_file_and_starts_on_time(tmp_path):
    """`--out`: the document goes to a file, written whole then renamed; `--start-at`
    (over the part's `start_at_epoch_s`): when the host begins probing."""
    import time

    out = tmp_path / "phase-001-h.json"
    start_at = time.time() + 1.5
    part = {
        "host": A,
        "pings": 1,
        "ping_interval_s": 0.05,
        "reply_wait_s": 0.2,
        "start_at_epoch_s": start_at - 100,  # the command line's wins
        "peers": [],
    }
    options = ["--start-at", str(start_at), "--out", str(out)]
    done = subprocess.run(
        [sys.executable, str(AGENT), "--ping-phase", json.dumps(part), *options],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == "", done.stderr
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left
    doc = json.loads(out.read_text())
    started = datetime.strptime(doc["started_utc"], "%Y-%m-%dT%H:%M:%S.%fZ")
    started_s = started.replace(tzinfo=UTC).timestamp()
    assert start_at - 0.002 <= started_s < start_at + 0.5  # utc_now: whole ms
    assert doc["launched_utc"] < doc["started_utc"]


def run_phase(part, netns=None):
    cmd = [sys.executable, str(AGENT), "--ping-phase", json.dumps(part)]
    if netns:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.root  # raw ICMP sockets; timed sends: with the tests run one at a time
@pytest.mark.skipif(os.geteuid() != 0, reason="raw ICMP sockets need root here")
def test_agent_probes_loopback_peers_and_matches_every_reply():
    part = {
        "host": A,
        "pings": 5,
        "ping_interval_s": 0.05,
        "reply_wait_s": 1.0,
        "peers": [{"name": B, "address": "127.0.0.1"}, {"name": C, "address": "127.0.0.2"}],
    }
    started = datetime.now(UTC).timestamp()
    got = run_phase(part)
    assert got["probe"].startswith("icmp-")
    # each sample's probe left at sent_s after t0 (what a stall is found by), in order, on
    # its peer's schedule of one every 0.05 s (a late send does not move the next: each
    # within 25 ms of its slot), the two peers' schedules a gap (0.025 s) apart
    assert started <= got["t0_epoch_s"] <= datetime.now(UTC).timestamp()
    slots = {}
    for name in (B, C):
        peer = got["peers"][name]
        assert peer["sent"] == 5 and len(peer["rtt_ms"]) == 5
        assert all(0 < r < 5 for r in peer["rtt_ms"])
        sent = peer["sent_s"]
        assert len(sent) == 5 and all(a < b for a, b in itertools.pairwise(sent)), sent
        late = [s - k * 0.05 for k, s in enumerate(sent)]  # each send's slot offset
        assert max(late) - min(late) < 0.025, sent
        slots[name] = min(late)
    assert 0.015 < abs(slots[B] - slots[C]) < 0.035 and min(slots.values()) < 0.05, slots


W = "aws:us-west-2"  # about 62 ms from us-east-1: below 100 ms, iputils prints microseconds


@pytest.fixture(scope="module")
def emulated(keys):
    spec = make_spec(new_id(), keys, regions=(A, C, W))
    try:
        hosts = emu.up(spec)
        yield emu.net.host_ns(spec.id, 0), {h.name: h.address for h in hosts}
    finally:
        emu.down(spec.id)


def phase_of(netns, peer, address, pings, interval_s):
    part = {
        "host": A,
        "pings": pings,
        "ping_interval_s": interval_s,
        "reply_wait_s": 2.0,
        "peers": [{"name": peer, "address": address}],
    }
    return run_phase(part, netns)["peers"][peer]


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
def test_on_a_long_emulated_path_samples_keep_sub_ms_resolution(emulated):
    netns, address = emulated  # us-east-1 to ap-southeast-2: about 260 ms in the model
    got = phase_of(netns, C, address[C], 20, 0.2)
    samples = got["rtt_ms"]
    assert got["sent"] == 20 and len(samples) >= 19
    assert min(samples) >= 150
    # iputils prints whole ms from 100 ms up; ours keep the kernel's microseconds
    assert sum(abs(s - round(s)) > 0.01 for s in samples) >= len(samples) // 2, samples


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
def test_the_median_agrees_with_iputils_ping_on_the_same_emulated_pair(emulated):
    netns, address = emulated
    # at the same time, on the same path, 200 probes each: with the emulator's jitter a
    # median of 50 moves by ~0.07 ms, so 0.2 ms between two of them was only ~2 standard
    # errors (a failure in one run of twenty); with 200 it is ~4
    iputils = subprocess.Popen(
        ["ip", "netns", "exec", netns, "ping", "-n", "-c", "200", "-i", "0.02", address[W]],
        stdout=subprocess.PIPE,
        text=True,
    )
    ours = phase_of(netns, W, address[W], 200, 0.02)["rtt_ms"]
    out, _ = iputils.communicate(timeout=60)
    theirs = [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]
    assert len(theirs) >= 195 and len(ours) >= 195
    assert 40 < statistics.median(theirs) < 100  # iputils' microsecond range
    assert abs(statistics.median(ours) - statistics.median(theirs)) <= 0.2, (ours, theirs)


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
def test_forty_hosts_probing_all_their_peers_at_once_lose_nothing(keys):
    # every host reaches all its peers in the same second: without permanent neighbour
    # entries the ARP storm through the hub lost whole pairs (4,984 of 5,852 at 77)
    catalog_keys = [r.key for r in load_catalog().regions][:40]
    spec = make_spec(new_id(), keys, regions=tuple(catalog_keys))
    try:
        hosts = emu.up(spec)
        procs = []
        for i, host in enumerate(hosts):
            part = {
                "host": host.name,
                "pings": 5,
                "ping_interval_s": 0.2,
                "reply_wait_s": 1.5,
                "peers": [{"name": p.name, "address": p.address} for p in hosts if p != host],
            }
            cmd = [sys.executable, str(AGENT), "--ping-phase", json.dumps(part)]
            procs.append(
                subprocess.Popen(
                    ["ip", "netns", "exec", emu.net.host_ns(spec.id, i), *cmd],
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        docs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    finally:
        emu.down(spec.id)
    sent = sum(peer["sent"] for d in docs for peer in d["peers"].values())
    got = sum(len(peer["rtt_ms"]) for d in docs for peer in d["peers"].values())
    assert sent == 40 * 39 * 5
    assert got == sent, f"{sent - got} of {sent} probes lost"
