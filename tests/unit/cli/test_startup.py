"""The CLI starts without the heavy libraries: the cloud SDKs, plotly, geopy, numpy and
duckdb are imported only by the commands that use them, geopy by those that compute
distances (importing them all cost every command, even --help, ~3 s). Checked on
sys.modules of a fresh interpreter, never on time."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest

from orchestrator.cli import COMMAND_MODULES
from orchestrator.core import paths

HEAVY = (
    "boto3",
    "botocore",
    "google",
    "grpc",
    "plotly",
    "geopy",
    "kaleido",
    "moto",
    "numpy",
    "duckdb",
)


def loaded_after(code: str, whole: bool = False) -> set[str]:
    """Top-level packages a fresh interpreter holds after running `code` (every module's
    whole name with `whole`)."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(paths.ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=paths.ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    last = done.stdout.strip().splitlines()[-1]
    return {name if whole else name.split(".")[0] for name in json.loads(last)}


def test_importing_the_cli_loads_no_heavy_library():
    loaded = loaded_after("import orchestrator.cli")
    assert "orchestrator" in loaded and "click" in loaded  # the probe works
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "needs"),
    [
        (["--help"], set()),
        (["regions", "--json"], set()),
        (["plan", "--max-regions", "8", "--json"], {"geopy"}),  # the pairs' distances
    ],
)
def test_local_commands_load_only_the_heavy_library_they_use(args, needs):
    code = (
        "from orchestrator.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit as e:\n    assert not e.code, e.code"
    )
    heavy = loaded_after(code) & set(HEAVY)
    assert heavy == needs, sorted(heavy)


def test_the_probe_sees_a_heavy_library_when_one_is_imported():
    # the check above could not pass by a broken probe
    assert "boto3" in loaded_after("import orchestrator.clouds.aws")


def test_each_command_is_in_the_module_its_name_is_looked_up_in():
    for module in set(COMMAND_MODULES.values()):
        commands = importlib.import_module(f"orchestrator.cli.{module}").COMMANDS
        names = {name for name, of in COMMAND_MODULES.items() if of == module}
        assert {c.name for c in commands} == names, module


@pytest.mark.parametrize(
    ("args", "modules"),
    [
        (["report", "--help"], {"report"}),
        (["site", "--help"], {"report"}),
        (["regions", "--help"], {"plan"}),
        (["--help"], set(COMMAND_MODULES.values())),  # every command listed
    ],
)
def test_a_command_imports_only_its_own_command_module(args, modules):
    # the others' imports (croniter, the emulator, the history's numpy) are not its cost
    code = (
        "from orchestrator.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit as e:\n    assert not e.code, e.code"
    )
    loaded = loaded_after(code, whole=True)
    commands = {n.split(".")[2] for n in loaded if n.startswith("orchestrator.cli.")}
    assert commands - {"options"} == modules


# the defaults the commands' help shows: modules of constants (and the standard library)
CONSTANTS = {"orchestrator.mesh.defaults", "orchestrator.emulator.state"}


@pytest.mark.parametrize("command", [["report"], ["history"], ["advise"], ["matrix"], []])
def test_a_help_loads_no_sweep_machinery(command):
    # cli/options.py imports what a new sweep is made of (sweep.launch and all it imports)
    # only when a command reads its options into one; `interregion --help` loads every
    # command's module, and those take their defaults from modules of constants
    code = (
        "from orchestrator.cli import main\n"
        f"try:\n    main([*{command!r}, '--help'])\nexcept SystemExit as e:\n    assert not e.code"
    )
    loaded = loaded_after(code, whole=True)
    assert "orchestrator.cli.options" in loaded  # the probe sees the shared options
    running = ("orchestrator.sweep.", "orchestrator.emulator.", "orchestrator.mesh.")
    assert not {n for n in loaded if n.startswith(running)} - CONSTANTS, command
    if not command:  # every command module loaded, and no more of the planner than constants
        assert {"orchestrator.cli.sweep", "orchestrator.cli.emulator"} <= loaded
        assert not {"orchestrator.plan.sweep_plan", "orchestrator.plan.selection"} & loaded
