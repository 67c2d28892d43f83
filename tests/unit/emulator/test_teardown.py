"""Which processes a teardown may kill: the decision, without root or namespaces."""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.emulator.runtime import _cmdline, pids_of_our_namespaces

STATE = Path("/run/interregion/emulator/abc123")


def test_an_unnamed_namespace_is_ours_only_if_a_process_in_it_runs_our_programs():
    found = {
        100: 1,  # our host's sshd, its namespace lost its name
        101: 1,  # an iperf3 daemon beside it: no state dir on its command line
        200: 2,  # a browser sandbox that got an inode the emulation once used
        201: 2,
        300: 3,  # another emulation whose id starts like ours
    }
    cmdlines = {
        100: f"/usr/sbin/sshd -f {STATE}/sshd-0.conf",
        101: "iperf3 -s -p 5201 -D",
        200: "/usr/lib/chromium/chromium --type=renderer",
        201: "/usr/lib/chromium/chromium --type=zygote",
        300: f"/usr/sbin/sshd -f {STATE}4/sshd-0.conf",
    }
    assert pids_of_our_namespaces(found, cmdlines, STATE) == {100, 101}


def test_nothing_is_ours_without_proof():
    assert pids_of_our_namespaces({5: 9}, {}, STATE) == set()  # the process already exited
    assert pids_of_our_namespaces({}, {}, STATE) == set()


def test_cmdline_of_this_process_and_of_none():
    assert "pytest" in _cmdline(os.getpid()) or "python" in _cmdline(os.getpid())
    assert _cmdline(2**22 + 1) == ""  # above pid_max: no such process
