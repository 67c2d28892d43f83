"""`interregion preflight`, `regions sync` and `reap`: their results as lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.core import counted

if TYPE_CHECKING:  # their modules import the cloud SDKs (~1 s): only the commands that talk
    # to a cloud pay for that
    from orchestrator.clouds import PreflightResult, ReapReport, SyncReport


def preflight_lines(result: PreflightResult) -> list[str]:
    """Who each cloud says we are, each region ready (and its zone) or dropped (and why)."""
    zones = [(r.key, result.zone(r)) for r in result.regions]
    return [
        *(f"{cloud}: {who}" for cloud, who in sorted(result.identities.items())),
        *(f"ok       {key}{'  zone ' + zone if zone else ''}" for key, zone in zones),
        *(f"dropped  {key}: {why}" for key, why in result.dropped),
        f"{counted(len(result.regions), 'region')} ready, {len(result.dropped)} dropped",
    ]


def sync_lines(report: SyncReport) -> list[str]:
    """The catalog's differences with what the clouds offer."""
    lines = [
        *(f"missing from regions.yaml: {key}" for key in report.missing),
        *(f"not offered to this account: {key}" for key in report.stale),
        *(f"opt-in region not enabled: {key}" for key in report.not_enabled),
        *(f"machine type bandwidth differs: {line}" for line in report.bandwidth),
    ]
    if not (report.missing or report.stale):
        lines.append("regions.yaml lists every region the clouds offer")
    return lines


def reap_lines(report: ReapReport, dry_run: bool) -> list[str]:
    """Each resource due, and how many were deleted (none with `dry_run`)."""
    verb = "would delete" if dry_run else "found"
    done = (
        f"{len(report.due)} resources due; nothing deleted (--dry-run)"
        if dry_run
        else f"deleted {len(report.deleted)} of {len(report.due)} resources due"
    )
    return [*(f"{verb} {item.describe()}" for item in report.due), done]
