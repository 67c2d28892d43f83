"""CLI commands: `schedule init|run|install|remove|list|export|reap` (scheduled sweeps)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from orchestrator import schedule, text
from orchestrator.cli import options as opt
from orchestrator.core import info, say
from orchestrator.core import warning as log_warning

_NAME = click.argument("name")


def run_profile(schedules: Path, name: str, results: Path, trigger: str, **how: bool) -> None:
    """One tick of the profile named, its ledger line logged (a dated line: the cron log is
    made of them); exit 0 also when skipped (the timer did its job), 1 when the sweep
    failed (so systemd and Actions show it)."""
    record = schedule.run_named(schedules, name, results, trigger, log=say, **how)
    info(text.tick_line(name, record))
    if record is not None and record["outcome"] == "failed":
        raise SystemExit(1)


@opt.examples(
    "interregion schedule init",
    "interregion schedule list",
    "interregion schedule install latency --dry-run",
)
@click.group("schedule")
def schedule_group() -> None:
    """Scheduled sweeps: profiles in schedules.yaml run by a timer, cron or GitHub Actions."""


@opt.examples("interregion schedule init", "interregion schedule list")
@schedule_group.command("init")
@click.option("--force", is_flag=True, help="Replace the profiles file if there is one.")
@opt.file_option
def init_command(force: bool, schedules: Path) -> None:
    """Write a sample profiles file to edit: two profiles, every key explained."""
    schedule.write_sample(schedules, force=force)
    click.echo(f"wrote {schedules}: edit it, then 'interregion schedule list'")


@opt.examples("interregion schedule run latency --results results/")
@schedule_group.command("run")
@_NAME
@click.option("--wait-slip", is_flag=True, help="First wait a random time within the slip.")
@click.option("--hourly-draw", is_flag=True, help="Called every hour: run only in the hour drawn "
              "for the latest tick (long slips).")  # fmt: skip
@opt.file_option
@opt.results_option
def run_command(name: str, schedules: Path, results: Path, **how: bool) -> None:
    """Run one tick of a profile: what a timer calls. Its steps and the ledger line it
    appends: docs/scheduled-sweeps.md.
    """
    run_profile(schedules, name, results, "timer", **how)


def _timer_options(f: opt.F) -> opt.F:
    return opt.stack(f, [
        click.option("--cron", is_flag=True, help="A cron.d entry instead of systemd units."),
        click.option("--unit-dir", type=opt.UserPath(file_okay=False), default=None,
                     help="The units' folder (default /etc/systemd/system, or /etc/cron.d with "
                     "--cron)."),
        click.option("--no-enable", is_flag=True, help="Only the files: do not run systemctl."),
    ])  # fmt: skip


@opt.examples(
    "interregion schedule install latency --dry-run",
    "interregion schedule install throughput --cron",
)
@schedule_group.command("install")
@_NAME
@_timer_options
@click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
@opt.file_option
@opt.results_option
def install_command(name: str, schedules: Path, results: Path, no_enable: bool, dry_run: bool,
                    **where: Any) -> None:  # fmt: skip
    """Install a profile's systemd timer (or cron entry) that runs 'schedule run NAME'."""
    files = schedule.install_named(schedules, name, results, dry_run=dry_run,
                                   enable=not no_enable, say=click.echo, **where)  # fmt: skip
    if dry_run:
        click.echo("\n".join(text.written_lines(files)))


@opt.examples("interregion schedule remove latency")
@schedule_group.command("remove")
@_NAME
@_timer_options
@opt.file_option
def remove_command(
    name: str, cron: bool, unit_dir: Path | None, no_enable: bool, schedules: Path
) -> None:
    """Undo 'schedule install': stop and disable the timer, delete its files. The units
    are found by the profile's name, also when the profile has left the profiles file.
    """
    schedule.remove_named(
        schedules, name, unit_dir, cron=cron, enable=not no_enable, say=click.echo
    )


@opt.examples("interregion schedule list --results results/", "interregion schedule list --json")
@schedule_group.command("list")
@opt.file_option
@opt.results_option
@opt.json_option
def list_command(schedules: Path, results: Path, as_json: bool) -> None:
    """Each profile's next run, last outcome, month-to-date spend and missed ticks."""
    found = schedule.schedule_status(schedules, results, datetime.now(UTC), log_warning)
    opt.echo_listing(found.to_json(), as_json, text.schedule_status_lines(found))


@opt.examples(
    "interregion schedule export latency --repo acme/interregion \\\n"
    "  --github-actions .github/workflows/interregion-latency.yml --state-bucket s3://acme-ir"
)
@schedule_group.command("export")
@_NAME
@click.option("--github-actions", "workflow", type=opt.UserPath(dir_okay=False), required=True,
              help="Workflow file to write, e.g. .github/workflows/interregion-latency.yml.",
              )  # fmt: skip
@click.option("--repo", required=True, metavar="OWNER/NAME",
              help="The repository the trust policies name.")  # fmt: skip
@click.option("--state-bucket", default=None, metavar="URL",
              help="s3:// or gs:// bucket keeping the ledger and sweeps (default: "
              "<publish>/results).")  # fmt: skip
@click.option("--pages", is_flag=True, help="Also deploy the site to GitHub Pages.")
@click.option("--results", default="results", show_default=True,
              help="The results folder on the runner, relative to the checkout.")  # fmt: skip
@opt.file_option
def export_command(name: str, workflow: Path, schedules: Path, **how: Any) -> None:
    """Write a GitHub Actions workflow that runs a profile's ticks with OIDC credentials."""
    schedule.export_named(schedules, name, workflow, **how)
    click.echo(f"wrote {workflow}")


@opt.examples("interregion schedule reap --results results/")
@schedule_group.command("reap")
@opt.results_option
def reap_command(results: Path) -> None:
    """Tear down sweeps whose process died mid-run (the next tick does this too)."""
    click.echo(text.reaped_sweeps_line(schedule.reap_abandoned(results, say)))


COMMANDS: list[click.Command] = [schedule_group]
