"""The measure playbook's event stream -> raw files and rows, round by round, fed with
synthetic events (the state machine alone, no Ansible)."""

from __future__ import annotations

import json
from datetime import timedelta

from sweep_support import CTX, SLOT, client_doc, server_doc

from orchestrator.core import stamp
from orchestrator.results import RoundEntry
from orchestrator.results import files as store
from orchestrator.sweep.events import ClosedRound, PlannedRound, RoundTracker

A, B = SLOT.client, SLOT.server
ALIAS = {A: store.safe_name(A), B: store.safe_name(B)}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def tracker(tmp_path, rounds=(1, 2)):
    closed: list[ClosedRound] = []
    clock = Clock()
    planned = {n: PlannedRound(n, [SLOT], 4.0) for n in rounds}
    t = RoundTracker(tmp_path, [A, B], planned, CTX, closed.append, clock=clock)
    return t, closed, clock


def play(n):
    return {"event": "play", "name": f"Round {n}"}


def result(host, doc, kind="ok"):
    stdout = doc if isinstance(doc, str) else json.dumps(doc)
    return {"event": kind, "host": ALIAS[host], "task": "Round: x", "stdout": stdout}


def test_each_play_closes_the_previous_round_and_stats_the_last(tmp_path):
    t, closed, clock = tracker(tmp_path)
    t.on_event(play(1))
    t.on_event(result(A, client_doc()))
    t.on_event(result(B, server_doc()))
    clock.now += 5.5
    t.on_event(play(2))
    assert [c.number for c in closed] == [1]
    assert closed[0].wall_s == 5.5 and closed[0].expected_s == 4.0
    assert [r["status"] for r in closed[0].rows] == ["ok", "ok"]
    assert closed[0].entry("main").overhead_s == 1.5
    entry = closed[0].entry("main")
    assert entry.started_utc is not None and entry.ended_utc is not None
    assert entry.started_utc <= entry.ended_utc and entry.started_utc.utcoffset() == timedelta(0)
    written = entry.to_json()  # the keys in the order sweep.json has always kept them
    assert list(written)[:4] == ["round", "kind", "slots", "started_utc"]
    assert written["started_utc"] == stamp(entry.started_utc)
    assert RoundEntry.from_json(json.loads(json.dumps(written))) == entry
    t.on_event(result(A, client_doc()))
    t.on_event(result(B, server_doc()))
    t.on_event({"event": "stats", "summary": {}})
    assert [c.number for c in closed] == [1, 2]
    assert t.first_round_at == 100.0
    for n in (1, 2):
        assert json.loads(store.raw_path(tmp_path, n, A).read_text())["role"] == "client"


def test_a_silent_host_is_filled_in_and_fails_only_its_slots_tests(tmp_path):
    t, closed, _ = tracker(tmp_path, rounds=(1,))
    t.on_event(play(1))
    t.on_event(result(A, client_doc()))
    t.on_event({"event": "stats"})
    raw = json.loads(store.raw_path(tmp_path, 1, B).read_text())
    assert raw["ansible_event"] == "unreachable" and "left the play earlier" in raw["msg"]
    # the client's own measurement stands; the silent host's direction (its pings) fails
    assert [r["status"] for r in closed[0].rows] == ["ok", "failed"]
    assert "left the play earlier" in closed[0].rows[1]["error"]


def test_an_unreachable_host_is_recorded_with_ansibles_message(tmp_path):
    t, closed, _ = tracker(tmp_path, rounds=(1,))
    t.on_event(play(1))
    t.on_event({**result(B, ""), "event": "unreachable", "msg": "ssh: connect refused"})
    t.on_event(result(A, client_doc()))
    t.on_event({"event": "stats"})
    raw = json.loads(store.raw_path(tmp_path, 1, B).read_text())
    assert raw == {
        "ansible_event": "unreachable",
        "msg": "ssh: connect refused",
        "rc": None,
        "stderr": "",
    }
    assert "ssh: connect refused" in closed[0].rows[1]["error"]


def test_events_outside_a_round_or_of_other_tasks_and_plays_are_ignored(tmp_path):
    t, closed, _ = tracker(tmp_path, rounds=(1,))
    t.on_event(result(A, client_doc()))  # before any round
    t.on_event({"event": "play", "name": "Something else"})
    t.on_event(result(A, client_doc()))
    t.on_event({"event": "stats"})
    assert closed == [] and not (tmp_path / "raw").exists()
    t.on_event(play(1))
    t.on_event({**result(A, "x"), "task": "Gathering Facts"})
    t.on_event(play(7))  # not a round of this run: closes round 1, starts nothing
    assert [c.number for c in closed] == [1]
    assert t.current is None


def test_a_sentinel_round_keeps_its_late_rows_apart(tmp_path):
    from dataclasses import replace

    from orchestrator.sweep.sentinels import read_sentinel_rows

    closed: list[ClosedRound] = []
    planned = {
        1: PlannedRound(1, [SLOT], 4.0),
        2: PlannedRound(2, [replace(SLOT, port=5202, sentinel=True)], 4.0),
    }
    t = RoundTracker(tmp_path, [A, B], planned, CTX, closed.append, clock=Clock())
    for n in (1, 2):
        t.on_event(play(n))
        t.on_event(result(A, client_doc()))
        t.on_event(result(B, server_doc()))
    t.on_event({"event": "stats"})
    assert [len(c.rows) for c in closed] == [2, 0]  # measurements.csv: one row per test
    late = read_sentinel_rows(tmp_path)
    assert sorted(store.pair_key(r) for r in late) == sorted([(A, B), (B, A)])
    assert {r["round"] for r in late} == {"2"} and all(r["status"] == "ok" for r in late)
    assert closed[1].entry("main").slots[0]["sentinel"] is True  # collect reads it back
