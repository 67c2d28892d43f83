"""The reaper: delete what crashed sweeps left on the clouds.

Everything the stacks create is tagged (AWS) or labelled (GCP) with
project=interregion and the sweep's times; `reap` lists those resources,
picks the due ones (expired, older than an age, or of one sweep) and deletes
them in dependency order. A dry run only lists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from orchestrator.clouds import aws, gcp
from orchestrator.clouds.leftovers import Leftover, due
from orchestrator.core.errors import UserError

Warn = Callable[[str], None]


@dataclass
class ReapReport:
    due: list[Leftover] = field(default_factory=list)
    deleted: list[Leftover] = field(default_factory=list)
    skipped_clouds: list[str] = field(default_factory=list)  # "aws: why"


def reap(
    clouds: Sequence[str] = ("aws", "gcp"),
    *,
    sweep_id: str | None = None,
    older_than: timedelta | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
    aws_api: Callable[[], aws.AwsApi] | None = None,
    gcp_api: Callable[[], gcp.GcpApi] | None = None,
    aws_regions: Sequence[str] | None = None,
    required: bool = False,
    warn: Warn,
) -> ReapReport:
    """Find and (unless dry_run) delete due resources on the given clouds.

    A cloud without credentials is skipped with a note, unless `required`
    (the user named that cloud explicitly), when it is an error.
    """
    moment = now or datetime.now(UTC)
    report = ReapReport()

    def pick(found: list[Leftover]) -> list[Leftover]:
        return [x for x in found if due(x.tags, moment, sweep_id, older_than)]

    if "aws" in clouds:
        try:
            api = (aws_api or aws.AwsApi)()
            aws.whoami(api)
            regions = list(aws_regions or aws.enabled(aws.region_status(api)))
        except UserError as e:
            if required:
                raise
            report.skipped_clouds.append(f"aws: {e}")
            regions = []
        for region in regions:
            chosen = pick(aws.find_leftovers(api, region))
            report.due += chosen
            if chosen and not dry_run:
                report.deleted += aws.delete_leftovers(api, region, chosen, warn)

    if "gcp" in clouds:
        try:
            gapi = (gcp_api or gcp.GcpApi)()
            chosen = pick(gcp.find_leftovers(gapi))
        except UserError as e:
            if required:
                raise
            report.skipped_clouds.append(f"gcp: {e}")
            chosen = []
        report.due += chosen
        if chosen and not dry_run:
            report.deleted += gcp.delete_leftovers(gapi, chosen, warn)
    return report


def leftover_warnings(
    clouds: Sequence[str],
    warn: Warn,
    *,
    now: datetime | None = None,
    aws_api: Callable[[], aws.AwsApi] | None = None,
    gcp_api: Callable[[], gcp.GcpApi] | None = None,
    aws_regions: Sequence[str] | None = None,
) -> list[str]:
    """What `sweep` says before provisioning: expired resources still on the clouds.

    A dry run; clouds without credentials are quietly skipped here (the sweep's
    own preflight reports them).
    """
    report = reap(
        clouds,
        dry_run=True,
        now=now,
        aws_api=aws_api,
        gcp_api=gcp_api,
        aws_regions=aws_regions,
        warn=warn,
    )
    if not report.due:
        return []
    return [
        f"{len(report.due)} expired interregion resources are still on the clouds "
        "(they cost money): run 'interregion reap' to delete them",
        *(f"  {x.describe()}" for x in report.due),
    ]
