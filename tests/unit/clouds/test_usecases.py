"""The cloud commands' use cases called without the CLI, under moto (the AWS API's fake):
clouds.reap.reap_clouds, clouds.sync.sync_catalog, clouds.preflight.check_selection_on_clouds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from moto import mock_aws

from orchestrator.clouds import aws
from orchestrator.clouds.cloud_flags import CloudFlags
from orchestrator.clouds.labels import resource_tags
from orchestrator.clouds.preflight import check_selection_on_clouds
from orchestrator.clouds.reap import reap_clouds
from orchestrator.clouds.sync import sync_catalog
from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.plan.selection import SelectionSpec


@pytest.fixture
def aws_fake(tmp_path, monkeypatch):
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    with mock_aws():
        yield


def _group(ec2, sweep: str, created: datetime) -> None:
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


def test_reap_finds_what_expired_and_deletes_it_unless_a_dry_run(aws_fake):
    now = datetime.now(UTC)
    ec2 = aws.AwsApi().client("ec2", "eu-west-1")
    _group(ec2, "stale", now - timedelta(hours=6))
    _group(ec2, "live", now)
    warned: list[str] = []
    kw = {"aws_regions": ("eu-west-1",), "warn": warned.append}
    dry = reap_clouds(["aws"], dry_run=True, **kw)
    assert [item.name for item in dry.due] == ["interregion-stale"] and dry.deleted == []
    assert dry.to_json(True)["due"][0]["sweep_id"] == "stale"  # type: ignore[index]
    young = reap_clouds(["aws"], older_than="1h", dry_run=True, **kw)
    assert [item.name for item in young.due] == ["interregion-stale"]  # 6 h old, not live
    done = reap_clouds(["aws"], **kw)
    assert [item.name for item in done.deleted] == ["interregion-stale"]
    names = {g["GroupName"] for g in ec2.describe_security_groups()["SecurityGroups"]}
    assert "interregion-stale" not in names and "interregion-live" in names


def test_reap_refuses_two_selections_and_a_cloud_that_cannot_be_used(aws_fake):
    with pytest.raises(UserError, match="select differently"):
        reap_clouds(["aws"], sweep_id="x", older_than="2h", warn=print)
    with pytest.raises(UserError, match="no GCP credentials"):
        reap_clouds(["gcp"], dry_run=True, warn=print)  # the one cloud asked for


def test_reap_warns_of_a_cloud_it_skips_when_another_can_be_used(aws_fake):
    warned: list[str] = []
    report = reap_clouds(["aws", "gcp"], aws_regions=("eu-west-1",), dry_run=True,
                         warn=warned.append)  # fmt: skip
    assert [line.split(":")[0] for line in report.skipped_clouds] == ["gcp"]
    assert warned == [f"skipped {report.skipped_clouds[0]}"]


def test_sync_reports_opt_in_regions_not_enabled(aws_fake):
    warned: list[str] = []
    report = sync_catalog(paths.CATALOG, ["aws"], warn=warned.append)
    assert "aws:me-south-1" in report.not_enabled
    assert warned == []  # the one cloud asked for was used: nothing skipped


def test_sync_warns_of_a_cloud_it_skips_when_another_can_be_used(aws_fake):
    warned: list[str] = []
    report = sync_catalog(paths.CATALOG, ["aws", "gcp"], warn=warned.append)
    assert [line.split(":")[0] for line in report.skipped] == ["gcp"]
    assert warned == [f"skipped {report.skipped[0]}"]


def test_preflight_refuses_pin_from_before_asking_a_cloud(aws_fake, tmp_path):
    with pytest.raises(UserError, match="--pin-from applies to sweep and provision"):
        check_selection_on_clouds(
            SelectionSpec(regions=("aws:us-east-1",)),
            CloudFlags(pin_from="20261122T0130Z-3fa2"),
            catalog_path=paths.CATALOG,
            results=tmp_path,
            note=print,
            warn=print,
        )
