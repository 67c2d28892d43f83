"""CLI commands before and around a sweep: plan (a dry run), regions (the catalog; regions
sync against the clouds), preflight (the clouds checked first) and reap (what a crashed sweep
left on the clouds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from orchestrator import clouds as cloud_api
from orchestrator import mesh, model, plan, text
from orchestrator import sweep as sw
from orchestrator.cli import options as opt
from orchestrator.core import PRICING, RESULTS, RunFailure, info, warning
from orchestrator.mesh import DEFAULT_ECHOES, DEFAULT_INTERVAL_S
from orchestrator.model import CLOUDS


@opt.examples(
    "interregion plan --max-regions 8",
    "interregion plan --regions aws:us-east-1,aws:us-east-2,gcp:us-east4 --strict",
    "interregion plan --cloud-pair aws:gcp --min-km 1000 --max-km 5000 --json",
    "interregion plan --pairs aws:us-east-1/gcp:us-east4 --pings 50 --duration 10",
    "interregion plan --mesh --max-regions 8",
)
@click.command("plan")
@opt.selection_options
@opt.test_params_options
@opt.run_options
@click.option("--round-overhead", type=opt.FINITE, default=None,
              help="Seconds each round adds beyond its slowest test "
              "[default: the controller's model, by the round's hosts].")  # fmt: skip
@opt.json_flag("Print the plan as JSON.")
@click.option("--strict", is_flag=True,
              help="Refuse a plan whose hosts send more on average than their machine type's "
              "baseline bandwidth (default: warn).")  # fmt: skip
@opt.catalog_option
@click.option("--pricing", "pricing_path", type=opt.UserPath(dir_okay=False), default=PRICING,
              show_default="infra/pricing.yaml", help="Price list for the estimate.")  # fmt: skip
@click.option("--mesh", "as_mesh", is_flag=True,
              help="Plan a continuous mesh (interregion mesh up) instead: hosts, probe traffic "
              "and cost per month.")  # fmt: skip
@click.option("--mesh-interval", type=click.IntRange(1, 3600), default=DEFAULT_INTERVAL_S,
              show_default=True,
              help="With --mesh: seconds between two probes of the same peer.")  # fmt: skip
@click.option("--mesh-echoes", type=click.IntRange(1, 100), default=DEFAULT_ECHOES,
              show_default=True, help="With --mesh: echoes to each peer per interval.")  # fmt: skip
def plan_command(catalog: Path, pricing_path: Path, strict: bool, round_overhead: float | None,
                 as_mesh: bool, mesh_interval: int, mesh_echoes: int, as_json: bool,
                 **options: Any) -> None:  # fmt: skip
    """Show what a sweep would test, in which rounds, how long and at what cost.

    A dry run: nothing is created. How the estimate is made: docs/planning.md.
    """
    # notes and warnings are log lines, on stderr: --json output stays parseable
    request = opt.request_from(options, None)
    if as_mesh:
        found = mesh.plan_mesh(request, catalog_path=catalog, pricing_path=pricing_path,
                               strict=strict, round_overhead=round_overhead,
                               interval_s=mesh_interval, echoes=mesh_echoes, note=info,
                               warn=warning)  # fmt: skip
        opt.echo_result(found, as_json, text.mesh_plan_lines, indent=2)
        return
    result = sw.dry_run(request, catalog_path=catalog, pricing_path=pricing_path, strict=strict,
                        round_overhead=round_overhead, note=info, warn=warning)  # fmt: skip
    opt.echo_result(result, as_json, text.plan_tables, indent=2, width=text.TERMINAL_WIDTH,
                    markup=True)  # fmt: skip


@opt.examples("interregion regions --cloud aws", "interregion regions --json")
@click.group(invoke_without_command=True)
@click.option("--cloud", "clouds", default=",".join(CLOUDS), show_default=True, metavar="LIST",
              help="Clouds to list, comma-separated.")  # fmt: skip
@opt.json_option
@opt.catalog_option
@click.pass_context
def regions(ctx: click.Context, clouds: str, as_json: bool, catalog: Path) -> None:
    """List the region catalog (regions.yaml)."""
    if ctx.invoked_subcommand is not None:
        return
    listing = model.region_listing(catalog, plan.parse_clouds(clouds, "--cloud"))
    if as_json:
        opt.emit(listing.to_json())
    else:
        text.print_parts([text.regions_table(listing)], text.TERMINAL_WIDTH)


_CLOUDS = click.option("--clouds", default=",".join(CLOUDS), show_default=True, metavar="LIST",
                       help="Clouds to ask, comma-separated.")  # fmt: skip


@opt.examples(
    "interregion preflight --clouds aws,gcp --max-regions 8 --gcp-project my-project",
    "interregion preflight --regions aws:us-east-1,gcp:us-east4 --json",
)
@click.command("preflight")
@opt.selection_options
@opt.cloud_options
@opt.catalog_option
@opt.json_option
def preflight_command(catalog: Path, as_json: bool, **kwargs: Any) -> None:
    """Check credentials, regions, machine types, quotas and images before a cloud sweep.

    Nothing is created and nothing costs money. Regions that would fail are listed.
    """
    result = cloud_api.check_selection_on_clouds(
        opt.selection_from(kwargs), opt.cloud_flags_from(kwargs), catalog_path=catalog,
        results=RESULTS, note=info, warn=warning,
    )  # fmt: skip
    opt.echo_listing(result.to_json(), as_json, text.preflight_lines(result))


@opt.examples("interregion regions sync --clouds aws", "interregion regions sync --json")
@click.command("sync")
@_CLOUDS
@opt.account_options
@opt.catalog_option
@opt.json_option
def regions_sync_command(
    clouds: str, gcp_project: str | None, aws_profile: str | None, catalog: Path, as_json: bool
) -> None:
    """Compare the regions the clouds offer with regions.yaml.

    Lists regions missing from the catalog, catalog regions the account does
    not see, AWS opt-in regions not enabled for the account, and AWS machine types
    whose baseline or burst bandwidth in regions.yaml differs from the EC2 API's.
    """
    report = cloud_api.sync_catalog(catalog, list(plan.parse_clouds(clouds, "--clouds")),
                                    warn=warning, gcp_project=gcp_project,
                                    aws_profile=aws_profile)  # fmt: skip
    opt.echo_listing(report.to_json(), as_json, text.sync_lines(report))


@opt.examples(
    "interregion reap --dry-run",
    "interregion reap --dry-run --json",
    "interregion reap --older-than 2h",
    "interregion reap --sweep 20261122T0130Z-3fa2",
)
@click.command("reap")
@click.option("--older-than", default=None, metavar="AGE",
              help="Reap resources created longer ago than this (e.g. 2h) instead of expired "
              "ones.")  # fmt: skip
@click.option("--sweep", "sweep_id", default=None, help="Reap every resource of this sweep.")
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@opt.json_option
@_CLOUDS
@click.option("--aws-region", "aws_regions", multiple=True,
              help="Only these AWS regions (repeatable).")  # fmt: skip
@opt.account_options
def reap_command(clouds: str, dry_run: bool, as_json: bool, **kwargs: Any) -> None:
    """Delete interregion resources a crashed sweep left on the clouds.

    Those tagged project=interregion whose expires_utc has passed, by default
    (docs/clouds.md).
    """
    report = cloud_api.reap_clouds(list(plan.parse_clouds(clouds, "--clouds")), dry_run=dry_run,
                                   warn=warning, **kwargs)  # fmt: skip
    opt.echo_listing(report.to_json(dry_run), as_json, text.reap_lines(report, dry_run))
    if not dry_run and len(report.deleted) < len(report.due):
        raise RunFailure("some resources could not be deleted (see warnings): run reap again")


regions.add_command(regions_sync_command)
COMMANDS: list[click.Command] = [plan_command, regions, preflight_command, reap_command]
