"""`make demo`: an emulated history with one injected route change, found and nothing else.

A run of the demo is a series of latency-only sweeps (`--tests ping`) of the same
regions on the emulated cloud, each with its own seed, so the per-pair variation and
the loss episodes differ from sweep to sweep the way real runs do. From sweep
`change_from` on, one perturbation (extra one-way delay on one pair) is set. Every
sweep ingests itself into the results folder's history store; then
`interregion changes --json` must report that path, both directions moved, starting at the
first perturbed sweep, and no other pair, host or configuration change; then the site.

Change detection needs `min_runs` (8) comparable runs before it judges a path and three
flagged runs to confirm a change, so the smallest history that can show one is 8 clean
sweeps and 3 perturbed ones.

Each sweep brings its emulation up and down (Terraform, a few seconds): the
perturbation and the seed are part of the emulation's spec, so a new one per sweep
is what makes them recorded per sweep (sweep.json `emulation`).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, remove_within
from orchestrator.emulator import Perturbation
from orchestrator.emulator import perturbation_ends as ends
from orchestrator.history import Params
from orchestrator.model import DEFAULT_BACKEND
from orchestrator.results import SweepStatus, check_results_for_sweeps

# 12 regions of both clouds on six continents: same-metro pairs (Ashburn), the
# antipodes, and Cape Town - Sydney, whose measured route (~400 ms) is twice what
# its distance says.
DEMO_REGIONS = (
    "aws:us-east-1",
    "gcp:us-east4",
    "gcp:us-central1",
    "aws:us-west-2",
    "aws:eu-west-1",
    "gcp:europe-west1",
    "gcp:europe-west3",
    "aws:ap-northeast-1",
    "gcp:asia-southeast1",
    "aws:ap-southeast-2",
    "aws:sa-east-1",
    "aws:af-south-1",
)
# Virginia - Belgium (~80 ms): 10 ms more each way is +25 %, a route change by any rule.
DEMO_PERTURBATION = Perturbation("aws:us-east-1/gcp:europe-west1", delay_ms=10.0)
MARKER = "demo.json"  # written into --out: only such a folder is replaced


@dataclass(frozen=True)
class DemoPlan:
    regions: tuple[str, ...] = DEMO_REGIONS
    sweeps: int = 11
    change_from: int = 9  # the first perturbed sweep, 1-based
    perturbation: Perturbation = DEMO_PERTURBATION
    base_seed: int = 2026  # sweep i (1-based) runs with seed base_seed + i
    pings: int = 20
    detection: Params = field(default_factory=Params)

    def __post_init__(self) -> None:
        p = self.detection
        clean, dirty = self.change_from - 1, self.sweeps - self.change_from + 1
        if clean < p.min_runs or dirty < p.confirm_runs:
            raise UserError(
                f"demo of {self.sweeps} sweeps changing at sweep {self.change_from}: change "
                f"detection needs {p.min_runs} clean sweeps before the change and "
                f"{p.confirm_runs} after it"
            )
        if len(self.regions) < 3:
            raise UserError("a demo needs at least 3 regions")

    def seed(self, i: int) -> int:
        return self.base_seed + i

    def perturbations(self, i: int) -> tuple[Perturbation, ...]:
        return (self.perturbation,) if i >= self.change_from else ()

    def expected_episodes(self) -> set[tuple[str, str]]:
        """The directed pairs whose RTT the perturbation changes."""
        src, dst, _ = ends(self.perturbation.target)
        if not dst:
            raise UserError("the demo's perturbation must name a pair (A/B or A>B)")
        # an RTT is a round trip: a delay one way changes both directions' RTT
        return {(src, dst), (dst, src)}


def demo_plan(
    *, sweeps: int, change_from: int, min_runs: int, regions: str = "", perturb: str = ""
) -> DemoPlan:
    """`interregion demo`'s options as a checked plan: regions comma-separated (default
    DEMO_REGIONS), the perturbation a pair's (default DEMO_PERTURBATION), each in the
    catalog; the emulated cloud needs root."""
    from orchestrator.emulator import check_hosts, require_root
    from orchestrator.emulator import parse_perturbation as parse
    from orchestrator.model import load_catalog

    plan = DemoPlan(
        sweeps=sweeps,
        change_from=change_from,
        detection=Params(min_runs=min_runs, window_runs=max(min_runs, Params.window_runs)),
    )
    if regions:
        plan = dataclasses.replace(
            plan, regions=tuple(r.strip() for r in regions.split(",") if r.strip())
        )
    if perturb:
        plan = dataclasses.replace(plan, perturbation=parse(perturb))
    plan.expected_episodes()  # a pair, not a host
    catalog = load_catalog()
    check_hosts([plan.perturbation], [catalog.get(r).key for r in plan.regions])
    require_root()
    return plan


@dataclass(frozen=True)
class DemoOutcome:
    sweep_ids: tuple[str, ...]
    changes: dict[str, Any]  # `interregion changes --json`
    problems: tuple[str, ...]
    wall_s: float
    site: Path | None
    plan: DemoPlan = field(default_factory=DemoPlan)  # what ran (the injected change)


def check_changes(doc: dict[str, Any], plan: DemoPlan, sweep_ids: Sequence[str]) -> list[str]:
    """What is wrong with `interregion changes --json` output for this demo: the injected
    change must be there (both directions, from the first perturbed sweep), and
    nothing else may be confirmed. Empty when all is well."""
    problems = []
    first = sweep_ids[plan.change_from - 1] if len(sweep_ids) >= plan.change_from else None
    wanted = plan.expected_episodes()
    # path events: each names its directions, and which of them moved
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for e in doc.get("episodes", []):
        moved = [(d["src"], d["dst"]) for d in e.get("directions", []) if d.get("moved")]
        if e["metric"] == "rtt" and set(moved) <= wanted and moved:
            found.update(dict.fromkeys(moved, e))
        else:
            problems.append(
                f"a change nobody injected: {e['metric']} {e['src']} <-> {e['dst']} "
                f"from {e['started_run']} ({e['status']})"
            )
    for src, dst in sorted(wanted):
        e = found.get((src, dst))
        if e is None:
            problems.append(f"the injected change {src} -> {dst} was not found")
        elif e["started_run"] != first:
            problems.append(
                f"the injected change {src} -> {dst} was dated {e['started_run']}, not {first}"
            )
    for h in doc.get("hosts", []):
        problems.append(f"a host change nobody injected: {h['host']} from {h['started_run']}")
    for c in doc.get("configuration_changes", []):
        problems.append(f"a configuration change: run {c['run']}")
    return problems


def prepare_out(out: Path, replace: bool) -> None:
    """An empty folder for the demo; a previous demo's folder only with `replace`."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists():
            raise UserError(f"{out} is not empty and holds no demo: pick an empty or new folder")
        if not replace:
            raise UserError(f"{out} holds an earlier demo: pass --replace to start over")
        if out.is_symlink():  # what it leads to is not the demo's to delete
            raise UserError(f"{out} is a symbolic link: give the demo's folder itself")
        remove_within(out.parent, out)
    out.mkdir(parents=True, exist_ok=True)


def run_sweep(plan: DemoPlan, i: int, results: Path, held: Any, log: Callable[[str], None]) -> str:
    """Sweep i (1-based) of the demo, on the emulated cloud, under the results folder's
    lock the demo holds (`held`: a sweep.launch.Held); returns its id."""
    from orchestrator.model import load_catalog
    from orchestrator.plan import SelectionSpec, TestParams, make_plan
    from orchestrator.sweep import Emulation, create, start

    spec = SelectionSpec(regions=plan.regions)
    params = TestParams(pings=plan.pings, tests=("ping",))
    made = make_plan(load_catalog(), spec, params, backend=DEFAULT_BACKEND)
    emulation = Emulation(plan.seed(i), plan.perturbations(i))
    run = create(made, spec, results, emulation=emulation)
    extra = f", perturbed: {plan.perturbation.text}" if emulation.perturbations else ""
    log(f"demo sweep {i}/{plan.sweeps}: {run.id} (seed {emulation.seed}{extra})")
    start(run, held, build_report=False)
    if run.record.status != SweepStatus.DONE:
        raise UserError(f"demo sweep {run.id} ended {run.record.status}: see {run.dir}")
    return run.id


def changes_json(results: Path, p: Params) -> dict[str, Any]:
    """`interregion changes --json` on the demo's results, run as a user would run it."""
    args = ["--min-runs", str(p.min_runs), "--baseline-runs", str(p.window_runs)]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "orchestrator",
            "changes",
            "--json",
            *args,
            "--results",
            str(results),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode not in (0, 3):  # 3: episodes are open, which the demo expects
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise UserError(f"interregion changes failed: {lines[-1] if lines else proc.returncode}")
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def run_demo(
    plan: DemoPlan,
    out: Path,
    *,
    replace: bool = False,
    build_site: bool = True,
    log: Callable[[str], None] = print,
) -> DemoOutcome:
    """The whole demo into `out` (results/ and site/); every emulation it brings up is
    down again when it returns or raises (each sweep tears its own down, also on Ctrl-C)."""
    started = time.monotonic()
    check_results_for_sweeps(out / "results")
    prepare_out(out, replace)
    (out / MARKER).write_text(
        json.dumps(
            {
                "regions": plan.regions,
                "sweeps": plan.sweeps,
                "change_from": plan.change_from,
                "perturbation": plan.perturbation.to_dict(),
                "base_seed": plan.base_seed,
            },
            indent=1,
        )
    )
    results = out / "results"
    # one sweep at a time in this results folder, as `interregion sweep` keeps it: the
    # demo holds the lock for all its sweeps (taking it again per sweep would find it busy)
    from orchestrator.sweep import locked

    with locked(results, trigger="demo", log=log) as held:
        ids = tuple(run_sweep(plan, i, results, held, log) for i in range(1, plan.sweeps + 1))
    doc = changes_json(results, plan.detection)
    problems = tuple(check_changes(doc, plan, ids))
    site = None
    if build_site:
        from orchestrator.site import build_site as build

        site = build(out / "site", results, log=log)
    return DemoOutcome(ids, doc, problems, time.monotonic() - started, site, plan)


@dataclass(frozen=True)
class DemoRequest:
    """`interregion demo`'s options: the plan's (checked by demo_plan) and where it runs."""

    out: Path
    sweeps: int = 11
    change_from: int = 9
    min_runs: int = 8
    regions: str = ""  # comma-separated; "": DEMO_REGIONS
    perturb: str = ""  # a pair's perturbation; "": DEMO_PERTURBATION
    replace: bool = False
    build_site: bool = True


def make_demo(request: DemoRequest, log: Callable[[str], None] = print,
              warn: Callable[[str], None] = print) -> DemoOutcome:  # fmt: skip
    """`interregion demo`'s use case: the options checked as a plan (nothing written on
    bad input), then the whole demo run into `request.out`; each check that failed is
    `warn`ed at the end (the outcome's `problems`)."""
    plan = demo_plan(
        sweeps=request.sweeps,
        change_from=request.change_from,
        min_runs=request.min_runs,
        regions=request.regions,
        perturb=request.perturb,
    )
    outcome = run_demo(
        plan, request.out, replace=request.replace, build_site=request.build_site, log=log
    )
    for problem in outcome.problems:
        warn(f"demo check failed: {problem}")
    return outcome
