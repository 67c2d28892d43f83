"""Every hint runs as printed: the command a one-line error proposes is taken from its
text and run by a real shell from another folder, and it does what the error asked for
without touching a folder the user did not name. Group options reach the subcommand
(`history --results X ingest --all`). The hints of a real sweep (Ctrl-C's resume, a
sweep with no hosts) are run the same way in tests/e2e/test_hints.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hint_support import INTERREGION, run_as_printed
from history_support import make_sweep

from orchestrator.core.paths import shell_word

# what a shell would take apart or expand if a hint printed it bare
ODD = "res $HOME $(id) `id` 50% 'q' \"d\" Zürich"


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(INTERREGION), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """A folder the commands start in, and another the hints are run from."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    return here, elsewhere


def test_shell_word_reads_back_as_the_path_in_a_shell(tmp_path):
    for text in ["/tmp/plain-1.x", f"/tmp/{ODD}", "/tmp/back\\slash !x"]:
        got = subprocess.run(
            ["bash", "-c", f"printf %s {shell_word(text)}"], capture_output=True, text=True
        )
        assert got.stdout == text


@pytest.mark.slow
@pytest.mark.parametrize("command", [["show", "--pairs", "aws:us-east-1/gcp:us-east4"], ["export"]])
def test_the_no_store_hint_names_the_folder_and_runs_as_printed(folders, command):
    here, elsewhere = folders
    make_sweep(here / ODD, "20261122T0130Z-3fa2", {("aws:us-east-1", "gcp:us-east4"): [80.0] * 5})
    first = cli(["history", "--results", ODD, *command], here)
    assert first.returncode == 2 and first.stderr.count("\n") == 1, first.stderr
    assert str(here / ODD / "history.duckdb") in first.stderr
    hinted = run_as_printed(first.stderr, elsewhere)
    assert hinted.returncode == 0, hinted.stderr
    assert (here / ODD / "history.duckdb").is_file()
    assert list(elsewhere.iterdir()) == []  # no ./results made where the hint ran
    again = cli(["history", "--results", ODD, *command], here)
    assert again.returncode == 0, again.stderr
    assert "1 row " in again.stdout or "20261122T0130Z-3fa2" in again.stdout, again.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "--all"],
        ["rebuild"],
        ["export", "--format", "csv"],
        ["show", "--pairs", "aws:us-east-1/gcp:us-east4"],
    ],
)
def test_the_groups_results_applies_to_its_subcommands(folders, command):
    here, _ = folders
    make_sweep(here / ODD, "20261122T0130Z-3fa2", {("aws:us-east-1", "gcp:us-east4"): [80.0] * 5})
    if command[0] in ("export", "show"):
        assert cli(["history", "--results", ODD, "ingest", "--all"], here).returncode == 0
    out = cli(["history", "--results", ODD, *command], here)
    assert out.returncode == 0, out.stderr
    assert (here / ODD / "history.duckdb").is_file()
    assert sorted(p.name for p in here.iterdir()) == [ODD]  # no ./results beside it


def test_the_subcommands_own_results_wins_over_the_groups(folders):
    here, _ = folders
    (here / "a").mkdir()
    (here / "b").mkdir()
    out = cli(["history", "--results", "a", "ingest", "--all", "--results", "b"], here)
    assert out.returncode == 0, out.stderr
    assert (here / "b" / "history.duckdb").is_file()
    assert not (here / "a" / "history.duckdb").exists()


def test_the_groups_results_wins_over_the_environment(folders):
    here, _ = folders
    (here / "a").mkdir()
    (here / "env").mkdir()
    env = {**os.environ, "INTERREGION_RESULTS": str(here / "env")}
    out = subprocess.run(
        [str(INTERREGION), "history", "--results", "a", "ingest", "--all"],
        cwd=here, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert (here / "a" / "history.duckdb").is_file()
    assert not (here / "env" / "history.duckdb").exists()


@pytest.mark.parametrize("command", [["sweep", "--resume"], ["teardown", "--sweep"]])
def test_a_sweep_in_a_results_folder_that_is_not_there_is_one_line_and_makes_nothing(
    folders, command
):
    here, _ = folders
    yes = ["--yes"] if command[0] == "sweep" else []
    out = cli([*command, "20261128T1510Z-45e1", "--results", "int", *yes], here)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert f"no results folder {here / 'int'}" in out.stderr
    assert "ls " not in out.stderr  # no `ls` of a folder that does not exist
    assert list(here.iterdir()) == []
