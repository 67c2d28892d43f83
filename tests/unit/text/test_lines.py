"""orchestrator.text's renderers on results made by hand: the exact lines the CLI prints
(singular and plural, the empty cases, the cut-off lists)."""

from __future__ import annotations

from datetime import UTC, datetime

from orchestrator.clouds.leftovers import Leftover
from orchestrator.clouds.reap import ReapReport
from orchestrator.clouds.sync import SyncReport
from orchestrator.emulator import EmulationStatus
from orchestrator.emulator.perturb import gather
from orchestrator.model.catalog import load_catalog
from orchestrator.schedule.status import ProfileStatus, ScheduleStatus
from orchestrator.text import cloud_lines, emulator_lines, plan_table, schedule_lines

EXPIRES = 1_800_000_000.0  # 2027-01-15 08:00 UTC


def test_no_emulation_is_one_line_and_one_is_a_row_under_the_header():
    assert emulator_lines.status_lines([]) == ["no emulations"]
    row = EmulationStatus("demo", "up", "198.18.0.0/24", 3, 3, None, 0, False, EXPIRES)
    header, line = emulator_lines.status_lines([row])
    assert header.split() == ["id", "phase", "subnet", "hosts", "sshd", "delayd", "owner",
                              "expires", "(UTC)", "stale"]  # fmt: skip
    assert line.split() == ["demo", "up", "198.18.0.0/24", "3", "3", "-", "-", "2027-01-15",
                            "08:00", "no"]  # fmt: skip
    assert row.to_json()["expires_utc"] == "2027-01-15T08:00:00Z"
    assert emulator_lines.reaped_lines([]) == ["0 objects removed"]


def test_emulator_down_counts_what_it_removed_or_says_nothing_was_there():
    assert emulator_lines.down_line("demo", ["ns ir-demo-a", "link ir-demo"]) == (
        "emulation demo removed (2 objects)"
    )
    assert emulator_lines.down_line("demo", []) == "emulation demo: nothing to remove"


def test_a_ticks_line_names_its_sweep_and_reason():
    assert schedule_lines.tick_line("latency", None) == (
        "latency: not this tick's drawn hour; nothing to do"
    )
    record = {"outcome": "skipped-budget", "reason": "over the month's budget", "sweep_id": None}
    assert schedule_lines.tick_line("latency", record) == (
        "latency: skipped-budget: over the month's budget"
    )
    ran = {"outcome": "ok", "sweep_id": "20270115T0800Z-ab12"}
    assert schedule_lines.tick_line("latency", ran) == "latency sweep 20270115T0800Z-ab12: ok"


def test_the_schedule_lists_the_last_five_missed_ticks_of_more():
    missed = tuple(datetime(2027, 1, d, 8, tzinfo=UTC) for d in range(1, 8))
    profile = ProfileStatus("latency", None, 600, None, None, 0.0, 20.0, missed)
    first, second = schedule_lines.status_lines(ScheduleStatus((profile,), ledger=None))  # type: ignore[arg-type]
    assert first == ("latency: next - (+ up to 600 s slip); no run yet; month-to-date $0.00 "
                     "of 20")  # fmt: skip
    assert second == ("  missed 7 ticks that never ran (last 5 of 7): "
                      + ", ".join(f"2027-01-{d:02d}T08:00:00Z" for d in range(3, 8)))  # fmt: skip


def test_the_cloud_lines_say_what_was_found_and_done():
    assert cloud_lines.sync_lines(SyncReport()) == [
        "regions.yaml lists every region the clouds offer"
    ]
    assert cloud_lines.sync_lines(SyncReport(missing=["aws:mx-central-1"])) == [
        "missing from regions.yaml: aws:mx-central-1"
    ]
    due = Leftover("aws", "us-east-1", "instance", "i-1", "ir-a", {"sweep_id": "s1"})
    report = ReapReport(due=[due])
    assert cloud_lines.reap_lines(report, dry_run=True) == [
        "would delete aws us-east-1 instance ir-a (sweep s1, expires ?)",
        "1 resources due; nothing deleted (--dry-run)",
    ]
    assert cloud_lines.reap_lines(report, dry_run=False)[-1] == "deleted 0 of 1 resources due"


def test_durations_and_sizes_of_the_estimate():
    assert [plan_table.duration(s) for s in (59.6, 61, 3600, 3725)] == [
        "1m00s", "1m01s", "1h00m00s", "1h02m05s"
    ]  # fmt: skip
    assert [plan_table.size(n) for n in (999, 1.5e6, 2.25e9, 3e12)] == [
        "999 B", "1.5 MB", "2.2 GB", "3.0 TB"
    ]  # fmt: skip


def test_the_regions_listing_gives_each_region_its_clouds_machine_type():
    catalog = load_catalog()
    listing = catalog.listing(["gcp"])
    doc = listing.to_json()
    assert doc and all(r["cloud"] == "gcp" for r in doc)
    assert {r["machine_type"] for r in doc} == {catalog.machine_types["gcp"]}
    assert doc[0]["key"] == listing.regions[0].key


def test_perturbations_of_a_file_come_before_those_given_one_by_one(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("- target: aws:us-east-1/gcp:europe-west1\n  loss_pct: 1\n")
    found = gather(["aws:us-east-1,delay_ms=10"], path)
    assert [p.text for p in found] == [
        "aws:us-east-1/gcp:europe-west1,loss_pct=1", "aws:us-east-1,delay_ms=10"
    ]  # fmt: skip
    assert gather([], None) == ()


def test_a_sweeps_announcement_says_its_estimate_and_asks_above_its_budget():
    from orchestrator.plan import SelectionSpec
    from orchestrator.sweep import SweepRequest, plan_for
    from orchestrator.text import announcement

    plan = plan_for(SweepRequest(SelectionSpec(regions=("aws:us-east-1", "gcp:europe-west1"))),
                    note=lambda line: None)  # fmt: skip
    said = announcement(plan, 2, "in 1 round", budget_usd=5.0)
    assert said.line.startswith("plan: 2 regions, 2 tests, in 1 round, about ")
    assert said.warning is None and said.questions == []  # local: $0, 2 hosts
    over = announcement(plan, 2, "in 1 round", budget_usd=plan.estimate.cost_usd - 0.01)
    assert (over.line, len(over.questions)) == (said.line, 1)
    assert "above --budget-usd" in over.questions[0].refuse


def test_schedule_reap_says_how_many_sweeps_it_tore_down_and_which():
    from orchestrator.text import reaped_sweeps_line

    assert reaped_sweeps_line([]) == "tore down 0 abandoned sweeps"
    assert reaped_sweeps_line(["a", "b"]) == "tore down 2 abandoned sweeps: a, b"
