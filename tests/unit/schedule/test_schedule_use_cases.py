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
