"""Properties of `plan` over generated option values, through the real CLI.

Whatever the values: never a traceback, exit 0 (a plan) or 2 (one error line on
stderr, nothing on stdout). The small fixture catalog keeps each run a few ms.
"""

from __future__ import annotations

import json
import math

import pytest
import yaml
from click.testing import CliRunner
from fixture_regions import CATALOG_DATA
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from orchestrator.cli import main

# hypothesis drives the whole CLI: a minute or so; `make unit` skips it
pytestmark = pytest.mark.slow

KEYS = [f"{r['cloud']}:{r['id']}" for r in CATALOG_DATA["regions"]]
NAMES = st.sampled_from([*KEYS, "aws:us-est-1", "azure:x", "us-east-1", "", " ", ":", "/"])
JUNK = st.text(alphabet="aAgGmMkK0123456789.,:/- _-e+", max_size=12)


def _lists(item: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(item, max_size=4).map(",".join) | JUNK


# Per option: mostly a value in its sensible range (so that command lines get past the
# parser and the other options and reach the plan), else an extreme (huge, tiny, nan,
# inf) or junk.
EXTREME = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e308", "1e-300", "1e309", "-0", "0.0", "nan", "inf", "-inf", "9" * 30]),
)
BAD = st.sampled_from(["", "5s", "1,5", "0x10", "--json"])


def _number(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(valid, valid, valid, EXTREME, BAD)


def _ints(low: int, high: int) -> st.SearchStrategy[str]:
    return _number(st.integers(min_value=low, max_value=high).map(str))


def _floats(low: float, high: float) -> st.SearchStrategy[str]:
    return _number(st.floats(min_value=low, max_value=high).map(repr))


OPTIONS: dict[str, st.SearchStrategy[str]] = {
    "--clouds": _lists(st.sampled_from(["aws", "gcp", "AWS", "azure", ""])),
    "--regions": _lists(NAMES),
    "--exclude": _lists(NAMES),
    "--pairs": _lists(st.tuples(NAMES, NAMES).map("/".join)),
    "--cloud-pair": st.sampled_from(["aws:gcp", "gcp:aws", "aws:aws", "gcp:gcp", "aws", ""]) | JUNK,
    "--min-km": _floats(0, 5000),
    "--max-km": _floats(3000, 20000),
    "--max-regions": _ints(1, 20),
    "--pings": _ints(0, 100),
    "--ping-interval": _floats(0, 2),
    "--duration": _ints(0, 30),
    "--omit": _ints(0, 5),
    "--streams": _ints(0, 8),
    "--window": st.sampled_from(["4M", "4m", "256k", "512M", "513M", "0", "1t", "1.5G"]) | JUNK,
    "--congestion": st.sampled_from(["cubic", "bbr", "Cubic!", ""]) | JUNK,
    "--backend": st.sampled_from(["local", "aws", "gcp", "cloud", "azure"]),
    "--max-concurrent": _ints(0, 10),
    "--round-overhead": _floats(0, 10),
}
FLAGS = ["--no-opt-in", "--sequential", "--json"]


@pytest.fixture(scope="module")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("catalog") / "regions.yaml"
    path.write_text(yaml.safe_dump(CATALOG_DATA))
    return str(path)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    # A small selection first, most of the time: the whole catalog only sometimes.
    args: list[str] = draw(st.sampled_from([["--max-regions", "3"], ["--clouds", "gcp"], []]))
    for name in draw(st.lists(st.sampled_from(sorted(OPTIONS)), max_size=4, unique=True)):
        args += [name, draw(OPTIONS[name])]
    for flag in FLAGS:
        if draw(st.booleans()):
            args.append(flag)
    return args


@example(args=["--max-regions", "3", "--ping-interval", "1e308"])
@example(args=["--max-regions", "3", "--ping-interval", "1e308", "--json"])
@example(args=["--max-regions", "3", "--round-overhead", "nan"])
@example(args=["--max-regions", "3", "--round-overhead", "1e308", "--json"])
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(args=command_lines())
def test_plan_never_tracebacks_and_exits_0_or_2(catalog_file, args):
    result = CliRunner().invoke(main, ["plan", "--catalog", catalog_file, *args])
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), (args, result.exception)
    assert "Traceback" not in result.output, (args, result.output)
    assert result.exit_code in (0, 2), (args, result.exit_code, result.output)
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        # ours and click's own (a value that is not a number) alike: "error: ..." alone
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
        assert result.stdout == "", (args, result.stdout)
    elif "--json" in args:
        plan = json.loads(result.stdout)
        assert len(plan["regions"]) >= 2 and plan["pairs"]
        assert math.isfinite(plan["estimate"]["wall_s"]) and plan["estimate"]["wall_s"] > 0
