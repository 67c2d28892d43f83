"""The `interregion` console script: option parsing only.

Each command group lives in its own module and exposes `COMMANDS`, a list of
click commands; the functions they call live in the library and are what the
tests call directly.
"""

from __future__ import annotations

import sys

import click

from orchestrator import __version__
from orchestrator.cli import (
    advise,
    cloud,
    demo,
    emulator,
    history,
    plan,
    report,
    schedule,
    study,
    sweep,
)
from orchestrator.cli.signals import stop_on_signals
from orchestrator.errors import UserError


class _Main(click.Group):
    def invoke(self, ctx: click.Context) -> object:
        try:
            with stop_on_signals():
                return super().invoke(ctx)
        except UserError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="interregion")
def main() -> None:
    """Measure latency and throughput between AWS and GCP regions.

    \b
    Example:
      interregion plan --clouds aws,gcp --max-regions 8
    """


for _module in (plan, emulator, sweep, report, history, cloud, schedule, advise, demo, study):
    for _command in _module.COMMANDS:
        main.add_command(_command)
plan.regions.add_command(cloud.regions_sync_command)
