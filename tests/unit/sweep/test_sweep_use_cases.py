"""`interregion sweep`'s use cases called without click: the questions asked before
provisioning, the run's own checks, a sweep planned and made (and nothing made when its
announcement refuses it), cloud flags refused on the emulated cloud; the stage commands'
(prepare, measure, collect) on a sweep id."""

from __future__ import annotations

import json
import math

import pytest
from sweep_support import SLOT, A, B, client_doc, server_doc

from orchestrator.clouds.cloud_flags import CloudFlags
from orchestrator.core.errors import UserError
from orchestrator.plan.options import RunOptions
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import TestParams
from orchestrator.results import files as store
from orchestrator.results.record import RoundEntry
from orchestrator.sweep import launch
from orchestrator.sweep.launch import Question, SweepRequest, SweepRun

CLOSE = ("aws:us-east-1", "aws:us-east-2", "gcp:us-east4")
PINGS = SweepRequest(selection=SelectionSpec(regions=CLOSE), params=TestParams(tests=("ping",)))


def test_nothing_is_asked_within_the_budget_and_the_size():
    assert launch.questions(1.0, 5.0, 16, 600.0) == []


def test_a_cost_above_the_budget_asks_and_says_what_to_do_off_a_terminal():
    (q,) = launch.questions(7.5, 5.0, 2, 60.0)
    assert q == Question(
        "estimated cost $7.50 is above the budget; go ahead?",
        "estimated cost $7.50 is above --budget-usd 5: pass --yes to accept it or raise "
        "--budget-usd",
    )


def test_a_big_sweep_asks_once_naming_both_what_makes_it_big():
    (q,) = launch.questions(0.0, 5.0, 17, 601.0)
    assert q.ask == "this sweep starts 17 hosts and about 10 min of measuring; go ahead?"
    assert q.refuse.startswith("this sweep starts 17 hosts and about 10 min of measuring (more")
    assert launch.big_run(16, 600.0) == "" and launch.big_run(2, 3600.0) == (
        "about 60 min of measuring"
    )


def test_both_questions_come_cost_first():
    asked = launch.questions(9.0, 5.0, 20, 60.0)
    assert [q.ask.split()[0] for q in asked] == ["estimated", "this"]


def test_the_questions_are_put_in_order_and_a_no_or_no_terminal_stops_at_once():
    asked = launch.questions(9.0, 5.0, 20, 60.0)
    put: list[str] = []
    launch.answer(asked, lambda q: put.append(q) or True)
    assert put == [q.ask for q in asked]
    put.clear()
    with pytest.raises(UserError, match=r"^not confirmed: nothing was provisioned$"):
        launch.answer(asked, lambda q: put.append(q) or False)
    assert put == [asked[0].ask]
    with pytest.raises(UserError) as refused:
        launch.answer(asked, None)
    assert str(refused.value) == asked[0].refuse
    launch.answer([], None)  # nothing to ask: nothing refused


@pytest.mark.parametrize("budget", [0.0, -1.0, math.nan])
def test_a_budget_nothing_is_within_is_refused(tmp_path, budget):
    with pytest.raises(UserError, match=r"--budget-usd .*: must be above 0"):
        SweepRun(tmp_path, budget)


def test_a_plan_only_sweep_is_announced_then_made(tmp_path):
    announced, notes = [], []
    done = launch.run_new(PINGS, SweepRun(tmp_path / "r"), announce=announced.append,
                          note=notes.append, say=notes.append, plan_only=True)  # fmt: skip
    (plan,) = announced
    assert {r.key for r in plan.selection.regions} == set(CLOSE)
    assert done.failed_first == 0 and (done.sweep.dir / "sweep.json").is_file()
    assert notes == [f"sweep {done.sweep.id}: {done.sweep.dir}"]


def test_a_refused_announcement_makes_nothing(tmp_path):
    def refuse(plan):
        raise UserError(launch.NOT_CONFIRMED)

    with pytest.raises(UserError, match="nothing was provisioned"):
        launch.run_new(PINGS, SweepRun(tmp_path / "r"), announce=refuse, note=print, say=print)
    assert not (tmp_path / "r").exists()


def test_a_results_folder_ssh_or_ansible_would_expand_is_refused_by_the_run_itself(tmp_path):
    with pytest.raises(UserError, match="would expand"):
        SweepRun(tmp_path / "a${HOME}b")
    assert list(tmp_path.iterdir()) == []


def test_a_resumed_sweep_refuses_a_new_emulation_before_it_reads_anything(tmp_path):
    asked: list[object] = []
    with pytest.raises(UserError, match="keeps the emulation it recorded"):
        launch.resume("20261122T0130Z-3fa2", SweepRun(tmp_path / "r"), None, launch.Emulation(3),
                      ask=asked.append, note=print, say=print)  # fmt: skip
    assert asked == [] and not (tmp_path / "r").exists()


def test_price_emulated_is_refused_on_a_cloud_before_any_plan(tmp_path):
    request = SweepRequest(selection=SelectionSpec(regions=CLOSE), run=RunOptions(backend="aws"))
    announced: list[object] = []
    with pytest.raises(UserError, match="--price-emulated applies to a new sweep on --backend"):
        launch.run_new(request, SweepRun(tmp_path, price_emulated=True),
                       announce=announced.append, note=print, say=print)  # fmt: skip
    assert announced == []


def test_cloud_flags_given_again_are_refused_on_the_emulated_cloud(tmp_path):
    done = launch.run_new(PINGS, SweepRun(tmp_path), announce=lambda plan: None, note=print,
                          say=print, plan_only=True)  # fmt: skip
    launch.replace_cloud_options(done.sweep, None)  # none given: nothing to replace
    with pytest.raises(UserError, match="runs on the emulated cloud: cloud flags do not apply"):
        launch.replace_cloud_options(done.sweep, CloudFlags(ttl="2h"))
    with pytest.raises(UserError, match="runs on the emulated cloud"):
        launch.provision(done.sweep.id, tmp_path, CloudFlags(ttl="2h"))


def test_collect_on_a_sweep_id_rebuilds_its_rows_from_raw(tmp_path):
    request = SweepRequest(selection=SelectionSpec(regions=(A, B)))
    done = launch.run_new(request, SweepRun(tmp_path), announce=lambda plan: None, note=print,
                          say=print, plan_only=True)  # fmt: skip
    run = done.sweep
    run.record.rounds = [RoundEntry(1, "main", [SLOT.to_dict()])]
    run.save()
    store.write_atomic(store.raw_path(run.dir, 1, A), json.dumps(client_doc()))
    store.write_atomic(store.raw_path(run.dir, 1, B), json.dumps(server_doc()))
    rows = launch.collect(run.id, tmp_path)
    assert [r["status"] for r in rows] == ["ok", "ok"]
    written = store.read_rows(run.dir / store.MEASUREMENTS_FILE)
    assert [(r["sweep_id"], r["status"]) for r in written] == [(run.id, "ok")] * 2
    store.raw_path(run.dir, 1, B).unlink()  # an ok direction lost: refused without force
    with pytest.raises(UserError, match="pass --force"):
        launch.collect(run.id, tmp_path)
    forced = launch.collect(run.id, tmp_path, force=True)
    assert sorted(r["status"] for r in forced) == ["failed", "ok"]


def test_prepare_and_measure_of_a_sweep_without_hosts_say_to_provision(tmp_path):
    done = launch.run_new(PINGS, SweepRun(tmp_path), announce=lambda plan: None, note=print,
                          say=print, plan_only=True)  # fmt: skip
    provision = f"run 'interregion provision --sweep {done.sweep.id}"
    with pytest.raises(UserError, match=provision):
        launch.prepare(done.sweep.id, tmp_path)
    with pytest.raises(UserError, match=provision):
        launch.measure_sweep(done.sweep.id, tmp_path)
    assert launch.collect(done.sweep.id, tmp_path) == []  # nothing measured: no rows


@pytest.mark.parametrize("stage", [launch.prepare, launch.measure_sweep, launch.collect])
def test_the_stage_commands_refuse_an_id_that_is_not_one(tmp_path, stage):
    with pytest.raises(UserError, match=r"'\.\./x' is not of the form 20261122T0130Z-3fa2"):
        stage("../x", tmp_path)
    assert list(tmp_path.iterdir()) == []
