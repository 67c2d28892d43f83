"""CLI commands: study tcp (what distance costs TCP and what wins it back)."""

from __future__ import annotations

from typing import Any

import click

from orchestrator.cli import options as opt
from orchestrator.cli.sweep import announce, budget_option, emulation_options
from orchestrator.core import info, say
from orchestrator.study import (
    DEFAULT_REPEATS,
    STUDIES_DIR,
    VARIANTS,
    TcpStudyRequest,
    tcp_study,
)

# set per variant by the study: given by hand they would mean something else
PER_VARIANT = ("streams", "congestion", "window", "tests", "measures")


@click.group()
def study() -> None:
    """Studies that measure variants of the tests, not only what a sweep measures.

    \b
    Example:
      interregion study tcp --backend local --regions aws:us-east-1,aws:eu-west-1 --yes
    """


@study.command("tcp")
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
@click.option("--yes", is_flag=True, help="Do not ask, even above the budget.")
@budget_option
@click.option("--no-report", is_flag=True, help="Do not build the report at the end.")
@emulation_options("Seed of the emulated cloud's run-to-run variation (local). Recorded.")
@opt.results_option(
    f"Folder holding the sweeps' results, as for every command; the study lands apart from "
    f"the sweeps, in <results>/{STUDIES_DIR}/<id>/."
)
def tcp(**kwargs: Any) -> None:
    """What distance costs one TCP stream, and what wins it back, per pair.

    For each selected pair (forward test only), every variant runs --repeats times in an
    order shuffled per pair, in the same exclusive rounds as a sweep: default host
    settings; tuned buffers (tcp_rmem/tcp_wmem max at 2 x the bandwidth-delay product at
    line rate from the idle RTT of the ping phase, set on both hosts for that test and
    restored after, also on interrupts); -P 4 and -P 8; CUBIC and BBR. Results land in
    <results>/studies/<id>/ (study.csv, study.md), apart from the sweeps.

    \b
    Example:
      interregion study tcp --backend local --regions aws:us-east-1,aws:eu-west-1 --yes
      interregion study tcp --backend local --variants default,tuned,p4 --repeats 5 --yes
    """
    opt.refuse_given(
        kwargs, PER_VARIANT, "{flag} with study tcp: the study sets it per variant (--variants)"
    )
    request = TcpStudyRequest(
        opt.request_from(kwargs, opt.emulation_from(kwargs)), kwargs["variants"], kwargs["repeats"],
        kwargs["seed"], kwargs["max_buffer_bytes"], kwargs["budget_usd"],
    )  # fmt: skip
    found = tcp_study(
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

COMMANDS: list[click.Command] = [study]
