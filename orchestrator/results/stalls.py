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
  those are most (more than MOST) of its samples in flight; the whole machine when that
  holds of all the round's samples. The deviating samples there of the
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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from orchestrator.core import median, parse_utc

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
    started, gap, host = parse_utc(doc.get("started_utc")), doc.get("gap_s"), doc.get("host")
    if started is None or not isinstance(gap, int | float) or not isinstance(host, str):
        return {}
    start = started.timestamp()
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


def _timed(
    docs: Mapping[str, Mapping[str, Any]],
) -> Iterator[tuple[Test, list[float], list[float], list[float]]]:
    """(test, its samples' departures, their returns, their RTTs in ms) of every test
    whose samples have send times."""
    for src, doc in docs.items():
        peers = doc.get("peers") or {}
        for dst, times in send_times(doc).items():
            rtts = [float(x) for x in peers[dst]["rtt_ms"]]
            yield (
                (src, dst),
                times,
                [t + r / 1000.0 for t, r in zip(times, rtts, strict=True)],
                rtts,
            )


def timed_samples(docs: Mapping[str, Mapping[str, Any]]) -> tuple[list[Sample], set[Sample]]:
    """(every timed sample of the round, the deviating ones); `docs`: source host ->
    its ping-phase document."""
    every: list[Sample] = []
    odd: set[Sample] = set()
    for test, times, backs, rtts in _timed(docs):
        mine = [Sample(test, i, t, b) for i, (t, b) in enumerate(zip(times, backs, strict=True))]
        every.extend(mine)
        odd.update(mine[i] for i in deviating(rtts))
    return every, odd


class _Flying:
    """How many samples are in flight at a moment: those that left by then less those
    back before it (two sorted arrays, by bisection)."""

    def __init__(self, sent: np.ndarray, back: np.ndarray) -> None:
        self.sent, self.back = np.sort(sent), np.sort(back)

    def at(self, moment: float) -> int:
        left = int(np.searchsorted(self.sent, moment, side="right"))
        return left - int(np.searchsorted(self.back, moment, side="left"))


def find_stalls(docs: Mapping[str, Mapping[str, Any]]) -> dict[Test, set[int]]:
    """{(src, dst): indices of its samples in a host-wide stall} of one ping phase;
    `docs`: source host -> its document (hosts without one left out). Empty when none.

    "Most" is counted in samples in flight (a test has one in flight at a time unless
    its RTT is longer than the ping interval), the least number in distinct tests."""
    tests: list[Test] = []
    sent_l: list[float] = []
    back_l: list[float] = []
    which: list[int] = []
    odd: list[Sample] = []
    for test, times, backs, rtts in _timed(docs):
        which.extend([len(tests)] * len(times))
        tests.append(test)
        sent_l.extend(times)
        back_l.extend(backs)
        odd.extend(Sample(test, i, times[i], backs[i]) for i in deviating(rtts))
    if len(odd) < MIN_TESTS:
        return {}
    sent, back, test_of = np.array(sent_l), np.array(back_l), np.array(which, dtype=np.intp)
    names = sorted({h for t in tests for h in t})
    number = {h: k for k, h in enumerate(names)}
    src_of = np.array([number[t[0]] for t in tests], dtype=np.intp)[test_of]
    dst_of = np.array([number[t[1]] for t in tests], dtype=np.intp)[test_of]
    every = _Flying(sent, back)
    per_host: dict[str, _Flying] = {}

    def flying_of(host: str) -> _Flying:
        if host not in per_host:
            mine = (src_of == number[host]) | (dst_of == number[host])
            per_host[host] = _Flying(sent[mine], back[mine])
        return per_host[host]

    odd_flying = _InFlight(odd)
    # each deviating sample's start, by how many deviating samples are in flight then
    odd_count = _Flying(np.array([o.sent for o in odd]), np.array([o.back for o in odd]))
    shared = {o: odd_count.at(o.sent) for o in odd}
    found: dict[Test, set[int]] = {}
    for first in sorted(odd, key=lambda o: (-shared[o], o.sent, o.test, o.index)):
        if shared[first] < MIN_TESTS:
            break
        if first.index in found.get(first.test, ()):
            continue
        moment = first.sent
        odd_now = odd_flying.at(moment)
        if len({o.test for o in odd_now}) < MIN_TESTS:
            continue
        # a host stalled: most of its samples in flight deviate (hosts with enough tests)
        hosts = set()
        for host, mine in _by_host(odd_now).items():
            if len({o.test for o in mine}) >= MIN_TESTS and len(mine) > MOST * flying_of(host).at(
                moment
            ):
                hosts.add(host)
        whole = len(odd_now) > MOST * every.at(moment)  # the whole machine
        for o in odd_now:
            if whole or hosts.intersection(o.test):
                found.setdefault(o.test, set()).add(o.index)
    return found


def _by_host(samples: Iterable[Sample]) -> dict[str, list[Sample]]:
    out: dict[str, list[Sample]] = {}
    for s in samples:
        for host in s.test:
            out.setdefault(host, []).append(s)
    return out


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
