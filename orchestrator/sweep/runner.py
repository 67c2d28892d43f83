"""A whole sweep: provision -> prepare -> measure -> collect -> teardown -> report.

Teardown always runs: on success, on an error, on an interrupt (the CLI turns
Ctrl-C, SIGTERM and SIGHUP into orchestrator.drivers.interrupts.Interrupted) and when the
sweep's state folder vanished under it. Signal handlers are the CLI's business.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from orchestrator.core import UserError, counted, step, utc_now
from orchestrator.drivers import (
    Interrupted,
    RoundProgress,
    check_interrupt,
    interrupt_requested,
    stop_all,
)
from orchestrator.results import SweepStatus
from orchestrator.sweep import measure, stages
from orchestrator.sweep.sweep_folder import Sweep


def run_sweep(
    sweep: Sweep,
    *,
    progress: RoundProgress | None = None,
    build_report: bool = True,
    keep_hosts: bool = False,
    measure_stage: Callable[[Sweep, RoundProgress | None], None] | None = None,
    report_stage: Callable[[Sweep], object] = stages.report,
    history: bool = True,
) -> Sweep:
    """Every stage in order; teardown always, and no process of ours outlives it.

    A TCP study passes its own measure and report stages, and joins no history store."""
    started = time.monotonic()
    sweep.record.started_utc = sweep.record.started_utc or utc_now()
    try:
        stages.provision(sweep, owner_pid=0 if keep_hosts else os.getpid())
        stages.prepare(sweep)
        if measure_stage is None:
            measure.measure(sweep, progress)
            stages.collect(sweep)
        else:
            measure_stage(sweep, progress)
        sweep.record.status = SweepStatus.DONE
    except KeyboardInterrupt as e:
        sweep.record.status = SweepStatus.INTERRUPTED
        why = e.signal_name if isinstance(e, Interrupted) else "SIGINT"
        sweep.record.interrupted_by = why
        sweep.log(
            f"interrupted ({why}): completed rounds are kept in {sweep.dir}; tearing down "
            f"(continue later with '{sweep.resume_command()}')"
        )
        raise
    except FileNotFoundError:
        sweep.record.status = SweepStatus.FAILED
        stages.state_folder(sweep)  # StateVanished when what was missing went with state/
        raise
    except BaseException:
        sweep.record.status = SweepStatus.FAILED
        raise
    finally:
        stopped = stop_all()
        if stopped:
            sweep.log(f"stopped what was still running: {'; '.join(stopped)}")
        if not keep_hosts:
            stages.teardown(sweep)
        sweep.record.ended_utc = utc_now()
        sweep.record.wall_s = round(time.monotonic() - started, 3)
        if (sweep.dir / "sweep.json").parent.is_dir():
            sweep.save()
    late = interrupt_requested()  # arrived while teardown ran: honoured now
    if late:
        sweep.record.interrupted_by = late
        sweep.save()
        check_interrupt()
    if build_report:
        try:
            report_stage(sweep)
        except UserError as e:  # e.g. every row flagged: the measurements stand, stored
            sweep.log(f"warning: no report: {e} (the rows are kept: `interregion report --sweep "
                      f"{sweep.id}` builds it)")  # fmt: skip
    if history:
        ingest(sweep)
    return sweep


def ingest(sweep: Sweep) -> None:
    """The sweep joins the results folder's history store; a store that cannot take it
    (locked, damaged) is a warning: the sweep's own files are complete without it."""
    from orchestrator.history import HISTORY_FILE, ingest_sweep

    try:
        with step("adding the sweep to the history store", tell=sweep.log):
            rows = ingest_sweep(sweep.results, sweep.id)
    except UserError as e:
        sweep.log(f"warning: not added to the history store: {e}")
        return
    sweep.log(f"history: {counted(rows, 'row')} added to {sweep.results / HISTORY_FILE}")
