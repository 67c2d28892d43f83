"""Running ansible-playbook and reading its events as they happen.

The playbooks' stdout callback (playbooks/callback_plugins/ir_events.py) prints
one JSON object per line; `run_playbook` hands each to a function while the play
runs. Ansible gets its own process group and a mark in its environment
(drivers.processes.child_env), so an interrupt or a budget stop ends all of it (forks,
ssh, workers that left the group) and returns only once none of it runs.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.core.log import debug
from orchestrator.drivers import interrupts
from orchestrator.drivers import processes as children

Event = dict[str, Any]


def ansible_env(forks: int) -> dict[str, str]:
    return {
        **os.environ,
        "ANSIBLE_CONFIG": str(paths.PLAYBOOKS / "ansible.cfg"),
        "ANSIBLE_STDOUT_CALLBACK": "ir_events",
        "ANSIBLE_FORKS": str(max(forks, 5)),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_HOME": os.environ.get("ANSIBLE_HOME", str(Path.home() / ".ansible")),
        "PYTHONUNBUFFERED": "1",
    }


def ansible_playbook() -> str:
    """ansible-playbook beside the running Python (the project's venv), else on PATH."""
    beside = Path(sys.executable).parent / "ansible-playbook"
    return str(beside) if beside.exists() else "ansible-playbook"


def run_playbook(
    playbook: str | Path,
    inventory: Path,
    *,
    on_event: Callable[[Event], None],
    log_path: Path,
    forks: int,
    extra_vars: Path | None = None,
) -> int:
    """Run `playbooks/<playbook>` (or a generated playbook's path); call `on_event` per
    event; return ansible's exit code (negative: killed by that signal).

    Nothing starts after an interrupt; on any exception (an interrupt among them) the
    playbook's whole process group is stopped before it propagates."""
    interrupts.check()
    cmd = [ansible_playbook(), "-i", str(inventory), str(paths.PLAYBOOKS / playbook)]
    if extra_vars is not None:
        cmd += ["-e", f"@{extra_vars}"]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    debug(f"run: {shlex.join(cmd)} (its stderr in {log_path})")
    # marked: a worker that left the group and lost its parent is still found and waited for
    env = children.child_env(ansible_env(forks))
    with log_path.open("a") as log:
        try:
            proc = subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=log,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
                cwd=paths.PLAYBOOKS,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise UserError("ansible-playbook is not installed: run 'make setup'") from None
        with children.registered(proc, env):
            try:
                assert proc.stdout is not None
                for line in proc.stdout:
                    try:
                        event = json.loads(line)
                    except ValueError:
                        log.write(line)  # something printed around the callback: keep it
                        continue
                    on_event(event)
                return proc.wait()
            except BaseException as e:
                said = children.stop_group(proc)
                log.write(f"\ninterregion: stopped ansible-playbook ({type(e).__name__}): {said}\n")
                raise


def close_control_sockets(directory: Path) -> list[str]:
    """`ssh -O exit` every ControlMaster socket in `directory`; returns what was closed."""
    closed: list[str] = []
    if not directory.is_dir():
        return closed
    for sock in sorted(directory.iterdir()):
        if not sock.is_socket():
            continue
        subprocess.run(
            ["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "interregion-host"],
            capture_output=True,
            check=False,
            timeout=15,
        )
        closed.append(sock.name)
        sock.unlink(missing_ok=True)
    return closed
