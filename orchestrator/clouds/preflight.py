"""Preflight: before anything is spent, check credentials, regions, machine types,
quotas and images for the selected cloud regions.

Gathering facts talks to the clouds (aws.py, gcp.py); judging them is pure
(`aws_problems`, `gcp_problems`). A region with a problem is dropped from the
sweep with a warning, or fails the whole sweep with `strict`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.clouds import aws, gcp
from orchestrator.clouds.cloud_flags import CloudFlags, cloud_options_from
from orchestrator.clouds.stacks import DEFAULT_AMI_PARAMETER
from orchestrator.clouds.sync import bandwidth_differences
from orchestrator.core import UserError
from orchestrator.model import Region, load_catalog
from orchestrator.plan import SelectionSpec, check_selection

Warn = Callable[[str], None]


@dataclass(frozen=True)
class PreflightResult:
    regions: tuple[Region, ...]  # those that passed, in the order given
    dropped: tuple[tuple[str, str], ...] = ()  # (cloud:region, why)
    gcp_zones: dict[str, str] = field(default_factory=dict)  # region id -> zone to use
    identities: dict[str, str] = field(default_factory=dict)  # cloud -> account ARN / project

    def zone(self, region: Region) -> str:
        """The zone preflight picked for a GCP region ('' elsewhere)."""
        return str(self.gcp_zones.get(region.id, "")) if region.cloud == "gcp" else ""

    def to_json(self) -> dict[str, object]:
        """What `preflight --json` prints."""
        return {
            "identities": dict(sorted(self.identities.items())),
            "ready": [{"region": r.key, "zone": self.zone(r)} for r in self.regions],
            "dropped": [{"region": key, "reason": why} for key, why in self.dropped],
        }


def _free(quota: tuple[float, float] | None) -> float | None:
    return None if quota is None else quota[0] - quota[1]


def aws_problems(key: str, facts: aws.RegionFacts, ami_parameter: str) -> list[str]:
    """Why one AWS region cannot host its VM; empty if it can."""
    if facts.opt_in_status == "":
        return [f"{key} is not offered to this AWS account: leave it out with --exclude {key}"]
    if facts.opt_in_status == "not-opted-in":
        return [
            f"{key} is an opt-in region not enabled for this AWS account: enable it "
            f"(console: Account > AWS Regions) or leave it out with --exclude {key} or --no-opt-in"
        ]
    problems = []
    if facts.machine_type_vcpus is None:
        problems.append(
            f"{key}: unknown machine type '{facts.machine_type}': pick an EC2 instance type "
            "(e.g. t3.small) with --aws-machine-type"
        )
    elif not facts.machine_type_offered:
        problems.append(f"{key}: machine type {facts.machine_type} is not offered in this region")
    needed = facts.machine_type_vcpus or 0
    if facts.vcpu_quota is not None and facts.vcpus_in_use + needed > facts.vcpu_quota:
        problems.append(
            f"{key}: vCPU quota exceeded: needs {needed}, {facts.vcpus_in_use} of "
            f"{facts.vcpu_quota:g} in use: request more (Service Quotas {aws.VCPU_QUOTA_CODE}) "
            "or leave the region out"
        )
    if facts.eip_quota is not None and facts.eips_in_use + 1 > facts.eip_quota:
        problems.append(
            f"{key}: Elastic IP quota exceeded: {facts.eips_in_use} of {facts.eip_quota:g} "
            f"in use: release some or request more (Service Quotas {aws.EIP_QUOTA_CODE})"
        )
    if not facts.ami_id:
        problems.append(f"{key}: no Debian 12 AMI at SSM parameter {ami_parameter}")
    if not facts.default_vpc:
        problems.append(
            f"{key}: no default VPC: create one with "
            f"'aws ec2 create-default-vpc --region {facts.region}'"
        )
    return problems


def gcp_problems(key: str, facts: gcp.RegionFacts) -> list[str]:
    """Why one GCP region cannot host its VM; empty if it can."""
    if facts.status == "":
        return [f"{key} is not offered to this GCP project: leave it out with --exclude {key}"]
    if facts.status != "UP":
        return [f"{key} is {facts.status}: leave it out with --exclude {key} or retry later"]
    if facts.machine_type_cpus is None:
        return [
            f"{key}: unknown machine type '{facts.machine_type}' (no UP zone of the region "
            "offers it): pick one (e.g. e2-small) with --gcp-machine-type"
        ]
    problems = []
    needs = {"CPUS": facts.machine_type_cpus, "IN_USE_ADDRESSES": 1, "STATIC_ADDRESSES": 1}
    for metric, needed in needs.items():
        free = _free(facts.quotas.get(metric))
        if free is not None and free < needed:
            limit, usage = facts.quotas[metric]
            problems.append(
                f"{key}: {metric} quota exceeded: needs {needed}, {usage:g} of {limit:g} in use: "
                "request more (IAM & Admin > Quotas) or leave the region out"
            )
    return problems


def aws_bandwidth_warnings(api: aws.AwsApi, region: str, machine_type: str) -> list[str]:
    """What the EC2 API says of the machine type's baseline and burst against regions.yaml:
    the plan's allowance check read the catalog, so a difference (or a type it does not
    list) is worth a line."""
    listed = load_catalog().bandwidth
    live = aws.network_bandwidth(api, region, [machine_type])
    if machine_type not in listed:
        if machine_type not in live:
            return []
        baseline, burst = live[machine_type]
        return [
            f"{machine_type} is not in regions.yaml machine_types (EC2: {baseline / 1e9:g} "
            f"Gbit/s baseline, {burst / 1e9:g} burst): the plan could not check its allowance"
        ]
    return [
        f"machine type bandwidth: {line}"
        for line in bandwidth_differences({machine_type: listed[machine_type]}, live)
    ]


def _split(regions: Sequence[Region]) -> tuple[list[Region], list[Region]]:
    return [r for r in regions if r.cloud == "aws"], [r for r in regions if r.cloud == "gcp"]


def preflight(
    regions: Sequence[Region],
    machine_types: Mapping[str, str],
    *,
    aws_api: Callable[[], aws.AwsApi] | None = None,
    gcp_api: Callable[[], gcp.GcpApi] | None = None,
    strict: bool = False,
    warn: Warn,
    ami_parameter: str = DEFAULT_AMI_PARAMETER,
) -> PreflightResult:
    """Check every selected cloud region; drop (or, strict, fail on) those with problems.

    Missing credentials are always an error: nothing can be checked without them.
    """
    aws_regions, gcp_regions = _split(regions)
    problems: dict[str, list[str]] = {}
    identities: dict[str, str] = {}
    zones: dict[str, str] = {}

    if aws_regions:
        api = (aws_api or aws.AwsApi)()
        identities["aws"] = aws.whoami(api)
        status = aws.region_status(api)
        for r in aws_regions:
            facts = aws.region_facts(api, r.id, machine_types["aws"], status, ami_parameter)
            problems[r.key] = aws_problems(r.key, facts, ami_parameter)
        for line in aws_bandwidth_warnings(api, aws_regions[0].id, machine_types["aws"]):
            warn(line)

    if gcp_regions:
        gapi = (gcp_api or gcp.GcpApi)()
        identities["gcp"] = gapi.project
        known = gcp.regions(gapi)
        zones_up = gcp.zone_status(gapi)
        cpus_needed = 0.0
        for r in gcp_regions:
            gfacts = gcp.region_facts(gapi, r.id, r.zone, machine_types["gcp"], known, zones_up)
            problems[r.key] = gcp_problems(r.key, gfacts)
            if not problems[r.key]:
                zones[r.id] = gfacts.zone
                cpus_needed += gfacts.machine_type_cpus or 0
                if gfacts.zone != r.zone:
                    warn(f"{r.key}: zone {r.zone} cannot host the VM, using {gfacts.zone}")
        free = _free(gcp.project_quotas(gapi).get("CPUS_ALL_REGIONS"))
        if free is not None and cpus_needed > free:
            raise UserError(
                f"GCP CPUS_ALL_REGIONS quota exceeded: the sweep needs {cpus_needed:g} vCPUs, "
                f"{free:g} are free: request more (IAM & Admin > Quotas) or select fewer regions"
            )

    failing = [(key, lines) for key, lines in problems.items() if lines]
    if failing and strict:
        lines = failing[0][1]
        more = sum(len(ls) for _, ls in failing) - 1
        raise UserError(lines[0] + (f" (and {more} more problems)" if more else ""))
    for _key, lines in failing:
        for line in lines:
            warn(f"{line}; dropped from the sweep (--strict to fail instead)")
    kept = tuple(r for r in regions if not problems.get(r.key))
    if not kept:
        raise UserError(f"no selected region passed preflight: {failing[0][1][0]}")
    return PreflightResult(
        regions=kept,
        dropped=tuple((key, lines[0]) for key, lines in failing),
        gcp_zones={k: v for k, v in zones.items() if any(r.id == k for r in kept)},
        identities=identities,
    )


def check_selection_on_clouds(
    selection: SelectionSpec,
    flags: CloudFlags,
    *,
    catalog_path: Path,
    results: Path,
    note: Warn,
    warn: Warn,
) -> PreflightResult:
    """`interregion preflight`: the selection's regions checked on their clouds with the
    cloud flags' account, machine types and strictness; nothing created."""
    if flags.pin_from:
        raise UserError("--pin-from applies to sweep and provision: preflight checks the regions")
    catalog = load_catalog(catalog_path)
    regions = list(check_selection(catalog, selection, None, note).regions)
    options = cloud_options_from(flags, results)  # no --pin-from
    with aws.network_errors(), gcp.network_errors():
        return preflight(
            regions,
            {**catalog.machine_types, **options.machine_types},
            aws_api=lambda: aws.AwsApi(profile=options.aws_profile),
            gcp_api=lambda: gcp.GcpApi(options.gcp_project),
            strict=options.strict,
            warn=warn,
        )
