"""CLI command: `interregion demo` (what `make demo` runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from orchestrator.cli.pathopt import UserPath
from orchestrator.core import say, warning


@click.command("demo")
@click.option(
    "--out", type=UserPath(file_okay=False), default=Path("demo"), show_default=True,
    help="Folder for the demo's results/ and site/ (new, empty, or an earlier demo's).",
)  # fmt: skip
@click.option("--replace", "replace_out", is_flag=True, help="Replace an earlier demo in --out.")
@click.option("--regions", default="", help="Comma-separated regions [default: 12 of both clouds].")
@click.option("--sweeps", type=click.IntRange(min=3), default=11, show_default=True)
@click.option("--change-from", type=click.IntRange(min=2), default=9, show_default=True,
              help="The first sweep with the injected change (1-based).")  # fmt: skip
@click.option(
    "--perturb", default="", metavar="TARGET,KEY=VALUE",
    help="The injected change, a pair [default: aws:us-east-1/gcp:europe-west1,delay_ms=10].",
)  # fmt: skip
@click.option(
    "--min-runs", type=click.IntRange(min=2), default=8, show_default=True,
    help="Change detection's minimum of comparable runs (interregion changes --min-runs).",
)  # fmt: skip
@click.option("--no-site", is_flag=True, help="Do not build the site at the end.")
def demo(
    out: Path, replace_out: bool, regions: str, sweeps: int, change_from: int, perturb: str,
    min_runs: int, no_site: bool,
) -> None:  # fmt: skip
    """Build an emulated history with one injected route change, then check and show it.

    Latency-only sweeps of the same regions on the emulated cloud, each with its own
    recorded seed (per-pair variation, loss episodes); from --change-from on, one pair
    gets extra delay. Every sweep joins the history store; 'interregion changes' must
    then find that change and confirm nothing else (exit 1 otherwise); then the site.
    Needs root (network namespaces, iptables). Every emulation is removed at the end, also
    on Ctrl-C.

    \b
    Example:
      interregion demo --out demo --replace
      interregion demo --regions aws:us-east-1,gcp:europe-west1,aws:ap-southeast-2 \\
          --sweeps 5 --change-from 3 --min-runs 2
    """
    from orchestrator.demo import DemoRequest, make_demo
    from orchestrator.text import demo_passed_line, render_demo_outcome

    outcome = make_demo(DemoRequest(out, sweeps, change_from, min_runs, regions, perturb,
                                    replace_out, not no_site), log=say, warn=warning)  # fmt: skip
    click.echo("\n".join(render_demo_outcome(outcome)))
    if outcome.problems:  # each said by the demo as a warning
        sys.exit(1)
    click.echo(demo_passed_line(outcome))


COMMANDS: list[click.Command] = [demo]
