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

from orchestrator.core import PLAYBOOKS
from orchestrator.model import Host
from orchestrator.plan import MIN_GAP_S, PER_HOST_S, REPLY_WAIT_S, START_MARGIN_S
from orchestrator.results import peers_by_host, safe_name


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
    playbooks: Path | None = None,
) -> dict:
    """The phase as a play. Its variables are the same few for every host, whatever the
    catalog: each host's part is read from `parts_dir` by its own start task, so the
    controller never holds (nor templates, per host) every host's peers in one variable.
    `parts_dir` and `playbooks` are paths as Ansible is shown them (a `View`'s)."""
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
            {
                "ansible.builtin.import_tasks": str(
                    (playbooks or PLAYBOOKS) / "tasks" / "ping_phase.yml"
                )
            }
        ],
    }
