"""Collection: the controller pulls each host's new records over SSH, every minute by default.

Each pull asks a host's agent for what follows the position pulled last
(`ir_agent.py --mesh-read`), keeps the text verbatim (`pulled/<host>.jsonl`), writes the
samples and their bins into the store and the new positions with them (the store's
`meta`, one transaction: a pull that fails is pulled again, never twice), then judges
the bins every live host has finished (orchestrator.mesh.detect). `state/collect.json`
says, per host, when it was last pulled, its newest record and its lag: what `mesh
status` shows.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, parse_utc, stamp, utc_now
from orchestrator.history import opened, transaction
from orchestrator.mesh import bins, detect
from orchestrator.mesh.lifecycle import (
    PULLED_DIR,
    Log,
    MeshRequest,
    create,
    host_facts,
    open_mesh,
    parts,
    request_of,
    running,
    source_of,
    up,
)
from orchestrator.mesh.mesh_views import HostStatus, host_status
from orchestrator.model import Host, is_emulated
from orchestrator.plan import BIG_HOSTS, params_spec
from orchestrator.results import safe_name, write_atomic
from orchestrator.sweep import (
    Sweep,
    SweepRequest,
    cloud_options_for,
    control_dir,
    load_hosts,
    local_agent_dir,
    plan_for,
    ssh_common_args,
)

PULL_FORKS = 16  # SSH sessions at once
PULL_TIMEOUT_S = 60
STATUS_FILE = "collect.json"
_POSITION_KEY = "mesh_position:{mesh}:{host}"


@dataclass(frozen=True)
class Pulled:
    host: str
    text: str
    error: str = ""
    revived: str = ""  # the agent was not running and this pull started it again


def ssh_command(sweep: Sweep, host: Host, remote: list[str]) -> list[str]:
    """ssh to `host` with the mesh's key, known_hosts (checked) and control sockets."""
    keys = sweep.state / "keys"
    common = ssh_common_args(
        keys / "client_ed25519", sweep.state / "known_hosts", control_dir(sweep.state)
    )
    return [
        "ssh", *shlex.split(common), "-o", "ControlMaster=auto", "-o", "ControlPersist=300",
        "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-p", str(host.ssh_port),
        f"{host.ssh_user}@{host.ssh_host}", shlex.join(remote),
    ]  # fmt: skip


def agent_home(sweep: Sweep, host: Host, facts: dict[str, Any]) -> str:
    """Where the agent is: its facts' folder; an emulated host that prepare did not
    report on still has the sweep's (its agent may run: mesh.yml starts it)."""
    home = facts.get(host.name, {}).get("agent_dir")
    if not home and is_emulated(host.backend):
        home = local_agent_dir(sweep)
    return str(home or "")


def _pull(sweep: Sweep, host: Host, agent: str, folder: str, at: bins.Position) -> Pulled:
    """The host's records after `at`. On emulated hosts (no systemd to restart it) the
    read also starts the agent again if it is not running (ir_agent.py --revive)."""
    remote = ["/usr/bin/python3", f"{agent}/ir_agent.py", "--mesh-read", folder,
              str(at.number), str(at.offset)]  # fmt: skip
    if not agent:
        return Pulled(host.name, "", "not prepared: no agent folder in hosts.json")
    if is_emulated(host.backend):
        remote.append("--revive")
    try:
        done = subprocess.run(
            ssh_command(sweep, host, remote),
            capture_output=True,
            text=True,
            timeout=PULL_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Pulled(host.name, "", f"no answer in {PULL_TIMEOUT_S} s")
    if done.returncode != 0:
        return Pulled(host.name, "", " ".join(done.stderr.split())[:200] or f"rc {done.returncode}")
    revived = [line for line in done.stderr.splitlines() if line.startswith("revived:")]
    return Pulled(host.name, done.stdout, revived=revived[0][len("revived:") :].strip()
                  if revived else "")  # fmt: skip


def positions(con: Any, mesh_id: str) -> dict[str, bins.Position]:
    prefix = _POSITION_KEY.format(mesh=mesh_id, host="")
    rows = con.execute("SELECT key, value FROM meta WHERE starts_with(key, ?)", [prefix]).fetchall()
    return {k[len(prefix) :]: bins.Position(*json.loads(v)) for k, v in rows}


def collect(sweep: Sweep) -> dict[str, Any]:
    """One pull of every host into the store; returns the status it wrote."""
    request = request_of(sweep)
    source = source_of(sweep.emulated)
    hosts = load_hosts(sweep)
    facts = host_facts(sweep)
    folders = {name: part["dir"] for name, part in parts(sweep, request).items()}
    with opened(sweep.results.parent, create=True) as con:
        at = positions(con, sweep.id)
    with ThreadPoolExecutor(PULL_FORKS) as pool:
        pulled = list(pool.map(
            lambda h: _pull(sweep, h, agent_home(sweep, h, facts), folders[h.name],
                            at.get(h.name, bins.Position())),
            hosts,
        ))  # fmt: skip
    now = time.time()
    samples: list[bins.Sample] = []
    texts: dict[str, str] = {}
    new_at: dict[str, bins.Position] = {}
    status = read_status(sweep)
    hosts_status = status.setdefault("hosts", {})
    raw = sweep.dir / PULLED_DIR
    raw.mkdir(exist_ok=True)
    for p in pulled:
        entry = hosts_status.setdefault(p.host, {"samples": 0, "probes": 0})
        entry["pulled_utc" if not p.error else "failed_utc"] = stamp(utc_now())
        entry["error"] = p.error
        if p.revived:
            entry["restarts"] = entry.get("restarts", 0) + 1
            entry["restarted_utc"] = stamp(utc_now())
            sweep.log(f"warning: {p.host}: {p.revived}")
        if p.error:  # its lag still grows: a host that does not answer shows it
            if "newest_t" in entry:
                entry["lag_s"] = round(now - (entry["newest_t"] + request.interval_s), 1)
            continue
        got, position, bad = bins.parse_pulled(p.host, p.text, at.get(p.host, bins.Position()))
        new_at[p.host] = position
        texts[p.host] = p.text
        samples += got
        if got:
            entry["newest_t"] = max(s.t for s in got)
            entry["samples"] += len(got)
            entry["probes"] += sum(s.sent for s in got)
            entry.setdefault("first_t", min(s.t for s in got))
        entry["bad_lines"] = entry.get("bad_lines", 0) + bad
        if "newest_t" in entry:
            entry["lag_s"] = round(now - (entry["newest_t"] + request.interval_s), 1)
        with (raw / f"{safe_name(p.host)}.jsonl").open("a") as f:
            f.write(p.text)
    started = time.monotonic()
    with opened(sweep.results.parent, create=True) as con, transaction(con):
        register_source(con, sweep, source)
        bins.add_pulled(con, source, sweep.id, texts, request.bin_s)
        for host, position in new_at.items():
            key = _POSITION_KEY.format(mesh=sweep.id, host=host)
            con.execute("DELETE FROM meta WHERE key = ?", [key])
            con.execute(
                "INSERT INTO meta VALUES (?, ?)", [key, json.dumps(list(asdict(position).values()))]
            )
        judged = detect.judge_final_bins(con, sweep, source, hosts_status, request, now)
    status.update(
        collected_utc=stamp(utc_now()),
        samples=len(samples),
        ingest_s=round(time.monotonic() - started, 3),
        bins_judged=judged,
    )
    write_status(sweep, status)
    return status


def register_source(con: Any, sweep: Sweep, source: str) -> None:
    """The mesh's row in `sweeps`: what `changes` and notifications list sources from."""
    if con.execute("SELECT 1 FROM sweeps WHERE sweep_id = ?", [sweep.id]).fetchone():
        return
    con.execute(
        "INSERT INTO sweeps VALUES (?, ?, ?, ?, ?, now()::TIMESTAMP, 0, ?, ?, now()::TIMESTAMP)",
        [sweep.id, source, sweep.backend, sweep.emulated, source,
         sweep.record.format_version, json.dumps(sweep.record.to_json())],
    )  # fmt: skip


@dataclass(frozen=True)
class MeshStatus:
    """`mesh status`: a mesh, whether its controller runs, its last collection and each
    host's; `emulation_id`: the emulation it runs on (None on the clouds)."""

    mesh: str
    running: bool
    status: str
    collected_utc: datetime | None
    request: MeshRequest
    hosts: tuple[HostStatus, ...]
    emulation_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"mesh": self.mesh, "running": self.running, "status": self.status,
                "collected_utc": stamp(self.collected_utc) if self.collected_utc else None,
                "request": asdict(self.request),
                "hosts": [h.to_json() for h in self.hosts]}  # fmt: skip


def mesh_status(results: Path, mesh_id: str | None, log: Callable[[str], None]) -> MeshStatus:
    """A mesh (by id; default: the running one, else the latest) and its hosts' status."""
    sweep = open_mesh(results, mesh_id, log)
    request = request_of(sweep)
    status = read_status(sweep) if (sweep.dir / "state").is_dir() else {}  # not made here
    emulation = None
    if sweep.emulated:
        from orchestrator.emulator import emulation_id_for

        emulation = emulation_id_for(sweep.id)
    return MeshStatus(sweep.id, sweep.id in running(results), str(sweep.record.status),
                      parse_utc(status.get("collected_utc")), request,
                      tuple(host_status(status, request.interval_s)), emulation)  # fmt: skip


def read_status(sweep: Sweep) -> dict[str, Any]:
    path = sweep.state / STATUS_FILE
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def write_status(sweep: Sweep, doc: dict[str, Any]) -> None:
    if not sweep.state.is_dir():
        raise UserError(f"the state folder of mesh {sweep.id} is gone")
    write_atomic(sweep.state / STATUS_FILE, json.dumps(doc, indent=1) + "\n")


def pulled_dir(sweep: Sweep) -> Path:
    return sweep.dir / PULLED_DIR


def run_mesh(wanted: SweepRequest, request: MeshRequest, results: Path, *, yes: bool,
             note: Log, say: Log, started: Callable[[Sweep], None]) -> Sweep:  # fmt: skip
    """`interregion mesh up`: the mesh planned from a sweep's request (one host per region,
    at least 2, more than BIG_HOSTS only with `yes`), created (`started` is told its id),
    then up and collecting until stopped (mesh down, Ctrl-C, SIGTERM: how a mesh ends).
    Its hosts ping, whatever test parameters `wanted` has."""
    request.check()
    wanted = replace(wanted, params=params_spec(tests="ping"))
    plan = plan_for(wanted, note)
    hosts = len(plan.selection.regions)
    if hosts < 2:
        raise UserError("a mesh needs at least 2 regions: select more")
    if hosts > BIG_HOSTS and not yes:
        raise UserError(f"this mesh starts {hosts} hosts (more than {BIG_HOSTS}): pass --yes")
    options = cloud_options_for(wanted, results)
    sweep = create(plan, wanted.selection, results, request, say, cloud_options=options,
                   emulation=wanted.emulation)  # fmt: skip
    note(f"mesh {sweep.id}: {hosts} hosts, {hosts * (hosts - 1)} directed pairs, "
         f"every {request.interval_s} s ({sweep.dir})")  # fmt: skip
    started(sweep)
    try:
        up(sweep, collect, ready=say)
    except KeyboardInterrupt as e:
        say(f"mesh {sweep.id}: stopped ({getattr(e, 'signal_name', 'SIGINT')}), torn down")
    return sweep
