"""CLI commands for the real clouds: preflight, regions sync, reap.

Their cloud flags are orchestrator.cli.options', the same as `sweep --backend
aws|gcp|cloud`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import click

from orchestrator.cli.jsonout import emit, json_option
from orchestrator.cli.options import (
    account_options,
    cloud_flags_from,
    cloud_options,
    selection_from,
    selection_options,
)
from orchestrator.cli.pathopt import UserPath
from orchestrator.core import log, paths
from orchestrator.core.errors import RunFailure
from orchestrator.model.catalog import CLOUDS
from orchestrator.plan.options import parse_clouds

# The cloud SDKs (boto3, google-cloud-compute) are imported inside the commands that
# talk to a cloud: importing them took ~1 s, which every command, even --help, paid.

F = TypeVar("F", bound=Callable[..., Any])


def _warn(message: str) -> None:
    log.warning(message)


def _note(message: str) -> None:
    log.info(message)


def _clouds(text: str) -> list[str]:
    return list(parse_clouds(text, "--clouds"))


_catalog_option = click.option(
    "--catalog",
    type=UserPath(dir_okay=False),
    default=paths.CATALOG,
    show_default="regions.yaml",
    help="Region catalog file.",
)


@click.command("preflight")
@selection_options
@cloud_options
@_catalog_option
@json_option
def preflight_command(catalog: Path, as_json: bool, **kwargs: Any) -> None:
    """Check credentials, regions, machine types, quotas and images before a cloud sweep.

    Nothing is created and nothing costs money. Regions that would fail are
    listed (and dropped from a sweep, unless --strict).

    \b
    Example:
      interregion preflight --clouds aws,gcp --max-regions 8 --gcp-project my-project
      interregion preflight --regions aws:us-east-1,gcp:us-east4 --json
    """
    from orchestrator.clouds.preflight import check_selection_on_clouds

    result = check_selection_on_clouds(
        selection_from(kwargs),
        cloud_flags_from(kwargs),
        catalog_path=catalog,
        results=paths.RESULTS,
        note=_note,
        warn=_warn,
    )
    if as_json:
        emit(result.to_json())
        return
    for cloud, who in sorted(result.identities.items()):
        click.echo(f"{cloud}: {who}")
    for region in result.regions:
        zone = result.zone(region)
        click.echo(f"ok       {region.key}{'  zone ' + zone if zone else ''}")
    for key, why in result.dropped:
        click.echo(f"dropped  {key}: {why}")
    click.echo(f"{log.counted(len(result.regions), 'region')} ready, {len(result.dropped)} dropped")


@click.command("sync")
@click.option("--clouds", default=",".join(CLOUDS), show_default=True, help="Clouds to ask.")
@account_options
@_catalog_option
@json_option
def regions_sync_command(
    clouds: str, gcp_project: str | None, aws_profile: str | None, catalog: Path, as_json: bool
) -> None:
    """Compare the regions the clouds offer with regions.yaml.

    Lists regions missing from the catalog, catalog regions the account does
    not see, AWS opt-in regions not enabled for the account, and AWS machine types
    whose baseline or burst bandwidth in regions.yaml differs from the EC2 API's.

    \b
    Example:
      interregion regions sync --clouds aws
      interregion regions sync --json
    """
    from orchestrator.clouds.sync import sync_catalog

    report = sync_catalog(
        catalog, _clouds(clouds), gcp_project=gcp_project, aws_profile=aws_profile
    )
    for line in report.skipped:
        _warn(f"skipped {line}")
    if as_json:
        emit(asdict(report))
        return
    for key in report.missing:
        click.echo(f"missing from regions.yaml: {key}")
    for key in report.stale:
        click.echo(f"not offered to this account: {key}")
    for key in report.not_enabled:
        click.echo(f"opt-in region not enabled: {key}")
    for line in report.bandwidth:
        click.echo(f"machine type bandwidth differs: {line}")
    if not (report.missing or report.stale):
        click.echo("regions.yaml lists every region the clouds offer")


@click.command("reap")
@click.option(
    "--older-than",
    default=None,
    metavar="AGE",
    help="Reap resources created longer ago than this (e.g. 2h) instead of expired ones.",
)
@click.option("--sweep", "sweep_id", default=None, help="Reap every resource of this sweep.")
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@json_option
@click.option("--clouds", default=",".join(CLOUDS), show_default=True, help="Clouds to reap.")
@click.option(
    "--aws-region", "aws_regions", multiple=True, help="Only these AWS regions (repeatable)."
)
@account_options
def reap_command(
    older_than: str | None,
    sweep_id: str | None,
    dry_run: bool,
    as_json: bool,
    clouds: str,
    aws_regions: tuple[str, ...],
    gcp_project: str | None,
    aws_profile: str | None,
) -> None:
    """Delete interregion resources a crashed sweep left on the clouds.

    Finds instances, addresses, key pairs, security groups, firewall rules
    and networks tagged project=interregion whose expires_utc has passed (or
    older than --older-than, or of one --sweep) and deletes them.

    \b
    Example:
      interregion reap --dry-run
      interregion reap --dry-run --json
      interregion reap --older-than 2h
      interregion reap --sweep 20261122T0130Z-3fa2
    """
    from orchestrator.clouds.reap import reap_clouds

    report = reap_clouds(
        _clouds(clouds),
        sweep_id=sweep_id,
        older_than=older_than,
        dry_run=dry_run,
        aws_regions=aws_regions,
        gcp_project=gcp_project,
        aws_profile=aws_profile,
        warn=_warn,
    )
    for line in report.skipped_clouds:
        _warn(f"skipped {line}")
    if as_json:
        emit(report.to_json(dry_run))
    else:
        verb = "would delete" if dry_run else "found"
        for item in report.due:
            click.echo(f"{verb} {item.describe()}")
        if dry_run:
            click.echo(f"{len(report.due)} resources due; nothing deleted (--dry-run)")
        else:
            click.echo(f"deleted {len(report.deleted)} of {len(report.due)} resources due")
    if not dry_run and len(report.deleted) < len(report.due):
        raise RunFailure("some resources could not be deleted (see warnings): run reap again")


# `regions sync` is attached to the `regions` group (cli/plan.py) by cli/__init__.py.
COMMANDS: list[click.Command] = [preflight_command, reap_command]
