"""One sshd per emulated host: the sweep's host key, key-only login.

Each host's sshd runs inside the host's namespace with its own config and pid
file under the emulation's state directory and listens on the host's address
only. The hosts are namespaces of this machine, so they log in as root and have
the machine's iperf3, ping and python3.
"""

from __future__ import annotations

from pathlib import Path

SSHD = "/usr/sbin/sshd"
PRIVSEP_DIR = Path("/run/sshd")  # Debian's sshd refuses to start without it


def config(
    address: str, port: int, host_key: Path, authorized_keys: Path, pid_file: Path, home: Path
) -> str:
    return "\n".join(
        [
            f"ListenAddress {address}:{port}",
            # A fresh home, as on a new VM: Debian's bash reads ~/.bashrc for every
            # ssh command, and this machine's (pyenv) costs 0.1 s of CPU each time.
            f"SetEnv HOME={home}",
            f"HostKey {host_key}",
            f"PidFile {pid_file}",
            f"AuthorizedKeysFile {authorized_keys}",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "UseDNS no",
            "X11Forwarding no",
            "PrintMotd no",
            # Ansible opens several connections at once when it starts a round.
            "MaxStartups 64:30:128",
            "MaxSessions 32",
            "Subsystem sftp internal-sftp",
            "LogLevel ERROR",
            "",
        ]
    )
