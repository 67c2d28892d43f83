"""Option values through the real CLI: bad input is one line on stderr and exit 2."""

from __future__ import annotations

import re

import pytest
import yaml
from click.testing import CliRunner
from fixture_regions import CATALOG_DATA

from orchestrator.cli import main


@pytest.fixture
def catalog_file(tmp_path):
    path = tmp_path / "regions.yaml"
    path.write_text(yaml.safe_dump(CATALOG_DATA))
    return str(path)


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert result.stdout == "", result.stdout  # nothing half-written
    return lines[0]


# --- 1. an empty list is not "everything" -------------------------------------


@pytest.mark.parametrize("option", ["--regions", "--exclude", "--pairs", "--clouds"])
@pytest.mark.parametrize("value", ["", ",,", " , "])
def test_an_empty_list_option_is_an_error_naming_it(catalog_file, option, value):
    line = one_line_error(run("plan", "--catalog", catalog_file, option, value, "--json"))
    assert line.startswith(f"error: {option} ") and "names nothing" in line


@pytest.mark.parametrize(
    "args",
    [
        ["reap", "--clouds", ""],
        ["regions", "sync", "--clouds", ","],
        ["regions", "--cloud", ""],
        ["preflight", "--regions", ""],
        ["sweep", "--exclude", ",", "--yes", "--plan-only"],
    ],
)
def test_every_command_refuses_an_empty_list(args):
    line = one_line_error(run(*args))
    assert "names nothing" in line


@pytest.mark.parametrize("value", ["", ",", " , "])
@pytest.mark.parametrize("command", [["plan"], ["sweep", "--plan-only", "--yes"]])
def test_an_empty_tests_list_is_not_the_default(catalog_file, tmp_path, command, value):
    """--tests '' used to run both tests: a whole sweep where the user meant a choice."""
    args = [*command, "--tests", value]
    if command[0] == "sweep":
        args += ["--regions", "aws:us-east-1,gcp:us-east4", "--results", str(tmp_path / "results")]
    else:
        args += ["--catalog", catalog_file]
    line = one_line_error(run(*args))
    assert line.startswith(f"error: --tests {value!r} names nothing"), line
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").glob("2*"))


def test_a_list_with_empty_items_keeps_the_others(catalog_file):
    result = run("plan", "--catalog", catalog_file, "--regions", "aws:us-east-1,,gcp:us-east4,")
    assert result.exit_code == 0, result.output
    assert "2 regions" in result.output


# --- 4. what the options say -------------------------------------------------


def test_max_concurrent_is_described_as_slots_per_round(catalog_file):
    help_text = " ".join(run("plan", "--help").output.split())
    assert "At most K slots (region pairs) per round, so at most K iperf3 tests at once" in (
        help_text
    )
    result = run("plan", "--catalog", catalog_file, "--clouds", "gcp", "--max-concurrent", "2")
    assert result.exit_code == 0, result.output
    assert "at most 2 slots per round" in result.output
    assert "tests per round" not in result.output


def test_max_regions_above_what_the_filters_leave_is_noted_on_stderr(catalog_file):
    args = ["plan", "--catalog", catalog_file, "--regions", "aws:us-east-1,gcp:us-east4"]
    result = run(*args, "--max-regions", "5", "--json")
    assert result.exit_code == 0, result.output
    assert (
        result.stderr.endswith(  # one dated line
            "Z INFO --max-regions 5: the other filters leave 2 regions, all of them are used\n"
        )
        and result.stderr.count("\n") == 1
    )
    assert result.stdout.startswith("{")  # the JSON stays parseable
    assert run(*args, "--max-regions", "2", "--json").stderr == ""


@pytest.mark.parametrize(
    ("args", "advice"),
    [
        # every region is aws: the fix is the aws backend, or gcp regions
        (
            ["--clouds", "aws", "--backend", "gcp"],
            "--backend gcp cannot host aws regions, and --clouds aws has no gcp: use "
            "--backend aws (or cloud), or select gcp regions with --clouds gcp",
        ),
        (
            ["--backend", "gcp", "--max-regions", "4"],
            "keep to gcp with --clouds gcp, or use --backend cloud for both clouds",
        ),
        # --clouds gcp would contradict --cloud-pair aws:gcp
        (
            ["--backend", "gcp", "--cloud-pair", "aws:gcp"],
            "keep to gcp with --cloud-pair gcp:gcp, or use --backend cloud",
        ),
        (
            ["--backend", "gcp", "--cloud-pair", "aws:aws"],
            "the only ones --cloud-pair leaves: use --backend aws (or cloud), or --cloud-pair "
            "gcp:gcp",
        ),
        (
            ["--backend", "aws", "--regions", "aws:us-east-1,gcp:us-east4"],
            "--backend aws cannot host gcp:us-east4, named in --regions/--pairs: leave the gcp "
            "regions out, or use --backend cloud",
        ),
    ],
)
def test_a_backend_that_cannot_host_the_selection_gets_advice_that_fixes_it(
    catalog_file, args, advice
):
    line = one_line_error(run("plan", "--catalog", catalog_file, *args))
    assert advice in line


GCP_HOSTS_AWS_PAIRS = ["--backend", "gcp", "--cloud-pair", "aws:gcp"]


@pytest.mark.parametrize(
    ("args", "fixed"),
    [
        (["--clouds", "aws", "--backend", "gcp"], ["--clouds", "gcp", "--backend", "gcp"]),
        (["--clouds", "aws", "--backend", "gcp"], ["--clouds", "aws", "--backend", "aws"]),
        (GCP_HOSTS_AWS_PAIRS, ["--backend", "cloud", "--cloud-pair", "aws:gcp"]),
        (GCP_HOSTS_AWS_PAIRS, ["--backend", "gcp", "--cloud-pair", "gcp:gcp"]),
        (["--cloud-pair", "aws:aws", "--backend", "gcp"],
         ["--cloud-pair", "aws:aws", "--backend", "aws"]),
    ],
)  # fmt: skip
def test_following_the_advice_works(catalog_file, args, fixed):
    assert run("plan", "--catalog", catalog_file, *args).exit_code == 2
    result = run("plan", "--catalog", catalog_file, *fixed)
    assert result.exit_code == 0, result.output


def test_equally_close_region_names_are_all_suggested():
    line = one_line_error(run("plan", "--regions", "aws:us-est-1,gcp:us-east4"))
    assert line.endswith("(did you mean aws:us-east-1 or aws:us-west-1?)")


def test_sweep_budget_must_be_above_zero(tmp_path):
    for value, said in (
        ("0", "--budget-usd 0: must be above 0"),
        ("-1", "--budget-usd -1: must be above 0"),
        ("nan", "Invalid value for '--budget-usd': 'nan' is not a finite number"),
    ):
        result = CliRunner().invoke(
            main,
            ["sweep", "--regions", "aws:us-east-1,gcp:us-east4", "--budget-usd", value,
             "--plan-only", "--results", str(tmp_path)],
        )  # fmt: skip
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(f"error: {said}") and result.stderr.count("\n") == 1
        assert list(tmp_path.iterdir()) == []


# Big runs ask first ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "77 hosts and about 85 min of measuring"),  # a bare sweep: the whole catalog
        (["--max-regions", "17", "--tests", "ping"], "17 hosts"),
        (["--max-regions", "4", "--duration", "900", "--tests", "throughput"], "min of measuring"),
    ],
)
def test_a_big_local_sweep_needs_yes_off_a_terminal_and_makes_nothing(
    tmp_path, monkeypatch, args, said
):
    """A local sweep costs $0, so the budget never asked: size asks on its own."""
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(main, ["sweep", *args, "--results", "r"])
    assert out.exit_code == 2, out.output
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("error: this sweep starts ") and said in line and "--yes" in line
    assert list(tmp_path.iterdir()) == []
    planned = CliRunner().invoke(main, ["sweep", *args, "--results", "r", "--yes", "--plan-only"])
    assert planned.exit_code == 0, planned.output


def test_a_small_sweep_does_not_ask(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["sweep", "--max-regions", "16", "--tests", "ping", "--plan-only", "--results", "r"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output


@pytest.mark.parametrize(("answer", "code"), [("n\n", 2), ("y\n", 0)])
def test_a_big_sweep_asks_on_a_terminal(tmp_path, monkeypatch, answer, code):
    from orchestrator.cli import sweep as sweep_cli

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sweep_cli, "_on_terminal", lambda: True)
    args = ["sweep", "--max-regions", "17", "--tests", "ping", "--plan-only", "--results", "r"]
    out = CliRunner().invoke(main, args, input=answer)
    assert "this sweep starts 17 hosts; go ahead?" in out.output
    assert out.exit_code == code, out.output
    assert (tmp_path / "r").exists() == (code == 0)


# Counts ------------------------------------------------------------------------------


def test_a_count_of_one_is_said_in_the_singular(tmp_path, monkeypatch):
    from orchestrator.core.log import counted

    assert [counted(n, "round") for n in (0, 1, 2)] == ["0 rounds", "1 round", "2 rounds"]
    assert counted(1, "study", "studies") == "1 study" and counted(3, "study", "studies") == (
        "3 studies"
    )
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(
        main, ["plan", "--regions", "aws:us-east-1,gcp:us-east4", "--tests", "ping"]
    )
    assert out.exit_code == 0, out.output
    assert "2 regions" in out.output and not re.search(r"\b1 (rounds|regions|tests)\b", out.output)


def test_report_offers_the_filters_and_not_what_chooses_a_sweeps_regions():
    out = CliRunner().invoke(main, ["report", "--help"])
    assert out.exit_code == 0
    assert "--min-km" in out.output and "--cloud-pair" in out.output
    assert "--max-regions" not in out.output and "--spread" not in out.output
    assert "does not apply" not in out.output
