"""The CLI starts without the heavy libraries: the cloud SDKs, plotly and geopy are
imported only by the commands that use them, geopy by those that compute distances
(importing them all cost every command, even --help, ~3 s). Checked on sys.modules of a
fresh interpreter, never on time."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from orchestrator.core import paths

HEAVY = ("boto3", "botocore", "google", "grpc", "plotly", "geopy", "kaleido", "moto")


def loaded_after(code: str) -> set[str]:
    """Top-level packages a fresh interpreter holds after running `code`."""
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
    return {name.split(".")[0] for name in json.loads(last)}


def test_importing_the_cli_loads_no_heavy_library():
    loaded = loaded_after("import orchestrator.cli")
    assert "orchestrator" in loaded and "click" in loaded  # the probe works
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


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
