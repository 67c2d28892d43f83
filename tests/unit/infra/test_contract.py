"""The cloud stacks and the orchestrator agree: variables, types, validations, host output.

Parsed with python-hcl2, so this runs without providers or an account.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from infra_support import _expr, _load, _unquote, conforms, declared, parse_type

from orchestrator.clouds import stacks
from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.drivers.terraform import TerraformStack
from orchestrator.emulator import stack as local_stack
from orchestrator.emulator import state
from orchestrator.model.catalog import load_catalog
from orchestrator.model.hosts import Host

STACKS = ("aws", "gcp", "cloud")
CREATED = datetime(2026, 11, 22, 1, 30, tzinfo=UTC)


@dataclass(frozen=True)
class Keys:
    client_pub: str
    host_key: Path
    host_pub: str


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    d = tmp_path_factory.mktemp("keys")
    for name in ("client", "host"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True
        )
    return Keys(
        client_pub=(d / "client.pub").read_text(),
        host_key=d / "host",
        host_pub=(d / "host.pub").read_text(),
    )


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _variables(backend: str, catalog, keys: Keys, regions=None) -> dict[str, Any]:
    chosen = regions or [catalog.get(k) for k in ("aws:us-east-1", "aws:eu-west-1")] + [
        catalog.get(k) for k in ("gcp:europe-west1", "gcp:asia-northeast1")
    ]
    if backend != "cloud":
        chosen = [r for r in chosen if r.cloud == backend]
    directory, variables = stacks.stack_variables(
        backend,
        "20261122T0130Z-3fa2",
        chosen,
        keys,
        machine_types=catalog.machine_types,
        operator_cidr="203.0.113.7/32",
        ttl_minutes=120,
        owner="Ada Lovelace@lab.example",
        created=CREATED,
        gcp_project="my-project",
    )
    assert directory == paths.INFRA / backend
    return variables


@pytest.mark.parametrize("backend", STACKS)
def test_orchestrator_writes_exactly_the_declared_variables(backend, catalog, keys):
    variables = _variables(backend, catalog, keys)
    decl = declared(backend)
    assert set(variables) == set(decl)
    problems = []
    for name, block in decl.items():
        problems += conforms(variables[name], parse_type(block["type"]), name)
    assert problems == []


@pytest.mark.parametrize("stack", STACKS)
def test_every_variable_is_typed_and_described(stack):
    for name, block in declared(stack).items():
        assert block.get("type"), f"{stack}: variable {name} has no type"
        assert len(_unquote(block.get("description", ""))) > 10, f"{stack}: {name} undescribed"


def test_cloud_stack_passes_every_variable_of_both_stacks_but_the_peers():
    decl = declared("cloud")
    for cloud in ("aws", "gcp"):
        _, attrs = parse_type(decl[cloud]["type"])
        assert set(attrs) == set(declared(cloud)) - {"peer_addresses"}
        module = next(
            m[f'"{cloud}"'] for m in _load("cloud", "main.tf")["module"] if f'"{cloud}"' in m
        )
        passed = set(module) - {"source", "__is_block__"}
        assert passed == set(declared(cloud)), cloud
        other = "gcp" if cloud == "aws" else "aws"
        assert module["peer_addresses"] == f"${{module.{other}.addresses}}"


def _host_fields(value: str) -> set[str]:
    """Attribute names of the object each host maps to in a `hosts` output for-expression."""
    body = _expr(value)
    start = body.index("=> {") + 4
    depth, end = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(body[end], 0)
        end += 1
    inner = body[start : end - 1]
    # top-level `name = expr` pairs; the values here hold no nested braces with `=`
    return set(re.findall(r"(?:^|,\s*)([a-z_]+) = ", inner))


def _output(stack: str, name: str) -> dict[str, Any]:
    for block in _load(stack, "outputs.tf")["output"]:
        if f'"{name}"' in block:
            return block[f'"{name}"']
    raise AssertionError(f"{stack} has no output {name}")


@pytest.mark.parametrize("stack", ["aws", "gcp"])
def test_cloud_stacks_output_the_host_contract(stack):
    assert _host_fields(_output(stack, "hosts")["value"]) == {f.name for f in fields(Host)}
    assert f'backend      = "{stack}"' in (paths.INFRA / stack / "outputs.tf").read_text()


def test_cross_cloud_stack_outputs_both_clouds_hosts():
    assert _output("cloud", "hosts")["value"] == "${merge(module.aws.hosts, module.gcp.hosts)}"


def test_local_stack_outputs_the_same_host_contract():
    assert (paths.INFRA / "local" / "outputs.tf").is_file()
    assert _host_fields(_output("local", "hosts")["value"]) == {f.name for f in fields(Host)}


def test_local_stack_variables_match_the_emulator(catalog, keys, tmp_path):
    assert (paths.INFRA / "local" / "variables.tf").is_file()
    regions = [catalog.get("aws:us-east-1"), catalog.get("gcp:europe-west1")]
    sweep_id = "20261122T0130Z-3fa2"
    try:
        variables = local_stack.local_variables(
            sweep_id, regions, keys, tmp_path, owner_pid=os.getpid()
        )
    finally:  # local_variables reserves the sweep's subnet: give it back
        state.remove_state(local_stack.emulation_id_for(sweep_id))
    assert set(variables) == set(declared("local"))
    problems = []
    for name, block in declared("local").items():
        problems += conforms(variables[name], parse_type(block["type"]), name)
    assert problems == []


def test_local_stack_takes_the_controller_location(catalog, keys, tmp_path):
    regions = [catalog.get("aws:us-east-1"), catalog.get("aws:ap-southeast-2")]
    sweep_id = "20261122T0130Z-ctl1"
    try:
        variables = local_stack.local_variables(
            sweep_id,
            regions,
            keys,
            tmp_path,
            owner_pid=os.getpid(),
            controller=catalog.get("aws:us-east-1"),
        )
    finally:
        state.remove_state(local_stack.emulation_id_for(sweep_id))
    assert variables["controller"] == "aws:us-east-1"
    spec = json.loads(Path(variables["spec_file"]).read_text())
    assert spec["controller"] == "aws:us-east-1" and len(spec["controller_paths"]) == 4


def test_local_controller_validation_accepts_every_catalog_region_and_nothing_else(
    catalog, tmp_path
):
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")
    text = (paths.INFRA / "local" / "variables.tf").read_text()
    block = text[text.index('variable "controller"') :]
    (condition,) = re.findall(r"^\s*condition\s*=\s*(.*)$", block, re.MULTILINE)
    cases = [(r.key, True) for r in catalog.regions] + [
        ("", True),
        ("us-east-1", False),
        ("azure:eastus", False),
        ("aws:US-EAST-1", False),
        ("aws:us-east-1 ", False),
    ]
    # One terraform console run for all cases: a list of booleans.
    expression = (
        "["
        + ", ".join(condition.replace("var.controller", json.dumps(value)) for value, _ in cases)
        + "]"
    )
    # console prints the JSON text as a quoted string
    got = json.loads(json.loads(_terraform_eval(f"jsonencode({expression})", tmp_path)))
    assert got == [accepted for _, accepted in cases]


# (block, accepted by the stacks): IPv4 networks of /8 to /32 only, no host bits.
OPERATOR_CIDRS = [
    ("203.0.113.7/32", True),
    ("203.0.113.0/24", True),
    ("198.0.0.0/8", True),
    ("0.0.0.0/0", False),
    ("128.0.0.0/1", False),
    ("202.0.0.0/7", False),
    ("::/0", False),
    ("2001:db8::/32", False),
    ("203.0.113.7/33", False),
    ("203.0.113.7/24", False),  # host bits: the provider wants the network (203.0.113.0/24)
    ("10.1.2.3/8", False),
    ("203.0.113.07/32", False),
    ("203.0.113.7", False),  # the orchestrator always writes the prefix length
    ("my-laptop", False),
]


def _terraform_eval(expression: str, cwd: Path) -> str:
    done = subprocess.run(
        ["terraform", "console"], input=expression, cwd=cwd, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_operator_cidr_validation_agrees_with_the_orchestrator(stack, tmp_path):
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")
    text = (paths.INFRA / stack / "variables.tf").read_text()
    conditions = re.findall(r"^\s*condition\s*=\s*(.*operator_cidr.*)$", text, re.MULTILINE)
    assert len(conditions) == (2 if stack == "cloud" else 1)
    for condition in conditions:
        for cidr, accepted in OPERATOR_CIDRS:
            expression = re.sub(r"var\.(\w+\.)?operator_cidr", json.dumps(cidr), condition)
            assert _terraform_eval(expression, tmp_path) == str(accepted).lower(), (stack, cidr)
            try:
                written = stacks.operator_cidr(cidr)
            except UserError:
                assert not accepted, cidr
            else:
                # What the orchestrator writes, the stack accepts.
                written_expr = re.sub(r"var\.(\w+\.)?operator_cidr", json.dumps(written), condition)
                assert _terraform_eval(written_expr, tmp_path) == "true", (cidr, written)


def _validation_regexes(stack: str, variable: str) -> list[str]:
    text = (paths.INFRA / stack / "variables.tf").read_text()
    block = text[text.index(f'variable "{variable}"') :]
    block = block[: block.index("\nvariable ") if "\nvariable " in block else len(block)]
    return re.findall(r'regex\("([^"]+)"', block)


def test_gcp_names_and_labels_pass_the_stack_validation(catalog, keys):
    variables = _variables("gcp", catalog, keys)
    (prefix_re,) = _validation_regexes("gcp", "name_prefix")
    assert re.fullmatch(prefix_re, variables["name_prefix"])
    assert not re.fullmatch(prefix_re, "ir-x-")  # GCP names must not end in a dash
    key_re, value_re = _validation_regexes("gcp", "labels")
    for k, v in variables["labels"].items():
        assert re.fullmatch(key_re, k) and re.fullmatch(value_re, v), (k, v)
    # every resource name (prefix-region) fits GCP's 63 characters
    for region in catalog.in_clouds(["gcp"]):
        assert len(f"{variables['name_prefix']}-{region.id}") <= 63


def test_pins_and_region_ids_are_checked_alike_in_python_and_the_stacks():
    region_re, zone_re, ami_re = _validation_regexes("aws", "regions")
    assert region_re == f"^{stacks.AWS_REGION_ID.pattern}$"
    assert zone_re == f"^({stacks.AWS_ZONE_ID.pattern})?$"
    assert ami_re == f"^({stacks.AWS_AMI.pattern})?$"
    (image_re,) = _validation_regexes("gcp", "regions")
    assert image_re == f"^({stacks.GCP_IMAGE.pattern})?$"


def test_aws_region_ids_of_the_catalog_pass_the_stack_validation(catalog):
    region_re = _validation_regexes("aws", "regions")[0]
    for region in catalog.in_clouds(["aws"]):
        assert re.fullmatch(region_re, region.id), region.id


# (region id, accepted by infra/aws): the commercial partition only.
AWS_REGION_IDS = [
    ("us-east-1", True),
    ("ap-southeast-5", True),
    ("us-gov-west-1", False),  # GovCloud: other accounts and endpoints
    ("cn-north-1", False),  # China: likewise
    ("cn-northwest-1", False),
    ("us-iso-east-1", False),
    ("US-EAST-1", False),
]


def test_aws_region_validation_refuses_other_partitions(tmp_path):
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")
    text = (paths.INFRA / "aws" / "variables.tf").read_text()
    block = text[text.index('variable "regions"') : text.index('variable "home_region"')]
    condition = re.findall(r"^\s*condition\s*=\s*(.*)$", block, re.MULTILINE)[0]
    for region_id, accepted in AWS_REGION_IDS:
        regions = json.dumps({region_id: {"machine_type": "t3.small"}})
        expression = condition.replace("var.regions", regions)
        assert _terraform_eval(expression, tmp_path) == str(accepted).lower(), region_id
        try:
            stacks.check_aws_region(region_id)
        except UserError:
            assert not accepted, region_id
        else:
            assert accepted, region_id


def test_gcp_zones_lie_in_their_regions(catalog, keys):
    variables = _variables("gcp", catalog, keys, regions=catalog.in_clouds(["gcp"]))
    for region, settings in variables["regions"].items():
        assert settings["zone"].startswith(f"{region}-")


def _pessimistic(constraint: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """`~> X.Y` as [X.Y, X+1): the only form the stacks' versions.tf use."""
    match = re.fullmatch(r"~> (\d+)\.(\d+)", constraint)
    assert match, f"versions.tf pins {constraint!r}: only '~> X.Y' is understood here"
    major, minor = int(match[1]), int(match[2])
    return (major, minor), (major + 1,)


@pytest.mark.parametrize("stack", [*STACKS, "local"])
def test_each_stack_locks_the_providers_it_requires(stack):
    """The committed .terraform.lock.hcl names every provider versions.tf requires, at a
    version the constraint allows, with the registry's package hashes (zh:, the SHA-256 of
    each platform's zip; h1:, a hash of an unpacked package); the emulated stack uses only
    Terraform's built-ins and has nothing to lock."""
    import hcl2

    (terraform,) = _load(stack, "versions.tf")["terraform"]
    required = {
        name: (_unquote(spec["source"]), _unquote(spec["version"]))
        for block in terraform.get("required_providers", [])
        for name, spec in block.items()
        if not name.startswith("__")
    }
    lock_file = paths.INFRA / stack / ".terraform.lock.hcl"
    if not required:
        assert stack == "local" and not lock_file.exists()
        return
    locked = {
        _unquote(address): block
        for entry in hcl2.loads(lock_file.read_text())["provider"]
        for address, block in entry.items()
    }
    assert set(locked) == {f"registry.terraform.io/{src}" for src, _ in required.values()}
    for source, constraint in required.values():
        block = locked[f"registry.terraform.io/{source}"]
        version = tuple(int(p) for p in _unquote(block["version"]).split("."))
        low, high = _pessimistic(constraint)
        assert low <= version < high, (source, version, constraint)
        hashes = [_unquote(h) for h in block["hashes"]]
        assert hashes == sorted(set(hashes)), "terraform writes the hashes sorted, once each"
        zh = [h for h in hashes if h.startswith("zh:")]
        h1 = [h for h in hashes if h.startswith("h1:")]
        assert len(zh) >= 10 and len(zh) + len(h1) == len(hashes)  # every platform's zip
        assert all(re.fullmatch(r"zh:[0-9a-f]{64}", h) for h in zh)
        assert all(len(base64.b64decode(h[3:], validate=True)) == 32 for h in h1)
    # the same provider is locked at the same version in every stack
    if stack == "cloud":
        for other in ("aws", "gcp"):
            for address, block in hcl2.loads(
                (paths.INFRA / other / ".terraform.lock.hcl").read_text()
            )["provider"][0].items():
                assert locked[_unquote(address)] == block, (other, address)


def test_lock_files_are_not_ignored_by_git():
    if shutil.which("git") is None or not (paths.ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for stack in STACKS:
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", f"infra/{stack}/.terraform.lock.hcl"],
            cwd=paths.ROOT,
            check=False,
        )
        assert ignored.returncode == 1, f"infra/{stack}/.terraform.lock.hcl is ignored by git"


def test_terraform_validate_where_providers_can_be_installed(tmp_path):
    """Runs `terraform validate` when the provider registry is reachable; here it is not."""
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")
    work = tmp_path / "infra"
    shutil.copytree(paths.INFRA, work, ignore=shutil.ignore_patterns(".terraform", "delayd"))
    init = subprocess.run(
        ["terraform", "init", "-backend=false", "-input=false", "-no-color"],
        cwd=work / "cloud",
        capture_output=True,
        text=True,
        timeout=300,
    )
    if init.returncode != 0:
        # Modules load and the configuration parses before providers are fetched:
        # anything but a registry failure is a real error in the stacks.
        error = next((ln for ln in init.stderr.splitlines() if ln.startswith("Error:")), "")
        assert "provider" in error.lower() or "registry" in init.stderr, init.stderr
        pytest.skip(f"terraform validate skipped: providers cannot be installed here ({error})")
    for stack in STACKS:
        if stack != "cloud":
            subprocess.run(
                ["terraform", "init", "-backend=false", "-input=false"],
                cwd=work / stack,
                check=True,
            )
        result = subprocess.run(
            ["terraform", "validate", "-no-color"], cwd=work / stack, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr


def test_aws_security_groups_stay_within_default_quotas(catalog):
    """60 rules per direction per group, 5 groups per interface (AWS defaults): the
    peer groups hold 2 ingress rules per peer, and every host of the catalog fits."""
    main_tf = (paths.INFRA / "aws" / "main.tf").read_text()
    (per_group,) = re.findall(r"chunklist\(local\.peer_names, (\d+)\)", main_tf)
    per_group = int(per_group)
    ingress_per_peer = len(
        re.findall(r"ingress \{", main_tf.split('"peers"')[1].split("resource ")[0])
    )
    assert ingress_per_peer * per_group <= 60
    groups_per_host = 1 + -(-len(catalog.regions) // per_group)  # ssh + peer groups
    assert groups_per_host <= 5


@pytest.mark.parametrize(
    "stack",
    [
        "aws",
        "gcp",
        "cloud",  # its modules (../aws, ../gcp) are copied in their layout by the driver
    ],
)
def test_the_terraform_driver_gets_each_cloud_stack_as_far_as_providers(stack, tmp_path):
    """Through orchestrator.drivers.terraform, as a sweep runs it: configuration and modules load;
    here it stops where providers must be downloaded (no registry access)."""
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")

    runner = TerraformStack(paths.INFRA / stack, tmp_path / f"tf-{stack}")
    try:
        runner.apply({})
    except UserError as e:
        message = str(e)
    else:  # pragma: no cover - empty variables never apply
        raise AssertionError("apply with no variables succeeded")
    # past configuration and modules: providers cannot be fetched here, or (where they
    # can) the empty variables are refused
    assert "provider" in message.lower() or "variable" in message.lower(), message


# The AWS provider's rule description check, hashicorp/terraform-provider-aws
# internal/service/ec2/validate.go, validSecurityGroupRuleDescription (after the
# EC2 API's IpRange): `^[A-Za-z0-9 \.\_\-\:\/\(\)\#\,\@\[\]\+\=\&\;\{\}\!\$\*]*$`,
# at most 255 characters. CreateSecurityGroup holds GroupDescription and GroupName
# of a VPC group to the same set at apply.
AWS_SG_TEXT = re.compile(r"[A-Za-z0-9 ._\-:/()#,@\[\]+=&;{}!$*]{0,255}")
# What the interpolations in those texts become, at their widest legal values.
AWS_SG_INTERPOLATIONS = {
    "${var.sweep_id}": "A" + "b-9" * 20 + "Z",  # the sweep_id validation: 63 characters
    "${local.name}": "interregion-" + "A" + "b-9" * 20 + "Z",
    '${split("/", each.key)[1]}': "12",
}


def _aws_sg_texts(stack: str) -> list[tuple[str, str]]:
    """(where, text) of every name and description of every security group and rule."""
    texts = []
    for block in _load(stack, "main.tf").get("resource", []):
        for kind, named in block.items():
            if _unquote(kind) not in (
                "aws_security_group",
                "aws_security_group_rule",
                "aws_vpc_security_group_ingress_rule",
                "aws_vpc_security_group_egress_rule",
            ):
                continue
            for name, body in named.items():
                where = f"{_unquote(kind)}.{_unquote(name)}"
                for attr in ("name", "description"):
                    if attr in body:
                        texts.append((f"{where}.{attr}", body[attr]))
                for direction in ("ingress", "egress"):
                    for i, rule in enumerate(body.get(direction, [])):
                        assert "description" in rule, f"{where}.{direction}[{i}] undescribed"
                        texts.append((f"{where}.{direction}[{i}]", rule["description"]))
    return texts


def test_aws_security_group_texts_use_the_ec2_character_set():
    texts = _aws_sg_texts("aws")
    assert len(texts) >= 10  # 2 groups: name, description, and every rule's description
    for where, raw in texts:
        text = _unquote(raw)
        for expr, widest in AWS_SG_INTERPOLATIONS.items():
            text = text.replace(expr, widest)
        assert "${" not in text, f"{where}: unknown interpolation in {raw}"
        assert AWS_SG_TEXT.fullmatch(text), f"{where}: {text!r} has characters EC2 refuses"


def test_the_ec2_character_set_check_catches_an_apostrophe():
    assert not AWS_SG_TEXT.fullmatch("iperf3 from the sweep's hosts")
    assert not AWS_SG_TEXT.fullmatch("x" * 256)
    assert AWS_SG_TEXT.fullmatch("testRule 123 ._-:/()#,@[]+=&;{}!$*")  # the provider's own test


# --- the AWS dead-man switch survives reboots ----------------------------------------


def _aws_local(name: str) -> str:
    for block in _load("aws", "main.tf")["locals"]:
        if name in block:
            return _expr(block[name])
    raise AssertionError(f"infra/aws has no local {name}")


def _render_aws_user_data(tmp_path: Path, keys: Keys, created_utc: str, ttl_minutes: int) -> Any:
    """The AWS hosts' cloud-config, rendered by Terraform itself (`terraform console`
    runs without providers) from the stack's own expressions and files."""
    expires = _aws_local("expires_utc")
    expires = expires.replace('var.tags["created_utc"]', json.dumps(created_utc))
    expires = expires.replace("var.ttl_minutes", str(ttl_minutes))
    config = _aws_local("cloud_config")
    for name, value in {
        "local.expires_utc": expires,
        "var.host_key_file": json.dumps(str(keys.host_key)),
        "var.host_public_key": json.dumps(keys.host_pub.strip()),
    }.items():
        config = config.replace(name, value)
    config = config.replace("${path.module}", str(paths.INFRA / "aws"))
    assert "var." not in config and "local." not in config, config
    work = tmp_path / "console"
    work.mkdir()
    encoded = _terraform_eval(f"base64encode(nonsensitive({config}))", work)
    text = base64.b64decode(json.loads(encoded)).decode()
    assert text.startswith("#cloud-config\n")
    return yaml.safe_load(text)


def _run_deadman(script: str, tmp_path: Path, now_utc: str) -> list[str]:
    """Run the dead-man script with `date` fixed at `now_utc` and a `shutdown` that
    records its arguments; returns them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    real_date = shutil.which("date")
    (bin_dir / "date").write_text(
        "#!/bin/sh\n"
        f'if [ "$#" -eq 1 ] && [ "$1" = "+%s" ]; then exec {real_date} -d "$FAKE_NOW" +%s; fi\n'
        f'exec {real_date} "$@"\n'
    )
    (bin_dir / "shutdown").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$SHUTDOWN_ARGS"\n')
    for tool in ("date", "shutdown"):
        (bin_dir / tool).chmod(0o755)
    (tmp_path / "deadman").write_text(script)
    args = tmp_path / "shutdown-args"
    args.unlink(missing_ok=True)
    subprocess.run(
        ["sh", str(tmp_path / "deadman")],
        env={
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "FAKE_NOW": now_utc,
            "SHUTDOWN_ARGS": str(args),
        },
        check=True,
    )
    return args.read_text().splitlines()


@pytest.fixture(scope="module")
def aws_user_data(tmp_path_factory: pytest.TempPathFactory, keys: Keys) -> Any:
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")
    return _render_aws_user_data(
        tmp_path_factory.mktemp("userdata"), keys, "2026-11-22T01:30:00Z", 120
    )


def test_aws_user_data_fits_the_ec2_limit(tmp_path, keys):
    """EC2 takes at most 16 KB of user data (before base64; the provider's user_data check
    is StringLenBetween(0, 16384), user_data_base64 only checks the encoding)."""
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")
    rendered = _render_aws_user_data(tmp_path, keys, "2026-11-22T01:30:00Z", 2880)
    text = "#cloud-config\n" + yaml.safe_dump(rendered)
    assert len(text.encode()) <= 16384 // 2  # room to spare: it holds a key and a script


def test_gcp_dead_man_switch_is_kept_by_gcp_not_the_guest():
    """GCP runs the startup script at every boot (provider docs: metadata.startup-script runs
    "on every boot"): it must stay idempotent and schedule nothing; the switch is GCP's
    max_run_duration, which a guest reboot does not reset."""
    (instance,) = [
        body
        for block in _load("gcp", "main.tf")["resource"]
        for kind, named in block.items()
        if _unquote(kind) == "google_compute_instance"
        for body in named.values()
    ]
    (scheduling,) = instance["scheduling"]
    assert scheduling["instance_termination_action"] == '"DELETE"'
    assert scheduling["max_run_duration"][0]["seconds"] == "${var.ttl_minutes * 60}"
    script = _load("gcp", "main.tf")["locals"][0]["startup_script"]
    assert "shutdown" not in script and "runcmd" not in script


def test_aws_dead_man_switch_is_a_boot_time_unit(aws_user_data):
    files = {f["path"]: f for f in aws_user_data["write_files"]}
    unit = files["/etc/systemd/system/interregion-deadman.service"]["content"]
    script = files["/usr/local/sbin/interregion-deadman"]
    assert "ExecStart=/usr/local/sbin/interregion-deadman" in unit
    assert "WantedBy=multi-user.target" in unit  # so it runs at every boot, not only the first
    assert script["permissions"] == "0755"
    assert ["systemctl", "enable", "--now", "interregion-deadman.service"] in aws_user_data[
        "runcmd"
    ]
    # Nothing schedules a relative shutdown once at first boot any more.
    assert not any("shutdown" in " ".join(cmd) for cmd in aws_user_data["runcmd"])
    assert "2026-11-22T03:30:00Z" in script["content"]  # created + 120 min, absolute


@pytest.mark.parametrize(
    ("now_utc", "expected"),
    [
        ("2026-11-22T01:35:00Z", ["-h", "+115"]),  # first boot, 5 min after creation
        ("2026-11-22T03:00:30Z", ["-h", "+30"]),  # rebooted later: only what is left
        ("2026-11-22T03:29:59Z", ["-h", "+1"]),
        ("2026-11-22T03:30:00Z", ["-h", "now"]),  # rebooted past the expiry: at once
        ("2026-11-23T09:00:00Z", ["-h", "now"]),
    ],
)
def test_aws_dead_man_switch_computes_the_time_left_at_each_boot(
    aws_user_data, tmp_path, now_utc, expected
):
    files = {f["path"]: f for f in aws_user_data["write_files"]}
    args = _run_deadman(files["/usr/local/sbin/interregion-deadman"]["content"], tmp_path, now_utc)
    assert args[:2] == expected


# The provider's Compute Engine name check (verify.ValidateGCEName in
# hashicorp/terraform-provider-google; the API enforces the same): a letter, then up to
# 62 lower-case letters, digits or dashes, not ending in a dash.
GCE_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?")


def test_every_gcp_resource_name_is_a_gce_name_at_the_widest_prefix(catalog):
    (prefix_re,) = _validation_regexes("gcp", "name_prefix")
    widest = "i" + "-9" * 17  # 35 characters, the most the name_prefix validation takes
    assert re.fullmatch(prefix_re, widest) and not re.fullmatch(prefix_re, widest + "9")
    names = []
    for block in _load("gcp", "main.tf").get("resource", []):
        for kind, named in block.items():
            for name, body in named.items():
                names.append((f"{_unquote(kind)}.{_unquote(name)}", _unquote(body["name"])))
    assert len(names) == 6, names  # network, subnetwork, address, 2 firewalls, instance
    regions = [r.id for r in catalog.in_clouds(["gcp"])]
    for where, template in names:
        text = template.replace("${var.name_prefix}", widest)
        for region in regions if "${each.key}" in text else [""]:
            name = text.replace("${each.key}", region)
            assert "${" not in name, f"{where}: unknown interpolation in {template}"
            assert GCE_NAME.fullmatch(name), f"{where}: {name!r} is not a GCE name"


def test_the_gce_name_check_catches_what_gcp_refuses():
    assert GCE_NAME.fullmatch("ir-20261122t0130z-3fa2-europe-west1")
    for bad in ("ir-x-", "1ir", "Ir-x", "ir_x", "i" * 64):
        assert not GCE_NAME.fullmatch(bad), bad
