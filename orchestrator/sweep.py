"""A sweep's stages: plan -> provision -> prepare -> measure -> collect -> teardown -> report.

Each stage is a function of a Sweep (its results folder and record) and can run
alone on a sweep id, so a crashed sweep can be torn down or resumed. `run_sweep`
runs them all and tears down whatever happens: success, error, Ctrl-C, SIGTERM.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from orchestrator import __version__, paths, store
from orchestrator.catalog import Region, load_catalog, region_from_dict
from orchestrator.collect import RowContext, SlotPlan, round_rows, unmeasured_row
from orchestrator.errors import UserError
from orchestrator.hosts import Host
from orchestrator.inventory import (
    control_dir,
    existing_control_dir,
    inventory,
    record_host_keys,
    remove_control_dir,
    write_inventory,
)
from orchestrator.keys import ensure_sweep_keys
from orchestrator.plan import Plan, TestParams, round_seconds
from orchestrator.playbook import Event, close_control_sockets, run_playbook
from orchestrator.progress import RoundProgress
from orchestrator.provision import destroy_all, reap_local_leftovers, stack_plan
from orchestrator.schedule import Slot, schedule
from orchestrator.schema import RESULTS_FORMAT_VERSION
from orchestrator.selection import Pair, SelectionSpec
from orchestrator.store import safe_name, utc_now

Log = Callable[[str], None]
ROUND_TASK = "Round:"
BASE_PORT = 5201
PORTS = 99  # 5201-5299: the range the cloud stacks' firewalls open
CONNECT_WAIT_S = 10.0  # how long a client retries a server that is not up (yet)
JITTER_S = 0.2  # random delay before a client starts, so tests do not start in lock-step


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Sweep:
    """A results folder and its record (sweep.json), saved after every change."""

    results: Path
    record: dict[str, Any]
    log: Log = _stderr

    @property
    def id(self) -> str:
        return str(self.record["sweep_id"])

    @property
    def dir(self) -> Path:
        return store.sweep_dir(self.results, self.id)

    @property
    def state(self) -> Path:
        """state/, made private (0700) whoever touches it first."""
        return store.make_state_dir(self.dir)

    @property
    def params(self) -> TestParams:
        return TestParams(**self.record["params"])

    @property
    def backend(self) -> str:
        return str(self.record["backend"])

    def save(self) -> None:
        store.save_record(self.results, self.record)

    def regions(self) -> dict[str, Region]:
        regions = (region_from_dict(r) for r in self.record["plan"]["regions"])
        return {r.key: r for r in regions}

    def planned_pairs(self) -> list[Pair]:
        regions = self.regions()
        return [
            Pair(regions[p["src"]], regions[p["dst"]], p["distance_km"])
            for p in self.record["plan"]["pairs"]
        ]

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Record a stage's start, end, wall time and outcome in sweep.json."""
        entry: dict[str, Any] = {"started_utc": utc_now(), "status": "running"}
        self.record.setdefault("stages", {})[name] = entry
        self.save()
        started = time.monotonic()
        try:
            yield
            entry["status"] = "done"
        except KeyboardInterrupt:
            entry["status"] = "interrupted"
            raise
        except BaseException as e:
            entry["status"] = "failed"
            entry["error"] = str(e)
            raise
        finally:
            entry["ended_utc"] = utc_now()
            entry["wall_s"] = round(time.monotonic() - started, 3)
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
    results: Path = paths.RESULTS,
    sweep_id: str | None = None,
    cloud_options: Mapping[str, Any] | None = None,
) -> Sweep:
    """A new results folder holding the plan; nothing is provisioned yet.

    `cloud_options` (the fields of clouds.launch.CloudOptions) are kept in the record, so
    a later 'provision --sweep ID' provisions the same way."""
    sweep_id = sweep_id or store.new_sweep_id()
    if store.sweep_dir(results, sweep_id).exists():
        raise UserError(f"sweep {sweep_id} exists already: pick another id")
    record = {
        "format_version": RESULTS_FORMAT_VERSION,
        "sweep_id": sweep_id,
        "backend": plan.backend,
        "emulated": plan.backend == "local",
        "created_utc": utc_now(),
        "status": "planned",
        "selection": asdict(spec),
        "params": plan.params.to_dict(),
        "max_concurrent": plan.max_concurrent,
        "sequential": plan.sequential,
        "cloud_options": dict(cloud_options) if cloud_options else None,
        "plan": plan.to_json(),
        "versions": tool_versions(),
        "stages": {},
        "rounds": [],
        "measure_runs": [],
    }
    sweep = Sweep(Path(results), record)
    sweep.save()
    store.make_state_dir(sweep.dir)
    return sweep


def open_sweep(sweep_id: str, results: Path = paths.RESULTS, log: Log = _stderr) -> Sweep:
    return Sweep(Path(results), store.load_record(Path(results), sweep_id), log)


# ---- provision ------------------------------------------------------------------------


def provision(sweep: Sweep, owner_pid: int = 0) -> list[Host]:
    """Apply the backend's Terraform stack; write hosts.json (the host contract)."""
    with sweep.stage("provision"):
        if sweep.backend == "local":
            reap_local_leftovers(sweep.log)
        keys = ensure_sweep_keys(sweep.state / "keys")
        regions = list(sweep.regions().values())
        machine_types = {} if sweep.backend == "local" else load_catalog().machine_types
        planned = stack_plan(
            sweep.backend,
            sweep.id,
            regions,
            keys,
            sweep.state,
            owner_pid=owner_pid,
            machine_types=machine_types,
            estimate_wall_s=sweep.record["plan"]["estimate"]["wall_s"],
            cloud_options=sweep.record.get("cloud_options"),
            log=sweep.log,
        )
        sweep.log(f"provisioning {len(regions)} hosts ({sweep.backend}) with Terraform")
        hosts = planned.stack().apply(planned.variables)
        missing = sorted(set(sweep.regions()) - {h.name for h in hosts})
        if missing:
            raise UserError(f"the stack made no host for {', '.join(missing)}: check infra/")
        store.write_json(sweep.dir / store.HOSTS_FILE, {"hosts": [h.to_dict() for h in hosts]})
        sweep.record["status"] = "provisioned"
    return hosts


def _hosts_doc(sweep: Sweep) -> tuple[dict[str, Any], list[Host]]:
    """hosts.json and its hosts; one-line errors when it is missing or damaged."""
    path = sweep.dir / store.HOSTS_FILE
    again = f"run 'interregion provision --sweep {sweep.id}'"
    if not path.exists():
        raise UserError(f"sweep {sweep.id} has no hosts: {again}")
    try:
        doc = json.loads(path.read_text())
        hosts = [Host(**h) for h in doc["hosts"]]
    except (OSError, ValueError, TypeError, KeyError) as e:
        raise UserError(f"{path} is damaged ({type(e).__name__}: {e}): {again}") from None
    return doc, hosts


def load_hosts(sweep: Sweep) -> list[Host]:
    return _hosts_doc(sweep)[1]


# ---- ansible plumbing -----------------------------------------------------------------


def agent_dir(sweep: Sweep) -> str:
    return f"/tmp/interregion-{sweep.id}"


def write_sweep_inventory(sweep: Sweep, hosts: Sequence[Host]) -> Path:
    keys = ensure_sweep_keys(sweep.state / "keys")
    known_hosts = sweep.state / "known_hosts"
    record_host_keys(known_hosts, hosts, sweep.log)
    cp = control_dir(sweep.state)
    path = sweep.state / "inventory.yml"
    doc = inventory(
        hosts,
        client_key=keys.client_key,
        known_hosts=known_hosts,
        control_path_dir=cp,
        agent_dir=agent_dir(sweep),
    )
    write_inventory(path, doc)
    return path


# ---- prepare --------------------------------------------------------------------------


def prepare(sweep: Sweep) -> dict[str, Any]:
    """Wait for SSH, check tools, copy the agent; record each host's facts in hosts.json.

    A host that fails here is reported and left in: its tests fail, the others run.
    """
    hosts = load_hosts(sweep)
    by_alias = {safe_name(h.name): h.name for h in hosts}
    facts: dict[str, Any] = {}
    problems: dict[str, str] = {}

    def on_event(event: Event) -> None:
        name = by_alias.get(event.get("host", ""), "")
        if event["event"] == "ok" and event.get("task", "").startswith("Host facts"):
            try:
                facts[name] = json.loads(event["stdout"])
            except ValueError:
                problems[name] = "facts are not JSON: " + event["stdout"][:200]
        elif event["event"] in ("failed", "unreachable"):
            problems[name] = f"{event['event']} at '{event.get('task')}': {event.get('msg')}"

    with sweep.stage("prepare"):
        inv = write_sweep_inventory(sweep, hosts)
        sweep.log(f"preparing {len(hosts)} hosts with Ansible")
        rc = run_playbook(
            "prepare.yml",
            inv,
            on_event=on_event,
            log_path=sweep.state / "ansible-prepare.log",
            forks=len(hosts),
        )
        for name, f in facts.items():
            if f.get("missing_tools"):
                problems[name] = f"missing tools: {', '.join(f['missing_tools'])}"
        for name, why in sorted(problems.items()):
            sweep.log(f"warning: {name} is not ready ({why}): its tests will fail")
        if len(problems) == len(hosts):
            raise UserError(
                f"no host could be prepared (rc {rc}; first: {next(iter(problems.values()))}): "
                f"see {sweep.state / 'ansible-prepare.log'}"
            )
        doc = _hosts_doc(sweep)[0]
        doc["facts"] = facts
        doc["not_ready"] = problems
        store.write_json(sweep.dir / store.HOSTS_FILE, doc)
        for key, fact in (("iperf3", "iperf3_version"), ("kernel", "kernel")):
            found = sorted({str(f.get(fact, "")) for f in facts.values()} - {""})
            sweep.record["versions"][key] = ", ".join(found)
        sweep.record["status"] = "prepared"
    return facts


# ---- measure --------------------------------------------------------------------------


def slot_plans(round_no: int, slots: Sequence[Slot]) -> list[SlotPlan]:
    port = BASE_PORT + (round_no - 1) % PORTS  # a new port each round: no stale server blocks it
    return [
        SlotPlan(
            client=slot.pairs[0].src.key,
            server=slot.pairs[0].dst.key,
            reverse=len(slot.pairs) == 2,
            port=port,
        )
        for slot in slots
    ]


def agent_parts(
    round_no: int, slots: Sequence[SlotPlan], hosts: dict[str, Host], params: TestParams
) -> dict[str, dict[str, Any]]:
    """{inventory host: the agent's part} of one round (both ends of every slot)."""
    common = {
        "round": round_no,
        "pings": params.pings,
        "ping_interval_s": params.ping_interval_s,
        "duration_s": params.duration_s,
        "omit_s": params.omit_s,
        "streams": params.streams,
        "window": params.window,
        "congestion": params.congestion,
        "connect_wait_s": CONNECT_WAIT_S,
        "jitter_s": JITTER_S,
    }
    parts = {}
    for slot in slots:
        for role, me, peer in (
            ("client", slot.client, slot.server),
            ("server", slot.server, slot.client),
        ):
            parts[safe_name(me)] = {
                **common,
                "host": me,
                "role": role,
                "address": hosts[me].address,  # the server listens on it
                "peer": peer,
                "peer_address": hosts[peer].address,
                "port": slot.port,
                "reverse": slot.reverse,
            }
    return parts


def row_context(sweep: Sweep, hosts: Sequence[Host]) -> RowContext:
    return RowContext(
        sweep_id=sweep.id,
        backend=sweep.backend,
        streams=sweep.params.streams,
        machine_types={h.name: h.machine_type for h in hosts},
        distances_km={
            (p["src"], p["dst"]): float(p["distance_km"]) for p in sweep.record["plan"]["pairs"]
        },
    )


def next_round_no(sweep: Sweep) -> int:
    """After every recorded round and every raw folder (an interrupted round leaves one)."""
    numbers = [r["round"] for r in sweep.record["rounds"]]
    numbers += [int(p.name.split("-")[1]) for p in (sweep.dir / store.RAW_DIR).glob("round-*")]
    return max(numbers, default=0) + 1


@dataclass
class _RoundRun:
    """The rounds of one ansible-playbook run, closed one by one as events arrive."""

    sweep: Sweep
    hosts: dict[str, Host]
    rounds: list[tuple[int, list[SlotPlan], float]]  # round number, slots, expected seconds
    kind: str
    progress: RoundProgress
    ctx: RowContext
    current: int = -1
    started: float = 0.0
    started_utc: str = ""
    unreachable: dict[str, str] = field(default_factory=dict)

    def on_event(self, event: Event) -> None:
        kind = event["event"]
        if kind == "task" and str(event.get("task", "")).startswith(ROUND_TASK):
            self.close()
            self.current += 1
            self.started, self.started_utc = time.monotonic(), utc_now()
        elif kind == "stats":
            self.close()
        elif kind in ("ok", "failed", "unreachable") and self.current >= 0:
            if not str(event.get("task", "")).startswith(ROUND_TASK):
                return
            alias = str(event.get("host", ""))
            name = self.hosts_by_alias().get(alias, alias)
            round_no = self.rounds[self.current][0]
            if kind == "ok" and event.get("stdout"):
                text = event["stdout"]  # the agent's document, as received
            else:
                if kind == "unreachable":
                    self.unreachable[name] = event.get("msg", "")
                text = json.dumps(
                    {
                        "ansible_event": kind,
                        "msg": event.get("msg") or event.get("stderr") or "no output",
                        "rc": event.get("rc"),
                        "stderr": event.get("stderr", ""),
                    }
                )
            store.write_atomic(store.raw_path(self.sweep.dir, round_no, name), text)

    def hosts_by_alias(self) -> dict[str, str]:
        return {safe_name(n): n for n in self.hosts}

    def close(self) -> None:
        """The current round is over: fill in the silent hosts, write its rows."""
        if self.current < 0 or self.current >= len(self.rounds) or not self.started:
            return
        round_no, slots, expected_s = self.rounds[self.current]
        wall_s = time.monotonic() - self.started
        texts: dict[str, str | None] = {}
        for slot in slots:
            for name in (slot.client, slot.server):
                path = store.raw_path(self.sweep.dir, round_no, name)
                if not path.exists():
                    why = self.unreachable.get(name) or "no result"
                    store.write_atomic(
                        path,
                        json.dumps(
                            {"ansible_event": "unreachable", "msg": f"left the play earlier: {why}"}
                        ),
                    )
                texts[name] = path.read_text()
        rows = round_rows(round_no, slots, texts, self.ctx)
        old = store.read_rows(self.sweep.dir / store.MEASUREMENTS_FILE)
        store.write_rows(self.sweep.dir, store.merge_rows(old, rows))
        ok = sum(r["status"] == "ok" for r in rows)
        self.sweep.record["rounds"].append(
            {
                "round": round_no,
                "kind": self.kind,
                "slots": [s.to_dict() for s in slots],
                "started_utc": self.started_utc,
                "ended_utc": utc_now(),
                "wall_s": round(wall_s, 3),
                "slot_s": expected_s,
                "overhead_s": round(wall_s - expected_s, 3),
                "tests_ok": ok,
                "tests_failed": len(rows) - ok,
            }
        )
        self.sweep.save()
        self.progress.round_done(round_no, ok, len(rows) - ok, wall_s)
        self.started = 0.0


def run_rounds(
    sweep: Sweep,
    hosts: Sequence[Host],
    tests: Sequence[Pair],
    kind: str,
    progress: RoundProgress,
) -> dict[str, Any]:
    """Schedule `tests` into rounds and measure them in ONE ansible-playbook run."""
    params = sweep.params
    rounds = schedule(
        tests,
        max_concurrent=sweep.record.get("max_concurrent"),
        sequential=sweep.record.get("sequential", False),
    )
    first = next_round_no(sweep)
    by_name = {h.name: h for h in hosts}
    planned = []
    for i, slots in enumerate(rounds):
        plans = slot_plans(first + i, slots)
        planned.append((first + i, plans, round(round_seconds(params, slots), 3)))
    parts = [agent_parts(no, plans, by_name, params) for no, plans, _ in planned]
    longest = max((s for _, _, s in planned), default=0.0)
    extra = sweep.state / f"measure-{first:03d}.json"
    store.write_json(
        extra,
        {"ir_rounds": parts, "ir_round_timeout_s": int(longest + 2 * CONNECT_WAIT_S + 60)},
    )
    run = _RoundRun(sweep, by_name, planned, kind, progress, row_context(sweep, hosts))
    progress.begin(kind, len(planned), len(tests))
    started = time.monotonic()
    started_utc = utc_now()
    try:
        rc = run_playbook(
            "measure.yml",
            write_sweep_inventory(sweep, hosts),
            on_event=run.on_event,
            log_path=sweep.state / "ansible-measure.log",
            forks=len(hosts),
            extra_vars=extra,
        )
        run.close()
    finally:
        progress.end()
    wall_s = time.monotonic() - started
    slot_total_s = sum(s for _, _, s in planned)
    summary = {
        "kind": kind,
        "started_utc": started_utc,
        "ended_utc": utc_now(),
        "rounds": len(planned),
        "tests": len(tests),
        "wall_s": round(wall_s, 3),
        "rounds_x_slot_s": round(slot_total_s, 3),
        "overhead_ratio": round((wall_s - slot_total_s) / wall_s, 4) if wall_s else None,
        "ansible_rc": rc,
    }
    sweep.record["measure_runs"].append(summary)
    sweep.save()
    if rc not in (0, 2, 4) and run.current < 0:
        raise UserError(
            f"ansible-playbook failed (rc {rc}) before the first round: "
            f"see {sweep.state / 'ansible-measure.log'}"
        )
    return summary


def measure(sweep: Sweep, progress: RoundProgress | None = None, retry: bool = True) -> None:
    """Measure every planned test that has no ok row yet; retry the failures once."""
    progress = progress or RoundProgress()
    hosts = load_hosts(sweep)
    stages = sweep.record.get("stages", {})
    provisioned = stages.get("provision", {}).get("started_utc", "")
    if stages.get("teardown", {}).get("started_utc", "") > provisioned:
        raise UserError(
            f"the hosts of sweep {sweep.id} were torn down: "
            f"continue with 'interregion sweep --resume {sweep.id}'"
        )
    with sweep.stage("measure"):
        sweep.record["status"] = "measuring"
        rows = store.read_rows(sweep.dir / store.MEASUREMENTS_FILE)
        done = store.ok_tests(rows)
        todo = [p for p in sweep.planned_pairs() if p.key not in done]
        if not todo:
            sweep.log(f"sweep {sweep.id}: every test is measured already")
            return
        kind = "resume" if sweep.record["rounds"] else "main"
        if done:
            sweep.log(f"keeping {len(done)} ok tests, measuring the other {len(todo)}")
        run_rounds(sweep, hosts, todo, kind, progress)
        done = store.ok_tests(store.read_rows(sweep.dir / store.MEASUREMENTS_FILE))
        failed = [p for p in todo if p.key not in done]
        if failed and retry:
            sweep.log(f"retrying {len(failed)} failed tests once")
            run_rounds(sweep, hosts, failed, "retry", progress)
        _fill_unmeasured(sweep, hosts)
        sweep.record["status"] = "measured"


def _fill_unmeasured(sweep: Sweep, hosts: Sequence[Host]) -> None:
    """Planned tests without any row (the play ended early) get a failed row saying so."""
    rows = store.read_rows(sweep.dir / store.MEASUREMENTS_FILE)
    have = {store.pair_key(r) for r in rows}
    ctx = row_context(sweep, hosts)
    missing = [
        unmeasured_row(p.src.key, p.dst.key, ctx, "not measured: the play ended before its round")
        for p in sweep.planned_pairs()
        if p.key not in have
    ]
    if missing:
        store.write_rows(sweep.dir, store.merge_rows(rows, missing))


# ---- collect --------------------------------------------------------------------------


def collect(sweep: Sweep) -> list[dict[str, Any]]:
    """Rebuild measurements.csv from raw/ alone: every row can be recomputed."""
    with sweep.stage("collect"):
        hosts_path = sweep.dir / store.HOSTS_FILE
        hosts = load_hosts(sweep) if hosts_path.exists() else []
        ctx = row_context(sweep, hosts)
        rows: list[dict[str, Any]] = []
        for entry in sweep.record["rounds"]:
            slots = [SlotPlan(**s) for s in entry["slots"]]
            raw = store.read_raw_round(sweep.dir, entry["round"])
            texts: dict[str, str | None] = {
                name: raw.get(safe_name(name)) for s in slots for name in (s.client, s.server)
            }
            rows = store.merge_rows(rows, round_rows(entry["round"], slots, texts, ctx))
        store.write_rows(sweep.dir, rows)
    return rows


# ---- teardown -------------------------------------------------------------------------


def teardown(sweep: Sweep) -> None:
    """Close SSH control sockets, destroy the stacks, remove the agent copies (local)."""
    with sweep.stage("teardown"):
        cp = existing_control_dir(sweep.state)
        closed = close_control_sockets(cp) if cp is not None else []
        if closed:
            sweep.log(f"closed {len(closed)} SSH control connections")
        destroyed = destroy_all(sweep.state, sweep.id, sweep.log)
        if sweep.backend == "local":
            # emulated hosts share this machine's file system: the agent copy is here
            shutil.rmtree(agent_dir(sweep), ignore_errors=True)
        remove_control_dir(sweep.state)
        if destroyed:
            sweep.log(f"destroyed: {', '.join(destroyed)}")
        if sweep.record.get("status") not in ("done", "interrupted", "failed"):
            sweep.record["status"] = "torn down"


# ---- report ---------------------------------------------------------------------------


def report(sweep: Sweep) -> Path | None:
    try:
        from orchestrator.report import build_report
    except ImportError:
        sweep.log("report: not available in this version, skipped")
        return None
    with sweep.stage("report"):
        out = build_report(sweep.dir, log=sweep.log)
    sweep.log(f"report: {out}")
    return out


# ---- the whole sweep ------------------------------------------------------------------


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: stop measuring, tear down."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def signals_ignored() -> Iterator[None]:
    """Teardown must finish: a second Ctrl-C or SIGTERM does not cut it short."""
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def run_sweep(
    sweep: Sweep,
    *,
    progress: RoundProgress | None = None,
    build_report: bool = True,
    keep_hosts: bool = False,
) -> Sweep:
    """provision -> prepare -> measure -> collect -> teardown -> report; teardown always."""
    old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    started = time.monotonic()
    sweep.record["started_utc"] = sweep.record.get("started_utc") or utc_now()
    try:
        try:
            provision(sweep, owner_pid=0 if keep_hosts else os.getpid())
            prepare(sweep)
            measure(sweep, progress)
            collect(sweep)
            sweep.record["status"] = "done"
        except KeyboardInterrupt:
            sweep.record["status"] = "interrupted"
            sweep.log(
                f"interrupted: completed rounds are kept in {sweep.dir}; tearing down "
                f"(continue later with 'interregion sweep --resume {sweep.id}')"
            )
            raise
        except BaseException:
            sweep.record["status"] = "failed"
            raise
        finally:
            if not keep_hosts:
                with signals_ignored():
                    teardown(sweep)
            sweep.record["ended_utc"] = utc_now()
            sweep.record["wall_s"] = round(time.monotonic() - started, 3)
            sweep.save()
    finally:
        signal.signal(signal.SIGTERM, old_term)
    if build_report:
        report(sweep)
    return sweep
