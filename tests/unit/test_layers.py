"""The package layout: layers in one direction, public faces pinned (issue 18).

`make lint` runs tests/check_layers.py on the checkout; these tests show that it
passes on the tree as it is and fails on a planted upward import, and pin each
package's `__all__`: a change to a public face is a change to this file too.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
import check_layers  # noqa: E402

PUBLIC = {
    "advise": ["model", "sources", "spread", "transfer"],
    "cli": ["main"],
    "clouds": [
        "aws", "gcp", "labels", "launch", "leftovers", "options", "preflight", "reap",
        "stacks", "sync",
    ],
    "core": [
        "durations", "errors", "geo", "grammar", "log", "outdir", "paths", "stats", "textfile",
        "times",
    ],
    "drivers": ["ansible", "interrupts", "keys", "lock", "processes", "progress", "terraform"],
    "emulator": [
        "LOCAL_MAX_CONCURRENT", "EmulationSpec", "EmulationStatus", "HostSpec", "PathSpec",
        "UpRequest", "UpResult", "allowance", "bring_up", "bring_up_spec", "bringup",
        "delayd_binary", "down", "hosts_of", "net", "perturb", "reap", "require_root",
        "reserve_subnet", "running_spec", "set_perturbations", "spec", "stack", "state",
        "status", "up", "variation",
    ],
    "exchange": ["exporter", "importer", "public_data"],
    "history": [
        "change_report",
        "changes",
        "continents",
        "fingerprint",
        "histogram",
        "judgments",
        "metrics",
        "notify",
        "store",
        "views",
        "windows",
    ],
    "mesh": ["bins", "collect", "cost", "detect", "openmetrics", "run", "serve", "views"],
    "model": ["backends", "catalog", "hosts"],
    "netmodel": ["model", "routes"],
    "plan": [
        "allowance", "option_names", "options", "ping_timing", "pricing", "ramp", "rounds",
        "selection", "spend", "sweep_plan", "tuning",
    ],
    "report": ["analyze", "build", "cache", "charts", "make", "uncertainty"],
    "results": [
        "collect", "flags", "limiter", "parse", "ping_rows", "record", "schema", "stalls", "store",
        "tiers",
    ],
    "schedule": ["cadence", "ledger", "profiles", "retention", "status", "tick", "timers"],
    "publish": ["upload"],
    "site": ["build", "history_pages", "html"],
    "text": [
        "advice_table", "change_lines", "cloud_lines", "demo_outcome", "emulator_lines",
        "matrix_table", "pair_series", "plan_table", "report_tables", "schedule_lines",
        "sweep_lines", "terminal",
    ],
    "study": ["check", "estimate", "plan", "report", "run", "tcp"],
    "sweep": [
        "abandoned", "backends", "events", "hostcheck", "inventory", "launch", "measure",
        "pingphase", "provision", "record", "restore", "runner", "sentinels", "stages",
    ],
}  # fmt: skip


def packages() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "orchestrator").glob("*/__init__.py"))


@pytest.mark.slow
def test_the_tree_keeps_its_layers():
    assert [str(p) for p in check_layers.check(ROOT)] == []


def test_every_package_has_a_layer_and_a_pinned_face():
    assert sorted(PUBLIC) == packages()
    layered = {pkg for layer in check_layers.LAYERS for pkg in layer}
    assert set(packages()) <= layered


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_face_is_pinned(package):
    module = importlib.import_module(f"orchestrator.{package}")
    assert sorted(module.__all__) == sorted(PUBLIC[package])
    assert module.__doc__ and "Public API" in module.__doc__
    for name in module.__all__:  # every public name is there (submodules import on demand)
        assert hasattr(module, name) or importlib.import_module(f"orchestrator.{package}.{name}")


def test_at_most_six_modules_beside_the_packages():
    flat = [
        p.name
        for p in (ROOT / "orchestrator").glob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    ]
    assert len(flat) <= 6, flat


def test_no_package_holds_more_than_about_thirteen_modules():
    sizes = {
        pkg: len([p for p in (ROOT / "orchestrator" / pkg).glob("*.py") if p.stem != "__init__"])
        for pkg in packages()
    }
    assert max(sizes.values()) <= 14, sizes


def plant(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the package with `line` added to `module` (a path under orchestrator/)."""
    shutil.copytree(ROOT / "orchestrator", tmp_path / "orchestrator")
    target = tmp_path / "orchestrator" / module
    target.write_text(target.read_text() + f"\n\ndef _planted() -> None:\n    {line}\n")
    return tmp_path


def run_check(root: Path) -> subprocess.CompletedProcess[str]:
    script = ROOT / "tests" / "check_layers.py"
    return subprocess.run(
        [sys.executable, str(script), str(root)], capture_output=True, text=True, timeout=60
    )


def test_the_lint_step_passes_on_the_tree():
    done = run_check(ROOT)
    assert done.returncode == 0, done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "line", "said"),
    [
        # an upward import inside a function is still one
        ("core/stats.py", "from orchestrator.sweep import runner", "upward import: core ->"),
        ("plan/sweep_plan.py", "import orchestrator.emulator", "upward import: plan ->"),
        ("report/charts.py", "from orchestrator.history import store", "sibling import"),
        ("schedule/tick.py", "from orchestrator.cli import main", "only entry points may"),
        ("site/build.py", "from orchestrator.sweep.stages import _hosts_doc", "private"),
        ("sweep/stages.py", "from orchestrator.report.nowhere import x", "not in"),
        # the library takes typed requests: click stays in the CLI
        ("plan/options.py", "import click", "only orchestrator.cli may"),
        ("schedule/profiles.py", "from click import Choice", "only orchestrator.cli may"),
        # the CLI parses, calls one use case, renders: no data library, query or child process
        ("cli/plan.py", "import numpy as np", "imports numpy: the CLI calls a use case"),
        ("cli/report.py", "import duckdb", "imports duckdb: the CLI calls a use case"),
        ("cli/schedule.py", "from subprocess import run", "imports subprocess: the CLI"),
        ("cli/advise.py", "import sqlite3", "imports sqlite3: the CLI calls a use case"),
        ("cli/study.py", "return 'SELECT rtt_ms FROM tests WHERE src = ?'", "SQL in the CLI"),
    ],
)
def test_the_lint_step_fails_on_a_planted_import(tmp_path, module, line, said):
    done = run_check(plant(tmp_path, module, line))
    assert done.returncode == 1
    assert said in done.stdout and module.replace("/", ".").removesuffix(".py") in done.stdout


def test_make_lint_runs_the_layer_check():
    makefile = (ROOT / "Makefile").read_text()
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "tests/check_layers.py" in lint
