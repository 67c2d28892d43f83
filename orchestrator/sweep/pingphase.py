"""The ping phase: every host probes all its peers at once, as one round of its own.

Pings are light and may overlap, so a latency-only sweep needs no exclusive rounds:
one play, one agent process per host, each probing every peer it has a directed test
to, `pings` times, its probes at least `MIN_GAP_S` apart (ir_agent.py's ping phase:
its own ICMP echoes with kernel timestamps). Rows come from each source host's
samples for each of its peers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.core import paths
from orchestrator.model.hosts import Host
from orchestrator.results.collect import PING_FIELDS, RowContext, _one_line, _row_base, host_doc
from orchestrator.results.parse import summarize_probes
from orchestrator.results.store import safe_name

MIN_GAP_S = 0.01  # one host never sends two probes closer than this
REPLY_WAIT_S = 2.0  # after its last probe, a host waits this long for late replies
PHASE_MARGIN_S = 1.0  # process start and the document's way back


# The playbook starts every host's agent in the background, then collects their
# documents; Ansible holds at most PHASE_FORKS hosts at once (controller memory). All
# hosts begin probing together once all are started: probing while others are still
# being started would slow their start some 3x on a small controller (measured at 77
# hosts on 2 cores: 12 s instead of 4.4 s), and the collection can only begin after.
PHASE_FORKS = 24  # hosts Ansible holds at once (bench/sweep.py: ctl PSS)
LAUNCH_BASE_S = 2.0  # ansible-playbook's start, up to its first task (measured 1.3-3.0 s)
PER_HOST_S = 0.06  # starting, or collecting, one host: Ansible fork and SSH (0.057 s)
START_MARGIN_S = 0.2  # from the last host's start task to its agent's first probe


def launch_seconds(hosts: int, controller_rtt_ms: float = 0.0) -> float:
    """When, after the playbook starts, every host's agent has been started: the moment
    they all begin probing together."""
    return LAUNCH_BASE_S + PER_HOST_S * hosts + 2 * controller_rtt_ms / 1000


def collect_seconds(hosts: int, controller_rtt_ms: float = 0.0) -> float:
    """From the end of the probing to the last document: the first PHASE_FORKS hosts
    were waiting for theirs, the others are collected one by one after."""
    return PER_HOST_S * max(0, hosts - PHASE_FORKS) + controller_rtt_ms / 1000


def peers_by_host(tests: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """{source: [destinations]} of the directed tests, in the order given."""
    out: dict[str, list[str]] = {}
    for src, dst in tests:
        out.setdefault(src, []).append(dst)
    return out


def host_seconds(peers: int, pings: int, interval_s: float) -> float:
    """How long one host's probing takes: `pings` probes to each of `peers`."""
    if not peers:
        return 0.0
    gap = max(MIN_GAP_S, interval_s / peers)
    return ((pings * peers) - 1) * gap


def busiest_seconds(tests: Sequence[tuple[str, str]], pings: int, interval_s: float) -> float:
    """How long the busiest host sends probes: from its first to its last."""
    busiest = max((len(p) for p in peers_by_host(tests).values()), default=0)
    return host_seconds(busiest, pings, interval_s)


def probing_seconds(tests: Sequence[tuple[str, str]], pings: int, interval_s: float) -> float:
    """How long the hosts probe: the busiest host, the wait for the last replies (an RTT
    at most, REPLY_WAIT_S at worst: a lost reply) and the margin."""
    return busiest_seconds(tests, pings, interval_s) + PHASE_MARGIN_S


def phase_seconds(
    tests: Sequence[tuple[str, str]], pings: int, interval_s: float, controller_rtt_ms: float = 0.0
) -> float:
    """The expected wall time of the phase's playbook: start every agent, probe, collect."""
    hosts = len(peers_by_host(tests))
    return (
        launch_seconds(hosts, controller_rtt_ms)
        + probing_seconds(tests, pings, interval_s)
        + collect_seconds(hosts, controller_rtt_ms)
    )


def phase_parts(
    tests: Sequence[tuple[str, str]],
    hosts: Mapping[str, Host],
    pings: int,
    interval_s: float,
) -> dict[str, dict[str, Any]]:
    """{inventory host: its part}: the peers it probes and how."""
    return {
        safe_name(src): {
            "host": src,
            "pings": pings,
            "ping_interval_s": interval_s,
            "min_gap_s": MIN_GAP_S,
            "reply_wait_s": REPLY_WAIT_S,
            "peers": [{"name": dst, "address": hosts[dst].address} for dst in dsts],
        }
        for src, dsts in peers_by_host(tests).items()
    }


def out_prefix(number: int) -> str:
    """The start of each host's document file in round `number` (then the inventory
    name, `.json`): emulated hosts share the agent's folder."""
    return f"phase-{number:03d}-"


def write_parts(folder: Path, parts: Mapping[str, dict[str, Any]]) -> Path:
    """Each host's part in a file of its own, `<inventory host>.json` in `folder`, which
    the start task reads for its host alone (a file lookup, on the controller)."""
    folder.mkdir(parents=True, exist_ok=True)
    for host, part in parts.items():
        (folder / f"{host}.json").write_text(json.dumps(part, separators=(",", ":")))
    return folder


def phase_play(
    number: int,
    hosts: Sequence[str],
    parts_dir: Path,
    expected_s: float,
    controller_rtt_ms: float = 0.0,
) -> dict:
    """The phase as a play. Its variables are the same few for every host, whatever the
    catalog: each host's part is read from `parts_dir` by its own start task, so the
    controller never holds (nor templates, per host) every host's peers in one variable."""
    return {
        "name": f"Round {number}",
        "hosts": ":".join(sorted(hosts)),
        "gather_facts": False,
        "vars": {
            # ir_phase_parts_dir: a folder of the controller with <inventory host>.json
            "ir_phase_parts_dir": str(parts_dir),
            # ir_phase_out_prefix: each host's document is <agent dir>/<prefix><host>.json
            "ir_phase_out_prefix": out_prefix(number),
            # ir_phase_per_host_s: the time the controller takes to start one host's agent
            "ir_phase_per_host_s": PER_HOST_S,
            # ir_phase_start_margin_s: from the last host's task to its agent's start
            "ir_phase_start_margin_s": round(START_MARGIN_S + 2 * controller_rtt_ms / 1000, 3),
            # ir_round_timeout_s: Ansible's bound on the phase's task
            "ir_round_timeout_s": int(expected_s + REPLY_WAIT_S + 60),
        },
        "tasks": [
            {"ansible.builtin.import_tasks": str(paths.PLAYBOOKS / "tasks" / "ping_phase.yml")}
        ],
    }


def host_rows(
    number: int, src: str, dsts: Sequence[str], text: str | None, ctx: RowContext
) -> list[dict[str, Any]]:
    """The rows of one source host's tests, from its raw document (None: no file)."""
    doc, why = host_doc(text)
    rows = []
    for dst in dsts:
        base = _row_base(src, dst, ctx, number)
        if doc is None:
            rows.append({**base, "status": "failed", "error": _one_line(f"host {src} {why}")})
            continue
        peer = (doc.get("peers") or {}).get(dst)
        if doc.get("error"):
            error = _one_line(f"host {src}: {doc['error']}")
            rows.append({**base, "status": "failed", "error": error})
            continue
        if not isinstance(peer, dict):
            rows.append({**base, "status": "failed", "error": f"host {src} did not probe {dst}"})
            continue
        probe = str(doc.get("probe", "icmp"))
        summary = summarize_probes(int(peer.get("sent", 0)), list(peer.get("rtt_ms", [])), probe)
        rows.append(
            {
                **base,
                "started_utc": doc.get("started_utc", ""),
                **{k: summary.get(k) for k in PING_FIELDS},
                "status": "ok" if summary["ok"] else "failed",
                "error": _one_line(summary["error"]),
            }
        )
    return rows


def phase_rows(
    number: int,
    tests: Sequence[tuple[str, str]],
    texts: Mapping[str, str | None],
    ctx: RowContext,
    done: Mapping[str, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """One row per directed test, in the order of `tests`, from its source host's samples
    of its destination; `texts` maps region key -> the host's raw document (None: no
    file). `done`: the rows of the hosts whose documents were read already (region key
    -> host_rows), as the tracker makes them while the others are still collected."""
    done = done or {}
    by_test = {}
    for src, dsts in peers_by_host(tests).items():
        rows = done[src] if src in done else host_rows(number, src, dsts, texts.get(src), ctx)
        by_test.update({(src, dst): row for dst, row in zip(dsts, rows, strict=True)})
    return [by_test[(src, dst)] for src, dst in tests]


def samples_of(text: str | None) -> dict[str, list[float]]:
    """{peer: RTT samples in ms} of one host's ping-phase document (for history)."""
    try:
        doc = json.loads(text or "")
    except ValueError:
        return {}
    peers = doc.get("peers", {}) if isinstance(doc, dict) else {}
    return {name: list(p.get("rtt_ms", [])) for name, p in peers.items() if isinstance(p, dict)}
