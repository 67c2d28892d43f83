"""What a mesh costs before it starts (`plan --mesh`): hosts, probe traffic, money.

Every host sends `echoes` echo requests to each of its N - 1 peers every interval and
answers as many from them, each an 84-byte IP packet (orchestrator.results.schema): its
egress is 2 x (N - 1) x echoes x 84 bytes per interval, to each peer in equal parts.
A month is 730 hours. The VMs are the pricing file's machine type per cloud (the
smallest the catalog uses: instance, public IPv4 and disk), egress at its list price per
pair (orchestrator.plan.pricing), before free tiers and discounts.

`plan_mesh` is `plan --mesh`'s use case: the dry run of a sweep of the same selection
(orchestrator.sweep.dry_run), then the mesh of its regions priced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.mesh.defaults import DEFAULT_ECHOES, DEFAULT_INTERVAL_S
from orchestrator.model import Region, is_emulated
from orchestrator.plan import Plan, Pricing, load_pricing
from orchestrator.results import PING_PACKET_BYTES
from orchestrator.sweep import SweepRequest, dry_run

HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class MeshCost:
    hosts: int
    directed_pairs: int
    probes_per_host_per_s: float
    egress_bytes_per_host_per_s: float
    egress_gb_per_host_per_month: float  # 10^9 bytes
    vm_usd_per_month: float
    egress_usd_per_month: float

    @property
    def total_usd_per_month(self) -> float:
        return self.vm_usd_per_month + self.egress_usd_per_month


def mesh_cost(
    regions: Sequence[Region], pricing: Pricing, interval_s: float, echoes: int
) -> MeshCost:
    n = len(regions)
    per_peer_bytes_s = 2 * echoes * PING_PACKET_BYTES / interval_s  # requests and replies
    month_s = HOURS_PER_MONTH * 3600
    egress_usd = sum(
        per_peer_bytes_s * month_s / 1e9 * pricing.egress_usd_per_gb(src, dst)
        for src in regions for dst in regions if src.key != dst.key
    )  # fmt: skip
    vm_usd = sum(pricing.clouds[r.cloud].vm_usd_per_hour for r in regions) * HOURS_PER_MONTH
    per_host_s = per_peer_bytes_s * max(n - 1, 0)
    return MeshCost(
        hosts=n,
        directed_pairs=n * (n - 1),
        probes_per_host_per_s=round(echoes * max(n - 1, 0) / interval_s, 3),
        egress_bytes_per_host_per_s=round(per_host_s, 1),
        egress_gb_per_host_per_month=round(per_host_s * month_s / 1e9, 3),
        vm_usd_per_month=round(vm_usd, 2),
        egress_usd_per_month=round(egress_usd, 2),
    )


@dataclass(frozen=True)
class MeshPlan:
    """`plan --mesh`: what `mesh up` with these options would keep running, and its cost."""

    cost: MeshCost
    regions: tuple[str, ...]
    interval_s: int
    echoes: int
    backend: str
    emulated: bool
    pricing_as_of: str

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self.cost), "total_usd_per_month": round(self.cost.total_usd_per_month, 2),
                "interval_s": self.interval_s, "echoes": self.echoes, "backend": self.backend,
                "emulated": self.emulated, "pricing_as_of": self.pricing_as_of}  # fmt: skip


def mesh_plan(plan: Plan, pricing_path: Any, interval_s: int, echoes: int) -> MeshPlan:
    """The mesh of `plan`'s regions (a dry run's plan), priced from `pricing_path`."""
    pricing = load_pricing(pricing_path)
    regions = plan.selection.regions
    return MeshPlan(mesh_cost(regions, pricing, interval_s, echoes), tuple(r.key for r in regions),
                    interval_s, echoes, plan.backend, is_emulated(plan.backend),
                    pricing.as_of)  # fmt: skip


def plan_mesh(
    request: SweepRequest,
    *,
    catalog_path: Path,
    pricing_path: Path,
    interval_s: int = DEFAULT_INTERVAL_S,
    echoes: int = DEFAULT_ECHOES,
    round_overhead: float | None = None,
    strict: bool = False,
    note: Callable[[str], None],
    warn: Callable[[str], None],
) -> MeshPlan:
    """`interregion plan --mesh`: the regions a sweep of `request` would select (its dry
    run, with the same checks, notes and warnings), as a mesh probed every `interval_s`
    with `echoes` echoes, priced per month."""
    plan = dry_run(request, catalog_path=catalog_path, pricing_path=pricing_path,
                   round_overhead=round_overhead, strict=strict, note=note, warn=warn)  # fmt: skip
    return mesh_plan(plan, pricing_path, interval_s, echoes)
