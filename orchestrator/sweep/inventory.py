"""The Ansible inventory of a sweep, generated from the host contract.

Per-sweep SSH settings live here, not in ansible.cfg: the sweep's client key,
its known_hosts file (checked strictly: host keys are recorded, never ignored)
and a short control-socket folder (ControlMaster sockets are closed at the end).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.drivers import write_known_hosts
from orchestrator.model import Host
from orchestrator.results import safe_name

# ssh appends ".XXXXXXXXXXXXXXXX" to a control path while creating it, and a Unix
# socket path holds 107 bytes: keep the folder short, "%h-%p" adds up to 21.
MAX_CONTROL_DIR_CHARS = 64
CONTROL_DIR_NOTE = "control-dir"  # in state/: the /tmp folder used when state/cp won't do
# ssh reads the control path as it is given beside Ansible's own arguments: only a
# path of these characters is left to it, anything else gets a /tmp folder
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/._+-]+")


def _short_enough(state_dir: Path) -> Path | None:
    preferred = Path(state_dir) / "cp"
    plain = _PLAIN_PATH.fullmatch(str(preferred)) is not None
    return preferred if plain and len(str(preferred)) <= MAX_CONTROL_DIR_CHARS else None


def _private_dir_of_mine(path: Path) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def existing_control_dir(state_dir: Path) -> Path | None:
    """The control-socket folder a sweep made earlier, if any (never makes one)."""
    preferred = _short_enough(state_dir)
    if preferred is not None:
        return preferred if preferred.is_dir() else None
    note = Path(state_dir) / CONTROL_DIR_NOTE
    if not note.is_file():
        return None
    path = Path(note.read_text().strip())
    # only a private folder of ours: a stale note must not send the sockets elsewhere
    return path if _private_dir_of_mine(path) else None


def control_dir(state_dir: Path) -> Path:
    """The folder of a sweep's SSH control sockets, private (0700): state/cp when that
    path is short enough for a socket, else a fresh unpredictable folder in /tmp
    (mkdtemp), remembered in state/control-dir so every stage finds the same one."""
    preferred = _short_enough(state_dir)
    if preferred is not None:
        preferred.mkdir(mode=0o700, parents=True, exist_ok=True)
        preferred.chmod(0o700)
        return preferred
    found = existing_control_dir(state_dir)
    if found is not None:
        return found
    # /tmp itself, not $TMPDIR: the point is a short path
    made = Path(tempfile.mkdtemp(prefix="ir-cp-", dir="/tmp"))
    (Path(state_dir) / CONTROL_DIR_NOTE).write_text(f"{made}\n")
    return made


def remembered_control_dir(path: str | None) -> Path | None:
    """The control-socket folder sweep.json remembers, when state/ (and its note) is gone:
    only a private folder of ours that looks like one we make."""
    if not path:
        return None
    found = Path(path)
    ours = found.name == "cp" or found.name.startswith("ir-cp-")
    return found if ours and _private_dir_of_mine(found) else None


def remove_control_dir(state_dir: Path, also: Path | None = None) -> None:
    """Remove the (emptied) control-socket folder, then the note that remembers it; a
    folder still holding sockets keeps its note, so a later teardown finds it again."""
    path = existing_control_dir(state_dir) or also
    if path is not None:
        if any(path.iterdir()):
            return
        path.rmdir()
    (Path(state_dir) / CONTROL_DIR_NOTE).unlink(missing_ok=True)


def ssh_config_value(path: Path | str) -> str:
    """A path as ssh reads it in a config value (`-o Key=VALUE`): in double quotes, with
    `\\` and `"` escaped and `%` doubled (ssh expands %-tokens in these paths).
    `${`, which ssh expands as an environment variable, cannot be escaped: refused
    earlier by `tool_path_problem`."""
    text = str(path).replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{text}"'


def ssh_common_args(client_key: Path, known_hosts: Path, control_path_dir: Path) -> str:
    """Ansible's ssh arguments (it splits them as a shell would, shlex): the sweep's key,
    its known_hosts, checked strictly, and the control sockets' folder. The key is given
    here, not as ansible_ssh_private_key_file, which Ansible quotes without escaping."""
    return shlex.join(
        [
            "-o",
            f"IdentityFile={ssh_config_value(client_key)}",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            f"UserKnownHostsFile={ssh_config_value(known_hosts)}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f'ControlPath={ssh_config_value(control_path_dir)[:-1]}/%h-%p"',
        ]
    )


def inventory(
    hosts: Sequence[Host],
    *,
    client_key: Path,
    known_hosts: Path,
    control_path_dir: Path,
    agent_dir: str,
    agent_dirs: Mapping[str, str] | None = None,
    python: str = "/usr/bin/python3",
    host_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The inventory document: one host per region, named like `aws_us-east-1`.

    `agent_dir` is where prepare puts the agent on emulated hosts (a private folder of
    this machine); cloud hosts make their own with mkdtemp, and `agent_dirs` (region key
    -> folder, from prepare's facts) names it for the later stages. `host_settings` (region
    key -> settings) go to the agent beside each round's part."""
    agent_dirs = agent_dirs or {}
    host_settings = host_settings or {}
    ssh_args = ssh_common_args(client_key, known_hosts, control_path_dir)
    backends = sorted({h.backend for h in hosts})
    return {
        "all": {
            "vars": {
                # ir_backend: local hosts are namespaces of this machine (nothing to install)
                "ir_backend": backends[0] if len(backends) == 1 else "cloud",
                # ir_agent_dir: the agent's folder on emulated hosts (cloud hosts: mkdtemp)
                "ir_agent_dir": agent_dir,
                # ir_python: the hosts' python3, for the agent and Ansible's modules
                "ir_python": python,
                "ansible_python_interpreter": python,
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
                    **({"ir_agent_dir": agent_dirs[h.name]} if h.name in agent_dirs else {}),
                    # ir_host_settings: what the agent takes beside its part on this host
                    **(
                        {"ir_host_settings": dict(host_settings[h.name])}
                        if h.name in host_settings
                        else {}
                    ),
                }
                for h in hosts
            },
        }
    }


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
