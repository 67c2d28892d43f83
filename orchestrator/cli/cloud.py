"""CLI commands for the real clouds: preflight, regions sync, reap. The cloud SDKs are
imported only by the commands that talk to a cloud (~1 s, which --help need not pay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from orchestrator import clouds as cloud_api
from orchestrator import plan, text
from orchestrator.cli import options as opt
from orchestrator.core import RESULTS, RunFailure, info, warning
from orchestrator.model import CLOUDS

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


# `regions sync` is the `regions` group's (cli/plan.py), which adds it.
COMMANDS: list[click.Command] = [preflight_command, reap_command]
