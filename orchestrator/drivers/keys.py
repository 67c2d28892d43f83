"""Per-sweep SSH material: a client key and a host key, made with ssh-keygen.

The keys live in the sweep's folder with mode 0600 and are never committed.
Host keys are recorded in a known_hosts file per sweep, so the controller
connects with StrictHostKeyChecking=yes instead of trusting on first use.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.core import RunFailure, UserError
from orchestrator.model import Host


@dataclass(frozen=True)
class SweepKeys:
    client_key: Path  # private key the controller logs in with
    client_pub: str  # "ssh-ed25519 AAAA... comment"
    host_key: Path  # private host key every host of the sweep presents
    host_pub: str


def _keypair(path: Path, comment: str) -> str:
    """Create `path` (+ .pub) unless it exists; return the public key line."""
    pub = path.with_name(path.name + ".pub")
    if not path.exists():
        _ssh_keygen(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
    path.chmod(0o600)
    if not pub.exists():
        # A lost .pub is recomputed from the private key, never replaced by a new pair.
        pub.write_text(_ssh_keygen(["-y", "-f", str(path)]))
    return pub.read_text().strip()


def _ssh_keygen(args: list[str]) -> str:
    try:
        result = subprocess.run(
            ["ssh-keygen", *args],
            capture_output=True,
            text=True,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise UserError("ssh-keygen is not installed: run 'make setup'") from None
    if result.returncode != 0:
        detail = (result.stderr.strip().splitlines() or ["unknown error"])[-1]
        raise RunFailure(f"ssh-keygen failed: {detail}")
    return result.stdout


def ensure_sweep_keys(directory: Path) -> SweepKeys:
    """The sweep's keys under `directory`, created on first use (idempotent)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    client_key = directory / "client_ed25519"
    host_key = directory / "host_ed25519"
    return SweepKeys(
        client_key=client_key,
        client_pub=_keypair(client_key, "interregion-client"),
        host_key=host_key,
        host_pub=_keypair(host_key, "interregion-host"),
    )


def known_hosts_lines(hosts: Iterable[Host]) -> list[str]:
    """One line per host with a known key; `[host]:port` when the port is not 22."""
    lines = []
    for host in hosts:
        if not host.host_key:
            continue
        key = " ".join(host.host_key.split()[:2])  # drop the comment
        where = host.ssh_host if host.ssh_port == 22 else f"[{host.ssh_host}]:{host.ssh_port}"
        lines.append(f"{where} {key}")
    return lines


def write_known_hosts(path: Path, hosts: list[Host]) -> None:
    """Record the hosts' keys; hosts without a known key are left out."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = known_hosts_lines(hosts)
    path.write_text("".join(line + "\n" for line in lines))
    path.chmod(0o600)
