"""Pure parts of the cloud code: tags and labels, TTL, operator CIDR, reaper selection,
the IAM files, and the launch seam (preflight -> stack variables) end to end."""

from __future__ import annotations

import fnmatch
import json
import math
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import boto3
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from orchestrator.clouds import labels, stacks
from orchestrator.clouds.leftovers import due, parse_age
from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import Region

NOW = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
GCP_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
GCP_PREFIX = re.compile(r"^[a-z][-a-z0-9]{0,34}$")


@pytest.mark.slow
@given(st.text(max_size=200))
def test_gcp_label_values_are_always_valid(text):
    assert GCP_VALUE.fullmatch(labels.gcp_label_value(text))


@given(st.text(min_size=1, max_size=80))
def test_gcp_name_prefix_is_always_a_valid_name_start(sweep_id):
    prefix = labels.gcp_name_prefix(sweep_id)
    assert GCP_PREFIX.fullmatch(prefix) and not prefix.endswith("-")


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2200, 1, 1)))
def test_times_survive_tags_and_labels(moment):
    moment = moment.replace(microsecond=0, tzinfo=UTC)
    tags = labels.resource_tags("s", "o", moment, moment + timedelta(hours=1))
    assert labels.parse_utc(tags["created_utc"]) == moment
    gcp = labels.gcp_labels(tags)
    assert labels.parse_utc(gcp["created_utc"]) == moment
    assert all(GCP_VALUE.fullmatch(v) for v in gcp.values())


def test_gcp_labels_of_a_real_sweep():
    tags = labels.resource_tags(
        "20261122T0130Z-3fa2", "Ada Lovelace@lab.example", NOW, NOW + timedelta(hours=2)
    )
    assert labels.gcp_labels(tags) == {
        "project": "interregion",
        "sweep_id": "20261122t0130z-3fa2",
        "owner": "ada-lovelace-lab-example",
        "created_utc": "20261122t030000z",
        "expires_utc": "20261122t050000z",
    }


def test_due_selects_expired_old_or_one_sweep_and_never_guesses():
    tags = labels.resource_tags("s1", "o", NOW - timedelta(hours=3), NOW - timedelta(hours=1))
    assert due(tags, NOW)
    assert not due(tags, NOW - timedelta(hours=2))  # not yet expired then
    assert due(tags, NOW, older_than=timedelta(hours=2))
    assert not due(tags, NOW, older_than=timedelta(hours=4))
    assert due(tags, NOW, sweep_id="s1") and not due(tags, NOW, sweep_id="s2")
    assert not due({**tags, "project": "other"}, NOW)
    assert not due({**tags, "expires_utc": "soon"}, NOW)  # unreadable: left alone
    assert not due({"project": "interregion"}, NOW)
    gcp = labels.gcp_labels(labels.resource_tags("Sweep-A", "o", NOW, NOW))
    assert due(gcp, NOW, sweep_id="Sweep-A")


def test_parse_age():
    assert parse_age("2h") == timedelta(hours=2)
    assert parse_age("90m") == timedelta(minutes=90)
    assert parse_age("1.5d") == timedelta(hours=36)
    assert parse_age("PT2H") == parse_age("2h") and parse_age("P1W") == timedelta(days=7)
    for bad in ("2", "h", "-1h", "twoh", "99999999999d"):
        with pytest.raises(UserError):
            parse_age(bad)


def test_ttl_from_estimate_and_override():
    assert stacks.ttl_minutes(3600) == 113  # (3600 + 900) s x 1.5
    assert stacks.ttl_minutes(0) == stacks.TTL_MIN_MINUTES
    assert stacks.ttl_minutes(10**7) == stacks.TTL_MAX_MINUTES
    assert stacks.ttl_minutes(10**7, 45) == 45
    with pytest.raises(UserError, match="--ttl 5 minutes is outside"):
        stacks.ttl_minutes(3600, 5)
    assert [stacks.parse_ttl(t) for t in ("90", "90m", "2h", "1d", "PT3H")] == [
        90,
        90,
        120,
        1440,
        180,
    ]
    for bad in ("soon", "nan", "inf", "-inf", "infh", "nand", ""):
        with pytest.raises(UserError, match=r"not a duration|negative"):
            stacks.parse_ttl(bad)


def test_the_clouds_page_states_the_ttl_formula_of_the_code():
    readme = " ".join((paths.ROOT / "docs" / "clouds.md").read_text().split())
    margin_min = stacks.PROVISION_MARGIN_S // 60
    assert f"TTL = (estimate + {margin_min} min) x {stacks.TTL_FACTOR:g}" in readme
    assert f"at least {stacks.TTL_MIN_MINUTES} min" in readme
    assert stacks.TTL_MAX_MINUTES == 2 * 24 * 60 and "at most 2 days" in readme
    # and the formula as stated gives what the code computes
    estimate_s = 3600
    assert stacks.ttl_minutes(estimate_s) == math.ceil(
        (estimate_s / 60 + margin_min) * stacks.TTL_FACTOR
    )


class _IpHandler(BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"198.51.100.4\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_operator_cidr_given_or_detected():
    assert stacks.operator_cidr("203.0.113.7") == "203.0.113.7/32"
    assert stacks.operator_cidr("203.0.113.0/24") == "203.0.113.0/24"
    assert stacks.operator_cidr("198.0.0.0/8") == "198.0.0.0/8"
    for bad, message in (
        ("0.0.0.0/0", "whole internet"),
        ("my-laptop", "not an address"),
        ("202.0.0.0/7", "wider than a /8"),
        ("128.0.0.0/1", "wider than a /8"),
        ("::/0", "is IPv6"),
        ("2001:db8::7/128", "is IPv6"),
        ("203.0.113.7/24", r"has host bits set: use 203\.0\.113\.0/24 "),
        ("10.1.2.3/8", r"host bits set: use 10\.0\.0\.0/8 "),
    ):
        with pytest.raises(UserError, match=message):
            stacks.operator_cidr(bad)
    server = HTTPServer(("127.0.0.1", 0), _IpHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        assert stacks.operator_cidr(None, detect_url=url) == "198.51.100.4/32"
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(UserError, match="pass --operator-cidr"):
        stacks.operator_cidr(None, detect_url=url)  # nothing listens any more


@dataclass(frozen=True)
class _Keys:
    client_pub: str = "ssh-ed25519 AAAAclient c"
    host_key: Path = Path("/sweep/keys/host")
    host_pub: str = "ssh-ed25519 AAAAhost h"


def _r(key: str, zone: str = "") -> Region:
    cloud, rid = key.split(":")
    return Region(cloud, rid, "C", "US", 0.0, 0.0, "t", zone=zone)


def test_stack_choice_and_tags():
    regions = [_r("aws:us-east-1"), _r("gcp:us-east4", "us-east4-a")]
    kwargs = dict(
        machine_types={"aws": "t3.small", "gcp": "e2-small"},
        operator_cidr="203.0.113.7/32",
        ttl_minutes=90,
        owner="me",
        created=NOW,
        gcp_project="p",
    )
    with pytest.raises(UserError, match="--backend aws cannot host gcp:us-east4"):
        stacks.stack_variables("aws", "s", regions, _Keys(), **kwargs)
    with pytest.raises(UserError, match="unknown cloud backend 'azure'"):
        stacks.stack_variables("azure", "s", regions, _Keys(), **kwargs)
    directory, variables = stacks.stack_variables("cloud", "s", regions[:1], _Keys(), **kwargs)
    assert directory == paths.INFRA / "aws"  # one cloud only: no GCP account needed
    assert variables["tags"]["expires_utc"] == "2026-11-22T04:30:00Z"
    assert variables["host_key_file"] == "/sweep/keys/host"
    directory, variables = stacks.stack_variables("cloud", "s", regions, _Keys(), **kwargs)
    assert directory == paths.INFRA / "cloud"
    assert variables["gcp"]["regions"] == {
        "us-east4": {"zone": "us-east4-a", "machine_type": "e2-small", "image": ""}
    }
    with pytest.raises(UserError, match="no GCP project"):
        stacks.stack_variables("gcp", "s", regions[1:], _Keys(), **{**kwargs, "gcp_project": ""})


@pytest.mark.parametrize(
    ("region_id", "message"),
    [
        ("us-gov-west-1", "GovCloud partition"),
        ("us-gov-east-1", "GovCloud partition"),
        ("cn-north-1", "China partition"),
        ("cn-northwest-1", "China partition"),
        ("us-iso-east-1", "not an AWS region id"),
    ],
)
def test_aws_regions_outside_the_commercial_partition_are_refused(region_id, message):
    kwargs = dict(
        machine_types={"aws": "t3.small"},
        operator_cidr="203.0.113.7/32",
        ttl_minutes=90,
        owner="me",
        created=NOW,
    )
    regions = [_r("aws:us-east-1"), _r(f"aws:{region_id}")]
    with pytest.raises(UserError, match=message):
        stacks.check_backend("aws", regions)
    with pytest.raises(UserError, match=message):
        stacks.stack_variables("cloud", "s", regions, _Keys(), **kwargs)
    stacks.check_backend("aws", regions[:1])  # the commercial region alone is fine


# --- the IAM files cover what the code and the stacks do --------------------------


def _allowed(policy: dict, action: str) -> bool:
    return any(
        any(fnmatch.fnmatchcase(action, pattern) for pattern in _list(st_["Action"]))
        for st_ in policy["Statement"]
        if st_["Effect"] == "Allow"
    )


def _list(value):
    return value if isinstance(value, list) else [value]


def test_aws_policy_allows_every_call_the_code_makes():
    policy = json.loads((paths.INFRA / "iam" / "aws-policy.json").read_text())
    source = (paths.ROOT / "orchestrator" / "clouds" / "aws.py").read_text()
    called = set(re.findall(r"\.([a-z_]+)\(", source))
    called |= set(re.findall(r'get_(?:paginator|waiter)\("(\w+)"\)', source))
    called.add("describe_instances")  # the instance_terminated waiter polls it
    used = set()
    for service, prefix in (
        ("ec2", "ec2"),
        ("ssm", "ssm"),
        ("sts", "sts"),
        ("service-quotas", "servicequotas"),
    ):
        mapping = boto3.client(service, region_name="us-east-1").meta.method_to_api_mapping
        used |= {f"{prefix}:{mapping[m]}" for m in called if m in mapping}
    assert {"ec2:TerminateInstances", "ec2:ReleaseAddress", "sts:GetCallerIdentity"} <= used
    assert [a for a in sorted(used) if not _allowed(policy, a)] == []
    # nothing is allowed to everything
    assert not any(a == "*" for s in policy["Statement"] for a in _list(s["Action"]))


def test_aws_policy_deletes_only_tagged_resources():
    policy = json.loads((paths.INFRA / "iam" / "aws-policy.json").read_text())
    for statement in policy["Statement"]:
        destructive = [
            a for a in _list(statement["Action"]) if re.search(r"Terminate|Delete|Release", a)
        ]
        if destructive:
            assert (
                statement["Condition"]["StringEquals"]["aws:ResourceTag/project"] == "interregion"
            )


def test_gcp_role_covers_every_resource_the_stack_makes_and_the_reaper_deletes():
    role = yaml.safe_load((paths.INFRA / "iam" / "gcp-role.yaml").read_text())
    granted = set(role["includedPermissions"])
    main_tf = (paths.INFRA / "gcp" / "main.tf").read_text()
    kinds = set(re.findall(r'resource "google_compute_(\w+)"', main_tf))
    assert kinds == {"network", "subnetwork", "address", "firewall", "instance"}
    for kind in kinds:
        plural = "addresses" if kind == "address" else f"{kind}s"
        for verb in ("create", "delete", "get", "list"):
            assert f"compute.{plural}.{verb}" in granted, (kind, verb)
    assert {
        "compute.regions.list",
        "compute.zones.list",
        "compute.machineTypes.get",
        "compute.projects.get",
    } <= granted
