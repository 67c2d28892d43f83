"""The measure stage's Ansible inputs at full-catalog scale: one play per round, only the
round's hosts and parts, and a size that grows linearly with the number of tests."""

from __future__ import annotations

import json

import pytest

from orchestrator import measure, paths
from orchestrator.catalog import load_catalog
from orchestrator.hosts import Host
from orchestrator.plan import TestParams, make_plan
from orchestrator.rounds import PlannedRound
from orchestrator.selection import SelectionSpec

FAST = TestParams(pings=5, duration_s=1, omit_s=0)


def playbook_for(n_regions: int, max_concurrent: int | None = None):
    plan = make_plan(
        load_catalog(),
        SelectionSpec(max_regions=n_regions),
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
