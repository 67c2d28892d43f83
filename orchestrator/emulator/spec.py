"""What one emulation is: hosts, addresses, per-pair delays, rate cap, keys.

An EmulationSpec is a plain value written to a JSON file before Terraform runs,
so `python -m orchestrator.emulator up --spec FILE` needs nothing else (no
catalog, no model) and the stack's output is known from the variables alone.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.core import UserError
from orchestrator.emulator.perturb import Perturbation, check_hosts
from orchestrator.emulator.perturb import from_dict as perturbation_from_dict

# 198.18.0.0/15 is reserved for network benchmarking (RFC 2544): never routed on
# the internet and never a LAN range, so emulated hosts cannot shadow real ones.
EMULATED_RANGE = ipaddress.IPv4Network("198.18.0.0/15")

# Interface names are limited to 15 characters; the root-side link is `ir-<id>`.
ID_PATTERN = re.compile(r"[a-z0-9]{1,10}")

# Inside an emulation's /24: .1 is the controller, hosts start at .10.
CONTROLLER_HOST = 1
FIRST_HOST = 10
MAX_HOSTS = 240

# The controller's name in `controller_paths` (its address is CONTROLLER_HOST).
CONTROLLER = "controller"

SSH_USER = "root"  # the hosts are namespaces of this machine: tests run as root
SSH_PORT = 22


@dataclass(frozen=True)
class HostSpec:
    name: str  # "cloud:region"
    cloud: str
    region: str
    address: str
    machine_type: str = "emulated"


@dataclass(frozen=True)
class PathSpec:
    """One direction between two hosts (or a host and the controller), as delayd applies it."""

    src: str  # host name, or CONTROLLER
    dst: str
    delay_us: int  # one-way
    jitter_us: int = 0
    loss_ppm: int = 0


@dataclass(frozen=True)
class EmulationSpec:
    id: str
    subnet: str  # one /24 inside EMULATED_RANGE
    hosts: tuple[HostSpec, ...]
    client_pub: str  # the sweep's client public key: the only one sshd accepts
    host_key: str  # path of the sweep's private host key
    host_pub: str
    paths: tuple[PathSpec, ...] = ()
    rate_mbit: float = 0.0  # per-host egress and ingress cap; 0 = uncapped
    # a burstable host's allowance under that cap (netmodel.EmulatedType); 0 = none
    allowance_baseline_mbit: float = 0.0
    allowance_bucket_bytes: int = 0
    tcp_buffer_bytes: int = 0  # tcp_rmem/tcp_wmem max per host; 0 = kernel default
    tcp_window_bytes: int = 0  # largest TCP window a host advertises; 0 = no clamp
    owner_pid: int = 0  # reap() removes the emulation once this process is gone
    expires_at: float = 0.0  # ... or, without an owner, after this UTC epoch time
    # Where the controller is modelled to be ("aws:us-east-1"; "" = no location,
    # its traffic is not delayed) and the delays between it and each host.
    controller: str = ""
    controller_paths: tuple[PathSpec, ...] = ()
    # The seed the run-to-run variation in `paths` was drawn from (emulator.variation),
    # and the perturbations applied on top when the emulation is up (emulator.perturb).
    seed: int = 0
    perturbations: tuple[Perturbation, ...] = ()

    def __post_init__(self) -> None:
        check_id(self.id)
        net = _subnet(self.subnet)
        if not self.hosts:
            raise UserError(f"emulation {self.id} has no hosts: select at least one region")
        if len(self.hosts) > MAX_HOSTS:
            raise UserError(f"emulation {self.id}: {len(self.hosts)} hosts, at most {MAX_HOSTS}")
        names = [h.name for h in self.hosts]
        if len(set(names)) != len(names):
            raise UserError(f"emulation {self.id}: duplicate host names")
        for h in self.hosts:
            if ipaddress.ip_address(h.address) not in net:
                raise UserError(f"host {h.name}: address {h.address} is outside {self.subnet}")
        if self.controller_paths and not self.controller:
            raise UserError(f"emulation {self.id}: controller delays without a controller region")
        for p in self.controller_paths:
            if CONTROLLER not in (p.src, p.dst) or {p.src, p.dst} - {CONTROLLER, *names}:
                raise UserError(
                    f"emulation {self.id}: controller path {p.src} -> {p.dst} must join "
                    "the controller and a host"
                )
        check_hosts(self.perturbations, names)

    @property
    def delayed(self) -> bool:
        """Whether delayd runs: some pair of hosts, or the controller, has a delay."""
        return bool(self.paths or self.controller_paths)

    @property
    def controller_address(self) -> str:
        return str(_subnet(self.subnet)[CONTROLLER_HOST])

    @property
    def prefixlen(self) -> int:
        return _subnet(self.subnet).prefixlen

    def to_json(self) -> str:
        data = asdict(self)
        data["perturbations"] = [p.to_dict() for p in self.perturbations]
        return json.dumps(data, indent=1, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EmulationSpec:
        try:
            return cls(
                **{
                    **data,
                    "hosts": tuple(HostSpec(**h) for h in data["hosts"]),
                    "paths": tuple(PathSpec(**p) for p in data.get("paths", ())),
                    "controller_paths": tuple(
                        PathSpec(**p) for p in data.get("controller_paths", ())
                    ),
                    "perturbations": tuple(
                        perturbation_from_dict(p) for p in data.get("perturbations", ())
                    ),
                }
            )
        except (KeyError, TypeError) as e:
            raise UserError(f"emulation spec is malformed ({e}): regenerate it") from None

    @classmethod
    def load(cls, path: Path) -> EmulationSpec:
        try:
            data = json.loads(Path(path).read_text())
        except FileNotFoundError:
            raise UserError(f"{path}: emulation spec not found") from None
        except json.JSONDecodeError as e:
            raise UserError(f"{path}: emulation spec is not JSON ({e.msg})") from None
        return cls.from_dict(data)


def check_id(emulation_id: str) -> str:
    if not ID_PATTERN.fullmatch(emulation_id):
        raise UserError(
            f"emulation id '{emulation_id}' is invalid: use 1-10 lowercase letters or digits"
        )
    return emulation_id


def _subnet(text: str) -> ipaddress.IPv4Network:
    try:
        net = ipaddress.ip_network(text)
    except ValueError:
        raise UserError(f"subnet '{text}' is not a network like 198.18.7.0/24") from None
    if not isinstance(net, ipaddress.IPv4Network) or not net.subnet_of(EMULATED_RANGE):
        raise UserError(f"subnet {text} is outside {EMULATED_RANGE}, the emulated range")
    if net.prefixlen != 24:
        raise UserError(f"subnet {text}: an emulation uses one /24")
    return net


def host_addresses(subnet: str, count: int) -> list[str]:
    """The addresses of `count` hosts in an emulation's /24, in order."""
    net = _subnet(subnet)
    if count > MAX_HOSTS:
        raise UserError(f"{count} hosts do not fit one emulation (at most {MAX_HOSTS})")
    return [str(net[FIRST_HOST + i]) for i in range(count)]


def all_subnets() -> list[str]:
    """Every /24 an emulation may use, in order."""
    return [str(n) for n in EMULATED_RANGE.subnets(new_prefix=24)]
