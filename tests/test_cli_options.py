"""Option values through the real CLI: bad input is one line on stderr and exit 2."""

from __future__ import annotations

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


def test_a_list_with_empty_items_keeps_the_others(catalog_file):
    result = run("plan", "--catalog", catalog_file, "--regions", "aws:us-east-1,,gcp:us-east4,")
    assert result.exit_code == 0, result.output
    assert "2 regions" in result.output
