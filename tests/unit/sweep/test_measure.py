"""The measure stage's Ansible inputs at full-catalog scale: one play per round, only the
round's hosts and parts, and a size that grows linearly with the number of tests."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import jinja2.defaults
import pytest

from orchestrator.core import paths
from orchestrator.model.catalog import load_catalog
from orchestrator.model.hosts import Host
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import TestParams, make_plan
from orchestrator.sweep import measure
from orchestrator.sweep.events import PlannedRound

FAST = TestParams(pings=5, duration_s=1, omit_s=0)


def playbook_for(n_regions: int, max_concurrent: int | None = None):
    plan = make_plan(
        load_catalog(),
        SelectionSpec(max_regions=n_regions, opt_in=True),  # the catalog's every region
        FAST,
        backend="local" if max_concurrent else "cloud",
        max_concurrent=max_concurrent,
    )
    hosts = {
        r.key: Host(
            name=r.key,
            cloud=r.cloud,
            region=r.id,
            address=f"198.18.0.{i + 10}",
            ssh_host=f"198.18.0.{i + 10}",
            ssh_user="root",
            ssh_port=22,
            machine_type="emulated",
            backend="local",
        )
        for i, r in enumerate(plan.selection.regions)
    }
    planned = [
        PlannedRound(n, measure.slot_plans(n, slots), 5.0)
        for n, slots in enumerate(plan.rounds, start=1)
    ]
    return plan, measure.rounds_playbook(planned, hosts, FAST)


@pytest.mark.parametrize("cap", [12, None])
def test_full_catalog_plays_hold_only_their_rounds_hosts_and_parts(cap):
    plan, book = playbook_for(77, cap)
    assert len(plan.selection.regions) == 77
    assert len(book) == len(plan.rounds)
    for n, (play, rnd) in enumerate(zip(book, plan.rounds, strict=True), start=1):
        hosts = play["hosts"].split(":")
        assert play["name"] == f"Round {n}"
        assert sorted(hosts) == sorted(play["vars"]["ir_parts"])
        assert len(hosts) == len(set(hosts)) == 2 * len(rnd)  # no host twice in a round
        task = play["tasks"][0]["ansible.builtin.import_tasks"]
        assert task == str(paths.PLAYBOOKS / "tasks" / "round.yml")
    tests = sum(len(slot.pairs) for rnd in plan.rounds for slot in rnd)
    assert tests == 77 * 76


@pytest.mark.slow
def test_the_playbook_grows_linearly_with_the_number_of_tests():
    sizes = {}
    for n in (10, 20, 40, 77):
        plan, book = playbook_for(n, 12)
        sizes[len(plan.selection.pairs)] = len(json.dumps(book))
    per_test = [size / tests for tests, size in sizes.items()]
    # bytes per test stay flat (a part per host per round): not the whole sweep per round
    assert max(per_test) / min(per_test) < 1.25, sizes
    # and the largest play is bounded by one round's hosts, not by the sweep
    _, book = playbook_for(77, 12)
    assert max(len(json.dumps(p)) for p in book) < 24 * 1000


# A worker's first render of round.yml, run in a fresh interpreter the way Ansible's parent
# runs it: the callback's playbook-start hook first (when `warm`), then the template. It
# prints the plugin modules the render itself imported: what each forked worker would load
# (and hold a private copy of) on its own.
RENDER_AS_A_WORKER = """
import json, sys
import yaml
from ansible.template import Templar, trust_as_template
sys.path.insert(0, "callback_plugins")
import ir_events
if sys.argv[1] == "warm":
    ir_events.CallbackModule().v2_playbook_on_start(None)
task = yaml.safe_load(open("tasks/round.yml"))[0]["ansible.builtin.raw"]
part = {"round": 1, "host": "aws:us-east-1", "role": "client", "port": 5201}
variables = {
    "ir_python": "/usr/bin/python3",
    "ir_agent_dir": "/tmp/agent dir",
    "ir_parts": {"aws_us-east-1": part},
    "inventory_hostname": "aws_us-east-1",
}
before = set(sys.modules)
command = Templar(loader=None, variables=variables).template(trust_as_template(task))
assert json.dumps(part) in command, command
print(json.dumps(sorted(m for m in set(sys.modules) - before if ".plugins." in m)))
"""


def _plugins_a_worker_loads(warm: bool) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", RENDER_AS_A_WORKER, "warm" if warm else "cold"],
        capture_output=True,
        text=True,
        check=True,
        cwd=paths.PLAYBOOKS,
    )
    return json.loads(out.stdout)


@pytest.mark.slow
def test_the_round_tasks_filters_are_loaded_before_ansible_forks_its_workers():
    # without the callback's hook, rendering the round task loads the filter plugins
    # (this checks that the check can fail); with it, a worker loads nothing of its own
    assert any(".plugins.filter." in m for m in _plugins_a_worker_loads(warm=False))
    assert _plugins_a_worker_loads(warm=True) == []


def test_every_ansible_filter_the_tasks_use_is_preloaded():
    sys.path.insert(0, str(paths.PLAYBOOKS / "callback_plugins"))
    try:
        import ir_events
    finally:
        sys.path.pop(0)
    used = set()
    for tasks in (paths.PLAYBOOKS / "tasks").glob("*.yml"):
        # filters inside the templates' {{ }} only: the shell's pipes (`|| exit 1`) are not
        for expression in re.findall(r"\{\{(.*?)\}\}", tasks.read_text(), re.S):
            used |= set(re.findall(r"(?<!\|)\|\s*([A-Za-z_]\w*)", expression))
    ansible_filters = used - set(jinja2.defaults.DEFAULT_FILTERS)
    assert ansible_filters  # to_json and quote at least
    assert {f"ansible.builtin.{f}" for f in ansible_filters} <= set(ir_events.TASK_FILTERS)


def test_the_retry_line_names_each_failed_test_and_why(tmp_path):
    from types import SimpleNamespace

    from orchestrator.plan.selection import select
    from orchestrator.results import files as store
    from orchestrator.results.schema import MEASUREMENT_COLUMNS

    catalog = load_catalog(paths.CATALOG)
    spec = SelectionSpec(regions=("aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"))
    pairs = select(catalog, spec).pairs

    def row(pair, status, error):
        (sc, sr), (dc, dr) = (k.split(":") for k in pair.key)
        return {c: "" for c in MEASUREMENT_COLUMNS} | {
            "src_cloud": sc, "src_region": sr, "dst_cloud": dc, "dst_region": dr,
            "status": status, "error": error,
        }  # fmt: skip

    rows = [row(pairs[0], "peer-late", "the server\n never came"), row(pairs[1], "failed", "")]
    store.write_atomic(tmp_path / store.MEASUREMENTS_FILE, store.csv_text(rows))
    sweep = SimpleNamespace(dir=tmp_path)
    said = measure.why_failed(sweep, {"single_stream": list(pairs[:3])})
    a, b, c = (f"{p.key[0]} -> {p.key[1]}" for p in pairs[:3])
    assert said == (f"{a} (peer-late: the server never came); {b} (failed); {c} (no result)"), said
    many = measure.why_failed(sweep, {"single_stream": list(pairs)})  # 6 tests
    assert many.count(" -> ") == measure.NAMED_FAILURES and many.endswith(
        "; and 1 more (measurements.csv)"
    )
    both = measure.why_failed(sweep, {"single_stream": list(pairs[:1]), "capacity": []})
    assert both == f"{a} (single_stream) (peer-late: the server never came)"
