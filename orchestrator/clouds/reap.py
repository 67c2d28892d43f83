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
from orchestrator.clouds.leftovers import Leftover, due, parse_age
from orchestrator.core import UserError

Warn = Callable[[str], None]


@dataclass
class ReapReport:
    due: list[Leftover] = field(default_factory=list)
    deleted: list[Leftover] = field(default_factory=list)
    skipped_clouds: list[str] = field(default_factory=list)  # "aws: why"

    def to_json(self, dry_run: bool) -> dict[str, object]:
        """What `reap --json` prints."""
        return {
            "dry_run": dry_run,
            "due": [item.to_json() for item in self.due],
            "deleted": [item.to_json() for item in self.deleted],
            "skipped_clouds": self.skipped_clouds,
        }


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


def reap_clouds(
    clouds: Sequence[str],
    *,
    sweep_id: str | None = None,
    older_than: str | None = None,
    dry_run: bool = False,
    aws_regions: Sequence[str] = (),
    gcp_project: str | None = None,
    aws_profile: str | None = None,
    warn: Warn,
    now: datetime | None = None,
) -> ReapReport:
    """`interregion reap`: what crashed sweeps left on `clouds` found (expired, older than
    `older_than` ("2h"), or of one sweep) and, unless `dry_run`, deleted; one line when
    no cloud asked for can be used (the others skipped are on the report, each `warn`ed)."""
    if older_than and sweep_id:
        raise UserError("--older-than and --sweep select differently: give one of them")
    with aws.network_errors(), gcp.network_errors():
        report = reap(
            clouds,
            sweep_id=sweep_id,
            older_than=parse_age(older_than) if older_than else None,
            dry_run=dry_run,
            now=now or datetime.now(UTC),
            aws_api=lambda: aws.AwsApi(profile=aws_profile),
            gcp_api=lambda: gcp.GcpApi(gcp_project),
            aws_regions=aws_regions or None,
            required=len(clouds) == 1,
            warn=warn,
        )
    if len(report.skipped_clouds) == len(clouds):
        raise UserError("no cloud can be used: " + "; ".join(report.skipped_clouds))
    for line in report.skipped_clouds:
        warn(f"skipped {line}")
    return report
