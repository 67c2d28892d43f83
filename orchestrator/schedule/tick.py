"""One tick of a scheduled sweep: what `interregion schedule run NAME` does.

lock the results folder (or record skipped-locked and stop)
-> tear down sweeps a dead process left (orchestrator.sweep.abandoned)
-> plan; check the per-run and the month's budget (or record skipped-budget)
-> run the sweep and its report (orchestrator.sweep.runner), build the site, publish
-> retention (orchestrator.schedule.retention)
-> one ledger record (orchestrator.schedule.ledger), whatever happened.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, iso
from orchestrator.drivers import LockHeld
from orchestrator.model import Catalog, load_catalog
from orchestrator.plan import Plan, Pricing, load_pricing
from orchestrator.results import (
    HOSTS_FILE,
    MEASUREMENTS_FILE,
    ScheduleTrigger,
    SweepRecord,
    SweepStatus,
    check_results_for_sweeps,
    read_rows,
)
from orchestrator.results import sweep_dir as store_sweep_dir
from orchestrator.schedule import ledger
from orchestrator.schedule.profiles import PIN_PREVIOUS, Profile, profile_named
from orchestrator.sweep import Held, Sweep, cloud_options_for, create, locked, plan_for
from orchestrator.sweep import start as launch_start

Log = Callable[[str], None]
RunSweep = Callable[..., Any]


def plan_profile(profile: Profile, catalog: Catalog, pricing: Pricing | None = None) -> Plan:
    """The plan `sweep` would make from the profile's request."""
    return plan_for(profile.request, lambda _m: None, catalog, pricing)


def budget_problem(profile: Profile, estimate_usd: float, month_spent_usd: float) -> str | None:
    """Why a run must not start for its cost; None when it may."""
    expected = estimate_usd * profile.budget_margin
    if expected > profile.budget_usd:
        return (
            f"estimate ${estimate_usd:.2f} x margin {profile.budget_margin:g} = ${expected:.2f} "
            f"is over budget_usd {profile.budget_usd:g}"
        )
    if month_spent_usd + expected > profile.budget_usd_month:
        return (
            f"month-to-date spend ${month_spent_usd:.2f} + ${expected:.2f} (estimate x margin) "
            f"is over budget_usd_month {profile.budget_usd_month:g}"
        )
    return None


def slip_delay_s(profile: Profile, rng: random.Random | None = None) -> float:
    """A random start delay within the profile's slip window (cron and Actions use it;
    systemd's RandomizedDelaySec does the same for timers)."""
    return (rng or random.Random()).uniform(0, profile.slip_s) if profile.slip_s else 0.0


def drawn_hour(profile: Profile, tick: datetime) -> int:
    """The hour after `tick` (0 .. slip hours - 1) in which a runner that wakes every hour
    starts this tick: drawn from the profile's name and the tick, so every wake-up of
    the same tick draws the same hour. For slips too long to sleep through (GitHub's
    hosted runners stop a job after 6 h)."""
    hours = max(1, profile.slip_s // 3600)
    digest = hashlib.sha256(f"{profile.name}|{iso(tick)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % hours


def due_this_hour(profile: Profile, now: datetime) -> bool:
    """True when `now` falls in the drawn hour of the latest tick."""
    tick = profile.cadence.last_tick(now)
    if tick is None:
        return False
    start = tick + timedelta(hours=drawn_hour(profile, tick))
    return start <= now < start + timedelta(hours=1)


def _stage_s(record: SweepRecord, name: str) -> float | None:
    entry = record.stages.get(name)
    return None if entry is None else entry.wall_s


def sweep_outcome(sweep_dir: Path, status: SweepStatus, error: str | None) -> dict[str, Any]:
    """Outcome, reason and test counts of a sweep from its measurements.csv."""
    rows = read_rows(sweep_dir / MEASUREMENTS_FILE) if sweep_dir.is_dir() else []
    ok = sum(1 for r in rows if r.get("status") == "ok")
    failed = len(rows) - ok
    if error or status is not SweepStatus.DONE:
        outcome, reason = "failed", error or f"sweep ended {status}"
    elif failed or not ok:
        outcome, reason = "partial", f"{failed} of {len(rows)} tests failed"
    else:
        outcome, reason = "ok", ""
    return {"outcome": outcome, "reason": reason, "tests_ok": ok, "tests_failed": failed}


def run_tick(
    profile: Profile,
    results: Path,
    *,
    trigger: str = "timer",
    now: datetime | None = None,
    catalog: Catalog | None = None,
    pricing: Pricing | None = None,
    run_sweep: RunSweep | None = None,
    publish_site: Callable[..., Any] | None = None,
    log: Log = print,
) -> dict[str, Any]:
    """Run one tick of `profile` and append its ledger record, which is returned.

    `trigger` is "timer" (the tick is the latest due time) or "hand" (no tick).
    Interrupts (SIGTERM from systemd, Ctrl-C) are recorded, then raised again."""
    from orchestrator.sweep import run_sweep as runner_run_sweep

    run_sweep = run_sweep or runner_run_sweep
    now = now or datetime.now(UTC)
    tick = profile.cadence.last_tick(now) if trigger == "timer" else None
    record: dict[str, Any] = {
        "profile": profile.name,
        "trigger": trigger,
        "scheduled_utc": iso(tick) if tick else None,
        "started_utc": iso(now),
        "hour_utc": now.hour,
        "backend": profile.backend,
        "sweep_id": None,
    }
    try:
        with locked(Path(results), trigger=trigger, log=log, profile=profile.name) as held:
            _locked_tick(
                profile,
                Path(results),
                record,
                held,
                catalog,
                pricing,
                run_sweep,
                publish_site,
                log,
                now,
                ScheduleTrigger(profile.name, trigger, tick, now.hour),
            )
    except LockHeld as e:
        record.update(
            outcome="skipped-locked",
            reason=str(e),
            holder_sweep_id=e.holder.get("sweep_id"),
            holder_started_utc=e.holder.get("started_utc"),
            holder_pid=e.holder.get("pid"),
        )
    except KeyboardInterrupt as e:
        record.setdefault("outcome", "failed")
        record.setdefault("reason", f"interrupted ({getattr(e, 'signal_name', 'SIGINT')})")
        _finish(record, Path(results), pricing)
        raise
    _finish(record, Path(results), pricing)
    return record


def _finish(record: dict[str, Any], results: Path, pricing: Pricing | None) -> None:
    record["ended_utc"] = iso(datetime.now(UTC))
    if record.get("sweep_id"):
        from orchestrator.plan import sweep_spend

        try:
            spent = sweep_spend(
                store_sweep_dir(results, record["sweep_id"]), pricing or load_pricing()
            )
            record.update(
                bytes=spent.bytes,
                egress_usd=round(spent.egress_usd, 4),
                vm_usd=round(spent.vm_usd, 4),
                cost_usd=round(spent.cost_usd, 4),
            )
        except (OSError, ValueError, KeyError, UserError) as e:
            record["cost_error"] = str(e)
    record.setdefault("outcome", "failed")
    ledger.append(results, record)


def _locked_tick(
    profile: Profile,
    results: Path,
    record: dict[str, Any],
    held: Held,
    catalog: Catalog | None,
    pricing: Pricing | None,
    run_sweep: RunSweep,
    publish_site: Callable[..., Any] | None,
    log: Log,
    now: datetime,
    schedule: ScheduleTrigger,
) -> None:
    if held.reaped:
        record["reaped"] = held.reaped
    catalog = catalog or load_catalog()
    pricing = pricing or load_pricing()
    try:
        plan = plan_profile(profile, catalog, pricing)
    except UserError as e:
        record.update(outcome="failed", reason=f"cannot plan: {e}")
        return
    estimate = plan.estimate
    record["estimated_cost_usd"] = round(estimate.cost_usd, 4)
    record["estimated_wall_s"] = round(estimate.wall_s + estimate.setup_s, 1)
    spent = ledger.month_spend_usd(ledger.read(results), profile.name, now)
    record["month_spend_usd"] = round(spent, 4)
    problem = budget_problem(profile, estimate.cost_usd, spent)
    if problem:
        record.update(outcome="skipped-budget", reason=problem)
        log(f"skipped: {problem}")
        return
    request = profile.request
    if request.cloud is not None and request.cloud.pin_from == PIN_PREVIOUS:
        previous = previous_sweep(results, profile.name)
        request = replace(request, cloud=replace(request.cloud, pin_from=previous))
        record["pinned_from"] = previous
    options = cloud_options_for(request, results)
    sweep = create(
        plan, request.selection, results, cloud_options=options, schedule=schedule, log=log
    )
    record["sweep_id"] = sweep.id
    error = None
    try:
        # the profile's budget: also what the measure loop may spend (plan.spend.over_budget)
        launch_start(
            sweep, held, budget_usd=profile.budget_usd, run_sweep=run_sweep, build_report=True
        )
    except KeyboardInterrupt:
        _record_sweep(record, sweep, "interrupted")
        raise
    except Exception as e:  # recorded in the ledger; the next tick runs anyway
        error = f"{type(e).__name__}: {e}" if not isinstance(e, UserError) else str(e)
    _record_sweep(record, sweep, error)
    if error is None:
        _site_and_publish(profile, results, record, publish_site, log)
    if profile.keep_raw_days is not None:
        from orchestrator.schedule.retention import apply_retention

        deleted = apply_retention(results, profile.keep_raw_days, datetime.now(UTC), log)
        record["retention_deleted"] = [str(p.relative_to(results)) for p in deleted]


def previous_sweep(results: Path, profile: str) -> str | None:
    """The profile's newest sweep (in the ledger) that made hosts: the zones and images
    the next run pins; None before the first."""
    for entry in reversed(ledger.read(results)):
        sweep_id = entry.get("sweep_id")
        if entry.get("profile") == profile and isinstance(sweep_id, str):
            try:
                if (store_sweep_dir(results, sweep_id) / HOSTS_FILE).is_file():
                    return sweep_id
            except UserError:  # not a sweep id: a hand-edited line
                continue
    return None


def _record_sweep(record: dict[str, Any], sweep: Sweep, error: str | None) -> None:
    record.update(sweep_outcome(sweep.dir, sweep.record.status, error))
    record["provision_s"] = _stage_s(sweep.record, "provision")
    record["measure_s"] = _stage_s(sweep.record, "measure")


def _site_and_publish(
    profile: Profile,
    results: Path,
    record: dict[str, Any],
    publish_site: Callable[..., Any] | None,
    log: Log,
) -> None:
    if not profile.site:
        return
    from orchestrator.site import build_site

    try:
        build_site(Path(profile.site), results, log=log)
        if profile.publish:
            from orchestrator.publish import publish_site as upload_publish_site

            (publish_site or upload_publish_site)(Path(profile.site), profile.publish, log=log)
            record["published_to"] = profile.publish
    except UserError as e:
        # the measurements are kept; the next tick publishes them with its own
        record["publish_error"] = str(e)
        if record["outcome"] == "ok":
            record["outcome"] = "partial"
        before = str(record.get("reason") or "")
        record["reason"] = f"{before}; {e}" if before else str(e)


def sleep_slip(profile: Profile, log: Log) -> None:
    delay = slip_delay_s(profile)
    if delay:
        log(f"waiting {delay:.0f} s (slip window {profile.slip_s} s) before starting")
        time.sleep(delay)


def run_profile(
    profile: Profile,
    results: Path,
    trigger: str,
    *,
    wait_slip: bool = False,
    hourly_draw: bool = False,
    log: Log = print,
    now: datetime | None = None,
) -> dict[str, Any] | None:
    """`schedule run NAME` (and `sweep --profile`): one tick of `profile`, after waiting
    within its slip (`wait_slip`), or only in the hour drawn for the latest tick when
    called every hour (`hourly_draw`: None when this is not that hour). Its ledger
    record is returned."""
    if wait_slip and hourly_draw:
        raise UserError("--wait-slip and --hourly-draw both place the start: give one")
    if hourly_draw and not due_this_hour(profile, now or datetime.now(UTC)):
        return None
    if wait_slip:
        sleep_slip(profile, log)
    return run_tick(profile, results, trigger=trigger, log=log)


def run_named(schedules: Path, name: str, results: Path, trigger: str, *, wait_slip: bool = False,
              hourly_draw: bool = False, log: Log = print) -> dict[str, Any] | None:  # fmt: skip
    """`schedule run NAME`, `sweep --profile NAME`: `run_profile` of the profile named (a
    results folder no sweep can run in refused first)."""
    check_results_for_sweeps(results)
    if wait_slip and hourly_draw:
        raise UserError("--wait-slip and --hourly-draw both place the start: give one")
    return run_profile(profile_named(schedules, name), results, trigger, wait_slip=wait_slip,
                       hourly_draw=hourly_draw, log=log)  # fmt: skip


def reap_abandoned(results: Path, log: Log) -> list[str]:
    """`schedule reap`: the sweeps whose process died mid-run torn down, under the results
    folder's lock (what the next tick's taking of it does too); their ids."""
    with locked(results, trigger="reap", log=log) as held:
        return held.reaped


def profile_estimate(profile: Profile) -> Any:
    """The plan's estimate of one tick of `profile` (what the timers bound the start by)."""
    return plan_profile(profile, load_catalog()).estimate
