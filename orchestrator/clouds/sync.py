"""`regions sync`: what the clouds offer against what `regions.yaml` lists."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from orchestrator.catalog import Catalog
from orchestrator.clouds import aws, gcp
from orchestrator.errors import UserError


@dataclass
class SyncReport:
    missing: list[str] = field(default_factory=list)  # offered, not in the catalog
    stale: list[str] = field(default_factory=list)  # in the catalog, not offered
    not_enabled: list[str] = field(default_factory=list)  # AWS opt-in regions not enabled
    skipped: list[str] = field(default_factory=list)  # "aws: no credentials ..."


def compare(catalog_ids: set[str], offered: set[str], cloud: str) -> tuple[list[str], list[str]]:
    """(missing, stale) as cloud:region keys, sorted."""
    missing = sorted(f"{cloud}:{r}" for r in offered - catalog_ids)
    stale = sorted(f"{cloud}:{r}" for r in catalog_ids - offered)
    return missing, stale


def sync(
    catalog: Catalog,
    clouds: Sequence[str] = ("aws", "gcp"),
    *,
    aws_api: Callable[[], aws.AwsApi] | None = None,
    gcp_api: Callable[[], gcp.GcpApi] | None = None,
    required: bool = False,
) -> SyncReport:
    report = SyncReport()
    for cloud in clouds:
        ids = {r.id for r in catalog.in_clouds([cloud])}
        try:
            if cloud == "aws":
                status = aws.region_status((aws_api or aws.AwsApi)())
                offered = set(status)
                report.not_enabled += sorted(
                    f"aws:{r}" for r, s in status.items() if s == "not-opted-in"
                )
            else:
                offered = set(gcp.regions((gcp_api or gcp.GcpApi)()))
        except UserError as e:
            if required:
                raise
            report.skipped.append(f"{cloud}: {e}")
            continue
        missing, stale = compare(ids, offered, cloud)
        report.missing += missing
        report.stale += stale
    return report
