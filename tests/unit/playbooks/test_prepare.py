"""prepare.yml's agent folder, run by real Ansible on this machine (connection local):
emulated hosts use the sweep's private folder; a cloud host makes its own with mkdtemp,
so nobody can plant code at a guessable name before the agent runs as root."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from orchestrator.core import paths

# real Ansible runs: seconds each; `make unit` skips them
pytestmark = pytest.mark.slow

AGENT_TASKS = ("Private agent folder", "Agent folder is known", "Test agent is on the host")


def agent_folder_play(tmp_path: Path) -> Path:
    """The real prepare.yml's agent-folder tasks, in order, as a playbook of their own
    (the others wait for SSH and install packages) plus one that reports the folder."""
    (play,) = yaml.safe_load((paths.PLAYBOOKS / "prepare.yml").read_text())
    tasks = [t for t in play["tasks"] if t["name"].startswith(AGENT_TASKS)]
    assert len(tasks) == 4, [t["name"] for t in play["tasks"]]
    tasks.append(
        {
            "name": "Agent folder is written down",
            "ansible.builtin.copy": {"content": "{{ ir_agent_dir }}", "dest": "{{ ir_out }}"},
        }
    )
    (tmp_path / "files").symlink_to(paths.PLAYBOOKS / "files")  # copy's src: files/...
    path = tmp_path / "agent.yml"
    path.write_text(yaml.safe_dump([{**play, "hosts": "localhost", "tasks": tasks}]))
    return path


def run(playbook: Path, tmp_path: Path, backend: str, agent_dir: str) -> Path:
    out = tmp_path / f"agent-dir-{backend}"
    extra = {
        "ir_backend": backend,
        "ir_agent_dir": agent_dir,
        "ir_out": str(out),
        "ansible_python_interpreter": sys.executable,
    }
    # inventory variables, as the generated inventory gives them (extra vars, -e, would
    # win over the playbook's set_fact)
    inventory = tmp_path / f"inventory-{backend}.yml"
    inventory.write_text(json.dumps({"all": {"hosts": {"localhost": extra}}}))
    ansible = Path(sys.executable).parent / "ansible-playbook"
    done = subprocess.run(
        [str(ansible), "-c", "local", "-i", str(inventory), str(playbook)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ANSIBLE_LOCALHOST_WARNING": "false"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return Path(out.read_text())


def private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) == 0o700 and path.stat().st_uid == os.getuid()


@pytest.fixture
def playbook(tmp_path):
    if not (Path(sys.executable).parent / "ansible-playbook").exists():
        pytest.fail("ansible-playbook is missing from the environment: run make setup")
    return agent_folder_play(tmp_path)


def test_a_cloud_host_makes_its_agent_folder_with_mkdtemp(playbook, tmp_path):
    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("interregion-*"))
    made = []
    try:
        for _ in range(2):
            made.append(run(playbook, tmp_path, "aws", "/tmp/interregion-guessable"))
        first, second = made
        # new folders (other tests running beside it may make their own interregion-* too)
        assert set(made) <= set(tmp.glob("interregion-*")) - before
        assert first != second  # a new random name each time, never the guessable one
        for folder in made:
            assert folder.parent == Path(tempfile.gettempdir())
            assert folder.name.startswith("interregion-")
            assert private(folder) and private(folder / "ir_agent.py")
        assert not Path("/tmp/interregion-guessable").exists()
    finally:
        # the agent folders (also a failed run's): not the other tests' interregion-* files
        for folder in set(tmp.glob("interregion-*/ir_agent.py")):
            if folder.parent not in before:
                shutil.rmtree(folder.parent, ignore_errors=True)


def test_an_emulated_host_uses_the_sweeps_private_folder(playbook, tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    folder = run(playbook, tmp_path, "local", str(state / "agent"))
    assert folder == state / "agent"
    assert private(folder) and private(folder / "ir_agent.py")


def test_no_playbook_or_module_names_a_guessable_agent_folder():
    roots = [paths.PLAYBOOKS, paths.ROOT / "orchestrator"]
    texts = [p.read_text() for r in roots for p in r.rglob("*") if p.suffix in (".py", ".yml")]
    assert texts and not any("/tmp/interregion" in t for t in texts)
