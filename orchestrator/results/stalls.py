"""Host-wide stalls in a ping phase: samples that a host's machine delayed, not its paths.

Every host of a ping phase probes all its peers at once (ir_agent.py), so a moment when
a machine stops (a busy hypervisor; on the emulated cloud, this machine busy enough to
hold up delayd, which carries every host's packets) delays every probe in flight then,
on many paths at once: a path's own change delays one path (two tests, its two
directions). A stall is therefore found across tests, at one moment:

- A sample **deviates** when it lies above its test's median by more than
  max(DEVIATION_MIN_MS, DEVIATION_SCALES x 1.4826 x MAD of the test's samples). At most
  half a test's samples can: a change that lasts is the test's level, not a deviation.
- A sample is **in flight** from when its probe left (`sent_s` after the document's
  `t0_epoch_s`; documents from before the agent wrote them: the agent's probe plan, for
  a peer with no reply missing) until its reply came back. Every probe a stall held up
  is in flight when the machine resumes, so the deviating samples of one stall share a
  moment.
- At the moment most deviating samples share, a **host stalled** when at least
  MIN_TESTS of its tests (as source or destination) had a deviating sample in flight and
  they are most (more than MOST) of its tests with any sample in flight; the whole
  machine when that holds of all the round's tests. The deviating samples there of the
  tests of a stalled host (every one, the whole machine stalled) are in the stall. The
  moments are looked at from the one most deviating samples share, each deviating
  sample's departure once, until fewer than MIN_TESTS samples share one.

The samples in a stall are left out of their row's figures (ping_rows.host_rows: its
percentiles, min, mean, max and mdev, the jitter), and the row is flagged `host_stall`
(orchestrator.results.flags); the raw documents keep every sample. Pure functions over
the round's documents: `collect` and the history store find the same stalls.
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from orchestrator.core.stats import median

DEVIATION_MIN_MS = 10.0
DEVIATION_SCALES = 5.0
MAD_TO_SIGMA = 1.4826
MIN_TESTS = 3
MOST = 0.5

Test = tuple[str, str]  # (src, dst) region keys


@dataclass(frozen=True)
class Sample:
    """One timed sample: its test, its index among the test's samples, when its probe
    left and its reply came back (epoch seconds)."""

    test: Test
    index: int
    sent: float
    back: float


def _epoch(utc: str) -> float | None:
    try:
        when = datetime.strptime(utc, "%Y-%m-%dT%H:%M:%S.%fZ")
    except (TypeError, ValueError):
        return None
    return when.replace(tzinfo=timezone.utc).timestamp()  # noqa: UP017


def send_times(doc: Mapping[str, Any]) -> dict[str, list[float]]:
    """{peer: epoch seconds each sample's probe left, in the order of its rtt_ms} of one
    host's ping-phase document. The agent writes them (`sent_s` after `t0_epoch_s`); for
    a document from before it did, they come from its probe plan (round-robin from a
    per-host offset, `gap_s` apart, from `started_utc`), for the peers with every reply:
    a missing reply leaves the others' places unknown, so such a peer has none."""
    peers = doc.get("peers")
    if not isinstance(peers, dict):
        return {}
    t0 = doc.get("t0_epoch_s")
    out: dict[str, list[float]] = {}
    if isinstance(t0, int | float):
        for name, p in peers.items():
            sent, rtts = p.get("sent_s"), p.get("rtt_ms")
            if isinstance(sent, list) and isinstance(rtts, list) and len(sent) == len(rtts):
                out[name] = [float(t0) + float(s) for s in sent]
        return out
    start, gap, host = _epoch(str(doc.get("started_utc", ""))), doc.get("gap_s"), doc.get("host")
    if start is None or not isinstance(gap, int | float) or not isinstance(host, str):
        return {}
    n = len(peers)
    first = zlib.crc32(host.encode()) % n if n else 0  # ir_agent.probe_plan's offset
    for i, (name, p) in enumerate(peers.items()):
        rtts = p.get("rtt_ms") if isinstance(p, dict) else None
        if not isinstance(rtts, list) or p.get("sent") != len(rtts):
            continue
        j = (i - first) % n
        out[name] = [start + (k * n + j) * float(gap) for k in range(len(rtts))]
    return out


def deviating(values: list[float]) -> list[int]:
    """Indices of the samples above the median by more than max(DEVIATION_MIN_MS,
    DEVIATION_SCALES x 1.4826 x MAD)."""
    if not values:
        return []
    m = median(values)
    scale = MAD_TO_SIGMA * median([abs(v - m) for v in values])
    bound = max(DEVIATION_MIN_MS, DEVIATION_SCALES * scale)
    return [i for i, v in enumerate(values) if v - m > bound]


def timed_samples(docs: Mapping[str, Mapping[str, Any]]) -> tuple[list[Sample], set[Sample]]:
    """(every timed sample of the round, the deviating ones); `docs`: source host ->
    its ping-phase document."""
    every: list[Sample] = []
    odd: set[Sample] = set()
    for src, doc in docs.items():
        peers = doc.get("peers") or {}
        for dst, times in send_times(doc).items():
            rtts = [float(x) for x in peers[dst]["rtt_ms"]]
            mine = [
                Sample((src, dst), i, t, t + r / 1000.0)
                for i, (t, r) in enumerate(zip(times, rtts, strict=True))
            ]
            every.extend(mine)
            odd.update(mine[i] for i in deviating(rtts))
    return every, odd


def _tests_by_host(samples: Iterable[Sample]) -> dict[str, set[Test]]:
    out: dict[str, set[Test]] = {}
    for s in samples:
        for host in s.test:
            out.setdefault(host, set()).add(s.test)
    return out


def find_stalls(docs: Mapping[str, Mapping[str, Any]]) -> dict[Test, set[int]]:
    """{(src, dst): indices of its samples in a host-wide stall} of one ping phase;
    `docs`: source host -> its document (hosts without one left out). Empty when none."""
    every, odd = timed_samples(docs)
    if len(odd) < MIN_TESTS:
        return {}
    all_flying, odd_flying = _InFlight(every), _InFlight(odd)
    by_host: dict[str, list[Sample]] = {}
    for s in every:
        for host in s.test:
            by_host.setdefault(host, []).append(s)
    host_flying: dict[str, _InFlight] = {}
    # each deviating sample's start, by how many deviating samples are in flight then:
    # those that left by then less those back before it
    starts, backs = odd_flying.starts, sorted(s.back for s in odd)
    shared = {
        s: bisect.bisect_right(starts, s.sent) - bisect.bisect_left(backs, s.sent) for s in odd
    }
    found: dict[Test, set[int]] = {}
    for first in sorted(odd, key=lambda s: (-shared[s], s.sent, s.test, s.index)):
        if shared[first] < MIN_TESTS:
            break
        if first.index in found.get(first.test, ()):
            continue
        moment = first.sent
        odd_now = odd_flying.at(moment)
        odd_tests = {s.test for s in odd_now}
        if len(odd_tests) < MIN_TESTS:
            continue
        # a host stalled: most of its tests in flight deviate (only hosts with enough)
        hosts = set()
        for host, tests in _tests_by_host(odd_now).items():
            if len(tests) < MIN_TESTS:
                continue
            if host not in host_flying:
                host_flying[host] = _InFlight(by_host[host])
            if most(tests, host_flying[host], moment):
                hosts.add(host)
        whole = most(odd_tests, all_flying, moment)  # the whole machine
        for s in odd_now:
            if whole or hosts.intersection(s.test):
                found.setdefault(s.test, set()).add(s.index)
    return found


def most(tests: set[Test], flying: _InFlight, moment: float) -> bool:
    """Whether `tests` are more than MOST of the tests with a sample in `flying` in flight
    at `moment` (counted no further than needed)."""
    return len(tests) > MOST * flying.tests_at(moment, more_than=len(tests) / MOST)


class _InFlight:
    """Samples by when they left, to find those in flight at a moment by bisection."""

    def __init__(self, samples: Iterable[Sample]) -> None:
        self.samples = sorted(samples, key=lambda s: s.sent)
        self.starts = [s.sent for s in self.samples]
        self.longest = max((s.back - s.sent for s in self.samples), default=0.0)

    def at(self, moment: float) -> list[Sample]:
        lo = bisect.bisect_left(self.starts, moment - self.longest)
        hi = bisect.bisect_right(self.starts, moment)
        return [s for s in self.samples[lo:hi] if s.back >= moment]

    def tests_at(self, moment: float, more_than: float | None = None) -> int:
        """How many tests have a sample in flight at `moment`; counting stops past
        `more_than` (enough to know a share is not most), from the latest departures,
        which are the likeliest in flight."""
        lo = bisect.bisect_left(self.starts, moment - self.longest)
        hi = bisect.bisect_right(self.starts, moment)
        seen: set[Test] = set()
        for s in reversed(self.samples[lo:hi]):
            if s.back >= moment:
                seen.add(s.test)
                if more_than is not None and len(seen) > more_than:
                    break
        return len(seen)
