"""One way to start a sweep, for `sweep`, `study tcp` and the scheduled tick alike.

    plan_from_options     the options -> the plan and its selection (every input check)
    emulation_from_options / cloud_options_for
                          the emulated cloud's seed and perturbations, or the cloud flags
    locked                the results folder's lock, then what a dead sweep left torn down
    create                the sweep's folder and record (with the emulation it runs)
    start                 its owner recorded, then run: provision ... teardown, report,
                          history ingest (orchestrator.sweep.runner)

Nothing here prints or asks: the CLI does (budget questions, progress lines), and
passes `log` for the lines a sweep writes as it goes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.clouds.options import cloud_options_from
from orchestrator.core.errors import UserError
from orchestrator.drivers.lock import ResultsLock, results_lock
from orchestrator.emulator.perturb import Perturbation, check_hosts
from orchestrator.model import backends
from orchestrator.model.catalog import CLOUDS, Catalog, load_catalog
from orchestrator.plan.options import check_selection, params_from_options, spec_from_options
from orchestrator.plan.pricing import Pricing
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import Plan, make_plan
from orchestrator.results import store
from orchestrator.results.record import EmulationRecord
from orchestrator.sweep import abandoned, runner
from orchestrator.sweep.provision import controller_region, existing_stacks
from orchestrator.sweep.record import Sweep, create_sweep

Log = Callable[[str], None]
RunSweep = Callable[..., Any]


@dataclass(frozen=True)
class Emulation:
    """A new sweep's emulated cloud: the seed of its run-to-run variation (None: from
    the sweep id) and the perturbations injected into it."""

    seed: int | None = None
    perturbations: tuple[Perturbation, ...] = ()


@dataclass
class Held:
    """The results folder's lock, and the dead sweeps its taking tore down."""

    lock: ResultsLock
    reaped: list[str] = field(default_factory=list)


def plan_from_options(
    options: Mapping[str, Any],
    note: Log,
    catalog: Catalog | None = None,
    pricing: Pricing | None = None,
) -> tuple[Plan, SelectionSpec]:
    """The plan of a new sweep (or study) and its selection, from the sweep options
    (as the CLI or a profile gives them): every input check, nothing written."""
    backend = str(options.get("backend") or backends.DEFAULT)
    spec = spec_from_options(**options)
    params = params_from_options(**options)
    catalog = catalog or load_catalog()
    notes: list[str] = []  # said once the plan is made: bad input is one line alone
    check_selection(catalog, spec, backend, notes.append)
    plan = make_plan(
        catalog,
        spec,
        params,
        backend=backend,
        max_concurrent=options.get("max_concurrent"),  # None: the backend's default
        sequential=bool(options.get("sequential")),
        controller=controller_region(options.get("controller")),
        emulated=options.get("emulated_type"),
        machine_types={
            c: options[f"{c}_machine_type"] for c in CLOUDS if options.get(f"{c}_machine_type")
        },
        pricing=pricing,
    )
    for text in notes:
        note(text)
    return plan, spec


def emulation_from_options(
    seed: int | None, perturbations: tuple[Perturbation, ...], plan: Plan
) -> Emulation | None:
    """The --perturb/--perturb-file/--emulation-seed of a new sweep, checked against its
    regions; None when none was given. They apply to the emulated cloud only."""
    if seed is None and not perturbations:
        return None
    if not backends.info(plan.backend).emulated:
        raise UserError("--perturb and --emulation-seed apply to --backend local only")
    check_hosts(perturbations, [r.key for r in plan.selection.regions])
    return Emulation(seed, perturbations)


def cloud_options_for(
    backend: str, given: Mapping[str, Any] | None, options: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The cloud options a new sweep records: on a cloud backend, its flags (defaults
    included); None on the emulated cloud, where `given` (the flags given by hand, as
    the CLI reads them) must be None."""
    if backends.info(backend).emulated:
        if given:
            raise UserError("cloud flags apply to --backend aws, gcp or cloud, not local")
        return None
    return asdict(cloud_options_from(**options))


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
    cloud_options: Mapping[str, Any] | None = None,
    emulation: Emulation | None = None,
    record: Mapping[str, Any] | None = None,
    log: Log | None = None,
) -> Sweep:
    """The sweep's folder and record; `record`: fields added to sweep.json (a study's
    `study`, a tick's `schedule`). On the emulated cloud the record keeps the
    emulation's seed (the sweep id's when none was given) and perturbations, where
    provisioning reads them, and what they inject between its regions (the report
    marks those tests and leaves them out of its fits)."""
    run = create_sweep(plan, spec, results, cloud_options=dict(cloud_options or {}) or None)
    if log is not None:
        run.log = log
    run.record.add(record or {})
    if run.emulated:
        from orchestrator.emulator.stack import EmulationSettings
        from orchestrator.emulator.variation import seed_for

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
    **stages: Any,
) -> Sweep:
    """Run the sweep under the lock: its owner recorded (a later run tears it down if
    this process dies), `budget_usd` kept as the hard stop of what it may move
    (measure.check_budget), then every stage, its report and its history ingest
    (`stages`: runner.run_sweep's options, e.g. a study's measure and report stages;
    `run_sweep`: another runner, for tests)."""
    held.lock.note(sweep_id=run.id)
    abandoned.mark_owner(run.record)
    if budget_usd is not None:
        run.record.budget_usd = budget_usd
    if price_emulated:
        run.record.price_emulated = True
    run.save()
    try:
        (run_sweep or runner.run_sweep)(run, **stages)
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
    made = (store.HOSTS_FILE, store.MEASUREMENTS_FILE, store.RAW_DIR)
    if any((folder / name).exists() for name in made):
        return False
    return not existing_stacks(folder / "state")
