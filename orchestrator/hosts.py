"""The host contract every Terraform stack outputs.

`infra/local`, `infra/aws` and `infra/gcp` all have an output named `hosts`:
a map from host name (`cloud:region`) to an object with the fields of Host.
Nothing after provisioning knows which backend made the hosts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from orchestrator.errors import UserError


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
