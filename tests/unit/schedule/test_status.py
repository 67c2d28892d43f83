"""schedule.status: each profile's next tick, last outcome, spend and missed ticks, from
the profiles file and the ledger, without the CLI."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from orchestrator.schedule import ledger
from orchestrator.schedule.status import status

PROFILES = (
    "profiles:\n  p:\n    every: PT1H\n    regions: aws:us-east-1,aws:eu-west-1\n"
    "    budget_usd: 1\n    budget_usd_month: 20\n  q:\n    every: P1D\n"
    "    regions: aws:us-east-1,aws:eu-west-1\n    budget_usd: 1\n    budget_usd_month: 5\n"
)
NOW = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_status_counts_spend_missed_ticks_and_the_last_outcome(tmp_path):
    schedules = tmp_path / "s.yaml"
    schedules.write_text(PROFILES)
    first = NOW.replace(minute=0) - timedelta(hours=5)
    record = {"profile": "p", "outcome": "ok", "scheduled_utc": _iso(first),
              "started_utc": _iso(first), "cost_usd": 1.25}  # fmt: skip
    ledger.append(tmp_path, record)
    ledger.append(tmp_path, {**record, "cost_usd": 0.5, "outcome": "failed",
                             "started_utc": _iso(first + timedelta(hours=1))})  # fmt: skip
    warned: list[str] = []
    found = status(schedules, tmp_path, NOW, warned.append)
    p, q = found.profiles
    assert (p.profile, q.profile) == ("p", "q")
    assert p.next_utc == datetime(2026, 11, 20, 13, tzinfo=UTC)
    assert p.last_outcome == "failed" and p.last_started_utc == first + timedelta(hours=1)
    assert p.month_spend_usd == 1.75 and p.budget_usd_month == 20 and p.runs == 2
    # due at 07:00 (recorded), 08:00 ... 11:00 with no record; 12:00 is still within its hour
    assert p.missed_ticks == tuple(first + timedelta(hours=h) for h in (1, 2, 3, 4))
    assert q.runs == 0 and q.last_outcome is None and q.missed_ticks == ()
    assert found.bad_lines == () and found.bad_lines_warning() is None and warned == []
    doc = p.to_json()
    assert doc["missed_ticks"] == [_iso(first + timedelta(hours=h)) for h in (1, 2, 3, 4)]
    assert doc["next_utc"] == "2026-11-20T13:00:00Z" and "runs" not in doc
    assert doc["last_started_utc"] == _iso(first + timedelta(hours=1))
    assert found.to_json() == [doc, q.to_json()]  # schedule list --json: in the file's order


def test_a_torn_ledger_line_is_left_out_and_named(tmp_path):
    schedules = tmp_path / "s.yaml"
    schedules.write_text(PROFILES)
    ledger.append(tmp_path, {"profile": "p", "outcome": "ok", "started_utc": _iso(NOW),
                             "cost_usd": 2.0})  # fmt: skip
    with ledger.ledger_path(tmp_path).open("a") as f:
        f.write('{"profile": "p", "outc\n')
    warned: list[str] = []
    found = status(schedules, tmp_path, NOW, warned.append)
    assert found.bad_lines == (2,)
    assert (
        warned
        == [found.bad_lines_warning()]
        == [
            f"{ledger.ledger_path(tmp_path)}: line 2 is not a ledger record "
            "(left out of the figures below)"
        ]
    )
    assert found.profiles[0].month_spend_usd == 2.0
