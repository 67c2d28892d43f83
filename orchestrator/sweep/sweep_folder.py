"""A sweep's record: its results folder and sweep.json, made at plan time.

The stages that act on a sweep are in orchestrator.sweep.stages (provision, prepare,
collect, teardown, report) and orchestrator.sweep.measure; orchestrator.sweep.runner runs them
all in order and tears down whatever happens.
"""

from __future__ import annotations

import json
import platform
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from orchestrator import __version__
from orchestrator.clouds import CloudOptions
from orchestrator.core import RESULTS, UserError, say, shell_word, utc_now
from orchestrator.model import Region, backend_info, is_emulated, region_from_dict
from orchestrator.plan import Pair, Plan, SelectionSpec, TestParams
from orchestrator.results import (
    RESULTS_FORMAT_VERSION,
    PlanRecord,
    Stage,
    StageStatus,
    SweepRecord,
    SweepStatus,
    check_results_for_sweeps,
    load_record,
    make_state_dir,
    new_sweep_id,
    save_record,
    sweep_dir,
)

Log = Callable[[str], None]
ROUND_TASK = "Round:"
CONNECT_WAIT_S = 10.0  # how long a client retries a server that is not up (yet)
JITTER_S = 0.2  # random delay before a client starts, so tests do not start in lock-step


def _stderr(msg: str) -> None:
    """A dated log line on stderr (core.log)."""
    say(msg)


@dataclass
class Sweep:
    """A results folder and its record (sweep.json), saved after every change."""

    results: Path
    record: SweepRecord
    log: Log = _stderr

    @property
    def id(self) -> str:
        return self.record.sweep_id

    @property
    def dir(self) -> Path:
        return sweep_dir(self.results, self.id)

    @property
    def state(self) -> Path:
        """state/, made private (0700) whoever touches it first."""
        return make_state_dir(self.dir)

    @property
    def params(self) -> TestParams:
        return self.record.params

    @property
    def backend(self) -> str:
        return self.record.backend

    @property
    def emulated(self) -> bool:
        return is_emulated(self.backend)

    def save(self) -> None:
        save_record(self.results, self.record.to_json())

    def command(self, words: str) -> str:
        """`interregion <words> --results <this sweep's results folder>`, as a hint prints
        it: it runs as printed from any folder, whatever --results or INTERREGION_RESULTS
        the sweep was started with."""
        return f"interregion {words} --results {shell_word(Path(self.results).absolute())}"

    def resume_command(self) -> str:
        """The command that continues this sweep (--yes: it was agreed to when it started)."""
        return self.command(f"sweep --resume {self.id}") + " --yes"

    def regions(self) -> dict[str, Region]:
        regions = (region_from_dict(r) for r in self.record.plan.regions)
        return {r.key: r for r in regions}

    def planned_pairs(self) -> list[Pair]:
        regions = self.regions()
        return [Pair(regions[p.src], regions[p.dst], p.distance_km) for p in self.record.plan.pairs]

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Record a stage's start, end, wall time and outcome in sweep.json."""
        entry = Stage(started_utc=utc_now(), status=StageStatus.RUNNING)
        self.record.stages[name] = entry
        self.save()
        started = time.monotonic()
        try:
            yield
            entry.status = StageStatus.DONE
        except KeyboardInterrupt:
            entry.status = StageStatus.INTERRUPTED
            raise
        except BaseException as e:
            entry.status = StageStatus.FAILED
            entry.error = str(e)
            raise
        finally:
            entry.ended_utc = utc_now()
            entry.wall_s = round(time.monotonic() - started, 3)
            self.save()


# ---- plan -----------------------------------------------------------------------------


def tool_versions() -> dict[str, str]:
    versions = {"interregion": __version__, "python": platform.python_version()}
    try:
        from ansible.release import __version__ as ansible_version

        versions["ansible_core"] = ansible_version
    except ImportError:
        pass
    try:
        out = subprocess.run(
            ["terraform", "version", "-json"], capture_output=True, text=True, timeout=30
        )
        versions["terraform"] = json.loads(out.stdout).get("terraform_version", "")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        pass
    return versions


def create_sweep(
    plan: Plan,
    spec: SelectionSpec,
    results: Path = RESULTS,
    sweep_id: str | None = None,
    cloud_options: CloudOptions | None = None,
) -> Sweep:
    """A new results folder holding the plan; nothing is provisioned yet.

    `cloud_options` are kept in the record, so a later 'provision --sweep ID' provisions
    the same way."""
    check_results_for_sweeps(results)
    sweep_id = sweep_id or new_sweep_id()
    if sweep_dir(results, sweep_id).exists():
        raise UserError(f"sweep {sweep_id} exists already: pick another id")
    record = SweepRecord.new(
        format_version=RESULTS_FORMAT_VERSION,
        sweep_id=sweep_id,
        backend=plan.backend,
        emulated=backend_info(plan.backend).emulated,
        created_utc=utc_now(),
        status=SweepStatus.PLANNED,
        selection=spec,
        params=plan.params,
        max_concurrent=plan.max_concurrent,
        sequential=plan.sequential,
        cloud_options=cloud_options,
        plan=PlanRecord.from_json(plan.to_json()),
        versions=tool_versions(),
    )
    sweep = Sweep(Path(results), record)
    sweep.save()
    make_state_dir(sweep.dir)
    return sweep


def open_sweep(sweep_id: str, results: Path = RESULTS, log: Log = _stderr) -> Sweep:
    return Sweep(Path(results), load_record(Path(results), sweep_id), log)
