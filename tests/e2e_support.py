"""Helpers of the end-to-end sweep tests: run the real CLI, find what a sweep left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.drivers.ansible import VIEW_PREFIX
from orchestrator.emulator import net, state
from orchestrator.emulator.stack import emulation_id_for
from orchestrator.emulator.variation import draw_pair
from orchestrator.results import files as store
from orchestrator.results.schema import SINGLE_STREAM, measure_of
from orchestrator.sweep.inventory import existing_control_dir, remembered_control_dir

INTERREGION = str(Path(sys.executable).parent / "interregion")
# short tests keep the end-to-end suite within minutes
SHORT = ["--pings", "10", "--duration", "2", "--omit", "1"]


def cli_env() -> dict[str, str]:
    return {**os.environ, "CI": "true"}  # no terminal: plain log lines, as in CI


def run_cli(
    args: list[str], timeout_s: float = 600, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INTERREGION, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
    )


def start_cli(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [INTERREGION, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
    )


def calm_seed(regions: tuple[str, ...] | list[str]) -> int:
    """The smallest emulation seed whose draws put no loss episode on any pair of
    `regions`: a sweep's own seed does now and then (VariationParams.loss_episode_p), and
    a test that expects a rate or a limiter then finds the pair loss-limited."""
    keys = list(regions)
    pairs = [(a, b) for i, a in enumerate(keys) for b in keys[i + 1 :]]
    return next(
        s for s in range(1, 10_000) if all(draw_pair(s, a, b).loss_pct == 0 for a, b in pairs)
    )


def only_sweep(results: Path) -> Path:
    dirs = [p for p in results.iterdir() if (p / store.SWEEP_FILE).exists()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def record(sweep_dir: Path) -> dict:
    return json.loads((sweep_dir / store.SWEEP_FILE).read_text())


def rows(sweep_dir: Path, measure: str = SINGLE_STREAM) -> dict[tuple[str, str], dict[str, str]]:
    """A sweep's rows of one measure (single_stream by default), by directed pair."""
    return {
        store.pair_key(r): r
        for r in store.read_rows(sweep_dir / store.MEASUREMENTS_FILE)
        if measure_of(r) == measure
    }


def wait_for(condition, timeout_s: float, what: str, proc=None, poll_s: float = 0.2) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the sweep ended before {what}: {proc.stdout.read()}")
        time.sleep(poll_s)
    raise AssertionError(f"timed out waiting for {what}")


def _cmdlines() -> dict[int, str]:
    out = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            out[int(pid)] = raw.replace(b"\0", b" ").decode(errors="replace")
    return out


def leftovers(sweep_dir: Path) -> dict[str, list[str]]:
    """Everything of a sweep the machine still has: namespaces, links, processes (sshd,
    delayd, iperf3 and agents in its namespaces, ssh control masters, ansible), files."""
    sweep_id = sweep_dir.name
    # a /tmp folder when state/ is deep; sweep.json remembers it when state/ is gone
    control = existing_control_dir(sweep_dir / "state") or remembered_control_dir(
        json.loads((sweep_dir / store.SWEEP_FILE).read_text()).get("control_dir")
    )
    emu = emulation_id_for(sweep_id)
    names = [n for n in net.netns_list() if net.emulation_of_namespace(n) == emu]
    inodes = [i for i in (net.netns_inode(n) for n in names) if i]
    markers = (f"/run/interregion/{emu}/", sweep_id, *([str(control)] if control else []))
    procs = [
        f"{pid} {cmd[:120]}"
        for pid, cmd in _cmdlines().items()
        if pid != os.getpid() and any(m in cmd for m in markers)
    ]
    procs += [f"{pid} (in a namespace)" for pid in net.pids_in_netns(inodes)]
    files = [
        str(p)
        for p in (
            state.state_dir(emu),
            sweep_dir / "state" / "agent",  # the agent's private copy for emulated hosts
        )
        if p.exists()
    ]
    if control is not None:
        files.append(str(control))
    # the folders Ansible was shown the sweep's state in (drivers.ansible.plain_view)
    files += [str(p) for p in Path("/tmp").glob(f"{VIEW_PREFIX}{sweep_id}-*")]
    return {
        "namespaces": names,
        "links": [link for link in net.root_links() if link == net.root_link(emu)],
        "processes": procs,
        "files": files,
    }


def nothing_left(sweep_dir: Path) -> bool:
    return not any(leftovers(sweep_dir).values())


def netns_of(sweep_id: str, address: str) -> str:
    """The namespace of the emulated host that has `address`."""
    emu = emulation_id_for(sweep_id)
    for name in net.netns_list():
        if net.emulation_of_namespace(name) != emu:
            continue
        out = subprocess.run(
            ["ip", "-n", name, "-o", "-4", "addr", "show"], capture_output=True, text=True
        ).stdout
        if f" {address}/" in out:
            return name
    raise AssertionError(f"no namespace of {sweep_id} has {address}")


def hosts(sweep_dir: Path) -> dict[str, dict]:
    doc = json.loads((sweep_dir / store.HOSTS_FILE).read_text())
    return {h["name"]: h for h in doc["hosts"]}
