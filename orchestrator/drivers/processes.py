"""Every process a sweep starts (ansible-playbook, terraform), so none outlives it.

A child runs in its own process group, with a mark of its own in its environment
(`child_env`), which everything it starts inherits. `stop_group` ends the whole
group (the child and what it started: forks, ssh), every descendant that left the
group (Ansible's workers call setsid, so a signal to the group never reaches them)
and every process that carries the mark: a worker forked as the signal landed, which
left the group and whose parent died, is nobody's descendant any more but still
carries it. It returns once none of them runs (or its last step's time is up).
`stop_all` is the last thing a command does: it waits until every registered group
is gone.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

# The environment variable that marks a child's processes: space-separated marks, so a
# child of a marked process (an orchestrator started by another) keeps its parent's too.
MARK_VARIABLE = "INTERREGION_CHILD_MARK"

_live: dict[int, subprocess.Popen[str]] = {}
_marks: dict[int, str] = {}  # pid of a registered child -> its mark
_counter = itertools.count(1)


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: ours) with a new mark for one child: start it with this
    environment and register it with the same (`registered(proc, env)`)."""
    base = dict(os.environ if env is None else env)
    mark = f"ir{os.getpid()}-{next(_counter)}-{secrets.token_hex(6)}"
    base[MARK_VARIABLE] = f"{base.get(MARK_VARIABLE, '')} {mark}".strip()
    return base


def _mark_of(env: Mapping[str, str] | None) -> str | None:
    marks = (env or {}).get(MARK_VARIABLE, "").split()
    return marks[-1] if marks else None


@contextmanager
def registered(
    proc: subprocess.Popen[str], env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """Track `proc` (started with start_new_session=True, and with `env` from child_env
    when given) until it is reaped."""
    _live[proc.pid] = proc
    mark = _mark_of(env)
    if mark:
        _marks[proc.pid] = mark
    try:
        yield proc
    finally:
        if proc.poll() is not None and not group_alive(proc.pid):
            _live.pop(proc.pid, None)
            _marks.pop(proc.pid, None)


def live() -> list[int]:
    """Process-group ids of registered children that still run."""
    return [pid for pid, proc in _live.items() if proc.poll() is None or group_alive(pid)]


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs. A zombie does not: one whose parent
    died waits for init to reap it, which a container's init may never do."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _runs_in_group(pgid)


def _processes() -> Iterator[tuple[int, str, int, int]] | None:
    """(pid, state, ppid, pgrp) of every process, from /proc; None without /proc."""
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return None

    def read() -> Iterator[tuple[int, str, int, int]]:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    # after the command's closing parenthesis: state, ppid, pgrp, ...
                    state, ppid, pgrp = f.read().rsplit(")", 1)[1].split()[:3]
            except (OSError, ValueError):
                continue  # it ended meanwhile
            yield int(entry.name), state, int(ppid), int(pgrp)

    return read()


def _runs_in_group(pgid: int) -> bool:
    """A process of group `pgid` that is not a zombie, from /proc (True without /proc)."""
    procs = _processes()
    if procs is None:
        return True
    return any(pgrp == pgid and state != "Z" for _, state, _, pgrp in procs)


def descendants(pid: int) -> set[int]:
    """The live processes below `pid`, whatever their group."""
    procs = _processes()
    if procs is None:
        return set()
    below: dict[int, list[int]] = {}
    for child, state, ppid, _ in procs:
        if state != "Z":
            below.setdefault(ppid, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in below.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def marked(mark: str | None) -> set[int]:
    """The live processes whose environment carries `mark` (child_env), whatever their
    group, session or parent; empty for no mark, or without /proc."""
    if not mark:
        return set()
    needle = mark.encode()
    try:
        entries = list(os.scandir("/proc"))
    except OSError:
        return set()
    me = os.getpid()
    found = set()
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                carries = needle in f.read()
        except OSError:
            continue  # ended meanwhile, or not ours to read
        if carries and _runs(int(entry.name)):
            found.add(int(entry.name))
    return found


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def _runs(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError, IndexError):
        return False


def stop_group(
    proc: subprocess.Popen[str],
    steps: tuple[tuple[signal.Signals, float], ...] = (
        (signal.SIGTERM, 5.0),
        (signal.SIGKILL, 5.0),
    ),
) -> str:
    """Send each signal of `steps` to the child's group, to its descendants that left
    the group and to every process that carries its mark (child_env), and wait up to
    the step's seconds for all of them to end; returns what happened, e.g. 'SIGINT:
    ended after 1.2 s'. A process that appears while we wait (a fork made as the signal
    landed) gets the step's signal too, and is waited for."""
    mark = _marks.get(proc.pid)
    # found before the first signal: once the child dies its orphans are init's
    family = descendants(proc.pid) | marked(mark)

    def ended() -> bool:
        # the known ones first: once none of them runs, none can fork any more, so a
        # last look for the mark finds whatever they started
        return (
            proc.poll() is not None
            and not group_alive(proc.pid)
            and not any(_runs(pid) for pid in family)
            and not marked(mark)
        )

    said = []
    late_found: Counter[str] = Counter()  # by command name, for the log
    for sig, wait_s in steps:
        if ended():
            break
        # stopped first, so that no fork made while we look escapes (Ansible starts the
        # next task's workers the moment the last one ends); continued after the signal
        _signal(proc.pid, family, signal.SIGSTOP)
        family |= descendants(proc.pid) | marked(mark)
        _signal(proc.pid, family, sig)
        _signal(proc.pid, family, signal.SIGCONT)
        started = time.monotonic()
        while time.monotonic() - started < wait_s:
            if ended():
                said.append(f"{sig.name}: ended after {time.monotonic() - started:.1f} s")
                break
            late = (descendants(proc.pid) | marked(mark)) - family
            if late:  # started after the signal: it gets the same
                late_found.update(_name(pid) for pid in late)
                family |= late
                _signal(None, late, sig)
                _signal(None, late, signal.SIGCONT)
            time.sleep(0.1)
        else:
            said.append(f"{sig.name}: still running after {wait_s:g} s")
            continue
        break
    if ended():
        _live.pop(proc.pid, None)
        _marks.pop(proc.pid, None)
    if late_found:
        names = ", ".join(f"{name} x{n}" for name, n in sorted(late_found.items()))
        said.append(f"waited for {late_found.total()} that appeared after the signal ({names})")
    return "; ".join(said) or "had ended"


def _signal(pgid: int | None, pids: set[int], sig: signal.Signals) -> None:
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def stop_all(grace_s: float = 5.0) -> list[str]:
    """End every registered child that still runs; what was stopped, for the log."""
    stopped = []
    for pid in live():
        proc = _live[pid]
        stopped.append(f"{' '.join(map(str, proc.args))[:80]} ({stop_group(proc)})")  # type: ignore[arg-type]
    return stopped
