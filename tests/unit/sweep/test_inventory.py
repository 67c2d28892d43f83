"""The control-socket folder of a sweep whose folder name ssh would read as syntax (the
rest of the inventory's paths go through drivers.ansible.plain_view: test_ansible.py)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from orchestrator.sweep.inventory import (
    MAX_CONTROL_DIR_CHARS,
    control_dir,
    existing_control_dir,
    remove_control_dir,
)


@pytest.mark.parametrize("odd", ["r$HOME", "r${x}", "50%", "q'\"", "Zürich", "a b"])
def test_a_short_state_folder_with_characters_ssh_reads_gets_a_plain_one_in_tmp(odd):
    top = Path(tempfile.mkdtemp(prefix="ir-test-", dir="/tmp"))
    state = top / odd / "state"
    state.mkdir(parents=True)
    assert len(str(state / "cp")) <= MAX_CONTROL_DIR_CHARS  # short: only its name decides
    try:
        chosen = control_dir(state)
        assert chosen.parent == Path("/tmp") and chosen.name.startswith("ir-cp-")
        assert control_dir(state) == chosen == existing_control_dir(state)
        remove_control_dir(state)
        assert not chosen.exists()
    finally:
        shutil.rmtree(top)


def test_a_short_plain_state_folder_keeps_its_sockets_inside(tmp_path):
    top = Path(tempfile.mkdtemp(prefix="ir-test-", dir="/tmp"))
    try:
        state = top / "r" / "state"
        state.mkdir(parents=True)
        assert control_dir(state) == state / "cp"
    finally:
        shutil.rmtree(top)
