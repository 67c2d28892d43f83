"""The package as a user installs it: a wheel built from the checkout, installed into a
fresh venv outside it (no extras), run from another folder. The catalog, stacks,
playbooks, public data and pricing come from the wheel; delayd is built from its shipped
source on first use; a cloud command names the extra it needs. The workflow that
`schedule export --github-actions` writes runs its own install and tick steps in that
venv, as a runner would."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from orchestrator.core import paths
from orchestrator.schedule import ledger

CHECKOUT = paths.ROOT
# what the build reads (pyproject.toml, setup.py, MANIFEST.in): copied, so the build's
# build/ folder never lands in the checkout
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "regions.yaml")
FOLDERS = ("orchestrator", "infra", "playbooks", "data")
# built files are copied too (the delayd binaries when `make setup` made them): the
# build must leave them out
NOT_COPIED = shutil.ignore_patterns("__pycache__")

pytestmark = pytest.mark.slow


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600):
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _clean_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    # a fresh cache: delayd is built from the wheel's source, not found from an earlier run
    return {**env, "CI": "true", "XDG_CACHE_HOME": str(tmp / "cache")}


def _copy_sources(to: Path) -> None:
    to.mkdir()
    for name in SOURCES:
        shutil.copy2(CHECKOUT / name, to / name)
    for name in FOLDERS:
        shutil.copytree(CHECKOUT / name, to / name, ignore=NOT_COPIED)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, the venv's interregion, a folder outside the checkout, env)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    _copy_sources(src)
    env = _clean_env(tmp)
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp / "dist"), "."],
        src,
        env,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp / "dist").glob("interregion-*.whl")
    made = _run([sys.executable, "-m", "venv", str(tmp / "venv")], tmp, env)
    assert made.returncode == 0, made.stderr
    pip = _run([str(tmp / "venv" / "bin" / "pip"), "install", "-q", str(wheel)], tmp, env)
    assert pip.returncode == 0, pip.stderr[-3000:]
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return wheel, tmp / "venv" / "bin" / "interregion", elsewhere, env


def test_the_wheel_holds_the_files_the_package_runs_on_and_nothing_built(installed):
    wheel = installed[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    bundle = "orchestrator/bundled/"
    for needed in (
        "regions.yaml",
        "infra/pricing.yaml",
        "infra/local/main.tf",
        "infra/aws/main.tf",
        "infra/aws/.terraform.lock.hcl",
        "infra/cloud/.terraform.lock.hcl",
        "infra/local/delayd/delayd.c",
        "infra/local/delayd/Makefile",
        "playbooks/ansible.cfg",
        "playbooks/files/ir_agent.py",
        "data/skyplane-latency-2022.csv",
    ):
        assert bundle + needed in names, needed
    assert not [n for n in names if n.endswith(("/delayd", "/delayd-asan")) or "tfstate" in n]
    assert not [n for n in names if "/.terraform/" in n]
    # what only tests and benches use stays out (testkit/ beside the package)
    assert not [n for n in names if n.startswith("testkit/") or "/synthetic.py" in n]
    assert not [n for n in names if n.endswith("/noise.py")]


def test_installed_regions_and_plan_run_from_another_folder(installed):
    _, interregion, elsewhere, env = installed
    regions = _run([str(interregion), "regions"], elsewhere, env)
    assert regions.returncode == 0, regions.stderr
    assert "aws:us-east-1" in regions.stdout and "gcp:europe-west1" in regions.stdout
    plan = _run([str(interregion), "plan", "--max-regions", "2"], elsewhere, env)
    assert plan.returncode == 0, plan.stderr
    assert "pricing.yaml" in plan.stdout  # the list prices were found
    where = _run(
        [
            str(interregion.parent / "python"),
            "-c",
            "import orchestrator; print(orchestrator.__file__)",
        ],
        elsewhere,
        env,
    )
    assert Path(where.stdout.strip()).is_relative_to(interregion.parent.parent)


def test_a_command_of_a_missing_extra_names_it_in_one_line(installed):
    _, interregion, elsewhere, env = installed
    out = _run([str(interregion), "reap", "--clouds", "aws", "--dry-run"], elsewhere, env)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "interregion[aws]" in out.stderr, out.stderr


@pytest.mark.root
def test_the_installed_command_sweeps_the_emulated_cloud(installed):
    _, interregion, elsewhere, env = installed
    args = ["sweep", "--max-regions", "2", "--pings", "5", "--duration", "1", "--omit", "0"]
    out = _run([str(interregion), *args, "--yes", "--results", "res"], elsewhere, env)
    assert out.returncode == 0, out.stderr[-3000:]
    (sweep_dir,) = [p for p in (elsewhere / "res").iterdir() if (p / "sweep.json").is_file()]
    with (sweep_dir / "measurements.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and {r["status"] for r in rows} == {"ok"}, rows
    # delayd was built from the wheel's source into the cache on first use
    assert list((Path(env["XDG_CACHE_HOME"]) / "interregion").glob("delayd-*/delayd"))


# The workflow's steps that reach what is not here, skipped by name. Steps that use an
# action are GitHub's own set-up and are never run: the checkout is the copied workspace,
# setup-python the fixture's venv, setup-terraform the terraform on PATH.
NOT_RUN_HERE = {
    "Restore the ledger, history and sweeps (runners keep nothing)": (
        "syncs from the results bucket with the aws CLI: no bucket is reachable here, and on "
        "a first tick it holds nothing"
    ),
    "Save the ledger and sweeps back": "syncs to the results bucket with the aws CLI",
}

TICK_PROFILE = """profiles:
  tiny:
    every: PT6H
    regions: aws:us-east-1,gcp:europe-west1
    pings: 10
    duration: 2
    omit: 1
    backend: local
    budget_usd: 1
    budget_usd_month: 10
"""


@pytest.mark.root
def test_the_exported_workflow_installs_and_ticks_on_the_emulated_cloud(
    installed, tmp_path_factory
):
    _, interregion, _, env = installed
    workspace = tmp_path_factory.mktemp("runner") / "workspace"  # what actions/checkout gives
    _copy_sources(workspace)
    (workspace / "schedules.yaml").write_text(TICK_PROFILE)
    venv_bin = interregion.parent
    runner_env = {
        **env,
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTIONS": "true",
        "PATH": f"{venv_bin}{os.pathsep}{env['PATH']}",  # as setup-python leaves it
    }
    workflow = workspace / ".github" / "workflows" / "interregion-tiny.yml"
    export = [
        str(interregion),
        "schedule",
        "export",
        "tiny",
        "--repo",
        "acme/interregion",
        "--state-bucket",
        "s3://acme-ir/state",
        "--github-actions",
        str(workflow),
    ]
    out = _run(export, workspace, runner_env)
    assert out.returncode == 0, out.stderr
    job = yaml.safe_load(workflow.read_text())["jobs"]["sweep"]
    runner_env.update({k: str(v) for k, v in job.get("env", {}).items()})
    ran = []
    for step in job["steps"]:
        if "uses" in step:
            continue
        assert "run" in step, step
        name = step["name"]
        if name in NOT_RUN_HERE:
            continue
        step_env = {**runner_env, **{k: str(v) for k, v in step.get("env", {}).items()}}
        done = _run(["bash", "-e", "-c", step["run"]], workspace, step_env, timeout=900)
        assert done.returncode == 0, f"{name}: {done.stderr[-3000:]}"
        if name == "Install interregion":  # from the workspace, over the fixture's wheel
            assert "Successfully installed interregion" in done.stdout, done.stdout[-2000:]
        ran.append(name)
    # the install and tick steps ran; any other step the workflow grows must be run or
    # named above with the reason it cannot run here
    assert ran == ["Install interregion", "Scheduled sweep", "Tear down and reap"], ran
    results = workspace / runner_env["RESULTS"]
    (record,) = ledger.read(results)
    assert record["outcome"] == "ok" and record["tests_ok"] == 2, record
    with (results / record["sweep_id"] / "measurements.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and {r["status"] for r in rows} == {"ok"}, rows
