"""Running a hint as printed: the command a one-line error proposes, taken from its text
and run by bash as a user would paste it (tests/unit/cli/test_hints.py,
tests/e2e/test_hints.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

INTERREGION = Path(sys.executable).parent / "interregion"
# a hint's command is between the first quote before `interregion` and the line's last
# quote: a folder's own quotes sit inside the shell's double quotes (paths.shell_word)
HINT = re.compile(r"'(interregion .*)'")


def hints(text: str) -> list[str]:
    return [h for line in text.splitlines() for h in HINT.findall(line)]


def run_as_printed(text: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The one hint in `text`, run by bash from `cwd` with `interregion` on PATH."""
    found = hints(text)
    assert len(found) == 1, text
    env = {**os.environ, "CI": "true", "PATH": f"{INTERREGION.parent}:{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-c", found[0]],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
