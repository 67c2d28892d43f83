"""Putting back the TCP settings of tuned tests (the TCP study's tuned variant, a sweep's
capacity measure): the agent saves what it found before a tuned test and restores it
after (playbooks/files/ir_agent.py `--tune`/`--restore`); a restore play over every
host follows the rounds, also after an interrupt or an error, for a round cut short.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from orchestrator.drivers import deferred, plain_view, run_playbook, write_playbook
from orchestrator.model import Host
from orchestrator.plan import PREPARE_FORKS
from orchestrator.results import safe_name
from orchestrator.sweep import stages
from orchestrator.sweep.sweep_folder import Sweep

RESTORE_TASK = "Tuned TCP settings are restored"


def restore_play() -> list[dict[str, Any]]:
    agent = "{{ ir_python | quote }} {{ ir_agent_dir | quote }}/ir_agent.py --restore"
    return [
        {
            "name": "Hosts have their own TCP settings back",
            "hosts": "all",
            "gather_facts": False,
            "tasks": [
                {
                    "name": RESTORE_TASK,
                    "ansible.builtin.raw": f"{agent} {{{{ inventory_hostname | quote }}}}",
                    "changed_when": False,
                }
            ],
        }
    ]


def restore_hosts(sweep: Sweep, hosts: Sequence[Host], book_name: str) -> dict[str, Any]:
    """Every host gets back the TCP settings a tuned test changed (a no-op where nothing
    is left changed); runs to its end through interrupts, which are honoured after it.
    Returns what each host said; the playbook is state/`book_name`."""
    by_alias = {safe_name(h.name): h.name for h in hosts}
    found: dict[str, Any] = {}

    def on_event(event: dict[str, Any]) -> None:
        if not str(event.get("task", "")).startswith(RESTORE_TASK):
            return
        name = by_alias.get(str(event.get("host", "")), str(event.get("host", "")))
        if event["event"] == "ok":
            try:
                found[name] = json.loads(event.get("stdout", ""))
            except ValueError:
                found[name] = {"error": str(event.get("stdout", ""))[:200]}
        elif event["event"] in ("failed", "unreachable"):
            found[name] = {"error": str(event.get("msg", ""))[:200]}

    with deferred():
        state = stages.state_folder(sweep)
        book = state / book_name
        write_playbook(book, restore_play())
        with plain_view(state) as view:
            run_playbook(
                view.state / book_name,
                stages.write_sweep_inventory(sweep, hosts, view),
                on_event=on_event,
                log_path=state / "ansible-restore.log",
                forks=min(len(hosts), PREPARE_FORKS),
                view=view,
            )
    failed = sorted(n for n, r in found.items() if "error" in r)
    if failed:
        sweep.log(f"warning: could not restore the TCP settings of {', '.join(failed)}")
    restored = sorted(n for n, r in found.items() if r.get("restored"))
    if restored:
        sweep.log(f"restored TCP settings left tuned on {', '.join(restored)}")
    return found
