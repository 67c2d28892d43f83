"""`interregion sweep` and the continuous mesh: a plan's announcement, a sweep's end, a
mesh's status and matrix, as lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from orchestrator.core import counted, iso, stamp
from orchestrator.model import is_emulated
from orchestrator.plan import shortfall_message

if TYPE_CHECKING:
    from orchestrator.mesh import MeshMatrix, MeshStatus
    from orchestrator.plan import Plan
    from orchestrator.sweep import Question, SweepDone


def shortfall_warning(plan: Plan) -> str | None:
    """The hosts that would send more than their machine type's baseline (None: none)."""
    return shortfall_message(plan.shortfalls) if plan.shortfalls else None


def plan_line(plan: Plan, tests: int, shape: str) -> str:
    """The plan's estimate: `tests` tests, measured as `shape` says."""
    e = plan.estimate
    emulated = is_emulated(plan.backend)
    clouds = f" (on the clouds: ${e.cloud_cost_usd:.2f})" if emulated else ""
    return (f"plan: {counted(len(plan.selection.regions), 'region')}, "
            f"{counted(tests, 'test')}, {shape}, about {e.wall_s / 60:.1f} min measuring; "
            f"estimated cost ${e.cost_usd:.2f}{clouds}")  # fmt: skip


@dataclass(frozen=True)
class Announcement:
    """What a new sweep or study says before it provisions: the hosts above their baseline
    (None: none), its estimate, and the questions it asks (sweep.questions)."""

    warning: str | None
    line: str
    questions: list[Question]


def announcement(plan: Plan, tests: int, shape: str, budget_usd: float) -> Announcement:
    """The announcement of `plan` (`tests` tests, measured as `shape` says) under a budget."""
    from orchestrator.sweep import questions  # the sweep's machinery: not a renderer's import

    e = plan.estimate
    asked = questions(e.cost_usd, budget_usd, len(plan.selection.regions), e.wall_s)
    return Announcement(shortfall_warning(plan), plan_line(plan, tests, shape), asked)


def done_lines(done: SweepDone) -> list[str]:
    """Where the sweep's rows are, and how many tests failed at first."""
    run, failed = done.sweep, done.failed_first
    lines = [f"sweep {run.id} done: {run.dir / 'measurements.csv'}"]
    if failed:
        lines.append(f"{counted(failed, 'test')} failed at first; see the status and error "
                     "columns")  # fmt: skip
    return lines


def mesh_status_lines(status: MeshStatus) -> list[str]:
    """`mesh status`: the mesh's state, then one line per host."""
    state = "running" if status.running else f"not running ({status.status})"
    collected = stamp(status.collected_utc) if status.collected_utc else "none yet"
    lines = [
        f"mesh {status.mesh}: {state}; last collection {collected}",
        f"{'host':28} {'last record (UTC)':22} {'lag s':>7} {'probes/s':>9}  problem",
    ]
    for h in status.hosts:
        lag = "" if h.lag_s is None else f"{h.lag_s:.0f}"
        rate = "" if h.probes_per_s is None else f"{h.probes_per_s:.2f}"
        last = iso(h.last_record_utc) if h.last_record_utc else "-"
        lines.append(f"{h.name:28} {last:22} {lag:>7} {rate:>9}  {h.error}")
    return lines


def mesh_matrix_lines(matrix: MeshMatrix) -> list[str]:
    """`mesh matrix`: one line per directed pair, its quantiles, samples and loss."""
    lines = [f"{matrix.source}, {matrix.window} to {matrix.end}: p50/p90/p99 ms, loss (95 % "
             "interval)"]  # fmt: skip
    for c in matrix.cells:
        stats = "/".join("-" if v is None else f"{v:.2f}" for v in (c.p50_ms, c.p90_ms, c.p99_ms))
        loss = (
            "-" if c.loss_ratio is None else f"{c.loss_ratio:.3f} ({c.loss_lo:.3f}-{c.loss_hi:.3f})"
        )
        lines.append(f"{c.src:26} -> {c.dst:26} {stats:24} n={c.samples:<6} loss {loss}")
    return lines
