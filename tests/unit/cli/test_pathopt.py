"""Every path option is absolute from the CLI edge on, and every tool a path is handed to
(ssh through Ansible, a systemd unit, a cron line) reads back exactly that path; what a
tool cannot take is refused in one line before anything is created."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.cli.options import UserPath, folder_or_url
from orchestrator.results import files as store
from orchestrator.sweep.inventory import ssh_common_args

# spaces, both quotes, %, $, a backslash and non-ASCII: each breaks some tool unquoted
ODD = ["res dir", "it's", 'say "hi"', "100%", "cost$5", "$HOME", "back\\slash", "Zürich-東京"]


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        found.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix}{name} ")
    return found


def test_every_path_parameter_of_every_command_is_a_user_path():
    seen = 0
    for name, command in _commands(main):
        for param in command.params:
            if isinstance(param.type, click.Path):
                seen += 1
                assert isinstance(param.type, UserPath), f"{name} {param.name}"
    assert seen > 20  # the walk reached the commands


def test_a_relative_path_is_made_absolute_against_the_starting_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in ("rel/res", "res dir", "./a/../b", "Zürich"):
        got = UserPath(file_okay=False).convert(text, None, None)
        assert got.is_absolute() and got == Path(tmp_path, text).resolve(strict=False)


def test_publish_to_a_relative_folder_lands_there_and_a_url_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for given, expected in (("out dir", str(tmp_path / "out dir")), ("s3://b/p", "s3://b/p")):
        assert folder_or_url(click.Context(main), click.Option(["--to"]), given) == expected


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "tab\there", "nul\x01"])
def test_a_control_character_in_a_path_is_one_line_and_creates_nothing(tmp_path, monkeypatch, bad):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["sweep", "--max-regions", "2", "--yes", "--results", bad])
    assert out.exit_code == 2
    assert out.output.count("\n") == 1 and "control character" in out.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("bad", ["a${HOME}b", "x{{y}}", "x{%y", "x{#y"])
def test_what_ssh_or_ansible_would_expand_is_refused_before_creating_anything(
    tmp_path, monkeypatch, bad
):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["sweep", "--max-regions", "2", "--yes", "--results", bad])
    assert out.exit_code == 2, out.output
    assert out.output.count("\n") == 1 and "would expand" in out.output
    assert list(tmp_path.iterdir()) == []
    assert store.tool_path_problem(Path(tmp_path, "fine", *ODD)) is None


def _ssh_config(args: str, host: str = "198.18.7.2", port: int = 22) -> dict[str, str]:
    """What ssh makes of the arguments Ansible passes it (Ansible splits them like shlex)."""
    done = subprocess.run(
        ["ssh", "-G", *shlex.split(args), "-p", str(port), host],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)


@pytest.mark.parametrize("name", ODD)
def test_ssh_reads_back_the_sweeps_own_files_whatever_their_folder_is_called(tmp_path, name):
    folder = tmp_path / name / "state"
    args = ssh_common_args(folder / "keys" / "client", folder / "known_hosts", folder / "cp")
    config = _ssh_config(args)
    assert config["userknownhostsfile"] == str(folder / "known_hosts")
    assert config["controlpath"] == str(folder / "cp" / "198.18.7.2-22")
    # ssh -G prints IdentityFile before its %-expansion, which turns %% into %
    assert config["identityfile"] == str(folder / "keys" / "client").replace("%", "%%")
    assert config["stricthostkeychecking"] == "true"


# ---- timers ---------------------------------------------------------------------------

PROFILES = """
profiles:
  lat:
    every: PT6H
    slip: PT10M
    tests: ping
    regions: aws:us-east-1,gcp:us-east4
    backend: local
    budget_usd: 2
    budget_usd_month: 100
"""


def _exec_words(line: str) -> list[str]:
    """An Exec= line split as systemd.service(5) says: words split on blanks, a word in
    double quotes taken whole with C escapes, then %% -> % and $$ -> $."""
    words = re.findall(r'"((?:[^"\\]|\\.)*)"|(\S+)', line)
    out = []
    for quoted, plain in words:
        text = re.sub(r"\\(.)", r"\1", quoted) if quoted else plain
        out.append(text.replace("%%", "%").replace("$$", "$"))
    return out


def _cron_command(line: str) -> list[str]:
    """What cron hands /bin/sh (crontab(5): an unescaped % ends the command, \\% is a %),
    split as the shell would, after the five time fields and the user."""
    command = line.split(" ", 6)[6]
    assert re.search(r"(?<!\\)%", command) is None
    return shlex.split(command.replace("\\%", "%"))


@pytest.mark.parametrize("name", ODD)
def test_units_and_cron_lines_carry_odd_paths_exactly(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    schedules = folder / "schedules.yaml"
    schedules.write_text(PROFILES)
    results = folder / "results"
    units, cron = tmp_path / "units", tmp_path / "cron"
    base = ["schedule", "install", "lat", "--file", str(schedules), "--results", str(results)]
    for extra in (["--unit-dir", str(units)], ["--cron", "--unit-dir", str(cron)]):
        out = CliRunner().invoke(main, [*base, *extra, "--no-enable"])
        assert out.exit_code == 0, out.output
    service = units / "interregion-lat.service"
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: 'make deb' installs the systemd package"
    done = subprocess.run(
        [analyze, "verify", str(service), str(units / "interregion-lat.timer")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr
    text = service.read_text()
    words = _exec_words(text.split("ExecStart=")[1].splitlines()[0])
    assert words[words.index("--file") + 1] == str(schedules)
    assert words[words.index("--results") + 1] == str(results)
    workdir = text.split("WorkingDirectory=")[1].splitlines()[0]
    assert workdir.replace("%%", "%") == str(folder)
    line = (cron / "interregion-lat").read_text().splitlines()[-1]
    argv = _cron_command(line)
    assert argv[:3] == ["cd", str(folder), "&&"]
    assert argv[argv.index("--results") + 1] == str(results)
    assert argv[-3:] == [">>", str(results / "schedule-lat.log"), "2>&1"]
