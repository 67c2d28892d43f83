"""The seam `sweep --backend cloud` uses: preflight on both clouds, then the variables of
infra/cloud, with moto for AWS and the local Compute server for GCP."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber
from fakes.gcp_compute import FakeCompute
from google.auth.credentials import AnonymousCredentials
from infra_support import conforms, declared, parse_type
from moto import mock_aws

from orchestrator.clouds import aws, gcp
from orchestrator.clouds.stack_setup import CloudOptions, prepare
from orchestrator.clouds.stacks import DEFAULT_AMI_PARAMETER
from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import load_catalog

NOW = datetime(2026, 11, 22, 1, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Keys:
    client_pub: str
    host_key: Path
    host_pub: str


@pytest.fixture
def keys(tmp_path) -> Keys:
    for name in ("client", "host"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / name)], check=True
        )
    return Keys(
        (tmp_path / "client.pub").read_text(),
        tmp_path / "host",
        (tmp_path / "host.pub").read_text(),
    )


@pytest.fixture
def aws_env(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        yield


def _aws_api(region: str) -> aws.AwsApi:
    api = aws.AwsApi()
    ssm = boto3.client("ssm", region_name=region)
    quotas = boto3.client("service-quotas", region_name=region)
    ssm_stub, quota_stub = Stubber(ssm), Stubber(quotas)
    ssm_stub.add_response(
        "get_parameter",
        {"Parameter": {"Name": DEFAULT_AMI_PARAMETER, "Value": "ami-0123456789abcdef0"}},
        {"Name": DEFAULT_AMI_PARAMETER},
    )
    for code in (aws.VCPU_QUOTA_CODE, aws.EIP_QUOTA_CODE):
        quota_stub.add_response(
            "get_service_quota",
            {"Quota": {"QuotaCode": code, "Value": 32.0}},
            {"ServiceCode": "ec2", "QuotaCode": code},
        )
    ssm_stub.activate()
    quota_stub.activate()
    api.use("ssm", region, ssm)
    api.use("service-quotas", region, quotas)
    return api


@pytest.mark.slow
def test_cloud_backend_preflights_both_clouds_and_writes_the_cross_cloud_stack(aws_env, keys):
    catalog = load_catalog()
    regions = [
        catalog.get(k)
        for k in ("aws:eu-west-1", "aws:me-south-1", "gcp:europe-west1", "gcp:us-east4")
    ]
    with FakeCompute("my-project") as fake:
        fake.state.add_region(
            "europe-west1",
            {"europe-west1-b": "UP", "europe-west1-c": "UP"},
            {"CPUS": (24, 0), "IN_USE_ADDRESSES": (8, 0)},
        )
        fake.state.add_machine_type("europe-west1-c", "e2-small", 2, 2048)  # not in -b
        fake.state.project_quotas = [{"metric": "CPUS_ALL_REGIONS", "limit": 32, "usage": 0}]
        warnings: list[str] = []
        directory, variables, checked = prepare(
            "cloud",
            "20261122T0130Z-3fa2",
            regions,
            keys,
            catalog.machine_types,
            estimate_wall_s=1800,
            options=CloudOptions(operator_cidr="203.0.113.7/32", owner="tester"),
            warn=warnings.append,
            now=NOW,
            aws_api=lambda: _aws_api("eu-west-1"),
            gcp_api=lambda: gcp.GcpApi(
                "my-project", credentials=AnonymousCredentials(), api_endpoint=fake.endpoint
            ),
        )
    assert directory == paths.INFRA / "cloud"
    assert [r.key for r in checked.regions] == ["aws:eu-west-1", "gcp:europe-west1"]
    assert {k for k, _ in checked.dropped} == {"aws:me-south-1", "gcp:us-east4"}
    assert variables["aws"]["regions"] == {
        "eu-west-1": {"machine_type": "t3.small", "availability_zone_id": "", "ami": ""}
    }
    assert variables["gcp"]["regions"] == {
        "europe-west1": {"zone": "europe-west1-c", "machine_type": "e2-small", "image": ""}
    }
    assert variables["gcp"]["project"] == "my-project"
    assert variables["aws"]["ttl_minutes"] == 68  # (1800 + 900) s x 1.5
    assert variables["aws"]["tags"]["expires_utc"] == "2026-11-22T02:38:00Z"
    decl = declared("cloud")
    problems = [
        p for name in decl for p in conforms(variables[name], parse_type(decl[name]["type"]), name)
    ]
    assert problems == []
    assert len(warnings) == 3  # zone fallback + two dropped regions


@pytest.mark.slow
def test_pins_from_an_earlier_sweep_reach_the_stack_variables(aws_env, keys):
    catalog = load_catalog()
    regions = [catalog.get(k) for k in ("aws:eu-west-1", "gcp:europe-west1")]
    image = "projects/debian-cloud/global/images/debian-12-bookworm-v20261101"
    options = CloudOptions(
        operator_cidr="203.0.113.7/32",
        owner="tester",
        zones={"aws:eu-west-1": "euw1-az3", "gcp:europe-west1": "europe-west1-b"},
        images={"aws:eu-west-1": "ami-0fedcba9876543210", "gcp:europe-west1": image},
    )
    with FakeCompute("my-project") as fake:
        fake.state.add_region(
            "europe-west1",
            {"europe-west1-b": "UP", "europe-west1-c": "UP"},
            {"CPUS": (24, 0), "IN_USE_ADDRESSES": (8, 0)},
        )
        fake.state.add_machine_type("europe-west1-c", "e2-small", 2, 2048)  # not in -b
        warnings: list[str] = []
        _, variables, _ = prepare(
            "cloud",
            "20261122T0130Z-3fa2",
            regions,
            keys,
            catalog.machine_types,
            estimate_wall_s=1800,
            options=options,
            warn=warnings.append,
            now=NOW,
            aws_api=lambda: _aws_api("eu-west-1"),
            gcp_api=lambda: gcp.GcpApi(
                "my-project", credentials=AnonymousCredentials(), api_endpoint=fake.endpoint
            ),
        )
    assert variables["aws"]["regions"] == {
        "eu-west-1": {
            "machine_type": "t3.small",
            "availability_zone_id": "euw1-az3",
            "ami": "ami-0fedcba9876543210",
        }
    }
    # The pin wins over preflight's fallback zone, with a warning.
    assert variables["gcp"]["regions"] == {
        "europe-west1": {"zone": "europe-west1-b", "machine_type": "e2-small", "image": image}
    }
    assert any("keeping the pinned zone europe-west1-b" in w for w in warnings)
    decl = declared("cloud")
    problems = [
        p for name in decl for p in conforms(variables[name], parse_type(decl[name]["type"]), name)
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("zones", "images", "message"),
    [
        ({"aws:eu-west-1": "eu-west-1a"}, {}, "not an Availability Zone ID"),
        ({}, {"aws:eu-west-1": "debian-12"}, "not an AMI id"),
        ({"gcp:europe-west1": "us-east1-b"}, {}, "not in that region"),
        ({}, {"gcp:europe-west1": "debian-cloud/debian-12"}, "projects/PROJECT/global/images"),
    ],
)
def test_bad_pins_fail_before_any_cloud_call(keys, zones, images, message):
    catalog = load_catalog()
    regions = [catalog.get(k) for k in ("aws:eu-west-1", "gcp:europe-west1")]

    def no_cloud():
        raise AssertionError("a cloud was called")

    with pytest.raises(UserError, match=message):
        prepare(
            "cloud",
            "20261122T0130Z-3fa2",
            regions,
            keys,
            catalog.machine_types,
            estimate_wall_s=1800,
            options=CloudOptions(operator_cidr="203.0.113.7/32", zones=zones, images=images),
            warn=lambda _: None,
            now=NOW,
            aws_api=no_cloud,
            gcp_api=no_cloud,
        )
