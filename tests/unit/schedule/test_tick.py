"""A tick's decisions: budgets (per run and per month, from actual bytes), retention, ledger."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta

import pytest

from orchestrator.core.times import stamp, utc_now
from orchestrator.model.catalog import load_catalog
from orchestrator.plan.pricing import load_pricing
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.spend import over_budget, row_bytes, sweep_spend
from orchestrator.plan.sweep_plan import TestParams, make_plan, slot_seconds
from orchestrator.results import RESULTS_FORMAT_VERSION
from orchestrator.results import files as store
from orchestrator.results.record import SweepStatus
from orchestrator.results.schema import PING_PACKET_BYTES
from orchestrator.schedule import ledger
from orchestrator.schedule.profiles import parse_profile
from orchestrator.schedule.retention import apply_retention
from orchestrator.schedule.tick import budget_problem, run_tick, sweep_outcome

AWS_PAIR = "aws:us-east-1,aws:eu-west-1"


def _profile(**settings):
    base = {
        "every": "PT6H",
        "regions": AWS_PAIR,
        "backend": "aws",
        "budget_usd": 5,
        "budget_usd_month": 50,
    }
    return parse_profile("p", {**base, **settings}, None)


def test_a_run_over_its_budget_is_skipped_and_recorded(tmp_path):
    profile = _profile(budget_usd=0.01)
    now = datetime(2026, 11, 23, 6, 4, tzinfo=UTC)
    record = run_tick(profile, tmp_path, now=now, log=lambda _m: None)
    assert record["outcome"] == "skipped-budget"
    assert "budget_usd 0.01" in record["reason"]
    assert record["scheduled_utc"] == "2026-11-23T06:00:00Z"
    assert record["estimated_cost_usd"] > 0.01 / profile.budget_margin
    assert ledger.read(tmp_path) == [record]
    assert not list(tmp_path.glob("*/sweep.json"))  # nothing planned into a folder


def test_the_months_actual_spend_counts_against_the_monthly_budget(tmp_path):
    profile = _profile(budget_usd_month=0.91)  # 0.90 spent + 0.0158 x 1.5 is over
    now = datetime(2026, 11, 23, 6, 4, tzinfo=UTC)
    spent = {
        "profile": "p",
        "outcome": "ok",
        "started_utc": "2026-11-02T00:01:00Z",
        "cost_usd": 0.9,
        "estimated_cost_usd": 0.1,
    }
    last_month = {**spent, "started_utc": "2026-10-31T23:59:00Z", "cost_usd": 100}
    other = {**spent, "profile": "q", "cost_usd": 100}
    for r in (spent, last_month, other):
        ledger.append(tmp_path, r)
    assert ledger.month_spend_usd(ledger.read(tmp_path), "p", now) == pytest.approx(0.9)
    record = run_tick(profile, tmp_path, now=now, log=lambda _m: None)
    assert record["outcome"] == "skipped-budget"
    assert "month-to-date spend $0.90" in record["reason"]


def test_budget_problem_applies_the_margin():
    profile = _profile(budget_usd=3, budget_margin=1.5)
    assert budget_problem(profile, 2.0, 0.0) is None  # 3.00 is not over 3
    assert budget_problem(profile, 2.01, 0.0)
    assert budget_problem(_profile(budget_usd_month=10), 1.0, 8.6)
    assert budget_problem(_profile(budget_usd_month=10), 1.0, 8.4) is None


def _row(src, dst, bytes_="", rtt="12.5", status="ok"):
    s_cloud, s_region = src.split(":")
    d_cloud, d_region = dst.split(":")
    return {
        "src_cloud": s_cloud,
        "src_region": s_region,
        "dst_cloud": d_cloud,
        "dst_region": d_region,
        "bytes": bytes_,
        "rtt_avg_ms": rtt,
        "status": status,
    }


def test_actual_spend_is_bytes_moved_at_list_prices():
    pricing = load_pricing()
    catalog = load_catalog()
    regions = {r.key: r for r in catalog.regions}
    use1, euw1, gcp = "aws:us-east-1", "aws:eu-west-1", "gcp:us-east4"
    rows = [
        _row(use1, euw1, bytes_="1000000000"),
        _row(euw1, use1, bytes_="", rtt=""),  # failed before it pinged: nothing moved
        _row(use1, gcp, bytes_="2000000000"),
    ]
    assert row_bytes(rows[0], 10) == 1_000_000_000 + 10 * PING_PACKET_BYTES
    assert row_bytes(rows[1], 10) == 0
    expected = (1e9 + 10 * PING_PACKET_BYTES) / 1e9 * pricing.egress_usd_per_gb(
        regions[use1], regions[euw1]
    ) + (2e9 + 10 * PING_PACKET_BYTES) / 1e9 * pricing.egress_usd_per_gb(
        regions[use1], regions[gcp]
    )
    assert expected > 0.1
    assert not over_budget(rows, pricing, expected + 0.001, regions=regions, pings=10)
    assert over_budget(rows, pricing, expected - 0.001, regions=regions, pings=10)
    assert over_budget(rows[:1], pricing, 10.0, regions=regions, pings=10, vm_usd_so_far=10.0)


def _sweep_folder(results, sweep_id, *, status="done", created=None, backend="aws", rows=()):
    folder = results / sweep_id
    (folder / "raw" / "round-001").mkdir(parents=True)
    (folder / "state").mkdir()
    (folder / "state" / "terraform.tfstate").write_text("{}")
    plan = make_plan(
        load_catalog(),
        SelectionSpec(regions=tuple(AWS_PAIR.split(","))),
        TestParams(pings=10),
        backend=backend,
    )
    record = {
        "format_version": RESULTS_FORMAT_VERSION,
        "sweep_id": sweep_id,
        "status": status,
        "backend": backend,
        "created_utc": created or stamp(utc_now()),
        "params": plan.params.to_dict(),
        "plan": plan.to_json(),
        "wall_s": 3600.0,
    }
    (folder / "sweep.json").write_text(json.dumps(record))
    store.write_rows(folder, [])
    return folder


def test_sweep_spend_adds_the_vms_hours(tmp_path):
    folder = _sweep_folder(tmp_path, "20261101T0000Z-0001")
    pricing = load_pricing()
    spent = sweep_spend(folder, pricing)
    assert spent.bytes == 0 and spent.egress_usd == 0
    assert spent.vm_usd == pytest.approx(2 * pricing.clouds["aws"].vm_usd_per_hour)
    local = _sweep_folder(tmp_path, "20261101T0000Z-0002", backend="local")
    assert sweep_spend(local, pricing).cost_usd == 0


def test_retention_deletes_raw_and_state_of_old_finished_sweeps_only(tmp_path):
    now = datetime(2026, 11, 23, tzinfo=UTC)
    old = (now - timedelta(days=31)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    recent = (now - timedelta(days=29)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    expired = _sweep_folder(tmp_path, "20261020T0000Z-0001", created=old)
    kept_new = _sweep_folder(tmp_path, "20261024T0000Z-0002", created=recent)
    running = _sweep_folder(tmp_path, "20261020T0000Z-0003", created=old, status="measuring")
    staged = _sweep_folder(tmp_path, "20261020T0000Z-0004", created=old, status="provisioned")
    deleted = apply_retention(tmp_path, 30, now)
    assert sorted(deleted) == [expired / "raw", expired / "state"]
    assert sorted(p.name for p in expired.iterdir()) == [
        "measurements.csv",
        "measurements.plain.json",  # its writer's mark that it is plain: kept with it
        "sweep.json",
    ]
    for folder in (kept_new, running, staged):
        assert (folder / "raw" / "round-001").is_dir()
        assert (folder / "state" / "terraform.tfstate").is_file()
    assert apply_retention(tmp_path, 30, now) == []


def test_retention_keeps_a_sweep_whose_record_cannot_be_read_and_says_so(tmp_path):
    now = datetime(2026, 11, 23, tzinfo=UTC)
    old = (now - timedelta(days=31)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    broken = _sweep_folder(tmp_path, "20261020T0000Z-0001", created=old)
    (broken / "sweep.json").write_text("{not json")
    said: list[str] = []
    assert apply_retention(tmp_path, 30, now, said.append) == []
    assert (broken / "raw" / "round-001").is_dir()
    assert said == [
        "retention kept 20261020T0000Z-0001: its sweep.json cannot be read; repair it, "
        "or remove the folder once it is not running"
    ]


def test_sweep_outcome_from_measurements(tmp_path):
    folder = _sweep_folder(tmp_path, "20261101T0000Z-0001")
    ok = {**_row("aws:us-east-1", "aws:eu-west-1"), "round": 1}
    store.write_rows(folder, [ok])
    assert sweep_outcome(folder, SweepStatus.DONE, None)["outcome"] == "ok"
    bad = {**_row("aws:eu-west-1", "aws:us-east-1", status="timeout"), "round": 1}
    store.write_rows(folder, [ok, bad])
    assert sweep_outcome(folder, SweepStatus.DONE, None) == {
        "outcome": "partial",
        "reason": "1 of 2 tests failed",
        "tests_ok": 1,
        "tests_failed": 1,
    }
    assert sweep_outcome(folder, SweepStatus.FAILED, "boom")["outcome"] == "failed"
    ended = sweep_outcome(folder, SweepStatus.TORN_DOWN, None)
    assert (ended["outcome"], ended["reason"]) == ("failed", "sweep ended torn down")


def test_ledger_skips_a_torn_line_and_refuses_unknown_outcomes(tmp_path):
    ok = {"profile": "p", "outcome": "ok", "started_utc": "2026-11-25T06:00:00Z"}
    ledger.append(tmp_path, ok)
    with ledger.ledger_path(tmp_path).open("a") as f:
        f.write('{"profile": "p", "outc')
    assert ledger.read(tmp_path) == [ok]
    with pytest.raises(ValueError):
        ledger.append(tmp_path, {"profile": "p", "outcome": "maybe"})
    assert os.path.getsize(ledger.ledger_path(tmp_path)) > 0


def test_a_latency_only_plan_drops_iperf3_time_and_bytes():
    both = TestParams()
    ping = TestParams(tests="ping")
    assert ping.tests == ("ping",) and both.tests == ("ping", "throughput")
    assert slot_seconds(ping, 2, 100) == pytest.approx(
        both.pings * both.ping_interval_s + 0.1 + 1.0
    )
    spec = SelectionSpec(regions=(*AWS_PAIR.split(","), "gcp:us-east4"))
    catalog = load_catalog()
    full = make_plan(catalog, spec, both, backend="cloud").estimate
    lat = make_plan(catalog, spec, ping, backend="cloud").estimate
    assert lat.bytes == 6 * both.pings * PING_PACKET_BYTES
    assert lat.wall_s < full.wall_s / 2
    assert lat.egress_usd < full.egress_usd / 1000
    assert TestParams(**ping.to_dict()) == ping  # sweep.json round trip
    with pytest.raises(Exception, match="--tests"):
        TestParams(tests="bandwidth")


def test_a_throughput_only_plan_drops_the_pings_time_and_bytes():
    both = TestParams()
    tput = TestParams(tests="throughput")
    assert tput.tests == ("throughput",) and not tput.ping
    assert slot_seconds(both, 2, 100) - slot_seconds(tput, 2, 100) == pytest.approx(
        both.pings * both.ping_interval_s + 0.1
    )
    spec = SelectionSpec(regions=(*AWS_PAIR.split(","), "gcp:us-east4"))
    catalog = load_catalog()
    full = make_plan(catalog, spec, both, backend="cloud").estimate
    only = make_plan(catalog, spec, tput, backend="cloud").estimate
    ping_bytes = make_plan(catalog, spec, TestParams(tests="ping"), backend="cloud").estimate.bytes
    assert only.bytes == pytest.approx(full.bytes - ping_bytes)
    assert only.wall_s < full.wall_s


def test_hourly_wakeups_run_each_tick_exactly_once_at_a_drawn_hour():
    from orchestrator.schedule.tick import drawn_hour, due_this_hour

    profile = _profile(every="P1D", slip="P1D")
    start = datetime(2026, 11, 1, 0, 41, tzinfo=UTC)
    hours = []
    for day in range(60):
        wakeups = [start + timedelta(days=day, hours=h) for h in range(24)]
        due = [w for w in wakeups if due_this_hour(profile, w)]
        assert len(due) == 1, day
        hours.append(due[0].hour)
        tick = datetime(2026, 11, 1, tzinfo=UTC) + timedelta(days=day)
        assert due[0].hour == drawn_hour(profile, tick)
    assert len(set(hours)) >= 12  # spread over the day, not one fixed hour
    # a slip under an hour: the first hour after the tick
    short = _profile(every="PT6H", slip="PT10M")
    assert due_this_hour(short, datetime(2026, 11, 1, 6, 41, tzinfo=UTC))
    assert not due_this_hour(short, datetime(2026, 11, 1, 7, 41, tzinfo=UTC))


def test_run_profile_outside_its_drawn_hour_does_nothing(tmp_path):
    from orchestrator.core.errors import UserError
    from orchestrator.schedule.tick import drawn_hour, run_profile

    profile = _profile(every="P1D", slip="P1D")
    tick = datetime(2026, 11, 1, tzinfo=UTC)
    other = tick.replace(hour=(drawn_hour(profile, tick) + 1) % 24, minute=41)
    assert run_profile(profile, tmp_path, "timer", hourly_draw=True, now=other) is None
    assert not ledger.ledger_path(tmp_path).exists()  # no tick, no record
    with pytest.raises(UserError, match="give one"):
        run_profile(profile, tmp_path, "timer", wait_slip=True, hourly_draw=True)


def test_sweep_profile_runs_the_profile_by_hand(tmp_path):
    from click.testing import CliRunner

    from orchestrator.cli import main

    schedules = tmp_path / "s.yaml"
    schedules.write_text(
        "profiles:\n  p:\n    every: PT6H\n    regions: aws:us-east-1,aws:eu-west-1\n"
        "    backend: aws\n    budget_usd: 0.001\n    budget_usd_month: 1\n"
    )
    common = ["--file", str(schedules), "--results", str(tmp_path / "r")]
    clash = CliRunner().invoke(main, ["sweep", "--profile", "p", "--pings", "3", *common])
    assert clash.exit_code == 2 and "--pings with --profile" in clash.output
    out = CliRunner().invoke(main, ["sweep", "--profile", "p", *common])
    assert out.exit_code == 0, out.output
    (record,) = ledger.read(tmp_path / "r")
    assert record["trigger"] == "hand" and record["scheduled_utc"] is None
    assert record["outcome"] == "skipped-budget"


def test_schedule_list_shows_next_run_last_outcome_spend_and_missed_ticks(tmp_path):
    from click.testing import CliRunner

    from orchestrator.cli import main

    schedules = tmp_path / "s.yaml"
    schedules.write_text(
        "profiles:\n  p:\n    every: PT1H\n    regions: aws:us-east-1,aws:eu-west-1\n"
        "    budget_usd: 1\n    budget_usd_month: 20\n  q:\n    every: P1D\n"
        "    regions: aws:us-east-1,aws:eu-west-1\n    budget_usd: 1\n    budget_usd_month: 5\n"
    )
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    first = now - timedelta(hours=5)
    ledger.append(
        tmp_path,
        {
            "profile": "p",
            "outcome": "ok",
            "scheduled_utc": first.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "started_utc": first.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "cost_usd": 1.25,
        },
    )
    out = CliRunner().invoke(
        main, ["schedule", "list", "--file", str(schedules), "--results", str(tmp_path)]
    )
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    p_line = next(ln for ln in lines if ln.startswith("p:"))
    # (the hour may turn between this test's clock and the command's)
    nexts = {(now + timedelta(hours=h)).strftime("next %Y-%m-%dT%H:00:00Z") for h in (1, 2)}
    assert any(n in p_line for n in nexts) and "last ok" in p_line
    if first.month == now.month:
        assert "month-to-date $1.25 of 20" in p_line
    # due 1 to 4 h after the first record; the latest tick is still within its hour of grace
    assert "missed 4 ticks" in out.output or "missed 5 ticks" in out.output
    assert any(ln.startswith("q:") and "no run yet" in ln for ln in lines)


def test_a_site_folder_that_cannot_be_written_is_recorded_not_a_lost_ledger_line(tmp_path):
    """The sweep has measured: a site that cannot be built is the tick's `publish_error`
    (outcome partial at worst), never a traceback that skips the ledger line."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    profile = _profile(backend="local", site=str(blocker / "site"))

    def measured(sweep, build_report, **_stages):
        from orchestrator.results.schema import MEASUREMENT_COLUMNS

        row = dict.fromkeys(MEASUREMENT_COLUMNS, "")
        row.update(sweep_id=sweep.id, started_utc="2026-11-25T00:00:01.000Z", backend="local",
                   src_cloud="aws", src_region="us-east-1", dst_cloud="aws",
                   dst_region="eu-west-1", distance_km="5000.0", rtt_avg_ms="70.0",
                   round="1", status="ok")  # fmt: skip
        store.write_rows(sweep.dir, [row])
        sweep.record.status = SweepStatus.DONE
        sweep.save()
        return sweep

    results = tmp_path / "results"
    record = run_tick(profile, results, run_sweep=measured, log=lambda _m: None)
    assert "a-file" in record["publish_error"] and record["outcome"] == "partial", record
    assert ledger.read(results) == [record]
    assert (results / record["sweep_id"] / store.SWEEP_FILE).is_file()  # kept


def _earlier_cloud_sweep(results, sweep_id, zone="use1-az4", image="ami-0123456789abcdef0"):
    """A sweep folder of the profile whose hosts ran in `zone` on `image`, and its ledger
    line, as a tick leaves them."""
    from orchestrator.model.hosts import Host

    hosts = [
        Host("aws:us-east-1", "aws", "us-east-1", "192.0.2.1", "192.0.2.1", "u", 22,
             "t3.small", "aws", zone=zone, image_id=image),
        Host("aws:eu-west-1", "aws", "eu-west-1", "192.0.2.2", "192.0.2.2", "u", 22,
             "t3.small", "aws", zone="euw1-az1", image_id="ami-0fedcba9876543210"),
    ]  # fmt: skip
    store.write_json(store.sweep_dir(results, sweep_id) / store.HOSTS_FILE,
                     {"hosts": [h.to_dict() for h in hosts]})  # fmt: skip
    ledger.append(results, {"profile": "p", "outcome": "ok", "sweep_id": sweep_id,
                            "started_utc": "2026-11-25T06:00:00Z"})  # fmt: skip


def test_a_cloud_profile_pins_the_zones_and_images_of_its_previous_sweep(tmp_path):
    """No reset of every baseline by a new AZ or a newer image: pin_from previous is the
    default of a cloud profile; a profile's own zones/images go over the pinned ones."""
    profile = _profile(zones={"aws:eu-west-1": "euw1-az3"})
    assert profile.request.cloud is not None and profile.request.cloud.pin_from == "previous"
    assert _profile(backend="local").request.cloud is None
    results = tmp_path / "results"
    seen = {}

    def run(sweep, build_report, **_stages):
        seen.update(sweep.record.cloud_options.to_dict())
        sweep.record.status = SweepStatus.DONE
        return sweep

    first = run_tick(profile, results, run_sweep=run, log=lambda _m: None)
    assert first["pinned_from"] is None and seen["zones"] == {"aws:eu-west-1": "euw1-az3"}
    _earlier_cloud_sweep(results, "20261125T0600Z-a1b2")
    second = run_tick(profile, results, run_sweep=run, log=lambda _m: None)
    assert second["pinned_from"] == "20261125T0600Z-a1b2"
    assert seen["pinned_from"] == "20261125T0600Z-a1b2"
    assert seen["zones"] == {"aws:us-east-1": "use1-az4", "aws:eu-west-1": "euw1-az3"}
    assert seen["images"]["aws:us-east-1"] == "ami-0123456789abcdef0"


@pytest.mark.parametrize("value", [["use1-az4"], {"us-east-1": "use1-az4"}, {"aws:x": ""}])
def test_profile_zones_and_images_must_be_a_mapping_of_regions(value):
    from orchestrator.schedule.profiles import ProfileError

    with pytest.raises(ProfileError, match="expected a mapping of region"):
        _profile(zones=value)
