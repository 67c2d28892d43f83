"""A mesh whose controller died is found and torn down by the next lock taker, a sweep's
included (sweep.abandoned), and its pulled records are kept."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from orchestrator.model.catalog import load_catalog
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import make_plan
from orchestrator.results.record import Owner, SweepStatus
from orchestrator.sweep import abandoned
from orchestrator.sweep.sweep_folder import create_sweep


@pytest.mark.slow  # a teardown stage: seconds
def test_a_dead_controllers_mesh_is_reaped_by_a_sweeps_lock(tmp_path):
    spec = SelectionSpec(regions=("aws:us-east-1", "aws:eu-west-1"))
    mesh_folder = tmp_path / abandoned.MESH_DIR
    mesh = create_sweep(make_plan(load_catalog(), spec, backend="aws"), spec, mesh_folder)
    mesh.record.add({"mesh": {"request": {}, "source": "mesh"}})
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    mesh.record.owner = Owner(int(dead.stdout), 1)  # a process that has ended
    mesh.record.status = SweepStatus.MEASURING
    mesh.save()
    (mesh.dir / "pulled").mkdir()
    assert abandoned.abandoned_sweeps(mesh_folder) == [mesh.id]
    lines: list[str] = []
    assert abandoned.reap_abandoned(tmp_path, lines.append) == [mesh.id]
    record = json.loads((mesh.dir / "sweep.json").read_text())
    assert record["status"] == "failed" and record["abandoned_utc"]
    assert record["stages"]["teardown"]["status"] == "done"
    assert (mesh.dir / "pulled").is_dir()
    assert abandoned.reap_abandoned(tmp_path, lines.append) == []  # once
