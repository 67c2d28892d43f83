"""Change detection per directed pair over per-run values (pure: no store, no clock).

A series is one directed pair's runs of one metric, within one source and backend. Median
RTT is compared as is; throughput in log space (a halving and a doubling are the same
size of change).

- Baseline: the median of the last N (28) comparable runs: same source, backend and
  configuration fingerprint. Nothing is flagged before MIN_RUNS (8) such runs.
- Scale: 1.4826 x MAD of those runs, shrunk toward the scale pooled over the series of
  the same source, backend, cloud pair and distance band (their median own scale, from
  each series' latest runs): scale^2 = (n s^2 + n0 s_pool^2) / (n + n0), n0 = 8 runs.
  Floored at the larger of 1 % of the median and 0.3 ms (throughput: log 1.01).
- Flagged: |z| >= 5 and a change of at least 2 ms and 5 % (RTT), or 20 % (throughput).
- Episode: confirmed by 2 consecutive flagged runs in the same direction; it starts at
  the first. It is then judged against the old baseline: 2 runs in a row inside it
  close it as "reverted" (the old baseline resumes); 6 runs at the new level as "new
  normal", and the baseline is rebuilt from the post-change runs only.
- Configuration: a fingerprint change starts a new baseline and is reported as a
  configuration change (an open episode closes as "configuration change"), never as a
  network change.
- Host level: when at least 60 % (and at least 3) of one host's evaluated pairs start an
  episode in the same run, one host/region change is reported instead of those pairs.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_left, insort
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from orchestrator.core.stats import median as median  # tests and views use it here

MAD_TO_SIGMA = 1.4826
DISTANCE_BANDS_KM = (1000.0, 3000.0, 6000.0, 10000.0)  # upper bounds; the last band is open


@dataclass(frozen=True)
class Params:
    window_runs: int = 28
    min_runs: int = 8
    z: float = 5.0
    rtt_min_ms: float = 2.0
    rtt_min_rel: float = 0.05
    throughput_min_rel: float = 0.20
    floor_rel: float = 0.01
    floor_rtt_ms: float = 0.3
    confirm_runs: int = 2
    revert_runs: int = 2
    new_normal_runs: int = 6
    host_share: float = 0.6
    host_min_pairs: int = 3
    prior_runs: float = 8.0  # weight of the pooled scale, in runs


@dataclass(frozen=True)
class SeriesKey:
    source: str
    backend: str
    metric: str  # "rtt" or "throughput"
    src: str
    dst: str

    @property
    def cloud_pair(self) -> str:
        return f"{self.src.split(':')[0]}-{self.dst.split(':')[0]}"


class Run(NamedTuple):
    # a tuple: a year of a full catalog is millions of these
    run_id: str  # the sweep id
    t: str  # when (ISO 8601), for reports
    value: float  # median RTT, ms; or throughput, bit/s
    fingerprint: str


@dataclass
class Series:
    key: SeriesKey
    runs: Sequence[Run]  # oldest first
    distance_km: float | None = None


@dataclass
class Episode:
    key: SeriesKey
    started_run: str
    started_t: str
    confirmed_run: str
    confirmed_t: str
    direction: int  # +1 up, -1 down
    old_level: float  # in the metric's unit
    z: float  # of the first flagged run
    new_level: float
    status: str = "open"  # "open", "reverted", "new normal", "configuration change"
    closed_run: str = ""
    closed_t: str = ""

    @property
    def id(self) -> str:
        text = "|".join((*_key_tuple(self.key), self.started_run))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class HostChange:
    source: str
    backend: str
    metric: str
    host: str
    run_id: str
    t: str
    pairs: list[Episode]
    evaluated: int  # the host's pairs judged in that run

    @property
    def status(self) -> str:
        statuses = {e.status for e in self.pairs}
        if "open" in statuses:
            return "open"
        return max(statuses, key=lambda s: sum(e.status == s for e in self.pairs))

    @property
    def id(self) -> str:
        text = "|".join(("host", self.source, self.backend, self.metric, self.host, self.run_id))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ConfigChange:
    key: SeriesKey
    run_id: str
    t: str
    old_fingerprint: str
    new_fingerprint: str


@dataclass
class SeriesResult:
    key: SeriesKey
    episodes: list[Episode] = field(default_factory=list)
    config_changes: list[ConfigChange] = field(default_factory=list)
    evaluated_runs: set[str] = field(default_factory=set)  # runs judged against a baseline
    flagged_runs: set[str] = field(default_factory=set)
    # the level the next run is judged against (the old one while an episode is open),
    # in the metric's unit; None before MIN_RUNS comparable runs
    baseline: float | None = None


@dataclass
class Detection:
    episodes: list[Episode]  # pair episodes not folded into a host change
    hosts: list[HostChange]
    config_changes: list[ConfigChange]
    baselines: dict[SeriesKey, float] = field(default_factory=dict)  # SeriesResult.baseline

    @property
    def open(self) -> int:
        return sum(e.status == "open" for e in self.episodes) + sum(
            h.status == "open" for h in self.hosts
        )


def _key_tuple(key: SeriesKey) -> tuple[str, ...]:
    return (key.source, key.backend, key.metric, key.src, key.dst)


# ---- statistics ------------------------------------------------------------------------


def mad_scale(values: Sequence[float]) -> float:
    """1.4826 x the median absolute deviation: sigma for normal data."""
    m = median(values)
    return MAD_TO_SIGMA * median([abs(v - m) for v in values])


def shrunk_scale(own: float, n: int, pooled: float | None, prior_runs: float) -> float:
    if pooled is None or not math.isfinite(pooled):
        return own
    return math.sqrt((n * own**2 + prior_runs * pooled**2) / (n + prior_runs))


def transform(metric: str, value: float) -> float:
    return math.log(value) if metric == "throughput" else value


def untransform(metric: str, value: float) -> float:
    return math.exp(value) if metric == "throughput" else value


def floor_scale(metric: str, level: float, p: Params) -> float:
    """The smallest scale: 1 % of the median and 0.3 ms for RTT; log(1.01) in log space."""
    if metric == "throughput":
        return math.log1p(p.floor_rel)
    return max(p.floor_rel * abs(level), p.floor_rtt_ms)


def big_enough(metric: str, x: float, level: float, p: Params) -> bool:
    """Is the change at least 2 ms and 5 % (RTT), or 20 % (throughput, in log space)?"""
    if metric == "throughput":
        return abs(math.exp(x - level) - 1) >= p.throughput_min_rel
    change = abs(x - level)
    return change >= p.rtt_min_ms and change >= p.rtt_min_rel * abs(level)


def judge(metric: str, x: float, level: float, scale: float, p: Params) -> tuple[bool, float]:
    """(flagged, z) of a transformed value against a baseline level and scale."""
    z = (x - level) / scale
    return abs(z) >= p.z and big_enough(metric, x, level, p), z


class Window:
    """The last n values, in arrival order and sorted: the median without a sort per run."""

    def __init__(self, n: int, values: Sequence[float] = ()) -> None:
        self.n = n
        self.recent: deque[float] = deque()
        self.ordered: list[float] = []
        for v in values:
            self.push(v)

    def push(self, x: float) -> None:
        self.recent.append(x)
        insort(self.ordered, x)
        if len(self.recent) > self.n:
            del self.ordered[bisect_left(self.ordered, self.recent.popleft())]

    def __len__(self) -> int:
        return len(self.recent)

    def median(self) -> float:
        o = self.ordered
        mid = len(o) // 2
        return o[mid] if len(o) % 2 else (o[mid - 1] + o[mid]) / 2

    def values(self) -> list[float]:
        return list(self.recent)


def distance_band(km: float | None) -> int:
    if km is None:
        return -1
    return sum(km >= b for b in DISTANCE_BANDS_KM)


def group_key(s: Series) -> tuple[str, ...]:
    band = str(distance_band(s.distance_km))
    return (s.key.source, s.key.backend, s.key.metric, s.key.cloud_pair, band)


def pooled_scales(series: Sequence[Series], p: Params) -> dict[tuple[str, ...], float]:
    """Per group (source, backend, metric, cloud pair, distance band): the median of the
    own scales of its series, each from its last N runs of its latest fingerprint."""
    scales: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for s in series:
        if not s.runs:
            continue
        last_fp = s.runs[-1].fingerprint
        tail: list[float] = []
        for run in reversed(s.runs):
            if run.fingerprint != last_fp or len(tail) >= p.window_runs:
                break
            tail.append(transform(s.key.metric, run.value))
        if len(tail) >= p.min_runs:
            scales[group_key(s)].append(mad_scale(tail))
    return {k: median(v) for k, v in scales.items()}


# ---- one series ------------------------------------------------------------------------


def detect_series(s: Series, p: Params = Params(), pooled: float | None = None) -> SeriesResult:
    """The episodes and configuration changes of one series (see the module's rules)."""
    metric = s.key.metric
    out = SeriesResult(s.key)
    base = Window(p.window_runs)
    pending: list[tuple[Run, float, float, int]] = []  # (run, x, z, direction)
    episode: Episode | None = None
    old_window: list[float] = []
    old_level = old_scale = 0.0
    post: list[float] = []
    inside: list[float] = []
    previous_fp: str | None = None

    def scale_of(level: float) -> float:
        window = base.values()
        scale = shrunk_scale(mad_scale(window), len(window), pooled, p.prior_runs)
        return max(scale, floor_scale(metric, level, p))

    for run in s.runs:
        if not (run.value > 0 or (metric == "rtt" and run.value == 0)):
            continue  # no log of 0 throughput: a failed test is not a level
        x = transform(metric, run.value)
        if previous_fp is not None and run.fingerprint != previous_fp:
            change = ConfigChange(s.key, run.run_id, run.t, previous_fp, run.fingerprint)
            out.config_changes.append(change)
            if episode is not None:
                episode.status = "configuration change"
                episode.closed_run, episode.closed_t = run.run_id, run.t
            base, pending, episode = Window(p.window_runs), [], None
        previous_fp = run.fingerprint

        if episode is None:
            if len(base) < p.min_runs:
                base.push(x)
                continue
            out.evaluated_runs.add(run.run_id)
            level = base.median()
            # most runs change too little to matter: no scale needed for them
            flagged, z = False, 0.0
            if big_enough(metric, x, level, p):
                scale = scale_of(level)
                flagged, z = judge(metric, x, level, scale, p)
            if not flagged:
                for item in pending:  # a lone spike: robust statistics keep it
                    base.push(item[1])
                pending = []
                base.push(x)
                continue
            direction = 1 if z > 0 else -1
            out.flagged_runs.add(run.run_id)
            if pending and pending[-1][3] != direction:
                for item in pending:
                    base.push(item[1])
                pending = []
            pending.append((run, x, z, direction))
            if len(pending) >= p.confirm_runs:
                first = pending[0]
                post = [item[1] for item in pending]
                episode = Episode(
                    key=s.key,
                    started_run=first[0].run_id,
                    started_t=first[0].t,
                    confirmed_run=run.run_id,
                    confirmed_t=run.t,
                    direction=direction,
                    old_level=untransform(metric, level),
                    z=first[2],
                    new_level=untransform(metric, median(post)),
                )
                out.episodes.append(episode)
                old_window, old_level, old_scale = base.values(), level, scale
                pending, inside = [], []
            continue

        # an open episode: judged against the old baseline
        out.evaluated_runs.add(run.run_id)
        flagged, z = judge(metric, x, old_level, old_scale, p)
        if not flagged:
            inside.append(x)
            if len(inside) >= p.revert_runs:
                episode.status, episode.closed_run, episode.closed_t = "reverted", run.run_id, run.t
                base = Window(p.window_runs, old_window + inside)
                episode = None
            continue
        out.flagged_runs.add(run.run_id)
        inside = []
        if (1 if z > 0 else -1) != episode.direction:
            continue  # beyond the old level on the other side: neither old nor new
        post.append(x)
        episode.new_level = untransform(metric, median(post))
        if len(post) >= p.new_normal_runs:
            episode.status, episode.closed_run, episode.closed_t = "new normal", run.run_id, run.t
            base = Window(p.window_runs, post)  # rebuilt from post-change runs only
            episode = None
    if episode is not None:
        out.baseline = untransform(metric, old_level)
    elif len(base) >= p.min_runs:
        out.baseline = untransform(metric, base.median())
    return out


# ---- all series ------------------------------------------------------------------------


def detect(series: Sequence[Series], p: Params = Params()) -> Detection:
    """Every series, with pooled scales, then pair episodes folded into host changes."""
    pooled = pooled_scales(series, p)
    results = [detect_series(s, p, pooled.get(group_key(s))) for s in series]
    hosts, folded = host_changes(results, p)
    episodes = [e for r in results for e in r.episodes if id(e) not in folded]
    configs = [c for r in results for c in r.config_changes]
    baselines = {r.key: r.baseline for r in results if r.baseline is not None}
    return Detection(episodes, hosts, configs, baselines)


def host_changes(results: Sequence[SeriesResult], p: Params) -> tuple[list[HostChange], set[int]]:
    """Hosts where at least host_share of their evaluated pairs started an episode in the
    same run; returns them and the ids of the episodes they stand for."""
    evaluated: dict[tuple[str, str, str, str, str], int] = defaultdict(int)
    started: dict[tuple[str, str, str, str, str], list[Episode]] = defaultdict(list)
    times: dict[str, str] = {}
    for r in results:
        k = r.key
        for run_id in r.evaluated_runs:
            for host in (k.src, k.dst):
                evaluated[(k.source, k.backend, k.metric, host, run_id)] += 1
        for e in r.episodes:
            times[e.started_run] = e.started_t
            for host in (k.src, k.dst):
                started[(k.source, k.backend, k.metric, host, e.started_run)].append(e)
    candidates = []
    for key, episodes in started.items():
        n = evaluated.get(key, 0)
        if len(episodes) >= p.host_min_pairs and n and len(episodes) / n >= p.host_share:
            candidates.append((len(episodes) / n, len(episodes), key, n))
    folded: set[int] = set()
    hosts = []
    for _share, _count, key, n in sorted(candidates, reverse=True):
        mine = [e for e in started[key] if id(e) not in folded]
        if len(mine) < p.host_min_pairs:
            continue
        folded.update(id(e) for e in mine)
        source, backend, metric, host, run_id = key
        hosts.append(HostChange(source, backend, metric, host, run_id, times[run_id], mine, n))
    return hosts, folded


def episode_doc(e: Episode, unit: Mapping[str, str]) -> dict[str, Any]:
    k = e.key
    return {
        "id": e.id, "kind": "pair", "source": k.source, "backend": k.backend,
        "metric": k.metric, "unit": unit[k.metric], "src": k.src, "dst": k.dst,
        "status": e.status, "started_run": e.started_run, "started_utc": e.started_t,
        "confirmed_run": e.confirmed_run, "confirmed_utc": e.confirmed_t,
        "closed_run": e.closed_run or None, "closed_utc": e.closed_t or None,
        "old_level": e.old_level, "new_level": e.new_level, "z": round(e.z, 2),
    }  # fmt: skip


def host_doc(h: HostChange, unit: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": h.id, "kind": "host", "source": h.source, "backend": h.backend,
        "metric": h.metric, "unit": unit[h.metric], "host": h.host, "status": h.status,
        "started_run": h.run_id, "started_utc": h.t, "pairs_changed": len(h.pairs),
        "pairs_evaluated": h.evaluated,
        "pairs": [episode_doc(e, unit) for e in h.pairs],
    }  # fmt: skip
