"""CLI commands: study tcp (what distance costs TCP and what wins it back)."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from orchestrator.cli.emulator import perturb_options
from orchestrator.cli.options import (
    FINITE,
    cloud_options,
    request_from,
    run_options,
    selection_options,
    test_params_options,
)
from orchestrator.cli.pathopt import UserPath
from orchestrator.cli.sweep import announce, emulation_from
from orchestrator.core import log, paths
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import load_catalog
from orchestrator.results import store
from orchestrator.results.record import StudyRecord
from orchestrator.study.estimate import study_plan
from orchestrator.study.plan import DEFAULT_REPEATS, VARIANTS, check_repeats, parse_variants
from orchestrator.study.report import STUDIES_DIR, build_study_report
from orchestrator.study.run import STUDY_FILE, check_plan_buffers, measure_study
from orchestrator.sweep import launch

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
@selection_options
@test_params_options
@run_options
@cloud_options
@click.option(
    "--variants",
    default=",".join(VARIANTS),
    show_default=True,
    help="Variants of the forward test, comma-separated (default is required: gains are "
    "measured from it).",
)
@click.option(
    "--repeats",
    type=int,
    default=DEFAULT_REPEATS,
    show_default=True,
    help="Times each variant runs per pair (at least 3: the study reports the spread).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the per-pair shuffled order (default: from the study id). Recorded.",
)
@click.option(
    "--max-buffer-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Largest tcp_rmem/tcp_wmem max the hosts may be given (default: the kernel's).",
)
@click.option("--yes", is_flag=True, help="Do not ask, even above the budget.")
@click.option("--budget-usd", type=FINITE, default=5.0, show_default=True,
              help="Ask before provisioning when the estimated cost is above this.")  # fmt: skip
@click.option("--no-report", is_flag=True, help="Do not build the report at the end.")
@perturb_options
@click.option(
    "--emulation-seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the emulated cloud's run-to-run variation (local). Recorded.",
)
@click.option(
    "--results",
    type=UserPath(file_okay=False),
    default=paths.RESULTS,
    show_default=True,
    help=f"Folder holding the sweeps' results, as for every command; the study lands "
    f"apart from the sweeps, in <results>/{STUDIES_DIR}/<id>/.",
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
    ctx = click.get_current_context()
    for name in PER_VARIANT:
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT):
            flag = "--" + name
            raise UserError(f"{flag} with study tcp: the study sets it per variant (--variants)")
    variants = parse_variants(kwargs["variants"])
    repeats = check_repeats(kwargs["repeats"])
    if not kwargs["budget_usd"] > 0:  # also NaN: a budget nothing is within
        raise UserError(f"--budget-usd {kwargs['budget_usd']:g}: must be above 0")
    request = request_from(kwargs, emulation_from(kwargs))
    plan = launch.plan_for(request, log.info)
    if any(v.tuned for v in variants):
        check_plan_buffers(
            plan.selection.pairs,
            plan.backend,
            request.run.emulated_type,
            kwargs["max_buffer_bytes"],
        )
    # the budget question reads what the study runs, not what a sweep of it would
    plan, found = study_plan(plan, load_catalog(), variants, repeats)
    announce(plan, kwargs, found.tests, found.shape())
    options = launch.cloud_options_for(request, kwargs["results"])
    spec, emulation = request.selection, request.emulation
    studies: Path = kwargs["results"] / STUDIES_DIR
    store.check_results_for_sweeps(studies)
    say = log.say
    with launch.locked(studies, trigger="study", log=say) as held:
        run = launch.create(plan, spec, studies, cloud_options=options, emulation=emulation)
        seed = kwargs["seed"] if kwargs["seed"] is not None else zlib.crc32(run.id.encode())
        run.record.study = StudyRecord.new(
            kind="tcp",
            variants=[v.name for v in variants],
            repeats=repeats,
            seed=seed,
            max_buffer_bytes=kwargs["max_buffer_bytes"],
            estimate=found.to_dict(),
        )
        run.save()
        log.info(f"study {run.id}: {run.dir}")
        launch.start(
            run,
            held,
            build_report=not kwargs["no_report"],
            measure_stage=measure_study,
            report_stage=build_study_report,
            history=False,
        )
    log.info(f"study {run.id} done: {run.dir / STUDY_FILE}")
    click.echo(str(run.dir / STUDY_FILE))


# refused in one line (the study sets them per variant), so not listed in its help either
for _param in tcp.params:
    if isinstance(_param, click.Option) and _param.name in PER_VARIANT:
        _param.hidden = True

COMMANDS: list[click.Command] = [study]
