"""`interregion plan` and `regions`: the plan's tables (regions, pairs, rounds, estimate),
the mesh plan's lines and the catalog's table, as rich renderables the CLI prints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from orchestrator.core import counted
from orchestrator.mesh import HOURS_PER_MONTH
from orchestrator.model import is_emulated
from orchestrator.plan import pairs_per_band, slot_seconds

if TYPE_CHECKING:
    from orchestrator.mesh import MeshPlan
    from orchestrator.model import RegionListing
    from orchestrator.plan import Plan

# Beyond these, the table shows the first rows and points at --json.
SHOW_PAIRS = 60
SHOW_ROUNDS = 30


def _table(title: str, *columns: str, right: tuple[str, ...] = ("lat", "lon")) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for name in columns:
        table.add_column(name, justify="right" if name in right else "left")
    return table


def duration(seconds: float) -> str:
    minutes, s = divmod(round(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}h{m:02d}m{s:02d}s" if hours else f"{m}m{s:02d}s"


def size(n: float) -> str:
    for unit, step in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= step:
            return f"{n / step:,.1f} {unit}"
    return f"{n:,.0f} B"


def plan_tables(plan: Plan) -> list[RenderableType]:
    """What `interregion plan` prints, in order: plain strings are highlighted as rich
    does, `Text` lines are not."""
    selection = plan.selection
    out: list[RenderableType] = []
    regions = _table(counted(len(selection.regions), "region"),
                     "region", "city", "country", "lat", "lon")  # fmt: skip
    for r in selection.regions:
        name = r.key + (" (opt-in)" if r.opt_in else "")
        regions.add_row(name, r.city, r.country, f"{r.lat:.2f}", f"{r.lon:.2f}")
    pairs = _table(f"{len(selection.pairs)} directed pairs", "src", "dst", "cloud pair",
                   "distance km", right=("distance km",))  # fmt: skip
    for p in selection.pairs[:SHOW_PAIRS]:
        pairs.add_row(p.src.key, p.dst.key, p.cloud_pair, f"{p.distance_km:,.0f}")
    out += [regions, pairs]
    if len(selection.pairs) > SHOW_PAIRS:
        out.append(f"... and {len(selection.pairs) - SHOW_PAIRS} more pairs (see --json)")
    bands = ", ".join(f"{band} {n}" for band, n in pairs_per_band(selection.pairs).items())
    out.append(Text(f"directed pairs per distance band: {bands}"))
    out.append(_rounds(plan))
    if len(plan.rounds) > SHOW_ROUNDS:
        out.append(f"... and {len(plan.rounds) - SHOW_ROUNDS} more rounds (see --json)")
    out += [Text(line) for line in plan.extra_rounds()]
    out.append(_estimate(plan))
    note = f"list prices as of {plan.pricing_as_of} (infra/pricing.yaml)"
    if is_emulated(plan.backend):
        note = "emulated cloud: costs nothing; the cloud figures show what it would cost; " + note
    return [*out, note]


def _rounds(plan: Plan) -> Table:
    cap = "one slot per round" if plan.sequential else None
    if plan.max_concurrent:
        cap = f"at most {plan.max_concurrent} slots per round"
    title = plan.shape()
    if not plan.params.throughput:
        title += f"; the {counted(len(plan.rounds), 'round')} it would take with throughput"
    rounds = _table(title + (f", {cap}" if cap else ""), "round", "tests",
                    "slots (both directions each)", right=("round", "tests"))  # fmt: skip
    for i, rnd in enumerate(plan.rounds[:SHOW_ROUNDS], 1):
        slots = ", ".join(" <> ".join(slot.regions) for slot in rnd)
        rounds.add_row(str(i), str(sum(len(s.pairs) for s in rnd)), slots)
    if plan.sentinel_round and len(plan.rounds) < SHOW_ROUNDS:
        slots = ", ".join(" <> ".join(slot.regions) for slot in plan.sentinels)
        tests = sum(len(s.pairs) for s in plan.sentinels)
        rounds.add_row(str(len(plan.rounds) + 1), str(tests), f"{slots} (sentinels, again)")
    return rounds


def _estimate(plan: Plan) -> Table:
    e = plan.estimate
    table = _table(f"estimate ({plan.backend} backend)", "what", "value", right=("value",))
    rows = [
        ("slot, both ways, before RTTs", duration(slot_seconds(plan.params))),
        ("measuring, wall time", duration(e.wall_s)),
        ("provision + prepare + teardown", duration(e.setup_s)),
        ("traffic, expected", size(e.bytes)),
        *((f"  {pair}", size(sent)) for pair, sent in e.bytes_by_cloud_pair.items()),
        ("VM-hours on the cloud", f"{e.vm_hours:,.2f}"),
        ("cloud: egress", f"${e.egress_usd:,.2f}"),
        ("cloud: VMs, IPs, disks", f"${e.vm_usd:,.2f}"),
        ("cloud: total", f"${e.cloud_cost_usd:,.2f}"),
        ("cost on this backend", f"${e.cost_usd:,.2f}"),
    ]
    for row in rows:
        table.add_row(*row)
    return table


def mesh_plan_lines(mesh: MeshPlan) -> list[str]:
    """`plan --mesh`: what `mesh up` would keep running, and its cost per month."""
    cost = mesh.cost
    where = " if run on the clouds (this is the emulated cloud: $0)" if mesh.emulated else ""
    return [
        f"mesh: {counted(cost.hosts, 'host')} ({', '.join(mesh.regions)})",
        f"{cost.directed_pairs:,} directed pairs, {mesh.echoes} echoes each every "
        f"{mesh.interval_s} s: {cost.probes_per_host_per_s:g} probes/s per host, "
        f"{cost.egress_bytes_per_host_per_s:,.0f} B/s out per host (requests and replies, "
        f"84-byte packets), {cost.egress_gb_per_host_per_month:,.2f} GB per host per month",
        f"cost per month ({HOURS_PER_MONTH} h) at list prices of {mesh.pricing_as_of}{where}: "
        f"VMs ${cost.vm_usd_per_month:,.2f}, egress ${cost.egress_usd_per_month:,.2f}, "
        f"total ${cost.total_usd_per_month:,.2f}",
    ]


def regions_table(listing: RegionListing) -> Table:
    """`interregion regions`: the catalog's regions of the clouds asked for."""
    table = _table(counted(len(listing.regions), "region"),
                   "region", "city", "country", "lat", "lon", "zone", "opt-in")  # fmt: skip
    for r in listing.regions:
        table.add_row(r.key, r.city, r.country, f"{r.lat:.2f}", f"{r.lon:.2f}", r.zone,
                      "yes" if r.opt_in else "")  # fmt: skip
    return table
