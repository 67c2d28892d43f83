"""From a sweep to the variables of the cloud stacks (infra/aws, infra/gcp, infra/cloud).

Pure functions: everything the stacks need is passed in. The variables written
here are exactly those the stacks declare (tests/unit/infra/test_contract.py).
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import socket
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from orchestrator.clouds import labels
from orchestrator.core import INFRA, DurationError, UserError, parse_seconds
from orchestrator.model import CLOUD_NAMES, IPERF3_PORTS, Region, backend_info
from orchestrator.results import NETWORK_TIERS

DEFAULT_IPERF3_PORTS = IPERF3_PORTS
DEFAULT_AMI_PARAMETER = "/aws/service/debian/release/12/latest/amd64"
DEFAULT_GCP_IMAGE = "debian-cloud/debian-12"
AWS_SSH_USER = "admin"  # Debian's AMIs
GCP_SSH_USER = "interregion"  # created by the guest agent from the ssh-keys metadata

# The dead-man switch must outlive the sweep: its estimate, time to provision and
# prepare, and a margin for retries. Bounds match the stacks' validation.
TTL_MIN_MINUTES = 30
TTL_MAX_MINUTES = 2880
PROVISION_MARGIN_S = 15 * 60
TTL_FACTOR = 1.5
# SSH is opened to the operator only: an IPv4 block no wider than a /8 (the
# stacks' validation agrees; AWS security group cidr_blocks take IPv4 only).
OPERATOR_MIN_PREFIX = 8
# AWS regions of the commercial partition, as infra/aws validates them: GovCloud
# (us-gov-west-1) and China (cn-north-1) need other accounts and endpoints.
AWS_REGION_ID = re.compile(r"[a-z]{2}-[a-z]+-[0-9]")
AWS_OTHER_PARTITIONS = {"-gov-": "GovCloud", "-cn-": "China"}
# What a sweep may pin (the stacks' validation agrees): AWS Availability Zone IDs and
# AMI ids; GCP zones of the region and images as projects/P/global/images/NAME.
AWS_ZONE_ID = re.compile(r"[a-z]+[0-9]+-az[0-9]+")
AWS_AMI = re.compile(r"ami-[0-9a-f]{8}([0-9a-f]{9})?")
GCP_IMAGE = re.compile(r"projects/[a-z][-a-z0-9]*/global/images/[a-z][-a-z0-9]*")


class KeyMaterial(Protocol):
    """What the stacks need of the sweep's keys (orchestrator.drivers.keys.SweepKeys has it)."""

    @property
    def client_pub(self) -> str: ...
    @property
    def host_key(self) -> Path: ...
    @property
    def host_pub(self) -> str: ...


def stack_dir(backend: str) -> Path:
    """The Terraform stack of a cloud backend."""
    if backend not in CLOUD_NAMES:
        raise UserError(f"unknown cloud backend '{backend}': use one of {', '.join(CLOUD_NAMES)}")
    return INFRA / backend


def ttl_minutes(estimate_wall_s: float, ttl_override_minutes: int | None = None) -> int:
    """Minutes the hosts may live: the sweep's estimate plus a margin, or `--ttl`."""
    if ttl_override_minutes is not None:
        if not TTL_MIN_MINUTES <= ttl_override_minutes <= TTL_MAX_MINUTES:
            raise UserError(
                f"--ttl {ttl_override_minutes} minutes is outside "
                f"{TTL_MIN_MINUTES}-{TTL_MAX_MINUTES}: pick a value in that range"
            )
        return ttl_override_minutes
    minutes = math.ceil((estimate_wall_s + PROVISION_MARGIN_S) * TTL_FACTOR / 60)
    return max(TTL_MIN_MINUTES, min(TTL_MAX_MINUTES, minutes))


def parse_ttl(text: str) -> int:
    """`--ttl 90` (minutes), `90m`, `2h`, `1d`, `PT3H` (core.durations) as minutes."""
    try:
        return math.ceil(parse_seconds(text, bare_unit="m") / 60)
    except DurationError as e:
        raise UserError(f"--ttl {e}") from None


def operator_cidr(given: str | None, detect_url: str = "https://checkip.amazonaws.com") -> str:
    """The address SSH is opened to: `--operator-cidr` or the detected public address /32."""
    if given:
        try:
            network = ipaddress.ip_network(given.strip(), strict=False)
        except ValueError:
            raise UserError(
                f"--operator-cidr '{given}' is not an address block: write e.g. 203.0.113.7/32"
            ) from None
        _check_operator_network(network, f"--operator-cidr '{given}'")
        address = ipaddress.ip_interface(given.strip()).ip
        if address != network.network_address:
            # The provider's cidr_blocks check refuses host bits at plan: say so now.
            raise UserError(
                f"--operator-cidr '{given}' has host bits set: use {network} "
                f"(or {address}/32 for your address alone)"
            )
        return str(network)
    try:
        with urllib.request.urlopen(detect_url, timeout=10) as response:
            address = ipaddress.ip_address(response.read().decode().strip())
    except (OSError, ValueError):
        raise UserError(
            f"could not detect your public address from {detect_url}: pass --operator-cidr"
        ) from None
    network = ipaddress.ip_network(f"{address}/{address.max_prefixlen}")
    return str(_check_operator_network(network, f"detected address {address}"))


def _check_operator_network(
    network: ipaddress.IPv4Network | ipaddress.IPv6Network, what: str
) -> ipaddress.IPv4Network:
    if not isinstance(network, ipaddress.IPv4Network):
        raise UserError(
            f"{what} is IPv6: the stacks open SSH to an IPv4 block, e.g. --operator-cidr "
            "203.0.113.7/32"
        )
    if network.prefixlen == 0:
        raise UserError(f"{what} is the whole internet: give your own /32")
    if network.prefixlen < OPERATOR_MIN_PREFIX:
        raise UserError(
            f"{what} is wider than a /{OPERATOR_MIN_PREFIX}: give your own address, "
            "e.g. 203.0.113.7/32"
        )
    return network


def default_owner() -> str:
    """Who the resources belong to: $INTERREGION_OWNER, else user@host."""
    owner = os.environ.get("INTERREGION_OWNER")
    if owner:
        return owner
    try:
        user = os.getlogin()
    except OSError:
        user = os.environ.get("USER", "unknown")
    return f"{user}@{socket.gethostname()}"


def _machine_type(region: Region, machine_types: Mapping[str, str]) -> str:
    machine_type = machine_types.get(region.cloud)
    if not machine_type:
        raise UserError(
            f"no machine type for {region.cloud}: set one in regions.yaml or on the CLI"
        )
    return machine_type


def _only(regions: Sequence[Region], cloud: str) -> list[Region]:
    return sorted((r for r in regions if r.cloud == cloud), key=lambda r: r.id)


def check_pins(
    regions: Sequence[Region], zones: Mapping[str, str], images: Mapping[str, str]
) -> None:
    """One-line errors for pinned zones and images (region key to value) the stacks
    would refuse. Pins of regions not selected are ignored: they change nothing."""
    for region in regions:
        zone, image = zones.get(region.key, ""), images.get(region.key, "")
        if region.cloud == "aws":
            if zone and not AWS_ZONE_ID.fullmatch(zone):
                raise UserError(
                    f"pinned zone '{zone}' of {region.key} is not an Availability Zone ID "
                    "like use1-az4"
                )
            if image and not AWS_AMI.fullmatch(image):
                raise UserError(
                    f"pinned image '{image}' of {region.key} is not an AMI id like "
                    "ami-0123456789abcdef0"
                )
        else:
            if zone and not zone.startswith(f"{region.id}-"):
                raise UserError(
                    f"pinned zone '{zone}' of {region.key} is not in that region "
                    f"(e.g. {region.id}-b)"
                )
            if image and not GCP_IMAGE.fullmatch(image):
                raise UserError(
                    f"pinned image '{image}' of {region.key} is not of the form "
                    "projects/PROJECT/global/images/NAME"
                )


def aws_variables(
    sweep_id: str,
    regions: Sequence[Region],
    keys: KeyMaterial,
    *,
    machine_types: Mapping[str, str],
    operator_cidr: str,
    ttl_minutes: int,
    owner: str,
    created: datetime,
    iperf3_ports: tuple[int, int] = DEFAULT_IPERF3_PORTS,
    home_region: str = "us-east-1",
    peer_addresses: Mapping[str, str] | None = None,
    zones: Mapping[str, str] | None = None,
    images: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The variables of infra/aws: one host per AWS region in `regions`. `zones` and
    `images` (region key to AZ ID / AMI id) pin a host; "" lets the stack choose."""
    expires = created + timedelta(minutes=ttl_minutes)
    zones, images = dict(zones or {}), dict(images or {})
    check_pins(_only(regions, "aws"), zones, images)
    return {
        "regions": {
            r.id: {
                "machine_type": _machine_type(r, machine_types),
                "availability_zone_id": zones.get(r.key, ""),
                "ami": images.get(r.key, ""),
            }
            for r in _only(regions, "aws")
        },
        "home_region": home_region,
        "sweep_id": sweep_id,
        "tags": labels.resource_tags(sweep_id, owner, created, expires),
        "ttl_minutes": ttl_minutes,
        "operator_cidr": operator_cidr,
        "peer_addresses": dict(peer_addresses or {}),
        "iperf3_ports": {"first": iperf3_ports[0], "last": iperf3_ports[1]},
        "ssh_user": AWS_SSH_USER,
        "ssh_public_key": keys.client_pub.strip(),
        "host_key_file": str(keys.host_key),
        "host_public_key": keys.host_pub.strip(),
        "ami_ssm_parameter": DEFAULT_AMI_PARAMETER,
        "root_volume_gib": 8,
    }


def gcp_variables(
    sweep_id: str,
    regions: Sequence[Region],
    keys: KeyMaterial,
    *,
    project: str,
    machine_types: Mapping[str, str],
    operator_cidr: str,
    ttl_minutes: int,
    owner: str,
    created: datetime,
    zones: Mapping[str, str] | None = None,
    network_tier: str = "PREMIUM",
    iperf3_ports: tuple[int, int] = DEFAULT_IPERF3_PORTS,
    peer_addresses: Mapping[str, str] | None = None,
    pinned_zones: Mapping[str, str] | None = None,
    images: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The variables of infra/gcp: one host per GCP region, in its pinned zone
    (`pinned_zones`: region key to zone), else the zone preflight chose (`zones`: region
    id to zone), else its catalog zone; on its pinned image (`images`: region key to
    projects/P/global/images/NAME), else the image family's latest."""
    tier = network_tier.upper()
    if network_tier.lower() not in NETWORK_TIERS:
        raise UserError(f"network tier '{network_tier}' is unknown: use premium or standard")
    if not project:
        raise UserError("no GCP project: pass --gcp-project or set GOOGLE_CLOUD_PROJECT")
    expires = created + timedelta(minutes=ttl_minutes)
    chosen = dict(zones or {})
    pinned, images = dict(pinned_zones or {}), dict(images or {})
    check_pins(_only(regions, "gcp"), pinned, images)
    return {
        "project": project,
        "regions": {
            r.id: {
                "zone": pinned.get(r.key) or chosen.get(r.id, r.zone),
                "machine_type": _machine_type(r, machine_types),
                "image": images.get(r.key, ""),
            }
            for r in _only(regions, "gcp")
        },
        "name_prefix": labels.gcp_name_prefix(sweep_id),
        "labels": labels.gcp_labels(labels.resource_tags(sweep_id, owner, created, expires)),
        "ttl_minutes": ttl_minutes,
        "operator_cidr": operator_cidr,
        "peer_addresses": dict(peer_addresses or {}),
        "iperf3_ports": {"first": iperf3_ports[0], "last": iperf3_ports[1]},
        "network_tier": tier,
        "ssh_user": GCP_SSH_USER,
        "ssh_public_key": keys.client_pub.strip(),
        "host_key_file": str(keys.host_key),
        "host_public_key": keys.host_pub.strip(),
        "image": DEFAULT_GCP_IMAGE,
        "boot_disk_gib": 10,
    }


def cloud_variables(aws: Mapping[str, Any], gcp: Mapping[str, Any]) -> dict[str, Any]:
    """The variables of infra/cloud: both stacks' variables, whose peer addresses the
    composite stack wires from one cloud to the other."""
    return {
        "aws": {k: v for k, v in aws.items() if k != "peer_addresses"},
        "gcp": {k: v for k, v in gcp.items() if k != "peer_addresses"},
    }


def backend_for(regions: Sequence[Region]) -> str:
    """The stack a set of regions needs: aws, gcp, or cloud when both clouds are in it."""
    clouds = {r.cloud for r in regions}
    if clouds == {"aws"}:
        return "aws"
    if clouds == {"gcp"}:
        return "gcp"
    if clouds == {"aws", "gcp"}:
        return "cloud"
    raise UserError("no regions selected for the clouds: widen the selection")


def check_aws_region(region_id: str) -> None:
    """A one-line error for an AWS region the stacks cannot reach."""
    for marker, partition in AWS_OTHER_PARTITIONS.items():
        if marker in f"-{region_id}":
            raise UserError(
                f"aws:{region_id} is in the AWS {partition} partition, which the stacks "
                "cannot reach: leave it out with --exclude or remove it from regions.yaml"
            )
    if not AWS_REGION_ID.fullmatch(region_id):
        raise UserError(f"aws:{region_id} is not an AWS region id like us-east-1: fix regions.yaml")


def check_backend(backend: str, regions: Sequence[Region]) -> str:
    """The stack that will host `regions` on `backend`; regions it cannot host are an error.

    `cloud` with regions of one cloud only resolves to that cloud's stack, so no
    account is needed for a cloud that has no hosts.
    """
    stack_dir(backend)
    for region in regions:
        if region.cloud == "aws":
            check_aws_region(region.id)
    if len(backend_info(backend).clouds) > 1:
        backend = backend_for(regions)
    wanted = set(backend_info(backend).clouds)
    outside = sorted(r.key for r in regions if r.cloud not in wanted)
    if outside:
        raise UserError(
            f"--backend {backend} cannot host {', '.join(outside[:3])}: "
            "use --backend cloud or select only that cloud's regions"
        )
    return backend


def stack_variables(
    backend: str,
    sweep_id: str,
    regions: Sequence[Region],
    keys: KeyMaterial,
    *,
    machine_types: Mapping[str, str],
    operator_cidr: str,
    ttl_minutes: int,
    owner: str,
    created: datetime,
    gcp_project: str = "",
    gcp_zones: Mapping[str, str] | None = None,
    network_tier: str = "PREMIUM",
    iperf3_ports: tuple[int, int] = DEFAULT_IPERF3_PORTS,
    pinned_zones: Mapping[str, str] | None = None,
    pinned_images: Mapping[str, str] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """The stack directory and its variables for `--backend aws|gcp|cloud`.
    `pinned_zones` / `pinned_images` (region key to zone / image id, as
    hosts.placement records them) put a host where an earlier sweep's ran."""
    backend = check_backend(backend, regions)
    wanted = {"aws": {"aws"}, "gcp": {"gcp"}, "cloud": {"aws", "gcp"}}[backend]
    common: dict[str, Any] = {
        "machine_types": machine_types,
        "operator_cidr": operator_cidr,
        "ttl_minutes": ttl_minutes,
        "owner": owner,
        "created": created,
        "iperf3_ports": iperf3_ports,
    }
    aws = gcp = None
    if "aws" in wanted:
        aws = aws_variables(
            sweep_id, regions, keys, zones=pinned_zones, images=pinned_images, **common
        )
    if "gcp" in wanted:
        gcp = gcp_variables(
            sweep_id,
            regions,
            keys,
            project=gcp_project,
            zones=gcp_zones,
            network_tier=network_tier,
            pinned_zones=pinned_zones,
            images=pinned_images,
            **common,
        )
    if aws is not None and gcp is not None:
        return stack_dir("cloud"), cloud_variables(aws, gcp)
    variables = aws if aws is not None else gcp
    assert variables is not None
    return stack_dir(backend), variables
