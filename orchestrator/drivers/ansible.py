"""Running ansible-playbook and reading its events as they happen.

The playbooks' stdout callback (playbooks/callback_plugins/ir_events.py) prints
one JSON object per line; `run_playbook` hands each to a function while the play
runs. Ansible gets its own process group and a mark in its environment
(drivers.processes.child_env), so an interrupt or a budget stop ends all of it (forks,
ssh, workers that left the group) and returns only once none of it runs.

Paths and values are data to Ansible only when it is shown them so: it expands `$NAME`
and `~` in every path it reads (inventory, playbook, `-e @file`) and its modules do the
same on the hosts (file, copy), while Jinja renders `{{ }}` in any string of a variable.
`plain_view` shows it a sweep's folders under a name of plain letters, and
`write_document` marks every value of a generated inventory or play `!unsafe`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from orchestrator.core import PLAYBOOKS, UserError, debug
from orchestrator.drivers import interrupts
from orchestrator.drivers import processes as children

Event = dict[str, Any]


VIEW_PREFIX = "ir-an-"  # the views' folders in /tmp: ir-an-<sweep id>-XXXXXXXX
_NOT_PLAIN = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class View:
    """The folders Ansible is shown: the playbooks and a sweep's state/."""

    playbooks: Path
    state: Path


@contextmanager
def plain_view(state: Path) -> Iterator[View]:
    """The playbooks and `state` as symlinks in a fresh private folder of /tmp, for as
    long as the block runs. Its name holds letters, digits, `_` and `-` only: mkdtemp's
    and the name of the folder above `state` (the sweep id), so a process list shows whose
    Ansible it is (`/tmp/ir-an-<sweep id>-XXXXXXXX`).

    Every path Ansible, its modules and ssh are given goes through it: a results folder
    named `r$HOME` or `$(id)` is then never expanded, whatever each tool does with a `$`,
    a `~` or a `%`. Removed at the end (a controller killed outright leaves the folder)."""
    owner = _NOT_PLAIN.sub("", Path(state).absolute().parent.name)[:40]
    holder = Path(tempfile.mkdtemp(prefix=f"{VIEW_PREFIX}{owner}-", dir="/tmp"))
    view = View(playbooks=holder / "p", state=holder / "s")
    try:
        view.playbooks.symlink_to(PLAYBOOKS.absolute())
        view.state.symlink_to(Path(state).absolute())
        yield view
    finally:
        view.playbooks.unlink(missing_ok=True)
        view.state.unlink(missing_ok=True)
        holder.rmdir()


def remove_views(sweep_id: str) -> list[Path]:
    """The folders plain_view made for `sweep_id` that a controller killed outright left
    in /tmp, removed: their two links and the folder itself, never what the links point
    at. Returns the folders removed."""
    owner = _NOT_PLAIN.sub("", sweep_id)[:40]
    removed = []
    for holder in Path("/tmp").glob(f"{VIEW_PREFIX}{owner}-*"):
        if holder.is_symlink() or not holder.is_dir():
            continue
        try:
            for name in ("p", "s"):
                if (holder / name).is_symlink():
                    (holder / name).unlink()
            holder.rmdir()  # anything else in it: not ours, left alone
        except OSError:
            continue
        removed.append(holder)
    return removed


class _Data(str):
    """A string Ansible takes as it is (written with the `!unsafe` tag)."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Data, lambda dumper, data: dumper.represent_scalar("!unsafe", data))


def as_data(value: Any) -> Any:
    """`value` with every string in it (not the mapping keys) marked as data: Jinja
    never renders a region name, a path or a setting, whatever it holds."""
    if isinstance(value, str):
        return _Data(value)
    if isinstance(value, dict):
        return {k: as_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_data(v) for v in value]
    return value


def write_document(path: Path, document: Any) -> None:
    """A generated inventory or playbook as YAML, the `!unsafe` tags of `as_data` kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.dump(document, Dumper=_Dumper, sort_keys=True, allow_unicode=True))


def write_playbook(path: Path, plays: list[dict[str, Any]]) -> None:
    """A generated playbook, each play's variables marked as data (`as_data`)."""
    write_document(path, [{**play, "vars": as_data(play.get("vars", {}))} for play in plays])


def ansible_env(forks: int, playbooks: Path | None = None) -> dict[str, str]:
    return {
        **os.environ,
        "ANSIBLE_CONFIG": str((playbooks or PLAYBOOKS) / "ansible.cfg"),
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
    view: View | None = None,
) -> int:
    """Run `playbooks/<playbook>` (or a generated playbook's path); call `on_event` per
    event; return ansible's exit code (negative: killed by that signal).

    Nothing starts after an interrupt; on any exception (an interrupt among them) the
    playbook's whole process group is stopped before it propagates. With a `view`, the
    paths given are those of the view (`plain_view`)."""
    interrupts.check()
    playbooks = view.playbooks if view is not None else PLAYBOOKS
    cmd = [ansible_playbook(), "-i", str(inventory), str(playbooks / playbook)]
    if extra_vars is not None:
        cmd += ["-e", f"@{extra_vars}"]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    debug(f"run: {shlex.join(cmd)} (its stderr in {log_path})")
    # marked: a worker that left the group and lost its parent is still found and waited for
    env = children.child_env(ansible_env(forks, playbooks))
    with log_path.open("a") as log:
        try:
            proc = subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=log,
                stdin=subprocess.DEVNULL,
                text=True,
                env=env,
                cwd=playbooks,
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
