"""Python scripts a test puts on PATH in place of a tool (a fake terraform or
ansible-playbook), run by the interpreter that runs the tests even when its path holds a
space: a `#!` line cannot name such a path (the kernel splits it at the space, and the
tool of that name further along PATH runs instead), so /bin/sh starts it (pip's own
launchers do the same)."""

from __future__ import annotations

import shlex
import sys


def python_script(body: str) -> str:
    """The text of an executable file that runs `body` with this interpreter: its first
    lines are a shell `exec` for /bin/sh and one string statement for Python."""
    return f"#!/bin/sh\n'''exec' {shlex.quote(sys.executable)} \"$0\" \"$@\"\n' '''\n{body}"
