"""AWS through boto3: regions and opt-in status, preflight facts, the reaper.

Every call goes through `AwsApi`, which holds one session and one client per
(service, region); tests hand it moto or botocore-stubbed clients.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

from orchestrator.clouds.labels import PROJECT
from orchestrator.clouds.leftovers import Leftover
from orchestrator.core import RunFailure, UserError, missing_extra

try:
    import boto3
    import botocore.exceptions
except ImportError as e:  # an optional part: the [aws] extra
    raise missing_extra("aws", e) from None

# Service Quotas codes: "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z)
# instances" in vCPUs, and "EC2-VPC Elastic IPs".
VCPU_QUOTA_CODE = "L-1216C47A"
EIP_QUOTA_CODE = "L-0263D0A3"
STANDARD_FAMILIES = tuple("acdhimrtz")
LIVE_STATES = ["pending", "running", "stopping", "stopped"]
RETRY_DELAY_S = 5.0  # between attempts to delete a group still held by a terminating host

NO_CREDENTIALS = (
    "no AWS credentials: set AWS_PROFILE (see 'aws configure sso') or "
    "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, then retry"
)


# What botocore raises when no answer comes back (refused, no route, DNS, proxy, TLS,
# timeouts): botocore.exceptions.ConnectionError and HTTPClientError and their subclasses
# (EndpointConnectionError, ConnectTimeoutError, ReadTimeoutError, ...), after its retries.
NETWORK_ERRORS = (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError)


def unreachable(error: botocore.exceptions.BotoCoreError) -> UserError:
    """One line for a network failure, naming the endpoint botocore could not reach."""
    found: dict[str, Any] = getattr(error, "kwargs", {})
    timed_out = "Timeout" in type(error).__name__
    if found.get("proxy_url"):
        where = f"through the proxy {found['proxy_url']}"
    else:
        where = f"at {found.get('endpoint_url') or 'its endpoint'}"
    why = "timed out" if timed_out else "no connection"
    return RunFailure(
        f"cannot reach AWS {where} ({why}): check the network connection "
        "(and HTTPS_PROXY / AWS_ENDPOINT_URL if set), then retry"
    )


@contextmanager
def network_errors() -> Iterator[None]:
    """Turn botocore's network failures into one-line UserErrors."""
    try:
        yield
    except NETWORK_ERRORS as e:
        raise unreachable(e) from None


class AwsApi:
    """One boto3 session, clients made on first use per (service, region)."""

    def __init__(self, session: Any = None, profile: str | None = None) -> None:
        try:
            self.session = session or boto3.Session(profile_name=profile)
        except botocore.exceptions.ProfileNotFound as e:
            # With AWS_PROFILE set, `profile` is None: the exception knows the name.
            name = getattr(e, "kwargs", {}).get("profile") or profile
            source = "--aws-profile" if profile else "AWS_PROFILE"
            config = os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config"
            raise UserError(
                f"AWS profile '{name}' (from {source}) is not in {config}: "
                f"fix {source}, or add the profile ('aws configure --profile {name}')"
            ) from None
        self._clients: dict[tuple[str, str], Any] = {}

    def client(self, service: str, region: str) -> Any:
        key = (service, region)
        if key not in self._clients:
            self._clients[key] = self.session.client(service, region_name=region)
        return self._clients[key]

    def use(self, service: str, region: str, client: Any) -> None:
        """Put a ready client in place (tests: a botocore Stubber's client)."""
        self._clients[(service, region)] = client


def _code(error: botocore.exceptions.ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def whoami(api: AwsApi, region: str = "us-east-1") -> str:
    """The caller's ARN; missing or invalid credentials are a one-line error."""
    try:
        with network_errors():
            return str(api.client("sts", region).get_caller_identity()["Arn"])
    except botocore.exceptions.NoCredentialsError:
        raise UserError(NO_CREDENTIALS) from None
    except botocore.exceptions.ClientError as e:
        raise UserError(
            f"AWS rejected the credentials ({_code(e)}): refresh them "
            "(e.g. 'aws sso login') and retry"
        ) from None


def region_status(api: AwsApi, region: str = "us-east-1") -> dict[str, str]:
    """Every region of the partition and its opt-in status:
    opt-in-not-required, opted-in or not-opted-in."""
    try:
        with network_errors():
            regions = api.client("ec2", region).describe_regions(AllRegions=True)["Regions"]
    except botocore.exceptions.NoCredentialsError:
        raise UserError(NO_CREDENTIALS) from None
    return {r["RegionName"]: r.get("OptInStatus", "opt-in-not-required") for r in regions}


def enabled(status: dict[str, str]) -> list[str]:
    return sorted(r for r, s in status.items() if s != "not-opted-in")


def _quota(api: AwsApi, region: str, code: str) -> float | None:
    client = api.client("service-quotas", region)
    try:
        return float(client.get_service_quota(ServiceCode="ec2", QuotaCode=code)["Quota"]["Value"])
    except botocore.exceptions.ClientError as e:
        if _code(e) != "NoSuchResourceException":
            raise
    try:
        quota = client.get_aws_default_service_quota(ServiceCode="ec2", QuotaCode=code)
        return float(quota["Quota"]["Value"])
    except botocore.exceptions.ClientError as e:
        if _code(e) != "NoSuchResourceException":
            raise
    return None


def vcpus_of(api: AwsApi, region: str, instance_types: Iterable[str]) -> dict[str, int]:
    """Default vCPUs of each instance type; unknown types are left out."""
    wanted = sorted(set(instance_types))
    if not wanted:
        return {}
    ec2 = api.client("ec2", region)
    try:
        found = ec2.describe_instance_types(InstanceTypes=wanted)["InstanceTypes"]
    except botocore.exceptions.ClientError as e:
        if _code(e) != "InvalidInstanceType":
            raise
        found = []
        for t in wanted:  # one bad name fails the whole call: ask one by one
            try:
                found += ec2.describe_instance_types(InstanceTypes=[t])["InstanceTypes"]
            except botocore.exceptions.ClientError as inner:
                if _code(inner) != "InvalidInstanceType":
                    raise
    return {t["InstanceType"]: int(t["VCpuInfo"]["DefaultVCpus"]) for t in found}


def network_bandwidth(
    api: AwsApi, region: str, instance_types: Iterable[str]
) -> dict[str, tuple[float, float]]:
    """{instance type: (baseline, peak) in bit/s} from DescribeInstanceTypes'
    NetworkInfo.NetworkCards (summed over a type's cards); types the API does not know,
    or that report no baseline, are left out."""
    wanted = sorted(set(instance_types))
    if not wanted:
        return {}
    ec2 = api.client("ec2", region)
    found = []
    for t in wanted:  # one unknown name fails a whole call: ask one by one
        try:
            found += ec2.describe_instance_types(InstanceTypes=[t])["InstanceTypes"]
        except botocore.exceptions.ClientError as e:
            if _code(e) != "InvalidInstanceType":
                raise
    out = {}
    for item in found:
        cards = (item.get("NetworkInfo") or {}).get("NetworkCards") or []
        baseline = sum(float(c.get("BaselineBandwidthInGbps") or 0) for c in cards)
        peak = sum(float(c.get("PeakBandwidthInGbps") or 0) for c in cards)
        if baseline > 0:
            out[item["InstanceType"]] = (baseline * 1e9, max(peak, baseline) * 1e9)
    return out


def offered(api: AwsApi, region: str, instance_type: str) -> bool:
    offers = api.client("ec2", region).describe_instance_type_offerings(
        LocationType="region", Filters=[{"Name": "instance-type", "Values": [instance_type]}]
    )["InstanceTypeOfferings"]
    return any(o["InstanceType"] == instance_type for o in offers)


def _instances(api: AwsApi, region: str, filters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pages = api.client("ec2", region).get_paginator("describe_instances").paginate(Filters=filters)
    return [i for page in pages for r in page["Reservations"] for i in r["Instances"]]


def standard_vcpus_in_use(api: AwsApi, region: str) -> int:
    """vCPUs of the running standard-family instances (what the vCPU quota counts)."""
    live = _instances(
        api, region, [{"Name": "instance-state-name", "Values": ["pending", "running"]}]
    )
    types = [i["InstanceType"] for i in live if i["InstanceType"][0] in STANDARD_FAMILIES]
    sizes = vcpus_of(api, region, types)
    return sum(sizes.get(t, 0) for t in types)


@dataclass(frozen=True)
class RegionFacts:
    """What preflight needs to know of one AWS region, gathered before spending."""

    region: str
    opt_in_status: str  # "", opt-in-not-required, opted-in, not-opted-in ("" = not offered)
    machine_type: str
    machine_type_vcpus: int | None  # None: no such instance type
    machine_type_offered: bool
    vcpu_quota: float | None  # None: quota unknown (not checked)
    vcpus_in_use: int
    eip_quota: float | None
    eips_in_use: int
    ami_id: str  # "" if the Debian parameter is missing
    default_vpc: bool


def region_facts(
    api: AwsApi, region: str, machine_type: str, status: dict[str, str], ami_parameter: str
) -> RegionFacts:
    """Look up one region; an opt-in region that is not enabled is not queried further."""
    opt_in = status.get(region, "")
    if opt_in in ("", "not-opted-in"):
        return RegionFacts(region, opt_in, machine_type, None, False, None, 0, None, 0, "", False)
    ec2 = api.client("ec2", region)
    vcpus = vcpus_of(api, region, [machine_type]).get(machine_type)
    try:
        ami = api.client("ssm", region).get_parameter(Name=ami_parameter)["Parameter"]["Value"]
    except botocore.exceptions.ClientError as e:
        if _code(e) != "ParameterNotFound":
            raise
        ami = ""
    vpcs = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"]
    addresses = ec2.describe_addresses(Filters=[{"Name": "domain", "Values": ["vpc"]}])
    return RegionFacts(
        region=region,
        opt_in_status=opt_in,
        machine_type=machine_type,
        machine_type_vcpus=vcpus,
        machine_type_offered=vcpus is not None and offered(api, region, machine_type),
        vcpu_quota=_quota(api, region, VCPU_QUOTA_CODE),
        vcpus_in_use=standard_vcpus_in_use(api, region),
        eip_quota=_quota(api, region, EIP_QUOTA_CODE),
        eips_in_use=len(addresses["Addresses"]),
        ami_id=ami,
        default_vpc=bool(vpcs),
    )


# --- the reaper ---------------------------------------------------------------

_OURS = [{"Name": "tag:project", "Values": [PROJECT]}]


def _tags(items: list[dict[str, str]] | None) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in items or []}


def find_leftovers(api: AwsApi, region: str) -> list[Leftover]:
    """Every instance, address, key pair and security group tagged for the project."""
    ec2 = api.client("ec2", region)
    found = []
    for i in _instances(
        api, region, [*_OURS, {"Name": "instance-state-name", "Values": LIVE_STATES}]
    ):
        tags = _tags(i.get("Tags"))
        found.append(
            Leftover("aws", region, "instance", i["InstanceId"], tags.get("Name", ""), tags)
        )
    for a in ec2.describe_addresses(Filters=_OURS)["Addresses"]:
        tags = _tags(a.get("Tags"))
        found.append(Leftover("aws", region, "address", a["AllocationId"], a["PublicIp"], tags))
    for k in ec2.describe_key_pairs(Filters=_OURS)["KeyPairs"]:
        tags = _tags(k.get("Tags"))
        found.append(Leftover("aws", region, "key-pair", k["KeyPairId"], k["KeyName"], tags))
    for g in ec2.describe_security_groups(Filters=_OURS)["SecurityGroups"]:
        tags = _tags(g.get("Tags"))
        found.append(Leftover("aws", region, "security-group", g["GroupId"], g["GroupName"], tags))
    return found


def delete_leftovers(
    api: AwsApi,
    region: str,
    leftovers: list[Leftover],
    warn: Callable[[str], None],
    wait_s: float = 600,
) -> list[Leftover]:
    """Delete in dependency order (instances, addresses, key pairs, groups); returns
    what was deleted. A resource that will not go is a warning, not a crash."""
    ec2 = api.client("ec2", region)
    by_kind = {k: [x for x in leftovers if x.kind == k and x.region == region] for k in _ORDER}
    deleted: list[Leftover] = []
    instances = by_kind["instance"]
    if instances:
        ids = [x.id for x in instances]
        ec2.terminate_instances(InstanceIds=ids)
        # Groups and addresses stay in use until the instances are gone.
        ec2.get_waiter("instance_terminated").wait(
            InstanceIds=ids, WaiterConfig={"Delay": 5, "MaxAttempts": max(1, int(wait_s / 5))}
        )
        deleted += instances
    for x in by_kind["address"]:
        if _attempt(partial(_release, ec2, x.id), x, warn):
            deleted.append(x)
    for x in by_kind["key-pair"]:
        if _attempt(partial(ec2.delete_key_pair, KeyName=x.name), x, warn):
            deleted.append(x)
    for x in by_kind["security-group"]:
        if _attempt(partial(ec2.delete_security_group, GroupId=x.id), x, warn, retries=6):
            deleted.append(x)
    return deleted


_ORDER = ("instance", "address", "key-pair", "security-group")


def _release(ec2: Any, allocation_id: str) -> None:
    described = ec2.describe_addresses(AllocationIds=[allocation_id])["Addresses"]
    for a in described:
        if a.get("AssociationId"):
            ec2.disassociate_address(AssociationId=a["AssociationId"])
    ec2.release_address(AllocationId=allocation_id)


def _attempt(
    action: Callable[[], object],
    leftover: Leftover,
    warn: Callable[[str], None],
    retries: int = 1,
) -> bool:
    for attempt in range(retries):
        try:
            action()
            return True
        except botocore.exceptions.ClientError as e:
            # A group still attached to a terminating interface: wait and retry.
            if _code(e) == "DependencyViolation" and attempt + 1 < retries:
                time.sleep(RETRY_DELAY_S)
                continue
            warn(f"could not delete {leftover.describe()}: {_code(e)}")
            return False
    return False
