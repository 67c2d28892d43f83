"""The conventions every command follows (docs/development.md, "Command-line conventions"):
exit codes, dated log lines with --verbose/--quiet, the --json envelope, INTERREGION_*
variables and the XDG folders."""

from __future__ import annotations

import json
import re
import time

import click
import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.cli.options import ENVVARS
from orchestrator.core import log, paths
from orchestrator.drivers.lock import results_lock
from orchestrator.schedule.profiles import load_profiles

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (DEBUG|INFO|WARNING) \S")
TWO_REGIONS = ["--regions", "aws:us-east-1,gcp:us-east4"]


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    for name, command in sorted(group.commands.items()):
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


def _one_line(result) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


# Exit codes ------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "--no-such-option"],  # an option click does not know
        ["plan", "--max-regions", "many"],  # a value click refuses
        ["plan", "--clouds", "azure"],  # a value the library refuses (UserError)
        ["no-such-command"],
        ["--no-such-option", "plan"],
    ],
)
def test_bad_input_exits_2_with_one_line(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    _one_line(result)


def test_a_failed_run_exits_1_with_one_line(tmp_path):
    # another sweep holds the results folder: the input is fine, the run cannot go on now
    with results_lock(tmp_path, trigger="test"):
        result = CliRunner().invoke(
            main, ["sweep", *TWO_REGIONS, "--yes", "--results", str(tmp_path)]
        )
    assert result.exit_code == 1, result.output
    assert "is busy" in result.stderr.splitlines()[-1]
    assert result.stderr.splitlines()[-1].startswith("error: ")
    assert not list(tmp_path.glob("*/sweep.json"))


def test_a_system_error_is_a_failed_run_with_its_traceback_under_verbose(tmp_path):
    @main.command("probe-oserror", hidden=True)
    def probe() -> None:
        (tmp_path / "missing" / "file").read_text()  # the system refuses: ENOENT

    assert probe.name == "probe-oserror"
    try:
        plain = CliRunner().invoke(main, ["probe-oserror"])
        loud = CliRunner().invoke(main, ["--verbose", "probe-oserror"])
    finally:
        main.commands.pop("probe-oserror")
    assert plain.exit_code == loud.exit_code == 1
    assert "No such file or directory" in _one_line(plain)
    assert "Traceback (most recent call last)" in loud.stderr
    assert loud.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1]


# Log lines -------------------------------------------------------------------


def test_every_command_takes_verbose_and_quiet():
    for path, command in _commands(main):
        options = {o for p in command.params for o in getattr(p, "opts", [])}
        assert {"--verbose", "-v", "--quiet", "-q"} <= options, path


def test_log_lines_carry_a_utc_time_and_a_level(tmp_path):
    result = CliRunner().invoke(
        main, ["sweep", *TWO_REGIONS, "--plan-only", "--results", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), lines
    assert any(" INFO plan: 2 regions" in line for line in lines), lines
    assert result.stdout.strip() in result.stderr  # the sweep id, alone on stdout


def test_quiet_keeps_warnings_only_before_or_after_the_command(tmp_path):
    for args in (
        ["-q", "sweep", *TWO_REGIONS, "--plan-only", "--results", str(tmp_path / "a")],
        ["sweep", *TWO_REGIONS, "--plan-only", "--results", str(tmp_path / "b"), "--quiet"],
    ):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert result.stderr == "", result.stderr
        assert re.fullmatch(r"\d{8}T\d{4}Z-[0-9a-f]{4}\n", result.stdout), result.stdout


def test_verbose_shows_debug_lines_and_the_next_run_is_back_to_normal():
    @main.command("probe-log", hidden=True)
    def probe() -> None:
        log.debug("a detail")
        log.info("a fact")

    assert probe.name == "probe-log"
    try:  # added after the others: the group's --verbose, before the command's name
        loud = CliRunner().invoke(main, ["--verbose", "probe-log"])
        plain = CliRunner().invoke(main, ["probe-log"])
    finally:
        main.commands.pop("probe-log")
    assert [line.split(" ", 1)[1] for line in loud.stderr.splitlines()] == [
        "DEBUG a detail",
        "INFO a fact",
    ]
    assert [line.split(" ", 1)[1] for line in plain.stderr.splitlines()] == ["INFO a fact"]


def test_a_long_step_says_when_it_starts_and_how_long_it_took():
    said = []
    with log.step("rendering 2 PNG charts", tell=said.append):
        said.append("inside")
    assert said[:2] == ["rendering 2 PNG charts", "inside"]
    assert re.fullmatch(r"rendering 2 PNG charts: done in \d+\.\d s", said[2]), said
    failed = []
    with pytest.raises(ValueError), log.step("a step", tell=failed.append):
        raise ValueError("its own error says it")
    assert failed == ["a step"]  # no "done" for a step that failed
    quick = []
    with log.step("a quick step", tell=quick.append, after_s=5):
        pass
    assert quick == []  # over before its start line was due: nothing said
    slow = []
    with log.step("a slow step", tell=slow.append, after_s=0.05):
        time.sleep(0.3)
    assert slow[0] == "a slow step" and slow[1].startswith("a slow step: done in "), slow


def test_verbose_adds_what_plan_and_report_do(tmp_path):
    plan = CliRunner().invoke(main, ["-v", "plan", *TWO_REGIONS, "--json"])
    assert plan.exit_code == 0, plan.output
    debug = [line.split(" DEBUG ", 1)[1] for line in plan.stderr.splitlines() if " DEBUG " in line]
    assert any(line.startswith("plan: catalog ") for line in debug), debug
    assert any("directed pairs selected" in line for line in debug), debug
    assert any(line.startswith("plan: prices from ") for line in debug), debug
    rows = tmp_path / "theirs.csv"
    rows.write_text(
        "src_cloud,src_region,dst_cloud,dst_region,rtt_p50_ms\naws,us-east-1,gcp,europe-west1,80\n"
    )
    out = tmp_path / "rep"
    report = CliRunner().invoke(
        main, ["report", "-v", "--input", str(rows), "--out", str(out), "--no-png"]
    )
    assert report.exit_code == 0, report.output
    debug = [x.split(" DEBUG ", 1)[1] for x in report.stderr.splitlines() if " DEBUG " in x]
    assert any(line.startswith("report: read 1 file") for line in debug), debug
    assert any(line.startswith("report: chart ") for line in debug), debug


# --json ------------------------------------------------------------------------

LISTING = [  # the commands that list things; the cloud ones are in tests/unit/clouds
    ("regions",),
    ("regions", "sync"),
    ("schedule", "list"),
    ("emulator", "status"),
    ("preflight",),
    ("reap",),
]


def _envelope(result, command: str):
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"schema", "command", "generated_at", "data"}, doc
    assert doc["schema"] == "interregion/v1" and doc["command"] == command, doc
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["generated_at"]), doc
    return doc["data"]


def test_every_listing_command_takes_json():
    found = dict(_commands(main))
    for path in LISTING:
        assert "--json" in {o for p in found[path].params for o in getattr(p, "opts", [])}, path


def test_regions_json_is_in_the_envelope():
    data = _envelope(CliRunner().invoke(main, ["regions", "--cloud", "aws", "--json"]), "regions")
    assert data and all(r["cloud"] == "aws" and r["key"].startswith("aws:") for r in data)


def test_schedule_list_json_is_in_the_envelope(tmp_path):
    schedules = paths.ROOT / "schedules.yaml"
    args = ["schedule", "list", "--file", str(schedules), "--results", str(tmp_path), "--json"]
    data = _envelope(CliRunner().invoke(main, args), "schedule list")
    names = [d["profile"] for d in data]
    assert names and names == list(load_profiles(schedules))
    for d in data:
        assert d["last_outcome"] is None and d["missed_ticks"] == [] and d["month_spend_usd"] == 0
        assert d["next_utc"].endswith("Z")


def test_emulator_status_json_is_in_the_envelope():
    data = _envelope(CliRunner().invoke(main, ["emulator", "status", "--json"]), "emulator status")
    assert isinstance(data, list)
    for row in data:  # emulations other runs on this machine have up, if any
        assert {"id", "phase", "subnet", "hosts", "stale", "expires_utc"} <= set(row)


# INTERREGION_* -----------------------------------------------------------------


def test_every_common_option_reads_its_variable():
    seen = set()
    for path, command in _commands(main):
        for param in command.params:
            for opt in set(getattr(param, "opts", [])) & set(ENVVARS):
                if (*path, opt) == ("schedule", "export", "--results"):
                    assert param.envvar is None  # the runner's folder, not this machine's
                    continue
                assert param.envvar == ENVVARS[opt], (path, opt)
                seen.add(opt)
    assert seen == set(ENVVARS)


def test_results_and_backend_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("INTERREGION_RESULTS", str(tmp_path / "from env"))
    monkeypatch.setenv("INTERREGION_BACKEND", "local")
    result = CliRunner().invoke(main, ["sweep", *TWO_REGIONS, "--plan-only"])
    assert result.exit_code == 0, result.output
    (record,) = (tmp_path / "from env").glob("*/sweep.json")
    assert record.parent.name == result.stdout.strip()
    assert json.loads(record.read_text())["backend"] == "local"
    # the command line wins over the environment
    given = CliRunner().invoke(
        main, ["sweep", *TWO_REGIONS, "--plan-only", "--results", str(tmp_path / "given")]
    )
    assert given.exit_code == 0, given.output
    assert len(list((tmp_path / "given").glob("*/sweep.json"))) == 1
    assert len(list((tmp_path / "from env").glob("*/sweep.json"))) == 1


def test_a_bad_value_from_the_environment_is_bad_input(monkeypatch):
    monkeypatch.setenv("INTERREGION_BACKEND", "azure")
    result = CliRunner().invoke(main, ["plan", *TWO_REGIONS])
    assert result.exit_code == 2
    assert "'azure' is not one of" in _one_line(result)


def test_catalog_and_schedules_come_from_the_environment(tmp_path, monkeypatch):
    catalog = tmp_path / "regions.yaml"
    catalog.write_text(paths.CATALOG.read_text())
    monkeypatch.setenv("INTERREGION_CATALOG", str(tmp_path / "none.yaml"))
    missing = CliRunner().invoke(main, ["regions"])
    assert missing.exit_code == 2 and "none.yaml" in _one_line(missing)
    monkeypatch.setenv("INTERREGION_CATALOG", str(catalog))
    assert _envelope(CliRunner().invoke(main, ["regions", "--json"]), "regions")
    schedules = tmp_path / "schedules.yaml"
    schedules.write_text((paths.ROOT / "schedules.yaml").read_text())
    monkeypatch.setenv("INTERREGION_SCHEDULES", str(schedules))
    monkeypatch.setenv("INTERREGION_RESULTS", str(tmp_path / "results"))
    data = _envelope(CliRunner().invoke(main, ["schedule", "list", "--json"]), "schedule list")
    assert [d["profile"] for d in data] == list(load_profiles(schedules))
