"""The emulated cloud for real: namespaces, sshd, delayd, HTB; cleanup and reap.

Needs root. Every emulation here has a random id and an owner (this process),
so a crash of the test run leaves nothing `interregion emulator reap` misses.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from emulator_support import REGIONS, make_spec, new_id

from orchestrator import emulator as emu
from orchestrator.core.errors import UserError
from orchestrator.core.geo import distance_km
from orchestrator.drivers.keys import ensure_sweep_keys, write_known_hosts
from orchestrator.emulator import net, state
from orchestrator.emulator.spec import EmulationSpec
from orchestrator.model.catalog import load_catalog
from orchestrator.model.hosts import Host
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.sweep.provision import reap_local_leftovers

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, iptables)"),
]


def leftovers(emulation_id: str) -> dict[str, list]:
    """Everything of an emulation the system still has."""
    marker = f"/run/interregion/{emulation_id}/"
    procs = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if marker in cmdline:
                procs.append(pid)
    return {
        "namespaces": [
            n for n in net.netns_list() if net.emulation_of_namespace(n) == emulation_id
        ],
        "links": [link for link in net.root_links() if link == net.root_link(emulation_id)],
        "processes": procs,
        "state": [str(p) for p in [state.state_dir(emulation_id)] if p.exists()],
    }


def nothing_left(emulation_id: str) -> bool:
    return not any(leftovers(emulation_id).values())


@pytest.fixture(scope="module")
def cloud(keys, tmp_path_factory) -> Iterator[tuple[EmulationSpec, list[Host], Path]]:
    spec = make_spec(new_id(), keys)
    try:
        hosts = emu.up(spec)
        known_hosts = tmp_path_factory.mktemp("ssh") / "known_hosts"
        write_known_hosts(known_hosts, hosts)
        yield spec, hosts, known_hosts
    finally:
        emu.down(spec.id)
    assert nothing_left(spec.id), leftovers(spec.id)


def ssh(
    host: Host, key: Path, known_hosts: Path, command: str, options: list[str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "ssh",
            *(options or []),
            "-i",
            str(key),
            "-o",
            f"UserKnownHostsFile={known_hosts}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-p",
            str(host.ssh_port),
            f"{host.ssh_user}@{host.ssh_host}",
            command,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def ping_median_ms(netns: str, address: str, count: int = 20) -> subprocess.Popen:
    return subprocess.Popen(
        ["ip", "netns", "exec", netns, "ping", "-n", "-c", str(count), "-i", "0.2", address],
        stdout=subprocess.PIPE,
        text=True,
    )


def median_of(proc: subprocess.Popen) -> float:
    out, _ = proc.communicate(timeout=60)
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]
    assert len(rtts) >= 18, out
    return statistics.median(rtts)


def model_rtt_ms(a: str, b: str) -> float:
    catalog = load_catalog()
    ra, rb = catalog.get(a), catalog.get(b)
    return DEFAULT_MODEL.rtt_ms(distance_km(ra.lat, ra.lon, rb.lat, rb.lon), ra.cloud != rb.cloud)


def test_hosts_follow_the_contract(cloud):
    spec, hosts, _ = cloud
    assert [h.name for h in hosts] == list(REGIONS)
    for h in hosts:
        assert h.backend == "local" and h.ssh_user == "root" and h.ssh_port == 22
        assert h.address.startswith(spec.subnet.rsplit(".", 1)[0] + ".")
        assert h.host_key == spec.host_pub


def test_ssh_with_the_sweep_key_and_recorded_host_key(cloud, keys):
    _spec, hosts, known_hosts = cloud
    result = ssh(hosts[2], keys.client_key, known_hosts, "ip -4 -o addr show dev eth0; ip route")
    assert result.returncode == 0, result.stderr
    assert hosts[2].address in result.stdout
    assert "default" not in result.stdout  # hosts reach the hub's /24 and nothing else
    tools = ssh(hosts[0], keys.client_key, known_hosts, "command -v iperf3 ping python3")
    assert tools.returncode == 0 and len(tools.stdout.split()) == 3
    # a fresh home, as on a new VM: nothing of the machine's own ~/.bashrc runs
    home = ssh(hosts[0], keys.client_key, known_hosts, 'echo "$HOME"; ls -A "$HOME"')
    assert home.stdout.split()[0] == str(state.state_dir(_spec.id) / "home")
    assert str(Path.home()) != home.stdout.split()[0]


def test_a_wrong_host_key_or_client_key_is_refused(cloud, keys, tmp_path):
    _spec, hosts, known_hosts = cloud
    other = ensure_sweep_keys(tmp_path / "other")
    wrong_known = tmp_path / "known_hosts"
    write_known_hosts(wrong_known, [Host(**{**hosts[0].to_dict(), "host_key": other.host_pub})])
    refused = ssh(hosts[0], keys.client_key, wrong_known, "true")
    assert refused.returncode == 255 and "host key" in refused.stderr.lower()
    stranger = ssh(hosts[0], other.client_key, known_hosts, "true")
    assert stranger.returncode == 255 and "permission denied" in stranger.stderr.lower()


def test_ping_rtt_between_hosts_matches_the_model(cloud):
    spec, hosts, _ = cloud
    pairs = [(0, 2), (1, 3), (3, 0)]  # Virginia-Ireland both clouds, and cross-cloud
    procs = [ping_median_ms(net.host_ns(spec.id, i), hosts[j].address) for i, j in pairs[:2]]
    medians = [median_of(p) for p in procs]
    medians.append(median_of(ping_median_ms(net.host_ns(spec.id, 3), hosts[0].address)))
    for (i, j), measured in zip(pairs, medians, strict=True):
        expected = model_rtt_ms(hosts[i].name, hosts[j].name)
        assert abs(measured - expected) <= 0.5 + 0.02 * expected, (hosts[i].name, hosts[j].name)


def test_controller_traffic_is_not_delayed(cloud):
    _spec, hosts, _ = cloud
    out = subprocess.run(
        ["ping", "-n", "-c", "10", "-i", "0.05", hosts[2].address], capture_output=True, text=True
    ).stdout
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]
    assert len(rtts) >= 9 and statistics.median(rtts) < 2.0
    assert model_rtt_ms(hosts[0].name, hosts[2].name) > 50  # the hosts themselves are far apart


def within_accuracy(measured_ms: float, expected_ms: float) -> bool:
    """The emulator's RTT accuracy bound (docs/benchmarks.md, bench/emulator.py): 0.5 ms + 2 %."""
    return abs(measured_ms - expected_ms) <= 0.5 + 0.02 * expected_ms


def test_a_controller_location_delays_controller_traffic_by_the_model(keys, tmp_path):
    """Controller in Virginia: pings from this (the root) namespace to each host take
    the model's RTT from there; host<->host RTTs are the model's as before; ssh pays
    the controller's RTT per exchange (a ControlMaster connection about 2 RTT)."""
    regions = ("aws:us-east-1", "aws:ap-southeast-2", "gcp:europe-west1")
    spec = make_spec(new_id(), keys, regions, controller="aws:us-east-1")
    try:
        hosts = emu.up(spec)
        from_controller = [
            subprocess.Popen(
                ["ping", "-n", "-c", "20", "-i", "0.2", h.address],
                stdout=subprocess.PIPE,
                text=True,
            )
            for h in hosts
        ]
        between = ping_median_ms(net.host_ns(spec.id, 0), hosts[1].address)
        for h, proc in zip(hosts, from_controller, strict=True):
            measured, expected = median_of(proc), model_rtt_ms("aws:us-east-1", h.name)
            assert within_accuracy(measured, expected), (h.name, measured, expected)
        measured, expected = median_of(between), model_rtt_ms(hosts[0].name, hosts[1].name)
        assert within_accuracy(measured, expected), (measured, expected)

        known_hosts = tmp_path / "known_hosts"
        write_known_hosts(known_hosts, hosts)
        sydney, rtt_s = hosts[1], model_rtt_ms("aws:us-east-1", hosts[1].name) / 1000
        mux = ["-o", "ControlMaster=auto", "-o", f"ControlPath={tmp_path}/cm", "-o",
               "ControlPersist=30"]  # fmt: skip
        started = time.monotonic()
        assert ssh(sydney, keys.client_key, known_hosts, "true", mux).returncode == 0
        fresh_s = time.monotonic() - started
        started = time.monotonic()
        assert ssh(sydney, keys.client_key, known_hosts, "true", mux).returncode == 0
        reused_s = time.monotonic() - started
        ssh(sydney, keys.client_key, known_hosts, "", [*mux, "-O", "exit"])
        # OpenSSH 9.2 needs ~13 round trips for a new connection (TCP, banners, key
        # exchange, service, 3 for publickey auth, session), 2 over a master's.
        assert fresh_s >= 8 * rtt_s, (fresh_s, rtt_s)
        assert 1.5 * rtt_s <= reused_s < 4 * rtt_s, (reused_s, rtt_s)
    finally:
        emu.down(spec.id)
    assert nothing_left(spec.id), leftovers(spec.id)


def test_tcp_buffers_and_rate_cap_follow_the_model(cloud):
    spec, hosts, _ = cloud
    ns = net.host_ns(spec.id, 1)
    rmem = subprocess.run(
        ["ip", "netns", "exec", ns, "sysctl", "-n", "net.ipv4.tcp_rmem"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert int(rmem[-1]) == DEFAULT_MODEL.tcp_buffer_bytes
    route = subprocess.run(
        ["ip", "-n", ns, "route", "show", spec.subnet], capture_output=True, text=True, check=True
    ).stdout
    assert f"window {round(DEFAULT_MODEL.window_bytes)}" in route
    # The two Virginia hosts: short RTT, so the rate cap (not the window) binds.
    server = subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            net.host_ns(spec.id, 0),
            "iperf3",
            "-s",
            "-1",
            "-B",
            hosts[0].address,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.3)
        out = subprocess.run(
            ["ip", "netns", "exec", ns, "iperf3", "-c", hosts[0].address, "-t", "3", "-J"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    finally:
        server.wait(timeout=10)
    received_bps = json.loads(out)["end"]["sum_received"]["bits_per_second"]
    rtt = model_rtt_ms(hosts[0].name, hosts[1].name)
    expected = DEFAULT_MODEL.expected_throughput_bps(rtt)
    assert received_bps <= 1.1 * DEFAULT_MODEL.rate_bps
    assert received_bps >= 0.6 * expected


def test_another_emulation_cannot_take_a_used_subnet(cloud, keys):
    spec, _, _ = cloud
    clash = EmulationSpec(**{**spec.__dict__, "id": new_id()})
    with pytest.raises(UserError, match=f"used by emulation {spec.id}"):
        emu.up(clash)
    assert nothing_left(clash.id)


def test_status_lists_the_running_emulation(cloud):
    spec, hosts, _ = cloud
    (row,) = [s for s in emu.status() if s.id == spec.id]
    assert row.phase == "up" and row.hosts == len(hosts) and row.sshd_running == len(hosts)
    assert row.delayd_running is True and not row.stale


def test_up_twice_replaces_and_down_leaves_nothing(keys):
    spec = make_spec(new_id(), keys, REGIONS[:3])
    try:
        emu.up(spec)
        first = leftovers(spec.id)
        assert len(first["namespaces"]) == 4 and first["links"] and first["processes"]
        emu.up(spec)  # the same id again: the first one's leftovers are removed first
        assert len(leftovers(spec.id)["namespaces"]) == 4
        assert len(leftovers(spec.id)["processes"]) == len(first["processes"])
    finally:
        removed = emu.down(spec.id)
    assert removed and nothing_left(spec.id), leftovers(spec.id)
    assert emu.down(spec.id) == []  # idempotent


def test_reap_cleans_up_after_an_owner_killed_mid_sweep(cloud, keys, tmp_path):
    emulation_id = new_id()
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import os, time
                from pathlib import Path
                from orchestrator import emulator as emu
                from orchestrator.model.catalog import load_catalog
                from orchestrator.emulator.stack import build_spec
                from orchestrator.drivers.keys import ensure_sweep_keys
                from orchestrator.netmodel.model import DEFAULT_MODEL
                keys = ensure_sweep_keys(Path({str(tmp_path)!r}))
                subnet = emu.reserve_subnet({emulation_id!r}, owner_pid=os.getpid())
                c = load_catalog()
                regions = [c.get("aws:us-east-1"), c.get("gcp:asia-east1")]
                emu.up(build_spec({emulation_id!r}, subnet, regions, keys, DEFAULT_MODEL,
                                  owner_pid=os.getpid()))
                print("ready", flush=True)
                time.sleep(600)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
        assert emulation_id not in " ".join(emu.reap())  # its owner still runs
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        crashed = leftovers(emulation_id)
        assert len(crashed["namespaces"]) == 3 and crashed["processes"] and crashed["state"]
        removed = emu.reap()
        assert any(f"netns {net.hub_ns(emulation_id)}" == r for r in removed)
        assert nothing_left(emulation_id), leftovers(emulation_id)
        # The emulation of this module has a live owner (this process): untouched.
        spec, hosts, _ = cloud
        assert len(leftovers(spec.id)["namespaces"]) == len(hosts) + 1
    finally:
        if owner.poll() is None:
            owner.kill()
        emu.down(emulation_id)


def test_reap_removes_orphaned_namespaces_and_links_without_state():
    emulation_id = new_id()
    subprocess.run(
        ["ip", "-batch", "-"],
        input=(
            f"netns add {net.hub_ns(emulation_id)}\n"
            f"link add {net.root_link(emulation_id)} type veth peer name ctl "
            f"netns {net.hub_ns(emulation_id)}\n"
        ),
        text=True,
        check=True,
    )
    try:
        assert leftovers(emulation_id)["namespaces"] and leftovers(emulation_id)["links"]
        removed = emu.reap()
        assert f"link {net.root_link(emulation_id)}" in removed
        assert nothing_left(emulation_id), leftovers(emulation_id)
    finally:
        emu.down(emulation_id)


def test_a_local_sweep_first_removes_what_a_crashed_run_left():
    emulation_id = new_id()
    subprocess.run(
        ["ip", "netns", "add", net.hub_ns(emulation_id)], check=True, capture_output=True
    )
    said: list[str] = []
    try:
        removed = reap_local_leftovers(said.append)
        assert f"netns {net.hub_ns(emulation_id)}" in removed
        assert said and said[0].startswith("removed what crashed runs left: ")
        assert nothing_left(emulation_id), leftovers(emulation_id)
    finally:
        emu.down(emulation_id)


def test_module_entry_point_reports_bad_specs_in_one_line(tmp_path):
    (tmp_path / "spec.json").write_text('{"id": "x"}')
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator.emulator",
            "up",
            "--spec",
            str(tmp_path / "spec.json"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: emulation spec is malformed")
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_unknown_controller_region_is_one_line_and_makes_nothing():
    emulation_id = new_id()
    result = subprocess.run(
        [sys.executable, "-m", "orchestrator", "emulator", "up", "--id", emulation_id,
         "--regions", "aws:us-east-1,aws:eu-west-1", "--controller", "aws:us-east-9"],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        == "error: --controller: unknown region 'aws:us-east-9' (did you mean aws:us-east-1 or "
        "aws:us-east-2?)"
    )
    assert nothing_left(emulation_id), leftovers(emulation_id)


def test_a_stale_record_never_kills_processes_of_another_emulation(cloud):
    """Namespace inodes are reused by the kernel: a crashed run's record may name
    the inode of a namespace that now belongs to someone else."""
    spec, hosts, _ = cloud
    stale_id = new_id()
    taken = {net.host_ns(stale_id, 0): net.netns_inode(net.host_ns(spec.id, 0))}
    state.write_state(stale_id, {"id": stale_id, "phase": "up", "ns_inodes": taken})
    try:
        emu.down(stale_id)
    finally:
        state.remove_state(stale_id)
    (row,) = [s for s in emu.status() if s.id == spec.id]
    assert row.sshd_running == len(hosts)
