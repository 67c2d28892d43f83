"""The package as a user installs it: a wheel built from the checkout, installed into a
fresh venv outside it (no extras), run from another folder. The catalog, stacks,
playbooks, public data and pricing come from the wheel; delayd is built from its shipped
source on first use; a cloud command names the extra it needs. The workflow that
`schedule export --github-actions` writes runs its own install and tick steps in that
venv, as a runner would."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from orchestrator.cli import main
from orchestrator.core import paths
from orchestrator.schedule import ledger

CHECKOUT = paths.ROOT
# what the build reads (pyproject.toml, setup.py, MANIFEST.in): copied, so the build's
# build/ folder never lands in the checkout
SOURCES = (
    "pyproject.toml",
    "setup.py",
    "MANIFEST.in",
    "README.md",
    "regions.yaml",
    "schedules.yaml",
)
FOLDERS = ("orchestrator", "infra", "playbooks", "data", "docs")
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
        "schedules.yaml",  # the sample `schedule init` writes
        "docs/scheduled-sweeps.md",  # the pages `interregion --help` names
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
    try:
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
    finally:  # the fixture's wheel back: the workspace's copy bundles its tiny profile
        pip = interregion.parent / "pip"
        back = [str(pip), "install", "-q", "--no-deps", "--force-reinstall", str(installed[0])]
        assert _run(back, workspace, env).returncode == 0
    # the install and tick steps ran; any other step the workflow grows must be run or
    # named above with the reason it cannot run here
    assert ran == ["Install interregion", "Scheduled sweep", "Tear down and reap"], ran
    results = workspace / runner_env["RESULTS"]
    (record,) = ledger.read(results)
    assert record["outcome"] == "ok" and record["tests_ok"] == 2, record
    with (results / record["sweep_id"] / "measurements.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 and {r["status"] for r in rows} == {"ok"}, rows


# ---- every help example, as written, from the wheel in an empty folder ---------------------


def _walk(command, path=()):
    import click

    yield path, command
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _walk(sub, (*path, name))


def help_examples() -> list[str]:
    """Every command line of every command's Example(s) block, as its --help shows it (a
    line ending in a backslash joined with the next), in the order of the commands: the
    group's own in its help, the others' in their epilog (cli.options.examples)."""
    found: list[str] = []
    for _path, command in _walk(main):
        shown = command.epilog if "Example" in (command.epilog or "") else command.help
        lines = (shown or "").splitlines()
        starts = [i for i, line in enumerate(lines) if line.strip() in ("Example:", "Examples:")]
        if not starts:
            continue
        text = "\n".join(line.strip() for line in lines[starts[-1] + 1 :])
        for line in re.sub(r"\\\n", " ", text).splitlines():
            if line.strip() and line not in found:
                found.append(" ".join(line.split()))
    return found


# A new user's first steps, run before the others: they make what the others read.
FIRST = (
    "interregion schedule init",
    "interregion history convert --from skyplane builtin --out s.csv",
    "interregion history import --source skyplane --date 2022-11 s.csv",
)
# Examples the empty folder cannot satisfy, each with why and the start of the one-line
# error it must end in (exit 2, nothing else printed on stderr). An example changed or
# added is run and must succeed, or be named here.
_AWS_EXTRA = ("needs a cloud: this wheel is installed without extras", "boto3 is not installed")
_NO_SWEEP = ("names a sweep of the user's own: none in an empty folder", "unknown sweep id")
_CLOUD_PROFILE = (
    "the sample's profiles sweep the clouds: without extras, the profile check names the extra",
    "profile 'latency', key 'backend': boto3 is not installed",
)
FAILS_HERE: dict[str, tuple[str, str]] = {
    "interregion preflight --clouds aws,gcp --max-regions 8 --gcp-project my-project": _AWS_EXTRA,
    "interregion preflight --regions aws:us-east-1,gcp:us-east4 --json": _AWS_EXTRA,
    "interregion reap --dry-run": _AWS_EXTRA,
    "interregion reap --dry-run --json": _AWS_EXTRA,
    "interregion reap --older-than 2h": _AWS_EXTRA,
    "interregion reap --sweep 20261122T0130Z-3fa2": _AWS_EXTRA,
    "interregion regions sync --clouds aws": _AWS_EXTRA,
    "interregion regions sync --json": _AWS_EXTRA,
    "interregion sweep --backend aws --clouds aws --ttl 2h --yes": _AWS_EXTRA,
    "interregion sweep --backend cloud --pin-from 20261122T0130Z-3fa2 --yes": _AWS_EXTRA,
    "interregion schedule install latency --dry-run": _CLOUD_PROFILE,
    "interregion schedule install throughput --cron": _CLOUD_PROFILE,
    "interregion schedule run latency --results results/": _CLOUD_PROFILE,
    "interregion sweep --profile latency": _CLOUD_PROFILE,
    "interregion schedule export latency --repo acme/interregion --github-actions "
    ".github/workflows/interregion-latency.yml --state-bucket s3://acme-ir": _CLOUD_PROFILE,
    "interregion schedule remove latency": (
        "undoes an install, which needs the clouds' extra here",
        "profile 'latency' is not installed",
    ),
    "interregion matrix --metric rtt --stat p90 --window 1W --source emulated": (
        "the emulated source is the user's own sweeps: the store holds imports alone",
        "--source emulated: not in the store",
    ),
    "interregion history ingest --sweep 20261122T0130Z-3fa2": _NO_SWEEP,
    "interregion sweep --resume 20261122T0130Z-3fa2 --yes": _NO_SWEEP,
    "interregion provision --sweep 20261122T0130Z-3fa2": _NO_SWEEP,
    "interregion provision --sweep 20261123T0900Z-77aa --pin-from 20261122T0130Z-3fa2": _NO_SWEEP,
    "interregion prepare --sweep 20261122T0130Z-3fa2": _NO_SWEEP,
    "interregion prepare --sweep 20261122T0130Z-3fa2 --forks 77": _NO_SWEEP,
    "interregion measure --sweep 20261122T0130Z-3fa2": _NO_SWEEP,
    "interregion collect --sweep 20261122T0130Z-3fa2": _NO_SWEEP,
    "interregion teardown --sweep 20261122T0130Z-3fa2": _NO_SWEEP,
    "interregion report --sweep 20261122T0130Z-3fa2": (
        "names a sweep of the user's own: none in an empty folder",
        "no sweep '20261122T0130Z-3fa2'",
    ),
    "interregion report --input theirs.csv --out /tmp/theirs-report --include-flagged": (
        "reads the user's own CSV",
        "Invalid value for '--input': File 'theirs.csv' does not exist",
    ),
    "interregion report --all --cloud-pair aws:gcp --min-km 1000": (
        "reports the folder's sweeps: an empty folder has none (imports are no sweeps)",
        "no sweeps under",
    ),
    "interregion site --out site/ && xdg-open site/index.html": (
        "builds the site of the folder's sweeps: none here",
        "no sweeps under",
    ),
}
for _mesh in ("interregion mesh status", "interregion mesh status --json", "interregion mesh down"):
    FAILS_HERE[_mesh] = ("a mesh of the user's own: none in an empty folder", "no mesh under")
FAILS_HERE["interregion mesh matrix --window 1H"] = (
    "a mesh of the user's own: the store holds no mesh data",
    "no mesh data in the store under",
)
for _to in ("/var/www/interregion", "s3://my-bucket/interregion", "gs://my-bucket/interregion"):
    FAILS_HERE[f"interregion publish --site site/ --to {_to}"] = (
        "publishes the site 'site' builds: none here",
        "Invalid value for '--site'",
    )
# Examples that run minutes as root on the emulated cloud (a whole sweep, a study, the
# demo): not run here; the e2e tests named run the same commands' paths. The emulator's
# own examples (seconds each) run above.
TOO_LONG = {
    "interregion demo --out demo --replace": "tests/e2e/test_demo.py",
    "interregion demo --regions aws:us-east-1,gcp:europe-west1,aws:ap-southeast-2 --sweeps 5 "
    "--change-from 3 --min-runs 2": "tests/e2e/test_demo.py",
    "interregion sweep --backend local --yes --max-regions 8": "tests/e2e/test_sweep.py",
    "interregion sweep --tests ping --yes --perturb aws:us-east-1/gcp:europe-west1,delay_ms=10": (
        "tests/e2e/test_sweep.py"
    ),
    "interregion study tcp --backend local --regions aws:us-east-1,aws:eu-west-1 --yes": (
        "tests/e2e/test_study.py"
    ),
    "interregion study tcp --backend local --variants default,tuned,p4 --repeats 5 --yes": (
        "tests/e2e/test_study.py"
    ),
    # the mesh's controller runs in the foreground until `mesh down`
    "interregion mesh up --max-regions 8 --yes": "tests/e2e/test_mesh.py",
    "interregion mesh up --regions aws:us-east-1,gcp:europe-west1,aws:ap-northeast-1": (
        "tests/e2e/test_mesh.py"
    ),
    "interregion mesh up --max-regions 8 --interval 30 --yes": "tests/e2e/test_mesh.py",
    # serves /metrics in the foreground until interrupted
    "interregion metrics --serve 127.0.0.1:9109": "tests/unit/mesh/test_serve.py",
}


# the emulations the emulator's examples bring up (`--id`, else its default `local`):
# the examples take them down themselves; the test again whatever happened
EMULATIONS = ("local", "demo")


def test_the_examples_are_collected_from_every_commands_help():
    examples = help_examples()
    assert len(examples) > 60 and all(
        e.startswith(("interregion ", "INTERREGION_")) for e in examples
    )
    assert "interregion schedule init" in examples and not [e for e in examples if "sudo" in e]
    # every example the lists name is still in a help: none is kept for a line gone
    named = set(FIRST) | set(FAILS_HERE) | set(TOO_LONG)
    assert named <= set(examples), sorted(named - set(examples))


@pytest.mark.root  # the emulator's status and reap read /run/interregion as root
def test_every_help_example_runs_as_written_from_the_wheel_in_an_empty_folder(
    installed, tmp_path_factory
):
    _, interregion, _, env = installed
    empty = tmp_path_factory.mktemp("new-user") / "empty folder"
    empty.mkdir()
    run_env = {**env, "PATH": f"{interregion.parent}{os.pathsep}{env['PATH']}"}
    for name in ("INTERREGION_RESULTS", "INTERREGION_SCHEDULES", "INTERREGION_NOTIFY_URL"):
        run_env.pop(name, None)
    examples = help_examples()
    ordered = [*FIRST, *(e for e in examples if e not in FIRST and e not in TOO_LONG)]
    problems = []
    try:
        for example in ordered:
            done = _run(["bash", "-c", example], empty, run_env, timeout=300)
            said = done.stderr.strip().splitlines()
            if example in FAILS_HERE:
                why, error = FAILS_HERE[example]
                if done.returncode != 2 or len(said) != 1 or error not in said[0]:
                    problems.append(f"{example} ({why}): rc {done.returncode}: {said[-3:]}")
            elif done.returncode != 0:
                problems.append(f"{example}: rc {done.returncode}: {said[-3:]}")
    finally:  # the emulations the examples bring up by name (an example may have failed)
        for name in EMULATIONS:
            _run([str(interregion), "emulator", "down", "--id", name], empty, run_env)
    assert not problems, "\n".join(problems)
    # what the first steps made is there, in the folder the user started in
    assert (empty / "schedules.yaml").read_text() == (CHECKOUT / "schedules.yaml").read_text()
    assert (empty / "results" / "history.duckdb").is_file() and (empty / "s.csv").is_file()
