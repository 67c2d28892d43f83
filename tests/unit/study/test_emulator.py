"""The emulated cloud models default and tuned buffers honestly (issue 13 part 2), on
real namespaces: the agent's tune raises tcp_rmem/tcp_wmem in the host's namespace
and lifts its route's window clamp to the tuned buffer scaled as the default is, so
the gain comes from TCP itself; restore puts every setting back; the machine's own
net.core.rmem_max is never touched."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import emulator as emu
from orchestrator.advise.tcp_model import loss_limited_bps, loss_rate
from orchestrator.core import paths
from orchestrator.drivers.keys import ensure_sweep_keys
from orchestrator.emulator import net
from orchestrator.emulator.perturb import Perturbation
from orchestrator.emulator.spec import EmulationSpec
from orchestrator.emulator.stack import build_spec, expected_rtts_ms
from orchestrator.emulator.variation import DEFAULT_VARIATION
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.netmodel.routes import default_routes
from orchestrator.plan.tuning import (
    emulated_window_bytes,
    line_rate_bps,
    tune_spec,
    tuned_buffer_bytes,
)
from orchestrator.results.limiter import loss_band

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, iptables)"),
]

REGIONS = ("aws:us-east-1", "aws:eu-west-1")  # ~85 ms: the default window binds
SEED = 5


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[EmulationSpec]:
    keys = ensure_sweep_keys(tmp_path_factory.mktemp("keys"))
    catalog = load_catalog()
    emulation_id = "s" + secrets.token_hex(3)
    subnet = emu.reserve_subnet(emulation_id, owner_pid=os.getpid())
    spec = build_spec(
        emulation_id, subnet, [catalog.get(k) for k in REGIONS], keys, DEFAULT_MODEL,
        owner_pid=os.getpid(), routes=default_routes(), seed=SEED, variation=DEFAULT_VARIATION,
    )  # fmt: skip
    try:
        emu.up(spec)
        yield spec
    finally:
        emu.down(spec.id)
    assert not [n for n in net.netns_list() if net.emulation_of_namespace(n) == spec.id]


@pytest.fixture
def agent(tmp_path) -> Path:
    """A copy of the agent in its own folder (it saves the originals beside itself)."""
    dest = tmp_path / "ir_agent.py"
    dest.write_text((paths.PLAYBOOKS / "files" / "ir_agent.py").read_text())
    return dest


def in_ns(spec: EmulationSpec, i: int, *args: str) -> str:
    return subprocess.run(
        ["ip", "netns", "exec", net.host_ns(spec.id, i), *args],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip


def settings(spec: EmulationSpec, i: int) -> tuple[str, str, str]:
    rmem = in_ns(spec, i, "cat", "/proc/sys/net/ipv4/tcp_rmem")
    wmem = in_ns(spec, i, "cat", "/proc/sys/net/ipv4/tcp_wmem")
    return " ".join(rmem.split()), " ".join(wmem.split()), in_ns(spec, i, "ip", "-o", "route")


def iperf_bps(spec: EmulationSpec, client: int, server: int) -> float:
    return float(iperf_doc(spec, client, server)["end"]["sum_received"]["bits_per_second"])


def iperf_doc(spec: EmulationSpec, client: int, server: int, seconds: int = 4) -> dict:
    """One iperf3 test with the emulated hosts' congestion control (a cloud image's)."""
    address = spec.hosts[server].address
    srv = subprocess.Popen(
        ["ip", "netns", "exec", net.host_ns(spec.id, server), "iperf3", "-s", "-1", "-B", address],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(50):  # until the server listens
            out = subprocess.run(
                ["ip", "netns", "exec", net.host_ns(spec.id, client), "iperf3", "-c", address,
                 "-t", str(seconds), "-O", "1", "-J", "-C", net.HOST_CONGESTION_CONTROL],
                capture_output=True, text=True, timeout=60,
            ).stdout  # fmt: skip
            doc = json.loads(out)
            if "error" not in doc:
                return doc
        raise AssertionError(out)
    finally:
        srv.kill()
        srv.wait(timeout=10)


def test_tuned_hosts_lift_their_clamp_and_tcp_fills_the_path(cloud, agent):
    spec = cloud
    rtt = expected_rtts_ms(spec)[REGIONS]
    rate = line_rate_bps(True)
    machine_rmem_max = Path("/proc/sys/net/core/rmem_max").read_text()
    before = [settings(spec, i) for i in (0, 1)]
    assert f"window {spec.tcp_window_bytes}" in before[0][2]

    default_bps = iperf_bps(spec, 0, 1)
    window_limit = spec.tcp_window_bytes * 8 / (rtt / 1000)
    assert default_bps < 0.5 * rate  # the default window binds at this RTT
    assert abs(default_bps - window_limit) <= 0.2 * window_limit, (default_bps, window_limit)

    buffer = tuned_buffer_bytes(rate, rtt)
    for i in (0, 1):
        alias = f"h{i}"
        got = json.loads(
            in_ns(
                spec,
                i,
                "python3",
                str(agent),
                "--tune",
                json.dumps(tune_spec(alias, buffer, "local")),
            )
        )
        assert got["net.ipv4.tcp_rmem"].split()[-1] == str(buffer)
        assert got["net.ipv4.tcp_wmem"].split()[-1] == str(buffer)
        assert f"window {emulated_window_bytes(buffer)}" in got["routes"][0]
    tuned_bps = iperf_bps(spec, 0, 1)
    assert tuned_bps >= 0.8 * rate, (tuned_bps, rate)  # TCP itself now fills the cap
    assert tuned_bps > 2 * default_bps

    for i in (0, 1):
        done = json.loads(in_ns(spec, i, "python3", str(agent), "--restore", f"h{i}"))
        assert done["restored"] is True
        again = json.loads(in_ns(spec, i, "python3", str(agent), "--restore", f"h{i}"))
        assert again["restored"] is False  # nothing left to restore: a no-op
    assert [settings(spec, i) for i in (0, 1)] == before
    assert Path("/proc/sys/net/core/rmem_max").read_text() == machine_rmem_max
    assert not list(agent.parent.glob("tuned-*.json"))


def test_a_second_tune_keeps_the_true_originals(cloud, agent):
    spec = cloud
    before = settings(spec, 0)
    for buffer in (500_000, 900_000):
        in_ns(
            spec, 0, "python3", str(agent), "--tune", json.dumps(tune_spec("h0", buffer, "local"))
        )
    assert "900000" in settings(spec, 0)[0]
    in_ns(spec, 0, "python3", str(agent), "--restore", "h0")
    assert settings(spec, 0) == before


def test_loss_is_per_wire_packet_so_mathis_explains_a_lossy_stream(tmp_path):
    """A host sending on a lossy path has TSO/GSO off: delayd drops segments, not 64 kB
    bursts, and one stream's throughput follows Mathis at its own retransmission rate."""
    keys = ensure_sweep_keys(tmp_path / "keys")
    catalog = load_catalog()
    emulation_id = "l" + secrets.token_hex(3)
    subnet = emu.reserve_subnet(emulation_id, owner_pid=os.getpid())
    spec = build_spec(
        emulation_id, subnet, [catalog.get(k) for k in REGIONS], keys, DEFAULT_MODEL,
        owner_pid=os.getpid(), routes=default_routes(), seed=SEED, variation=DEFAULT_VARIATION,
        perturbations=(Perturbation(f"{REGIONS[0]}>{REGIONS[1]}", loss_pct=1.0),),
    )  # fmt: skip
    try:
        emu.up(spec)
        offload = in_ns(spec, 0, "ethtool", "-k", "eth0")
        assert "tcp-segmentation-offload: off" in offload
        assert "generic-segmentation-offload: off" in offload
        assert "generic-segmentation-offload: on" in in_ns(spec, 1, "ethtool", "-k", "eth0")
        doc = iperf_doc(spec, 0, 1, seconds=8)
        sent = doc["end"]["sum_sent"]
        p = loss_rate(int(sent["retransmits"]), int(doc["end"]["sum_received"]["bytes"]))
        assert p is not None and 0.005 <= p <= 0.02, p
        rtt = expected_rtts_ms(spec)[REGIONS]
        ceiling = loss_limited_bps(rtt, p)
        measured = float(doc["end"]["sum_received"]["bits_per_second"])
        low, high = loss_band(int(sent["retransmits"]))  # 30 % and the counting error of p
        assert low <= measured / ceiling <= high, (measured, ceiling, p, low, high)
        # lifting the loss gives the host its offload back
        emu.set_perturbations(spec.id, [])
        assert "generic-segmentation-offload: on" in in_ns(spec, 0, "ethtool", "-k", "eth0")
    finally:
        emu.down(spec.id)
