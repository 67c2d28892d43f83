"""CLI commands: mesh (up, status, down, collect, matrix) and metrics."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from orchestrator.cli.emulator import perturb_options, perturbations_from_options
from orchestrator.cli.pathopt import UserPath
from orchestrator.clouds.options import cloud_options
from orchestrator.core import log, paths
from orchestrator.core.errors import UserError
from orchestrator.plan.options import run_options, selection_options

_RESULTS = click.option(
    "--results",
    type=UserPath(file_okay=False),
    default=paths.RESULTS,
    show_default=True,
    help="Folder holding the sweeps, the meshes (mesh/) and history.duckdb.",
)
_MESH_ID = click.option("--mesh", "mesh_id", default=None, metavar="ID",
                        help="Which mesh (default: the running one, else the latest).")  # fmt: skip


@click.group()
def mesh() -> None:
    """A continuous mesh: every directed pair probed every interval, kept in the store.

    \b
    Example:
      interregion mesh up --max-regions 8 --yes
      interregion mesh status
      interregion mesh down
    """


@mesh.command("up")
@selection_options
@run_options
@cloud_options
@click.option(
    "--interval",
    type=click.IntRange(1, 3600),
    default=60,
    show_default=True,
    help="Seconds between two probes of the same peer (each a few echoes).",
)
@click.option(
    "--echoes",
    type=click.IntRange(1, 100),
    default=5,
    show_default=True,
    help="ICMP echoes to each peer per interval, spread over it.",
)
@click.option(
    "--collect-every",
    type=click.IntRange(5, 3600),
    default=60,
    show_default=True,
    help="Seconds between two pulls of the hosts' records into the store.",
)
@click.option(
    "--bin-seconds",
    type=click.IntRange(1, 3600),
    default=300,
    show_default=True,
    help="The store's bins (a multiple of --interval); shorter only to test detection.",
)
@click.option("--yes", is_flag=True, help="Do not ask before starting more than 16 hosts.")
@perturb_options
@click.option(
    "--emulation-seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the emulated cloud's variation (local).",
)
@_RESULTS
def up_command(**kwargs: Any) -> None:
    """Start a mesh and collect from it until stopped (mesh down, Ctrl-C, SIGTERM).

    Takes a sweep's selection options, backends and stacks: one host per region. The
    command stays in the foreground and is the mesh's controller: it pulls the hosts'
    records into the store every --collect-every seconds and judges the finished
    5-minute bins; stopped, it pulls once more and tears everything down.

    \b
    Example:
      interregion mesh up --regions aws:us-east-1,gcp:europe-west1,aws:ap-northeast-1
      interregion mesh up --max-regions 8 --interval 30 --yes
    """
    from orchestrator.cli.sweep import BIG_HOSTS, new_cloud_options
    from orchestrator.mesh import collect, run
    from orchestrator.sweep import launch

    request = run.MeshRequest(
        kwargs["interval"], kwargs["echoes"], kwargs["collect_every"], bin_s=kwargs["bin_seconds"]
    ).check()
    mine = ("interval", "echoes", "collect_every", "bin_seconds")
    options = {k: v for k, v in kwargs.items() if k not in mine}
    options["tests"] = "ping"
    plan, spec = launch.plan_from_options(options, log.info)
    hosts = len(plan.selection.regions)
    if hosts < 2:
        raise UserError("a mesh needs at least 2 regions: select more")
    if hosts > BIG_HOSTS and not kwargs["yes"]:
        raise UserError(f"this mesh starts {hosts} hosts (more than {BIG_HOSTS}): pass --yes")
    perturbations = perturbations_from_options(kwargs["perturb"], kwargs["perturb_file"])
    emulation = launch.emulation_from_options(kwargs["emulation_seed"], perturbations, plan)
    sweep = run.create(plan, spec, kwargs["results"], request, log.say,
                       cloud_options=new_cloud_options(kwargs), emulation=emulation)  # fmt: skip
    log.info(f"mesh {sweep.id}: {hosts} hosts, {hosts * (hosts - 1)} directed pairs, "
             f"every {request.interval_s} s ({sweep.dir})")  # fmt: skip
    click.echo(sweep.id)
    try:
        run.up(sweep, collect.collect, ready=log.say)
    except KeyboardInterrupt as e:  # mesh down, Ctrl-C, SIGTERM: how a mesh ends
        log.say(f"mesh {sweep.id}: stopped ({getattr(e, 'signal_name', 'SIGINT')}), torn down")


@mesh.command("status")
@_MESH_ID
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@_RESULTS
def status_command(mesh_id: str | None, as_json: bool, results: Path) -> None:
    """Each host of a mesh: its newest record, the collection's lag, its probe rate.

    \b
    Example:
      interregion mesh status
      interregion mesh status --json
    """
    from orchestrator.mesh import collect, run, views

    sweep = run.open_mesh(results, mesh_id, log.say)
    request = run.request_of(sweep)
    status = collect.read_status(sweep) if sweep.dir.joinpath("state").is_dir() else {}
    live = sweep.id in run.running(results)
    hosts = views.host_status(status, request.interval_s)
    if as_json:
        click.echo(json.dumps({
            "mesh": sweep.id, "running": live, "status": str(sweep.record.status),
            "collected_utc": status.get("collected_utc"), "request": asdict(request),
            "hosts": [asdict(h) for h in hosts],
        }, indent=2))  # fmt: skip
        return
    if sweep.emulated:
        from orchestrator.emulator.stack import emulation_id_for

        log.info(f"emulation {emulation_id_for(sweep.id)} (interregion emulator perturb --id ...)")
    state = "running" if live else f"not running ({sweep.record.status})"
    click.echo(
        f"mesh {sweep.id}: {state}; last collection {status.get('collected_utc') or 'none yet'}"
    )
    click.echo(f"{'host':28} {'last record (UTC)':22} {'lag s':>7} {'probes/s':>9}  problem")
    for h in hosts:
        lag = "" if h.lag_s is None else f"{h.lag_s:.0f}"
        rate = "" if h.probes_per_s is None else f"{h.probes_per_s:.2f}"
        click.echo(f"{h.name:28} {h.last_record_utc or '-':22} {lag:>7} {rate:>9}  {h.error}")


@mesh.command("down")
@_MESH_ID
@_RESULTS
def down_command(mesh_id: str | None, results: Path) -> None:
    """Stop a mesh: its controller pulls the last records and tears everything down.

    A mesh whose controller died is torn down here.

    \b
    Example:
      interregion mesh down
    """
    from orchestrator.mesh import run

    sweep = run.down(results, mesh_id, log.say)
    log.say(f"mesh {sweep.id}: down ({sweep.record.status})")


@mesh.command("matrix")
@click.option("--source", default=None, help="The mesh source (default: the only one).")
@click.option("--window", default="1H", show_default=True, help="1H, 6H, 1D or 1W.")
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as JSON.")
@_RESULTS
def matrix_command(source: str | None, window: str, as_json: bool, results: Path) -> None:
    """The matrix of a mesh source over a window ending at its newest bin.

    \b
    Example:
      interregion mesh matrix --window 1H
    """
    from orchestrator.history import store
    from orchestrator.mesh import views

    with store.opened(results, read_only=True) as con:
        known = views.mesh_sources(con)
        if source is None:
            if len(known) != 1:
                raise UserError(
                    f"give --source, one of: {', '.join(known) or 'none (no mesh data)'}"
                )
            source = known[0]
        end, cells = views.matrix(con, source, window)
    if as_json:
        click.echo(json.dumps({"source": source, "window": window,
                               "end_utc": end.isoformat() + "Z" if end else None,
                               "cells": [asdict(c) for c in cells]}, indent=2))  # fmt: skip
        return
    click.echo(f"{source}, {window} to {end}: p50/p90/p99 ms, loss (95 % interval)")
    for c in cells:
        stats = "/".join("-" if v is None else f"{v:.2f}" for v in (c.p50_ms, c.p90_ms, c.p99_ms))
        loss = (
            "-" if c.loss_ratio is None else f"{c.loss_ratio:.3f} ({c.loss_lo:.3f}-{c.loss_hi:.3f})"
        )
        click.echo(f"{c.src:26} -> {c.dst:26} {stats:24} n={c.samples:<6} loss {loss}")


@click.command("metrics")
@click.option(
    "--out",
    type=UserPath(dir_okay=False),
    default=None,
    help="Write here (atomically, for node_exporter's textfile collector); default: stdout.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openmetrics", "prometheus"]),
    default="openmetrics",
    show_default=True,
    help="OpenMetrics 1.0, or the Prometheus text format (textfile collector, promtool).",
)
@click.option(
    "--window",
    default="1H",
    show_default=True,
    help="The quantiles' and loss's window: 1H, 6H, 1D or 1W.",
)
@_RESULTS
def metrics_command(out: Path | None, fmt: str, window: str, results: Path) -> None:
    """The mesh's RTT, loss and probe counts per directed pair as OpenMetrics text.

    \b
    Example:
      interregion metrics --out /var/lib/node_exporter/textfile/interregion.prom --format prometheus
      interregion metrics --window 6H
    """
    from orchestrator.history import store
    from orchestrator.mesh import openmetrics, views
    from orchestrator.results.store import write_atomic

    if window not in views.WINDOWS:
        raise UserError(f"--window {window}: one of {', '.join(views.WINDOWS)}")
    with store.opened(results, read_only=True) as con:
        text = openmetrics.render(con, window, fmt=fmt)
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(Path(out), text)
        log.info(f"metrics: {out}")


COMMANDS: list[click.Command] = [mesh, metrics_command]
