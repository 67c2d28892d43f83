"""The Ansible inventory of a sweep, generated from the host contract.

Per-sweep SSH settings live here, not in ansible.cfg: the sweep's client key,
its known_hosts file (checked strictly: host keys are recorded, never ignored)
and a short control-socket folder (ControlMaster sockets are closed at the end).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from orchestrator.hosts import Host
from orchestrator.keys import write_known_hosts
from orchestrator.store import safe_name

# ssh appends ".XXXXXXXXXXXXXXXX" to a control path while creating it, and a Unix
# socket path holds 107 bytes: keep the folder short, "%h-%p" adds up to 21.
MAX_CONTROL_DIR_CHARS = 64


def control_dir(state_dir: Path, sweep_id: str) -> Path:
    """Where the SSH control sockets of a sweep live: under its state folder if the
    path is short enough for a socket, else in /tmp under the sweep id."""
    preferred = Path(state_dir) / "cp"
    if len(str(preferred)) <= MAX_CONTROL_DIR_CHARS:
        return preferred
    return Path("/tmp") / f"ir-cp-{sweep_id}"


def inventory(
    hosts: Sequence[Host],
    *,
    client_key: Path,
    known_hosts: Path,
    control_path_dir: Path,
    agent_dir: str,
    python: str = "/usr/bin/python3",
) -> dict[str, Any]:
    """The inventory document: one host per region, named like `aws_us-east-1`."""
    ssh_args = " ".join(
        [
            f"-o UserKnownHostsFile={known_hosts}",
            "-o StrictHostKeyChecking=yes",
            f"-o ControlPath={control_path_dir}/%h-%p",
        ]
    )
    backends = sorted({h.backend for h in hosts})
    return {
        "all": {
            "vars": {
                # ir_backend: local hosts are namespaces of this machine (nothing to install)
                "ir_backend": backends[0] if len(backends) == 1 else "cloud",
                # ir_agent_dir: where prepare.yml puts the agent on each host
                "ir_agent_dir": agent_dir,
                # ir_python: the hosts' python3, for the agent and Ansible's modules
                "ir_python": python,
                "ansible_python_interpreter": python,
                "ansible_ssh_private_key_file": str(client_key),
                "ansible_ssh_common_args": ssh_args,
            },
            "hosts": {
                safe_name(h.name): {
                    "ansible_host": h.ssh_host,
                    "ansible_port": h.ssh_port,
                    "ansible_user": h.ssh_user,
                    # ir_name: the region key the host stands for
                    "ir_name": h.name,
                    "ir_backend": h.backend,
                }
                for h in hosts
            },
        }
    }


def write_inventory(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=True))


def record_host_keys(path: Path, hosts: Sequence[Host], log: Any = print) -> list[str]:
    """known_hosts for the sweep: keys from the host contract; a host without one is
    scanned on first contact (ssh-keyscan), which is said in the log. Returns those names."""
    write_known_hosts(path, list(hosts))
    scanned = []
    for host in hosts:
        if host.host_key:
            continue
        result = subprocess.run(
            ["ssh-keyscan", "-T", "10", "-t", "ed25519", "-p", str(host.ssh_port), host.ssh_host],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.stdout.strip():
            with path.open("a") as f:
                f.write(result.stdout)
            scanned.append(host.name)
            log(f"{host.name}: host key not in the stack's output, recorded on first contact")
    return scanned
