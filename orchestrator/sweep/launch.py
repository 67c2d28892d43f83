"""One way to start a sweep, for `sweep`, `study tcp` and the scheduled tick alike.

    SweepRequest          what a new sweep is asked to do, one frozen, checked value
                          built where the options enter (the CLI's flags in
                          orchestrator.cli.options, a profile in schedule.profiles) from
                          typed parts, each checked as it is made: the selection
                          (SelectionSpec), the test parameters (TestParams), where and
                          how it runs (plan.options.RunOptions), the cloud flags
                          (clouds.cloud_flags.CloudFlags) and the emulation (`Emulation`)
    plan_for              a SweepRequest -> its plan (every check that needs the catalog)
    dry_run               `interregion plan`: the plan from the catalog and price files
                          named, its hosts' allowance shortfalls warned of or refused
    cloud_options_for     the cloud flags -> the cloud options the record keeps
    locked                the results folder's lock, then what a dead sweep left torn down
    create                the sweep's folder and record (with the emulation it runs)
    start                 its owner recorded, then run: provision ... teardown, report,
                          history ingest (orchestrator.sweep.runner)
    run_new, resume       `interregion sweep`'s use cases (a SweepRun: how it runs; the
                          `questions` it asks before provisioning), -> SweepDone
    provision, prepare,   `interregion provision`, `prepare`, `measure`, `collect` and
    measure_sweep,        `teardown` on a sweep id: the sweep opened, its stage run
    collect, teardown

Nothing here prints or asks: the CLI does (it asks the `questions`, renders the lines),
and passes `log` for the lines a sweep writes as it goes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from orchestrator.clouds import CloudFlags, CloudOptions, cloud_options_from, require_sdks
from orchestrator.core import UserError, counted, debug
from orchestrator.drivers import ResultsLock, RoundProgress, results_lock
from orchestrator.emulator import Perturbation, check_hosts
from orchestrator.model import Catalog, Host, backend_info, is_cloud, is_emulated, load_catalog
from orchestrator.plan import (
    BIG_HOSTS,
    BIG_MINUTES,
    DEFAULT_BUDGET_USD,
    PREPARE_FORKS,
    Plan,
    Pricing,
    RunOptions,
    SelectionSpec,
    TestParams,
    check_selection,
    load_pricing,
    make_plan,
    shortfall_message,
)
from orchestrator.results import (
    HOSTS_FILE,
    MEASUREMENTS_FILE,
    RAW_DIR,
    STUDIES_DIR,
    EmulationRecord,
    ScheduleTrigger,
    check_results_for_sweeps,
    load_record,
    sweep_dir,
)
from orchestrator.sweep import abandoned, measure, runner, stages
from orchestrator.sweep.provision import controller_region, existing_stacks
from orchestrator.sweep.sweep_folder import Sweep, create_sweep, open_sweep

Log = Callable[[str], None]
RunSweep = Callable[..., Any]
MeasureStage = Callable[[Sweep, RoundProgress | None], None]
ReportStage = Callable[[Sweep], object]


@dataclass(frozen=True)
class Emulation:
    """A new sweep's emulated cloud: the seed of its run-to-run variation (None: from
    the sweep id) and the perturbations injected into it."""

    seed: int | None = None
    perturbations: tuple[Perturbation, ...] = ()

    @classmethod
    def given(cls, seed: int | None, perturbations: tuple[Perturbation, ...]) -> Emulation | None:
        """The emulation a seed and perturbations ask for; None when neither was given."""
        return None if seed is None and not perturbations else cls(seed, perturbations)


@dataclass(frozen=True)
class SweepRequest:
    """A new sweep (or study, or scheduled tick): what it selects, what each test runs,
    where it runs, its cloud flags (None: none given; a cloud backend then takes their
    defaults) and its emulation (None: none given). Refuses on creation what no backend
    can do: cloud flags on the emulated cloud, an emulation on a real one."""

    selection: SelectionSpec = field(default_factory=SelectionSpec)
    params: TestParams = field(default_factory=TestParams)
    run: RunOptions = field(default_factory=RunOptions)
    cloud: CloudFlags | None = None
    emulation: Emulation | None = None

    def __post_init__(self) -> None:
        emulated = backend_info(self.run.backend).emulated
        if emulated and self.cloud is not None:
            raise UserError("cloud flags apply to --backend aws, gcp or cloud, not local")
        if not emulated and self.emulation is not None:
            raise UserError("--perturb and --emulation-seed apply to --backend local only")

    @property
    def backend(self) -> str:
        return self.run.backend

    @property
    def machine_types(self) -> dict[str, str]:
        """The machine types given per cloud (the cloud flags'), over the catalog's."""
        return self.cloud.machine_types if self.cloud is not None else {}


@dataclass
class Held:
    """The results folder's lock, and the dead sweeps its taking tore down."""

    lock: ResultsLock
    reaped: list[str] = field(default_factory=list)


def plan_for(
    request: SweepRequest,
    note: Log,
    catalog: Catalog | None = None,
    pricing: Pricing | None = None,
    round_overhead: float | None = None,
) -> Plan:
    """The plan of a new sweep (or study) from its request: every check that needs the
    catalog (the selection, the backend that hosts it, the emulation's hosts), nothing
    written."""
    catalog = catalog or load_catalog()
    notes: list[str] = []  # said once the plan is made: bad input is one line alone
    check_selection(catalog, request.selection, request.backend, notes.append)
    run = request.run
    plan = make_plan(
        catalog,
        request.selection,
        request.params,
        backend=run.backend,
        max_concurrent=run.max_concurrent,  # None: the backend's default
        sequential=run.sequential,
        controller=controller_region(run.controller),
        emulated=run.emulated_type,
        machine_types=request.machine_types,
        pricing=pricing,
        round_overhead=round_overhead,
    )
    if request.emulation is not None:
        check_hosts(request.emulation.perturbations, [r.key for r in plan.selection.regions])
    for text in notes:
        note(text)
    return plan


# A round overhead beyond a day is a typo, and an infinite one breaks the time model.
MAX_ROUND_OVERHEAD_S = 86_400.0


def dry_run(
    request: SweepRequest,
    *,
    catalog_path: Path,
    pricing_path: Path,
    round_overhead: float | None = None,
    strict: bool = False,
    note: Log,
    warn: Log,
) -> Plan:
    """`interregion plan`: what a sweep of `request` would test, in which rounds, how long
    and at what cost (nothing created). A host whose mean egress is above its machine
    type's baseline is warned of, or refused with `strict`."""
    if round_overhead is not None and not 0 <= round_overhead <= MAX_ROUND_OVERHEAD_S:  # nan too
        raise UserError(
            f"--round-overhead {round_overhead:g}: give 0 to {MAX_ROUND_OVERHEAD_S:,.0f} seconds"
        )
    catalog = load_catalog(catalog_path)
    debug(f"plan: catalog {catalog_path}: {counted(len(catalog.regions), 'region')}")
    debug(f"plan: selection {_given(request.selection)}; tests {', '.join(request.params.tests)}")
    notes: list[str] = []  # said once the plan is made, after the debug lines
    plan = plan_for(request, notes.append, catalog, load_pricing(pricing_path), round_overhead)
    debug(
        f"plan: {counted(len(plan.selection.regions), 'region')} and "
        f"{counted(len(plan.selection.pairs), 'directed pair')} selected; "
        f"{counted(len(plan.rounds), 'round')} against a lower bound of "
        f"{plan.lower_bound_rounds}; cap {plan.max_concurrent or 'none'}"
        f"{' (sequential)' if plan.sequential else ''}; round overhead "
        + (f"{round_overhead:g} s" if round_overhead is not None else "the controller's model")
    )
    debug(f"plan: prices from {pricing_path} (as of {plan.pricing_as_of})")
    for text in notes:
        note(text)
    if plan.shortfalls:
        message = shortfall_message(plan.shortfalls)
        if strict:
            raise UserError(
                f"{message}: pick a machine type that covers them, or fewer or shorter "
                "tests (--strict)"
            )
        warn(message)
    return plan


def _given(spec: SelectionSpec) -> str:
    """The selection's fields that differ from the defaults, as `name=value`."""
    default = SelectionSpec()
    given = [
        f"{f.name}={getattr(spec, f.name)}"
        for f in fields(spec)
        if getattr(spec, f.name) != getattr(default, f.name)
    ]
    return ", ".join(given) or "every region of both clouds"


def cloud_options_for(request: SweepRequest, results: Path) -> CloudOptions | None:
    """The cloud options a new sweep records: on a cloud backend, its flags (defaults
    for those not given); None on the emulated cloud."""
    backend = backend_info(request.backend)
    if backend.emulated:
        return None
    require_sdks(backend.clouds)
    return cloud_options_from(request.cloud or CloudFlags(), results)


@contextmanager
def locked(results: Path, *, trigger: str, log: Log, profile: str | None = None) -> Iterator[Held]:
    """One sweep at a time per results folder, scheduled or by hand
    (orchestrator.drivers.lock); whoever takes the lock first tears down what a dead
    sweep left there. Raises drivers.lock.LockHeld when another process holds it."""
    holder = {"trigger": trigger, **({"profile": profile} if profile else {})}
    with results_lock(results, **holder) as lock:
        yield Held(lock, abandoned.reap_abandoned(results, log))


def create(
    plan: Plan,
    spec: SelectionSpec,
    results: Path,
    *,
    cloud_options: CloudOptions | None = None,
    emulation: Emulation | None = None,
    schedule: ScheduleTrigger | None = None,
    log: Log | None = None,
) -> Sweep:
    """The sweep's folder and record; `schedule`: a scheduled tick's trigger, kept in
    sweep.json. On the emulated cloud the record keeps the emulation's seed (the sweep
    id's when none was given) and perturbations, where provisioning reads them, and what
    they inject between its regions (the report marks those tests and leaves them out of
    its fits)."""
    run = create_sweep(plan, spec, results, cloud_options=cloud_options)
    if log is not None:
        run.log = log
    if schedule is not None:
        run.record.schedule = schedule
    if run.emulated:
        from orchestrator.emulator import EmulationSettings, seed_for

        chosen = emulation or Emulation()
        seed = seed_for(run.id) if chosen.seed is None else chosen.seed
        regions = [r.key for r in plan.selection.regions]
        settings = EmulationSettings(seed, chosen.perturbations).to_record(regions)
        run.record.emulation = EmulationRecord.from_json(settings)
    run.save()
    return run


def start(
    run: Sweep,
    held: Held,
    *,
    budget_usd: float | None = None,
    price_emulated: bool = False,
    run_sweep: RunSweep | None = None,
    build_report: bool = True,
    measure_stage: MeasureStage | None = None,
    report_stage: ReportStage | None = None,
    history: bool = True,
) -> Sweep:
    """Run the sweep under the lock: its owner recorded (a later run tears it down if
    this process dies), `budget_usd` kept as the hard stop of what it may move
    (measure.check_budget), then every stage, its report (unless not `build_report`)
    and its history ingest (unless not `history`); a study passes its own measure and
    report stages; `run_sweep`: another runner, for tests."""
    held.lock.note(sweep_id=run.id)
    abandoned.mark_owner(run.record)
    if budget_usd is not None:
        run.record.budget_usd = budget_usd
    if price_emulated:
        run.record.price_emulated = True
    run.save()
    try:
        (run_sweep or runner.run_sweep)(
            run,
            build_report=build_report,
            measure_stage=measure_stage,
            report_stage=report_stage or stages.report,
            history=history,
        )
    except Exception:
        # failed before anything was made (no credentials, a refused preflight): nothing
        # to keep, and the folder would keep the sweep's private keys. An interrupt keeps
        # it: the sweep can be resumed.
        if nothing_made(run):
            shutil.rmtree(run.dir, ignore_errors=True)
            run.log(f"nothing was provisioned or measured: removed {run.dir} and its keys")
        raise
    return run


def nothing_made(run: Sweep) -> bool:
    """Whether the sweep never got as far as a Terraform apply, hosts or a measurement:
    its folder then holds only its plan and its keys."""
    folder = run.dir
    made = (HOSTS_FILE, MEASUREMENTS_FILE, RAW_DIR)
    if any((folder / name).exists() for name in made):
        return False
    return not existing_stacks(folder / "state")


# ---- `interregion sweep` and its stages run alone ---------------------------------------

NOT_CONFIRMED = "not confirmed: nothing was provisioned"


@dataclass(frozen=True)
class Question:
    """What a sweep asks before it provisions: `ask` on a terminal; off one, `refuse` is
    the one-line error (--yes answers it)."""

    ask: str
    refuse: str


def answer(asked: list[Question], confirm: Callable[[str], bool] | None) -> None:
    """Each question put to `confirm` (no: the error that nothing was provisioned); without
    one (no terminal to ask on), the first question's own error."""
    for q in asked:
        if confirm is None:
            raise UserError(q.refuse)
        if not confirm(q.ask):
            raise UserError(NOT_CONFIRMED)


def big_run(hosts: int, wall_s: float) -> str:
    """What makes a sweep big enough to ask first ("" when nothing does)."""
    reasons = [f"{hosts} hosts"] if hosts > BIG_HOSTS else []
    if wall_s > BIG_MINUTES * 60:
        reasons.append(f"about {wall_s / 60:.0f} min of measuring")
    return " and ".join(reasons)


def questions(cost_usd: float, budget_usd: float, hosts: int, wall_s: float) -> list[Question]:
    """The questions of a sweep that costs more than its budget, or starts more than
    BIG_HOSTS hosts or measures for more than BIG_MINUTES."""
    asked = []
    if cost_usd > budget_usd:
        asked.append(Question(
            f"estimated cost ${cost_usd:.2f} is above the budget; go ahead?",
            f"estimated cost ${cost_usd:.2f} is above --budget-usd {budget_usd:g}: "
            "pass --yes to accept it or raise --budget-usd"))  # fmt: skip
    big = big_run(hosts, wall_s)
    if big:
        asked.append(Question(
            f"this sweep starts {big}; go ahead?",
            f"this sweep starts {big} (more than {BIG_HOSTS} hosts or {BIG_MINUTES} min asks "
            "first): pass --yes to run it, or narrow it with --max-regions or --regions",
        ))  # fmt: skip
    return asked


@dataclass(frozen=True)
class SweepRun:
    """How `interregion sweep` runs a sweep, beside what it measures (its SweepRequest):
    the budget it asks above (also the hard stop of what it may move when `budget_given`
    by hand: measure.check_budget), whether an emulated sweep is priced as a cloud one,
    and whether the report is built."""

    results: Path
    budget_usd: float = DEFAULT_BUDGET_USD
    budget_given: bool = False
    price_emulated: bool = False
    build_report: bool = True

    def __post_init__(self) -> None:
        check_results_for_sweeps(self.results)  # before anything is created in it
        if not self.budget_usd > 0:  # also NaN: a budget nothing is within
            raise UserError(f"--budget-usd {self.budget_usd:g}: must be above 0")


@dataclass(frozen=True)
class SweepDone:
    """A sweep run to its end (or only made: `sweep --plan-only`), and how many of its tests
    failed at first (before retries)."""

    sweep: Sweep
    failed_first: int


def _run(run: Sweep, held: Held, how: SweepRun) -> SweepDone:
    start(run, held, budget_usd=how.budget_usd if how.budget_given else None,
          price_emulated=how.price_emulated, build_report=how.build_report)  # fmt: skip
    rounds = run.record.rounds
    return SweepDone(run, sum(r.tests_failed or 0 for r in rounds if r.kind != "retry"))


def run_new(request: SweepRequest, how: SweepRun, *, announce: Callable[[Plan], None],
            note: Log, say: Log, plan_only: bool = False) -> SweepDone:  # fmt: skip
    """`interregion sweep`: every input checked and the plan made (nothing written), then
    `announce`d (which may refuse it), the sweep created and, unless `plan_only`, run
    under the results lock."""
    if how.price_emulated and is_cloud(request.backend):
        raise UserError("--price-emulated applies to a new sweep on --backend local (a cloud "
                        "sweep is priced anyway)")  # fmt: skip
    plan = plan_for(request, note)
    # the cloud flags (and the cloud's extra) checked before the plan is shown or asked
    # about: bad input stays one line
    options = cloud_options_for(request, how.results)
    announce(plan)
    if plan_only:
        run = create(plan, request.selection, how.results, cloud_options=options,
                     emulation=request.emulation)  # fmt: skip
        note(f"sweep {run.id}: {run.dir}")
        return SweepDone(run, 0)
    with locked(how.results, trigger="sweep", log=say) as held:
        run = create(plan, request.selection, how.results, cloud_options=options,
                     emulation=request.emulation)  # fmt: skip
        note(f"sweep {run.id}: {run.dir}")
        return _run(run, held, how)


def resume(sweep_id: str, how: SweepRun, cloud: CloudFlags | None, emulation: Emulation | None,
           *, ask: Callable[[list[Question]], None], note: Log, say: Log) -> SweepDone:  # fmt: skip
    """`sweep --resume ID`: the sweep's ok tests kept, its hosts provisioned again (so the
    same questions as a new sweep's, `ask`ed), cloud flags given again replacing its own; an
    emulation asked for again is refused (the sweep keeps the one it recorded)."""
    if emulation is not None:
        raise UserError("--perturb and --emulation-seed with --resume: a resumed sweep keeps the "
                        "emulation it recorded; start a new sweep to change it")  # fmt: skip
    if how.price_emulated:
        raise UserError("--price-emulated applies to a new sweep on --backend local (a cloud "
                        "sweep is priced anyway)")  # fmt: skip
    load_record(how.results, sweep_id)  # before the lock makes a folder
    with locked(how.results, trigger="sweep", log=say) as held:
        run = open_sweep(sweep_id, how.results)
        replace_cloud_options(run, cloud)
        planned = run.record.plan
        ask(questions(float(planned.estimate.cost_usd), how.budget_usd, len(planned.regions),
                      float(planned.estimate.wall_s)))  # fmt: skip
        note(f"resuming sweep {run.id} ({run.backend})")
        return _run(run, held, how)


def replace_cloud_options(run: Sweep, cloud: CloudFlags | None) -> None:
    """Cloud flags given again (None: none) replace the ones the sweep was planned with."""
    if cloud is None:
        return
    if is_emulated(run.backend):
        raise UserError(f"sweep {run.id} runs on the emulated cloud: cloud flags do not apply")
    run.record.cloud_options = cloud_options_from(cloud, run.results)
    run.save()


def provision(sweep_id: str, results: Path, cloud: CloudFlags | None) -> list[Host]:
    """`interregion provision`: a planned sweep's hosts made, with its cloud flags or
    those given again."""
    run = open_sweep(sweep_id, results)
    replace_cloud_options(run, cloud)
    return stages.provision(run)


def prepare(sweep_id: str, results: Path, forks: int = PREPARE_FORKS) -> dict[str, Any]:
    """`interregion prepare`: a provisioned sweep's hosts made ready (SSH, tools, agent);
    the facts of each host that answered, by name."""
    return stages.prepare(open_sweep(sweep_id, results), forks=forks)


def measure_sweep(sweep_id: str, results: Path, *, retry: bool = True) -> Path:
    """`interregion measure`: a prepared sweep's tests without an ok result measured (the
    failures retried once, unless not `retry`); the measurements file they are in."""
    run = open_sweep(sweep_id, results)
    measure.measure(run, retry=retry)
    return run.dir / MEASUREMENTS_FILE


def collect(sweep_id: str, results: Path, *, force: bool = False) -> list[dict[str, Any]]:
    """`interregion collect`: a sweep's measurements rebuilt from its raw tool outputs
    (never losing ok rows without `force`); the rows written."""
    return stages.collect(open_sweep(sweep_id, results), force=force)


def teardown(sweep_id: str, results: Path) -> None:
    """`interregion teardown`: a sweep's hosts destroyed, or a study's (`study tcp`, under
    results/studies) when no sweep has that id."""
    studies = results / STUDIES_DIR
    mine = sweep_dir(results, sweep_id).exists()
    folder = studies if not mine and sweep_dir(studies, sweep_id).exists() else results
    stages.teardown(open_sweep(sweep_id, folder))
