"""`regions sync`: what the clouds offer against what `regions.yaml` lists."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from orchestrator.clouds import aws, gcp
from orchestrator.core import UserError
from orchestrator.model import Catalog, MachineBandwidth, load_catalog

Warn = Callable[[str], None]


@dataclass
class SyncReport:
    missing: list[str] = field(default_factory=list)  # offered, not in the catalog
    stale: list[str] = field(default_factory=list)  # in the catalog, not offered
    not_enabled: list[str] = field(default_factory=list)  # AWS opt-in regions not enabled
    skipped: list[str] = field(default_factory=list)  # "aws: no credentials ..."
    # machine types whose bandwidth in regions.yaml differs from what the cloud says
    bandwidth: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, list[str]]:
        """What `regions sync --json` prints."""
        return asdict(self)


def compare(catalog_ids: set[str], offered: set[str], cloud: str) -> tuple[list[str], list[str]]:
    """(missing, stale) as cloud:region keys, sorted."""
    missing = sorted(f"{cloud}:{r}" for r in offered - catalog_ids)
    stale = sorted(f"{cloud}:{r}" for r in catalog_ids - offered)
    return missing, stale


def bandwidth_differences(
    listed: Mapping[str, MachineBandwidth], live: Mapping[str, tuple[float, float]]
) -> list[str]:
    """One line per listed machine type whose baseline or burst differs from the cloud's
    figures (`live`: type -> (baseline, burst) bit/s), or that the cloud does not know."""
    lines = []
    for name, m in sorted(listed.items()):
        if name not in live:
            lines.append(f"{name}: the {m.cloud} API reports no bandwidth for it")
            continue
        baseline, burst = live[name]
        if not (math.isclose(baseline, m.baseline_bps) and math.isclose(burst, m.burst_bps)):
            lines.append(
                f"{name}: regions.yaml lists {m.baseline_bps / 1e9:g}/{m.burst_bps / 1e9:g} "
                f"Gbit/s baseline/burst, the {m.cloud} API {baseline / 1e9:g}/{burst / 1e9:g}"
            )
    return lines


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
                api = (aws_api or aws.AwsApi)()
                status = aws.region_status(api)
                offered = set(status)
                listed = {k: m for k, m in catalog.bandwidth.items() if m.cloud == "aws"}
                live = aws.network_bandwidth(api, "us-east-1", listed)
                report.bandwidth += bandwidth_differences(listed, live)
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


def sync_catalog(
    catalog_path: Path,
    clouds: Sequence[str],
    *,
    gcp_project: str | None = None,
    aws_profile: str | None = None,
    warn: Warn,
) -> SyncReport:
    """`interregion regions sync`: the regions the clouds offer against the catalog's; one
    line when no cloud asked for can be used (the others skipped are on the report, each
    `warn`ed)."""
    with aws.network_errors(), gcp.network_errors():
        report = sync(
            load_catalog(catalog_path),
            clouds,
            aws_api=lambda: aws.AwsApi(profile=aws_profile),
            gcp_api=lambda: gcp.GcpApi(gcp_project),
            required=len(clouds) == 1,  # the one cloud asked for: its own error
        )
    if len(report.skipped) == len(clouds):
        raise UserError("no cloud can be used: " + "; ".join(report.skipped))
    for line in report.skipped:
        warn(f"skipped {line}")
    return report
