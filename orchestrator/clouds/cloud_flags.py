"""The flags of a sweep on the real clouds (`CloudFlags`, as given), and the CloudOptions
they make (`cloud_options_from`), checked before any folder is made: operator CIDR, TTL,
project, profile, network tier, machine types, strict, and the zones and images pinned
from an earlier sweep. The CLI (orchestrator.cli.options) and the profiles file
(orchestrator.schedule.profiles) fill the same CloudFlags.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.core import UserError
from orchestrator.model import CLOUDS, pins_from_file
from orchestrator.results import HOSTS_FILE, NETWORK_TIERS, CloudOptions, sweep_dir


@dataclass(frozen=True)
class CloudFlags:
    """The cloud flags of a sweep as given (None: not given)."""

    operator_cidr: str | None = None
    ttl: str | None = None  # e.g. 3h; parsed by cloud_options_from
    network_tier: str = "premium"
    aws_machine_type: str | None = None
    gcp_machine_type: str | None = None
    strict: bool = False
    pin_from: str | None = None  # an earlier sweep's id
    # given by region (a profile's `zones:`, `images:`): over what the earlier sweep had
    zones: Mapping[str, str] = field(default_factory=dict)
    images: Mapping[str, str] = field(default_factory=dict)
    gcp_project: str | None = None
    aws_profile: str | None = None

    def __post_init__(self) -> None:
        if self.network_tier.lower() not in NETWORK_TIERS:
            raise UserError(
                f"--network-tier '{self.network_tier}' is not one of {', '.join(NETWORK_TIERS)}"
            )

    @property
    def machine_types(self) -> dict[str, str]:
        """The per-cloud machine types given, by cloud."""
        given = {"aws": self.aws_machine_type, "gcp": self.gcp_machine_type}
        return {cloud: kind for cloud in CLOUDS if (kind := given.get(cloud))}


def require_sdks(clouds: Iterable[str]) -> None:
    """Each cloud's SDK importable (`aws`: boto3, `gcp`: google-cloud-compute), else the
    one-line error naming the extra that brings it: checked before any folder is made."""
    for cloud in clouds:
        importlib.import_module(f"orchestrator.clouds.{cloud}")  # raises missing_extra


def cloud_options_from(flags: CloudFlags, results: Path) -> CloudOptions:
    """The CloudOptions the flags make; --pin-from reads that sweep's hosts.json in `results`."""
    from orchestrator.clouds import stacks

    zones: dict[str, str] = {}
    images: dict[str, str] = {}
    if flags.pin_from:
        hosts_file = sweep_dir(results, flags.pin_from) / HOSTS_FILE
        if not hosts_file.parent.is_dir():
            raise UserError(f"--pin-from {flags.pin_from}: no such sweep in {results}")
        zones, images = pins_from_file(hosts_file, flags.pin_from)
    return CloudOptions(
        # checked now, before any folder is made (detecting it is provision's business)
        operator_cidr=stacks.operator_cidr(flags.operator_cidr) if flags.operator_cidr else None,
        ttl_minutes=stacks.parse_ttl(flags.ttl) if flags.ttl else None,
        gcp_project=flags.gcp_project,
        aws_profile=flags.aws_profile,
        network_tier=flags.network_tier.upper(),
        machine_types=flags.machine_types,
        strict=flags.strict,
        zones={**zones, **flags.zones},
        images={**images, **flags.images},
        pinned_from=flags.pin_from,
    )
