"""The seam `sweep --backend aws|gcp|cloud` calls: preflight, then the stack and its variables.

    stack_dir, variables, checked = prepare(backend, sweep_id, regions, keys,
                                           machine_types, estimate_wall_s, options, warn)
    hosts = TerraformStack(stack_dir, workdir).apply(variables)

`checked.regions` are the regions that passed preflight: the sweep plans its
pairs over those only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.clouds import aws, gcp, preflight, stacks
from orchestrator.clouds.cloud_flags import CloudOptions
from orchestrator.model import Region


def prepare(
    backend: str,
    sweep_id: str,
    regions: Sequence[Region],
    keys: stacks.KeyMaterial,
    machine_types: Mapping[str, str],
    estimate_wall_s: float,
    options: CloudOptions,
    warn: Callable[[str], None],
    *,
    now: datetime | None = None,
    aws_api: Callable[[], aws.AwsApi] | None = None,
    gcp_api: Callable[[], gcp.GcpApi] | None = None,
) -> tuple[Path, dict[str, Any], preflight.PreflightResult]:
    types = {**machine_types, **options.machine_types}
    stacks.check_backend(backend, regions)  # fail before any call to a cloud
    stacks.check_pins(regions, options.zones, options.images)
    checked = preflight.preflight(
        regions,
        types,
        aws_api=aws_api or (lambda: aws.AwsApi(profile=options.aws_profile)),
        gcp_api=gcp_api or (lambda: gcp.GcpApi(options.gcp_project)),
        strict=options.strict,
        warn=warn,
    )
    directory, variables = stacks.stack_variables(
        backend,
        sweep_id,
        checked.regions,
        keys,
        machine_types=types,
        operator_cidr=stacks.operator_cidr(options.operator_cidr),
        ttl_minutes=stacks.ttl_minutes(estimate_wall_s, options.ttl_minutes),
        owner=options.owner or stacks.default_owner(),
        created=now or datetime.now(UTC),
        gcp_project=checked.identities.get("gcp", ""),
        gcp_zones=checked.gcp_zones,
        network_tier=options.network_tier,
        pinned_zones=options.zones,
        pinned_images=options.images,
    )
    for key, zone in sorted(options.zones.items()):
        region_id = key.partition(":")[2]
        moved = checked.gcp_zones.get(region_id)
        if key.startswith("gcp:") and moved and moved != zone:
            warn(f"{key}: keeping the pinned zone {zone} (preflight would use {moved})")
    return directory, variables, checked
