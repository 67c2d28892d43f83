"""Namespaces, links and processes of an emulation.

Layout of emulation `<id>` (names fit the 15-character interface limit):

    root ns:   ir-<id>  (controller address .1/24; its connected route is the
                         only change to the root namespace)
                  |
    ir-<id>-hub:  ctl -- br0 -- p1 .. pN  (one bridge; ifb q<n> per port for
                                           the host-egress cap; delayd; iptables)
                                  |
    ir-<id>-<n>:                 eth0  (host n, address .(9+n)/24, no default route)

Links are created in one `ip -batch`, directly inside their namespaces, so no
temporary name ever appears in the root namespace. GSO/TSO stay on: delayd then
gives one verdict per super-packet of up to 64 KB, which is what lets two cores
carry 16 concurrent 50 Mbit/s tests at their exact rate (bench/emulator.py). A host
that sends on a lossy path is the exception: it sends wire-sized packets
(`segmentation_args`), so a loss costs TCP one segment, as on a real link.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from orchestrator.core import RunFailure, UserError, debug
from orchestrator.emulator.spec import EmulationSpec

NETNS_DIR = Path("/run/netns")
PREFIX = "ir-"
_NS_PATTERN = re.compile(r"ir-([a-z0-9]{1,10})-(hub|\d+)")
ID_LINK = re.compile(r"ir-[a-z0-9]{1,10}")


def hub_ns(emulation_id: str) -> str:
    return f"{PREFIX}{emulation_id}-hub"


def host_ns(emulation_id: str, index: int) -> str:
    """The namespace of the host at position `index` (0-based) of the spec."""
    return f"{PREFIX}{emulation_id}-{index + 1}"


def root_link(emulation_id: str) -> str:
    return f"{PREFIX}{emulation_id}"


def namespaces(spec: EmulationSpec) -> list[str]:
    return [hub_ns(spec.id)] + [host_ns(spec.id, i) for i in range(len(spec.hosts))]


def emulation_of_namespace(name: str) -> str | None:
    """The emulation id a namespace name belongs to, None if it is not ours."""
    match = _NS_PATTERN.fullmatch(name)
    return match.group(1) if match else None


def root_batch(spec: EmulationSpec) -> str:
    """`ip -batch` run in the root namespace: namespaces, every link, the controller."""
    hub = hub_ns(spec.id)
    ctl = root_link(spec.id)
    lines = [f"netns add {ns}" for ns in namespaces(spec)]
    lines.append(f"link add br0 netns {hub} type bridge")
    for i in range(len(spec.hosts)):
        lines.append(
            f"link add p{i + 1} netns {hub} type veth peer name eth0 netns {host_ns(spec.id, i)}"
        )
        lines.append(f"link add q{i + 1} netns {hub} type ifb")
    lines += [
        f"link add {ctl} type veth peer name ctl netns {hub}",
        # No IPv6 link-local address: nothing of the emulation speaks IPv6.
        f"link set dev {ctl} addrgenmode none",
        f"addr add {spec.controller_address}/{spec.prefixlen} dev {ctl}",
        f"link set dev {ctl} up",
    ]
    return "\n".join(lines) + "\n"


def hub_batch(spec: EmulationSpec) -> str:
    """`ip -batch` inside the hub: ports on the bridge, everything up."""
    lines = ["link set dev lo up", "link set dev br0 type bridge stp_state 0 mcast_snooping 0"]
    ports = [f"p{i + 1}" for i in range(len(spec.hosts))] + ["ctl"]
    for port in ports:
        lines += [f"link set dev {port} master br0", f"link set dev {port} up"]
    lines += [f"link set dev q{i + 1} up" for i in range(len(spec.hosts))]
    lines.append("link set dev br0 up")
    return "\n".join(lines) + "\n"


def host_mac(address: str) -> str:
    """A host's fixed MAC: locally administered 02:49:52 ("IR") and its address's last
    three octets, so every host can know every peer's without asking."""
    octets = [int(o) for o in address.split(".")[1:]]
    return "02:49:52:" + ":".join(f"{o:02x}" for o in octets)


def host_batch(spec: EmulationSpec, index: int) -> str:
    """`ip -batch` inside one host: its address, fixed MAC and the permanent neighbour
    entries of every peer, and nothing else (no default route).

    Permanent neighbours, because a cloud's network answers for its peers as a
    router would: no ARP crosses the WAN. Without them the ping phase, where every
    host reaches all its peers at once, sent thousands of ARP broadcasts through the
    hub in one burst, and the lost ones left whole pairs unreachable.

    With a window clamp, the subnet's route carries it (`window`, the largest
    window TCP advertises to peers behind that route). The kernel's own window
    is a share of the buffer that varies with the packet rate (0.59-0.74 was
    measured here), so the buffer gets headroom and the clamp fixes the window.
    """
    host = spec.hosts[index]
    lines = ["link set dev lo up", f"link set dev eth0 address {host_mac(host.address)}"]
    if not spec.tcp_window_bytes:
        lines += [f"addr add {host.address}/{spec.prefixlen} dev eth0", "link set dev eth0 up"]
    else:
        lines += [
            f"addr add {host.address}/{spec.prefixlen} dev eth0 noprefixroute",
            "link set dev eth0 up",
            f"route add {spec.subnet} dev eth0 proto kernel scope link src {host.address} "
            f"window {spec.tcp_window_bytes}",
        ]
    lines += [
        f"neigh replace {peer.address} lladdr {host_mac(peer.address)} dev eth0 nud permanent"
        for peer in spec.hosts
        if peer.address != host.address
    ]
    return "\n".join(lines) + "\n"


def hub_sysctls() -> dict[str, str]:
    # Bridged packets reach iptables (and so delayd) only with this set; it is
    # per namespace, so the machine's own bridges are untouched.
    return {"net.bridge.bridge-nf-call-iptables": "1", "net.ipv6.conf.all.disable_ipv6": "1"}


# What cloud images' kernels run by default. A namespace inherits this machine's default
# (BBR here, which ignores random loss where CUBIC backs off) and may not set a
# restricted one as its own, so the agent asks for it per test (iperf3 -C).
HOST_CONGESTION_CONTROL = "cubic"


def host_sysctls(tcp_buffer_bytes: int) -> dict[str, str]:
    values = {"net.ipv6.conf.all.disable_ipv6": "1"}
    if tcp_buffer_bytes:
        # Per namespace since Linux 4.15: each host gets the window of a small VM.
        values["net.ipv4.tcp_rmem"] = f"4096 131072 {tcp_buffer_bytes}"
        values["net.ipv4.tcp_wmem"] = f"4096 16384 {tcp_buffer_bytes}"
    return values


def segmentation_args(on: bool) -> list[str]:
    """ethtool's TSO/GSO switch for a host's eth0 (run inside its namespace)."""
    state = "on" if on else "off"
    return ["ethtool", "-K", "eth0", "tso", state, "gso", state]


def sysctl_args(values: dict[str, str]) -> list[str]:
    # -e: a kernel booted without IPv6 has no net.ipv6 keys, and needs none.
    return ["sysctl", "-e", "-q", "-w", *(f"{k}={v}" for k, v in values.items())]


# Running things -------------------------------------------------------------


def run(args: Sequence[str], stdin: str | None = None, what: str = "") -> str:
    """Run a command; a failure is a one-line RunFailure with its last stderr line."""
    debug(f"run: {shlex.join(args)}")
    try:
        result = subprocess.run(
            list(args), input=stdin, capture_output=True, text=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise UserError(f"{args[0]} is not installed: run 'make setup'") from None
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        detail = lines[-1].strip() if lines else f"exit status {result.returncode}"
        raise RunFailure(f"{what or ' '.join(args[:3])} failed: {detail}")
    return result.stdout


def ip_batch(batch: str, netns: str | None = None, what: str = "ip -batch") -> None:
    prefix = ["ip", "-n", netns] if netns else ["ip"]
    run([*prefix, "-batch", "-"], stdin=batch, what=what)


def netns_exec(netns: str, args: Sequence[str]) -> list[str]:
    return ["ip", "netns", "exec", netns, *args]


def netns_list() -> list[str]:
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir())


def netns_inode(name: str) -> int | None:
    try:
        return os.stat(NETNS_DIR / name).st_ino
    except FileNotFoundError:
        return None


def root_links(prefix: str = PREFIX) -> list[str]:
    return sorted(p.name for p in Path("/sys/class/net").iterdir() if p.name.startswith(prefix))


def pids_in_netns(inodes: Iterable[int]) -> dict[int, int]:
    """Every process whose network namespace is one of `inodes` (pid -> inode).

    One pass over /proc instead of `ip netns pids` per namespace: teardown of
    77 hosts stays well under a second.
    """
    wanted = set(inodes)
    found: dict[int, int] = {}
    if not wanted:
        return found
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            link = os.readlink(f"/proc/{entry.name}/ns/net")
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        inode = int(link[5:-1])  # "net:[4026532281]"
        if inode in wanted:
            found[int(entry.name)] = inode
    return found


def kill_all(pids: Iterable[int], grace_s: float = 2.0) -> list[int]:
    """SIGTERM, then SIGKILL what is left after `grace_s`; returns the pids signalled."""
    signalled = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            signalled.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    alive = list(signalled)
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if _alive(p)]
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return signalled


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"
