"""The mesh agent's own recovery: a pause longer than an interval skips the probes it
missed (gaps, never a late burst read as loss), a killed agent is started again by the
next pull's --revive from the part it kept, and a line cut by a kill stays one bad line."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.core import paths
from orchestrator.mesh import bins

AGENT = paths.PLAYBOOKS / "files" / "ir_agent.py"


@pytest.fixture(scope="module")
def agent():
    spec = importlib.util.spec_from_file_location("ir_agent_under_test", AGENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_resume_after_a_pause_takes_the_next_slot_due(agent):
    plan = agent.mesh_schedule("aws:x", [{"name": "a"}, {"name": "b"}], 2, 60.0)
    offsets = [o for o, _ in plan]
    assert offsets == sorted(offsets) and len(plan) == 4  # 15 s apart from the phase
    cycle, k = agent.mesh_resume(plan, 60.0, 6000.0 + offsets[1] + 0.5)
    assert (cycle, k) == (6000, 2)  # not slot 0 or 1: they were due before it woke
    cycle, k = agent.mesh_resume(plan, 60.0, 6000.0 + offsets[3] + 0.5)
    assert (cycle, k) == (6060, 0)  # the cycle's last slot passed: the next cycle's first


def _sleeper(argv):
    """A process whose command line is `argv` (sleep under python's -c, argv after it)."""
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *argv])


def test_alive_means_the_pid_file_names_a_running_mesh_agent(agent, tmp_path):
    assert not agent.mesh_agent_alive(str(tmp_path))  # no pid file
    (tmp_path / "agent.pid").write_text("garbage\n")
    assert not agent.mesh_agent_alive(str(tmp_path))
    other = _sleeper(["--mesh-read"])  # a live pid, not an agent's --mesh
    mesh = _sleeper(["--mesh", "part.json"])
    try:
        (tmp_path / "agent.pid").write_text(f"{other.pid}\n")
        assert not agent.mesh_agent_alive(str(tmp_path))
        (tmp_path / "agent.pid").write_text(f"{mesh.pid}\n")
        assert agent.mesh_agent_alive(str(tmp_path))
        os.kill(mesh.pid, 19)  # SIGSTOP: a paused host's agent has not died
        assert agent.mesh_agent_alive(str(tmp_path))
        os.kill(mesh.pid, 18)
    finally:
        for p in (other, mesh):
            p.kill()
            p.wait()
    assert not agent.mesh_agent_alive(str(tmp_path))  # gone


def test_a_read_with_revive_starts_a_dead_agent_again(tmp_path):
    """The real agent, no peers (it probes nothing): started, killed, revived by a read."""
    folder = tmp_path / "h"
    part = {"host": "aws:x", "peers": [], "interval_s": 1, "pings": 1, "dir": str(folder)}
    (tmp_path / "part.json").write_text(json.dumps(part))
    first = subprocess.Popen([sys.executable, str(AGENT), "--mesh", str(tmp_path / "part.json")],
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    revived = None
    try:
        for _ in range(100):
            if (folder / "agent.pid").is_file() and (folder / "mesh-part.json").is_file():
                break
            if first.poll() is not None:
                pytest.skip(f"no ICMP socket here: {first.stderr.read().strip()[-200:]}")
            time.sleep(0.05)
        assert json.loads((folder / "mesh-part.json").read_text()) == part

        def read() -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, str(AGENT), "--mesh-read", str(folder), "1", "0", "--revive"],
                capture_output=True, text=True, check=True, timeout=30,
            )  # fmt: skip

        assert read().stderr == ""  # running: left alone
        first.kill()
        first.wait()
        done = read()
        assert done.stderr.startswith("revived: "), done.stderr
        revived = int(done.stderr.split()[-1])
        assert int((folder / "agent.pid").read_text()) == revived
        assert os.getsid(revived) == revived  # its own session: the read's end is not its
        assert read().stderr == ""
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        if revived is not None:
            os.kill(revived, 15)
            for _ in range(100):
                if not agent_running(revived):
                    break
                time.sleep(0.05)


def agent_running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_line_cut_by_a_kill_stays_one_bad_line(agent, tmp_path):
    whole = '{"t":1800000000,"d":"p","s":1,"r":[1.5]}\n'
    (tmp_path / "records-000001.jsonl").write_text(whole + '{"t":18000000')
    log = agent.MeshLog(str(tmp_path), 1 << 20, 8)
    log.write(['{"t":1800000060,"d":"p","s":1,"r":[2.5]}\n'])
    log.close()
    text = "#file 1 0\n" + (tmp_path / "records-000001.jsonl").read_text()
    samples, _at, bad = bins.parse_pulled("h", text, bins.Position(1, 0))
    assert bad == 1
    assert [s.t for s in samples] == [1800000000, 1800000060]
