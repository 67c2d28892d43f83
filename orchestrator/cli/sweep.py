"""CLI commands: sweep, and its stages run alone on a sweep id
(provision, prepare, measure, collect, teardown); the continuous mesh (mesh up, status,
down, matrix) and metrics."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from orchestrator.cli.emulator import perturb_options, perturbations_from_options
from orchestrator.cli.options import (
    FINITE,
    cloud_flags_given,
    cloud_options,
    request_from,
    run_from,
    run_options,
    selection_from,
    selection_options,
    test_params_options,
)
from orchestrator.cli.pathopt import UserPath
from orchestrator.clouds.options import CloudOptions, cloud_options_from
from orchestrator.core import log, paths
from orchestrator.core.errors import UserError
from orchestrator.mesh.cost import DEFAULT_ECHOES, DEFAULT_INTERVAL_S
from orchestrator.model import backends
from orchestrator.plan.allowance import shortfall_message
from orchestrator.plan.sweep_plan import Plan
from orchestrator.results import store
from orchestrator.sweep import launch, stages
from orchestrator.sweep import measure as measuring
from orchestrator.sweep import record as sweeps
from orchestrator.sweep.launch import Emulation, SweepRequest

DEFAULT_BUDGET_USD = 5.0
# A sweep past either asks first, whatever it costs: a local sweep is $0 and never
# reached the budget's question, and a bare `interregion sweep` starts 77 hosts.
BIG_HOSTS = 16
BIG_MINUTES = 10


def _results_option(f: Any) -> Any:
    return click.option(
        "--results",
        type=UserPath(file_okay=False),
        default=paths.RESULTS,
        show_default=True,
        help="Folder holding the sweeps' results.",
    )(f)


def _sweep_id_option(f: Any) -> Any:
    return click.option("--sweep", "sweep_id", required=True, metavar="ID", help="Sweep id.")(f)


def _on_terminal() -> bool:
    """Whether a question can be asked (stdin is a terminal)."""
    return sys.stdin.isatty()


def _confirm_cost(cost_usd: float, budget_usd: float, yes: bool) -> None:
    if cost_usd <= budget_usd or yes:
        return
    if not _on_terminal():
        raise UserError(
            f"estimated cost ${cost_usd:.2f} is above --budget-usd {budget_usd:g}: "
            "pass --yes to accept it or raise --budget-usd"
        )
    if not click.confirm(f"estimated cost ${cost_usd:.2f} is above the budget; go ahead?"):
        raise UserError("not confirmed: nothing was provisioned")


def big_run(hosts: int, wall_s: float) -> str:
    """What makes a sweep big enough to ask first ("" when nothing does)."""
    reasons = [f"{hosts} hosts"] if hosts > BIG_HOSTS else []
    if wall_s > BIG_MINUTES * 60:
        reasons.append(f"about {wall_s / 60:.0f} min of measuring")
    return " and ".join(reasons)


def _confirm_size(hosts: int, wall_s: float, yes: bool) -> None:
    """Above BIG_HOSTS hosts or BIG_MINUTES minutes: a question on a terminal, --yes
    otherwise."""
    big = big_run(hosts, wall_s)
    if not big or yes:
        return
    if not _on_terminal():
        raise UserError(
            f"this sweep starts {big} (more than {BIG_HOSTS} hosts or {BIG_MINUTES} min "
            "asks first): pass --yes to run it, or narrow it with --max-regions or --regions"
        )
    if not click.confirm(f"this sweep starts {big}; go ahead?"):
        raise UserError("not confirmed: nothing was provisioned")


@click.command()
@selection_options
@test_params_options
@run_options
@cloud_options
@click.option(
    "--yes",
    is_flag=True,
    help=f"Do not ask, even above the budget or past {BIG_HOSTS} hosts or {BIG_MINUTES} min "
    "(needed then when not on a terminal).",
)
@click.option(
    "--budget-usd",
    type=FINITE,
    default=DEFAULT_BUDGET_USD,
    show_default=True,
    help="Ask before provisioning when the estimated cost is above this.",
)
@click.option(
    "--price-emulated",
    is_flag=True,
    help="Local: count what the emulated sweep moves at the clouds' list prices, so that "
    "--budget-usd stops it as it would a cloud sweep (a rehearsal of the hard stop).",
)
@click.option("--resume", "resume_id", metavar="ID", help="Continue a sweep: keep its ok tests.")
@click.option(
    "--plan-only", is_flag=True, help="Create the sweep folder and stop (run stages alone)."
)
@click.option("--no-report", is_flag=True, help="Do not build the report at the end.")
@click.option(
    "--profile",
    default=None,
    metavar="NAME",
    help="Run a profile of the profiles file once by hand (its options, budgets, ledger).",
)
@click.option(
    "--file",
    "schedules",
    type=UserPath(dir_okay=False),
    default=paths.SCHEDULES,
    show_default="schedules.yaml",
    help="The profiles file --profile reads.",
)
@perturb_options
@click.option(
    "--emulation-seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the emulated cloud's run-to-run variation (local; default: from the "
    "sweep id). Recorded in sweep.json.",
)
@_results_option
def sweep(**kwargs: Any) -> None:
    """Measure latency and throughput between the selected regions, keeping every result.

    Stages: plan, provision, prepare, measure (rounds), collect, teardown, report.
    Teardown always runs, also on errors, Ctrl-C and SIGTERM. Results land in
    results/<sweep-id>/ (sweep.json, raw/, measurements.csv). The cloud flags apply to
    --backend aws, gcp and cloud and are kept with the sweep.

    \b
    Example:
      interregion sweep --backend local --yes --max-regions 8
      interregion sweep --backend aws --clouds aws --ttl 2h --yes
      interregion sweep --backend cloud --pin-from 20261122T0130Z-3fa2 --yes
      interregion sweep --resume 20261122T0130Z-3fa2 --yes
      interregion sweep --profile latency
      interregion sweep --tests ping --yes --perturb aws:us-east-1/gcp:europe-west1,delay_ms=10
    """
    results: Path = kwargs["results"]
    store.check_results_for_sweeps(results)
    if kwargs["profile"]:
        _sweep_profile(kwargs)
        return
    if not kwargs["budget_usd"] > 0:  # also NaN: a budget nothing is within
        raise UserError(f"--budget-usd {kwargs['budget_usd']:g}: must be above 0")
    if kwargs["price_emulated"] and (kwargs["resume_id"] or backends.is_cloud(kwargs["backend"])):
        raise UserError(
            "--price-emulated applies to a new sweep on --backend local (a cloud sweep is "
            "priced anyway)"
        )
    if kwargs["resume_id"]:
        _refuse_with_resume(kwargs)
        if kwargs["perturb"] or kwargs["perturb_file"] or kwargs["emulation_seed"] is not None:
            raise UserError(
                "--perturb and --emulation-seed with --resume: a resumed sweep keeps the "
                "emulation it recorded; start a new sweep to change it"
            )
        sweeps.load_record(results, kwargs["resume_id"])  # before the lock makes a folder
        with launch.locked(results, trigger="sweep", log=_say) as held:
            run = sweeps.open_sweep(kwargs["resume_id"], results)
            _replace_cloud_options(run, kwargs)
            # resuming provisions every host again: the same checks as a new sweep
            _confirm_cost(
                float(run.record.plan.estimate.cost_usd),
                kwargs["budget_usd"],
                kwargs["yes"],
            )
            _confirm_size(
                len(run.record.plan.regions),
                float(run.record.plan.estimate.wall_s),
                kwargs["yes"],
            )
            log.info(f"resuming sweep {run.id} ({run.backend})")
            _run(run, kwargs, held)
        return
    request = request_from(kwargs, emulation_from(kwargs))
    plan, options = _plan(request, kwargs)  # every input check; nothing is written before
    spec, emulation = request.selection, request.emulation
    if kwargs["plan_only"]:
        run = launch.create(plan, spec, results, cloud_options=options, emulation=emulation)
        log.info(f"sweep {run.id}: {run.dir}")
        click.echo(run.id)
        return
    with launch.locked(results, trigger="sweep", log=_say) as held:
        run = launch.create(plan, spec, results, cloud_options=options, emulation=emulation)
        log.info(f"sweep {run.id}: {run.dir}")
        _run(run, kwargs, held)


def _refuse_with_resume(kwargs: dict[str, Any]) -> None:
    """A selection or test option given with --resume is one line: the resumed sweep
    measures what it planned, and the option would be silently ignored."""
    from orchestrator.plan.option_names import SELECTION_OPTIONS, TEST_PARAMS_OPTIONS

    ctx = click.get_current_context()
    for name in (*SELECTION_OPTIONS, "spread", *TEST_PARAMS_OPTIONS):
        if name in kwargs and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE:
            flag = "--" + name.replace("_", "-")
            raise UserError(
                f"{flag} with --resume: a resumed sweep measures what it planned; "
                f"drop {flag}, or start a new sweep"
            )


def _sweep_profile(kwargs: dict[str, Any]) -> None:
    """`sweep --profile NAME`: the profile's tick, by hand; other sweep options clash."""
    from orchestrator.cli.schedule import profile_named, run_profile

    ctx = click.get_current_context()
    allowed = {"profile", "schedules", "results", "yes"}
    given = [
        name
        for name in kwargs
        if name not in allowed
        # an INTERREGION_* variable is a default of this shell, not a clash
        and ctx.get_parameter_source(name)
        not in (None, ParameterSource.DEFAULT, ParameterSource.ENVIRONMENT)
    ]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UserError(
            f"{flag} with --profile: the profile sets the sweep; edit it or drop {flag}"
        )
    run_profile(profile_named(kwargs["schedules"], kwargs["profile"]), kwargs["results"], "hand")


def emulation_from(kwargs: dict[str, Any]) -> Emulation | None:
    """The emulation --perturb, --perturb-file and --emulation-seed ask for; None when
    none of them was given."""
    perturbations = perturbations_from_options(kwargs["perturb"], kwargs["perturb_file"])
    if kwargs["emulation_seed"] is None and not perturbations:
        return None
    return Emulation(kwargs["emulation_seed"], perturbations)


def _plan(request: SweepRequest, kwargs: dict[str, Any]) -> tuple[Plan, CloudOptions | None]:
    """The plan and the cloud options of a new sweep; asks above the budget."""
    plan = launch.plan_for(request, _note)
    # the cloud flags (and the cloud's extra) checked before the plan is shown or asked
    # about: bad input stays one line
    options = launch.cloud_options_for(request, kwargs["results"])
    announce(plan, kwargs, len(plan.selection.pairs), plan.shape())
    return plan, options


def announce(plan: Plan, kwargs: dict[str, Any], tests: int, shape: str) -> None:
    """Print the plan's estimate (`tests` tests, measured as `shape` says); ask above
    the budget."""
    if plan.shortfalls:
        log.warning(f"{shortfall_message(plan.shortfalls)}")
    e = plan.estimate
    log.info(
        f"plan: {log.counted(len(plan.selection.regions), 'region')}, "
        f"{log.counted(tests, 'test')}, {shape}, "
        f"about {e.wall_s / 60:.1f} min measuring; estimated cost ${e.cost_usd:.2f}"
        + (
            f" (on the clouds: ${e.cloud_cost_usd:.2f})"
            if backends.is_emulated(plan.backend)
            else ""
        )
    )
    _confirm_cost(e.cost_usd, kwargs["budget_usd"], kwargs["yes"])
    _confirm_size(len(plan.selection.regions), e.wall_s, kwargs["yes"])


def _say(message: str) -> None:
    log.say(message)


def _note(message: str) -> None:
    log.info(message)


def _run(run: sweeps.Sweep, kwargs: dict[str, Any], held: launch.Held) -> None:
    source = click.get_current_context().get_parameter_source("budget_usd")
    # given by hand: also the hard stop of what the sweep may move (measure.check_budget)
    budget = kwargs["budget_usd"] if source not in (None, ParameterSource.DEFAULT) else None
    launch.start(
        run,
        held,
        budget_usd=budget,
        price_emulated=bool(kwargs.get("price_emulated")),
        build_report=not kwargs["no_report"],
    )
    failed = sum(r.tests_failed or 0 for r in run.record.rounds if r.kind != "retry")
    log.info(f"sweep {run.id} done: {run.dir / 'measurements.csv'}")
    if failed:
        log.info(f"{log.counted(failed, 'test')} failed at first; see the status and error columns")


def _replace_cloud_options(run: sweeps.Sweep, kwargs: dict[str, Any]) -> None:
    """Cloud flags given again replace the ones the sweep was planned with."""
    given = cloud_flags_given(kwargs)
    if given is None:
        return
    if backends.is_emulated(run.backend):
        raise UserError(f"sweep {run.id} runs on the emulated cloud: cloud flags do not apply")
    run.record.cloud_options = asdict(cloud_options_from(given, run.results))
    run.save()


@click.command()
@_sweep_id_option
@cloud_options
@_results_option
def provision(sweep_id: str, results: Path, **kwargs: Any) -> None:
    """Provision the hosts of a planned sweep (Terraform) and record them in hosts.json.

    The hosts stay up until 'interregion teardown --sweep ID'. Cloud flags default
    to the ones the sweep was planned with; any given here replace them all.

    \b
    Example:
      interregion provision --sweep 20261122T0130Z-3fa2
      interregion provision --sweep 20261123T0900Z-77aa --pin-from 20261122T0130Z-3fa2
    """
    run = sweeps.open_sweep(sweep_id, results)
    _replace_cloud_options(run, kwargs)
    hosts = stages.provision(run)
    click.echo(f"{log.counted(len(hosts), 'host')} up")


@click.command()
@_sweep_id_option
@click.option(
    "--forks",
    type=click.IntRange(1, 500),
    default=stages.PREPARE_FORKS,
    show_default=True,
    help="Hosts Ansible prepares at once.",
)
@_results_option
def prepare(sweep_id: str, forks: int, results: Path) -> None:
    """Prepare a provisioned sweep's hosts: SSH, tools, agent, facts (Ansible).

    \b
    Example:
      interregion prepare --sweep 20261122T0130Z-3fa2
      interregion prepare --sweep 20261122T0130Z-3fa2 --forks 77
    """
    facts = stages.prepare(sweeps.open_sweep(sweep_id, results), forks=forks)
    click.echo(f"{log.counted(len(facts), 'host')} ready")


@click.command()
@_sweep_id_option
@click.option("--no-retry", is_flag=True, help="Do not retry failed tests at the end.")
@_results_option
def measure(sweep_id: str, no_retry: bool, results: Path) -> None:
    """Measure the tests of a prepared sweep that have no ok result yet.

    \b
    Example:
      interregion measure --sweep 20261122T0130Z-3fa2
    """
    run = sweeps.open_sweep(sweep_id, results)
    measuring.measure(run, retry=not no_retry)
    click.echo(str(run.dir / "measurements.csv"))


@click.command()
@_sweep_id_option
@click.option(
    "--force", is_flag=True, help="Replace measurements.csv even if ok rows would be lost."
)
@_results_option
def collect(sweep_id: str, force: bool, results: Path) -> None:
    """Rebuild a sweep's measurements.csv from its raw tool outputs.

    Refuses (without --force) to turn ok rows into failed ones, e.g. on a sweep
    copied without its raw/ folder.

    \b
    Example:
      interregion collect --sweep 20261122T0130Z-3fa2
    """
    rows = stages.collect(sweeps.open_sweep(sweep_id, results), force=force)
    click.echo(log.counted(len(rows), "row"))


@click.command()
@_sweep_id_option
@_results_option
def teardown(sweep_id: str, results: Path) -> None:
    """Destroy a sweep's hosts and close its connections; safe to run any number of times.

    \b
    Example:
      interregion teardown --sweep 20261122T0130Z-3fa2
    """
    folder = results
    studies = results / store.STUDIES_DIR
    if (
        not store.sweep_dir(results, sweep_id).exists()
        and store.sweep_dir(studies, sweep_id).exists()
    ):
        folder = studies  # a study's hosts (study tcp): torn down the same way
    stages.teardown(sweeps.open_sweep(sweep_id, folder))
    click.echo("torn down")


# ---- the continuous mesh (issue 32): mesh up|status|down|matrix, metrics ----------------

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
    default=DEFAULT_INTERVAL_S,
    show_default=True,
    help="Seconds between two probes of the same peer (each a few echoes).",
)
@click.option(
    "--echoes",
    type=click.IntRange(1, 100),
    default=DEFAULT_ECHOES,
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
    from orchestrator.mesh import collect, run
    from orchestrator.plan.options import params_spec

    request = run.MeshRequest(
        kwargs["interval"], kwargs["echoes"], kwargs["collect_every"], bin_s=kwargs["bin_seconds"]
    ).check()
    wanted = SweepRequest(
        selection=selection_from(kwargs),
        params=params_spec(tests="ping"),
        run=run_from(kwargs),
        cloud=cloud_flags_given(kwargs),
        emulation=emulation_from(kwargs),
    )
    plan = launch.plan_for(wanted, log.info)
    hosts = len(plan.selection.regions)
    if hosts < 2:
        raise UserError("a mesh needs at least 2 regions: select more")
    if hosts > BIG_HOSTS and not kwargs["yes"]:
        raise UserError(f"this mesh starts {hosts} hosts (more than {BIG_HOSTS}): pass --yes")
    options = launch.cloud_options_for(wanted, kwargs["results"])
    sweep = run.create(plan, wanted.selection, kwargs["results"], request, log.say,
                       cloud_options=options, emulation=wanted.emulation)  # fmt: skip
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
    from orchestrator.history import store as history
    from orchestrator.mesh import views

    with history.opened(results, read_only=True) as con:
        known = views.mesh_sources(con)
        if not known:
            raise UserError(
                f"no mesh data in the store under {results}: "
                "'interregion mesh up' starts a mesh, which fills it"
            )
        if source is None:
            if len(known) != 1:
                raise UserError(f"give --source, one of: {', '.join(known)}")
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
@click.option(
    "--serve",
    "bind",
    default=None,
    metavar="HOST:PORT",
    help="Serve /metrics over HTTP instead (PORT alone: 127.0.0.1; 0.0.0.0 only when "
    "given); the format follows the scraper's Accept header. Runs until Ctrl-C or SIGTERM.",
)
@_RESULTS
def metrics_command(
    out: Path | None, fmt: str, window: str, bind: str | None, results: Path
) -> None:
    """The mesh's RTT, loss and probe counts per directed pair as OpenMetrics text
    (for node_exporter, --out into its textfile collector's folder; or served at
    /metrics for Prometheus, --serve).

    \b
    Example:
      interregion metrics --out textfile/interregion.prom --format prometheus
      interregion metrics --window 6H
      interregion metrics --serve 127.0.0.1:9109
    """
    from orchestrator.history import store as history
    from orchestrator.mesh import openmetrics, views

    if window not in views.WINDOWS:
        raise UserError(f"--window {window}: one of {', '.join(views.WINDOWS)}")
    if bind is not None:
        if out is not None:
            raise UserError("--out and --serve both given: pick one")
        _serve_metrics(bind, window, results)
        return
    with history.opened(results, read_only=True) as con:
        text = openmetrics.render(con, window, fmt=fmt)
    if out is None:
        click.echo(text, nl=False)
    else:
        store.write_atomic(Path(out), text)
        log.info(f"metrics: {out}")


def _serve_metrics(bind: str, window: str, results: Path) -> None:
    from orchestrator.history import store as history
    from orchestrator.mesh import openmetrics, serve

    host, port = serve.parse_bind(bind)
    if not history.store_path(results).exists():
        raise UserError(
            f"no history store under {results}: 'interregion mesh up' starts a mesh, which fills it"
        )

    def render(fmt: str) -> str:
        with history.opened(results, read_only=True) as con:
            return openmetrics.render(con, window, fmt=fmt)

    server = serve.make_server(host, port, render)
    bound = server.server_address
    bound_host, bound_port = str(bound[0]), int(bound[1])
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    if serve.every_interface(host):
        log.warning(f"metrics: listening on every interface ({host}): anyone who reaches "
                    "this machine can read them")  # fmt: skip
    log.say(f"metrics: serving http://{shown}:{bound_port}/metrics (Ctrl-C stops)")
    try:
        server.serve_forever()
    finally:
        server.server_close()


COMMANDS: list[click.Command] = [
    sweep,
    provision,
    prepare,
    measure,
    collect,
    teardown,
    mesh,
    metrics_command,
]
