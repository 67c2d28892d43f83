"""CLI commands: `schedule init|run|install|remove|list|export|reap` (scheduled sweeps).

Profiles live in schedules.yaml (orchestrator.schedule.profiles); one tick is
orchestrator.schedule.tick.run_tick; unit, cron and workflow files come from
orchestrator.schedule.timers.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from orchestrator.cli.jsonout import emit, json_option
from orchestrator.cli.pathopt import UserPath
from orchestrator.core import log, paths
from orchestrator.core.errors import UserError
from orchestrator.drivers.lock import results_lock
from orchestrator.schedule import ledger
from orchestrator.schedule.cadence import iso
from orchestrator.schedule.profiles import DEFAULT_FILE, Profile, get_profile, load_profiles
from orchestrator.sweep import abandoned


def _log(message: str) -> None:
    log.say(message)


def file_option(f: Any) -> Any:
    return click.option(
        "--file",
        "schedules",
        type=UserPath(dir_okay=False),
        default=paths.SCHEDULES,
        show_default=DEFAULT_FILE,
        help="The profiles file.",
    )(f)


def results_option(f: Any) -> Any:
    return click.option(
        "--results",
        type=UserPath(file_okay=False),
        default=paths.RESULTS,
        show_default=True,
        help="Folder holding the sweeps' results and the schedule ledger.",
    )(f)


def profile_named(schedules: Path, name: str) -> Profile:
    from orchestrator.model.catalog import load_catalog

    return get_profile(schedules, name, load_catalog())


def _estimate(profile: Profile) -> Any:
    from orchestrator.model.catalog import load_catalog
    from orchestrator.schedule.tick import plan_profile

    return plan_profile(profile, load_catalog()).estimate


def run_profile(
    profile: Profile,
    results: Path,
    trigger: str,
    wait_slip: bool = False,
    hourly_draw: bool = False,
) -> None:
    """One tick, its ledger line logged (a dated line: the cron log is made of them); exit 0
    also when skipped (the timer did its job), 1 when the sweep failed (so systemd and
    Actions show it)."""
    from orchestrator.schedule.tick import due_this_hour, run_tick, sleep_slip

    if hourly_draw and not due_this_hour(profile, datetime.now(UTC)):
        log.info(f"{profile.name}: not this tick's drawn hour; nothing to do")
        return
    if wait_slip:
        sleep_slip(profile, _log)
    record = run_tick(profile, results, trigger=trigger, log=_log)
    reason = f": {record['reason']}" if record.get("reason") else ""
    sweep = f" sweep {record['sweep_id']}" if record.get("sweep_id") else ""
    log.info(f"{profile.name}{sweep}: {record['outcome']}{reason}")
    if record["outcome"] == "failed":
        raise SystemExit(1)


@click.group()
def schedule() -> None:
    """Scheduled sweeps: profiles in schedules.yaml run by a timer, cron or GitHub Actions.

    'schedule init' writes a sample to start from.

    \b
    Example:
      interregion schedule init
      interregion schedule list
      interregion schedule install latency --dry-run
    """


@schedule.command("init")
@click.option("--force", is_flag=True, help="Replace the profiles file if there is one.")
@file_option
def init_command(force: bool, schedules: Path) -> None:
    """Write a sample profiles file (two profiles, latency and throughput, every key
    explained) to edit; an existing one is kept unless --force.

    \b
    Example:
      interregion schedule init
      interregion schedule list
    """
    from orchestrator.schedule.profiles import write_sample

    write_sample(schedules, force=force)
    click.echo(f"wrote {schedules}: edit it, then 'interregion schedule list'")


@schedule.command("run")
@click.argument("name")
@click.option("--wait-slip", is_flag=True, help="First wait a random time within the slip.")
@click.option(
    "--hourly-draw",
    is_flag=True,
    help="Called every hour: run only in the hour drawn for the latest tick (long slips).",
)
@file_option
@results_option
def run_command(
    name: str, wait_slip: bool, hourly_draw: bool, schedules: Path, results: Path
) -> None:
    """Run one tick of a profile: what a timer calls.

    Takes the results folder's lock (a tick that finds it held is recorded as
    skipped-locked), tears down sweeps a dead process left, checks the budgets,
    runs the sweep, report, site and publish target, applies retention, and
    appends one record to the ledger (results/schedule-ledger.jsonl).

    \b
    Example:
      interregion schedule run latency --results results/
    """
    if wait_slip and hourly_draw:
        raise UserError("--wait-slip and --hourly-draw both place the start: give one")
    run_profile(profile_named(schedules, name), results, "timer", wait_slip, hourly_draw)


@schedule.command("install")
@click.argument("name")
@click.option("--cron", is_flag=True, help="Write a cron.d entry instead of systemd units.")
@click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
@click.option(
    "--unit-dir",
    type=UserPath(file_okay=False),
    default=None,
    help="Where to write (default /etc/systemd/system, or /etc/cron.d with --cron).",
)
@click.option("--no-enable", is_flag=True, help="Write the units; do not run systemctl.")
@file_option
@results_option
def install_command(
    name: str,
    cron: bool,
    dry_run: bool,
    unit_dir: Path | None,
    no_enable: bool,
    schedules: Path,
    results: Path,
) -> None:
    """Install a profile's systemd timer (or cron entry) that runs 'schedule run NAME'.

    OnCalendar follows the cadence (UTC), RandomizedDelaySec the slip,
    Persistent=true runs a tick missed while the machine was off, and the
    start timeout is bound from the plan's estimate.

    \b
    Example:
      interregion schedule install latency --dry-run
      interregion schedule install throughput --cron
    """
    from orchestrator.schedule import timers

    profile = profile_named(schedules, name)
    files = timers.install_files(
        profile, _estimate(profile), schedules, results, cron=cron, unit_dir=unit_dir
    )
    if dry_run:
        for f in files:
            click.echo(f"# {f.path}\n{f.text}")
        return
    timers.write_files(files)
    for f in files:
        click.echo(f"wrote {f.path}")
    if not cron and not no_enable:
        timers.systemctl("daemon-reload")
        timers.systemctl("enable", "--now", f"{timers.unit_name(profile)}.timer")
        click.echo(f"enabled {timers.unit_name(profile)}.timer")


@schedule.command("remove")
@click.argument("name")
@click.option("--cron", is_flag=True, help="Remove the cron.d entry instead.")
@click.option(
    "--unit-dir",
    type=UserPath(file_okay=False),
    default=None,
    help="Where install wrote (default /etc/systemd/system, or /etc/cron.d with --cron).",
)
@click.option("--no-enable", is_flag=True, help="Delete the files only; do not run systemctl.")
@file_option
def remove_command(
    name: str, cron: bool, unit_dir: Path | None, no_enable: bool, schedules: Path
) -> None:
    """Undo 'schedule install': stop and disable the timer, delete its files. The units
    are found by the profile's name, also when the profile has left the profiles file.

    \b
    Example:
      interregion schedule remove latency
    """
    from orchestrator.schedule import timers
    from orchestrator.schedule.profiles import check_name

    check_name(name, str(schedules))
    files = timers.installed_files(name, unit_dir, cron)
    if not any(p.exists() for p in files):
        raise UserError(f"profile '{name}' is not installed in {files[0].parent}")
    if not cron and not no_enable:
        timers.systemctl("disable", "--now", f"{timers.unit_name(name)}.timer")
    for path in files:
        path.unlink(missing_ok=True)
        click.echo(f"removed {path}")
    if not cron and not no_enable:
        timers.systemctl("daemon-reload")


@schedule.command("list")
@file_option
@results_option
@json_option
def list_command(schedules: Path, results: Path, as_json: bool) -> None:
    """Each profile's next run, last outcome, month-to-date spend and missed ticks.

    A missed tick is a due time, since the profile's first ledger record, with
    no record at all: the timer never fired.

    \b
    Example:
      interregion schedule list --results results/
      interregion schedule list --json
    """
    now = datetime.now(UTC)
    records, bad = ledger.read_checked(results)
    if bad:
        lines = ", ".join(str(n) for n in bad[:5]) + (
            f" and {len(bad) - 5} more" if len(bad) > 5 else ""
        )
        log.warning(
            f"{ledger.ledger_path(results)}: line {lines} is not a ledger record "
            "(left out of the figures below)"
        )
    docs = []
    for name, profile in load_profiles(schedules).items():
        mine = ledger.of_profile(records, name)
        last = mine[-1] if mine else None
        nxt = profile.cadence.next_tick(now)
        spent = ledger.month_spend_usd(records, name, now)
        missed = ledger.missed_ticks(records, name, profile.cadence, profile.slip_s, now)
        docs.append(
            {
                "profile": name,
                "next_utc": iso(nxt) if nxt else None,
                "slip_s": profile.slip_s,
                "last_outcome": last.get("outcome") if last else None,
                "last_started_utc": last.get("started_utc") if last else None,
                "month_spend_usd": round(spent, 4),
                "budget_usd_month": profile.budget_usd_month,
                "missed_ticks": missed,
            }
        )
        if as_json:
            continue
        last_text = (
            f"last {last.get('outcome')} at {last.get('started_utc')}" if last else "no run yet"
        )
        click.echo(
            f"{name}: next {iso(nxt) if nxt else '-'} (+ up to {profile.slip_s} s slip); "
            f"{last_text}; month-to-date ${spent:.2f} of {profile.budget_usd_month:g}"
        )
        if missed:
            shown = ", ".join(missed[-5:])
            more = f" (last 5 of {len(missed)})" if len(missed) > 5 else ""
            click.echo(f"  missed {len(missed)} ticks that never ran{more}: {shown}")
    if as_json:
        emit(docs)


@schedule.command("export")
@click.argument("name")
@click.option(
    "--github-actions",
    "workflow",
    type=UserPath(dir_okay=False),
    required=True,
    help="Workflow file to write, e.g. .github/workflows/interregion-latency.yml.",
)
@click.option(
    "--repo", required=True, metavar="OWNER/NAME", help="The repository the trust policies name."
)
@click.option(
    "--state-bucket",
    default=None,
    metavar="URL",
    help="s3:// or gs:// bucket keeping the ledger and sweeps (default: <publish>/results).",
)
@click.option("--pages", is_flag=True, help="Also deploy the site to GitHub Pages.")
@click.option(
    "--results",
    default="results",
    show_default=True,
    help="The results folder on the runner, relative to the checkout.",
)
@file_option
def export_command(
    name: str,
    workflow: Path,
    repo: str,
    state_bucket: str | None,
    pages: bool,
    results: str,
    schedules: Path,
) -> None:
    """Write a GitHub Actions workflow that runs a profile's ticks with OIDC credentials.

    Off-the-hour cron, workflow_dispatch, one sweep at a time (never cancelled),
    results restored from and saved to a bucket, teardown and reap always.

    \b
    Example:
      interregion schedule export latency --repo acme/interregion \\
        --github-actions .github/workflows/interregion-latency.yml --state-bucket s3://acme-ir
    """
    from orchestrator.results import store
    from orchestrator.schedule import timers

    profile = profile_named(schedules, name)
    text = timers.github_workflow(
        profile,
        _estimate(profile),
        repo=repo,
        state_bucket=state_bucket,
        pages=pages,
        schedules=DEFAULT_FILE,
        results=results,
    )
    try:
        store.write_atomic(workflow, text)
    except OSError as e:
        raise UserError(
            f"--github-actions {workflow}: cannot write it ({e.strerror}): give a file in a "
            "folder you can write, e.g. .github/workflows/interregion-NAME.yml"
        ) from None
    click.echo(f"wrote {workflow}")


@schedule.command("reap")
@results_option
def reap_command(results: Path) -> None:
    """Tear down sweeps whose process died mid-run (the next tick does this too).

    \b
    Example:
      interregion schedule reap --results results/
    """
    with results_lock(results, trigger="reap"):
        reaped = abandoned.reap_abandoned(results, _log)
    click.echo(
        f"tore down {len(reaped)} abandoned sweeps" + (f": {', '.join(reaped)}" if reaped else "")
    )


COMMANDS: list[click.Command] = [schedule]
