"""CLI commands: plan (a dry run) and regions (the catalog)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table

from orchestrator.cli.jsonout import emit, json_option
from orchestrator.cli.options import (
    FINITE,
    params_from,
    run_options,
    selection_from,
    selection_options,
    test_params_options,
)
from orchestrator.cli.pathopt import UserPath
from orchestrator.core import log, paths
from orchestrator.mesh.cost import DEFAULT_ECHOES, DEFAULT_INTERVAL_S
from orchestrator.model import backends
from orchestrator.model.catalog import CLOUDS, load_catalog, region_to_dict
from orchestrator.plan.options import RunOptions, parse_clouds
from orchestrator.plan.pricing import load_pricing
from orchestrator.plan.selection import pairs_per_band
from orchestrator.plan.sweep_plan import Plan, slot_seconds
from orchestrator.sweep import launch
from orchestrator.sweep.launch import SweepRequest

# Beyond these, the table shows the first rows and points at --json.
SHOW_PAIRS = 60
SHOW_ROUNDS = 30

_catalog_option = click.option(
    "--catalog",
    type=UserPath(dir_okay=False),
    default=paths.CATALOG,
    show_default="regions.yaml",
    help="Region catalog file.",
)


@click.command()
@selection_options
@test_params_options
@run_options
@click.option(
    "--round-overhead",
    type=FINITE,
    default=None,
    help="Seconds each round adds beyond its slowest test "
    "[default: the controller's model, by the round's hosts].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse a plan whose hosts send more on average than their machine type's "
    "baseline bandwidth (default: warn).",
)
@_catalog_option
@click.option(
    "--pricing",
    "pricing_path",
    type=UserPath(dir_okay=False),
    default=paths.PRICING,
    show_default="infra/pricing.yaml",
    help="Price list for the estimate.",
)
@click.option(
    "--mesh",
    is_flag=True,
    help="Plan a continuous mesh (interregion mesh up) instead: hosts, probe traffic and "
    "cost per month.",
)
@click.option(
    "--mesh-interval",
    type=click.IntRange(1, 3600),
    default=DEFAULT_INTERVAL_S,
    show_default=True,
    help="With --mesh: seconds between two probes of the same peer.",
)
@click.option(
    "--mesh-echoes",
    type=click.IntRange(1, 100),
    default=DEFAULT_ECHOES,
    show_default=True,
    help="With --mesh: echoes to each peer per interval.",
)
def plan(
    mesh: bool,
    mesh_interval: int,
    mesh_echoes: int,
    max_concurrent: int | None,
    sequential: bool,
    backend: str,
    round_overhead: float | None,
    as_json: bool,
    strict: bool,
    catalog: Path,
    pricing_path: Path,
    **options: Any,
) -> None:
    """Show what a sweep would test, in which rounds, how long and at what cost.

    A dry run: nothing is created. Distances are geodesic (WGS-84). Bytes and
    egress cost are expected figures from the network model: each test at the
    smaller of the VM's published egress cap and what a real TCP window carries
    over the pair's modelled RTT (on local: the emulator's own cap and window).
    On local, --max-concurrent defaults to what the emulator runs faithfully.
    Each host's mean egress over the sweep is checked against its machine type's
    baseline bandwidth (regions.yaml machine_types): a warning names the hosts above
    it and a type that covers them; --strict refuses such a plan.

    \b
    Example:
      interregion plan --max-regions 8
      interregion plan --regions aws:us-east-1,aws:us-east-2,gcp:us-east4 --strict
      interregion plan --cloud-pair aws:gcp --min-km 1000 --max-km 5000 --json
      interregion plan --pairs aws:us-east-1/gcp:us-east4 --pings 50 --duration 10
      interregion plan --mesh --max-regions 8
    """
    request = SweepRequest(
        selection=selection_from(options),
        params=params_from(options),
        run=RunOptions(backend=backend, max_concurrent=max_concurrent, sequential=sequential,
                       emulated_type=options["emulated_type"], controller=options["controller"]),
    )  # fmt: skip
    result = launch.dry_run(
        request,
        catalog_path=catalog,
        pricing_path=pricing_path,
        round_overhead=round_overhead,
        strict=strict,
        note=_note,
        warn=log.warning,
    )
    if mesh:
        _print_mesh(result, load_pricing(pricing_path), mesh_interval, mesh_echoes, as_json)
    elif as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        print_plan(result, _console())


def _print_mesh(result: Plan, pricing: Any, interval_s: int, echoes: int, as_json: bool) -> None:
    """`plan --mesh`: what `mesh up` with these options would keep running, and its cost."""
    from dataclasses import asdict

    from orchestrator.mesh.cost import HOURS_PER_MONTH, mesh_cost

    cost = mesh_cost(result.selection.regions, pricing, interval_s, echoes)
    emulated = backends.is_emulated(result.backend)
    if as_json:
        doc = {**asdict(cost), "total_usd_per_month": round(cost.total_usd_per_month, 2),
               "interval_s": interval_s, "echoes": echoes, "backend": result.backend,
               "emulated": emulated, "pricing_as_of": pricing.as_of}  # fmt: skip
        click.echo(json.dumps(doc, indent=2))
        return
    keys = ", ".join(r.key for r in result.selection.regions)
    click.echo(f"mesh: {log.counted(cost.hosts, 'host')} ({keys})")
    click.echo(
        f"{cost.directed_pairs:,} directed pairs, {echoes} echoes each every {interval_s} s: "
        f"{cost.probes_per_host_per_s:g} probes/s per host, "
        f"{cost.egress_bytes_per_host_per_s:,.0f} B/s out per host (requests and replies, "
        f"84-byte packets), {cost.egress_gb_per_host_per_month:,.2f} GB per host per month"
    )
    where = " if run on the clouds (this is the emulated cloud: $0)" if emulated else ""
    click.echo(
        f"cost per month ({HOURS_PER_MONTH} h) at list prices of {pricing.as_of}{where}: "
        f"VMs ${cost.vm_usd_per_month:,.2f}, egress ${cost.egress_usd_per_month:,.2f}, "
        f"total ${cost.total_usd_per_month:,.2f}"
    )


def _note(message: str) -> None:
    log.info(message)  # stderr: --json output stays parseable


def print_plan(result: Plan, console: Console) -> None:
    selection = result.selection
    regions = _table(log.counted(len(selection.regions), "region"))
    for name in ("region", "city", "country", "lat", "lon"):
        regions.add_column(name, justify="right" if name in ("lat", "lon") else "left")
    for r in selection.regions:
        name = r.key + (" (opt-in)" if r.opt_in else "")
        regions.add_row(name, r.city, r.country, f"{r.lat:.2f}", f"{r.lon:.2f}")
    console.print(regions)

    pairs = _table(f"{len(selection.pairs)} directed pairs")
    for name in ("src", "dst", "cloud pair", "distance km"):
        pairs.add_column(name, justify="right" if name == "distance km" else "left")
    for p in selection.pairs[:SHOW_PAIRS]:
        pairs.add_row(p.src.key, p.dst.key, p.cloud_pair, f"{p.distance_km:,.0f}")
    console.print(pairs)
    if len(selection.pairs) > SHOW_PAIRS:
        console.print(f"... and {len(selection.pairs) - SHOW_PAIRS} more pairs (see --json)")
    per_band = pairs_per_band(selection.pairs)
    console.print(
        "directed pairs per distance band: "
        + ", ".join(f"{band} {n}" for band, n in per_band.items()),
        highlight=False,
    )

    cap = "one slot per round" if result.sequential else None
    if result.max_concurrent:
        cap = f"at most {result.max_concurrent} slots per round"
    title = result.shape()
    if not result.params.throughput:
        title += f"; the {log.counted(len(result.rounds), 'round')} it would take with throughput"
    rounds = _table(title + (f", {cap}" if cap else ""))
    rounds.add_column("round", justify="right")
    rounds.add_column("tests", justify="right")
    rounds.add_column("slots (both directions each)")
    for i, rnd in enumerate(result.rounds[:SHOW_ROUNDS], 1):
        slots = ", ".join(" <> ".join(slot.regions) for slot in rnd)
        rounds.add_row(str(i), str(sum(len(s.pairs) for s in rnd)), slots)
    if result.sentinel_round and len(result.rounds) < SHOW_ROUNDS:
        slots = ", ".join(" <> ".join(slot.regions) for slot in result.sentinels)
        tests = sum(len(s.pairs) for s in result.sentinels)
        rounds.add_row(str(len(result.rounds) + 1), str(tests), f"{slots} (sentinels, again)")
    console.print(rounds)
    if len(result.rounds) > SHOW_ROUNDS:
        console.print(f"... and {len(result.rounds) - SHOW_ROUNDS} more rounds (see --json)")
    for line in result.extra_rounds():
        console.print(line, highlight=False)

    e = result.estimate
    params = result.params
    table = _table(f"estimate ({result.backend} backend)")
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("slot, both ways, before RTTs", _duration(slot_seconds(params)))
    table.add_row("measuring, wall time", _duration(e.wall_s))
    table.add_row("provision + prepare + teardown", _duration(e.setup_s))
    table.add_row("traffic, expected", _bytes(e.bytes))
    for cloud_pair, sent in e.bytes_by_cloud_pair.items():
        table.add_row(f"  {cloud_pair}", _bytes(sent))
    table.add_row("VM-hours on the cloud", f"{e.vm_hours:,.2f}")
    table.add_row("cloud: egress", f"${e.egress_usd:,.2f}")
    table.add_row("cloud: VMs, IPs, disks", f"${e.vm_usd:,.2f}")
    table.add_row("cloud: total", f"${e.cloud_cost_usd:,.2f}")
    table.add_row("cost on this backend", f"${e.cost_usd:,.2f}")
    console.print(table)
    note = f"list prices as of {result.pricing_as_of} (infra/pricing.yaml)"
    if backends.is_emulated(result.backend):
        note = "emulated cloud: costs nothing; the cloud figures show what it would cost; " + note
    console.print(note)


def _console() -> Console:
    console = Console()
    # Piped or captured output has no width: do not squeeze region names into 80 columns.
    return console if console.is_terminal else Console(width=160)


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)


def _duration(seconds: float) -> str:
    minutes, s = divmod(round(seconds), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}h{m:02d}m{s:02d}s" if hours else f"{m}m{s:02d}s"


def _bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{n:,.0f} B"


@click.group(invoke_without_command=True)
@click.option(
    "--cloud",
    "clouds",
    default=",".join(CLOUDS),
    show_default=True,
    metavar="LIST",
    help="Clouds to list, comma-separated.",
)
@json_option
@_catalog_option
@click.pass_context
def regions(ctx: click.Context, clouds: str, as_json: bool, catalog: Path) -> None:
    """List the region catalog (regions.yaml).

    \b
    Example:
      interregion regions --cloud aws
      interregion regions --json
    """
    if ctx.invoked_subcommand is not None:
        return
    wanted = parse_clouds(clouds, "--cloud")
    loaded = load_catalog(catalog)
    selected = loaded.in_clouds(wanted)
    if as_json:
        rows = [
            {**region_to_dict(r), "machine_type": loaded.machine_types.get(r.cloud, "")}
            for r in selected
        ]
        emit(rows)
        return
    table = _table(log.counted(len(selected), "region"))
    for name in ("region", "city", "country", "lat", "lon", "zone", "opt-in"):
        table.add_column(name, justify="right" if name in ("lat", "lon") else "left")
    for r in selected:
        table.add_row(
            r.key,
            r.city,
            r.country,
            f"{r.lat:.2f}",
            f"{r.lon:.2f}",
            r.zone,
            "yes" if r.opt_in else "",
        )
    _console().print(table)


COMMANDS: list[click.Command] = [plan, regions]
