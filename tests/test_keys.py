"""Per-sweep SSH keys and the known_hosts file that pins the hosts' key."""

from __future__ import annotations

import stat
import subprocess

from orchestrator.drivers.keys import ensure_sweep_keys, known_hosts_lines, write_known_hosts
from orchestrator.model.hosts import Host


def host(name: str, address: str, port: int = 22, key: str = "ssh-ed25519 AAAAkey comment") -> Host:
    return Host(name, "aws", name, address, address, "root", port, "t3.small", "local", key)


def test_keys_are_ed25519_private_and_match_their_public_halves(tmp_path):
    keys = ensure_sweep_keys(tmp_path / "keys")
    for private, public in ((keys.client_key, keys.client_pub), (keys.host_key, keys.host_pub)):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
        assert public.startswith("ssh-ed25519 ")
        derived = subprocess.run(
            ["ssh-keygen", "-y", "-f", str(private)], capture_output=True, text=True, check=True
        ).stdout
        assert derived.split()[:2] == public.split()[:2]
    assert keys.client_pub != keys.host_pub
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700


def test_keys_are_made_once_and_a_lost_public_key_is_recomputed(tmp_path):
    first = ensure_sweep_keys(tmp_path)
    assert ensure_sweep_keys(tmp_path) == first
    first.client_key.with_name(first.client_key.name + ".pub").unlink()
    again = ensure_sweep_keys(tmp_path)
    assert again.client_pub.split()[:2] == first.client_pub.split()[:2]


def test_known_hosts_pins_each_address_and_brackets_other_ports(tmp_path):
    hosts = [
        host("a", "198.18.7.10"),
        host("b", "203.0.113.5", port=2222),
        host("c", "198.18.7.12", key=""),  # key unknown yet: learnt on first contact elsewhere
    ]
    assert known_hosts_lines(hosts) == [
        "198.18.7.10 ssh-ed25519 AAAAkey",
        "[203.0.113.5]:2222 ssh-ed25519 AAAAkey",
    ]
    path = tmp_path / "sweep" / "known_hosts"
    write_known_hosts(path, hosts)
    assert path.read_text().splitlines() == known_hosts_lines(hosts)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_ssh_keygen_accepts_the_known_hosts_file(tmp_path):
    keys = ensure_sweep_keys(tmp_path)
    path = tmp_path / "known_hosts"
    write_known_hosts(path, [host("a", "198.18.7.10", key=keys.host_pub)])
    found = subprocess.run(
        ["ssh-keygen", "-F", "198.18.7.10", "-f", str(path)], capture_output=True, text=True
    )
    assert found.returncode == 0 and keys.host_pub.split()[1] in found.stdout
