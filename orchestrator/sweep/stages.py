"""The stages around measuring: provision, prepare, collect, teardown, report.

Each is a function of a Sweep and can run alone on a sweep id (`interregion
provision --sweep ID` ...), so a crashed sweep can be torn down or resumed.
The measure stage is orchestrator.sweep.measure; the whole sweep, orchestrator.sweep.runner.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.core import RunFailure, UserError, counted, debug, step
from orchestrator.drivers import (
    Event,
    View,
    as_data,
    check_interrupt,
    close_control_sockets,
    deferred,
    ensure_sweep_keys,
    plain_view,
    run_playbook,
    write_document,
)
from orchestrator.model import Host, is_emulated, load_catalog, placement
from orchestrator.netmodel import path_facts
from orchestrator.plan import PREPARE_FORKS
from orchestrator.results import (
    HOSTS_FILE,
    MEASUREMENTS_FILE,
    RAW_DIR,
    STATE_DIR,
    HostPlacement,
    RowContext,
    SlotPlan,
    SweepStatus,
    add_round_rows,
    csv_text,
    merge_rows,
    ok_tests,
    read_raw_round,
    read_rows,
    safe_name,
    with_ping_phase,
    write_atomic,
    write_json,
    write_rows,
)
from orchestrator.sweep import backends
from orchestrator.sweep.events import PlannedRound
from orchestrator.sweep.hostcheck import congestion_problem
from orchestrator.sweep.inventory import (
    control_dir,
    existing_control_dir,
    inventory,
    record_host_keys,
    remembered_control_dir,
    remove_control_dir,
)
from orchestrator.sweep.provision import destroy_all
from orchestrator.sweep.sentinels import sentinels_path, split_rows
from orchestrator.sweep.sweep_folder import Sweep

AGENT_DIR = "agent"  # under state/ on this machine: emulated hosts share its file system


class StateVanished(RunFailure):
    """The sweep's state folder disappeared while it ran: stop and reap."""


def state_folder(sweep: Sweep) -> Path:
    """state/ of a sweep that has one; StateVanished when it was deleted under a run."""
    path = sweep.dir / STATE_DIR
    if not path.is_dir():
        raise StateVanished(
            f"the state folder of sweep {sweep.id} ({path}) vanished while it ran: stopping "
            "and removing its hosts"
        )
    return path


# ---- provision ------------------------------------------------------------------------


def provision(sweep: Sweep, owner_pid: int = 0) -> list[Host]:
    """Apply the backend's Terraform stack; write hosts.json (the host contract)."""
    with sweep.stage("provision"):
        backends.get(sweep.backend).before_provision(sweep.log)
        keys = ensure_sweep_keys(sweep.state / "keys")
        regions = list(sweep.regions().values())
        planned = backends.stack_plan(
            sweep.backend,
            sweep.id,
            regions,
            keys,
            sweep.state,
            owner_pid=owner_pid,
            estimate_wall_s=sweep.record.plan.estimate.wall_s,
            cloud_options=sweep.record.cloud_options,
            log=sweep.log,
            controller=sweep.record.plan.controller or None,
            emulated_type=sweep.record.plan.emulated_type or "",
            emulation=sweep.record.emulation,
        )
        check_interrupt()
        what = f"provisioning {counted(len(regions), 'host')} ({sweep.backend}) with Terraform"
        with step(what, tell=sweep.log):
            hosts = planned.stack().apply(planned.variables)
        missing = sorted(set(sweep.regions()) - {h.name for h in hosts})
        if missing:
            raise UserError(f"the stack made no host for {', '.join(missing)}: check infra/")
        write_json(sweep.dir / HOSTS_FILE, {"hosts": [h.to_dict() for h in hosts]})
        # zone, image and machine type per host: what a later sweep pins (--pin-from) and
        # what tells a change of our own setup from a change of the network
        sweep.record.placement = {
            name: HostPlacement.from_json(where) for name, where in placement(hosts).items()
        }
        sweep.record.status = SweepStatus.PROVISIONED
    return hosts


def _hosts_doc(sweep: Sweep) -> tuple[dict[str, Any], list[Host]]:
    """hosts.json and its hosts; one-line errors when it is missing or damaged."""
    path = sweep.dir / HOSTS_FILE
    again = f"run '{sweep.command(f'provision --sweep {sweep.id}')}'"
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


def local_agent_dir(sweep: Sweep) -> Path:
    """The agent's folder for emulated hosts: inside the sweep's private (0700) state/,
    never a guessable /tmp name another local user could plant code in first."""
    return sweep.state / AGENT_DIR


def write_sweep_inventory(sweep: Sweep, hosts: Sequence[Host], view: View) -> Path:
    """state/inventory.yml, every path in it as the `view` shows it, every value data;
    returns the inventory's path in the view."""
    keys = ensure_sweep_keys(sweep.state / "keys")
    known_hosts = sweep.state / "known_hosts"
    record_host_keys(known_hosts, hosts, sweep.log)
    cp = control_dir(sweep.state)
    sweep.record.control_dir = str(cp)  # teardown finds it even if state/ is deleted
    facts = _hosts_doc(sweep)[0].get("facts", {}) if (sweep.dir / HOSTS_FILE).exists() else {}
    seen = view.state
    backend_of = {h.name: h.backend for h in hosts}
    doc = inventory(
        hosts,
        client_key=seen / keys.client_key.relative_to(sweep.state),
        known_hosts=seen / known_hosts.name,
        control_path_dir=cp,
        agent_dir=str(seen / AGENT_DIR),
        # a cloud host's own folder; an emulated host's is state/agent, seen through the
        # view of this run (its facts name the view prepare ran in, gone since)
        agent_dirs={
            n: f["agent_dir"]
            for n, f in facts.items()
            if f.get("agent_dir") and not is_emulated(backend_of.get(n))
        },
        host_settings=host_settings(sweep),
    )
    write_document(sweep.state / "inventory.yml", as_data(doc))
    return seen / "inventory.yml"


def host_settings(sweep: Sweep) -> dict[str, dict[str, Any]]:
    """Per-host settings the agent takes beside its part: on the emulated cloud, the
    congestion control of a cloud image's kernel (a test that names none runs it) and the
    commands that print a burstable host's allowance counters (its emulation's spec)."""
    names = [h.name for h in load_hosts(sweep)]
    return backends.get(sweep.backend).host_settings(names, sweep.state)


def row_context(sweep: Sweep, hosts: Sequence[Host]) -> RowContext:
    types = {h.name: h.machine_type for h in hosts}
    pairs = [(p.src, p.dst) for p in sweep.record.plan.pairs]
    catalog = None if sweep.emulated else load_catalog()
    return RowContext(
        sweep_id=sweep.id,
        backend=sweep.backend,
        streams=sweep.params.streams,
        machine_types=types,
        distances_km={(p.src, p.dst): float(p.distance_km) for p in sweep.record.plan.pairs},
        path_facts={
            (a, b): path_facts(types.get(a, ""), types.get(b, ""), catalog) for a, b in pairs
        },
    )


# ---- prepare --------------------------------------------------------------------------


def prepare(sweep: Sweep, forks: int = PREPARE_FORKS) -> dict[str, Any]:
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
        if event["event"] == "task":  # -v: what prepare is doing, task by task
            debug(f"prepare: {event.get('task')}")

    with sweep.stage("prepare"), plain_view(state_folder(sweep)) as view:
        check_interrupt()
        inv = write_sweep_inventory(sweep, hosts, view)
        with step(f"preparing {counted(len(hosts), 'host')} with Ansible", tell=sweep.log):
            rc = run_playbook(
                "prepare.yml",
                inv,
                on_event=on_event,
                log_path=sweep.state / "ansible-prepare.log",
                forks=min(len(hosts), forks),
                view=view,
            )
        # a host Ansible never reported on (it read no inventory) is not ready either
        for h in hosts:
            if h.name not in facts and h.name not in problems:
                problems[h.name] = "Ansible reported nothing for it"
        if rc < 0:
            raise UserError(
                f"ansible-playbook was killed (signal {-rc}) while preparing: "
                f"see {sweep.state / 'ansible-prepare.log'}"
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
        congestion = sweep.params.congestion
        if congestion:
            available = {
                n: str(f.get("tcp_available_congestion_control", "")) for n, f in facts.items()
            }
            problem = congestion_problem(congestion, available)
            if problem:
                raise UserError(f"{problem} (nothing was measured)")
        # an emulated host's agent folder as it is, not as this run's view showed it (the
        # view is gone when prepare ends)
        shown, real = str(view.state), str(state_folder(sweep))
        for f in facts.values():
            where = f.get("agent_dir")
            if isinstance(where, str) and (where == shown or where.startswith(shown + "/")):
                f["agent_dir"] = real + where[len(shown) :]
        doc = _hosts_doc(sweep)[0]
        doc["facts"] = facts
        doc["not_ready"] = problems
        write_json(sweep.dir / HOSTS_FILE, doc)
        for key, fact in (("iperf3", "iperf3_version"), ("kernel", "kernel")):
            found = sorted({str(f.get(fact, "")) for f in facts.values()} - {""})
            sweep.record.versions[key] = ", ".join(found)
        sweep.record.status = SweepStatus.PREPARED
    return facts


# ---- collect --------------------------------------------------------------------------


def collect(sweep: Sweep, force: bool = False) -> list[dict[str, Any]]:
    """Rebuild measurements.csv from raw/ alone: every row can be recomputed.

    It never makes the results worse without `force`: a sweep without raw/ (e.g. one
    copied from a site's downloads) is refused, and so is a rebuild that would turn ok
    rows into failed ones."""
    with sweep.stage("collect"):
        if not (sweep.dir / RAW_DIR).is_dir() and sweep.record.rounds:
            raise UserError(
                f"sweep {sweep.id} has no raw/ folder: there is nothing to rebuild "
                f"{MEASUREMENTS_FILE} from, so it is kept as it is"
            )
        hosts = load_hosts(sweep) if (sweep.dir / HOSTS_FILE).exists() else []
        ctx = row_context(sweep, hosts)
        rows: list[dict[str, Any]] = []
        late: list[dict[str, Any]] = []
        for entry in sweep.record.rounds:
            planned = PlannedRound(
                entry.round,
                [SlotPlan(**s) for s in entry.slots],
                entry.slot_s or 0.0,
                [(a, b) for a, b in entry.tests or []] if entry.ping_phase else None,
            )
            raw = read_raw_round(sweep.dir, entry.round)
            texts = {name: raw.get(safe_name(name)) for name in planned.hosts}
            # a slot's rows after the ping phase are completed from it, as measure does
            own, repeats = split_rows(planned.slots, planned.rows(texts, ctx))
            rows = add_round_rows(rows, own, with_ping_phase)
            late = merge_rows(late, repeats)
        old = read_rows(sweep.dir / MEASUREMENTS_FILE)
        tests = sweep.params.tests
        lost = sorted(ok_tests(old, tests) - ok_tests(rows, tests))
        if lost and not force:
            first = ", ".join(f"{a}->{b}" for a, b in lost[:3])
            raise UserError(
                f"rebuilding from raw/ would turn {len(lost)} ok tests into failed or missing "
                f"ones (first: {first}): {MEASUREMENTS_FILE} is kept; pass --force to "
                "replace it anyway"
            )
        write_rows(sweep.dir, rows, sweep.params.duration_s)
        if late:
            write_atomic(sentinels_path(sweep.dir), csv_text(late))
    return rows


# ---- teardown -------------------------------------------------------------------------


def teardown(sweep: Sweep) -> None:
    """Close SSH control sockets, destroy the stacks, remove the agent copies (local).

    Runs to its end: interrupts that arrive meanwhile are kept for later."""
    with deferred(), sweep.stage("teardown"):
        remembered = remembered_control_dir(sweep.record.control_dir)
        cp = existing_control_dir(sweep.state) or remembered
        closed = close_control_sockets(cp) if cp is not None else []
        if closed:
            sweep.log(f"closed {len(closed)} SSH control connections")
        with step("tearing down the hosts", tell=sweep.log):
            destroyed = destroy_all(sweep.state, sweep.id, sweep.log, local=sweep.emulated)
        backends.get(sweep.backend).after_teardown(local_agent_dir(sweep))
        remove_control_dir(sweep.state, also=remembered)
        if destroyed:
            sweep.log(f"destroyed: {', '.join(destroyed)}")
        if not sweep.record.status.ended:
            sweep.record.status = SweepStatus.TORN_DOWN


# ---- report ---------------------------------------------------------------------------


def report(sweep: Sweep) -> Path:
    from orchestrator.report import build_report

    with sweep.stage("report"), step("building the report", tell=sweep.log):
        out = build_report(sweep.dir, log=sweep.log)
    sweep.log(f"report: {out}")
    return out
