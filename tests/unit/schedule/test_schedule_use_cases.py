"""The schedule commands' use cases by profile name, called without click: install's
files (a dry run writes nothing), the workflow export, a tick's refusal of two starts."""

from __future__ import annotations

import pytest

from orchestrator.core.errors import UserError
from orchestrator.schedule import tick, timers
from orchestrator.schedule.profiles import ProfileError, write_sample


@pytest.fixture
def schedules(tmp_path):
    path = tmp_path / "schedules.yaml"
    write_sample(path, force=False)
    return path


def test_a_dry_run_install_names_its_files_and_writes_none(tmp_path, schedules):
    said: list[str] = []
    files = timers.install_named(schedules, "latency", tmp_path / "r", cron=False,
                                 unit_dir=tmp_path / "units", dry_run=True, enable=False,
                                 say=said.append)  # fmt: skip
    names = [f.path.name for f in files]
    assert names == ["interregion-latency.service", "interregion-latency.timer"]
    assert "OnCalendar=" in files[1].text and said == []
    assert not (tmp_path / "units").exists()


def test_an_install_writes_what_its_dry_run_showed(tmp_path, schedules):
    said: list[str] = []
    units = tmp_path / "units"
    units.mkdir()
    shown = timers.install_named(schedules, "latency", tmp_path / "r", cron=True, unit_dir=units,
                                 dry_run=True, enable=False, say=said.append)  # fmt: skip
    written = timers.install_named(schedules, "latency", tmp_path / "r", cron=True,
                                   unit_dir=units, dry_run=False, enable=False,
                                   say=said.append)  # fmt: skip
    assert shown == written and said == [f"wrote {units / 'interregion-latency'}"]
    assert (units / "interregion-latency").read_text() == shown[0].text


def test_the_workflow_of_a_profile_by_name(tmp_path, schedules):
    workflow = tmp_path / "wf.yml"
    timers.export_named(schedules, "latency", workflow, repo="acme/ir",
                        state_bucket="s3://acme-ir", pages=False, results="results")  # fmt: skip
    text = workflow.read_text()
    assert "acme/ir" in text and "s3://acme-ir" in text and "schedule run latency" in text
    assert 'SCHEDULES: "schedules.yaml"' in text  # the checkout's file, not this path
    with pytest.raises(ProfileError, match="no profile 'nightly'"):
        timers.export_named(schedules, "nightly", workflow, repo="acme/ir", state_bucket=None,
                            pages=False, results="results")  # fmt: skip


def test_a_tick_refuses_two_starts_before_reading_the_profiles(tmp_path):
    with pytest.raises(UserError, match="--wait-slip and --hourly-draw both place the start"):
        tick.run_named(tmp_path / "missing.yaml", "latency", tmp_path, "timer", wait_slip=True,
                       hourly_draw=True)  # fmt: skip


def test_a_tick_refuses_a_results_folder_no_sweep_can_run_in_first(tmp_path, schedules):
    with pytest.raises(UserError, match="would expand"):
        tick.run_named(schedules, "no-such-profile", tmp_path / "x{{y}}", "hand", log=print)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schedules.yaml"]


@pytest.mark.slow  # a teardown stage: seconds
def test_reap_tears_down_a_sweep_whose_process_died_once(tmp_path):
    import json
    import subprocess
    import sys

    from orchestrator.model.catalog import load_catalog
    from orchestrator.plan.selection import SelectionSpec
    from orchestrator.plan.sweep_plan import make_plan
    from orchestrator.results.record import Owner, SweepStatus
    from orchestrator.sweep.sweep_folder import create_sweep

    spec = SelectionSpec(regions=("aws:us-east-1", "aws:eu-west-1"))
    dead = create_sweep(make_plan(load_catalog(), spec, backend="aws"), spec, tmp_path)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    dead.record.owner = Owner(int(ended.stdout), 1)  # a process that has ended
    dead.record.status = SweepStatus.MEASURING
    dead.save()
    assert tick.reap_abandoned(tmp_path, print) == [dead.id]
    assert json.loads((dead.dir / "sweep.json").read_text())["status"] == "failed"
    assert tick.reap_abandoned(tmp_path, print) == []  # once; and the lock was let go
