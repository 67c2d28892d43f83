"""Ansible stdout callback: one JSON line per event, read by orchestrator.drivers.ansible.

The orchestrator turns these into raw files, rows and progress while the
playbook still runs, so a finished round is on disk before the next starts.
Enabled only by the orchestrator (ANSIBLE_STDOUT_CALLBACK=ir_events).

It also loads, in the Ansible parent before it forks any worker, the filter plugins the
tasks' templates use: a worker that loads them itself holds its own copy of their
modules (about 2 MiB each, and a round holds 24 workers at once, 76 with the cap lifted).
"""

from __future__ import annotations

import json
import sys
import time

from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import filter_loader

DOCUMENTATION = """
    name: ir_events
    type: stdout
    short_description: one JSON line per play and task start, host result and the final stats
    description:
      - Machine-readable event stream for the interregion orchestrator.
"""

# The Ansible filters that playbooks/tasks/*.yml apply (Jinja's own filters need no loading)
TASK_FILTERS = ("ansible.builtin.to_json", "ansible.builtin.quote")


def load_task_filters():
    """Load the tasks' filter plugins into this process, so forked workers share them."""
    for name in TASK_FILTERS:
        if filter_loader.get(name) is None:
            raise RuntimeError(f"filter plugin {name} not found")


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "ir_events"

    def _emit(self, event, **fields):
        fields["event"] = event
        fields["time"] = time.time()
        sys.stdout.write(json.dumps(fields, default=str) + "\n")
        sys.stdout.flush()

    def _result(self, event, result):
        r = result._result
        self._emit(
            event,
            host=result._host.get_name(),
            task=result._task.get_name(),
            stdout=r.get("stdout", ""),
            stderr=r.get("stderr", ""),
            rc=r.get("rc"),
            msg=str(r.get("msg", "")),
        )

    def v2_playbook_on_start(self, playbook):
        load_task_filters()

    def v2_playbook_on_play_start(self, play):
        self._emit("play", name=play.get_name())

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._emit("task", task=task.get_name())

    def v2_runner_on_ok(self, result):
        self._result("ok", result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result("failed", result)

    def v2_runner_on_unreachable(self, result):
        self._result("unreachable", result)

    def v2_runner_on_skipped(self, result):
        pass  # a host without a part in a round: nothing to record

    def v2_playbook_on_stats(self, stats):
        hosts = sorted(stats.processed.keys())
        self._emit("stats", summary={h: stats.summarize(h) for h in hosts})
