"""CLI commands for the real clouds: preflight, regions sync, reap.

`cloud_options` / `cloud_options_from` give `sweep --backend aws|gcp|cloud` the
same cloud flags (operator CIDR, TTL, project, profile, tier, machine types,
strict).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from orchestrator.cli.options import (
    check_selection,
    parse_clouds,
    selection_options,
    spec_from_options,
)
from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import CLOUDS, load_catalog
from orchestrator.model.hosts import pins_from_file
from orchestrator.results import store

if TYPE_CHECKING:
    from orchestrator.clouds.launch import CloudOptions

# The cloud SDKs (boto3, google-cloud-compute) are imported inside the commands that
# talk to a cloud: importing them took ~1 s, which every command, even --help, paid.

F = TypeVar("F", bound=Callable[..., Any])


def _warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def _note(message: str) -> None:
    click.echo(f"note: {message}", err=True)


def _account_options(f: F) -> F:
    f = click.option(
        "--gcp-project", default=None, help="GCP project (default: GOOGLE_CLOUD_PROJECT or ADC)."
    )(f)
    f = click.option("--aws-profile", default=None, help="AWS profile (default: AWS_PROFILE).")(f)
    return f


def cloud_options(f: F) -> F:
    """Add the flags of a sweep on real clouds to a click command."""
    options = [
        click.option(
            "--operator-cidr",
            default=None,
            metavar="CIDR",
            help="Address SSH is opened to (default: your detected public address /32).",
        ),
        click.option(
            "--ttl",
            default=None,
            metavar="DURATION",
            help="Dead-man switch: hosts delete themselves after this (e.g. 3h; "
            "default: (the estimate + 15 min) x 1.5, 30 min to 2 days).",
        ),
        click.option(
            "--network-tier",
            type=click.Choice(["premium", "standard"], case_sensitive=False),
            default="premium",
            show_default=True,
            help="GCP network tier of the hosts' addresses.",
        ),
        click.option("--aws-machine-type", default=None, help="Override the catalog's AWS type."),
        click.option("--gcp-machine-type", default=None, help="Override the catalog's GCP type."),
        click.option(
            "--strict",
            is_flag=True,
            help="Fail when a region fails preflight instead of dropping it with a warning.",
        ),
        click.option(
            "--pin-from",
            default=None,
            metavar="SWEEP_ID",
            help="Run each host in the zone and on the image its region's host had in that "
            "earlier sweep (read from its hosts.json).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return _account_options(f)


def cloud_options_from(**kwargs: Any) -> CloudOptions:
    """CloudOptions from the keyword arguments click passes; others are ignored."""
    from orchestrator.clouds import stacks
    from orchestrator.clouds.launch import CloudOptions

    overrides = {
        cloud: kwargs[f"{cloud}_machine_type"]
        for cloud in CLOUDS
        if kwargs.get(f"{cloud}_machine_type")
    }
    ttl = kwargs.get("ttl")
    pin_from = kwargs.get("pin_from")
    zones: dict[str, str] = {}
    images: dict[str, str] = {}
    if pin_from:
        results = Path(kwargs.get("results") or paths.RESULTS)
        hosts_file = store.sweep_dir(results, pin_from) / store.HOSTS_FILE
        if not hosts_file.parent.is_dir():
            raise UserError(f"--pin-from {pin_from}: no such sweep in {results}")
        zones, images = pins_from_file(hosts_file, pin_from)
    given_cidr = kwargs.get("operator_cidr")
    return CloudOptions(
        # checked now, before any folder is made (detecting it is provision's business)
        operator_cidr=stacks.operator_cidr(given_cidr) if given_cidr else None,
        ttl_minutes=stacks.parse_ttl(ttl) if ttl else None,
        gcp_project=kwargs.get("gcp_project"),
        aws_profile=kwargs.get("aws_profile"),
        network_tier=str(kwargs.get("network_tier") or "premium").upper(),
        machine_types=overrides,
        strict=bool(kwargs.get("strict")),
        zones=zones,
        images=images,
        pinned_from=pin_from,
    )


def _clouds(text: str) -> list[str]:
    return list(parse_clouds(text, "--clouds"))


_catalog_option = click.option(
    "--catalog",
    type=click.Path(dir_okay=False, path_type=Path),
    default=paths.CATALOG,
    show_default="regions.yaml",
    help="Region catalog file.",
)


@click.command("preflight")
@selection_options
@cloud_options
@_catalog_option
def preflight_command(catalog: Path, **kwargs: Any) -> None:
    """Check credentials, regions, machine types, quotas and images before a cloud sweep.

    Nothing is created and nothing costs money. Regions that would fail are
    listed (and dropped from a sweep, unless --strict).

    \b
    Example:
      interregion preflight --clouds aws,gcp --max-regions 8 --gcp-project my-project
    """
    if kwargs.get("pin_from"):
        raise UserError("--pin-from applies to sweep and provision: preflight checks the regions")
    from orchestrator.clouds import aws, gcp, preflight

    cat = load_catalog(catalog)
    regions = list(check_selection(cat, spec_from_options(**kwargs), None, _note).regions)
    options = cloud_options_from(**kwargs)
    with aws.network_errors(), gcp.network_errors():
        result = preflight.preflight(
            regions,
            {**cat.machine_types, **options.machine_types},
            aws_api=lambda: aws.AwsApi(profile=options.aws_profile),
            gcp_api=lambda: gcp.GcpApi(options.gcp_project),
            strict=options.strict,
            warn=_warn,
        )
    for cloud, who in sorted(result.identities.items()):
        click.echo(f"{cloud}: {who}")
    for region in result.regions:
        zone = result.gcp_zones.get(region.id, "") if region.cloud == "gcp" else ""
        click.echo(f"ok       {region.key}{'  zone ' + zone if zone else ''}")
    for key, why in result.dropped:
        click.echo(f"dropped  {key}: {why}")
    click.echo(f"{len(result.regions)} regions ready, {len(result.dropped)} dropped")


@click.command("sync")
@click.option("--clouds", default=",".join(CLOUDS), show_default=True, help="Clouds to ask.")
@_account_options
@_catalog_option
def regions_sync_command(
    clouds: str, gcp_project: str | None, aws_profile: str | None, catalog: Path
) -> None:
    """Compare the regions the clouds offer with regions.yaml.

    Lists regions missing from the catalog, catalog regions the account does
    not see, AWS opt-in regions not enabled for the account, and AWS machine types
    whose baseline or burst bandwidth in regions.yaml differs from the EC2 API's.

    \b
    Example:
      interregion regions sync --clouds aws
    """
    from orchestrator.clouds import aws, gcp, sync

    chosen = _clouds(clouds)
    with aws.network_errors(), gcp.network_errors():
        report = sync.sync(
            load_catalog(catalog),
            chosen,
            aws_api=lambda: aws.AwsApi(profile=aws_profile),
            gcp_api=lambda: gcp.GcpApi(gcp_project),
            required=len(chosen) == 1,  # the one cloud asked for: its own error
        )
    if len(report.skipped) == len(chosen):
        raise UserError("no cloud can be used: " + "; ".join(report.skipped))
    for line in report.skipped:
        _warn(f"skipped {line}")
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
@click.option("--clouds", default=",".join(CLOUDS), show_default=True, help="Clouds to reap.")
@click.option(
    "--aws-region", "aws_regions", multiple=True, help="Only these AWS regions (repeatable)."
)
@_account_options
def reap_command(
    older_than: str | None,
    sweep_id: str | None,
    dry_run: bool,
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
      interregion reap --older-than 2h
      interregion reap --sweep 20261122T0130Z-3fa2
    """
    from orchestrator.clouds import aws, gcp, reap
    from orchestrator.clouds.leftovers import parse_age

    if older_than and sweep_id:
        raise UserError("--older-than and --sweep select differently: give one of them")
    chosen = _clouds(clouds)
    with aws.network_errors(), gcp.network_errors():
        report = reap.reap(
            chosen,
            sweep_id=sweep_id,
            older_than=parse_age(older_than) if older_than else None,
            dry_run=dry_run,
            now=datetime.now(UTC),
            aws_api=lambda: aws.AwsApi(profile=aws_profile),
            gcp_api=lambda: gcp.GcpApi(gcp_project),
            aws_regions=aws_regions or None,
            required=len(chosen) == 1,
            warn=_warn,
        )
    if len(report.skipped_clouds) == len(chosen):
        raise UserError("no cloud can be used: " + "; ".join(report.skipped_clouds))
    for line in report.skipped_clouds:
        _warn(f"skipped {line}")
    verb = "would delete" if dry_run else "found"
    for item in report.due:
        click.echo(f"{verb} {item.describe()}")
    if dry_run:
        click.echo(f"{len(report.due)} resources due; nothing deleted (--dry-run)")
    else:
        click.echo(f"deleted {len(report.deleted)} of {len(report.due)} resources due")
        if len(report.deleted) < len(report.due):
            raise UserError("some resources could not be deleted (see warnings): run reap again")


# `regions sync` is attached to the `regions` group (cli/plan.py) by cli/__init__.py.
COMMANDS: list[click.Command] = [preflight_command, reap_command]
