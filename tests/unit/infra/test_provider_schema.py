"""Every argument and nested block the cloud stacks use exists in the provider's schema.

`terraform validate` needs the providers, which cannot be installed here, so the
arguments were looked up by hand in the providers' published schemas and this file
records what was found. A misspelt or removed argument fails here before any plan.

Sources (read with the project's search tool, November 2026):
- AWS `[aws]`: the schema-generated bindings cdktn-io/cdktn-provider-aws-go,
  aws/<resource>/<Type>Config.go and the nested block files, commit 093509bc50bb
  (generated from hashicorp/aws 6.28.0; every resource there takes `region`, the 6.x
  per-resource region). Values and required/optional from hashicorp/terraform-provider-aws
  website/docs/r/instance.html.markdown @00d98e75afb6 (6.x) and
  website/docs/r/security_group.html.markdown @0148137dc6fb, and the ValidateFuncs in
  internal/service/ec2/ec2_instance.go @5c58e0c2b9ff (metadata_options, volume_type).
- Google `[google]`: cdktf/cdktf-provider-google-go, google/<resource>/*.go @009b3a90831a
  (generated from hashicorp/google 4.69.1: network, subnetwork, firewall, address,
  instance blocks, image data source); scheduling.max_run_duration from
  google/computeinstance/ComputeInstanceSchedulingMaxRunDuration.go @04519c296b6e (GA
  hashicorp/google 6.8.0; it was beta-only before); google_compute_address `labels` from
  the cdktf provider-google bindings for hashicorp/google 6.27.0, 6.35.0 and 6.50.0 (not
  in 4.69.1); the provider's `project` from the same bindings for 6.49.2 and 6.50.0.
  Cross-checked for 6.x in the cdktf provider-google Python bindings for hashicorp/google
  6.50.0 (the index names no path for them): google_compute_instance's top-level arguments
  and its scheduling (provisioning_model, instance_termination_action, max_run_duration)
  and shielded_instance_config blocks; compute_firewall direction; compute_subnetwork
  private_ip_google_access; compute_address labels.
  Values from hashicorp/terraform-provider-google website/docs/r/compute_instance.html.markdown
  @022e24ae73bc and the bindings' "Possible values" (7.43.0, cdktn-io/cdktn-provider-google-go
  @024bef55f1f5, for scheduling).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import hcl2
import pytest

from orchestrator.core import paths

# Terraform's own meta-arguments: not part of any provider schema.
META = {"count", "for_each", "depends_on", "lifecycle", "provider", "provisioner", "connection"}


@dataclass(frozen=True)
class Block:
    """The part of a provider schema the stacks use: arguments, nested blocks, and which
    of them the provider requires."""

    args: frozenset[str]
    blocks: dict[str, Block] = field(default_factory=dict)
    required: frozenset[str] = frozenset()


def B(args: str, required: str = "", **blocks: Block) -> Block:
    return Block(frozenset(args.split()), blocks, frozenset(required.split()))


# Per kind and type: the arguments and blocks the provider schema has, as far as the
# stacks use them. Adding an argument to a stack means looking it up and adding it here.
SCHEMA: dict[str, dict[str, Block]] = {
    "provider": {
        # [aws] provider/AwsProviderConfig.go, AwsProviderDefaultTags.go
        "aws": B("region", default_tags=B("tags")),
        # [google] provider project (6.49.2, 6.50.0 bindings)
        "google": B("project"),
    },
    "data": {
        # [aws] dataawsssmparameter/DataAwsSsmParameterConfig.go: name required
        "aws_ssm_parameter": B("region name", required="name"),
        # [aws] dataawsvpc/DataAwsVpcConfig.go
        "aws_vpc": B("region default"),
        # [aws] dataawsavailabilityzones/DataAwsAvailabilityZonesConfig.go
        "aws_availability_zones": B("region"),
        # [aws] dataawssubnet/DataAwsSubnetConfig.go
        "aws_subnet": B("region vpc_id availability_zone_id default_for_az"),
        # [google] datagooglecomputeimage/DataGoogleComputeImageConfig.go
        "google_compute_image": B("project family"),
    },
    "resource": {
        # [aws] eip/EipConfig.go (6.x: `vpc` is gone, `domain` is the argument)
        "aws_eip": B("region domain tags"),
        # [aws] keypair/KeyPairConfig.go: public_key required
        "aws_key_pair": B("region key_name public_key", required="public_key"),
        # [aws] securitygroup/SecurityGroupConfig.go, SecurityGroupIngress.go,
        # SecurityGroupEgress.go; from_port, to_port, protocol required (provider docs)
        "aws_security_group": B(
            "region name description vpc_id tags",
            ingress=B(
                "description protocol from_port to_port cidr_blocks",
                required="protocol from_port to_port",
            ),
            egress=B(
                "description protocol from_port to_port cidr_blocks",
                required="protocol from_port to_port",
            ),
        ),
        # [aws] instance/InstanceConfig.go, InstanceMetadataOptions.go,
        # InstanceRootBlockDevice.go
        "aws_instance": B(
            "region ami instance_type subnet_id key_name vpc_security_group_ids"
            " instance_initiated_shutdown_behavior user_data_base64 ebs_optimized"
            " monitoring tags volume_tags",
            metadata_options=B("http_endpoint http_tokens"),
            root_block_device=B("volume_type volume_size encrypted delete_on_termination"),
        ),
        # [aws] eipassociation/EipAssociationConfig.go
        "aws_eip_association": B("region allocation_id instance_id"),
        # [google] computenetwork/ComputeNetworkConfig.go: name required
        "google_compute_network": B("name description auto_create_subnetworks", required="name"),
        # [google] computesubnetwork/ComputeSubnetworkConfig.go
        "google_compute_subnetwork": B(
            "name description region network ip_cidr_range private_ip_google_access",
            required="name network ip_cidr_range",
        ),
        # [google] computeaddress/ComputeAddressConfig.go; labels GA since 5.x
        "google_compute_address": B(
            "name description region address_type network_tier labels", required="name"
        ),
        # [google] computefirewall/ComputeFirewallConfig.go, ComputeFirewallAllow.go
        "google_compute_firewall": B(
            "name description network direction source_ranges",
            required="name network",
            allow=B("protocol ports", required="protocol"),
        ),
        # [google] computeinstance/ComputeInstanceConfig.go and its nested block files
        "google_compute_instance": B(
            "name zone machine_type labels metadata",
            required="name machine_type boot_disk network_interface",
            boot_disk=B("auto_delete", initialize_params=B("image size labels")),
            network_interface=B("subnetwork", access_config=B("nat_ip network_tier")),
            scheduling=B(
                "provisioning_model instance_termination_action",
                max_run_duration=B("seconds", required="seconds"),
            ),
            shielded_instance_config=B(
                "enable_secure_boot enable_vtpm enable_integrity_monitoring"
            ),
        ),
    },
}

STACK_FILES = [paths.INFRA / stack / "main.tf" for stack in ("aws", "gcp", "cloud")]


def _unquote(text: str) -> str:
    return text[1:-1] if text.startswith('"') and text.endswith('"') else text


def _is_block(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


@dataclass(frozen=True)
class Use:
    where: str  # file: kind.type.name, for messages
    stack: str
    kind: str
    type_: str
    body: dict[str, Any]


def _uses(text_by_file: dict[str, str] | None = None) -> list[Use]:
    """Every provider, data and resource block of the stacks (or of the given texts)."""
    sources = text_by_file or {f"{p.parent.name}/{p.name}": p.read_text() for p in STACK_FILES}
    uses = []
    for name, text in sources.items():
        parsed = hcl2.loads(text)
        for block in parsed.get("provider", []):
            for type_, body in block.items():
                where = f"{name}: provider.{_unquote(type_)}"
                uses.append(Use(where, name.split("/")[0], "provider", _unquote(type_), body))
        for kind in ("data", "resource"):
            for block in parsed.get(kind, []):
                for type_, named in block.items():
                    for label, body in named.items():
                        where = f"{name}: {kind}.{_unquote(type_)}.{_unquote(label)}"
                        uses.append(Use(where, name.split("/")[0], kind, _unquote(type_), body))
    return uses


def problems_with(body: dict[str, Any], schema: Block, where: str, top: bool) -> list[str]:
    """Arguments or blocks of `body` that `schema` lacks, required ones missing, and
    blocks written as arguments (or the reverse); one line each."""
    out = []
    present = set()
    for key, value in body.items():
        if key.startswith("__") or (top and key in META):
            continue
        present.add(key)
        if key in schema.blocks:
            if not _is_block(value):
                out.append(f"{where}: {key} is a block in the provider schema")
                continue
            for i, nested in enumerate(value):
                out += problems_with(nested, schema.blocks[key], f"{where}.{key}[{i}]", False)
        elif key in schema.args:
            if _is_block(value):
                out.append(f"{where}: {key} is an argument, not a block")
        else:
            out.append(f"{where}: {key} is not in the provider schema as checked here")
    for key in sorted(schema.required - present):
        out.append(f"{where}: required {key} is missing")
    return out


def _check(uses: list[Use]) -> list[str]:
    out = []
    for use in uses:
        schema = SCHEMA[use.kind].get(use.type_)
        if schema is None:
            out.append(f"{use.where}: {use.kind} type {use.type_} has no checked schema here")
            continue
        out += problems_with(use.body, schema, use.where, True)
    return out


def test_every_argument_and_block_of_the_stacks_is_in_the_provider_schema():
    uses = _uses()
    assert len(uses) >= 19, [u.where for u in uses]  # 2 providers, 5 data, 12 resources
    assert _check(uses) == []


def _used_names(body: dict[str, Any], top: bool) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for key, value in body.items():
        if key.startswith("__") or (top and key in META):
            continue
        if _is_block(value):
            merged: dict[str, Any] = {}
            for nested in value:
                for k, v in _used_names(nested, False).items():
                    merged.setdefault(k, v)
            names[key] = merged
        else:
            names[key] = None
    return names


def _schema_names(block: Block) -> dict[str, Any]:
    names: dict[str, Any] = dict.fromkeys(block.args)
    names.update({k: _schema_names(v) for k, v in block.blocks.items()})
    return names


def test_the_schema_table_holds_only_what_the_stacks_use():
    """So the table cannot keep an argument nobody looks at any more."""
    used: dict[tuple[str, str], dict[str, Any]] = {}
    for use in _uses():
        merged = used.setdefault((use.kind, use.type_), {})
        for k, v in _used_names(use.body, True).items():
            if isinstance(v, dict) and isinstance(merged.get(k), dict):
                merged[k].update(v)
            else:
                merged.setdefault(k, v)
    table = {
        (kind, t): _schema_names(b) for kind, types in SCHEMA.items() for t, b in types.items()
    }
    assert used == table


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        # a misspelt argument
        (
            'resource "aws_instance" "x" {\n  instance_typ = "t3.micro"\n}\n',
            "instance_typ is not in the provider schema",
        ),
        # the 5.x EIP argument, removed in 6.x
        ('resource "aws_eip" "x" {\n  vpc = true\n}\n', "vpc is not in the provider schema"),
        # a misspelt nested argument
        (
            'resource "google_compute_instance" "x" {\n  name = "a"\n  machine_type = "e2-small"\n'
            "  boot_disk {\n    auto_delete = true\n  }\n  network_interface {\n"
            '    subnetwork = "s"\n  }\n  scheduling {\n    max_run_duration {\n'
            "      second = 60\n    }\n  }\n}\n",
            "max_run_duration[0]: second is not in the provider",
        ),
        # a misspelt block
        (
            'resource "google_compute_firewall" "x" {\n  name = "a"\n  network = "n"\n'
            '  allowed {\n    protocol = "tcp"\n  }\n}\n',
            "allowed is not in the provider schema",
        ),
        # a required argument left out
        ('resource "aws_key_pair" "x" {\n  key_name = "k"\n}\n', "required public_key"),
        # a resource type nobody has checked
        ('resource "aws_vpc" "x" {\n  cidr_block = "198.18.0.0/16"\n}\n', "no checked schema"),
    ],
)
def test_the_schema_check_catches(snippet, expected):
    problems = _check(_uses({"snippet.tf": snippet}))
    assert any(expected in p for p in problems), problems


# --- the values the providers accept ------------------------------------------------

# Per (type, path to the argument): the values the provider accepts, with where it says so.
ALLOWED: dict[tuple[str, str], set[str]] = {
    # [aws] eip docs: domain is `vpc` or `standard`
    ("aws_eip", "domain"): {"vpc", "standard"},
    # [aws] instance docs: EC2 defaults to `stop` for EBS-backed instances
    ("aws_instance", "instance_initiated_shutdown_behavior"): {"stop", "terminate"},
    # [aws] instance docs and ec2_instance.go StringInSlice(InstanceMetadataEndpointState)
    ("aws_instance", "metadata_options.http_endpoint"): {"enabled", "disabled"},
    # [aws] instance docs and ec2_instance.go StringInSlice(HttpTokensState)
    ("aws_instance", "metadata_options.http_tokens"): {"optional", "required"},
    # [aws] instance docs and ec2_instance.go StringInSlice(VolumeType_Values())
    ("aws_instance", "root_block_device.volume_type"): {
        "standard",
        "gp2",
        "gp3",
        "io1",
        "io2",
        "sc1",
        "st1",
    },
    # [aws] security_group docs: the IpProtocol of IpPermission; -1 is all
    ("aws_security_group", "ingress.protocol"): {"tcp", "udp", "icmp", "icmpv6", "-1"},
    ("aws_security_group", "egress.protocol"): {"tcp", "udp", "icmp", "icmpv6", "-1"},
    # [google] ComputeAddressConfig: Possible values
    ("google_compute_address", "address_type"): {"INTERNAL", "EXTERNAL"},
    ("google_compute_address", "network_tier"): {"PREMIUM", "STANDARD"},
    # [google] compute_instance docs: access_config.network_tier
    ("google_compute_instance", "network_interface.access_config.network_tier"): {
        "PREMIUM",
        "FIXED_STANDARD",
        "STANDARD",
    },
    # [google] compute_instance docs (STANDARD or SPOT; later versions add more)
    ("google_compute_instance", "scheduling.provisioning_model"): {"STANDARD", "SPOT"},
    ("google_compute_instance", "scheduling.instance_termination_action"): {"STOP", "DELETE"},
    # [google] ComputeFirewallConfig: Possible values
    ("google_compute_firewall", "direction"): {"INGRESS", "EGRESS"},
    # [google] ComputeFirewallAllow: the well-known protocol names (or a number)
    ("google_compute_firewall", "allow.protocol"): {
        "tcp",
        "udp",
        "icmp",
        "esp",
        "ah",
        "sctp",
        "ipip",
        "all",
    },
}


def _values_at(body: dict[str, Any], path: list[str]) -> list[Any]:
    if not path:
        return [body]
    head, rest = path[0], path[1:]
    if head not in body:
        return []
    value = body[head]
    if rest:
        return [v for nested in value for v in _values_at(nested, rest)]
    return [value]


def _enum_of_variable(stack: str, expr: str) -> set[str] | None:
    """`${var.x}` whose validation is contains([...], var.x): the values it lets through."""
    m = re.fullmatch(r"\$\{var\.(\w+)\}", expr)
    if not m:
        return None
    text = (paths.INFRA / stack / "variables.tf").read_text()
    block = text[text.index(f'variable "{m.group(1)}"') :]
    block = block[: block.index("\nvariable ") if "\nvariable " in block else len(block)]
    found = re.search(r"contains\(\[([^\]]*)\], var\." + m.group(1) + r"\)", block)
    return set(re.findall(r'"([^"]*)"', found.group(1))) if found else None


def _possible_values(use: Use, raw: Any) -> set[str] | None:
    if isinstance(raw, str) and "${" not in raw:
        return {_unquote(raw)}
    if isinstance(raw, str):
        return _enum_of_variable(use.stack, raw)
    return None


def enum_problems(uses: list[Use]) -> list[str]:
    out = []
    checked = 0
    for (type_, path), allowed in ALLOWED.items():
        for use in uses:
            if use.type_ != type_ or use.kind != "resource":
                continue
            for raw in _values_at(use.body, path.split(".")):
                checked += 1
                values = _possible_values(use, raw)
                if values is None:
                    out.append(f"{use.where}: {path} = {raw!r} has no checkable set of values")
                elif not values <= allowed:
                    out.append(f"{use.where}: {path} may be {sorted(values - allowed)}")
    if not checked:
        out.append("no enumerated argument was found at all")
    return out


def test_enumerated_arguments_take_values_the_provider_accepts():
    assert enum_problems(_uses()) == []


def test_the_value_check_catches_a_wrong_case_and_an_open_variable(tmp_path):
    wrong = _uses({"aws/x.tf": 'resource "aws_eip" "x" {\n  domain = "VPC"\n}\n'})
    assert any("may be ['VPC']" in p for p in enum_problems(wrong))
    # network_tier from a variable: the variable's validation must name the values
    assert _enum_of_variable("gcp", "${var.network_tier}") == {"PREMIUM", "STANDARD"}
    assert _enum_of_variable("gcp", "${var.ssh_user}") is None
    tier = 'resource "google_compute_address" "x" {\n  network_tier = "${var.ssh_user}"\n}\n'
    assert any("no checkable" in p for p in enum_problems(_uses({"gcp/x.tf": tier})))


def _sg_rules() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{use.where}.{direction}[{i}]", rule)
        for use in _uses()
        if use.type_ == "aws_security_group"
        for direction in ("ingress", "egress")
        for i, rule in enumerate(use.body.get(direction, []))
    ]


@pytest.mark.slow
def test_aws_all_protocol_rules_use_ports_zero_and_icmp_rules_all_types():
    """Provider docs: with protocol -1, from_port and to_port must be 0; for icmp,
    from_port is the ICMP type and to_port the code (-1: all)."""
    rules = _sg_rules()
    assert len(rules) >= 5
    seen = set()
    for where, rule in rules:
        protocol = _unquote(rule["protocol"])
        seen.add(protocol)
        if protocol == "-1":
            assert (rule["from_port"], rule["to_port"]) == (0, 0), where
        if protocol == "icmp":
            assert (rule["from_port"], rule["to_port"]) == (-1, -1), where
    assert {"-1", "icmp", "tcp"} <= seen


def test_gcp_firewall_ports_only_on_port_protocols_and_in_port_syntax():
    """ComputeFirewallAllow: ports apply to TCP and UDP only; each entry an integer or a
    range, e.g. "12345-12349"."""
    allows = [
        (use.where, a)
        for use in _uses()
        if use.type_ == "google_compute_firewall"
        for a in use.body["allow"]
    ]
    assert len(allows) == 3
    for where, allow in allows:
        protocol = _unquote(allow["protocol"])
        ports = allow.get("ports", [])
        if protocol not in ("tcp", "udp"):
            assert ports == [], where
        for port in ports:
            text = re.sub(r"\$\{var\.iperf3_ports\.(first|last)\}", "5201", _unquote(port))
            assert re.fullmatch(r"\d{1,5}(-\d{1,5})?", text), (where, port)


def test_gcp_max_run_duration_fits_the_provider_range_and_has_its_action():
    """max_run_duration.seconds: 0 to 315,576,000,000 (provider docs); the VM's action at
    the end is instance_termination_action. The stack's ttl validation bounds it."""
    (instance,) = [u for u in _uses() if u.type_ == "google_compute_instance"]
    (scheduling,) = instance.body["scheduling"]
    assert "instance_termination_action" in scheduling
    (duration,) = scheduling["max_run_duration"]
    assert duration["seconds"] == "${var.ttl_minutes * 60}"
    text = (paths.INFRA / "gcp" / "variables.tf").read_text()
    bounds = re.search(r"var\.ttl_minutes >= (\d+) && var\.ttl_minutes <= (\d+)", text)
    assert bounds, "the ttl_minutes validation changed shape"
    low, high = int(bounds.group(1)), int(bounds.group(2))
    assert 0 < low * 60 <= high * 60 <= 315_576_000_000


# Per type: sets of arguments (dotted paths) of which a block may set at most one, from
# the providers' ConflictsWith (hashicorp/terraform-provider-aws ec2_instance.go: user_data
# vs user_data_base64; root_block_device.tags vs volume_tags; network_interface vs the
# instance's own subnet, address and group arguments) and docs ("Conflicts with": the
# security group's and key pair's name vs name_prefix).
CONFLICTS: dict[str, list[set[str]]] = {
    "aws_instance": [
        {"user_data", "user_data_base64"},
        {"volume_tags", "root_block_device.tags"},
        {"network_interface", "subnet_id"},
        {"network_interface", "vpc_security_group_ids"},
        {"network_interface", "associate_public_ip_address"},
    ],
    "aws_security_group": [{"name", "name_prefix"}],
    "aws_key_pair": [{"key_name", "key_name_prefix"}],
}


def conflict_problems(uses: list[Use]) -> list[str]:
    out = []
    for use in uses:
        for group in CONFLICTS.get(use.type_, []):
            present = {p for p in group if _values_at(use.body, p.split("."))}
            if len(present) > 1:
                out.append(f"{use.where}: {sorted(present)} conflict in the provider")
    return out


def test_no_block_sets_arguments_the_provider_lets_only_one_of():
    assert conflict_problems(_uses()) == []
    both = (
        'resource "aws_instance" "x" {\n  volume_tags = {}\n'
        "  root_block_device {\n    tags = {}\n  }\n}\n"
    )
    assert conflict_problems(_uses({"aws/x.tf": both}))
