"""sweep.json as types: real records of the previous format load and are written back
byte for byte, unknown keys survive, and a new record keeps the keys and order the
untyped record wrote."""

from __future__ import annotations

import dataclasses
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from orchestrator.core.errors import UserError
from orchestrator.model.catalog import load_catalog
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import make_plan
from orchestrator.results import CloudOptions
from orchestrator.results import files as store
from orchestrator.results.record import (
    NEW_KEYS,
    Owner,
    PlanRecord,
    ScheduleTrigger,
    Stage,
    StageStatus,
    SweepRecord,
    SweepStatus,
    read_record,
)
from orchestrator.results.schema import RESULTS_FORMAT_VERSION
from orchestrator.sweep.sweep_folder import create_sweep, open_sweep

RECORDS = Path(__file__).resolve().parents[2] / "data" / "records"
FIXTURES = sorted(RECORDS.glob("*.json"))


def test_the_fixtures_are_there():
    names = {p.stem for p in FIXTURES}
    assert names >= {"sweep-done", "sweep-abandoned-failed", "sweep-latency-only", "study-tcp"}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_a_record_of_the_previous_format_round_trips_byte_for_byte(path):
    text = path.read_text()
    doc = json.loads(text)
    record = SweepRecord.from_json(doc)
    assert record.to_json() == doc
    assert list(record.to_json()) == list(doc)  # the keys in their order
    assert json.dumps(record.to_json(), indent=1) + "\n" == text


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_a_sweep_of_the_previous_format_opens_and_saves_unchanged(path, tmp_path):
    doc = json.loads(path.read_text())
    folder = tmp_path / doc["sweep_id"]
    folder.mkdir()
    shutil.copy(path, folder / store.SWEEP_FILE)
    sweep = open_sweep(doc["sweep_id"], tmp_path)
    assert isinstance(sweep.record.status, SweepStatus)
    assert set(sweep.regions()) == {r["key"] for r in doc["plan"]["regions"]}
    assert [p.key for p in sweep.planned_pairs()] == [
        (p["src"], p["dst"]) for p in doc["plan"]["pairs"]
    ]
    sweep.save()
    assert (folder / store.SWEEP_FILE).read_text() == path.read_text()


def test_the_typed_fields_hold_what_the_file_says():
    done = SweepRecord.from_json(json.loads((RECORDS / "sweep-done.json").read_text()))
    assert done.status is SweepStatus.DONE and done.status == "done"
    assert done.backend == "local" and done.emulated is True
    assert set(done.stages) == {"provision", "prepare", "measure", "collect", "teardown", "report"}
    assert all(s.status is StageStatus.DONE and s.wall_s is not None for s in done.stages.values())
    assert done.plan.estimate.wall_s > 0 and done.plan.estimate.cost_usd == 0
    assert len(done.plan.pairs) == 6 and all(p.distance_km > 0 for p in done.plan.pairs)
    assert done.owner is not None and done.owner.pid > 0
    assert done.emulation is not None and isinstance(done.emulation.seed, int)
    assert done.placement is not None
    assert {p.machine_type for p in done.placement.values()} == {done.plan.emulated_type}
    assert done.wall_s is not None and done.ended_utc and done.abandoned_utc is None
    assert done.extra == {}  # every key of today's records is a field
    phase, *rounds = done.rounds
    assert phase.ping_phase and phase.round == 1 and len(phase.tests or []) == 6
    assert rounds and all(not r.ping_phase and r.slots and r.kind == "main" for r in rounds)
    assert sum(r.tests_ok or 0 for r in rounds) == 6 and all(not r.extra for r in done.rounds)

    failed = SweepRecord.from_json(
        json.loads((RECORDS / "sweep-abandoned-failed.json").read_text())
    )
    assert failed.status is SweepStatus.FAILED and failed.abandoned_utc
    assert failed.stages["measure"].status is StageStatus.RUNNING
    assert failed.stages["measure"].ended_utc is None
    assert failed.stages["teardown"].status is StageStatus.DONE

    ping = SweepRecord.from_json(json.loads((RECORDS / "sweep-latency-only.json").read_text()))
    assert ping.params.tests == ("ping",) and ping.plan.timings == {}
    assert ping.params.measures == ("single_stream",)  # written before the measures
    assert done.selection is not None and done.selection.opt_in is False  # and opt_in
    assert done.cloud_options is None

    study = SweepRecord.from_json(json.loads((RECORDS / "study-tcp.json").read_text()))
    assert study.study is not None and study.study.kind == "tcp"
    assert study.study.variants == ["default", "p4"] and study.study.repeats == 3
    assert study.study.pairs and study.study.rounds and study.study.extra == {}
    assert study.study.estimate is not None and study.study.restore is None  # none tuned


def test_a_record_the_typed_code_wrote_loads_its_restore_as_a_field():
    """sweep-capacity-typed.json was written while `restore` sat in `extra`: it reads into
    the field, and is written back in its place."""
    text = (RECORDS / "sweep-capacity-typed.json").read_text()
    record = read_record(RECORDS / "sweep-capacity-typed.json")
    assert record is not None and record.status is SweepStatus.DONE
    assert record.restore is not None and set(record.restore) == {"aws:us-east-1", "aws:eu-west-1"}
    assert "restore" not in record.extra
    assert json.dumps(record.to_json(), indent=1) + "\n" == text


def test_unknown_keys_survive_a_load_and_save_in_their_place():
    doc = json.loads((RECORDS / "sweep-done.json").read_text())
    future = {"a_later_key": {"x": 1}, **doc, "at_the_end": [1, 2]}
    future["plan"] = {**future["plan"], "plan_extra": "kept"}
    future["plan"]["estimate"] = {"est_extra": 1.5, **future["plan"]["estimate"]}
    future["plan"]["pairs"][0] = {**future["plan"]["pairs"][0], "pair_extra": True}
    future["stages"]["measure"] = {**future["stages"]["measure"], "stage_extra": None}
    future["emulation"] = {**future["emulation"], "emu_extra": 0}
    record = SweepRecord.from_json(future)
    assert record.extra == {"a_later_key": {"x": 1}, "at_the_end": [1, 2]}
    assert record.stages["measure"].extra == {"stage_extra": None}
    out = record.to_json()
    assert json.dumps(out) == json.dumps(future)  # values and the order of every key


def test_a_null_a_record_held_is_written_back_and_an_unset_field_is_not():
    doc = json.loads((RECORDS / "sweep-done.json").read_text())
    assert "stopped" not in doc and doc["cloud_options"] is None
    record = SweepRecord.from_json({**doc, "stopped": None})
    assert record.to_json()["stopped"] is None and record.to_json()["cloud_options"] is None
    assert "stopped" not in SweepRecord.from_json(doc).to_json()


def test_fields_set_later_are_written_after_the_loaded_keys():
    doc = json.loads((RECORDS / "sweep-abandoned-failed.json").read_text())
    record = SweepRecord.from_json(doc)
    record.stopped = "stopped after round 2"
    record.status = SweepStatus.TORN_DOWN
    out = record.to_json()
    assert list(out) == [*doc, "stopped"]
    assert out["status"] == "torn down" and type(out["status"]) is str


def test_a_new_record_has_the_keys_and_order_the_untyped_one_wrote(tmp_path):
    spec = SelectionSpec(regions=("aws:us-east-1", "gcp:us-east4"))
    sweep = create_sweep(make_plan(load_catalog(), spec, backend="local"), spec, tmp_path)
    written = json.loads((sweep.dir / store.SWEEP_FILE).read_text())
    assert tuple(written) == NEW_KEYS
    old = json.loads((RECORDS / "sweep-done.json").read_text())
    assert list(written) == list(old)[: len(NEW_KEYS)]
    # the plan's keys since that record was written come after its own
    assert list(written["plan"]) == [*old["plan"], "retry_rounds_max"]
    assert list(written["plan"]["estimate"]) == list(old["plan"]["estimate"])
    assert written["status"] == "planned" and written["cloud_options"] is None
    assert written["format_version"] == RESULTS_FORMAT_VERSION
    assert written["stages"] == {} and written["rounds"] == [] and written["measure_runs"] == []
    with sweep.stage("provision"):
        pass
    sweep.record.owner = Owner(4321, 99)
    sweep.save()
    again = json.loads((sweep.dir / store.SWEEP_FILE).read_text())
    assert list(again["stages"]["provision"]) == ["started_utc", "status", "ended_utc", "wall_s"]
    assert again["stages"]["provision"]["status"] == "done"
    assert (again["owner_pid"], again["owner_start_ticks"]) == (4321, 99)
    assert list(again)[-2:] == ["owner_pid", "owner_start_ticks"]


def test_a_new_record_keeps_its_selection_parameters_and_cloud_options_as_they_were_written(
    tmp_path,
):
    """The typed fields are written as the dicts the untyped record wrote (`asdict` of
    the spec and the cloud options, `TestParams.to_dict`), and read back equal."""
    spec = SelectionSpec(regions=("aws:us-east-1", "gcp:us-east4"), cloud_pairs=(("aws", "gcp"),))
    plan = make_plan(load_catalog(), spec, backend="local")
    options = CloudOptions(operator_cidr="198.51.100.7/32", zones={"aws:us-east-1": "use1-az4"})
    sweep = create_sweep(plan, spec, tmp_path, cloud_options=options)
    text = (sweep.dir / store.SWEEP_FILE).read_text()
    written = json.loads(text)
    assert written["selection"] == json.loads(json.dumps(dataclasses.asdict(spec)))
    assert written["params"] == json.loads(json.dumps(plan.params.to_dict()))
    assert written["cloud_options"] == dataclasses.asdict(options)
    record = open_sweep(sweep.id, tmp_path).record
    assert record.selection == spec and record.params == plan.params
    assert record.cloud_options == options
    open_sweep(sweep.id, tmp_path).save()
    assert (sweep.dir / store.SWEEP_FILE).read_text() == text


def test_a_typed_field_is_written_as_read_until_it_changes():
    doc = json.loads((RECORDS / "sweep-done.json").read_text())
    assert "measures" not in doc["params"] and "opt_in" not in doc["selection"]
    record = SweepRecord.from_json(doc)
    assert record.to_json()["params"] == doc["params"]
    record.params = dataclasses.replace(record.params, pings=3)
    assert record.to_json()["params"] == {
        **doc["params"],
        "pings": 3,
        "measures": ["single_stream"],
    }
    assert record.to_json()["selection"] == doc["selection"]  # unchanged: as it was read


def test_the_times_are_aware_utc_datetimes_read_once():
    doc = json.loads((RECORDS / "sweep-done.json").read_text())
    record = SweepRecord.from_json(doc)
    assert record.created_utc == datetime.fromisoformat(doc["created_utc"])
    assert record.created_utc.utcoffset() == timedelta(0)
    assert record.started_utc is not None and record.ended_utc is not None
    assert record.created_utc <= record.started_utc < record.ended_utc
    measure = record.stages["measure"]
    assert measure.started_utc is not None and measure.ended_utc is not None
    wall = (measure.ended_utc - measure.started_utc).total_seconds()
    assert wall == pytest.approx(doc["stages"]["measure"]["wall_s"], abs=0.1)
    assert all(isinstance(r.started_utc, datetime) for r in record.rounds)


def test_a_time_is_written_as_read_until_it_changes_then_as_a_stamp():
    doc = json.loads((RECORDS / "sweep-done.json").read_text())
    # a time an older or a hand-edited record kept in another ISO form keeps its text
    record = SweepRecord.from_json({**doc, "created_utc": "2026-11-22T03:30:00+02:00"})
    assert record.created_utc == datetime(2026, 11, 22, 1, 30, tzinfo=UTC)
    assert record.to_json()["created_utc"] == "2026-11-22T03:30:00+02:00"
    record.created_utc = datetime(2026, 11, 22, 1, 30, 0, 123999, tzinfo=UTC)
    assert record.to_json()["created_utc"] == "2026-11-22T01:30:00.123Z"
    record.stages["measure"].ended_utc = datetime(2026, 11, 23, tzinfo=UTC)
    assert record.to_json()["stages"]["measure"]["ended_utc"] == "2026-11-23T00:00:00.000Z"
    assert (
        record.to_json()["stages"]["measure"]["started_utc"]
        == (doc["stages"]["measure"]["started_utc"])
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"created_utc": "yesterday"}, "created_utc 'yesterday' is not a UTC time like"),
        ({"created_utc": None}, "created_utc 'None' is not a UTC time"),
        ({"ended_utc": 1795397400}, "ended_utc '1795397400' is not a UTC time"),
    ],
)
def test_a_time_that_is_not_one_is_a_one_line_error_naming_it(change, message):
    doc = json.loads((RECORDS / "sweep-done.json").read_text())
    with pytest.raises(UserError, match=message) as caught:
        SweepRecord.from_json({**doc, **change}, "x/sweep.json")
    assert str(caught.value).startswith("x/sweep.json: not a sweep record (")
    assert "\n" not in str(caught.value)
    stages = {**doc["stages"], "measure": {**doc["stages"]["measure"], "started_utc": "soon"}}
    with pytest.raises(UserError, match="started_utc 'soon' is not a UTC time"):
        SweepRecord.from_json({**doc, "stages": stages})


def test_a_failed_stage_keeps_its_error(tmp_path):
    spec = SelectionSpec(regions=("aws:us-east-1", "gcp:us-east4"))
    sweep = create_sweep(make_plan(load_catalog(), spec, backend="local"), spec, tmp_path)
    with pytest.raises(RuntimeError), sweep.stage("prepare"):
        raise RuntimeError("no ssh")
    stage = open_sweep(sweep.id, tmp_path).record.stages["prepare"]
    assert stage == Stage(
        started_utc=stage.started_utc,
        status=StageStatus.FAILED,
        ended_utc=stage.ended_utc,
        wall_s=stage.wall_s,
        error="no ssh",
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"status": "exploded"}, "sweep status 'exploded' is not one of planned,"),
        ({"plan": None}, "not a sweep record"),
        (
            {"stages": {"provision": {"started_utc": "2026-11-22T01:00:00.000Z"}}},
            "not a sweep record",
        ),  # a stage needs its status, not its times
        ({"params": {"pings": 0}}, "not a sweep record (params: --pings 0: ping sends 1 to"),
        ({"params": {"pingz": 3}}, "not a sweep record (params: "),
        ({"selection": "all"}, 'selection: "all" is not dict[str, Any] | None'),
        ({"cloud_options": [1]}, "cloud_options: [1] is not dict[str, Any] | None"),
    ],
)
def test_a_damaged_record_is_a_one_line_error(change, message):
    doc = {**json.loads((RECORDS / "sweep-done.json").read_text()), **change}
    with pytest.raises(UserError) as e:
        SweepRecord.from_json(doc, "results/x/sweep.json")
    assert str(e.value).startswith("results/x/sweep.json: ") and message in str(e.value)
    assert "\n" not in str(e.value)


def test_read_record_skips_what_it_cannot_read(tmp_path):
    (tmp_path / "a.json").write_text("{not json")
    (tmp_path / "b.json").write_text(json.dumps({"sweep_id": "x", "status": "done"}))
    assert read_record(tmp_path / "a.json") is None
    assert read_record(tmp_path / "b.json") is None
    assert read_record(tmp_path / "missing.json") is None
    assert read_record(RECORDS / "sweep-done.json") is not None


def test_the_statuses_that_end_and_finish_a_sweep():
    assert {s for s in SweepStatus if s.ended} == {"done", "interrupted", "failed"}
    finished = {s.value for s in SweepStatus if s.finished}
    assert finished == {"done", "interrupted", "failed", "torn down", "planned"}
    assert (
        PlanRecord.from_json({"backend": "aws", "estimate": {"wall_s": 1.0}}).estimate.cost_usd == 0
    )


def test_a_scheduled_ticks_trigger_is_typed_and_written_back_as_read():
    doc = json.loads((RECORDS / "sweep-done.json").read_text())
    trigger = {"profile": "hourly", "trigger": "timer", "scheduled_utc": "2026-11-22T01:00:00Z",
               "hour_utc": 1}  # fmt: skip
    record = SweepRecord.from_json({**doc, "schedule": trigger})
    due = datetime(2026, 11, 22, 1, tzinfo=UTC)
    assert record.schedule == ScheduleTrigger("hourly", "timer", due, 1)
    assert record.to_json()["schedule"] == trigger
    record.schedule = ScheduleTrigger("hourly", "timer", due + timedelta(hours=1), 1)
    assert record.to_json()["schedule"]["scheduled_utc"] == "2026-11-22T02:00:00Z"  # to the s
    by_hand = SweepRecord.from_json(doc)
    by_hand.add({"schedule": {"profile": "p", "trigger": "hand", "scheduled_utc": None}})
    assert by_hand.schedule is not None and by_hand.schedule.scheduled_utc is None
    with pytest.raises(UserError, match="not a sweep record"):
        SweepRecord.from_json({**doc, "schedule": {"trigger": "timer"}})  # no profile
