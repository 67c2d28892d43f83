"""The host contract every Terraform stack outputs.

`infra/local`, `infra/aws` and `infra/gcp` all have an output named `hosts`:
a map from host name (`cloud:region`) to an object with the fields of Host.
Nothing after provisioning knows which backend made the hosts.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from orchestrator.core import UserError
from orchestrator.model import backend_facts as backends


@dataclass(frozen=True)
class Host:
    name: str  # "cloud:region", e.g. "aws:us-east-1"
    cloud: str  # "aws" or "gcp" (the cloud the region belongs to, also when emulated)
    region: str
    address: str  # what peers test against (private or public IP)
    ssh_host: str  # what the controller connects to
    ssh_user: str
    ssh_port: int
    machine_type: str
    backend: str  # "local", "aws" or "gcp": which stack made the host
    host_key: str = ""  # "ssh-ed25519 AAAA..." if known before boot; else recorded on first contact
    # Where and from what the host runs, so a later sweep can pin the same (--pin-from):
    # AWS: the Availability Zone ID (use1-az4, the same zone in every account) and the
    # AMI id; GCP: the zone and projects/P/global/images/NAME; emulated: "local" and
    # "emulated". "" in a hosts.json written before these fields existed.
    zone: str = ""
    image_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


REQUIRED = ("name", "cloud", "region", "address", "ssh_host", "ssh_user", "ssh_port")


def hosts_from_output(output: dict[str, Any]) -> list[Host]:
    """Hosts from `terraform output -json` (the whole document), sorted by name."""
    try:
        value = output["hosts"]["value"]
    except (KeyError, TypeError):
        raise UserError(
            "terraform output has no 'hosts': the stack does not follow the host contract"
        ) from None
    known = {f.name for f in fields(Host)}
    hosts = []
    for name, item in sorted(value.items()):
        missing = [k for k in REQUIRED if not item.get(k) and item.get(k) != 0]
        if missing:
            raise UserError(f"host {name} in terraform output lacks {', '.join(missing)}")
        args = {k: v for k, v in item.items() if k in known}
        args["ssh_port"] = int(args["ssh_port"])
        args.setdefault("machine_type", "")
        args.setdefault("backend", "")
        hosts.append(Host(**args))
    return hosts


def placement(hosts: list[Host]) -> dict[str, dict[str, str]]:
    """Where each host ran and from what: {name: {zone, image_id, machine_type}}, the
    facts a later sweep needs to run on the same zones and images."""
    return {
        h.name: {"zone": h.zone, "image_id": h.image_id, "machine_type": h.machine_type}
        for h in sorted(hosts, key=lambda h: h.name)
    }


def pins_from(hosts: list[Host]) -> tuple[dict[str, str], dict[str, str]]:
    """(zones, images), each region key (`aws:us-east-1`) to the zone / image id its host
    ran on, for the cloud hosts that recorded them."""
    cloud = [h for h in hosts if backends.single_cloud(h.backend)]
    zones = {h.name: h.zone for h in cloud if h.zone}
    images = {h.name: h.image_id for h in cloud if h.image_id}
    return zones, images


def pins_from_file(path: Path, sweep_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """pins_from the hosts.json of sweep `sweep_id` at `path`; one-line errors when it is
    missing, damaged, or holds nothing to pin."""
    if not path.exists():
        raise UserError(
            f"--pin-from {sweep_id}: {path} does not exist (that sweep was never "
            "provisioned): give a sweep that ran on the clouds"
        )
    try:
        doc = json.loads(path.read_text())
        hosts = [Host(**{k: v for k, v in h.items() if k in _FIELDS}) for h in doc["hosts"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise UserError(f"--pin-from {sweep_id}: {path} is damaged ({type(e).__name__})") from None
    zones, images = pins_from(hosts)
    if not (zones or images):
        raise UserError(
            f"--pin-from {sweep_id}: its hosts recorded no cloud zone or image (an emulated "
            "sweep, or one made before hosts.json recorded them): nothing to pin"
        )
    return zones, images


_FIELDS = {f.name for f in fields(Host)}


# The ports iperf3 listens on: the range the cloud stacks' firewalls open (5201-5299).
IPERF3_PORTS = (5201, 5299)


def iperf3_port(round_no: int) -> int:
    """The port of round `round_no` (1-based): a new one each round, so that no stale
    server of an earlier round blocks it; the range wraps after 99 rounds."""
    first, last = IPERF3_PORTS
    return first + (round_no - 1) % (last - first + 1)
