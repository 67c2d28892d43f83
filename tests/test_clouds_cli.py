"""`interregion reap`, `regions sync` and `preflight` through the real CLI entry point."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from moto import mock_aws

from orchestrator.cli import main
from orchestrator.clouds import aws
from orchestrator.clouds.labels import resource_tags


@pytest.fixture
def no_credentials(tmp_path, monkeypatch):
    for name in (
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GOOGLE_CLOUD_PROJECT",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no metadata service probes
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    monkeypatch.setenv("NO_GCE_CHECK", "true")


def _one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_reap_without_any_credentials_says_so(no_credentials):
    line = _one_line_error(CliRunner().invoke(main, ["reap", "--dry-run"]))
    assert "no cloud credentials configured" in line
    assert "no AWS credentials" in line and "no GCP credentials" in line


def test_regions_sync_without_credentials_says_so(no_credentials):
    line = _one_line_error(CliRunner().invoke(main, ["regions", "sync", "--clouds", "gcp"]))
    assert "gcloud auth application-default login" in line


def test_preflight_without_credentials_is_one_line(no_credentials):
    result = CliRunner().invoke(main, ["preflight", "--regions", "aws:us-east-1,aws:eu-west-1"])
    assert _one_line_error(result) == f"error: {aws.NO_CREDENTIALS}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["reap", "--older-than", "soon"], "--older-than 'soon' is not an age"),
        (["reap", "--older-than", "2h", "--sweep", "x"], "give one of them"),
        (["reap", "--clouds", "azure"], "--clouds 'azure': unknown cloud"),
        (
            ["preflight", "--ttl", "long", "--regions", "aws:us-east-1,aws:eu-west-1"],
            "--ttl 'long' is not a duration",
        ),
        (
            ["preflight", "--pin-from", "20261122T0130Z-3fa2", "--regions", "aws:us-east-1"],
            "--pin-from applies to sweep and provision",
        ),
    ],
)
def test_bad_options_are_one_line(no_credentials, args, message):
    assert message in _one_line_error(CliRunner().invoke(main, args))


def test_reap_under_moto_lists_then_deletes(no_credentials, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    now = datetime.now(UTC)
    with mock_aws():
        ec2 = aws.AwsApi().client("ec2", "eu-west-1")
        for sweep, created in (("stale", now - timedelta(hours=6)), ("live", now)):
            tags = resource_tags(sweep, "t", created, created + timedelta(hours=2))
            ec2.create_security_group(
                GroupName=f"interregion-{sweep}",
                Description="t",
                TagSpecifications=[
                    {
                        "ResourceType": "security-group",
                        "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                    }
                ],
            )
        args = ["reap", "--clouds", "aws", "--aws-region", "eu-west-1"]
        dry = CliRunner().invoke(main, [*args, "--dry-run"])
        assert dry.exit_code == 0, dry.output
        assert "would delete aws eu-west-1 security-group interregion-stale" in dry.output
        assert "interregion-live" not in dry.output
        assert "1 resources due; nothing deleted (--dry-run)" in dry.output
        done = CliRunner().invoke(main, args)
        assert done.exit_code == 0, done.output
        assert "deleted 1 of 1 resources due" in done.output
        names = {g["GroupName"] for g in ec2.describe_security_groups()["SecurityGroups"]}
        assert "interregion-stale" not in names and "interregion-live" in names


def test_regions_sync_under_moto(no_credentials, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        result = CliRunner().invoke(main, ["regions", "sync", "--clouds", "aws"])
    assert result.exit_code == 0, result.output
    # moto's opt-in regions are reported as not enabled
    assert "opt-in region not enabled: aws:me-south-1" in result.output
