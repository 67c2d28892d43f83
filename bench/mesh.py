"""The continuous mesh's budgets (issue 32), printed with the load.

Store (the full catalog, synthetic records): an hour of the mesh of every catalog region
(77 regions, 5,852 directed pairs, 5 echoes a minute each, RTTs from the network model
with exponential jitter and 0.1 % loss) as the agents' text, collected as the controller
does, a pull every minute (bins.parse_pulled, bins.add_pulled, then
detect.judge_final_bins, one transaction each), with a +10 ms RTT step on one path at
minute 35. Printed: the share of directed pairs x bins present, the ingest time of the
hour (the sum of the pulls, and in one piece), the 1H matrix's time, when the step was
confirmed and what else was reported.
The agents here are not real: what they cost is the live part's.

Live (the emulated cloud, real agents, SSH pulls): `mesh up --opt-in` of --live-regions
regions for --live-minutes at --interval (default 60 s), then `mesh down`. Printed: each
agent's CPU (from /proc, over the run) as a share of a core, the collection lag (watched
every 30 s), each directed pair's share of the full bins in which it has a bin, and the
teardown.

Soak (`--only soak`, never in the default run): `mesh up` of --soak-regions (8) regions for
--soak-minutes (a day); at 30 % one agent is killed (SIGKILL by its pid), at 55 % every
process of another host's namespace is stopped (SIGSTOP by pid) for two bins and an
interval (3 minutes at least), then continued. Printed: the bins missing inside and outside
those events' windows, when the killed agent came back (the controller's next pull starts
it: no systemd on emulated hosts), what `mesh status` showed of the paused host, the other
hosts' lag meanwhile, and the RSS of the controller and agents (start, end, slope).

    python bench/mesh.py                         # store and live: 77 synthetic, 8 live for 12 min
    python bench/mesh.py --only store            # the synthetic hour only (~1 min)
    python bench/mesh.py --only live --live-regions 77 --live-minutes 60   # mesh-live.json
    python bench/mesh.py --only soak             # the 24-hour soak (mesh-soak.json)
    python bench/mesh.py --only soak --soak-minutes 15 --interval 30 --soak-bin-seconds 60
    python bench/mesh.py --json                  # the figures as JSON (bench/figures/mesh.json)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _figures import Figures  # noqa: E402

from orchestrator.history import store  # noqa: E402
from orchestrator.mesh import bins, detect  # noqa: E402
from orchestrator.mesh import mesh_views as views  # noqa: E402
from orchestrator.mesh.lifecycle import MeshRequest  # noqa: E402
from orchestrator.model.catalog import load_catalog  # noqa: E402
from orchestrator.netmodel.model import region_rtt_ms  # noqa: E402

SOURCE = "mesh-emulated"
STEP_MINUTE = 35
STEP_MS = 10.0
FIGURES = Figures("mesh", "Continuous mesh")
STORE_GOAL = (
    "bins >= 99 % of pairs; a +10 ms step confirmed within 15 min, nothing else; an hour's "
    "ingest < 2 s; 1H matrix < 1 s"
)
LIVE_GOAL = "agent < 2 % of a core; collection lag < 2 min"


def _figure(goal: str, headline: str) -> None:
    """A part's goal and headline, after the other part's when both ran."""
    FIGURES.goal = "; ".join(filter(None, (FIGURES.goal, goal)))
    FIGURES.headline = "; ".join(filter(None, (FIGURES.headline, headline)))


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cpus"


def synthetic_hour(regions, echoes: int, seed: int, t0: int, step_path):
    """{minute: {host: the agent's lines of that cycle}}, as --mesh-read prints them."""
    rng = random.Random(seed)
    base = {(a.key, b.key): region_rtt_ms(a, b) for a in regions for b in regions if a != b}
    out: dict[int, dict[str, list[str]]] = {}
    for minute in range(60):
        cycle: dict[str, list[str]] = {}
        for (src, dst), rtt in base.items():
            level = rtt + (STEP_MS if minute >= STEP_MINUTE and {src, dst} == step_path else 0)
            rtts = [round(level + rng.expovariate(5.0), 4) for _ in range(echoes)
                    if rng.random() >= 0.001]  # fmt: skip
            line = json.dumps({"t": t0 + minute * 60, "d": dst, "s": echoes, "r": rtts},
                              separators=(",", ":"))  # fmt: skip
            cycle.setdefault(src, []).append(line + "\n")
        out[minute] = cycle
    return out


def pulled(hour, minutes, offsets):
    """Each host's text of `minutes`, with its #file line, as one pull gets it."""
    texts = {}
    for host in hour[minutes[0]]:
        body = "".join(line for m in minutes for line in hour[m][host])
        texts[host] = f"#file 1 {offsets.get(host, 0)}\n" + body
        offsets[host] = offsets.get(host, 0) + len(body.encode())
    return texts


def store_part(n_regions: int, echoes: int) -> None:
    catalog = load_catalog()
    regions = catalog.regions[:n_regions] if n_regions < len(catalog.regions) else catalog.regions
    keys = [r.key for r in regions]
    step_path = {keys[0], keys[1]}
    t0 = (int(time.time()) // 3600 - 2) * 3600  # a whole hour, two hours ago
    hour = synthetic_hour(regions, echoes, 1, t0, step_path)
    pairs = len(keys) * (len(keys) - 1)
    print(f"store: {len(keys)} regions, {pairs:,} directed pairs, {echoes} echoes a minute, "
          f"an hour at 1-minute cycles ({pairs * 60:,} samples); load {load()}")  # fmt: skip
    request = MeshRequest(interval_s=60, pings=echoes, collect_every_s=60)
    mesh = SimpleNamespace(id="bench", backend="local")
    with tempfile.TemporaryDirectory(prefix="ir-bench-mesh-") as tmp:
        con = store.connect(Path(tmp) / "h.duckdb", create=True)
        pulls, confirmed_at, offsets = [], None, {}
        for pull in range(1, 61):  # every minute (the default): the cycle that ended
            now = t0 + pull * 60
            texts = pulled(hour, [pull - 1], offsets)
            hosts = {k: {"newest_t": t0 + (pull - 1) * 60, "error": ""} for k in keys}
            started = time.perf_counter()
            for host, text in texts.items():  # what collect parses: positions, counts
                bins.parse_pulled(host, text, bins.Position())
            with store.transaction(con):
                bins.add_pulled(con, SOURCE, mesh.id, texts)
                detect.judge_final_bins(con, mesh, SOURCE, hosts, request, now + 5)
            pulls.append(time.perf_counter() - started)
            if (
                confirmed_at is None
                and con.execute(
                    "SELECT count(*) FROM episodes WHERE source = ?", [SOURCE]
                ).fetchone()[0]
            ):
                confirmed_at = now
        started = time.perf_counter()
        _end, cells = views.matrix(con, SOURCE, "1H")
        matrix_s = time.perf_counter() - started
        present = con.execute(
            "SELECT count(*) FROM mesh_bins WHERE source = ? AND received > 0", [SOURCE]
        ).fetchone()[0]
        episodes = con.execute(
            "SELECT src, dst, status, started_t, confirmed_t FROM episodes WHERE source = ?",
            [SOURCE],
        ).fetchall()
        con.close()
        one = store.connect(Path(tmp) / "one.duckdb", create=True)
        everything = pulled(hour, list(range(60)), {})
        started = time.perf_counter()
        with store.transaction(one):
            bins.add_pulled(one, SOURCE, "bench", everything)
        bulk_s = time.perf_counter() - started
        one.close()
    expected = pairs * 12
    print(f"  bins present: {present:,} of {expected:,} pairs x 5-minute bins "
          f"({100 * present / expected:.2f} %; budget >= 99 %)")  # fmt: skip
    print(f"  ingest of the hour: {sum(pulls):.2f} s over 60 pulls (each with its judging; "
          f"slowest {max(pulls):.2f} s); in one piece {bulk_s:.2f} s (budget < 2 s)")  # fmt: skip
    print(f"  matrix at 1H: {matrix_s:.2f} s for {len(cells):,} cells (budget < 1 s)")
    step = [e for e in episodes if {e[0], e[1]} == step_path]
    others = [e for e in episodes if {e[0], e[1]} != step_path]
    if confirmed_at is not None and step:
        after = (confirmed_at - (t0 + STEP_MINUTE * 60)) / 60
        path = " <-> ".join(sorted(step_path))
        print(f"  +{STEP_MS:g} ms step at minute {STEP_MINUTE} on {path}: "
              f"confirmed at the pull {after:.0f} min after it (budget 15 min); "
              f"other changes reported over the hour: {len(others)} (budget 0)")  # fmt: skip
    else:
        print(f"  +{STEP_MS:g} ms step NOT confirmed; other changes: {len(others)}")
    table = FIGURES.table(
        f"store: {len(keys)} regions, an hour of synthetic records",
        ["figure", "value", "goal"],
    )
    table.add("bins present", f"{present:,} of {expected:,}", ">= 99 %")
    table.add("ingest of the hour, in one piece", f"{bulk_s:.2f} s", "< 2 s")
    table.add("ingest of the hour, 60 pulls with their judging",
              f"{sum(pulls):.2f} s, slowest pull {max(pulls):.2f} s", "")  # fmt: skip
    table.add("matrix at 1H", f"{matrix_s:.2f} s", "< 1 s")
    if confirmed_at is not None and step:
        after_min = (confirmed_at - (t0 + STEP_MINUTE * 60)) / 60
        table.add(f"+{STEP_MS:g} ms step confirmed", f"{after_min:.0f} min after", "15 min")
    else:
        table.add(f"+{STEP_MS:g} ms step confirmed", "not confirmed", "15 min")
    table.add("other changes", len(others), 0)
    found = "+10 ms confirmed " + (
        f"{(confirmed_at - (t0 + STEP_MINUTE * 60)) / 60:.0f} min after"
        if confirmed_at is not None and step
        else "NOT"
    )
    _figure(
        STORE_GOAL,
        f"{len(keys)} regions, an hour in the store: {present:,} of {expected:,} bins, "
        f"{found}, {len(others)} other changes; ingest {bulk_s:.2f} s, 1H matrix "
        f"{matrix_s:.2f} s",
    )


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _agents(mesh_id: str) -> dict[int, float]:
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            if "ir_agent.py --mesh " in cmd and mesh_id in cmd:
                out[int(pid)] = _cpu_s(int(pid))
        except OSError:
            continue
    return out


def _watch(results: Path, interval: int, until: float) -> dict[str, float]:
    """Every 30 s until `until`: the collection's lag (collect.json), the newest record's
    age, the load. What the end alone would miss: a collection that stalled mid-run."""
    out = {"lag_max": 0.0, "stale_max": 0.0, "looks": 0,
           "load_min": os.getloadavg()[0], "load_max": os.getloadavg()[0]}  # fmt: skip
    while time.monotonic() < until:
        time.sleep(max(0.0, min(30.0, until - time.monotonic())))
        out["load_min"] = min(out["load_min"], os.getloadavg()[0])
        out["load_max"] = max(out["load_max"], os.getloadavg()[0])
        for path in results.glob("mesh/*/state/collect.json"):
            try:
                hosts = json.loads(path.read_text()).get("hosts", {})
            except (OSError, ValueError):
                continue  # being replaced: the next look
            out["looks"] += 1
            now = time.time()
            for h in hosts.values():
                out["lag_max"] = max(out["lag_max"], h.get("lag_s") or 0.0)
                if h.get("newest_t"):
                    out["stale_max"] = max(out["stale_max"], now - h["newest_t"] - interval)
    return out


def _pair_shares(con, pairs: int) -> dict[str, float]:
    """The budget's own measure: each directed pair's share of the full bins (neither the
    first, begun before the agents, nor the last, unfinished) in which it has a bin."""
    ts = [r[0] for r in con.execute(
        "SELECT DISTINCT t FROM mesh_bins WHERE t > (SELECT min(t) FROM mesh_bins) AND "
        "t + INTERVAL 300 SECOND <= (SELECT max(t) FROM mesh_bins) ORDER BY t"
    ).fetchall()]  # fmt: skip
    if not ts:
        return {"bins": 0, "ok": 0, "worst": 0.0}
    got = dict(((s, d), n) for s, d, n in con.execute(
        "SELECT src, dst, count(DISTINCT t) FROM mesh_bins WHERE received > 0 AND "
        "t BETWEEN ? AND ? GROUP BY src, dst", [ts[0], ts[-1]]
    ).fetchall())  # fmt: skip
    shares = sorted([n / len(ts) for n in got.values()] + [0.0] * (pairs - len(got)))
    return {"bins": len(ts), "ok": sum(s >= 0.99 for s in shares), "worst": 100 * shares[0]}


def live_part(n_regions: int, minutes: float, interval: int) -> None:
    cli = [sys.executable, "-m", "orchestrator"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "true"}
    with tempfile.TemporaryDirectory(prefix="ir-bench-mesh-live-") as tmp:
        results = Path(tmp) / "r"
        print(f"live: {n_regions} regions on the emulated cloud for {minutes:g} min, interval "
              f"{interval} s, 5 echoes; load {load()}")  # fmt: skip
        started = time.monotonic()
        controller_log = Path(tmp) / "controller.log"
        with controller_log.open("w") as log_file:  # a file: a pipe never read would fill
            proc = subprocess.Popen(
                [*cli, "mesh", "up", "--backend", "local", "--max-regions", str(n_regions),
                 "--opt-in", "--interval", str(interval), "--yes", "--results", str(results)],
                env=env, stdout=subprocess.PIPE, stderr=log_file, text=True,
            )  # fmt: skip
        mesh_id = proc.stdout.readline().strip()
        while not list(results.glob("mesh/*/state/collect.json")):
            if proc.poll() is not None:
                raise SystemExit(f"mesh up ended: {controller_log.read_text()}")
            time.sleep(1)
        up_s = time.monotonic() - started
        hosts = json.loads((results / "mesh" / mesh_id / "hosts.json").read_text())["hosts"]
        if len(hosts) != n_regions:
            print(f"  warning: {len(hosts)} hosts, not {n_regions}", flush=True)
        n_regions = len(hosts)
        print(f"  up in {up_s:.0f} s (mesh {mesh_id}); load {load()}", flush=True)
        first = _agents(mesh_id)
        first_t = time.monotonic()
        watch = _watch(results, interval, first_t + minutes * 60)
        last = _agents(mesh_id)
        span = time.monotonic() - first_t
        status = json.loads(
            subprocess.run(
                [*cli, "mesh", "status", "--json", "--results", str(results)],
                env=env,
                capture_output=True,
                text=True,
            ).stdout
        )
        down_started = time.monotonic()
        subprocess.run([*cli, "mesh", "down", "--results", str(results)], env=env,
                       capture_output=True, text=True)  # fmt: skip
        proc.wait(timeout=300)
        down_s = time.monotonic() - down_started
        shares = sorted(100 * (last[p] - first[p]) / span for p in last if p in first)
        lags = [h["lag_s"] for h in status["hosts"] if h["lag_s"] is not None]
        con = store.connect(results / "history.duckdb", read_only=True)
        present, finished = con.execute(
            "SELECT count(*), count(DISTINCT t) FROM mesh_bins WHERE received > 0 AND "
            "t + INTERVAL 300 SECOND <= (SELECT max(t) FROM mesh_bins)"
        ).fetchone()
        per_pair = _pair_shares(con, n_regions * (n_regions - 1))
        con.close()
        pairs = n_regions * (n_regions - 1)
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        left = [n for n in netns.split() if "ir-" in n and n.endswith(mesh_id[-4:])]
        print(f"  up in {up_s:.0f} s; agents' CPU over {span / 60:.1f} min: median "
              f"{shares[len(shares) // 2]:.2f} %, max {shares[-1]:.2f} % of a core "
              f"(budget < 2 %; {len(shares)} agents)")  # fmt: skip
        print(f"  collection lag at the end: max {max(lags):.0f} s (budget < 120 s); over the "
              f"run ({watch['looks']} looks): max {watch['lag_max']:.0f} s, newest record at "
              f"most {watch['stale_max']:.0f} s old; load over the run "
              f"{watch['load_min']:.1f}-{watch['load_max']:.1f}")  # fmt: skip
        if finished:
            print(f"  finished bins: {present:,} of {pairs * finished:,} pairs x bins present "
                  f"({100 * present / (pairs * finished):.1f} %)")  # fmt: skip
            print(f"  pairs with a bin in >= 99 % of the {per_pair['bins']} full bins: "
                  f"{per_pair['ok']:,} of {pairs:,} (budget: all); the worst pair's share "
                  f"{per_pair['worst']:.1f} %")  # fmt: skip
        print(f"  down in {down_s:.0f} s; namespaces left: {len(left)}")
        warnings = [x for x in controller_log.read_text().splitlines() if "WARNING" in x]
        print(f"  the controller's warnings: {len(warnings)}")
        for line in warnings[:8]:
            print(f"    {line[:200]}")
        table = FIGURES.table(
            f"live: {n_regions} regions on the emulated cloud, {minutes:g} min",
            ["figure", "value", "goal"],
        )
        table.add("agent CPU (max)", f"{shares[-1]:.2f} % of a core", "< 2 %")
        table.add("collection lag (max over the run)", f"{watch['lag_max']:.0f} s", "< 120 s")
        if finished:
            table.add("finished bins present", f"{present:,} of {pairs * finished:,}", "")
            table.add(f"pairs with a bin in >= 99 % of the {per_pair['bins']} full bins",
                      f"{per_pair['ok']:,} of {pairs:,}", "all")  # fmt: skip
        table.add("load (1 min) over the run",
                  f"{watch['load_min']:.1f}-{watch['load_max']:.1f} on {os.cpu_count()} cpus",
                  "")  # fmt: skip
        table.add("namespaces left after down", len(left), 0)
        FIGURES.note(
            "The agent's CPU is each agent process's own over the run (/proc), at the "
            "machine's load; the lag is the largest a pull saw, watched every 30 s. The soak "
            "is --only soak (mesh-soak.json)."
        )
        _figure(
            LIVE_GOAL,
            f"live {n_regions} regions: agent {shares[-1]:.2f} % of a core, "
            f"lag {watch['lag_max']:.0f} s",
        )


SOAK_GOAL = (
    "no lost bins beyond the soak's own (an agent killed, a host paused: gaps, reported, "
    "the agent back); memory flat"
)


def _rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _slope_kib_h(series: list[tuple[float, int]]) -> float:
    """Least squares, KiB per hour."""
    if len(series) < 3:
        return 0.0
    n = len(series)
    mt = sum(t for t, _ in series) / n
    mv = sum(v for _, v in series) / n
    var = sum((t - mt) ** 2 for t, _ in series)
    return 3600 * sum((t - mt) * (v - mv) for t, v in series) / var if var else 0.0


def _agent_pid(folder: Path) -> int | None:
    """The running agent of a host's folder (its pid file, checked against /proc)."""
    try:
        pid = int((folder / "agent.pid").read_text())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if b"--mesh" in argv else None


def _netns_pids(pid: int) -> list[int]:
    """Every process in the network namespace of `pid` (a host of the emulated cloud);
    never this machine's own namespace."""
    inode = os.readlink(f"/proc/{pid}/ns/net")
    if inode == os.readlink("/proc/self/ns/net"):
        raise SystemExit(f"process {pid} is in this machine's namespace: not a host's")
    out = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{entry}/ns/net") == inode:
                out.append(int(entry))
        except OSError:
            continue
    return out


def _signal_all(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def _host_status(cli: list[str], env: dict[str, str], results: Path, host: str) -> str:
    """`mesh status --json`'s line of `host`, as the user sees it."""
    out = subprocess.run([*cli, "mesh", "status", "--json", "--results", str(results)],
                         env=env, capture_output=True, text=True).stdout  # fmt: skip
    try:
        entry = next(h for h in json.loads(out)["hosts"] if h["name"] == host)
    except (ValueError, KeyError, StopIteration):
        return f"no status ({out[:100]!r})"
    return (f"last record {entry['last_record_utc']}, lag {entry['lag_s']} s, "
            f"problem {entry['error'] or 'none'}")  # fmt: skip


def soak_part(n_regions: int, minutes: float, interval: int, bin_s: int) -> None:
    """`mesh up` of n_regions for `minutes`; at 30 % one agent is killed (SIGKILL, by its
    pid), at 55 % every process of another host's namespace is stopped (SIGSTOP) for two
    bins and an interval (3 minutes at least), then continued. Printed: what the store
    lost and whether the two events explain it, what `mesh status` showed, when the
    agent came back, and the RSS of the controller and agents (start, end, slope)."""
    cli = [sys.executable, "-m", "orchestrator"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "true"}
    label = "soak" if minutes >= 24 * 60 else f"short soak ({minutes:g} min, not 24 h)"
    pings = 5
    pause_s = max(180, 2 * bin_s + interval)
    with tempfile.TemporaryDirectory(prefix="ir-bench-mesh-soak-") as tmp:
        results = Path(tmp) / "r"
        print(f"{label}: {n_regions} regions on the emulated cloud, interval {interval} s, "
              f"{bin_s} s bins, {pings} echoes; load {load()}", flush=True)  # fmt: skip
        with (Path(tmp) / "controller.log").open("w") as log_file:
            proc = subprocess.Popen(
                [*cli, "mesh", "up", "--backend", "local", "--max-regions", str(n_regions),
                 "--interval", str(interval), "--bin-seconds", str(bin_s), "--yes",
                 "--results", str(results)],
                env=env, stdout=subprocess.PIPE, stderr=log_file, text=True,
            )  # fmt: skip
        mesh_id = proc.stdout.readline().strip()
        while not list(results.glob("mesh/*/state/collect.json")):
            if proc.poll() is not None:
                raise SystemExit(f"mesh up ended: {(Path(tmp) / 'controller.log').read_text()}")
            time.sleep(1)
        mesh_dir = results / "mesh" / mesh_id
        hosts = [h["name"] for h in json.loads((mesh_dir / "hosts.json").read_text())["hosts"]]
        folder = {h: mesh_dir / "state" / "agent" / "mesh" / h.replace(":", "_") for h in hosts}
        killed_host, paused_host = hosts[1], hosts[2]
        t0 = time.time()
        end = t0 + minutes * 60
        kill_at, pause_at = t0 + 0.3 * minutes * 60, t0 + 0.55 * minutes * 60
        print(f"  up (mesh {mesh_id}); agent of {killed_host} killed at +{0.3 * minutes:.0f} "
              f"min, {paused_host} paused at +{0.55 * minutes:.0f} min for {pause_s} s",
              flush=True)  # fmt: skip
        rss: dict[tuple[str, int], list[tuple[float, int]]] = {}
        ev: dict = {"restarts": 0, "paused_lag": 0.0, "paused_errors": set(), "others_lag": 0.0,
                    "others_lag_paused": 0.0, "load_max": os.getloadavg()[0]}  # fmt: skip
        killed_pid = paused = None
        try:
            while time.time() < end:
                now = time.time()
                ev["load_max"] = max(ev["load_max"], os.getloadavg()[0])
                for key, pid in [(("controller", proc.pid), proc.pid)] + [
                    ((h, p), p) for h in hosts if (p := _agent_pid(folder[h])) is not None
                ]:
                    kib = _rss_kib(pid)
                    if kib is not None:
                        rss.setdefault(key, []).append((now - t0, kib))
                try:
                    status = json.loads((mesh_dir / "state" / "collect.json").read_text())
                except (OSError, ValueError):
                    status = {}
                pausing = "paused_t" in ev and now <= ev.get("resumed_t", now) + 2 * interval
                for h, entry in status.get("hosts", {}).items():
                    lag = entry.get("lag_s") or 0.0
                    if h == paused_host and "paused_t" in ev:
                        ev["paused_lag"] = max(ev["paused_lag"], lag)
                        if entry.get("error"):
                            ev["paused_errors"].add(entry["error"])
                    elif h != paused_host:
                        which = "others_lag_paused" if pausing else "others_lag"
                        ev[which] = max(ev[which], lag)
                    if h == killed_host:
                        ev["restarts"] = entry.get("restarts", 0)
                if killed_pid is None and now >= kill_at:
                    killed_pid = _agent_pid(folder[killed_host])
                    if killed_pid is None:
                        raise SystemExit(f"{killed_host}: no agent running to kill")
                    os.kill(killed_pid, signal.SIGKILL)
                    ev["killed_t"] = now
                if killed_pid is not None and "back_t" not in ev:
                    back = _agent_pid(folder[killed_host])
                    if back is not None and back != killed_pid:
                        ev["back_t"], ev["back_pid"] = now, back
                if paused is None and now >= pause_at:
                    agent = _agent_pid(folder[paused_host])
                    if agent is None:
                        raise SystemExit(f"{paused_host}: no agent running to pause")
                    paused = _netns_pids(agent)
                    _signal_all(paused, signal.SIGSTOP)
                    ev["paused_t"], ev["paused_n"] = now, len(paused)
                if paused and "shown" not in ev and now >= ev["paused_t"] + 0.8 * pause_s:
                    ev["shown"] = _host_status(cli, env, results, paused_host)
                if paused and "resumed_t" not in ev and now >= ev["paused_t"] + pause_s:
                    _signal_all(paused, signal.SIGCONT)
                    ev["resumed_t"] = time.time()
                time.sleep(10)
        finally:
            if paused and "resumed_t" not in ev:
                _signal_all(paused, signal.SIGCONT)
                ev["resumed_t"] = time.time()
            shown = subprocess.run(
                [*cli, "mesh", "status", "--json", "--results", str(results)],
                env=env, capture_output=True, text=True,
            ).stdout  # fmt: skip
            subprocess.run([*cli, "mesh", "down", "--results", str(results)], env=env,
                           capture_output=True, text=True)  # fmt: skip
            proc.wait(timeout=300)
        warnings = [line for line in (Path(tmp) / "controller.log").read_text().splitlines()
                    if "WARNING" in line]  # fmt: skip
        con = store.connect(results / "history.duckdb", read_only=True)
        ts = [r[0] for r in con.execute(
            "SELECT DISTINCT epoch(t)::BIGINT FROM mesh_bins WHERE t > (SELECT min(t) FROM "
            "mesh_bins) AND epoch(t) + ? <= (SELECT epoch(max(t)) FROM mesh_bins) ORDER BY 1",
            [bin_s],
        ).fetchall()]  # fmt: skip
        sent = {(s, d, t): n for s, d, t, n in con.execute(
            "SELECT src, dst, epoch(t)::BIGINT, sent FROM mesh_bins WHERE epoch(t) BETWEEN ? AND ?",
            [ts[0], ts[-1]],
        ).fetchall()} if ts else {}  # fmt: skip
        con.close()
        netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        left = [n for n in netns.split() if "ir-" in n and n.endswith(mesh_id[-4:])]
        # a bin is the events' when it overlaps the host's dead or stopped time (to the end
        # of the cycle after it came back: an agent begins at a whole cycle)
        windows = {
            killed_host: (ev.get("killed_t", 0), ev.get("back_t", end) + interval),
            paused_host: (ev.get("paused_t", 0), ev.get("resumed_t", end) + interval),
        }
        full = pings * bin_s // interval
        lost = {"missing": [0, 0], "thin": [0, 0]}  # [the events', not the events']
        for t in ts:
            for a in hosts:
                win = windows.get(a)
                ours = win is not None and t < win[1] and t + bin_s > win[0]
                for b in hosts:
                    if a == b:
                        continue
                    n = sent.get((a, b, t))
                    kind = "missing" if n is None else "thin" if n < full else None
                    if kind:
                        lost[kind][0 if ours else 1] += 1
        pairs = n_regions * (n_regions - 1)
        back_s = ev["back_t"] - ev["killed_t"] if "back_t" in ev else None
        print(f"  {len(ts)} full bins x {pairs} pairs = {len(ts) * pairs:,} pair-bins; load max "
              f"{ev['load_max']:.1f}")  # fmt: skip
        print(f"  agent of {killed_host} killed (pid {killed_pid}): "
              + (f"back in {back_s:.0f} s as pid {ev['back_pid']} (started again by the "
                 f"controller's pull: restarts {ev['restarts']} in collect.json)"
                 if back_s is not None else "NOT back") )  # fmt: skip
        print(f"  {paused_host} paused ({ev.get('paused_n', 0)} processes) for "
              f"{ev.get('resumed_t', 0) - ev.get('paused_t', 0):.0f} s: its lag in mesh status "
              f"rose to {ev['paused_lag']:.0f} s; errors shown: "
              f"{'; '.join(sorted(ev['paused_errors'])) or 'none'}")  # fmt: skip
        print(f"  mesh status of {paused_host} near the end of its pause: {ev.get('shown')}")
        print(
            f"  the other hosts' lag: max {ev['others_lag']:.0f} s, "
            f"{ev['others_lag_paused']:.0f} s while a host was paused (budget < 120 s)"
        )
        print(f"  bins missing: {lost['missing'][0]} in the events' windows, "
              f"{lost['missing'][1]} elsewhere (budget 0); short bins (< {full} echoes): "
              f"{lost['thin'][0]} in the windows, {lost['thin'][1]} elsewhere")  # fmt: skip
        controller = next(v for k, v in rss.items() if k[0] == "controller")
        agents = {k: v for k, v in rss.items() if k[0] != "controller" and len(v) >= 6}
        late = [(k, v[len(v) // 4 :]) for k, v in agents.items()]  # after the warm-up
        slopes = sorted(_slope_kib_h(v) for _, v in late) or [0.0]
        first = sum(v[0][1] for v in agents.values()) / max(len(agents), 1)
        last = sum(v[-1][1] for v in agents.values()) / max(len(agents), 1)
        c_slope = _slope_kib_h(controller[len(controller) // 4 :])
        print(f"  controller RSS {controller[0][1] / 1024:.1f} -> {controller[-1][1] / 1024:.1f} "
              f"MiB, slope {c_slope / 1024:+.2f} MiB/h (after the first quarter)")  # fmt: skip
        print(f"  agents' RSS (mean of {len(agents)}) {first / 1024:.1f} -> {last / 1024:.1f} "
              f"MiB, slopes {slopes[0]:+.0f} to {slopes[-1]:+.0f} KiB/h")  # fmt: skip
        print(
            f"  mesh status at the end: {len(json.loads(shown)['hosts']) if shown else 0} "
            f"hosts; controller warnings: {len(warnings)}; namespaces left: {len(left)}"
        )
        for line in warnings[:6]:
            print(f"    {line[:160]}")
        table = FIGURES.table(
            f"{label}: {n_regions} regions, interval {interval} s, {bin_s} s bins",
            ["figure", "value", "goal"],
        )
        table.add("pair-bins (full bins x pairs)", len(ts) * pairs, "")
        table.add("bins missing outside the soak's events", lost["missing"][1], 0)
        table.add("bins missing in the events' windows", lost["missing"][0], "> 0 (a gap)")
        table.add("short bins outside / inside the windows",
                  f"{lost['thin'][1]} / {lost['thin'][0]}", "")  # fmt: skip
        table.add("killed agent back after",
                  f"{back_s:.0f} s" if back_s is not None else "not back", "a pull")  # fmt: skip
        table.add("paused host's lag in mesh status (max)", f"{ev['paused_lag']:.0f} s", "shown")
        table.add("other hosts' lag while one was paused", f"{ev['others_lag_paused']:.0f} s",
                  "< 120 s")  # fmt: skip
        table.add("controller RSS start -> end, slope",
                  f"{controller[0][1] / 1024:.1f} -> {controller[-1][1] / 1024:.1f} MiB, "
                  f"{c_slope / 1024:+.2f} MiB/h", "flat")  # fmt: skip
        table.add("agents' RSS start -> end (mean), slopes",
                  f"{first / 1024:.1f} -> {last / 1024:.1f} MiB, {slopes[0]:+.0f} to "
                  f"{slopes[-1]:+.0f} KiB/h", "flat")  # fmt: skip
        table.add("namespaces left after down", len(left), 0)
        _figure(
            SOAK_GOAL,
            f"{label}, {n_regions} regions: {lost['missing'][1]} bins lost outside the "
            f"events, {lost['missing'][0]} in them; agent back in "
            f"{f'{back_s:.0f} s' if back_s is not None else 'NEVER'}; RSS slope controller "
            f"{c_slope / 1024:+.2f} MiB/h, agents <= {slopes[-1]:+.0f} KiB/h",
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("store", "live", "soak"))
    parser.add_argument("--regions", type=int, default=77, help="the store part's regions")
    parser.add_argument("--live-regions", type=int, default=8)
    parser.add_argument("--live-minutes", type=float, default=12.0)
    parser.add_argument("--interval", type=int, default=60)
    parser.add_argument("--soak-regions", type=int, default=8)
    parser.add_argument("--soak-minutes", type=float, default=24 * 60.0)
    parser.add_argument("--soak-bin-seconds", type=int, default=300,
                        help="the soak's bins (a short soak: shorter)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    args = parser.parse_args()
    if args.only == "live":  # its own section of docs/benchmarks.md (mesh-live.json)
        FIGURES.area = "Continuous mesh, live"
    if args.only == "soak":  # mesh-soak.json
        FIGURES.area = "Continuous mesh, soak"
    with FIGURES.printing(args.json):
        if args.only in (None, "store"):
            store_part(args.regions, 5)
        if args.only in (None, "live"):
            live_part(args.live_regions, args.live_minutes, args.interval)
        if args.only == "soak":  # a day: never part of the default run
            soak_part(args.soak_regions, args.soak_minutes, args.interval,
                      args.soak_bin_seconds)  # fmt: skip


if __name__ == "__main__":
    main()
