"""Interrupts and child processes: what the CLI's signal handlers feed the library, how a
child's whole process group is stopped, and terraform's polite stop (one SIGINT first)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from script_support import python_script

from orchestrator.core.errors import UserError
from orchestrator.drivers import interrupts
from orchestrator.drivers import processes as children
from orchestrator.drivers.interrupts import Interrupted
from orchestrator.drivers.terraform import TerraformStack


@pytest.fixture(autouse=True)
def clean():
    interrupts.reset()
    yield
    interrupts.reset()
    children.stop_all(grace_s=1)


def test_a_signal_raises_at_once_and_again_at_the_next_check():
    with pytest.raises(Interrupted) as info:
        interrupts.on_signal(signal.SIGHUP)
    assert info.value.signal_name == "SIGHUP" and isinstance(info.value, KeyboardInterrupt)
    with pytest.raises(Interrupted):
        interrupts.check()  # nothing new may start after an interrupt


def test_inside_deferred_a_signal_is_kept_for_later():
    with interrupts.deferred():
        interrupts.on_signal(signal.SIGTERM)  # teardown must finish: no raise here
        interrupts.on_signal(signal.SIGINT)
        interrupts.check()
    assert interrupts.requested() == "SIGTERM"
    with pytest.raises(Interrupted, match="SIGTERM"):
        interrupts.check()


def start_group(script: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script],
        start_new_session=True,
        text=True,
        stdout=subprocess.PIPE,
    )


STUBBORN = (
    "import signal, subprocess, sys, time\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    # a grandchild in the same group, as ansible's forks and ssh are
    "subprocess.Popen([sys.executable, '-c', 'import signal, time; "
    "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)


def test_stop_group_escalates_until_the_whole_group_is_gone():
    proc = start_group(STUBBORN)
    with children.registered(proc):
        assert proc.stdout.readline().strip() == "ready"
        assert children.live() == [proc.pid]
        said = children.stop_group(
            proc, ((signal.SIGINT, 0.3), (signal.SIGTERM, 0.3), (signal.SIGKILL, 5.0))
        )
    assert said.startswith("SIGINT: still running after 0.3 s; SIGTERM: still running")
    assert "SIGKILL: ended after" in said
    assert not children.group_alive(proc.pid) and children.live() == []


# a parent that dies on SIGTERM, with a fork that left its group (as Ansible's workers do:
# they call setsid) and is still busy, as a worker on a test is
SETSID_FORK = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    print(os.getpid(), flush=True)\n"
    "    time.sleep(60)\n"
    "    os._exit(0)\n"
    "time.sleep(60)\n"
)


def test_stop_group_also_ends_a_fork_that_left_the_group():
    proc = start_group(SETSID_FORK)
    with children.registered(proc):
        fork = int(proc.stdout.readline())
        assert os.getpgid(fork) != proc.pid  # out of the group: killpg cannot reach it
        said = children.stop_group(proc, ((signal.SIGTERM, 5.0),))
    assert said.startswith("SIGTERM: ended after"), said
    assert not running(fork)


# a parent that, as the signal lands, forks a worker that leaves the group and then dies
# (as Ansible's leader can while it starts a task's workers): the worker is nobody's
# descendant and in no group of ours, and ran on after stop_group said "ended". The
# worker is born with SIGTERM blocked, and takes the default action before it unblocks
# it: else a SIGTERM landing before its SIG_DFL ran the inherited handler, which forked
# yet another worker (CI, under load: "SIGTERM: still running after 5 s")
LATE_FORK = (
    "import os, signal, time\n"
    "def on_term(signum, frame):\n"
    "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"
    "    if os.fork() == 0:\n"
    "        os.setsid()\n"
    "        signal.signal(signal.SIGTERM, signal.SIG_DFL)\n"
    "        print(os.getpid(), flush=True)\n"
    "        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})\n"
    "        time.sleep(60)\n"
    "        os._exit(0)\n"
    "    os._exit(0)\n"
    "signal.signal(signal.SIGTERM, on_term)\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)


def test_stop_group_ends_a_fork_made_as_the_signal_landed():
    env = children.child_env()
    proc = subprocess.Popen(
        [sys.executable, "-c", LATE_FORK],
        start_new_session=True,
        text=True,
        stdout=subprocess.PIPE,
        env=env,
    )
    with children.registered(proc, env):
        assert proc.stdout.readline().strip() == "ready"
        said = children.stop_group(proc, ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)))
    late = int(proc.stdout.readline())
    try:
        assert said.startswith("SIGTERM: ended after"), said
        # the worker, and under load its parent too when it was seen before it exited
        assert re.search(r"waited for [12] that appeared after the signal \(python", said), said
        assert not running(late)  # it carried the mark: found, signalled and waited for
        assert children.marked(env[children.MARK_VARIABLE]) == set()
    finally:
        if running(late):
            os.kill(late, signal.SIGKILL)


def test_a_mark_is_new_for_each_child_and_keeps_the_parents():
    outer = children.child_env({"PATH": "/bin"})
    inner = children.child_env(outer)
    first, second = outer[children.MARK_VARIABLE], inner[children.MARK_VARIABLE].split()
    assert second[0] == first and second[1] != first and inner["PATH"] == "/bin"
    assert children.marked(None) == set() and children.marked(second[1]) == set()


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_stop_all_leaves_no_registered_child_running():
    procs = [start_group(STUBBORN) for _ in range(2)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
        children._live[p.pid] = p  # registered, as run_playbook and terraform do
    stopped = children.stop_all(grace_s=0.2)
    assert len(stopped) == 2
    assert not any(children.group_alive(p.pid) for p in procs) and children.live() == []


def fake_terraform(tmp_path: Path, stubborn: bool = False) -> dict[str, str]:
    """A `terraform` that records the signals it gets and exits cleanly on SIGINT, after
    'saving its state' for a moment, like the real one does; a `stubborn` one exits on
    none of them (a provider hung in a cloud call), and has a child in its group."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "terraform"
    log = tmp_path / "signals.log"
    script.write_text(
        python_script(
            "import signal, subprocess, sys, time\n"
            "def got(signum, frame):\n"
            f"    open({str(log)!r}, 'a').write(signal.Signals(signum).name + '\\n')\n"
            "    time.sleep(0.3)\n"
            f"    {'return' if stubborn else 'sys.exit(1)'}\n"
            "signal.signal(signal.SIGINT, got)\n"
            "signal.signal(signal.SIGTERM, got)\n"
            # a provider plugin: terraform's child, in its process group
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(tmp_path / 'child.pid')!r}, 'w').write(str(child.pid))\n"
            "print('applying', flush=True)\n"
            "while True:\n"
            "    time.sleep(60)\n"
        )
    )
    script.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_an_interrupted_terraform_gets_one_sigint_and_time_to_save_its_state(tmp_path):
    source = tmp_path / "stack"
    source.mkdir()
    (source / "main.tf").write_text("")
    stack = TerraformStack(source, tmp_path / "work", env=fake_terraform(tmp_path))

    def interrupt(signum, frame):
        interrupts.on_signal(signum)

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        started = time.monotonic()
        with pytest.raises(Interrupted):
            stack.apply({})
    finally:
        signal.signal(signal.SIGALRM, old)
    # exactly one SIGINT (a second one makes terraform quit without saving), then waited
    assert (tmp_path / "signals.log").read_text() == "SIGINT\n"
    assert time.monotonic() - started >= 0.5 + 0.3
    log = (tmp_path / "work" / "terraform-init.log").read_text()
    assert log.startswith("applying\n")  # what terraform printed is kept
    assert "interregion: terraform init stopped (Interrupted): SIGINT: ended" in log
    assert children.live() == []


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie has ended: only its parent has not read its status yet
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def interrupt_after(seconds: float, stack: TerraformStack) -> None:
    def interrupt(signum, frame):
        interrupts.on_signal(signal.SIGTERM)

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with pytest.raises(Interrupted):
            stack.apply({})
    finally:
        signal.signal(signal.SIGALRM, old)


@pytest.mark.slow
def test_a_terraform_deaf_to_sigint_and_sigterm_is_killed_with_its_children_and_logged(
    tmp_path,
):
    source = tmp_path / "stack"
    source.mkdir()
    (source / "main.tf").write_text("")
    stack = TerraformStack(source, tmp_path / "work", env=fake_terraform(tmp_path, True))
    assert [s for s, _ in stack.interrupt_steps] == [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
    # quicker waits (the last is an upper bound: it ends when the group has)
    stack.interrupt_steps = ((signal.SIGINT, 0.5), (signal.SIGTERM, 0.5), (signal.SIGKILL, 5.0))
    interrupt_after(0.5, stack)
    # SIGINT first and alone, then SIGTERM: each waited for, then SIGKILL
    assert (tmp_path / "signals.log").read_text() == "SIGINT\nSIGTERM\n"
    log = (tmp_path / "work" / "terraform-init.log").read_text()
    assert (
        "interregion: terraform init stopped (Interrupted): SIGINT: still running after "
        "0.5 s; SIGTERM: still running after 0.5 s; SIGKILL: ended after"
    ) in log
    assert not pid_alive(int((tmp_path / "child.pid").read_text()))  # the provider too
    assert children.live() == []


@pytest.mark.slow
def test_a_terraform_past_its_time_is_stopped_the_same_way_and_logged(tmp_path):
    source = tmp_path / "stack"
    source.mkdir()
    (source / "main.tf").write_text("")
    env = fake_terraform(tmp_path, stubborn=True)
    stack = TerraformStack(source, tmp_path / "work", env=env, timeouts_s={"init": 0.5})
    stack.interrupt_steps = ((signal.SIGINT, 0.5), (signal.SIGTERM, 0.5), (signal.SIGKILL, 5.0))
    with pytest.raises(UserError, match=r"terraform init did not finish within 0\.5 s"):
        stack.apply({})
    assert (tmp_path / "signals.log").read_text() == "SIGINT\nSIGTERM\n"
    log = (tmp_path / "work" / "terraform-init.log").read_text()
    assert log.startswith("applying\n")
    assert "stopped (timeout 0.5 s): SIGINT: still running after 0.5 s; SIGTERM: " in log
    assert not pid_alive(int((tmp_path / "child.pid").read_text()))
    assert children.live() == []


def slow_ansible(tmp_path: Path) -> Path:
    """An `ansible-playbook` still in its long start (loading inventory, forking) when the
    interrupt comes: silent, deaf to SIGINT, with a fork in its group."""
    script = tmp_path / "ansible-playbook"
    script.write_text(
        python_script(
            "import signal, subprocess, sys, time\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "fork = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(tmp_path / 'fork.pid')!r}, 'w').write(str(fork.pid))\n"
            "time.sleep(60)\n"
        )
    )
    script.chmod(0o755)
    return script


def test_nothing_starts_after_an_interrupt(tmp_path, monkeypatch):
    from orchestrator.drivers import ansible as playbook

    monkeypatch.setattr(playbook, "ansible_playbook", lambda: str(slow_ansible(tmp_path)))
    with interrupts.deferred():
        interrupts.on_signal(signal.SIGINT)  # arrived while something had to finish
    with pytest.raises(Interrupted):
        playbook.run_playbook(
            "measure.yml", tmp_path / "inv", on_event=print, log_path=tmp_path / "log", forks=1
        )
    assert not (tmp_path / "fork.pid").exists() and not (tmp_path / "log").exists()


def test_an_interrupt_during_a_playbooks_start_stops_it_and_all_it_started(tmp_path, monkeypatch):
    from orchestrator.drivers import ansible as playbook

    monkeypatch.setattr(playbook, "ansible_playbook", lambda: str(slow_ansible(tmp_path)))

    def interrupt(signum, frame):
        interrupts.on_signal(signal.SIGINT)

    old = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    events = []
    try:
        with pytest.raises(Interrupted):
            playbook.run_playbook(
                "measure.yml",
                tmp_path / "inv",
                on_event=events.append,
                log_path=tmp_path / "log",
                forks=1,
            )
    finally:
        signal.signal(signal.SIGALRM, old)
    assert events == []
    fork = int((tmp_path / "fork.pid").read_text())
    deadline = time.monotonic() + 5  # SIGKILL has no handler to wait for, but let it land
    while pid_alive(fork) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(fork)
    assert children.live() == []  # the command can exit: nothing it started is alive
    log = (tmp_path / "log").read_text()
    assert "stopped ansible-playbook (Interrupted): SIGTERM: ended after" in log


@pytest.mark.slow
def test_only_the_cli_edge_installs_signal_handlers():
    import ast

    from orchestrator.core import paths

    edge = paths.ROOT / "orchestrator" / "cli" / "__init__.py"
    found = []
    for path in sorted((paths.ROOT / "orchestrator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "signal"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "signal"
            ):
                found.append(path)
    assert set(found) == {edge}  # installed there, and given back there


ZOMBIE_GROUP = """
import ctypes, json, os, subprocess, sys, time
from orchestrator.drivers import processes as children

# this process adopts orphans and never reaps them, like an init that does not
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
leader = subprocess.Popen(
    [sys.executable, "-c",
     "import subprocess, sys; "
     "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(0.5)']); "
     "print(c.pid, flush=True)"],
    start_new_session=True, stdout=subprocess.PIPE, text=True,
)
orphan = int(leader.stdout.readline())
leader.wait()  # the group's leader is gone; its child is ours now, unreaped
running = children.group_alive(leader.pid)
time.sleep(1.5)
with open(f"/proc/{orphan}/stat") as f:
    state = f.read().rsplit(")", 1)[1].split()[0]
try:
    os.killpg(leader.pid, 0)
    signalled = True
except ProcessLookupError:
    signalled = False
print(json.dumps({"running": running, "state": state, "signalled": signalled,
                  "alive": children.group_alive(leader.pid)}))
os.waitpid(orphan, 0)
"""


@pytest.mark.slow
def test_a_group_of_zombies_has_ended():
    import json

    done = subprocess.run(
        [sys.executable, "-c", ZOMBIE_GROUP], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["running"]  # the orphan still ran
    # then only a zombie is left in the group: kill(0) reaches it, yet nothing runs
    assert seen == {"running": True, "state": "Z", "signalled": True, "alive": False}
