"""Host-wide stalls in a ping phase (orchestrator.results.stalls): found on real ping-phase
documents captured on the emulated cloud (tests/data/stall/, capture.py there) and on
constructed rounds, left out of their rows' figures and flagged host_stall."""

from __future__ import annotations

import json
import random
import statistics
import zlib

import pytest

from orchestrator.core import paths
from orchestrator.results import flags, stalls
from orchestrator.results.parse import summarize_probes
from orchestrator.results.ping_rows import phase_rows
from orchestrator.results.raw_rows import RowContext, with_ping_phase

DATA = paths.ROOT / "tests" / "data" / "stall"
US_EAST, EUROPE = "aws:us-east-1", "gcp:europe-west1"


def captured(name):
    """(the documents by host, the epoch the capture acted at) of one capture."""
    doc = json.loads((DATA / f"{name}.json").read_text())
    return {d["host"]: d for d in doc["docs"]}, doc["stalled_at_epoch_s"]


def without_send_times(docs):
    """The same documents as an agent from before `sent_s` wrote them."""
    out = json.loads(json.dumps(docs))
    for d in out.values():
        del d["t0_epoch_s"]
        for p in d["peers"].values():
            del p["sent_s"]
    return out


def directed_tests(docs):
    return [(src, dst) for src, d in docs.items() for dst in d["peers"]]


def ctx_for(docs):
    return RowContext("s", "local", 1, {}, {t: 1000.0 for t in directed_tests(docs)})


def test_a_stalled_machine_delays_every_host_and_every_such_sample_is_found():
    """delayd stopped for 150 ms: 84 samples of all 56 tests held up together."""
    docs, _at = captured("machine")
    every, odd = stalls.timed_samples(docs)
    assert len(every) == 8 * 7 * 20 and len(odd) == 84
    found = stalls.find_stalls(docs)
    assert set(found) == set(directed_tests(docs))  # every test of every host
    assert {(s.test, s.index) for s in odd} == {(t, i) for t, ix in found.items() for i in ix}
    # a stall is a moment: every sample in it was in flight when delayd resumed
    latest_sent = max(s.sent for s in odd)
    assert all(s.back >= latest_sent for s in odd)


def test_the_stalls_samples_are_out_of_the_rows_figures_and_the_rows_flagged():
    docs, _at = captured("machine")
    found = stalls.find_stalls(docs)
    texts = {h: json.dumps({**d, "agent_version": 5}) for h, d in docs.items()}
    rows = phase_rows(1, directed_tests(docs), texts, ctx_for(docs))
    assert all(r["status"] == "ok" and r["flags"] == flags.HOST_STALL for r in rows)
    for row in rows:
        test = (
            f"{row['src_cloud']}:{row['src_region']}",
            f"{row['dst_cloud']}:{row['dst_region']}",
        )
        samples = docs[test[0]]["peers"][test[1]]["rtt_ms"]
        kept = [x for i, x in enumerate(samples) if i not in found[test]]
        assert row["rtt_samples"] == len(kept) == 20 - len(found[test])
        assert row["ping_loss_pct"] == 0.0  # a stalled reply was received all the same
        # held less than the bound (one sample: +9.6 ms) is within the path's own spread
        assert row["rtt_max_ms"] == max(kept) <= statistics.median(samples) + 10.0
        assert row["rtt_avg_ms"] == pytest.approx(statistics.fmean(kept), abs=1e-4)
        assert row["rtt_mdev_ms"] == pytest.approx(statistics.pstdev(kept), abs=1e-4)
        assert row["rtt_mdev_ms"] < 3.0
        # the median hardly moves: what a stall spoils is the max, the mean and the jitter
        assert abs(row["rtt_p50_ms"] - statistics.median(samples)) < 0.5
    # with every sample, the same rows' maxima were up to 150 ms above their medians
    spoiled = [max(d["peers"][p]["rtt_ms"]) - statistics.median(d["peers"][p]["rtt_ms"])
               for d in docs.values() for p in d["peers"]]  # fmt: skip
    assert max(spoiled) > 140.0


def test_one_hosts_tests_delayed_together_are_that_hosts_stall_alone():
    """Every path to and from aws:us-east-1 75 ms slower each way for about half a
    second: its 14 tests and no other. One sample, delayed at the onset while half the
    host's tests in flight were not yet, is not in it."""
    docs, _at = captured("host")
    found = stalls.find_stalls(docs)
    assert set(found) == {t for t in directed_tests(docs) if US_EAST in t} and len(found) == 14
    _every, odd = stalls.timed_samples(docs)
    assert len(odd) == 29 and sum(len(ix) for ix in found.values()) == 28
    (missed,) = [s for s in odd if s.index not in found.get(s.test, ())]
    assert missed.test == (US_EAST, "aws:ap-northeast-1") and missed.sent == min(
        s.sent for s in odd
    )


def test_a_real_route_change_on_one_pair_is_not_a_stall():
    """aws:us-east-1/gcp:europe-west1 10 ms slower each way from the middle of the
    phase on: its two tests' level moves (+20 ms), nothing is left out or flagged."""
    docs, _at = captured("path")
    assert stalls.find_stalls(docs) == {}
    rows = phase_rows(1, directed_tests(docs), {h: json.dumps(d) for h, d in docs.items()},
                      ctx_for(docs))  # fmt: skip
    assert not any(r.get("flags") for r in rows)
    moved = [r for r in rows if {r["src_region"], r["dst_region"]} == {"us-east-1", "europe-west1"}]
    assert len(moved) == 2 and all(r["rtt_max_ms"] - r["rtt_min_ms"] > 18.0 for r in moved)
    assert stalls.find_stalls(captured("clean")[0]) == {}


def test_documents_without_send_times_find_the_same_stalls_from_the_probe_plan():
    """An agent from before `sent_s`: its probe plan gives each sample's departure
    within a few ms, which finds the same stalls."""
    for name in ("machine", "host", "path", "clean"):
        docs, _at = captured(name)
        old = without_send_times(docs)
        assert stalls.find_stalls(old) == stalls.find_stalls(docs), name
        for host in docs:
            now, then = stalls.send_times(docs[host]), stalls.send_times(old[host])
            assert set(now) == set(then)
            # the plan is when the agent meant to send; it sends then or a little later
            assert all(
                -0.1 < b - a < 0.005 for p in now for a, b in zip(now[p], then[p], strict=True)
            )
    # a peer with a reply missing: the others' places are unknown, so it has no times
    docs, _at = captured("machine")
    old = without_send_times(docs)
    peer = old[US_EAST]["peers"][EUROPE]
    peer["rtt_ms"] = peer["rtt_ms"][1:]
    assert (
        EUROPE not in stalls.send_times(old[US_EAST]) and len(stalls.send_times(old[US_EAST])) == 6
    )


# ---- constructed rounds ---------------------------------------------------------------

HOSTS = [f"aws:r{i}" for i in range(8)]
PINGS, INTERVAL_S, T0 = 20, 0.2, 1_700_000_000.0


def constructed(delay, hosts=HOSTS, seed=3):
    """A ping phase as the agent runs it (round-robin from a per-host offset, a gap
    apart, jitter of +-0.4 ms), with `delay(src, dst, sent, rtt_ms)` added to a sample."""
    rng = random.Random(seed)
    base = {
        (a, b): 20.0 + 30.0 * abs(i - j) for i, a in enumerate(hosts) for j, b in enumerate(hosts)
    }
    docs = {}
    for host in hosts:
        peers = [h for h in hosts if h != host]
        n, gap = len(peers), INTERVAL_S / (len(peers))
        first = zlib.crc32(host.encode()) % n
        doc = {"host": host, "t0_epoch_s": T0, "gap_s": gap, "peers": {}}
        for i, peer in enumerate(peers):
            j = (i - first) % n
            sent = [(k * n + j) * gap for k in range(PINGS)]
            rtt = [base[host, peer] + rng.uniform(-0.4, 0.4) for _ in sent]
            rtt = [r + delay(host, peer, T0 + s, r) for s, r in zip(sent, rtt, strict=True)]
            doc["peers"][peer] = {"sent": PINGS, "rtt_ms": rtt, "sent_s": sent}
        docs[host] = doc
    return docs


def held(at, for_s, hosts=None):
    """A stall from `at` for `for_s`: a sample in flight then (of a test touching one of
    `hosts`; None: any) comes back when it ends, or its own time later if that is later."""

    def delay(src, dst, sent, rtt_ms):
        touched = hosts is None or src in hosts or dst in hosts
        back = sent + rtt_ms / 1000.0
        if not touched or back < at or sent > at + for_s:
            return 0.0
        return 1000.0 * (at + for_s - max(sent, at))

    return delay


def flagged(found):
    return {(t, i) for t, ix in found.items() for i in ix}


def test_constructed_machine_stall_leaves_out_exactly_the_samples_it_held():
    stall = held(T0 + 1.5, 0.15)
    amounts = {}

    def recorded(src, dst, sent, rtt_ms):
        amounts[(src, dst, sent)] = stall(src, dst, sent, rtt_ms)
        return amounts[(src, dst, sent)]

    docs = constructed(recorded)
    found = stalls.find_stalls(docs)
    assert len(found) == 56  # every test of the 8 hosts
    got = {(t, T0 + docs[t[0]]["peers"][t[1]]["sent_s"][i]) for t, i in flagged(found)}
    # every sample held more than the bound (10 ms, give or take the jitter) is out, and
    # none held less: those are noise-sized and stay
    assert {((a, b), t) for (a, b, t), ms in amounts.items() if ms > 11.0} <= got
    assert not {((a, b), t) for (a, b, t), ms in amounts.items() if ms < 9.0} & got


def test_constructed_one_host_stall_is_that_host_alone():
    stalled = HOSTS[3]
    found = stalls.find_stalls(constructed(held(T0 + 2.0, 0.12, {stalled})))
    assert found and all(stalled in t for t in found)
    assert len(found) > 7  # most of its 14 tests


def test_what_is_not_a_host_wide_stall():
    a, b = HOSTS[0], HOSTS[1]

    def step(src, dst, sent, rtt_ms):  # a route change on one pair, both ways, kept
        return 30.0 if {src, dst} == {a, b} and sent > T0 + 2.4 else 0.0

    assert stalls.find_stalls(constructed(step)) == {}
    # one pair stalled at one moment: two tests, fewer than MIN_TESTS
    assert stalls.find_stalls(constructed(held(T0 + 2.0, 0.15, None), hosts=HOSTS[:2])) == {}
    assert stalls.MIN_TESTS == 3

    # a spike on a different test at each moment: deviating alone, never together
    spikes = {(HOSTS[i], HOSTS[(i + 1) % 8]): T0 + 0.3 + 0.45 * i for i in range(8)}

    def scattered(src, dst, sent, rtt_ms):
        at = spikes.get((src, dst))
        return 80.0 if at is not None and sent <= at <= sent + rtt_ms / 1000.0 else 0.0

    assert stalls.find_stalls(constructed(scattered)) == {}

    # three of a host's tests held at one moment while most of its tests in flight were
    # not: some paths of that host, not the host
    host = HOSTS[4]
    three = {(host, HOSTS[0]), (HOSTS[1], host), (host, HOSTS[7])}

    def some_paths(src, dst, sent, rtt_ms):
        return held(T0 + 2.0, 0.15)(src, dst, sent, rtt_ms) if (src, dst) in three else 0.0

    docs = constructed(some_paths)
    _every, odd = stalls.timed_samples(docs)
    assert {s.test for s in odd} == three and stalls.find_stalls(docs) == {}


def test_the_deviation_bound_by_hand():
    # median 100, MAD 1 (scale 1.4826): the bound is max(10, 7.4) = 10 ms above it
    values = [99.0, 100.0, 101.0, 100.0, 99.0, 101.0, 100.0, 111.0, 109.0]
    assert stalls.deviating(values) == [7]
    # a jittery path: MAD 4, the bound 5 x 5.93 = 29.7 ms, so a 25 ms spike is its noise
    jittery = [100.0, 104.0, 96.0, 108.0, 92.0, 100.0, 104.0, 96.0, 125.0]
    assert stalls.deviating(jittery) == []
    assert stalls.deviating([100.0] * 9 + [131.0]) == [9]
    assert stalls.deviating([]) == []


def test_host_stall_is_kept_through_the_rows_life():
    """Found in raw output, not in the row: recomputing a row's flags keeps it, a
    throughput slot's row completed from the phase carries it, and it leaves nothing
    else out (its samples are out of the figures already)."""
    row = {"rtt_p50_ms": 80.0, "distance_km": 1000.0, "rtt_samples": 3, "flags": "host_stall"}
    assert flags.flag_rows([row]) == ["few_samples;host_stall"]
    assert flags.flag_rows([{**row, "flags": ""}]) == ["few_samples"]
    slot = {"throughput_bps": 1e6, "status": "ok", "error": ""}
    merged = with_ping_phase({**row, "status": "ok", "error": ""}, slot)
    assert merged["flags"] == "host_stall" and merged["throughput_bps"] == 1e6
    assert flags.invalidates_text("host_stall").startswith("nothing else")
    assert flags.invalidates_text("asymmetric", {"rtt": "RTT"}) == "RTT"
    # a stalled reply counts as received; its RTT is in no figure
    s = summarize_probes(5, [10.0, 10.2, 10.4], "icmp-raw", left_out=1)
    assert s["ping_loss_pct"] == 20.0 and s["rtt_samples"] == 3 and s["rtt_max_ms"] == 10.4


def stalled_sweep(results):
    """A latency-only sweep folder whose ping phase is the machine capture (its real
    record's shape, tests/data/records/sweep-latency-only.json)."""
    from orchestrator.core.geo import distance_km
    from orchestrator.model.catalog import load_catalog
    from orchestrator.results import files as store

    docs, _at = captured("machine")
    record = json.loads((paths.ROOT / "tests/data/records/sweep-latency-only.json").read_text())
    sweep_id = "20261128T1842Z-5a11"
    regions = {r.key: r for r in load_catalog().regions}
    tests = directed_tests(docs)
    record.update(sweep_id=sweep_id, placement={})
    record["params"]["pings"] = 20
    record["plan"]["pairs"] = [
        {"src": a, "dst": b, "distance_km": distance_km(regions[a].lat, regions[a].lon,
                                                        regions[b].lat, regions[b].lon)}
        for a, b in tests
    ]  # fmt: skip
    record["rounds"][0]["tests"] = [list(t) for t in tests]
    folder = results / sweep_id
    store.write_json(folder / store.SWEEP_FILE, record)
    for host, doc in docs.items():
        store.write_atomic(store.raw_path(folder, 1, host), json.dumps({**doc, "agent_version": 5}))
    return folder, docs


def test_a_stalled_sweep_collects_ingests_and_reports_without_its_stalled_samples(tmp_path):
    """collect rebuilds the rows from raw/ with the stall left out and flagged; the
    history store keeps those rows' samples without it; the report counts the flag and
    leaves nothing out for it."""
    from orchestrator.history import store as history
    from orchestrator.report.build import load_inputs, notes
    from orchestrator.results import files as store
    from orchestrator.sweep.stages import collect
    from orchestrator.sweep.sweep_folder import open_sweep

    folder, docs = stalled_sweep(tmp_path)
    found = stalls.find_stalls(docs)
    rows = collect(open_sweep(folder.name, tmp_path))
    assert len(rows) == 56
    written = store.read_rows(folder / store.MEASUREMENTS_FILE)
    assert {r["flags"] for r in written} == {"host_stall"}
    assert history.ingest_sweep(tmp_path, folder.name) == 56
    con = history.connect(tmp_path / "history.duckdb", read_only=True)
    try:
        got = con.execute("SELECT src, dst, rtt_samples_ms, flags FROM measurements").fetchall()
    finally:
        con.close()
    for src, dst, samples, cell in got:
        every = docs[src]["peers"][dst]["rtt_ms"]
        assert cell == "host_stall"
        assert samples == pytest.approx(
            [x for i, x in enumerate(every) if i not in found[src, dst]]
        )
    loaded = load_inputs(sweep_dirs_=[folder])
    assert loaded.rows_flagged == 56 and loaded.flagged["host_stall"] == 56
    assert loaded.measures_flagged["rtt"] == 0 and len(loaded.data) == 56
    (line,) = notes(loaded)
    assert "56 host_stall" in line and "invalidates nothing else" in line


def test_the_rounds_end_makes_again_the_rows_a_stall_shows_in(tmp_path):
    """The tracker makes each host's rows as its document arrives, before any stall can
    show (it needs every host's); at the round's end the stalled hosts' rows are made
    again, so what measure writes is what collect rebuilds."""
    from orchestrator.results.files import safe_name
    from orchestrator.sweep.events import PlannedRound, RoundTracker

    docs, _at = captured("machine")
    tests = directed_tests(docs)
    closed = []
    tracker = RoundTracker(tmp_path, list(docs), {1: PlannedRound(1, [], 10.0, tests)},
                           ctx_for(docs), closed.append)  # fmt: skip
    tracker.on_event({"event": "play", "name": "Round 1"})
    texts = {}
    for host, doc in docs.items():
        texts[host] = json.dumps({**doc, "agent_version": 5})
        tracker.on_event({"event": "ok", "host": safe_name(host), "task": "Round: x",
                          "stdout": texts[host]})  # fmt: skip
        assert not any(r.get("flags") for r in tracker.host_rows[host])  # one host: no stall
    tracker.on_event({"event": "stats"})
    (done,) = closed
    assert {r.get("flags") for r in done.rows} == {"host_stall"}
    assert done.rows == phase_rows(1, tests, texts, ctx_for(docs))
