"""What starts a profile's ticks: a systemd timer, a cron entry or a GitHub Actions workflow.

Pure functions return the files' text (so tests check them with systemd-analyze,
croniter and actionlint); `install` and `remove` write and delete them. Every form
runs the same command, `interregion schedule run NAME`, at the same UTC times
(orchestrator.schedule.cadence) with the same random slip.
"""

from __future__ import annotations

import math
import re
import shlex
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.core import (
    UserError,
    bucket_url,
    control_character_problem,
    github_repo,
    plain_text,
    yaml_string,
)
from orchestrator.model import backend_info, is_emulated
from orchestrator.plan import Estimate
from orchestrator.results import check_results_for_sweeps, write_atomic
from orchestrator.schedule.cadence import cron_line, on_calendar
from orchestrator.schedule.profiles import DEFAULT_FILE, Profile, check_name, profile_named

UNIT_DIR = Path("/etc/systemd/system")
CRON_DIR = Path("/etc/cron.d")
# a tick may run this long beyond its estimate before systemd stops it (SIGTERM: the
# sweep tears down), and teardown has this long after the stop signal
TIMEOUT_FACTOR = 2.0
TIMEOUT_MARGIN_S = 900
TEARDOWN_S = 900
ACTIONS_MAX_MINUTES = 360  # GitHub-hosted runners end a job after 6 hours
LONG_SLIP_S = 3600  # beyond this an Actions job does not sleep out its slip


def unit_name(profile: Profile | str) -> str:
    """The units' (and the cron file's) name: from the profile's name alone, so that
    `schedule remove NAME` finds them after the profile left the profiles file."""
    name = profile if isinstance(profile, str) else profile.name
    return f"interregion-{name}"


def start_timeout_s(estimate: Estimate) -> int:
    """A bound on one tick: the plan's time (setup and measuring) doubled, plus a margin."""
    return math.ceil((estimate.wall_s + estimate.setup_s) * TIMEOUT_FACTOR + TIMEOUT_MARGIN_S)


def run_command(profile: Profile, schedules: Path, results: Path, wait_slip: bool) -> list[str]:
    """The command a timer runs: this Python, absolute paths."""
    check_results_for_sweeps(results)
    for path in (sys.executable, schedules):
        problem = control_character_problem(str(path))
        if problem:
            raise UserError(f"{str(path)!r} {problem}")
    cmd = [sys.executable, "-m", "orchestrator", "schedule", "run", profile.name]
    cmd += ["--file", str(Path(schedules).resolve()), "--results", str(Path(results).resolve())]
    return cmd + (["--wait-slip"] if wait_slip else [])


_PLAIN = re.compile(r"[A-Za-z0-9_@+=:,./-]+")


def systemd_quote(arg: str) -> str:
    """One argument of an Exec= line: as is when plain, else in double quotes, with
    C-style escapes for `\\` and `"`, `%%` for a specifier's `%` and `$$` for a
    variable's `$` (systemd.service(5))."""
    if _PLAIN.fullmatch(arg):
        return arg
    text = arg.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("%", "%%").replace("$", "$$") + '"'


def systemd_path(path: Path) -> str:
    """A path setting (WorkingDirectory=): not unquoted by systemd, only specifiers expanded."""
    return str(path).replace("%", "%%")


def cron_command(args: list[str]) -> str:
    """A command line for cron: shell-quoted, with every `%` escaped, since cron turns an
    unescaped `%` into a newline (crontab(5)) and removes the backslash of `\\%`."""
    return shlex.join(args).replace("%", "\\%")


def systemd_units(
    profile: Profile, estimate: Estimate, schedules: Path, results: Path
) -> dict[str, str]:
    """{file name: text} of the service and its timer."""
    name = unit_name(profile)
    command = " ".join(systemd_quote(a) for a in run_command(profile, schedules, results, False))
    service = f"""# Written by 'interregion schedule install {profile.name}'.
[Unit]
Description=interregion scheduled sweep '{profile.name}'
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
WorkingDirectory={systemd_path(Path(schedules).resolve().parent)}
ExecStart={command}
# the estimate x {TIMEOUT_FACTOR:g} + {TIMEOUT_MARGIN_S} s; the stop signal makes it tear down
TimeoutStartSec={start_timeout_s(estimate)}
KillSignal=SIGTERM
KillMode=mixed
TimeoutStopSec={TEARDOWN_S}
"""
    timer = f"""# Written by 'interregion schedule install {profile.name}'.
[Unit]
Description=Timer of the interregion scheduled sweep '{profile.name}'

[Timer]
OnCalendar={on_calendar(profile.cadence)}
RandomizedDelaySec={profile.slip_s}
Persistent=true
AccuracySec=1s
Unit={name}.service

[Install]
WantedBy=timers.target
"""
    return {f"{name}.service": service, f"{name}.timer": timer}


def cron_entry(profile: Profile, schedules: Path, results: Path) -> str:
    """An /etc/cron.d file: the cadence (the machine's clock must be UTC, as cron has no
    time zone of its own), `root` and the command, which waits out its own slip."""
    command = run_command(profile, schedules, results, wait_slip=True)
    log = str(Path(results).resolve() / f"schedule-{profile.name}.log")
    folder = str(Path(schedules).resolve().parent)
    return (
        f"# Written by 'interregion schedule install {profile.name} --cron'. Times are UTC:\n"
        "# the machine's clock must be set to UTC.\n"
        f"{cron_line(profile.cadence)} root cd {cron_command([folder])} && "
        f"{cron_command(command)} >> {cron_command([log])} 2>&1\n"
    )


@dataclass(frozen=True)
class Written:
    path: Path
    text: str


def install_files(
    profile: Profile,
    estimate: Estimate,
    schedules: Path,
    results: Path,
    *,
    cron: bool,
    unit_dir: Path | None,
) -> list[Written]:
    """The files `install` writes, and where (nothing written here)."""
    if cron:
        folder = unit_dir or CRON_DIR
        return [Written(folder / unit_name(profile), cron_entry(profile, schedules, results))]
    folder = unit_dir or UNIT_DIR
    units = systemd_units(profile, estimate, schedules, results)
    return [Written(folder / n, t) for n, t in units.items()]


def write_files(files: list[Written]) -> None:
    """Each file whole (a temporary file renamed over it), over a regular file only."""
    for f in files:
        try:
            write_atomic(f.path, f.text)
            f.path.chmod(0o644)  # as units and cron.d files are, not mkstemp's 0600
        except OSError as e:
            raise UserError(
                f"{f.path}: cannot write it ({e.strerror}): give a folder you can write "
                "(--unit-dir), or run as root"
            ) from None


def systemctl(*args: str) -> None:
    try:
        done = subprocess.run(["systemctl", *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UserError(
            f"systemctl {' '.join(args)} failed ({e}): enable the timer by hand"
        ) from None
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise UserError(
            f"systemctl {' '.join(args)} failed: {why[-1] if why else done.returncode}: the unit "
            "files are written; enable the timer by hand, or pass --no-enable"
        )


def installed_files(profile: Profile | str, unit_dir: Path | None, cron: bool) -> list[Path]:
    name = unit_name(profile)
    if cron:
        return [(unit_dir or CRON_DIR) / name]
    return [(unit_dir or UNIT_DIR) / f"{name}.service", (unit_dir or UNIT_DIR) / f"{name}.timer"]


def install(
    profile: Profile,
    estimate: Estimate,
    schedules: Path,
    results: Path,
    *,
    cron: bool,
    unit_dir: Path | None,
    enable: bool,
    say: Callable[[str], None],
) -> list[Written]:
    """`schedule install NAME`: the profile's files written (`say` names each), then, for
    systemd units unless not `enable`, the timer enabled and started."""
    files = install_files(profile, estimate, schedules, results, cron=cron, unit_dir=unit_dir)
    write_files(files)
    for f in files:
        say(f"wrote {f.path}")
    if not cron and enable:
        systemctl("daemon-reload")
        systemctl("enable", "--now", f"{unit_name(profile)}.timer")
        say(f"enabled {unit_name(profile)}.timer")
    return files


def install_named(schedules: Path, name: str, results: Path, *, cron: bool,
                  unit_dir: Path | None, dry_run: bool, enable: bool,
                  say: Callable[[str], None]) -> list[Written]:  # fmt: skip
    """`schedule install NAME`: `install` of the profile named, its start bound from its
    plan's estimate; with `dry_run`, the files it would write (nothing written)."""
    from orchestrator.schedule.tick import profile_estimate

    profile = profile_named(schedules, name)
    estimate = profile_estimate(profile)
    if dry_run:
        return install_files(profile, estimate, schedules, results, cron=cron, unit_dir=unit_dir)
    return install(profile, estimate, schedules, results, cron=cron, unit_dir=unit_dir,
                   enable=enable, say=say)  # fmt: skip


def remove(
    name: str, unit_dir: Path | None, *, cron: bool, enable: bool, say: Callable[[str], None]
) -> list[Path]:
    """`schedule remove NAME`: the timer stopped and disabled (systemd, unless not
    `enable`), its files deleted (`say` names each); found by the profile's name alone."""
    files = installed_files(name, unit_dir, cron)
    if not any(p.exists() for p in files):
        raise UserError(f"profile '{name}' is not installed in {files[0].parent}")
    if not cron and enable:
        systemctl("disable", "--now", f"{unit_name(name)}.timer")
    for path in files:
        path.unlink(missing_ok=True)
        say(f"removed {path}")
    if not cron and enable:
        systemctl("daemon-reload")
    return files


def export_workflow(
    profile: Profile,
    estimate: Estimate,
    workflow: Path,
    *,
    repo: str,
    state_bucket: str | None,
    pages: bool,
    schedules: str,
    results: str,
) -> None:
    """`schedule export NAME`: the GitHub Actions workflow written to `workflow`."""
    text = github_workflow(
        profile,
        estimate,
        repo=repo,
        state_bucket=state_bucket,
        pages=pages,
        schedules=schedules,
        results=results,
    )
    try:
        write_atomic(workflow, text)
    except OSError as e:
        raise UserError(
            f"--github-actions {workflow}: cannot write it ({e.strerror}): give a file in a "
            "folder you can write, e.g. .github/workflows/interregion-NAME.yml"
        ) from None


def remove_named(schedules: Path, name: str, unit_dir: Path | None, *, cron: bool,
                 enable: bool, say: Callable[[str], None]) -> list[Path]:  # fmt: skip
    """`schedule remove NAME`: `remove`, once the name is one a profile can have (it is
    refused as the profiles file `schedules` would refuse it; the profile itself may have
    left the file)."""
    return remove(check_name(name, str(schedules)), unit_dir, cron=cron, enable=enable, say=say)


def export_named(schedules: Path, name: str, workflow: Path, *, repo: str,
                 state_bucket: str | None, pages: bool, results: str) -> None:  # fmt: skip
    """`schedule export NAME`: `export_workflow` of the profile named (the workflow reads
    the profiles file at its default place in the checkout)."""
    from orchestrator.schedule.tick import profile_estimate

    profile = profile_named(schedules, name)
    export_workflow(profile, profile_estimate(profile), workflow, repo=repo,
                    state_bucket=state_bucket, pages=pages, schedules=DEFAULT_FILE,
                    results=results)  # fmt: skip


# ---- GitHub Actions ------------------------------------------------------------------


def off_the_hour_minute(name: str) -> int:
    """A minute in 7..52, fixed per profile, away from :00 and :30: GitHub delays and
    drops scheduled runs most at the top of the hour."""
    minute = 7 + zlib.crc32(name.encode()) % 46
    return minute + 1 if minute in (15, 30, 45) else minute


# Third-party actions pinned by full commit SHA (a tag can be moved to other code), the
# release in a comment. Each SHA is the commit its release tag names upstream.
ACTIONS: dict[str, tuple[str, str]] = {
    "actions/checkout": ("11bd71901bbe5b1630ceea73d27597364c9af683", "v4.2.2"),
    "actions/setup-python": ("a26af69be951a213d495a4c3e4e4022e16d87065", "v5.6.0"),
    "hashicorp/setup-terraform": ("b9cd54a3c349d3f38e8881555d616ced269862dd", "v3.1.2"),
    "aws-actions/configure-aws-credentials": (
        "e3dd6a429d7300a6a4c196c26e071d42e0343502",
        "v4.0.2",
    ),
    "google-github-actions/auth": ("6fc4af4b145ae7821d527454aa9bd537d1f2dc5f", "v2.1.7"),
    "google-github-actions/setup-gcloud": ("6189d56e4096ee891640bb02ac264be376592d6a", "v2.1.2"),
    "actions/upload-artifact": ("ea165f8d65b6e75b540449e92b4886f43607fa02", "v4.6.2"),
    "actions/upload-pages-artifact": ("56afc609e74202658d3ffba0e8f6dda462b719fa", "v3.0.1"),
    "actions/deploy-pages": ("d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e", "v4.0.5"),
}


def _uses(action: str) -> str:
    sha, release = ACTIONS[action]
    return f"{action}@{sha} # {release}"


def _sync_commands(url: str) -> tuple[str, str, str]:
    """(setup step, restore command, save command) for the bucket holding the results.
    The URL reaches the commands as $STATE_URL (the job's env), never as their text."""
    if url.startswith("s3://"):
        excludes = "--exclude '*/state/*' --exclude .sweep.lock"
        return (
            "",
            'aws s3 sync "$STATE_URL" "$RESULTS" --only-show-errors',
            f'aws s3 sync "$RESULTS" "$STATE_URL" {excludes} --only-show-errors',
        )
    excludes = "--exclude='.*/state/.*|[.]sweep[.]lock$'"
    return (
        f"      - uses: {_uses('google-github-actions/setup-gcloud')}\n",
        'gcloud storage rsync -r "$STATE_URL" "$RESULTS"',
        f'gcloud storage rsync -r "$RESULTS" "$STATE_URL" {excludes}',
    )


def github_workflow(
    profile: Profile,
    estimate: Estimate,
    *,
    repo: str,
    state_bucket: str | None,
    pages: bool,
    schedules: str = "schedules.yaml",
    results: str = "results",
) -> str:
    """A workflow that runs one tick on GitHub's runners with short-lived OIDC credentials."""
    # every value from the user reaches the file checked by its grammar and quoted as a
    # YAML string, and the run: lines read them from the job's env, never as their text
    if state_bucket is not None:
        if "://" not in state_bucket:
            raise UserError(
                f"--state-bucket {state_bucket}: runners keep nothing, so the ledger and "
                "sweeps must live in a bucket: give s3://BUCKET/PREFIX or gs://BUCKET/PREFIX"
            )
        bucket = bucket_url(state_bucket, "--state-bucket")
    elif profile.publish and "://" in profile.publish:
        bucket = bucket_url(profile.publish, f"profile '{profile.name}', publish:")
        bucket += "/results"
    else:
        raise UserError(
            f"profile '{profile.name}': runners keep nothing between runs: give --state-bucket "
            "s3://BUCKET/PREFIX (or gs://...) to keep the ledger and sweeps in"
        )
    setup_sync, restore, save = _sync_commands(bucket)
    owner_repo = github_repo(repo)
    results = plain_text(results, "--results")
    schedules = plain_text(schedules, "--file")
    minute = off_the_hour_minute(profile.name)
    if profile.slip_s > LONG_SLIP_S:
        # too long to sleep through in one job: wake every hour, run in the drawn hour
        cron, start, waited_s = f"{minute} * * * *", "--hourly-draw", 0
    else:
        cron = cron_line(profile.cadence, minute=minute)
        start, waited_s = "--wait-slip", profile.slip_s
    minutes = math.ceil((start_timeout_s(estimate) + waited_s + TEARDOWN_S) / 60)
    if minutes > ACTIONS_MAX_MINUTES:
        raise UserError(
            f"profile '{profile.name}': a tick may take {minutes} min, beyond the "
            f"{ACTIONS_MAX_MINUTES} min GitHub's hosted runners allow a job: select fewer "
            "regions or shorter tests, or use 'schedule install' on a machine of your own"
        )
    site = plain_text(profile.site or "site", f"profile '{profile.name}', site:")
    clouds = () if is_emulated(profile.backend) else backend_info(profile.backend).clouds
    aws = "aws" in clouds or bucket.startswith("s3://")
    gcp = "gcp" in clouds or bucket.startswith("gs://")
    creds = ""
    if aws:
        creds += f"""      - name: AWS credentials (OIDC, no stored keys)
        uses: {_uses("aws-actions/configure-aws-credentials")}
"""
        creds += """        with:
          role-to-assume: ${{ vars.INTERREGION_AWS_ROLE_ARN }}
          aws-region: us-east-1
          role-session-name: interregion-${{ github.run_id }}
"""
    if gcp:
        creds += f"""      - name: GCP credentials (workload identity federation, no keys)
        uses: {_uses("google-github-actions/auth")}
"""
        creds += """        with:
          workload_identity_provider: ${{ vars.INTERREGION_GCP_WIF_PROVIDER }}
          service_account: ${{ vars.INTERREGION_GCP_SERVICE_ACCOUNT }}
"""
    # the cloud SDKs are extras, installed for what interregion itself reaches: the
    # backend's clouds and a bucket it publishes to (the results bucket is synced by the
    # runner's own aws/gcloud tools)
    publish = profile.publish or ""
    needs = {"aws": "aws" in clouds or publish.startswith("s3://")}
    needs["gcp"] = "gcp" in clouds or publish.startswith("gs://")
    extras = ",".join(name for name, wanted in needs.items() if wanted)
    install = f".[{extras}]" if extras else "."
    reap_clouds = {"aws": "aws", "gcp": "gcp", "cloud": "aws,gcp"}.get(profile.backend)
    reap = f"\n          interregion reap --clouds {reap_clouds}" if reap_clouds else ""
    pages_steps = ""
    pages_job = ""
    permissions = "  id-token: write  # OIDC tokens for the clouds\n  contents: read\n"
    if pages:
        pages_steps = f"""      - name: Site for GitHub Pages
        if: always()
        uses: {_uses("actions/upload-pages-artifact")}
        with:
          path: {yaml_string(site)}
"""
        pages_job = """
  pages:
    needs: sweep
    runs-on: ubuntu-latest
    permissions:
      pages: write
      id-token: write
    environment:
      name: github-pages
      url: ${{ steps.deploy.outputs.page_url }}
    steps:
      - id: deploy
"""
        pages_job += f"        uses: {_uses('actions/deploy-pages')}\n"
    return f"""# Written by 'interregion schedule export {profile.name} --github-actions'.
#
# Credentials are short-lived OIDC tokens, never stored keys. Trust only this
# repository's default branch:
#   AWS: an IAM role (its ARN in the repository variable INTERREGION_AWS_ROLE_ARN) whose
#     trust policy allows sts:AssumeRoleWithWebIdentity for the provider
#     token.actions.githubusercontent.com with the conditions
#       StringEquals token.actions.githubusercontent.com:aud = sts.amazonaws.com
#       StringEquals token.actions.githubusercontent.com:sub = repo:{owner_repo}:ref:refs/heads/main
#   GCP: a workload identity pool provider (INTERREGION_GCP_WIF_PROVIDER, issuer
#     https://token.actions.githubusercontent.com) with the attribute condition
#       assertion.repository == '{owner_repo}' && assertion.ref == 'refs/heads/main'
#     allowed to impersonate INTERREGION_GCP_SERVICE_ACCOUNT
#     (roles/iam.workloadIdentityUser on principalSet://.../attribute.repository/{owner_repo}).
# The results bucket ({bucket}) should be private: it holds the ledger and every sweep
# (never state/, which stays on the runner and is torn down with it).
name: interregion {profile.name}

on:
  schedule:
    - cron: "{cron}"  # UTC, off the hour
  workflow_dispatch: {{}}

# one sweep at a time; a new tick waits and never cancels a running sweep
concurrency:
  group: interregion-sweep
  cancel-in-progress: false

permissions:
{permissions}
jobs:
  sweep:
    runs-on: ubuntu-latest
    timeout-minutes: {minutes}
    env:
      RESULTS: {yaml_string(results)}
      SCHEDULES: {yaml_string(schedules)}
      STATE_URL: {yaml_string(bucket)}
    steps:
      - uses: {_uses("actions/checkout")}
      - uses: {_uses("actions/setup-python")}
        with:
          python-version: "3.11"
      - uses: {_uses("hashicorp/setup-terraform")}
        with:
          terraform_wrapper: false
      - name: Install interregion
        run: pip install {shlex.quote(install)}
{creds}{setup_sync}      - name: Restore the ledger, history and sweeps (runners keep nothing)
        run: mkdir -p "$RESULTS" && {restore}
      - name: Scheduled sweep
        run: >-
          interregion schedule run {profile.name} --file "$SCHEDULES"
          --results "$RESULTS" {start}
      - name: Tear down and reap
        if: always()
        run: |
          interregion schedule reap --results "$RESULTS"{reap}
      - name: Save the ledger and sweeps back
        if: always()
        run: {save}
      - name: Results as an artifact
        if: always()
        uses: {_uses("actions/upload-artifact")}
        with:
          name: results-{profile.name}-${{{{ github.run_id }}}}
          path: |
            ${{{{ env.RESULTS }}}}
            !${{{{ env.RESULTS }}}}/*/state
          if-no-files-found: warn
{pages_steps}{pages_job}"""
