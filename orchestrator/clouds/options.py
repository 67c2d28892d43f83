"""The flags of a sweep on the real clouds, and the CloudOptions they make.

`cloud_options` adds them to a click command (sweep, study, preflight) and
`cloud_options_from(**kwargs)` turns them into a clouds.launch.CloudOptions (other
keyword arguments are ignored), checked before any folder is made: operator CIDR, TTL,
project, profile, network tier, machine types, strict, and the zones and images pinned
from an earlier sweep. Profiles (orchestrator.schedule.profiles) read theirs the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import CLOUDS
from orchestrator.model.hosts import pins_from_file
from orchestrator.results import store

if TYPE_CHECKING:
    from orchestrator.clouds.launch import CloudOptions

F = TypeVar("F", bound=Callable[..., Any])


def account_options(f: F) -> F:
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
    return account_options(f)


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
    # given by region (a profile's `zones:`, `images:`): over what the earlier sweep had
    zones = {**zones, **dict(kwargs.get("zones") or {})}
    images = {**images, **dict(kwargs.get("images") or {})}
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
