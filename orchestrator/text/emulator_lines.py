"""`interregion emulator up|perturb|status`: their results as lines."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from orchestrator.core import counted

if TYPE_CHECKING:
    from orchestrator.emulator import EmulationSpec, EmulationStatus, UpResult


def spec_up_line(done: UpResult) -> str:
    """`emulator up --spec FILE`: what came up, in how long."""
    return (f"emulation {done.spec.id} up: {counted(len(done.hosts), 'host')} in "
            f"{done.spec.subnet} ({done.elapsed_s:.1f} s)")  # fmt: skip


def down_line(emulation_id: str, removed: Sequence[str]) -> str:
    """`emulator down`: what was removed (emulator.down's list), or that nothing was."""
    said = f" removed ({len(removed)} objects)" if removed else ": nothing to remove"
    return f"emulation {emulation_id}{said}"


def up_lines(done: UpResult) -> list[str]:
    """`emulator up`: each host's address, how to log in, how to remove it; of a spec
    file (no keys of its own), spec_up_line."""
    if done.client_key is None:
        return [spec_up_line(done)]
    first, name = done.hosts[0].address, done.spec.id
    lines = [f"emulation {name} up in {done.elapsed_s:.1f} s (seed {done.spec.seed}):"]
    lines += [f"  {host.name:32} {host.address}" for host in done.hosts]
    if done.controller is not None:
        lines.append(f"controller modelled in {done.controller.key}: RTT to the farthest host "
                     f"{done.controller_rtt_ms:.1f} ms")  # fmt: skip
    lines.append(f"log in: ssh -i {done.client_key} -o UserKnownHostsFile={done.known_hosts} "
                 f"-o StrictHostKeyChecking=yes root@{first}")  # fmt: skip
    lines += [f"perturbation: {p.text}" for p in done.spec.perturbations]
    return [*lines, f"remove: interregion emulator down --id {name}"]


def perturbed_lines(spec: EmulationSpec) -> list[str]:
    """`emulator perturb`: the perturbations the emulation now has."""
    said = [f"emulation {spec.id}: perturbation {p.text}" for p in spec.perturbations]
    return said or [f"emulation {spec.id}: no perturbations"]


def _utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M") if epoch else "-"


def status_lines(rows: Sequence[EmulationStatus]) -> list[str]:
    """`emulator status`: one line per emulation, under a header."""
    if not rows:
        return ["no emulations"]
    lines = [f"{'id':10} {'phase':9} {'subnet':16} {'hosts':>5} {'sshd':>5} "
             f"{'delayd':7} {'owner':>7} {'expires (UTC)':16} stale"]  # fmt: skip
    for s in rows:
        delayd = "-" if s.delayd_running is None else ("up" if s.delayd_running else "DOWN")
        lines.append(f"{s.id:10} {s.phase:9} {s.subnet:16} {s.hosts:5} {s.sshd_running:5} "
                     f"{delayd:7} {s.owner_pid or '-':>7} {_utc(s.expires_at):16} "
                     f"{'yes' if s.stale else 'no'}")  # fmt: skip
    return lines


def reaped_lines(removed: Sequence[str]) -> list[str]:
    """`emulator reap`: each object removed, and how many."""
    return [*(f"removed {item}" for item in removed), f"{len(removed)} objects removed"]
