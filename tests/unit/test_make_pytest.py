"""`make pytest` runs the tests in two runs (without root over every core, then with root):
a run that collects nothing is fine when the other ran tests, and a failure when neither
did. Run through make itself, as CI does (`.ci/run` -> `make test`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
    pytest.mark.skipif(
        not (ROOT / ".venv" / "bin" / "pytest").exists(), reason="no .venv: make setup first"
    ),
]


def _make_pytest(args: str) -> subprocess.CompletedProcess[str]:
    # -o: make's prerequisites are up to date in a checkout that runs this test; -o keeps it
    # from rebuilding them (delayd-asan, actionlint, promtool) should a stamp be older
    prereqs = ["setup", "delayd-asan", "actionlint", "promtool", "deb", "venv", "delayd"]
    skip = [f"-o{target}" for target in prereqs] + ["-oterraform-check"]
    env = {**os.environ, "PYTEST_ADDOPTS": "-p no:cacheprovider"}
    return subprocess.run(
        ["make", "-s", *skip, "pytest", f"PYTEST_ARGS={args}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=300,
    )


def test_a_selection_neither_run_collects_is_a_failure_said_plainly() -> None:
    done = _make_pytest("-k no_test_is_named_like_this tests/unit/test_layers.py")
    assert done.returncode != 0
    assert "error: pytest collected no tests" in done.stdout


def test_a_selection_of_tests_without_root_passes_though_the_root_run_collects_none() -> None:
    done = _make_pytest("tests/unit/test_layers.py -k make_lint_runs_the_layer_check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "collected no tests" not in done.stdout
