"""`interregion reap`, `regions sync` and `preflight` through the real CLI entry point."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import google.auth.exceptions
import pytest
from click.testing import CliRunner
from fakes.gcp_compute import FakeCompute
from google.auth.credentials import AnonymousCredentials
from moto import mock_aws

from orchestrator.cli import main
from orchestrator.clouds import aws, gcp
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


def _one_line_error(result, code: int = 2) -> str:
    """Bad input or missing credentials exit 2; a network failure (code 1) is a failed run."""
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_reap_without_any_credentials_says_so(no_credentials):
    line = _one_line_error(CliRunner().invoke(main, ["reap", "--dry-run"]))
    assert "no cloud can be used" in line
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
        (["reap", "--older-than", "soon"], "--older-than 'soon' is not a duration"),
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


@pytest.mark.slow
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


# --- credentials but no network; a wrong profile or credentials file ------------------

CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, connections are refused


@pytest.fixture
def aws_offline(no_credentials, monkeypatch):
    """Credentials, but every AWS endpoint is a closed loopback port (no traffic leaves)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", CLOSED)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # refused once is enough for a test


@pytest.mark.parametrize(
    "args",
    [
        ["preflight", "--regions", "aws:us-east-1,aws:eu-west-1"],
        ["reap", "--clouds", "aws", "--dry-run"],
        ["reap", "--clouds", "aws", "--aws-region", "eu-west-1"],
        ["regions", "sync", "--clouds", "aws"],
    ],
)
def test_aws_without_network_is_one_line_naming_the_endpoint(aws_offline, args):
    line = _one_line_error(CliRunner().invoke(main, args), code=1)
    assert line.startswith(f"error: cannot reach AWS at {CLOSED}/ (no connection)"), line


def test_an_unreachable_cloud_is_skipped_when_the_other_one_answers(aws_offline, monkeypatch):
    # reap over both clouds: AWS unreachable is a warning, GCP (no credentials) too,
    # and with neither usable the one error names both reasons
    line = _one_line_error(CliRunner().invoke(main, ["reap", "--dry-run"]))
    assert "no cloud can be used: aws: cannot reach AWS at http://127.0.0.1:9/" in line
    assert "gcp: no GCP credentials" in line


def test_an_unknown_aws_profile_from_the_environment_is_named(no_credentials, monkeypatch):
    monkeypatch.setenv("AWS_PROFILE", "nosuch")
    for args in (["reap", "--clouds", "aws"], ["regions", "sync", "--clouds", "aws"]):
        line = _one_line_error(CliRunner().invoke(main, args))
        assert "AWS profile 'nosuch' (from AWS_PROFILE) is not in" in line, line
    line = _one_line_error(
        CliRunner().invoke(
            main, ["preflight", "--regions", "aws:us-east-1,aws:eu-west-1", "--aws-profile", "x"]
        )
    )
    assert "AWS profile 'x' (from --aws-profile) is not in" in line


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (None, "which does not exist"),
        (b"garbage", "which is not a credentials file (not JSON)"),
        (b"\xff\xfe garbage", "which is not a credentials file (not UTF-8 text)"),
        (b"[1, 2]", "which is not a credentials file (JSON without a 'type')"),
        (
            b'{"type": "service_account"}',
            # google-auth's own reason (it lists the missing fields in no fixed order)
            "which is not a credentials file (Service account info was not in the expected "
            "format, missing fields",
        ),
    ],
)
def test_a_bad_google_application_credentials_file_is_named(
    no_credentials, tmp_path, monkeypatch, content, why
):
    path = tmp_path / "key.json"
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    for args in (
        ["regions", "sync", "--clouds", "gcp"],
        ["reap", "--clouds", "gcp"],
        ["preflight", "--regions", "gcp:us-east4,gcp:europe-west1"],
    ):
        line = _one_line_error(CliRunner().invoke(main, args))
        assert f"GOOGLE_APPLICATION_CREDENTIALS names {path}, {why}" in line, line


def test_gcp_without_network_is_one_line_naming_the_endpoint(no_credentials, monkeypatch):
    # The real commands, with anonymous credentials and the API at a closed loopback port
    # (the client library takes the endpoint from client options only).
    real = gcp.GcpApi
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "test-project")
    monkeypatch.setattr(
        gcp,
        "GcpApi",
        lambda project=None: real(project, AnonymousCredentials(), api_endpoint=CLOSED),
    )
    monkeypatch.setattr(
        "orchestrator.clouds.GcpApi",
        lambda project=None: real(project, AnonymousCredentials(), api_endpoint=CLOSED),
    )
    for args in (
        ["regions", "sync", "--clouds", "gcp"],
        ["reap", "--clouds", "gcp", "--dry-run"],
        ["preflight", "--regions", "gcp:us-east4,gcp:europe-west1"],
    ):
        line = _one_line_error(CliRunner().invoke(main, args), code=1)
        assert line == (
            f"error: cannot reach GCP at {CLOSED} (no connection): check the network "
            "connection (and HTTPS_PROXY if set), then retry"
        ), line


def test_a_token_refresh_without_network_names_the_token_endpoint():
    # google.auth wraps requests' ConnectionError in TransportError when it refreshes a token
    import requests

    try:
        requests.post(f"{CLOSED}/token", timeout=5)
    except requests.exceptions.ConnectionError as e:
        wrapped = google.auth.exceptions.TransportError(e)
        wrapped.__cause__ = e
    error = gcp.unreachable(wrapped)
    assert str(error).startswith(f"cannot reach GCP at {CLOSED} (no connection)")


# --- --json: the interregion/v1 envelope (cli/options.py) -----------------------------


def _envelope(result, command: str):
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["schema"] == "interregion/v1" and doc["command"] == command, doc
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["generated_at"]), doc
    return doc["data"]


@pytest.mark.slow
def test_the_cloud_commands_print_json_in_the_envelope(no_credentials, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    now = datetime.now(UTC)
    with mock_aws():
        ec2 = aws.AwsApi().client("ec2", "eu-west-1")
        tags = resource_tags("stale", "t", now - timedelta(hours=6), now - timedelta(hours=4))
        ec2.create_security_group(
            GroupName="interregion-stale",
            Description="t",
            TagSpecifications=[
                {
                    "ResourceType": "security-group",
                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                }
            ],
        )
        reap = CliRunner().invoke(
            main, ["reap", "--clouds", "aws", "--aws-region", "eu-west-1", "--dry-run", "--json"]
        )
        sync = CliRunner().invoke(main, ["regions", "sync", "--clouds", "aws", "--json"])
    data = _envelope(reap, "reap")
    assert data["dry_run"] is True and data["deleted"] == []
    ((due,),) = [data["due"]]
    assert (due["cloud"], due["region"], due["kind"], due["name"], due["sweep_id"]) == (
        "aws",
        "eu-west-1",
        "security-group",
        "interregion-stale",
        "stale",
    )
    data = _envelope(sync, "regions sync")
    assert "aws:me-south-1" in data["not_enabled"] and data["skipped"] == []


def test_preflight_prints_json_in_the_envelope(no_credentials, monkeypatch):
    with FakeCompute("test-project") as fake:
        s = fake.state
        s.add_region("europe-west1", {"europe-west1-c": "UP"}, {"CPUS": (24, 0)})
        s.add_region("us-east4", {"us-east4-a": "UP"}, {"CPUS": (24, 24)})  # no CPU left
        for zone in s.zones:
            s.add_machine_type(zone, "e2-small", 2, 2048)
        s.project_quotas = [{"metric": "CPUS_ALL_REGIONS", "limit": 32, "usage": 0}]
        real = gcp.GcpApi
        monkeypatch.setattr(
            gcp,
            "GcpApi",
            lambda project=None: real(
                "test-project", AnonymousCredentials(), api_endpoint=fake.endpoint
            ),
        )
        monkeypatch.setattr(
            "orchestrator.clouds.GcpApi",
            lambda project=None: real(
                "test-project", AnonymousCredentials(), api_endpoint=fake.endpoint
            ),
        )
        args = ["preflight", "--regions", "gcp:europe-west1,gcp:us-east4", "--json"]
        result = CliRunner().invoke(main, args)
    data = _envelope(result, "preflight")
    assert data["identities"] == {"gcp": "test-project"}
    assert data["ready"] == [{"region": "gcp:europe-west1", "zone": "europe-west1-c"}]
    ((dropped,),) = [data["dropped"]]
    assert dropped["region"] == "gcp:us-east4" and "CPUS quota" in dropped["reason"]
