"""`interregion study tcp`'s use case, in the two steps the budget question sits between.

TcpStudyRequest       the sweep request it selects and plans from (SweepRequest), its
                      variants, repeats, order seed, largest buffer, budget
plan_tcp_study(req)   -> TcpStudyPlan: the request checked, the sweep plan, the
                      study's buffers checked against it and its own estimate
run_tcp_study(...)    the study's folder and record made under <results>/studies,
                      then run (provision ... teardown, its report) -> its study.csv
tcp_study(...)        `interregion study tcp`: planned, `announce`d (the budget question,
                      which may refuse it), then run -> its study.csv
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.core import UserError
from orchestrator.model import load_catalog
from orchestrator.plan import Plan
from orchestrator.results import StudyRecord, check_results_for_sweeps
from orchestrator.study.estimate import StudyEstimate, study_plan
from orchestrator.study.findings import STUDIES_DIR, build_study_report
from orchestrator.study.run import STUDY_FILE, check_plan_buffers, measure_study
from orchestrator.study.variants import (
    DEFAULT_REPEATS,
    VARIANTS,
    Variant,
    check_repeats,
    parse_variants,
)
from orchestrator.sweep import SweepRequest, cloud_options_for, create, locked, plan_for, start

Log = Callable[[str], None]


@dataclass(frozen=True)
class TcpStudyRequest:
    sweep: SweepRequest
    variants: str = ",".join(VARIANTS)  # as given: checked by variants.parse_variants
    repeats: int = DEFAULT_REPEATS
    seed: int | None = None  # None: from the study id
    max_buffer_bytes: int | None = None  # None: the kernel's
    budget_usd: float = 5.0


@dataclass(frozen=True)
class TcpStudyPlan:
    """What the study runs: the sweep plan with the study's estimate, the estimate
    itself, the variants and repeats; what the budget question reads."""

    request: TcpStudyRequest
    plan: Plan
    estimate: StudyEstimate
    variants: tuple[Variant, ...]
    repeats: int


def plan_tcp_study(request: TcpStudyRequest, note: Log) -> TcpStudyPlan:
    """The study's plan and estimate; nothing written. `note` hears the selection's notes."""
    variants = tuple(parse_variants(request.variants))
    repeats = check_repeats(request.repeats)
    if not request.budget_usd > 0:  # also NaN: a budget nothing is within
        raise UserError(f"--budget-usd {request.budget_usd:g}: must be above 0")
    plan = plan_for(request.sweep, note)
    if any(v.tuned for v in variants):
        check_plan_buffers(
            plan.selection.pairs,
            plan.backend,
            request.sweep.run.emulated_type,
            request.max_buffer_bytes,
        )
    # the budget question reads what the study runs, not what a sweep of it would
    plan, found = study_plan(plan, load_catalog(), variants, repeats)
    return TcpStudyPlan(request, plan, found, variants, repeats)


def run_tcp_study(study: TcpStudyPlan, results: Path, *, build_report: bool, log: Log) -> Path:
    """Run the planned study under <results>/studies/<id>/; its study.csv is returned."""
    request = study.request
    options = cloud_options_for(request.sweep, results)
    studies = results / STUDIES_DIR
    check_results_for_sweeps(studies)
    with locked(studies, trigger="study", log=log) as held:
        run = create(
            study.plan,
            request.sweep.selection,
            studies,
            cloud_options=options,
            emulation=request.sweep.emulation,
        )
        seed = request.seed if request.seed is not None else zlib.crc32(run.id.encode())
        run.record.study = StudyRecord.new(
            kind="tcp",
            variants=[v.name for v in study.variants],
            repeats=study.repeats,
            seed=seed,
            max_buffer_bytes=request.max_buffer_bytes,
            estimate=study.estimate.to_dict(),
        )
        run.save()
        log(f"study {run.id}: {run.dir}")
        start(
            run,
            held,
            build_report=build_report,
            measure_stage=measure_study,
            report_stage=build_study_report,
            history=False,
        )
    return run.dir / STUDY_FILE


def tcp_study(
    request: TcpStudyRequest,
    results: Path,
    *,
    build_report: bool,
    announce: Callable[[TcpStudyPlan], None],
    note: Log,
    log: Log,
) -> Path:
    """`interregion study tcp`'s use case: the plan (`note` hears the selection's notes),
    handed to `announce`, which shows it and may refuse it (nothing written then), then the
    study run under <results>/studies; its study.csv is returned."""
    study = plan_tcp_study(request, note)
    announce(study)
    return run_tcp_study(study, results, build_report=build_report, log=log)
