"""Bring an emulation up, tear it down, reap what crashed runs left.

`up` writes the state directory before it creates anything, so whatever it
created can be found again; `down` and `reap` find processes through the
namespaces they run in (one pass over /proc), never by name.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator.core import RunFailure, UserError, iso_of_epoch
from orchestrator.emulator import delay, net, shaping, sshd, state
from orchestrator.emulator.perturb import Perturbation
from orchestrator.emulator.spec import (
    SSH_PORT,
    SSH_USER,
    EmulationSpec,
    all_subnets,
    check_id,
)
from orchestrator.model import Host

_PARALLEL = 8  # host set-up processes at once: enough to hide exec latency on 2 cores
_READY_TIMEOUT_S = 30.0
# Helper tests elsewhere in the project use this /24 with their own namespaces.
_AVOID_SUBNETS = frozenset({"198.19.250.0/24"})
_REQUIRED_TOOLS = ("ip", "tc", "sysctl", "iptables-restore", "ethtool", sshd.SSHD)


def require_root() -> None:
    if os.geteuid() != 0:
        raise UserError(
            "the emulated cloud needs root (network namespaces, iptables): "
            "run it as root, e.g. sudo interregion emulator up"
        )


def _require_tools(need_delayd: bool) -> None:
    for tool in _REQUIRED_TOOLS:
        if not shutil.which(tool):
            raise UserError(f"{tool} is not installed: run 'make setup'")
    if need_delayd:
        delay.delayd_binary()  # built now if it is not yet: a one-line error if it cannot be
    if not Path("/proc/sys/net/bridge").exists():
        # Bridged packets reach iptables (and delayd) only through br_netfilter.
        with contextlib.suppress(FileNotFoundError):
            subprocess.run(["modprobe", "br_netfilter"], capture_output=True, check=False)
        if not Path("/proc/sys/net/bridge").exists():
            raise UserError("kernel module br_netfilter is not loaded: run 'modprobe br_netfilter'")


# Subnets --------------------------------------------------------------------


def routes_in_root() -> list[str]:
    out = net.run(["ip", "-j", "-4", "route", "show", "table", "all"], what="ip route")
    return [r["dst"] for r in json.loads(out or "[]") if r.get("dst") not in (None, "default")]


def conflicts(subnet: str, routes: list[str]) -> list[str]:
    """Routes that would take traffic for `subnet` away from its controller link.

    A less specific route (say 198.0.0.0/8 via eth0) is harmless: the /24 wins.
    """
    net24 = ipaddress.ip_network(subnet)
    bad = []
    for route in routes:
        try:
            dst = ipaddress.ip_network(route, strict=False)
        except ValueError:
            continue
        if isinstance(dst, ipaddress.IPv4Network) and dst.subnet_of(net24):  # type: ignore[arg-type]
            bad.append(route)
    return bad


def choose_subnet(emulation_id: str, taken: set[str], routes: list[str]) -> str:
    """A free /24, probing from a hash of the id so concurrent runs spread out."""
    candidates = all_subnets()
    start = int(hashlib.sha256(emulation_id.encode()).hexdigest(), 16) % len(candidates)
    for k in range(len(candidates)):
        subnet = candidates[(start + k) % len(candidates)]
        if subnet in taken or subnet in _AVOID_SUBNETS or conflicts(subnet, routes):
            continue
        return subnet
    raise UserError("every /24 of 198.18.0.0/15 is in use: run 'interregion emulator reap'")


def _subnets_of_others(emulation_id: str) -> dict[str, str]:
    used = {}
    for other in state.known_ids():
        data = state.read_state(other)
        if other != emulation_id and data and data.get("subnet"):
            used[str(data["subnet"])] = other
    return used


def reserve_subnet(emulation_id: str, owner_pid: int = 0, expires_at: float = 0.0) -> str:
    """The /24 of an emulation, chosen once and kept until it is torn down.

    Asking again for the same id gives the same subnet, so re-running a sweep's
    provisioning leaves the Terraform variables (and the stack) unchanged.
    """
    check_id(emulation_id)
    with state.locked():
        current = state.read_state(emulation_id)
        if current and current.get("subnet"):
            return str(current["subnet"])
        subnet = choose_subnet(
            emulation_id, set(_subnets_of_others(emulation_id)), routes_in_root()
        )
        state.write_state(
            emulation_id,
            {
                "id": emulation_id,
                "phase": "reserved",
                "subnet": subnet,
                "created_at": time.time(),
                "expires_at": expires_at,
                **state.owner_record(owner_pid),
            },
        )
    return subnet


# Up -------------------------------------------------------------------------


def up(spec: EmulationSpec) -> list[Host]:
    """Create the emulation; on any failure remove what was made and re-raise."""
    require_root()
    _require_tools(need_delayd=spec.delayed)
    with state.locked():
        previous = state.read_state(spec.id)
        if previous is not None or _leftovers(spec.id):
            _teardown(spec.id, previous)
        others = _subnets_of_others(spec.id)
        if spec.subnet in others:
            raise UserError(
                f"subnet {spec.subnet} is used by emulation {others[spec.subnet]}: "
                "pick another id or run 'interregion emulator down --id "
                f"{others[spec.subnet]}'"
            )
        bad = conflicts(spec.subnet, routes_in_root())
        if bad:
            raise UserError(f"subnet {spec.subnet} is already routed here ({bad[0]}): pick another")
        directory = state.write_state(spec.id, _state_record(spec, "building"))
    try:
        _build(spec, directory)
    except BaseException:
        _teardown(spec.id, state.read_state(spec.id))
        raise
    record = _state_record(spec, "up")
    record["ns_inodes"] = {ns: net.netns_inode(ns) for ns in net.namespaces(spec)}
    state.write_state(spec.id, record)
    return hosts_of(spec)


def hosts_of(spec: EmulationSpec) -> list[Host]:
    return [
        Host(
            name=h.name,
            cloud=h.cloud,
            region=h.region,
            address=h.address,
            ssh_host=h.address,
            ssh_user=SSH_USER,
            ssh_port=SSH_PORT,
            machine_type=h.machine_type,
            backend="local",
            host_key=spec.host_pub,
        )
        for h in spec.hosts
    ]


def _state_record(spec: EmulationSpec, phase: str) -> dict[str, Any]:
    return {
        "id": spec.id,
        "phase": phase,
        "subnet": spec.subnet,
        "created_at": time.time(),
        "expires_at": spec.expires_at,
        "namespaces": net.namespaces(spec),
        "root_link": net.root_link(spec.id),
        "hosts": {h.name: h.address for h in spec.hosts},
        "delayd": spec.delayed,
        "controller": spec.controller,
        **state.owner_record(spec.owner_pid),
    }


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


SPEC_FILE = "spec.json"  # the running spec: what `set_perturbations` changes


def _build(spec: EmulationSpec, directory: Path) -> None:
    sshd.PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    _write(directory / SPEC_FILE, spec.to_json())
    host_key = directory / "host_key"
    shutil.copyfile(spec.host_key, host_key)
    host_key.chmod(0o600)
    authorized = _write(directory / "authorized_keys", spec.client_pub.strip() + "\n")
    home = directory / "home"
    home.mkdir(mode=0o700, exist_ok=True)

    net.ip_batch(net.root_batch(spec), what="creating the emulation's namespaces and links")
    hub = net.hub_ns(spec.id)
    net.ip_batch(net.hub_batch(spec), netns=hub, what="wiring the hub bridge")
    net.run(net.netns_exec(hub, net.sysctl_args(net.hub_sysctls())), what="hub sysctls")
    batch = shaping.tc_batch(spec)
    if batch:
        net.run(["tc", "-n", hub, "-batch", "-"], stdin=batch, what="rate caps (tc -batch)")
    if spec.delayed:
        _start_delayd(spec, directory)

    scripts = []
    lossy = delay.lossy_senders(spec)
    for i, host in enumerate(spec.hosts):
        n = i + 1
        batch_file = _write(directory / f"host-{n}.ip", net.host_batch(spec, i))
        conf = _write(
            directory / f"sshd-{n}.conf",
            sshd.config(
                host.address, SSH_PORT, host_key, authorized, directory / f"sshd-{n}.pid", home
            ),
        )
        script = "; ".join(
            [
                f"ip -batch {shlex.quote(str(batch_file))}",
                shlex.join(net.sysctl_args(net.host_sysctls(spec.tcp_buffer_bytes))),
                *([shlex.join(net.segmentation_args(False))] if host.name in lossy else []),
                f"exec {sshd.SSHD} -f {shlex.quote(str(conf))}",
            ]
        )
        scripts.append((host.name, net.netns_exec(net.host_ns(spec.id, i), ["sh", "-ec", script])))
    _run_parallel(scripts)
    _wait_for_files([directory / f"sshd-{i + 1}.pid" for i in range(len(spec.hosts))], "sshd")


def _run_parallel(jobs: list[tuple[str, list[str]]]) -> None:
    running: list[tuple[str, subprocess.Popen[str]]] = []
    failures = []

    def reap_one() -> None:
        name, proc = running.pop(0)
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 0:
            lines = [line for line in err.splitlines() if line.strip()]
            failures.append(f"{name}: {lines[-1] if lines else f'exit {proc.returncode}'}")

    for name, args in jobs:
        if len(running) >= _PARALLEL:
            reap_one()
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        running.append((name, proc))
    while running:
        reap_one()
    if failures:
        raise RunFailure(f"setting up host {failures[0]} ({len(failures)} hosts failed)")


def _wait_for_files(files: list[Path], what: str) -> None:
    deadline = time.monotonic() + _READY_TIMEOUT_S
    missing = files
    while missing and time.monotonic() < deadline:
        missing = [f for f in missing if not f.exists()]
        if missing:
            time.sleep(0.02)
    if missing:
        raise RunFailure(f"{what} did not start within {_READY_TIMEOUT_S:g} s ({missing[0].name})")


def _start_delayd(spec: EmulationSpec, directory: Path) -> None:
    hub = net.hub_ns(spec.id)
    table = _write(directory / "delays.tsv", delay.table(spec))
    log_path = directory / "delayd.log"
    with open(log_path, "w") as log:
        # Own session and no pipes to us: the Terraform provisioner that ran `up`
        # returns while delayd keeps running.
        proc = subprocess.Popen(
            net.netns_exec(hub, delay.command(str(table), str(directory / "delayd.pid"))),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log_path.read_text()
        if delay.READY_PREFIX in text:
            break
        if proc.poll() is not None:
            lines = [line for line in text.splitlines() if line.strip()]
            raise RunFailure(f"delayd exited: {lines[-1] if lines else proc.returncode}")
        time.sleep(0.01)
    else:
        raise RunFailure(f"delayd was not ready within {_READY_TIMEOUT_S:g} s: see {log_path}")
    # The queue exists before packets are sent to it, so no packet is ever dropped for lack of it.
    net.run(
        net.netns_exec(hub, ["iptables-restore"]),
        stdin=delay.iptables_rules(spec),
        what="hub iptables rules",
    )


# Perturb --------------------------------------------------------------------


def running_spec(emulation_id: str) -> EmulationSpec:
    """The spec a running emulation was brought up with (perturbations as now set)."""
    check_id(emulation_id)
    record = state.read_state(emulation_id)
    if not record or record.get("phase") != "up":
        raise UserError(f"emulation {emulation_id} is not up: see 'interregion emulator status'")
    return EmulationSpec.load(state.state_dir(emulation_id) / SPEC_FILE)


def set_perturbations(emulation_id: str, perturbations: Sequence[Perturbation]) -> EmulationSpec:
    """Replace a running emulation's perturbations (none: back to its base network).

    Delays and losses: delayd's table is rewritten and reloaded (SIGHUP), without a
    packet lost. Rate caps: the hub's shaping is rebuilt (a few ms without caps)."""
    require_root()
    with state.locked():
        spec = running_spec(emulation_id)
        changed = replace(spec, perturbations=tuple(perturbations))  # checks the hosts
        directory = state.state_dir(emulation_id)
        if changed.delayed:
            _reload_delayd(changed, directory)
        _set_segmentation(spec, changed)
        # only when the caps differ: deleting a qdisc drops what it queues
        if shaping.tc_batch(spec) != shaping.tc_batch(changed):
            hub = net.hub_ns(spec.id)
            # -force: a port without shaping has nothing to delete, and that is fine
            subprocess.run(
                ["tc", "-n", hub, "-force", "-batch", "-"],
                input=shaping.tc_clear(spec),
                capture_output=True,
                text=True,
                check=False,
            )
            batch = shaping.tc_batch(changed)
            if batch:
                net.run(["tc", "-n", hub, "-batch", "-"], stdin=batch, what="rate caps (tc -batch)")
        _write(directory / SPEC_FILE, changed.to_json())
    return changed


def _set_segmentation(old: EmulationSpec, new: EmulationSpec) -> None:
    """Hosts that now send on a lossy path lose TSO/GSO; those no longer, get it back."""
    before, after = delay.lossy_senders(old), delay.lossy_senders(new)
    for i, host in enumerate(new.hosts):
        if (host.name in before) != (host.name in after):
            args = net.segmentation_args(host.name not in after)
            net.run(net.netns_exec(net.host_ns(new.id, i), args), what=f"ethtool on {host.name}")


def _reload_delayd(spec: EmulationSpec, directory: Path) -> None:
    log_path = directory / "delayd.log"
    pid = _pid(directory / "delayd.pid")
    if not pid or pid not in _pids_from_files(directory):
        raise RunFailure(f"delayd of emulation {spec.id} is not running: bring it up again")
    text = log_path.read_text()
    done, failed = text.count("delayd: reloaded"), text.count("reload failed")
    table = directory / "delays.tsv"
    tmp = directory / "delays.tsv.new"
    _write(tmp, delay.table(spec))
    tmp.replace(table)  # delayd never reads half a table
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + _READY_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log_path.read_text()
        if text.count("delayd: reloaded") > done:
            return
        if text.count("reload failed") > failed:
            last = [line for line in text.splitlines() if "reload failed" in line][-1]
            raise RunFailure(f"delayd kept its old table: {last}")
        time.sleep(0.01)
    raise RunFailure(
        f"delayd did not reload its table within {_READY_TIMEOUT_S:g} s: see {log_path}"
    )


# Down and reap --------------------------------------------------------------


def down(emulation_id: str) -> list[str]:
    """Remove an emulation; returns what was removed (empty if nothing was there)."""
    require_root()
    check_id(emulation_id)
    return _teardown(emulation_id, state.read_state(emulation_id))


def _leftovers(emulation_id: str) -> bool:
    return bool(
        [ns for ns in net.netns_list() if net.emulation_of_namespace(ns) == emulation_id]
        or net.root_link(emulation_id) in net.root_links()
    )


def _teardown(emulation_id: str, record: dict[str, Any] | None) -> list[str]:
    removed: list[str] = []
    record = record or {}
    names = sorted(
        {ns for ns in net.netns_list() if net.emulation_of_namespace(ns) == emulation_id}
    )
    named = {i for i in (net.netns_inode(ns) for ns in names) if i}
    pids = set(net.pids_in_netns(named))
    # Recorded inodes find processes in a namespace that lost its name. The kernel
    # reuses inodes: one now named by someone else is not ours, and an unnamed one
    # (a browser's sandbox, say) is ours only if one of its processes runs a
    # program of this emulation.
    others = {net.netns_inode(ns) for ns in net.netns_list() if ns not in names}
    recorded = {int(i) for i in (record.get("ns_inodes") or {}).values() if i}
    unnamed = net.pids_in_netns(recorded - others - named)
    directory = state.state_dir(emulation_id)
    pids |= pids_of_our_namespaces(unnamed, {p: _cmdline(p) for p in unnamed}, directory)
    pids |= _pids_from_files(directory)
    pids.discard(os.getpid())
    for pid in net.kill_all(sorted(pids)):
        removed.append(f"process {pid}")
    link = net.root_link(emulation_id)
    if link in net.root_links():
        # Deleting one end of a veth deletes both; the namespaces go next.
        subprocess.run(["ip", "link", "del", link], capture_output=True, check=False)
        removed.append(f"link {link}")
    if names:
        subprocess.run(
            ["ip", "-force", "-batch", "-"],
            input="".join(f"netns delete {ns}\n" for ns in names),
            capture_output=True,
            text=True,
            check=False,
        )
        removed += [f"netns {ns}" for ns in names]
    if state.remove_state(emulation_id):
        removed.append(f"state {state.state_dir(emulation_id)}")
    return removed


def pids_of_our_namespaces(
    found: dict[int, int], cmdlines: dict[int, str], state_dir: Path
) -> set[int]:
    """Of processes in namespaces that lost their name (`found`: pid -> namespace
    inode), those of a namespace where some process names a file under this
    emulation's `state_dir` on its command line (its sshd's config, delayd's
    table). Processes of any other namespace are left alone, however they look.
    """
    marker = f"{state_dir}/"
    ours = {inode for pid, inode in found.items() if marker in cmdlines.get(pid, "")}
    return {pid for pid, inode in found.items() if inode in ours}


def _cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return ""


def _pids_from_files(directory: Path) -> set[int]:
    """Pids in the state's pid files that still run a program of this emulation.

    Covers a process whose namespace lost its name; the command-line check keeps
    a reused pid of an unrelated process from being killed.
    """
    pids = set()
    for pid_file in directory.glob("*.pid"):
        try:
            pid = int(pid_file.read_text().split()[0])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except (FileNotFoundError, ValueError, IndexError, ProcessLookupError):
            continue
        if str(directory).encode() in cmdline:
            pids.add(pid)
    return pids


def reap() -> list[str]:
    """Remove every emulation nobody owns any more, and orphaned `ir-*` objects."""
    require_root()
    removed: list[str] = []
    with state.locked():
        known = set(state.known_ids())
        for emulation_id in sorted(known):
            record = state.read_state(emulation_id)
            if record is None or state.is_stale(record):
                removed += _teardown(emulation_id, record)
        orphans = {net.emulation_of_namespace(ns) for ns in net.netns_list()}
        orphans |= {
            link[len(net.PREFIX) :] for link in net.root_links() if _is_emulation_link(link)
        }
        for emulation_id in sorted(i for i in orphans if i and i not in known):
            removed += _teardown(emulation_id, None)
    return removed


def _is_emulation_link(name: str) -> bool:
    """`ir-<id>` and a veth: what `up` makes in the root namespace, nothing else."""
    if not net.ID_LINK.fullmatch(name):
        return False
    out = subprocess.run(
        ["ip", "-j", "-d", "link", "show", "dev", name], capture_output=True, text=True
    ).stdout
    try:
        return json.loads(out)[0]["linkinfo"]["info_kind"] == "veth"
    except (ValueError, LookupError):
        return False


# Status ---------------------------------------------------------------------


@dataclass(frozen=True)
class EmulationStatus:
    id: str
    phase: str
    subnet: str
    hosts: int
    sshd_running: int
    delayd_running: bool | None  # None: this emulation has no delays
    owner_pid: int
    stale: bool
    expires_at: float

    def to_json(self) -> dict[str, Any]:
        """`emulator status --json`: every field, and the expiry as an ISO time."""
        return {**asdict(self), "expires_utc": iso_of_epoch(self.expires_at)}


def status() -> list[EmulationStatus]:
    result = []
    for emulation_id in state.known_ids():
        record = state.read_state(emulation_id) or {}
        directory = state.state_dir(emulation_id)
        alive = _pids_from_files(directory)
        sshd_pids = {_pid(f) for f in directory.glob("sshd-*.pid")}
        delayd_pid = _pid(directory / "delayd.pid")
        result.append(
            EmulationStatus(
                id=emulation_id,
                phase=str(record.get("phase", "broken")),
                subnet=str(record.get("subnet", "")),
                hosts=len(record.get("hosts") or {}),
                sshd_running=len(sshd_pids & alive),
                delayd_running=(delayd_pid in alive) if record.get("delayd") else None,
                owner_pid=int(record.get("owner_pid") or 0),
                stale=not record or state.is_stale(record),
                expires_at=float(record.get("expires_at") or 0),
            )
        )
    return result


def _pid(path: Path) -> int:
    try:
        return int(path.read_text().split()[0])
    except (FileNotFoundError, ValueError, IndexError):
        return 0
