"""CLI command: `interregion demo` (what `make demo` runs)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from orchestrator.cli.pathopt import UserPath
from orchestrator.core import log


@click.command("demo")
@click.option(
    "--out",
    type=UserPath(file_okay=False),
    default=Path("demo"),
    show_default=True,
    help="Folder for the demo's results/ and site/ (new, empty, or an earlier demo's).",
)
@click.option("--replace", "replace_out", is_flag=True, help="Replace an earlier demo in --out.")
@click.option("--regions", default="", help="Comma-separated regions [default: 12 of both clouds].")
@click.option("--sweeps", type=click.IntRange(min=3), default=11, show_default=True)
@click.option(
    "--change-from",
    type=click.IntRange(min=2),
    default=9,
    show_default=True,
    help="The first sweep with the injected change (1-based).",
)
@click.option(
    "--perturb",
    default="",
    metavar="TARGET,KEY=VALUE",
    help="The injected change, a pair [default: aws:us-east-1/gcp:europe-west1,delay_ms=10].",
)
@click.option(
    "--min-runs",
    type=click.IntRange(min=2),
    default=8,
    show_default=True,
    help="Change detection's minimum of comparable runs (interregion changes --min-runs).",
)
@click.option("--no-site", is_flag=True, help="Do not build the site at the end.")
def demo(
    out: Path,
    replace_out: bool,
    regions: str,
    sweeps: int,
    change_from: int,
    perturb: str,
    min_runs: int,
    no_site: bool,
) -> None:
    """Build an emulated history with one injected route change, then check and show it.

    Latency-only sweeps of the same regions on the emulated cloud, each with its own
    recorded seed (per-pair variation, loss episodes); from --change-from on, one pair
    gets extra delay. Every sweep joins the history store; 'interregion changes' must
    then find that change and confirm nothing else (exit 1 otherwise); then the site.
    Needs root (network namespaces, iptables). Every emulation is removed at the end, also
    on Ctrl-C.

    \b
    Example:
      interregion demo --out demo --replace
      interregion demo --regions aws:us-east-1,gcp:europe-west1,aws:ap-southeast-2 \\
          --sweeps 5 --change-from 3 --min-runs 2
    """
    from orchestrator import demo as d
    from orchestrator.emulator import require_root
    from orchestrator.emulator.perturb import check_hosts, parse
    from orchestrator.history.changes import Params
    from orchestrator.model.catalog import load_catalog

    plan = d.DemoPlan(
        sweeps=sweeps,
        change_from=change_from,
        detection=Params(min_runs=min_runs, window_runs=max(min_runs, Params.window_runs)),
    )
    if regions:
        plan = replace(plan, regions=tuple(r.strip() for r in regions.split(",") if r.strip()))
    if perturb:
        plan = replace(plan, perturbation=parse(perturb))
    plan.expected_episodes()  # a pair, not a host
    catalog = load_catalog()
    check_hosts([plan.perturbation], [catalog.get(r).key for r in plan.regions])
    require_root()
    outcome = d.run_demo(
        plan,
        out,
        replace=replace_out,
        build_site=not no_site,
        log=log.say,
    )
    episodes = outcome.changes.get("episodes", [])
    for e in episodes:  # a path event: one line per direction that moved
        for way in e.get("directions", []):
            if way["moved"]:
                click.echo(
                    f"found: {e['metric']} {way['src']} -> {way['dst']} "
                    f"{way['old_level']:.1f} -> {way['new_level']:.1f} ms from "
                    f"{e['started_run']} ({e['status']})"
                )
    if outcome.site is not None:
        click.echo(f"site: {outcome.site}")
    click.echo(f"demo: {log.counted(len(outcome.sweep_ids), 'sweep')} in {outcome.wall_s:.0f} s")
    if outcome.problems:
        for problem in outcome.problems:
            log.warning(f"demo check failed: {problem}")
        sys.exit(1)
    click.echo(f"demo check passed: the injected change {plan.perturbation.text} and nothing else")


COMMANDS: list[click.Command] = [demo]
