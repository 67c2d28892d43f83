"""Per-host rate caps: HTB on the hub's ports, built with one `tc -batch`.

Host n's ingress cap is HTB on hub port p<n> (packets leaving the hub towards
the host); its egress cap is HTB on ifb q<n>, to which p<n>'s ingress is
redirected. Both caps sit in the hub, away from the sender's TCP stack, so a
host sees them as a network bottleneck with a drop-tail queue (as a cloud VM
sees its hypervisor's rate limiter), not as a local qdisc that TCP Small Queues
would throttle against.

Controller traffic (ssh, Ansible) has its own class, so a saturated test link
never stalls the connection that controls it.

A machine type with an allowance (a burstable VM) puts a token bucket (tbf: the
baseline rate, a bucket of the burst's bytes) under each test class instead of the
plain queue: the host sends at the cap while the bucket holds tokens and at the
baseline once it is drained, each direction on its own bucket. The tbf's counters
(packets held back for want of tokens, or dropped) are the emulated allowance
counter the test agent reads (`allowance_probes`), as ethtool -S reads ENA's.

Perturbations (emulator.perturb) may lower a host's cap (both ways) or cap what one
host sends to one peer: a class of its own on the sender's egress ifb, matched by
destination, beside (not under) the host's class, so such a cap must be below the
host's to bind.
"""

from __future__ import annotations

from orchestrator.emulator import perturb
from orchestrator.emulator.spec import EmulationSpec

QUEUE_MS = 30.0  # drop-tail queue depth at the link rate (the issue asks for 20-50 ms)
CONTROL_RATE = "1gbit"
_QUANTUM_BYTES = 60000  # keeps HTB's quantum sane at both 50 Mbit/s and 1 Gbit/s


def queue_bytes(rate_mbit: float, queue_ms: float = QUEUE_MS) -> int:
    """Bytes the link drains in `queue_ms`, at least a few full-size packets."""
    return max(int(rate_mbit * 1e6 / 8 * queue_ms / 1000), 4 * 1514)


def burst_bytes(rate_mbit: float) -> int:
    # One 64 KB GSO packet must fit the bucket, or HTB stalls on it.
    return max(int(rate_mbit * 1e6 / 8 / 1000), 65536 + 1514)


# The model's rate is TCP goodput (what iperf3 reports, and what the real-VM
# figures it is scaled from measured); HTB counts whole frames. A full-size
# frame of 1514 bytes (Ethernet 14, IP 20, TCP with timestamps 32) carries 1448.
FRAME_PER_PAYLOAD = 1514 / 1448


def htb_rate_kbit(rate_mbit: float) -> int:
    """The HTB rate that gives `rate_mbit` of TCP goodput with full-size frames."""
    return round(rate_mbit * 1000 * FRAME_PER_PAYLOAD)


GSO_BYTES = 65536 + 1514  # the largest packet the host hands down: a queue must hold two


def allowance_leaf(dev: str, spec: EmulationSpec, rate_mbit: float) -> str:
    """The test class's queue: a token bucket for a host with an allowance, else drop-tail
    (`rate_mbit`: the class's rate, the host's cap)."""
    limit = queue_bytes(rate_mbit)
    if not spec.allowance_baseline_mbit:
        return f"qdisc add dev {dev} parent 1:10 handle 10: bfifo limit {limit}"
    baseline = spec.allowance_baseline_mbit
    bucket = max(spec.allowance_bucket_bytes, GSO_BYTES)
    limit = max(queue_bytes(baseline), 2 * GSO_BYTES)
    return (
        f"qdisc add dev {dev} parent 1:10 handle 10: tbf rate {htb_rate_kbit(baseline)}kbit "
        f"burst {bucket} limit {limit}"
    )


def allowance_probes(spec: EmulationSpec, hub: str) -> dict[str, dict[str, list[str]]]:
    """{host name: {"bw_out" | "bw_in": the command printing its bucket's counters}}; {}
    without an allowance. A host's egress bucket is on ifb q<n>, its ingress on p<n>."""
    if not spec.allowance_baseline_mbit:
        return {}
    show = ["tc", "-n", hub, "-s", "-j", "qdisc", "show", "dev"]
    return {
        h.name: {"bw_out": [*show, f"q{i + 1}"], "bw_in": [*show, f"p{i + 1}"]}
        for i, h in enumerate(spec.hosts)
    }


def _capped(dev: str, spec: EmulationSpec, rate_mbit: float, control_match: str) -> list[str]:
    rate = f"{htb_rate_kbit(rate_mbit)}kbit"
    burst = burst_bytes(rate_mbit)
    return [
        f"qdisc add dev {dev} root handle 1: htb default 10",
        f"class add dev {dev} parent 1: classid 1:10 htb rate {rate} ceil {rate} "
        f"burst {burst} cburst {burst} quantum {_QUANTUM_BYTES}",
        allowance_leaf(dev, spec, rate_mbit),
        f"class add dev {dev} parent 1: classid 1:20 htb rate {CONTROL_RATE} "
        f"quantum {_QUANTUM_BYTES}",
        f"filter add dev {dev} parent 1: protocol ip prio 1 u32 {control_match} flowid 1:20",
    ]


# A host with a per-pair cap but no cap of its own: its class runs at this rate.
UNCAPPED_MBIT = 10_000.0


def _pair_class(dev: str, n: int, dst_address: str, rate_mbit: float) -> list[str]:
    classid = f"1:{0x1000 + n:x}"  # tc reads minor numbers as hex; 1:10 and 1:20 are taken
    rate = f"{htb_rate_kbit(rate_mbit)}kbit"
    burst = burst_bytes(rate_mbit)
    return [
        f"class add dev {dev} parent 1: classid {classid} htb rate {rate} ceil {rate} "
        f"burst {burst} cburst {burst} quantum {_QUANTUM_BYTES}",
        f"qdisc add dev {dev} parent {classid} bfifo limit {queue_bytes(rate_mbit)}",
        f"filter add dev {dev} parent 1: protocol ip prio 2 u32 match ip dst {dst_address}/32 "
        f"flowid {classid}",
    ]


def host_rate_mbit(spec: EmulationSpec, host: str, caps: dict[str, float]) -> float:
    """A host's cap: the spec's, or a perturbation's if lower; 0 = uncapped."""
    rates = [r for r in (spec.rate_mbit, caps.get(host, 0.0)) if r]
    return min(rates) if rates else 0.0


def tc_batch(spec: EmulationSpec) -> str:
    """The whole hub's shaping, or an empty string when the spec has no cap."""
    names = [h.name for h in spec.hosts]
    caps = perturb.host_caps(spec.perturbations)
    pair_caps = {
        d: e.rate_mbit for d, e in perturb.effects(spec.perturbations, names).items() if e.rate_mbit
    }
    ctl = f"{spec.controller_address}/32"
    lines = []
    for i, host in enumerate(spec.hosts):
        own = [(dst, rate) for (src, dst), rate in pair_caps.items() if src == host.name]
        rate = host_rate_mbit(spec, host.name, caps) or (UNCAPPED_MBIT if own else 0.0)
        if not rate:
            continue
        port, ifb = f"p{i + 1}", f"q{i + 1}"
        lines += _capped(port, spec, rate, f"match ip src {ctl}")
        lines += [
            f"qdisc add dev {port} handle ffff: ingress",
            f"filter add dev {port} parent ffff: protocol all prio 1 u32 match u32 0 0 "
            f"action mirred egress redirect dev {ifb}",
        ]
        lines += _capped(ifb, spec, rate, f"match ip dst {ctl}")
        for dst, cap in sorted(own):
            n = names.index(dst)
            lines += _pair_class(ifb, n, spec.hosts[n].address, cap)
    return "\n".join(lines) + "\n" if lines else ""


def tc_clear(spec: EmulationSpec) -> str:
    """`tc -batch` input removing every cap tc_batch may have set (run with -force)."""
    lines = []
    for i in range(len(spec.hosts)):
        lines += [
            f"qdisc del dev p{i + 1} root",
            f"qdisc del dev p{i + 1} ingress",
            f"qdisc del dev q{i + 1} root",
        ]
    return "\n".join(lines) + "\n"
