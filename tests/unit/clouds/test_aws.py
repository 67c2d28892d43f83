"""AWS code against moto (and botocore's Stubber where moto lacks an API)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import botocore.exceptions
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from orchestrator.clouds import aws, preflight, reap
from orchestrator.clouds.labels import resource_tags
from orchestrator.clouds.leftovers import Leftover
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import Region

NOW = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
PUBKEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKxXH4XlfMw0Yz4JxQYJ4Y2gq1G6xkKcE1Z7bVd8X0lQ test"


@pytest.fixture
def no_aws_config(tmp_path, monkeypatch):
    for name in (
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    # never ask an instance metadata service: traffic stays on this machine
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def moto_aws(no_aws_config, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield aws.AwsApi()


def _region(rid: str, opt_in: bool = False) -> Region:
    return Region("aws", rid, "City", "US", 0.0, 0.0, "test", opt_in=opt_in)


def _stub_ami(api: aws.AwsApi, region: str, ami: str = "ami-0123456789abcdef0") -> Stubber:
    # moto refuses the reserved /aws/ parameter namespace: stub that one call
    client = boto3.client("ssm", region_name=region)
    stub = Stubber(client)
    stub.add_response(
        "get_parameter",
        {
            "Parameter": {
                "Name": aws.DEFAULT_AMI if hasattr(aws, "DEFAULT_AMI") else "p",
                "Value": ami,
            }
        },
        {"Name": preflight.DEFAULT_AMI_PARAMETER},
    )
    stub.activate()
    api.use("ssm", region, client)
    return stub


def _stub_quotas(api: aws.AwsApi, region: str, vcpus: float, eips: float) -> Stubber:
    # moto's Service Quotas knows only VPC quotas: stub the two EC2 ones
    client = boto3.client("service-quotas", region_name=region)
    stub = Stubber(client)
    for code, value in ((aws.VCPU_QUOTA_CODE, vcpus), (aws.EIP_QUOTA_CODE, eips)):
        stub.add_response(
            "get_service_quota",
            {"Quota": {"QuotaCode": code, "Value": value}},
            {"ServiceCode": "ec2", "QuotaCode": code},
        )
    stub.activate()
    api.use("service-quotas", region, client)
    return stub


# --- credentials and regions ---------------------------------------------------


def test_missing_credentials_is_one_line(no_aws_config):
    with pytest.raises(UserError) as e:
        aws.whoami(aws.AwsApi())
    assert str(e.value) == aws.NO_CREDENTIALS
    assert "\n" not in str(e.value)


def test_unknown_profile_is_one_line(no_aws_config):
    with pytest.raises(UserError, match=r"^AWS profile 'nobody' \(from --aws-profile\) is not in"):
        aws.AwsApi(profile="nobody")


@pytest.mark.slow
def test_whoami_and_regions_under_moto(moto_aws):
    assert aws.whoami(moto_aws).startswith("arn:aws:")
    status = aws.region_status(moto_aws)
    assert {"us-east-1", "eu-west-1", "ap-southeast-2"} <= set(status)
    # moto models opt-in regions as not enabled
    assert status["me-south-1"] == "not-opted-in"
    assert "me-south-1" not in aws.enabled(status) and "us-east-1" in aws.enabled(status)


def test_opt_in_status_from_describe_regions(no_aws_config):
    client = boto3.client("ec2", region_name="us-east-1")
    api = aws.AwsApi()
    api.use("ec2", "us-east-1", client)
    with Stubber(client) as stub:
        stub.add_response(
            "describe_regions",
            {
                "Regions": [
                    {"RegionName": "us-east-1", "OptInStatus": "opt-in-not-required"},
                    {"RegionName": "af-south-1", "OptInStatus": "not-opted-in"},
                    {"RegionName": "me-south-1", "OptInStatus": "opted-in"},
                ]
            },
            {"AllRegions": True},
        )
        status = aws.region_status(api)
    assert status["af-south-1"] == "not-opted-in"
    assert aws.enabled(status) == ["me-south-1", "us-east-1"]


# --- preflight facts -----------------------------------------------------------


@pytest.mark.slow
def test_region_facts_and_quota_arithmetic(moto_aws):
    region = "eu-west-1"
    ec2 = moto_aws.client("ec2", region)
    ami = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    ec2.run_instances(ImageId=ami, InstanceType="t3.small", MinCount=2, MaxCount=2)
    ec2.allocate_address(Domain="vpc")
    quotas = _stub_quotas(moto_aws, region, vcpus=6, eips=5)
    ssm = _stub_ami(moto_aws, region)

    status = {region: "opt-in-not-required"}
    facts = aws.region_facts(moto_aws, region, "t3.small", status, preflight.DEFAULT_AMI_PARAMETER)
    quotas.assert_no_pending_responses()
    ssm.assert_no_pending_responses()
    assert facts.machine_type_vcpus == 2 and facts.machine_type_offered
    assert facts.vcpus_in_use == 4  # two running t3.small
    assert facts.vcpu_quota == 6 and facts.eip_quota == 5 and facts.eips_in_use == 1
    assert facts.ami_id == "ami-0123456789abcdef0" and facts.default_vpc
    assert preflight.aws_problems("aws:eu-west-1", facts, "p") == []

    # one more t3.small running: 6 of 6 vCPUs in use, the sweep's VM does not fit
    ec2.run_instances(ImageId=ami, InstanceType="t3.small", MinCount=1, MaxCount=1)
    _stub_quotas(moto_aws, region, vcpus=6, eips=5)
    _stub_ami(moto_aws, region)
    facts = aws.region_facts(moto_aws, region, "t3.small", status, preflight.DEFAULT_AMI_PARAMETER)
    (problem,) = preflight.aws_problems("aws:eu-west-1", facts, "p")
    assert problem.startswith("aws:eu-west-1: vCPU quota exceeded: needs 2, 6 of 6 in use")


def test_unknown_machine_type_and_missing_ami(moto_aws):
    region = "us-east-1"
    status = {region: "opt-in-not-required"}
    _stub_quotas(moto_aws, region, vcpus=32, eips=5)
    # moto has no /aws/ parameters: the real ParameterNotFound path runs
    facts = aws.region_facts(moto_aws, region, "t3.nope", status, preflight.DEFAULT_AMI_PARAMETER)
    assert facts.machine_type_vcpus is None and facts.ami_id == ""
    problems = preflight.aws_problems("aws:us-east-1", facts, preflight.DEFAULT_AMI_PARAMETER)
    assert problems[0].startswith("aws:us-east-1: unknown machine type 't3.nope'")
    assert any("no Debian 12 AMI" in p for p in problems)
    assert all("\n" not in p for p in problems)


@pytest.mark.slow
def test_preflight_drops_disabled_opt_in_region_or_fails_when_strict(moto_aws):
    regions = [_region("us-east-1"), _region("me-south-1", opt_in=True)]

    def api() -> aws.AwsApi:
        _stub_ami(moto_aws, "us-east-1")
        _stub_quotas(moto_aws, "us-east-1", vcpus=32, eips=5)
        return moto_aws

    warnings: list[str] = []
    types = {"aws": "t3.small", "gcp": "e2-small"}
    result = preflight.preflight(regions, types, aws_api=api, warn=warnings.append)
    assert [r.key for r in result.regions] == ["aws:us-east-1"]
    assert result.dropped[0][0] == "aws:me-south-1"
    assert result.identities["aws"].startswith("arn:aws:")
    (warning,) = warnings
    assert warning.startswith("aws:me-south-1 is an opt-in region not enabled")
    assert warning.endswith("dropped from the sweep (--strict to fail instead)")
    with pytest.raises(UserError, match="aws:me-south-1 is an opt-in region not enabled"):
        preflight.preflight(regions, types, aws_api=api, strict=True, warn=warnings.append)
    with pytest.raises(UserError, match="no selected region passed preflight"):
        preflight.preflight(regions[1:], types, aws_api=api, warn=warnings.append)


# --- the reaper ----------------------------------------------------------------


def _make_sweep(api: aws.AwsApi, region: str, sweep: str, created: datetime, ttl_h: float):
    """What infra/aws makes in one region, tagged as it tags."""
    tags = resource_tags(sweep, "tester", created, created + timedelta(hours=ttl_h))
    spec = lambda kind: [  # noqa: E731
        {"ResourceType": kind, "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}
    ]
    ec2 = api.client("ec2", region)
    ami = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    sg = ec2.create_security_group(
        GroupName=f"interregion-{sweep}-ssh",
        Description="t",
        TagSpecifications=spec("security-group"),
    )["GroupId"]
    kp = ec2.import_key_pair(
        KeyName=f"interregion-{sweep}", PublicKeyMaterial=PUBKEY, TagSpecifications=spec("key-pair")
    )["KeyPairId"]
    inst = ec2.run_instances(
        ImageId=ami,
        InstanceType="t3.small",
        MinCount=1,
        MaxCount=1,
        SecurityGroupIds=[sg],
        KeyName=f"interregion-{sweep}",
        TagSpecifications=spec("instance"),
    )["Instances"][0]["InstanceId"]
    eip = ec2.allocate_address(Domain="vpc", TagSpecifications=spec("elastic-ip"))["AllocationId"]
    ec2.associate_address(AllocationId=eip, InstanceId=inst)
    return {"instance": inst, "address": eip, "key-pair": kp, "security-group": sg}


def _alive(api: aws.AwsApi, region: str) -> dict[str, set[str]]:
    ec2 = api.client("ec2", region)
    live = [
        i["InstanceId"]
        for r in ec2.describe_instances()["Reservations"]
        for i in r["Instances"]
        if i["State"]["Name"] != "terminated"
    ]
    return {
        "instance": set(live),
        "address": {a["AllocationId"] for a in ec2.describe_addresses()["Addresses"]},
        "key-pair": {k["KeyPairId"] for k in ec2.describe_key_pairs()["KeyPairs"]},
        "security-group": {g["GroupId"] for g in ec2.describe_security_groups()["SecurityGroups"]},
    }


@pytest.mark.slow
def test_reaper_deletes_expired_sweeps_and_nothing_else(moto_aws):
    regions = ["us-east-1", "eu-west-1"]
    expired, current = {}, {}
    for region in regions:
        expired[region] = _make_sweep(moto_aws, region, "old", NOW - timedelta(hours=5), 2)
        current[region] = _make_sweep(moto_aws, region, "new", NOW - timedelta(minutes=10), 2)
    # someone else's resources in the same account
    ec2 = moto_aws.client("ec2", "us-east-1")
    ami = ec2.describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    foreign = ec2.run_instances(
        ImageId=ami,
        InstanceType="t3.small",
        MinCount=1,
        MaxCount=1,
        TagSpecifications=[
            {
                "ResourceType": "instance",
                "Tags": [
                    {"Key": "project", "Value": "other"},
                    {"Key": "expires_utc", "Value": "2000-01-01T00:00:00Z"},
                ],
            }
        ],
    )["Instances"][0]["InstanceId"]
    before = {r: _alive(moto_aws, r) for r in regions}

    warnings: list[str] = []
    dry = reap.reap(
        ["aws"],
        dry_run=True,
        now=NOW,
        aws_api=lambda: moto_aws,
        aws_regions=regions,
        warn=warnings.append,
    )
    assert {(x.region, x.kind, x.id) for x in dry.due} == {
        (r, kind, rid) for r in regions for kind, rid in expired[r].items()
    }
    assert dry.deleted == [] and {r: _alive(moto_aws, r) for r in regions} == before

    report = reap.reap(
        ["aws"], now=NOW, aws_api=lambda: moto_aws, aws_regions=regions, warn=warnings.append
    )
    assert warnings == []
    assert {(x.region, x.kind, x.id) for x in report.deleted} == {
        (r, kind, rid) for r in regions for kind, rid in expired[r].items()
    }
    for region in regions:
        alive = _alive(moto_aws, region)
        for kind, rid in expired[region].items():
            assert rid not in alive[kind], (region, kind)
        for kind, rid in current[region].items():
            assert rid in alive[kind], (region, kind)
        # the default VPC's default group and anything untagged stay
        assert (
            before[region]["security-group"] - set(expired[region].values())
            <= alive["security-group"]
        )
    assert foreign in _alive(moto_aws, "us-east-1")["instance"]


@pytest.mark.slow
def test_reaper_by_sweep_id_and_by_age(moto_aws):
    region = "eu-west-1"
    young = _make_sweep(moto_aws, region, "young", NOW - timedelta(minutes=30), 24)
    older = _make_sweep(moto_aws, region, "older", NOW - timedelta(hours=3), 24)
    kwargs = {"now": NOW, "aws_api": lambda: moto_aws, "aws_regions": [region], "warn": print}
    by_age = reap.reap(["aws"], older_than=timedelta(hours=2), dry_run=True, **kwargs)
    assert {x.id for x in by_age.due} == set(older.values())
    by_sweep = reap.reap(["aws"], sweep_id="young", **kwargs)
    assert {x.id for x in by_sweep.deleted} == set(young.values())
    alive = _alive(moto_aws, region)
    assert all(rid in alive[kind] for kind, rid in older.items())


def test_reaper_skips_a_cloud_without_credentials_unless_required(no_aws_config):
    report = reap.reap(["aws"], now=NOW, warn=print)
    assert report.skipped_clouds == [f"aws: {aws.NO_CREDENTIALS}"]
    with pytest.raises(UserError, match="no AWS credentials"):
        reap.reap(["aws"], now=NOW, required=True, warn=print)


@pytest.mark.slow
def test_leftover_warnings_before_a_sweep(moto_aws):
    region = "eu-west-1"
    kwargs = {"now": NOW, "aws_api": lambda: moto_aws, "aws_regions": [region]}
    assert reap.leftover_warnings(["aws"], print, **kwargs) == []
    stale = _make_sweep(moto_aws, region, "crashed", NOW - timedelta(hours=9), 2)
    lines = reap.leftover_warnings(["aws"], print, **kwargs)
    assert lines[0].startswith("4 expired interregion resources are still on the clouds")
    assert "run 'interregion reap'" in lines[0]
    assert len(lines) == 1 + len(stale)
    assert all(rid in _alive(moto_aws, region)[kind] for kind, rid in stale.items())


def test_group_still_in_use_is_retried_then_reported(no_aws_config, monkeypatch):
    monkeypatch.setattr(aws, "RETRY_DELAY_S", 0)
    client = boto3.client("ec2", region_name="eu-west-1")
    api = aws.AwsApi()
    api.use("ec2", "eu-west-1", client)
    group = Leftover("aws", "eu-west-1", "security-group", "sg-1", "interregion-x-ssh", {})
    with Stubber(client) as stub:
        stub.add_client_error("delete_security_group", "DependencyViolation")
        stub.add_response("delete_security_group", {}, {"GroupId": "sg-1"})
        warnings: list[str] = []
        assert aws.delete_leftovers(api, "eu-west-1", [group], warnings.append) == [group]
        assert warnings == []
        for _ in range(6):
            stub.add_client_error("delete_security_group", "DependencyViolation")
        assert aws.delete_leftovers(api, "eu-west-1", [group], warnings.append) == []
        stub.assert_no_pending_responses()
    (warning,) = warnings
    assert warning.startswith("could not delete aws eu-west-1 security-group interregion-x-ssh")
    assert warning.endswith("DependencyViolation")


EC2 = "https://ec2.eu-west-1.amazonaws.com/"
PROXY = "http://proxy:3128"


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            botocore.exceptions.EndpointConnectionError(endpoint_url="https://sts.amazonaws.com/"),
            "cannot reach AWS at https://sts.amazonaws.com/ (no connection)",
        ),
        (
            botocore.exceptions.ConnectTimeoutError(endpoint_url=EC2),
            f"cannot reach AWS at {EC2} (timed out)",
        ),
        (
            botocore.exceptions.ReadTimeoutError(endpoint_url=EC2),
            f"cannot reach AWS at {EC2} (timed out)",
        ),
        (
            botocore.exceptions.ProxyConnectionError(proxy_url=PROXY, error="refused"),
            f"cannot reach AWS through the proxy {PROXY} (no connection)",
        ),
    ],
)  # fmt: skip
def test_network_failures_become_one_line_naming_the_endpoint(error, message):
    with pytest.raises(UserError) as e, aws.network_errors():
        raise error
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


# --- machine type bandwidth (the plan's allowance check reads regions.yaml) ---------


def test_network_bandwidth_from_describe_instance_types(moto_aws):
    found = aws.network_bandwidth(moto_aws, "us-east-1", ["t3.small", "m5.large", "t9.nope"])
    assert found == {"t3.small": (0.128e9, 5e9), "m5.large": (0.75e9, 10e9)}


def test_regions_yaml_bandwidth_agrees_with_the_ec2_api_and_a_difference_is_named(moto_aws):
    from orchestrator.clouds.sync import bandwidth_differences
    from orchestrator.model.catalog import load_catalog

    listed = {k: m for k, m in load_catalog().bandwidth.items() if m.cloud == "aws"}
    live = aws.network_bandwidth(moto_aws, "us-east-1", listed)
    assert bandwidth_differences(listed, live) == []
    live["t3.small"] = (0.2e9, 5e9)
    del live["m5.large"]
    assert bandwidth_differences(listed, live) == [
        "m5.large: the aws API reports no bandwidth for it",
        "t3.small: regions.yaml lists 0.128/5 Gbit/s baseline/burst, the aws API 0.2/5",
    ]


def test_preflight_warns_of_a_machine_type_regions_yaml_does_not_list(moto_aws):
    assert preflight.aws_bandwidth_warnings(moto_aws, "us-east-1", "t3.small") == []
    (line,) = preflight.aws_bandwidth_warnings(moto_aws, "us-east-1", "t3a.small")
    assert line.startswith("t3a.small is not in regions.yaml machine_types (EC2: 0.128")
