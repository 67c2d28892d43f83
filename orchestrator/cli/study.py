"""CLI commands: study tcp (what distance costs TCP and what wins it back); demo (an
emulated history with an injected change, what `make demo` runs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from orchestrator import study, text
from orchestrator.cli import options as opt
from orchestrator.core import info, say, warning
from orchestrator.study import DEFAULT_REPEATS, VARIANTS

# set per variant by the study: given by hand they would mean something else
PER_VARIANT = ("streams", "congestion", "window", "tests", "measures")


@opt.examples("interregion study tcp --backend local --regions aws:us-east-1,aws:eu-west-1 --yes")
@click.group("study")
def study_group() -> None:
    """Studies that measure variants of the tests, not only what a sweep measures."""


@opt.examples(
    "interregion study tcp --backend local --regions aws:us-east-1,aws:eu-west-1 --yes",
    "interregion study tcp --backend local --variants default,tuned,p4 --repeats 5 --yes",
)
@study_group.command("tcp")
@opt.selection_options
@opt.test_params_options
@opt.run_options
@opt.cloud_options
@click.option(
    "--variants", default=",".join(VARIANTS), show_default=True,
    help="Variants of the forward test, comma-separated (default is required: gains are "
    "measured from it).",
)  # fmt: skip
@click.option(
    "--repeats", type=int, default=DEFAULT_REPEATS, show_default=True,
    help="Times each variant runs per pair (at least 3: the study reports the spread).",
)  # fmt: skip
@click.option(
    "--seed", type=click.IntRange(min=0), default=None,
    help="Seed of the per-pair shuffled order (default: from the study id). Recorded.",
)  # fmt: skip
@click.option(
    "--max-buffer-bytes", type=click.IntRange(min=1), default=None,
    help="Largest tcp_rmem/tcp_wmem max the hosts may be given (default: the kernel's).",
)  # fmt: skip
@opt.ask_options
@opt.no_report_option
@opt.emulation_options
@opt.results_option
def tcp(**kwargs: Any) -> None:
    """What distance costs one TCP stream, and what wins it back, per pair.

    The variants and how they are run: docs/study-tcp.md. Results land in
    <results>/studies/<id>/ (study.csv, study.md).
    """
    from orchestrator.cli.sweep import announce

    opt.refuse_given(
        kwargs, PER_VARIANT, "{flag} with study tcp: the study sets it per variant (--variants)"
    )
    request = study.TcpStudyRequest(
        opt.request_from(kwargs, opt.emulation_from(kwargs)), kwargs["variants"], kwargs["repeats"],
        kwargs["seed"], kwargs["max_buffer_bytes"], kwargs["budget_usd"],
    )  # fmt: skip
    found = study.tcp_study(
        request, kwargs["results"], build_report=not kwargs["no_report"],
        announce=lambda s: announce(s.plan, s.estimate.tests, s.estimate.shape(),
                                    request.budget_usd, kwargs["yes"]),
        note=info, log=say,
    )  # fmt: skip
    info(f"study {found.parent.name} done: {found}")
    click.echo(str(found))


# refused in one line (the study sets them per variant), so not listed in its help either
for _param in tcp.params:
    if isinstance(_param, click.Option) and _param.name in PER_VARIANT:
        _param.hidden = True


@opt.examples(
    "interregion demo --out demo --replace",
    "interregion demo --regions aws:us-east-1,gcp:europe-west1,aws:ap-southeast-2 \\\n"
    "  --sweeps 5 --change-from 3 --min-runs 2",
)
@click.command("demo")
@click.option(
    "--out", type=opt.UserPath(file_okay=False), default=Path("demo"), show_default=True,
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

    'interregion changes' must find that change and nothing else (exit 1 otherwise;
    docs/history.md). Needs root; every emulation is removed at the end.
    """
    from orchestrator.demo import DemoRequest, make_demo

    outcome = make_demo(DemoRequest(out, sweeps, change_from, min_runs, regions, perturb,
                                    replace_out, not no_site), log=say, warn=warning)  # fmt: skip
    click.echo("\n".join(text.render_demo_outcome(outcome)))
    if outcome.problems:  # each said by the demo as a warning
        sys.exit(1)
    click.echo(text.demo_passed_line(outcome))


COMMANDS: list[click.Command] = [study_group, demo]
