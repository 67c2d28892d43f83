"""Perturbations and variation on the real emulator (namespaces, delayd, HTB): a delay
set moves the measured RTT by that much, loss drops that share, a rate cap caps, and
`set_perturbations` changes a running emulation between two measurements."""

from __future__ import annotations

import json
import os
import re
import secrets
import statistics
import subprocess
from collections.abc import Iterator

import pytest

from orchestrator import emulator as emu
from orchestrator.core.errors import UserError
from orchestrator.drivers.keys import SweepKeys, ensure_sweep_keys
from orchestrator.emulator import net
from orchestrator.emulator.perturb import Perturbation
from orchestrator.emulator.spec import EmulationSpec
from orchestrator.emulator.stack import build_spec, expected_rtts_ms
from orchestrator.emulator.variation import DEFAULT_VARIATION
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.netmodel.routes import default_routes

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces, iptables)"),
]

# Virginia x2 (short RTT: the rate cap binds, not the window), Ireland, Belgium
REGIONS = ("aws:us-east-1", "gcp:us-east4", "aws:eu-west-1", "gcp:europe-west1")
SEED = 5  # draws no loss episode on these pairs (checked below)


def make_spec(keys: SweepKeys, perturbations=()) -> EmulationSpec:
    catalog = load_catalog()
    emulation_id = "p" + secrets.token_hex(3)
    subnet = emu.reserve_subnet(emulation_id, owner_pid=os.getpid())
    return build_spec(
        emulation_id, subnet, [catalog.get(k) for k in REGIONS], keys, DEFAULT_MODEL,
        owner_pid=os.getpid(), routes=default_routes(), seed=SEED, variation=DEFAULT_VARIATION,
        perturbations=perturbations,
    )  # fmt: skip


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> SweepKeys:
    return ensure_sweep_keys(tmp_path_factory.mktemp("keys"))


@pytest.fixture
def cloud(keys) -> Iterator[EmulationSpec]:
    spec = make_spec(keys)
    assert all(p.loss_ppm == 0 for p in spec.paths)
    try:
        emu.up(spec)
        yield spec
    finally:
        emu.down(spec.id)
    assert not [n for n in net.netns_list() if net.emulation_of_namespace(n) == spec.id]


def ping(spec: EmulationSpec, src: int, dst: int, count: int = 20, interval: str = "0.2") -> str:
    return subprocess.run(
        ["ip", "netns", "exec", net.host_ns(spec.id, src), "ping", "-n", "-c", str(count),
         "-i", interval, "-W", "2", spec.hosts[dst].address],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip


def median_rtt_ms(out: str) -> float:
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]
    assert len(rtts) >= 15, out
    return statistics.median(rtts)


def received(out: str) -> int:
    return int(re.search(r"(\d+) received", out).group(1))  # type: ignore[union-attr]


def within_accuracy(measured_ms: float, expected_ms: float) -> bool:
    """The emulator's RTT accuracy bound (docs/benchmarks.md, bench/emulator.py): 0.5 ms + 2 %."""
    return abs(measured_ms - expected_ms) <= 0.5 + 0.02 * expected_ms


def iperf_bps(spec: EmulationSpec, client: int, server: int) -> float:
    address = spec.hosts[server].address
    srv = subprocess.Popen(
        ["ip", "netns", "exec", net.host_ns(spec.id, server), "iperf3", "-s", "-1", "-B", address],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        for _ in range(50):  # until the server listens
            out = subprocess.run(
                ["ip", "netns", "exec", net.host_ns(spec.id, client), "iperf3", "-c", address,
                 "-t", "3", "-J"],
                capture_output=True, text=True, timeout=30,
            ).stdout  # fmt: skip
            doc = json.loads(out)
            if "error" not in doc:
                return float(doc["end"]["sum_received"]["bits_per_second"])
        raise AssertionError(out)
    finally:
        srv.kill()
        srv.wait(timeout=10)


def test_a_live_perturbation_moves_the_rtt_by_the_delay_set_and_back(cloud):
    spec = cloud
    expected = expected_rtts_ms(spec)
    virginia_ireland = median_rtt_ms(ping(spec, 0, 2))
    virginia_belgium = median_rtt_ms(ping(spec, 0, 3))
    # the base network: measured routes with the seed's variation, as the spec says
    assert within_accuracy(virginia_ireland, expected[(REGIONS[0], REGIONS[2])])
    assert within_accuracy(virginia_belgium, expected[(REGIONS[0], REGIONS[3])])

    one_way = Perturbation(f"{REGIONS[0]}>{REGIONS[2]}", delay_ms=12.5)
    both_ways = Perturbation(f"{REGIONS[0]}/{REGIONS[3]}", delay_ms=7.0)
    changed = emu.set_perturbations(spec.id, [one_way, both_ways])
    assert emu.running_spec(spec.id).perturbations == (one_way, both_ways)
    now_ireland = median_rtt_ms(ping(spec, 0, 2))
    now_belgium = median_rtt_ms(ping(spec, 3, 0))  # the other side sees it too
    assert abs(now_ireland - virginia_ireland - 12.5) <= 1.0, (virginia_ireland, now_ireland)
    assert abs(now_belgium - virginia_belgium - 14.0) <= 1.0, (virginia_belgium, now_belgium)
    assert within_accuracy(now_ireland, expected_rtts_ms(changed)[(REGIONS[0], REGIONS[2])])
    # an unperturbed pair did not move
    assert within_accuracy(median_rtt_ms(ping(spec, 2, 3)), expected[(REGIONS[2], REGIONS[3])])

    emu.set_perturbations(spec.id, [])
    assert within_accuracy(median_rtt_ms(ping(spec, 0, 2)), expected[(REGIONS[0], REGIONS[2])])


def test_loss_and_rate_caps_set_at_up(keys):
    spec = make_spec(
        keys,
        [
            Perturbation(f"{REGIONS[0]}>{REGIONS[2]}", loss_pct=30.0),
            Perturbation(REGIONS[1], rate_mbit=10.0),
            Perturbation(f"{REGIONS[0]}>{REGIONS[1]}", rate_mbit=4.0),
        ],
    )
    try:
        emu.up(spec)
        lossy = ping(spec, 0, 2, count=200, interval="0.01")
        clean = ping(spec, 0, 3, count=200, interval="0.01")
        # one way at 30 %: the echo requests; binomial(200, 0.7) is within 100-180 by far
        assert 100 <= received(lossy) <= 180, lossy
        assert received(clean) == 200, clean
        # gcp:us-east4 capped at 10 Mbit/s as a whole (the model's cap is 50)
        assert 7e6 <= iperf_bps(spec, 1, 0) <= 10.5e6
        # what aws:us-east-1 sends to gcp:us-east4 capped at 4 Mbit/s
        assert 2.5e6 <= iperf_bps(spec, 0, 1) <= 4.3e6
    finally:
        emu.down(spec.id)


def test_perturbing_an_emulation_that_is_not_up_is_one_line(keys):
    with pytest.raises(UserError, match="is not up"):
        emu.set_perturbations("nosuch", [Perturbation("aws:us-east-1", delay_ms=1.0)])


def test_perturbing_a_host_the_emulation_lacks_changes_nothing(cloud):
    with pytest.raises(UserError, match="aws:eu-west-9 is not a host"):
        emu.set_perturbations(cloud.id, [Perturbation("aws:eu-west-9", delay_ms=1.0)])
    assert emu.running_spec(cloud.id).perturbations == ()
