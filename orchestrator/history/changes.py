"""Change detection per path, each run judged once, in time order, from the runs before it.

The rules, with their numbers, are docs/history.md's ('Change detection'). A series is one
directed pair's runs of one metric, within one source and backend; a path is the two
directions of one pair, judged together: a route change moves both, and the two
directions' run-to-run offsets are nearly the same (doit's data: their day-to-day changes
correlate at 0.95), so one change is one event, with each direction's change shown.
Throughput is compared in log space (a halving and a doubling are the same size of
change).

A PathJudge judges one path run by run and keeps only what the next run needs (its state,
which the store keeps between ingests: orchestrator.history.judgments); a Judge feeds many
paths sweep by sweep, with the pooled scales and calibration of the runs before each
sweep. `detect` runs a Judge over in-memory series, exactly as ingest does over the store.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_left, insort
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, NamedTuple

from orchestrator.core import gc_paused, parse_utc, read_utc, stamp
from orchestrator.core import median as median  # tests and views use it here
from orchestrator.history.metrics import iso_utc

MAD_TO_SIGMA = 1.4826
RTT_BANDS = 10  # the pooled scale is of the series in the same RTT decile


# the most runs a count of runs may name (--runs, --baseline-runs, --min-runs and the rule
# kept in the store): a year of six-hourly runs is 1,460; 10^8 allocated 9 GiB up front
MAX_RUNS = 10_000


@dataclass(frozen=True)
class Params:
    window_runs: int = 28
    min_runs: int = 8
    k1: float = 3.0  # flag: deviation >= max(k1 x scale, minimum change)
    k2: float = 3.75  # confirm: median deviation of the confirming runs >= max(k2 x scale, ...)
    rtt_min_ms: float = 2.0
    throughput_min_rel: float = 0.20
    floor_rtt_ms: float = 0.3
    floor_log: float = 0.01  # throughput: log(1.01)
    confirm_runs: int = 3
    revert_runs: int = 2
    new_normal_runs: int = 6
    host_share: float = 0.6
    host_min_pairs: int = 3
    prior_runs: float = 28.0  # weight of the pooled scale, in runs (a full baseline)
    borrowed_min_runs: int = 3  # after a configuration change: runs for a level of its own
    group_share: float = 0.5  # region roll-up: share of its paths toward a continent/cloud
    calibrate: bool = False  # k1, k2 from each sweep's calibration (within the bounds)

    @classmethod
    def from_doc(cls, doc: Any) -> Params:
        """The rule a JSON document keeps (judgments.set_rule), each field checked for its
        type and range: ValueError naming the first that is not, never a rule that
        crashes or allocates beyond bounds later."""
        if not isinstance(doc, dict):
            raise ValueError(f"expected a mapping of its fields, found {type(doc).__name__}")
        defaults = cls()
        for key, value in doc.items():
            default = getattr(defaults, str(key), None)
            if default is None:
                raise ValueError(f"unknown field {key!r}")
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if isinstance(default, bool):
                ok = isinstance(value, bool)
            elif isinstance(default, int):
                ok = number and isinstance(value, int) and 0 <= value <= MAX_RUNS
            else:
                ok = number and math.isfinite(value) and 0 <= value <= 1e6
            if not ok:
                raise ValueError(f"{key}: {value!r} is not a {type(default).__name__} in range")
        return cls(**doc)


class SeriesKey(NamedTuple):
    """A directed pair's series; for a path, src < dst are its two ends. A tuple: a
    full catalog's judging hashes millions of them."""

    source: str
    backend: str
    metric: str  # "rtt" or "throughput"
    src: str
    dst: str

    def path(self) -> SeriesKey:
        return self if self.src <= self.dst else self.reverse()

    def reverse(self) -> SeriesKey:
        return SeriesKey(self.source, self.backend, self.metric, self.dst, self.src)


class Run(NamedTuple):
    # a tuple: a year of a full catalog is millions of these
    run_id: str  # the sweep id
    t: datetime  # when: aware UTC, to the millisecond (as the store keeps it)
    value: float  # median RTT, ms; or throughput, bit/s
    fingerprint: str


@dataclass
class Series:
    key: SeriesKey
    runs: Sequence[Run]  # oldest first
    distance_km: float | None = None


@dataclass
class DirectionChange:
    """One direction of an event, levels in the metric's unit, thresholds in the
    transformed unit (ms; log for throughput)."""

    key: SeriesKey  # the directed pair
    old_level: float
    new_level: float
    scale: float
    flag_threshold: float
    confirm_threshold: float
    moved: bool = True  # its median change over the confirming runs reached its threshold


@dataclass
class Episode:
    """A confirmed change of one path (key: its two ends, src < dst)."""

    key: SeriesKey
    started_run: str
    started_t: datetime
    confirmed_run: str
    confirmed_t: datetime
    direction: int  # +1 up, -1 down
    old_level: float  # in the metric's unit: the moved directions' mean
    z: float  # of the first flagged run, in scales
    new_level: float
    directions: list[DirectionChange] = field(default_factory=list)
    k1: float = 0.0
    k2: float = 0.0
    status: str = "open"  # "open", "reverted", "new normal", "configuration change"
    closed_run: str = ""
    closed_t: datetime | None = None

    @property
    def id(self) -> str:
        return event_id(*self.key, self.started_run)

    @property
    def one_way(self) -> bool:
        return sum(d.moved for d in self.directions) == 1 and len(self.directions) == 2


@dataclass(frozen=True)
class Suspect:
    """A flagged run that no event confirmed (yet): shown, never notified."""

    key: SeriesKey  # the path
    run_id: str
    t: datetime
    deviations: tuple[tuple[str, str, float, float], ...]  # (src, dst, change, threshold)


def event_id(*parts: str) -> str:
    """An event's id: the same event gets the same one at every read (notify's key)."""
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


@dataclass
class HostChange:
    """Simultaneous changes of one host's paths (`toward` "": all of them), or of one
    region's paths toward one continent or cloud (`toward` "continent:Europe",
    "cloud:gcp")."""

    source: str
    backend: str
    metric: str
    host: str
    toward: str
    run_id: str
    t: datetime
    pairs: list[Episode]
    evaluated: int  # the host's paths (toward that group) judged in that run

    @property
    def status(self) -> str:
        """Open while any member is; else the most common of their statuses."""
        statuses = {e.status for e in self.pairs}
        if "open" in statuses:
            return "open"
        return max(statuses, key=lambda s: sum(e.status == s for e in self.pairs))

    @property
    def id(self) -> str:
        where = (self.host, self.toward) if self.toward else (self.host,)
        kind = "group" if self.toward else "host"
        return event_id(kind, self.source, self.backend, self.metric, *where, self.run_id)


@dataclass(frozen=True)
class ConfigChange:
    key: SeriesKey
    run_id: str
    t: datetime
    old_fingerprint: str
    new_fingerprint: str


@dataclass
class SeriesResult:
    """One path's outcome (key: the path)."""

    key: SeriesKey
    episodes: list[Episode] = field(default_factory=list)
    config_changes: list[ConfigChange] = field(default_factory=list)
    evaluated_runs: set[str] = field(default_factory=set)  # runs judged against a baseline
    flagged_runs: set[str] = field(default_factory=set)
    suspects: list[Suspect] = field(default_factory=list)
    # per directed pair: the level the next run is judged against (the old one while an
    # event is open), in the metric's unit, and its scale (transformed unit); absent
    # before MIN_RUNS comparable runs
    baselines: dict[SeriesKey, float] = field(default_factory=dict)
    scales: dict[SeriesKey, float] = field(default_factory=dict)

    @property
    def baseline(self) -> float | None:
        """The baseline of a one-direction path (detect_series)."""
        return next(iter(self.baselines.values()), None)


@dataclass
class Detection:
    episodes: list[Episode]  # path events not folded into a host change
    hosts: list[HostChange]
    config_changes: list[ConfigChange]
    baselines: dict[SeriesKey, float] = field(default_factory=dict)  # per directed pair
    scales: dict[SeriesKey, float] = field(default_factory=dict)  # per directed pair
    suspects: list[Suspect] = field(default_factory=list)
    params: Params = field(default_factory=lambda: Params())
    groups: list[HostChange] = field(default_factory=list)  # region toward continent/cloud

    # per source, backend and metric: the calibration after the latest sweep
    calibrations: dict[tuple[str, str, str], Calibration] = field(default_factory=dict)
    waiting: list[Unjudged] = field(default_factory=list)  # directions not judged yet

    def path_episodes(self) -> list[Episode]:
        """Every path episode: those alone, then those of host and region changes."""
        return [*self.episodes, *(e for x in [*self.hosts, *self.groups] for e in x.pairs)]

    @property
    def open(self) -> int:
        events: list[Episode | HostChange] = [*self.episodes, *self.hosts, *self.groups]
        return sum(x.status == "open" for x in events)


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


def floor_scale(metric: str, p: Params) -> float:
    """The smallest scale: 0.3 ms for RTT; log(1.01) in log space. Not proportional to the
    level: the run-to-run noise grows with RTT far slower than in proportion."""
    return math.log1p(p.floor_log) if metric == "throughput" else p.floor_rtt_ms


def min_change(metric: str, p: Params) -> float:
    """The smallest change ever flagged, in the transformed unit: 2 ms; log 1.2."""
    return math.log1p(p.throughput_min_rel) if metric == "throughput" else p.rtt_min_ms


def thresholds(metric: str, scale: float, p: Params) -> tuple[float, float]:
    """(flag, confirm) thresholds of a direction of this scale."""
    least = min_change(metric, p)
    return max(p.k1 * scale, least), max(p.k2 * scale, least)


def _normal_above(x: float) -> float:
    return 0.5 * math.erfc(x / math.sqrt(2))


def confirm_probability(change: float, scale: float, metric: str, p: Params) -> float:
    """Chance that a step of `change` (transformed unit) is confirmed by the 3 runs after
    it, for normal run-to-run noise of `scale`: all flagged and the median beyond the
    confirmation threshold (i.e. at least 2 of 3 beyond it)."""
    flag, confirm = thresholds(metric, scale, p)
    qa = _normal_above((flag - change) / scale)
    qb = min(_normal_above((confirm - change) / scale), qa)
    n = p.confirm_runs
    need = n // 2 + 1  # runs beyond the confirmation threshold for the median to be
    # j runs beyond confirm, the rest flagged only
    return sum(math.comb(n, j) * qb**j * (qa - qb) ** (n - j) for j in range(need, n + 1))


def smallest_change(scale: float, metric: str = "rtt", p: Params | None = None) -> float:
    """The change (transformed unit) confirmed within 3 runs with 95 % probability."""
    p = p or Params()
    lo, hi = 0.0, max(10 * p.k2 * scale, 10 * min_change(metric, p))
    for _ in range(60):
        mid = (lo + hi) / 2
        if confirm_probability(mid, scale, metric, p) >= 0.95:
            hi = mid
        else:
            lo = mid
    return hi


class Window:
    """The last n values, in arrival order and sorted: the median without a sort per run."""

    def __init__(self, n: int, values: Sequence[float] = (), mad: float | None = None) -> None:
        """`mad`: mad_scale() of the (last n) values when known (a kept state has it)."""
        self.n = n
        self._mad = mad  # mad_scale(), until the next push
        # as pushing them one by one: the last n, and sorted stably (equal values in
        # arrival order, as insort leaves them)
        last = list(values)[max(0, len(values) - n) :] if n > 0 else []
        self.recent: deque[float] = deque(last)
        self.ordered: list[float] = sorted(last)

    def push(self, x: float) -> None:
        self._mad = None
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

    def mad_scale(self) -> float:
        """mad_scale of the values, from the sorted ones, kept until the next push (a
        direction asks for its scale several times per run)."""
        if self._mad is None:
            self._mad = mad_scale(self.ordered)
        return self._mad


# ---- one path, run by run --------------------------------------------------------------

LEARNING = "learning"  # too few comparable runs: joined the baseline, not judged
NORMAL = "normal"  # judged, inside its flag threshold: joined the baseline
FLAGGED = "flagged"  # judged, some direction beyond its flag threshold: kept out
EPISODE = "episode"  # judged against an open episode's old level: kept out
CALIBRATION_RUNS = 28  # calibration: each direction's last judged runs outside episodes


class Judgment(NamedTuple):
    """One direction's run as it was judged, once: what the store's `judgments` holds.
    Levels in the metric's unit, scale, deviation and threshold in the transformed one
    (ms; log for throughput); None where the run was not judged (LEARNING)."""

    src: str
    dst: str
    run_id: str
    t: datetime
    fingerprint: str
    value: float
    status: str
    baseline: float | None  # the level it was judged against
    scale: float | None  # the scale in force (shrunk, floored; an episode's old one)
    own_scale: float | None  # 1.4826 x MAD of the baseline's runs alone
    pooled_scale: float | None  # the prior of its RTT decile, from the runs before
    baseline_runs: int
    k1: float
    k2: float
    deviation: float | None
    flag_threshold: float | None
    flagged: bool
    episode: str | None  # the open episode it was judged in (or that it confirmed)


# what a direction's state keeps beside its baseline (_Direction.doc / of_doc)
_KEPT = ("fingerprint", "post", "old_window", "old_level", "old_scale", "borrowed", "tail")


class _Direction:
    """One direction's state within a path (JSON: doc / of_doc)."""

    def __init__(self, key: SeriesKey, p: Params) -> None:
        self.key = key
        self.p = p
        self.pooled: float | None = None  # set for each run by the caller
        self.base = Window(p.window_runs)
        self.fingerprint: str | None = None
        self.post: list[float] = []
        self.old_window: list[float] = []
        self.old_level = self.old_scale = 0.0
        # after a configuration change: the previous configuration's scale, used (with a
        # level of the new runs' own) until the new baseline has min_runs runs
        self.borrowed: float | None = None
        # calibration: of its last judged runs outside episodes, oldest first, "1" for one
        # at least CALIBRATION_SCALES from its baseline, else "0"
        self.tail = ""

    def ready(self) -> bool:
        return len(self.base) >= self.needed()

    def needed(self) -> int:
        return self.p.borrowed_min_runs if self.borrowed is not None else self.p.min_runs

    def scale(self) -> float:
        n = len(self.base)
        if self.borrowed is not None:
            if n < self.p.min_runs:
                return self.borrowed
            self.borrowed = None
        scale = shrunk_scale(self.base.mad_scale(), n, self.pooled, self.p.prior_runs)
        return max(scale, floor_scale(self.key.metric, self.p))

    def restart(self) -> None:
        """A new configuration: a new baseline, borrowing the old one's scale."""
        self.borrowed = self.scale() if len(self.base) >= self.p.min_runs else self.borrowed
        self.base = Window(self.p.window_runs)

    def doc(self) -> dict[str, Any]:
        # the baseline's MAD kept beside its runs: the next ingest's pooled scales and
        # judgments read it rather than compute it again
        mad = self.base.mad_scale() if len(self.base) else None
        return {"base": self.base.values(), "mad": mad, **{k: getattr(self, k) for k in _KEPT}}

    @classmethod
    def of_doc(cls, key: SeriesKey, p: Params, doc: Mapping[str, Any]) -> _Direction:
        d = cls(key, p)
        d.base = Window(p.window_runs, doc["base"], doc.get("mad"))
        for name in _KEPT:  # a list copied: the judge changes it in place
            setattr(d, name, list(doc[name]) if isinstance(doc[name], list) else doc[name])
        return d


class _Pending(NamedTuple):
    """A flagged run waiting for confirmation: per direction (0: src -> dst of the path,
    1: back) its transformed value, deviation and flag threshold."""

    run_id: str
    t: datetime
    xs: dict[int, float]
    devs: dict[int, float]
    flags: dict[int, float]
    side: int


def _ints(doc: Mapping[str, float]) -> dict[int, float]:
    return {int(i): x for i, x in doc.items()}


class PathJudge:
    """One path's judge: each run judged once, in time order, against the runs before it
    only (see the module's rules). Its state is what the store keeps between ingests
    (doc / of_doc): the baselines' runs, the flagged runs waiting for confirmation and
    the open episode."""

    def __init__(self, key: SeriesKey, p: Params) -> None:
        self.key = key  # the path: src < dst
        self.p = p
        self.dirs: dict[int, _Direction] = {}  # 0: src -> dst, 1: dst -> src
        self.pending: list[_Pending] = []
        self.episode: Episode | None = None
        self.post_runs = 0  # runs at the new level, the confirming ones included
        self.inside_runs: list[dict[int, float]] = []  # runs back inside the old levels
        self.last: tuple[datetime, str] | None = None  # (t, run id) of the latest run judged

    def directed(self, i: int) -> SeriesKey:
        return self.key if i == 0 else self.key.reverse()

    def direction(self, i: int) -> _Direction:
        d = self.dirs.get(i)
        if d is None:
            d = self.dirs[i] = _Direction(self.directed(i), self.p)
        return d

    def step(
        self, run_id: str, t: datetime, runs: Mapping[int, Run], p: Params, out: Judged
    ) -> None:
        """Judge one run (each direction's test of one sweep) with the rule `p` in force
        (k1 and k2 may differ from run to run: calibration), into `out`."""
        self.p = p
        metric = self.key.metric
        dirs = {i: self.direction(i) for i in runs}
        xs = {i: transform(metric, run.value) for i, run in runs.items()}
        for i, run in runs.items():
            d, old = dirs[i], dirs[i].fingerprint
            if old is not None and old != run.fingerprint:
                out.config_changes.append(ConfigChange(d.key, run_id, t, old, run.fingerprint))
                d.restart()
                if self.episode is not None:
                    self._close("configuration change", run_id, t, out)
                self.pending.clear()
            d.fingerprint = run.fingerprint
        self.last = (t, run_id)

        def row(i: int, status: str, level: float | None = None, scale: float | None = None,
                own: float | None = None, dev: float | None = None, flag: float | None = None,
                episode: str | None = None) -> None:  # fmt: skip
            d = dirs[i]
            base = untransform(metric, level) if level is not None else None
            n = len(d.old_window if status == EPISODE else d.base)  # the runs of its baseline
            out.judgments.append((self.key, Judgment(
                d.key.src, d.key.dst, run_id, runs[i].t, runs[i].fingerprint, runs[i].value, status,
                base, scale, own, d.pooled, n, p.k1, p.k2, dev, flag,
                dev is not None and flag is not None and abs(dev) >= flag, episode,
            )))  # fmt: skip

        if self.episode is not None:
            self._judge_open(run_id, t, xs, row, out)
            return
        judged = {i: x for i, x in xs.items() if dirs[i].ready()}
        for i, x in xs.items():
            if i not in judged:
                row(i, LEARNING)
                dirs[i].base.push(x)
        if not judged:
            return
        devs: dict[int, float] = {}
        flags: dict[int, float] = {}  # flag thresholds
        rows: list[tuple[int, float, float, float]] = []  # direction, level, scale, own scale
        for i, x in judged.items():
            d = dirs[i]
            level, scale = d.base.median(), d.scale()
            devs[i], flags[i] = x - level, thresholds(metric, scale, p)[0]
            rows.append((i, level, scale, d.base.mad_scale()))
            beyond_calibration = abs(devs[i]) >= CALIBRATION_SCALES * scale
            d.tail = (d.tail + ("1" if beyond_calibration else "0"))[-CALIBRATION_RUNS:]
        # deviation / flag threshold, of flagged directions
        beyond = [devs[i] / flags[i] for i in judged if abs(devs[i]) >= flags[i]]
        for i, level, scale, own in rows:
            row(i, FLAGGED if beyond else NORMAL, level, scale, own, devs[i], flags[i])
        if not beyond:  # flagged runs before it were spikes: they never join a baseline
            self.pending.clear()
            for i, x in judged.items():
                dirs[i].base.push(x)
            return
        side = 1 if max(beyond, key=abs) > 0 else -1
        if self.pending and self.pending[-1].side != side:
            self.pending.clear()
        self.pending.append(_Pending(run_id, t, judged, devs, flags, side))
        if len(self.pending) < p.confirm_runs:
            return
        episode = self._confirmed(side, run_id, t, p)
        if episode is None:  # not far enough: the oldest is dropped, slide on
            self.pending.pop(0)
            return
        self.episode = out.episodes[episode.id] = episode
        for i, d in self.dirs.items():
            d.old_window = d.base.values() if d.ready() else []
            d.post = [item.xs[i] for item in self.pending if i in item.xs]
            # an episode is no noise: its runs (the last ones judged) leave the tail
            d.tail = d.tail[: len(d.tail) - len(d.post)]
        self.post_runs, self.inside_runs = len(self.pending), []
        self.pending.clear()
        out.judgments[-len(judged) :] = [
            (k, j._replace(episode=episode.id)) for k, j in out.judgments[-len(judged) :]
        ]

    def _judge_open(self, run_id: str, t: datetime, xs: dict[int, float],
                    row: Callable[..., None], out: Judged) -> None:  # fmt: skip
        """A run while an episode is open: judged against the old baselines."""
        episode, metric, p = self.episode, self.key.metric, self.p
        assert episode is not None
        states = []  # per judged direction: 0 inside, +1/-1 flagged on that side
        for i, x in xs.items():
            d = self.dirs[i]
            if not d.old_window:
                row(i, LEARNING)
                d.base.push(x)  # not judged: it had too few runs when the episode began
                continue
            flag, _ = thresholds(metric, d.old_scale, p)
            dev = x - d.old_level
            states.append(0 if abs(dev) < flag else (1 if dev > 0 else -1))
            row(i, EPISODE, d.old_level, d.old_scale, None, dev, flag, episode.id)
        if states and all(state == 0 for state in states):
            self.inside_runs.append(xs)
            if len(self.inside_runs) >= p.revert_runs:
                for i, d in self.dirs.items():
                    if d.old_window:  # the old baseline resumes, with the runs back in it
                        back = [inside[i] for inside in self.inside_runs if i in inside]
                        d.base = Window(p.window_runs, [*d.old_window, *back])
                self._close("reverted", run_id, t, out)
            return
        self.inside_runs = []
        if episode.direction not in states:
            return  # beyond the old level on the other side only: neither old nor new
        for i, x in xs.items():
            if self.dirs[i].old_window:
                self.dirs[i].post.append(x)
        self.post_runs += 1
        by_key = {d.key: d for d in self.dirs.values()}
        for change in episode.directions:  # the new levels, of the runs since the change
            if by_key[change.key].post:
                change.new_level = untransform(metric, median(by_key[change.key].post))
        moved = [c for c in episode.directions if c.moved] or episode.directions
        episode.new_level = sum(c.new_level for c in moved) / len(moved)
        if self.post_runs >= p.new_normal_runs:
            for d in self.dirs.values():
                if d.old_window:  # rebuilt from the post-change runs only
                    d.base = Window(p.window_runs, d.post)
            self._close("new normal", run_id, t, out)
        else:
            out.episodes[episode.id] = episode

    def _close(self, status: str, run_id: str, t: datetime, out: Judged) -> None:
        episode = self.episode
        assert episode is not None
        episode.status, episode.closed_run, episode.closed_t = status, run_id, t
        out.episodes[episode.id] = episode
        self.episode = None
        for d in self.dirs.values():
            d.old_window, d.post = [], []

    def _confirmed(self, side: int, run_id: str, t: datetime, p: Params) -> Episode | None:
        """The episode the pending runs confirm, or None when no direction's median
        deviation over them reaches its confirmation threshold."""
        metric = self.key.metric
        changes: list[DirectionChange] = []
        for i, d in sorted(self.dirs.items()):
            if not d.ready():
                continue
            d.old_scale = scale = d.scale()
            d.old_level = level = d.base.median()
            flag, confirm = thresholds(metric, scale, p)
            devs = [item.devs[i] for item in self.pending if i in item.devs]
            moved = bool(devs) and side * median(devs) >= confirm
            xs = [item.xs[i] for item in self.pending if i in item.xs]
            changes.append(
                DirectionChange(
                    d.key, untransform(metric, level),
                    untransform(metric, median(xs) if xs else level), scale, flag, confirm, moved,
                )
            )  # fmt: skip
        went = [c for c in changes if c.moved]
        if not went:
            return None
        first = self.pending[0]
        z = max(((dev / self.dirs[i].old_scale) for i, dev in first.devs.items()), key=abs)
        return Episode(
            key=self.key, started_run=first.run_id, started_t=first.t, confirmed_run=run_id,
            confirmed_t=t, direction=side, old_level=sum(c.old_level for c in went) / len(went),
            z=z, new_level=sum(c.new_level for c in went) / len(went), directions=changes,
            k1=p.k1, k2=p.k2,
        )  # fmt: skip

    # ---- what it shows -----------------------------------------------------------------

    def suspects(self) -> list[Suspect]:
        """The flagged runs still waiting for confirmation."""
        out = []
        for item in self.pending:
            ends = [(self.directed(i), dev, item.flags[i]) for i, dev in item.devs.items()]
            deviations = tuple((k.src, k.dst, dev, flag) for k, dev, flag in ends)
            out.append(Suspect(self.key, item.run_id, item.t, deviations))
        return out

    def baselines(self) -> dict[SeriesKey, tuple[float, float]]:
        """Per directed pair: the level the next run is judged against (the old one while
        an episode is open), in the metric's unit, and its scale; none before it is
        judged."""
        metric, out = self.key.metric, {}
        for d in self.dirs.values():
            if self.episode is not None and d.old_window:
                out[d.key] = (untransform(metric, d.old_level), d.old_scale)
            elif d.ready():
                out[d.key] = (untransform(metric, d.base.median()), d.scale())
        return out

    def waiting(self) -> list[tuple[SeriesKey, int, int]]:
        """The directions not judged yet (none in baselines()): (key, comparable runs, runs
        needed)."""
        open_ = self.episode is not None
        return [(d.key, len(d.base), d.needed()) for d in self.dirs.values()
                if not d.ready() and not (open_ and d.old_window)]  # fmt: skip

    def doc(self) -> dict[str, Any]:
        """The state, as JSON-able data (times as `stamp` text)."""
        return {
            "dirs": {str(i): d.doc() for i, d in self.dirs.items()},
            "pending": [
                [x.run_id, stamp(x.t), *({str(i): v for i, v in by_dir.items()}
                                         for by_dir in (x.xs, x.devs, x.flags)), x.side]
                for x in self.pending
            ],
            "episode": None if self.episode is None else episode_state(self.episode),
            "post_runs": self.post_runs,
            "inside_runs": [{str(i): v for i, v in xs.items()} for xs in self.inside_runs],
            "last": ["", ""] if self.last is None else [stamp(self.last[0]), self.last[1]],
        }  # fmt: skip

    @classmethod
    def of_doc(cls, key: SeriesKey, p: Params, doc: Mapping[str, Any]) -> PathJudge:
        judge = cls(key, p)
        for i, d in doc["dirs"].items():
            judge.dirs[int(i)] = _Direction.of_doc(judge.directed(int(i)), p, d)
        judge.pending = [
            _Pending(r, read_utc(t, "a kept flagged run's time"), _ints(xs), _ints(devs),
                     _ints(flags), side)
            for r, t, xs, devs, flags, side in doc["pending"]
        ]  # fmt: skip
        judge.episode = None if doc["episode"] is None else episode_of_state(doc["episode"])
        judge.post_runs = doc["post_runs"]
        judge.inside_runs = [_ints(xs) for xs in doc["inside_runs"]]
        last = parse_utc(doc["last"][0])  # "": no run judged yet
        judge.last = None if last is None else (last, doc["last"][1])
        return judge


def episode_state(e: Episode) -> dict[str, Any]:
    """An episode as JSON-able data: its fields, times as `stamp` text ("" for none), each
    direction the list of its fields (episode_of_state reads it back)."""
    doc = {f.name: getattr(e, f.name) for f in fields(e) if f.name != "directions"}
    doc.update(key=list(e.key), started_t=stamp(e.started_t), confirmed_t=stamp(e.confirmed_t))
    doc["closed_t"] = iso_utc(e.closed_t) or ""
    doc["directions"] = [
        [list(c.key), *(getattr(c, f.name) for f in fields(c)[1:])] for c in e.directions
    ]
    return doc


def episode_of_state(doc: Mapping[str, Any]) -> Episode:
    times = ("started_t", "confirmed_t", "closed_t")
    rest = {k: v for k, v in doc.items() if k not in ("key", "directions", *times)}
    return Episode(
        key=SeriesKey(*doc["key"]),
        directions=[DirectionChange(SeriesKey(*k), *rest) for k, *rest in doc["directions"]],
        started_t=read_utc(doc["started_t"], "a kept episode's start"),
        confirmed_t=read_utc(doc["confirmed_t"], "a kept episode's confirmation"),
        closed_t=parse_utc(doc["closed_t"]),  # "": open
        **rest,
    )


# ---- many paths, sweep by sweep --------------------------------------------------------

Group = tuple[str, str, str]  # source, backend, metric


def judgeable(metric: str, value: float) -> bool:
    """A value detection judges: no log of 0 throughput (a failed test is not a level)."""
    return value > 0 or (metric == "rtt" and value == 0)


def pooled_scales(
    directions: Iterable[tuple[SeriesKey, Window]], p: Params
) -> dict[SeriesKey, float]:
    """Per direction (its key and its baseline's runs, all of one source, backend and
    metric): the median own scale of the directions of its RTT decile, over those with
    at least min_runs runs in their baselines."""
    members = [(b.median(), b.mad_scale(), k) for k, b in directions if len(b) >= p.min_runs]
    members.sort(key=lambda m: m[0])
    n = len(members)
    bands = min(RTT_BANDS, n)
    out: dict[SeriesKey, float] = {}
    for band in range(bands):
        chunk = members[band * n // bands : (band + 1) * n // bands]
        pooled = median([m[1] for m in chunk])
        out.update((m[2], pooled) for m in chunk)
    return out


@dataclass
class Judged:
    """What judging one sweep gave, to be stored."""

    judgments: list[tuple[SeriesKey, Judgment]] = field(default_factory=list)  # path, row
    episodes: dict[str, Episode] = field(default_factory=dict)  # by id, as they stand now
    config_changes: list[ConfigChange] = field(default_factory=list)
    calibrations: dict[Group, Calibration] = field(default_factory=dict)  # in force


@dataclass
class Judge:
    """Many paths' judges, fed sweep by sweep in time order: each sweep's runs judged with
    the pooled scales and calibration of the runs before it."""

    p: Params
    paths: dict[SeriesKey, PathJudge] = field(default_factory=dict)
    # per directed pair: the pooled scale, fixed in place of the runs' (detect_series)
    fixed: Mapping[SeriesKey, float] | None = None

    def in_force(self, group: Group) -> tuple[dict[SeriesKey, float], Calibration]:
        """The pooled scales (per directed pair) and the calibration of `group` from the
        runs judged so far."""
        members = [d for k, j in self.paths.items() if k[:3] == group for d in j.dirs.values()]
        pooled = pooled_scales(((d.key, d.base) for d in members), self.p)
        judged = sum(len(d.tail) for d in members)
        beyond = sum(d.tail.count("1") for d in members)
        return pooled, calibration(judged, beyond, self.p)

    def sweep(self, run_id: str, runs: Iterable[tuple[SeriesKey, Run]]) -> Judged:
        """Judge one sweep's runs (directed keys; a pair's later test of the same sweep
        replaces its earlier one)."""
        grouped: dict[Group, dict[SeriesKey, dict[int, Run]]] = defaultdict(dict)
        for key, run in runs:
            if not judgeable(key.metric, run.value):
                continue
            path = key.path()
            i = 0 if key.src == path.src else 1
            grouped[(key.source, key.backend, key.metric)].setdefault(path, {})[i] = run
        out = Judged()
        for group, paths in grouped.items():
            pooled, cal = self.in_force(group)
            scales = pooled if self.fixed is None else self.fixed
            out.calibrations[group] = cal
            p = replace(self.p, k1=cal.k1, k2=cal.k2) if self.p.calibrate else self.p
            for path, by_direction in paths.items():
                judge = self.paths.get(path)
                if judge is None:
                    judge = self.paths[path] = PathJudge(path, self.p)
                for i in by_direction:
                    judge.direction(i).pooled = scales.get(judge.directed(i))
                judge.step(run_id, by_direction[min(by_direction)].t, by_direction, p, out)
        return out


def sweeps_of(series: Iterable[Series]) -> list[tuple[str, list[tuple[SeriesKey, Run]]]]:
    """The series' runs as sweeps (their run ids), in time order: by their earliest run's
    time, then id."""
    by_run: dict[str, list[tuple[SeriesKey, Run]]] = defaultdict(list)
    for s in series:
        for run in s.runs:
            by_run[run.run_id].append((s.key, run))
    order = sorted(by_run, key=lambda r: (min(run.t for _k, run in by_run[r]), r))
    return [(r, by_run[r]) for r in order]


def _judged_paths(
    series: Sequence[Series], judge: Judge
) -> tuple[list[SeriesResult], dict[Group, Calibration]]:
    """Every path of `series` judged sweep by sweep by `judge`, as the store's ingest
    judges them; the calibrations after the last sweep."""
    results: dict[SeriesKey, SeriesResult] = {}
    episodes: dict[SeriesKey, dict[str, Episode]] = defaultdict(dict)
    calibrations: dict[Group, Calibration] = {}
    for run_id, runs in sweeps_of(series):
        judged = judge.sweep(run_id, runs)
        calibrations.update(judged.calibrations)
        for path, j in judged.judgments:
            r = results.setdefault(path, SeriesResult(path))
            if j.status != LEARNING:  # judged against a baseline
                r.evaluated_runs.add(j.run_id)
            if j.flagged:
                r.flagged_runs.add(j.run_id)
        for e in judged.episodes.values():
            episodes[e.key][e.id] = e
        for c in judged.config_changes:
            results[c.key.path()].config_changes.append(c)
    for key, r in results.items():
        r.episodes = sorted(episodes[key].values(), key=lambda e: (e.started_t, e.started_run))
        r.suspects = judge.paths[key].suspects()
        for directed, (level, scale) in judge.paths[key].baselines().items():
            r.baselines[directed], r.scales[directed] = level, scale
    return list(results.values()), calibrations


def detect_series(s: Series, p: Params = Params(), pooled: float | None = None) -> SeriesResult:
    """One directed pair alone (a path with one direction), with a fixed pooled scale."""
    judge = Judge(p, fixed={s.key: pooled} if pooled is not None else {})
    results, _ = _judged_paths([s], judge)
    return results[0] if results else SeriesResult(s.key.path())


def detect(
    series: Sequence[Series],
    p: Params = Params(),
    groups: Mapping[str, Sequence[str]] | None = None,
) -> Detection:
    """Every path judged sweep by sweep, as the store's ingest judges them, then path
    episodes folded into host changes, then into region changes toward one group
    (`groups`: region -> its labels, e.g. "continent:Europe", "cloud:gcp")."""
    with gc_paused():
        judge = Judge(p)
        results, calibrations = _judged_paths(series, judge)
        waiting = unjudged(w for j in judge.paths.values() for w in j.waiting())
    return detection_of(results, p, groups or {}, calibrations, waiting)


def detection_of(
    results: Sequence[SeriesResult],
    p: Params,
    groups: Mapping[str, Sequence[str]],
    calibrations: Mapping[Group, Calibration] | None = None,
    waiting: Sequence[Unjudged] = (),
) -> Detection:
    """The paths' results with their episodes folded into host and region changes."""
    hosts, folded = _roll_ups(results, p, None, set())
    grouped, more = _roll_ups(results, p, groups, folded)
    folded |= more
    return Detection(
        episodes=[e for r in results for e in r.episodes if id(e) not in folded],
        hosts=hosts,
        config_changes=[c for r in results for c in r.config_changes],
        baselines={k: v for r in results for k, v in r.baselines.items()},
        scales={k: v for r in results for k, v in r.scales.items()},
        suspects=[x for r in results for x in r.suspects],
        params=p,
        groups=grouped,
        calibrations=dict(calibrations or {}),
        waiting=list(waiting),
    )


@dataclass(frozen=True)
class Unjudged:
    """`pairs` directed pairs of one source and metric that are not judged yet: each has
    `runs` of the `needed` comparable runs (same backend and configuration)."""

    source: str
    metric: str
    runs: int
    needed: int
    pairs: int

    def text(self) -> str:
        """`not judged: 56 pairs have 1 of the 8 runs needed (rtt, measured)`."""
        what = "pair has" if self.pairs == 1 else "pairs have"
        return (
            f"not judged: {self.pairs} {what} {self.runs} of the {self.needed} runs needed "
            f"({self.metric}, {self.source})"
        )


def unjudged(waiting: Iterable[tuple[SeriesKey, int, int]]) -> list[Unjudged]:
    """The directions not judged yet ((key, comparable runs, runs needed), PathJudge.waiting)
    counted by source, metric, runs and runs needed."""
    counts: Counter[tuple[str, str, int, int]] = Counter(
        (key.source, key.metric, runs, needed) for key, runs, needed in waiting
    )
    order = sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1] != "rtt", *kv[0][1:3]))
    return [Unjudged(*key, n) for key, n in order]


def _roll_ups(
    results: Sequence[SeriesResult],
    p: Params,
    groups: Mapping[str, Sequence[str]] | None,
    folded: set[int],
) -> tuple[list[HostChange], set[int]]:
    """The host changes (`groups` None) or the region changes toward each group of
    `groups` (region -> its groups), by docs/history.md's rule, events in `folded` left
    out; the largest first by share (regions: by count), each event claimed by the first
    change that takes it. Returns the changes and their events' ids."""

    def ends(k: SeriesKey) -> list[tuple[str, ...]]:  # (source, backend, metric, host, toward)
        if groups is None:
            return [(*k[:3], k.src, ""), (*k[:3], k.dst, "")]
        pairs = ((k.src, k.dst), (k.dst, k.src))
        return [(*k[:3], host, to) for host, other in pairs for to in groups.get(other, ())]

    min_pairs = p.host_min_pairs
    share, count_first = (p.host_share, False) if groups is None else (p.group_share, True)
    started: dict[tuple[str, ...], list[Episode]] = defaultdict(list)  # by end and run
    wanted: dict[tuple[str, ...], set[str]] = defaultdict(set)  # by end: runs where one started
    times: dict[str, datetime] = {}
    for r in results:
        for end in ends(r.key):
            for e in r.episodes:
                if id(e) not in folded:
                    times[e.started_run] = e.started_t
                    started[(*end, e.started_run)].append(e)
                    wanted[end].add(e.started_run)
    # the paths judged in each run where a change started: the only counts looked at
    evaluated: Counter[tuple[str, ...]] = Counter()
    for r in results if wanted else ():
        for end in ends(r.key):
            evaluated.update((*end, run) for run in wanted.get(end, set()) & r.evaluated_runs)
    candidates = []
    for key, episodes in started.items():
        n = evaluated[key]
        ratio = len(episodes) / n if n else 0.0
        if len(episodes) >= min_pairs and n and ratio >= share:
            rank = (len(episodes), ratio) if count_first else (ratio, len(episodes))
            candidates.append((rank, key, n))
    claimed: set[int] = set()
    out = []
    for _rank, key, n in sorted(candidates, reverse=True):
        mine = [e for e in started[key] if id(e) not in claimed]
        if len(mine) >= min_pairs:
            claimed.update(id(e) for e in mine)
            source, backend, metric, host, toward, run_id = key
            out.append(HostChange(source, backend, metric, host, toward, run_id, times[run_id],
                                  mine, n))  # fmt: skip
    return out, claimed


# ---- self-calibration ------------------------------------------------------------------

CALIBRATION_SCALES = 4.5  # the deviation whose rate is measured
K1_BOUNDS = (3.0, 4.5)
K2_BOUNDS = (3.75, 5.5)


@dataclass(frozen=True)
class Calibration:
    judged: int  # runs judged against a baseline, outside episodes
    beyond: int  # of which at least CALIBRATION_SCALES scales from it
    expected: float  # the share a normal noise would give
    inflation: float  # how much wider the tails are than normal's (>= 1)
    k1: float
    k2: float

    @property
    def rate(self) -> float:
        return self.beyond / self.judged if self.judged else 0.0


def calibration(judged: int, beyond: int, p: Params = Params()) -> Calibration:
    """The thresholds a rate of `beyond` of `judged` runs at least 4.5 scales from their
    baseline implies (docs/history.md's rule: tails 4.5 / z times a normal's)."""
    from statistics import NormalDist

    normal = NormalDist()
    expected = 2 * (1 - normal.cdf(CALIBRATION_SCALES))
    rate = beyond / judged if judged else 0.0
    inflation = 1.0
    if rate > expected:
        inflation = CALIBRATION_SCALES / normal.inv_cdf(1 - min(rate, 0.5) / 2)
    k1 = min(max(p.k1 * inflation, K1_BOUNDS[0]), K1_BOUNDS[1])
    k2 = min(max(p.k2 * inflation, K2_BOUNDS[0]), K2_BOUNDS[1])
    return Calibration(judged, beyond, expected, inflation, round(k1, 2), round(k2, 2))


def combined_calibration(found: Detection) -> Calibration | None:
    """The calibration of every source, backend and metric of `found` together (None:
    nothing judged yet)."""
    cals = found.calibrations.values()
    if not cals:
        return None
    return calibration(sum(c.judged for c in cals), sum(c.beyond for c in cals), found.params)


# ---- documents -------------------------------------------------------------------------


def _shown(metric: str, x: float) -> float:
    """A transformed-unit threshold as the reader sees it: ms, or a ratio for throughput."""
    return round(math.expm1(x), 4) if metric == "throughput" else round(x, 3)


def _percent(old: float, new: float) -> float | None:
    """The change in % of the old level, to 0.1 (None from a level of 0)."""
    return round(100.0 * (new / old - 1.0), 1) if old else None


def unjudged_doc(u: Unjudged) -> dict[str, Any]:
    return {
        "source": u.source, "metric": u.metric, "pairs": u.pairs, "runs": u.runs,
        "runs_needed": u.needed, "text": u.text(),
    }  # fmt: skip


def direction_doc(c: DirectionChange, metric: str) -> dict[str, Any]:
    return {
        "src": c.key.src, "dst": c.key.dst, "old_level": c.old_level,
        "new_level": c.new_level, "change": c.new_level - c.old_level,
        "change_pct": _percent(c.old_level, c.new_level), "moved": c.moved,
        "scale": _shown(metric, c.scale), "flag_threshold": _shown(metric, c.flag_threshold),
        "confirm_threshold": _shown(metric, c.confirm_threshold),
    }  # fmt: skip


def episode_doc(e: Episode, unit: Mapping[str, str]) -> dict[str, Any]:
    k = e.key
    return {
        "id": e.id, "kind": "path", "source": k.source, "backend": k.backend,
        "metric": k.metric, "unit": unit[k.metric], "src": k.src, "dst": k.dst,
        "status": e.status, "started_run": e.started_run, "started_utc": stamp(e.started_t),
        "confirmed_run": e.confirmed_run, "confirmed_utc": stamp(e.confirmed_t),
        "closed_run": e.closed_run or None, "closed_utc": iso_utc(e.closed_t),
        "old_level": e.old_level, "new_level": e.new_level, "z": round(e.z, 2),
        "one_direction": e.one_way,
        "directions": [direction_doc(c, k.metric) for c in e.directions],
        "k1": e.k1, "k2": e.k2,
    }  # fmt: skip


def suspect_doc(s: Suspect, unit: Mapping[str, str]) -> dict[str, Any]:
    k = s.key
    return {
        "kind": "suspected", "source": k.source, "backend": k.backend, "metric": k.metric,
        "unit": unit[k.metric], "src": k.src, "dst": k.dst, "run": s.run_id, "utc": stamp(s.t),
        "directions": [
            {"src": a, "dst": b, "change": _shown(k.metric, dev),
             "flag_threshold": _shown(k.metric, flag)}
            for a, b, dev, flag in s.deviations
        ],
    }  # fmt: skip


def group_doc(g: HostChange, unit: Mapping[str, str]) -> dict[str, Any]:
    """A host change's document, or a region change's (`kind` "region", with `toward`)."""
    return {
        "id": g.id, "kind": "region" if g.toward else "host", "source": g.source,
        "backend": g.backend, "metric": g.metric, "unit": unit[g.metric], "host": g.host,
        **({"toward": g.toward} if g.toward else {}), "status": g.status,
        "started_run": g.run_id, "started_utc": stamp(g.t), "pairs_changed": len(g.pairs),
        "pairs_evaluated": g.evaluated, "pairs": [episode_doc(e, unit) for e in g.pairs],
    }  # fmt: skip
