"""What a TCP study runs, in time, bytes and money: the sweep plan's estimate, redone
for the study's own measure stage (orchestrator.study.run). Pure; nothing is measured.

A study pings its forward tests once (the ping phase: the idle RTT), then plays every
round of the sweep's schedule once per test of a pair's order (variants x repeats), the
forward test only, iperf3 alone: a round lasts its slowest slot (plan.slot_seconds with
one direction) plus the controller's overhead (plan.round_overhead_s), as a sweep's
does. With a tuned variant a restore play over every host follows (one playbook start,
pingphase.launch_seconds). There are no sentinels.

Bytes per forward test, from the same network model as the plan (plan.pair_rate_bps),
for omit + duration seconds: `default`, `cubic`, `bbr` carry one default stream; `pN`
min(cap, N x one default stream); `tuned` the line rate its buffers are sized for
(study.line_rate_bps: the emulated type's cap; on a cloud a small VM's 968 Mbit/s),
at least one default stream and at most the sender's cap (plan.pair_cap_bps). Egress
is priced at list prices on the cloud figures, also for a local study, as the plan
does; the VMs' time on the study's measuring time plus setup.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.model import Catalog, backend_info, is_emulated
from orchestrator.plan import (
    Estimate,
    Pair,
    Plan,
    Pricing,
    emulated_bandwidth,
    launch_seconds,
    line_rate_bps,
    load_pricing,
    mean_egress_bps,
    pair_cap_bps,
    pair_rate_bps,
    pair_rtt_ms,
    phase_seconds,
    round_overhead_s,
    shortfalls,
    slot_seconds,
    vm_cost,
)
from orchestrator.results import PING_PACKET_BYTES
from orchestrator.study.variants import Variant, forward_rounds


@dataclass(frozen=True)
class StudyEstimate:
    """The study's shape beside its Estimate (which replaces the sweep plan's)."""

    variants: tuple[str, ...]
    repeats: int
    rounds: int  # after the ping phase: the schedule's rounds x variants x repeats
    tests: int  # forward tests: pairs x variants x repeats
    bytes_by_variant: dict[str, float]  # sent on this backend
    egress_usd_by_variant: dict[str, float]  # at list prices, on the cloud figures
    bytes_by_host: dict[str, float]  # what each host sends (pings and its forward tests)
    estimate: Estimate

    def shape(self) -> str:
        return (
            f"a ping phase, then {self.rounds} rounds ({len(self.variants)} variants x "
            f"{self.repeats} repeats per schedule round)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "variants": list(self.variants),
            "repeats": self.repeats,
            "rounds": self.rounds,
            "tests": self.tests,
            "bytes_by_variant": {k: round(v) for k, v in self.bytes_by_variant.items()},
            "egress_usd_by_variant": {
                k: round(v, 4) for k, v in self.egress_usd_by_variant.items()
            },
        }


def variant_rate_bps(
    pair: Pair, variant: Variant, pricing: Pricing, emulated: bool, line_rate_bps: float
) -> float:
    """What one forward test of `variant` is expected to carry: default streams (-P N:
    min(cap, N x one stream)), or tuned the line rate its buffers are sized for (never
    below the default stream, never above the sender's cap)."""
    default_bps = pair_rate_bps(pair, variant.streams, pricing, emulated)
    if not variant.tuned:
        return default_bps
    return min(pair_cap_bps(pair, pricing, emulated), max(default_bps, line_rate_bps))


def study_estimate(
    plan: Plan,
    variants: Sequence[Variant],
    repeats: int,
    pricing: Pricing | None = None,
) -> StudyEstimate:
    """The study's time, bytes and cost for `plan` (a sweep plan of its selection)."""
    pricing = pricing or load_pricing()
    params = plan.params
    by_round = forward_rounds(plan.rounds)
    tests = [p for r in by_round for p in r]
    per_pair = len(variants) * repeats
    rtt = plan.controller_rtt_ms
    wall_s = phase_seconds([p.key for p in tests], params.pings, params.ping_interval_s, rtt)
    for pairs in by_round:
        slowest = max(slot_seconds(params, 1, pair_rtt_ms(p), pings=False) for p in pairs)
        wall_s += per_pair * (slowest + round_overhead_s(2 * len(pairs), rtt))
    if any(v.tuned for v in variants):
        wall_s += launch_seconds(len(plan.selection.regions), rtt)

    local = is_emulated(plan.backend)
    # the line rate the tuned buffers are sized for (study.line_rate_bps): the emulated
    # type's cap here, a small cloud VM's NIC for the cloud figures the egress is priced on
    local_rate = line_rate_bps(True, plan.emulated_type or None)
    cloud_rate = line_rate_bps(False)
    seconds = params.omit_s + params.duration_s
    sent_by_variant = {v.name: 0.0 for v in variants}
    usd_by_variant = {v.name: 0.0 for v in variants}
    by_cloud_pair: dict[str, float] = {}
    by_host = {r.key: 0.0 for r in plan.selection.regions}
    egress_usd = 0.0
    for pair in tests:
        usd_per_gb = pricing.egress_usd_per_gb(pair.src, pair.dst)
        ping_bytes = float(params.pings * PING_PACKET_BYTES)
        egress_usd += ping_bytes / 1e9 * usd_per_gb
        sent = ping_bytes
        for v in variants:
            cloud = repeats * variant_rate_bps(pair, v, pricing, False, cloud_rate) * seconds / 8
            here = cloud
            if local:
                here = repeats * variant_rate_bps(pair, v, pricing, True, local_rate) * seconds / 8
            sent_by_variant[v.name] += here
            usd_by_variant[v.name] += cloud / 1e9 * usd_per_gb
            egress_usd += cloud / 1e9 * usd_per_gb
            sent += here
        by_cloud_pair[pair.cloud_pair] = by_cloud_pair.get(pair.cloud_pair, 0.0) + sent
        by_host[pair.src.key] += sent
    vm_hours, vm_usd = vm_cost(plan.selection.regions, wall_s, plan.backend, pricing)
    cloud_cost = egress_usd + vm_usd
    estimate = Estimate(
        wall_s=wall_s,
        setup_s=backend_info(plan.backend).setup_s,
        bytes=sum(by_host.values()),
        vm_hours=vm_hours,
        egress_usd=egress_usd,
        vm_usd=vm_usd,
        cloud_cost_usd=cloud_cost,
        cost_usd=0.0 if local else cloud_cost,
        bytes_by_cloud_pair=dict(sorted(by_cloud_pair.items())),
    )
    return StudyEstimate(
        variants=tuple(v.name for v in variants),
        repeats=repeats,
        rounds=per_pair * len(by_round),
        tests=per_pair * len(tests),
        bytes_by_variant=sent_by_variant,
        egress_usd_by_variant=usd_by_variant,
        bytes_by_host=by_host,
        estimate=estimate,
    )


def study_plan(
    plan: Plan,
    catalog: Catalog,
    variants: Sequence[Variant],
    repeats: int,
    pricing: Pricing | None = None,
) -> tuple[Plan, StudyEstimate]:
    """`plan` with the study's estimate (what sweep.json's plan records and the budget
    question reads) and the hosts its traffic would keep above their allowance."""
    found = study_estimate(plan, variants, repeats, pricing)
    bandwidth = emulated_bandwidth() if is_emulated(plan.backend) else catalog.bandwidth
    egress = mean_egress_bps(found.bytes_by_host, found.estimate.wall_s)
    over = shortfalls(egress, plan.host_types or {}, bandwidth)
    return dataclasses.replace(plan, estimate=found.estimate, shortfalls=tuple(over)), found
