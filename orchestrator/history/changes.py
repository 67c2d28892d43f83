"""Change detection per path over per-run values (pure: no store, no clock).

A series is one directed pair's runs of one metric, within one source and backend; a path
is the two directions of one pair (A -> B and B -> A), judged together: a route change
moves both, and the two directions' run-to-run offsets are nearly the same (doit's data:
their day-to-day changes correlate at 0.95), so one change is one event, with each
direction's change shown. Median RTT is compared as is; throughput in log space (a halving
and a doubling are the same size of change).

- Baseline, per direction: the median of the last N (28) comparable runs: same source,
  backend and configuration fingerprint. Nothing is judged before MIN_RUNS (8) such runs.
- Scale, per direction: 1.4826 x MAD of those runs, shrunk toward the scale pooled over the
  series of similar level (their RTT decile within the source, backend and metric: the
  noise grows with RTT, slowly): scale^2 = (n s^2 + n0 s_pool^2) / (n + n0), n0 = 28 runs.
  Floored at 0.3 ms (throughput: log 1.01); no floor proportional to the RTT, which made
  every 10 ms change on a 200 ms path undetectable.
- Flagged run: a direction deviates by at least max(k1 x scale, 2 ms) (throughput: 20 %).
  A flagged run that is not (yet) confirmed is "suspected": shown, never notified.
- Event: confirmed by 3 consecutive flagged runs on the same side whose median deviation,
  in some direction, is at least max(k2 x scale, 2 ms); it starts at the first. It is then
  judged against the old baselines: 2 runs in a row inside them close it as "reverted";
  6 flagged runs on its side as "new normal", and each direction's baseline is rebuilt
  from the post-change runs only. A direction whose median change over the confirming
  runs stays below its confirmation threshold did not move: a one-directional change is
  reported as such.
- Configuration: a fingerprint change starts a new baseline and is reported as a
  configuration change (an open event closes as "configuration change"), never as a
  network change. The new baseline borrows the old one's scale (not its level) until it
  has 8 runs of its own, so the path is judged again from its 4th run (3 for a level).
- Host level: when at least 60 % (and at least 3) of one host's evaluated paths start an
  event in the same run, one host/region change is reported instead of those paths.
- Region toward a group: of the events left, at least 3 of one region's paths toward one
  continent (or one cloud), and at least half of those judged, starting in the same run
  are one region change toward that group, with its member paths.

k1 and k2 are recorded with every event; `smallest_change` gives the change a direction
confirms within 3 runs with 95 % probability (normal run-to-run noise of its scale).

`detect` and `calibrate` judge the runs before a path's first run near a threshold or
with a new configuration for all paths at once (numpy windows: those runs only join the
baselines; so does a new configuration's first runs when none of them is judged), then
run the per-path loop from there; the results are the loop's alone. change_series gives
each series' runs as columns (`Runs`), which those numpy parts read as they are.
"""

from __future__ import annotations

import gc
import hashlib
import math
from bisect import bisect_left, insort
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, NamedTuple, overload

import numpy as np

from orchestrator.core.stats import median as median  # tests and views use it here

MAD_TO_SIGMA = 1.4826
RTT_BANDS = 10  # the pooled scale is of the series in the same RTT decile


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


@dataclass(frozen=True)
class SeriesKey:
    """A directed pair's series; for a path, src < dst are its two ends."""

    source: str
    backend: str
    metric: str  # "rtt" or "throughput"
    src: str
    dst: str

    @property
    def cloud_pair(self) -> str:
        return f"{self.src.split(':')[0]}-{self.dst.split(':')[0]}"

    def path(self) -> SeriesKey:
        a, b = sorted((self.src, self.dst))
        return SeriesKey(self.source, self.backend, self.metric, a, b)

    def reverse(self) -> SeriesKey:
        return SeriesKey(self.source, self.backend, self.metric, self.dst, self.src)


class Run(NamedTuple):
    # a tuple: a year of a full catalog is millions of these
    run_id: str  # the sweep id
    t: str  # when (ISO 8601), for reports
    value: float  # median RTT, ms; or throughput, bit/s
    fingerprint: str


class Runs(Sequence[Run]):
    """A series' runs as columns, each Run made only when read: change_series builds a
    year's series so (650,000 runs), and detection reads the columns. The strings are in
    numpy object arrays, which the garbage collector does not walk (lists of a year's
    runs made each collection after detection tens of milliseconds longer)."""

    __slots__ = ("_logs", "ids", "prints", "times", "values")

    def __init__(
        self, ids: np.ndarray, times: np.ndarray, values: np.ndarray, prints: np.ndarray
    ) -> None:
        self.ids, self.times, self.values, self.prints = ids, times, values, prints
        self._logs: np.ndarray | None = None

    def logs(self) -> np.ndarray:
        """math.log of each value (numpy's may differ in the last bit), NaN for 0 or less;
        computed once (detect, calibrate and unjudged each read them)."""
        if self._logs is None:
            self._logs = np.array(
                [math.log(v) if v > 0 else math.nan for v in self.values.tolist()], dtype=float
            )
        return self._logs

    @classmethod
    def of(cls, runs: Sequence[Run]) -> Runs:
        if isinstance(runs, Runs):
            return runs

        def column(field: str) -> np.ndarray:
            out = np.empty(len(runs), dtype=object)  # strings, never split into characters
            out[:] = [getattr(r, field) for r in runs]
            return out

        values = np.array([r.value for r in runs], dtype=float)
        return cls(column("run_id"), column("t"), values, column("fingerprint"))

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, i: int) -> Run: ...

    @overload
    def __getitem__(self, i: slice) -> Runs: ...

    def __getitem__(self, i: int | slice) -> Run | Runs:
        if isinstance(i, slice):
            return Runs(self.ids[i], self.times[i], self.values[i], self.prints[i])
        return Run(self.ids[i], self.times[i], float(self.values[i]), self.prints[i])

    def __iter__(self) -> Iterator[Run]:
        return map(Run, self.ids, self.times, self.values.tolist(), self.prints)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # a sequence, as a list


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
    started_t: str
    confirmed_run: str
    confirmed_t: str
    direction: int  # +1 up, -1 down
    old_level: float  # in the metric's unit: the moved directions' mean
    z: float  # of the first flagged run, in scales
    new_level: float
    directions: list[DirectionChange] = field(default_factory=list)
    k1: float = 0.0
    k2: float = 0.0
    status: str = "open"  # "open", "reverted", "new normal", "configuration change"
    closed_run: str = ""
    closed_t: str = ""

    @property
    def id(self) -> str:
        text = "|".join((*_key_tuple(self.key), self.started_run))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def one_way(self) -> bool:
        return sum(d.moved for d in self.directions) == 1 and len(self.directions) == 2


@dataclass(frozen=True)
class Suspect:
    """A flagged run that no event confirmed (yet): shown, never notified."""

    key: SeriesKey  # the path
    run_id: str
    t: str
    deviations: tuple[tuple[str, str, float, float], ...]  # (src, dst, change, threshold)


def _roll_up_status(pairs: Sequence[Episode]) -> str:
    """Open while any member is; else the most common of their statuses."""
    statuses = {e.status for e in pairs}
    if "open" in statuses:
        return "open"
    return max(statuses, key=lambda s: sum(e.status == s for e in pairs))


@dataclass
class HostChange:
    source: str
    backend: str
    metric: str
    host: str
    run_id: str
    t: str
    pairs: list[Episode]
    evaluated: int  # the host's paths judged in that run

    @property
    def status(self) -> str:
        return _roll_up_status(self.pairs)

    @property
    def id(self) -> str:
        text = "|".join(("host", self.source, self.backend, self.metric, self.host, self.run_id))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class GroupChange:
    """Simultaneous changes of one region's paths toward one continent or cloud."""

    source: str
    backend: str
    metric: str
    host: str
    toward: str  # "continent:Europe" or "cloud:gcp"
    run_id: str
    t: str
    pairs: list[Episode]
    evaluated: int  # the host's paths toward that group judged in that run

    @property
    def status(self) -> str:
        return _roll_up_status(self.pairs)

    @property
    def id(self) -> str:
        text = "|".join(("group", self.source, self.backend, self.metric, self.host,
                         self.toward, self.run_id))  # fmt: skip
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
    groups: list[GroupChange] = field(default_factory=list)  # region toward continent/cloud

    @property
    def open(self) -> int:
        return (
            sum(e.status == "open" for e in self.episodes)
            + sum(h.status == "open" for h in self.hosts)
            + sum(g.status == "open" for g in self.groups)
        )


def _key_tuple(key: SeriesKey) -> tuple[str, ...]:
    return (key.source, key.backend, key.metric, key.src, key.dst)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (as it was after): building a year's
    series and judging them make millions of tuples and lists, none in a cycle, and each
    collection would walk them all again (a third of the time)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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
    total = 0.0
    for j in range(need, n + 1):  # j runs beyond confirm, the rest flagged only
        total += math.comb(n, j) * qb**j * (qa - qb) ** (n - j)
    return total


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
        """`mad`: mad_scale() of the (last n) values when known (_spreads gives it)."""
        self.n = n
        self.recent: deque[float] = deque()
        self.ordered: list[float] = []
        self._mad = mad  # mad_scale(), until the next push
        # as pushing them one by one: the last n, and sorted stably (equal values in
        # arrival order, as insort leaves them)
        last = list(values)[max(0, len(values) - n) :] if n > 0 else []
        self.recent.extend(last)
        self.ordered = sorted(last)

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
            m = self.median()
            self._mad = MAD_TO_SIGMA * median([abs(v - m) for v in self.ordered])
        return self._mad


def pooled_scales(series: Sequence[Series], p: Params) -> dict[SeriesKey, float]:
    """Per series: the median own scale of the series of its RTT decile (within its source,
    backend and metric), each from its last N runs of its latest fingerprint."""
    tails, counts = _Block(series).tails(p)
    tails.sort(axis=1)
    levels, own = _medians(tails, counts), MAD_TO_SIGMA * _medians(_spreads(tails, counts), counts)
    groups: dict[tuple[str, str, str], list[tuple[float, float, SeriesKey]]] = defaultdict(list)
    for s, n, level, scale in zip(series, counts.tolist(), levels.tolist(), own.tolist(),
                                  strict=True):  # fmt: skip
        if n >= p.min_runs:
            k = s.key
            groups[(k.source, k.backend, k.metric)].append((level, scale, k))
    out: dict[SeriesKey, float] = {}
    for members in groups.values():
        members.sort(key=lambda m: m[0])
        n = len(members)
        bands = min(RTT_BANDS, n)
        for band in range(bands):
            chunk = members[band * n // bands : (band + 1) * n // bands]
            pooled = median([m[1] for m in chunk])
            for m in chunk:
                out[m[2]] = pooled
    return out


# ---- many series at once ---------------------------------------------------------------

# numpy's scales may differ from the loop's in the last bits: a deviation within this
# share of a threshold is left to the loop, so results are the loop's to the bit
_MARGIN = 1e-9
_CHUNK = 256  # series per block of windows (256 x 56 runs x 28 values: 3 MB)


class _Block:
    """Many series' runs end to end: their values as given (raw) and transformed, and
    which series (row) and which of its runs (pos) each is."""

    def __init__(self, series: Sequence[Series]) -> None:
        self.runs = [Runs.of(s.runs) for s in series]
        self.lens = np.array([len(r) for r in self.runs], dtype=np.intp)
        self.starts = np.concatenate(([0], np.cumsum(self.lens)))
        self.row = np.repeat(np.arange(len(self.runs)), self.lens)
        self.pos = np.arange(len(self.row)) - self.starts[self.row]
        self.raw = _joined([r.values for r in self.runs])
        metrics = [s.key.metric for s in series]
        logged = [r.logs() if m == "throughput" else r.values
                  for m, r in zip(metrics, self.runs, strict=True)]  # fmt: skip
        self.values = _joined(logged)  # transform()
        self.rtt = np.repeat([m == "rtt" for m in metrics], self.lens)

    def kept(self, keep: np.ndarray) -> tuple[list[Runs], np.ndarray, np.ndarray]:
        """The runs `keep` holds for: per series as Runs, their values left-aligned in a
        series x runs array (NaN past its end) and how many each has."""
        counts = np.bincount(self.row[keep], minlength=len(self.runs))
        before = np.concatenate(([0], np.cumsum(keep)))  # kept runs before each
        at = before[:-1] - before[self.starts[self.row]]
        x = np.full((len(self.runs), int(counts.max(initial=0))), np.nan)
        x[self.row[keep], at[keep]] = self.values[keep]
        runs = self.runs
        if (counts != self.lens).any():
            runs = [r if n == len(r) else _compress(r, keep[a:b])
                    for r, n, a, b in zip(self.runs, counts.tolist(), self.starts[:-1].tolist(),
                                          self.starts[1:].tolist(), strict=True)]  # fmt: skip
        return runs, x, counts

    def tails(self, p: Params) -> tuple[np.ndarray, np.ndarray]:
        """Per series: the transformed values of its last window_runs runs of a value
        above 0 within the last stretch of its latest fingerprint (newest first, NaN past
        them; series x window_runs), and how many."""
        _first, begins, _count = _print_changes(self.runs)
        keep = (self.raw > 0) & (self.pos >= begins[self.row])
        before = np.concatenate(([0], np.cumsum(keep)))
        after = before[self.starts[1:]][self.row] - before[1:]  # kept runs after each
        keep &= after < p.window_runs
        tails = np.full((len(self.runs), max(p.window_runs, 1)), np.nan)
        tails[self.row[keep], after[keep]] = self.values[keep]
        return tails, np.bincount(self.row[keep], minlength=len(self.runs))


def _joined(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0)


def _compress(runs: Runs, keep: np.ndarray) -> Runs:
    return Runs(runs.ids[keep], runs.times[keep], runs.values[keep], runs.prints[keep])


def _steps(runs: Sequence[Runs], column: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The series' `column` end to end, and for each run which series it is of and its
    index in it."""
    lens = np.array([len(r) for r in runs], dtype=np.intp)
    row = np.repeat(np.arange(len(runs)), lens)
    pos = np.arange(len(row)) - np.concatenate(([0], np.cumsum(lens)))[row]
    return _joined([getattr(r, column) for r in runs]), row, pos


def _print_changes(runs: Sequence[Runs]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per series: the index of its first run of another fingerprint than the one before
    it (its length: none), of its last such run (0: none), and how many such runs."""
    prints, row, pos = _steps(runs, "prints")
    moved = np.flatnonzero((pos[1:] > 0) & (prints[1:] != prints[:-1])) + 1
    where, at = row[moved], pos[moved]
    first = np.array([len(r) for r in runs], dtype=np.intp)
    last = np.zeros(len(runs), dtype=np.intp)
    series, i = np.unique(where, return_index=True)
    first[series] = at[i]
    series, i = np.unique(where[::-1], return_index=True)
    last[series] = at[::-1][i]
    return first, last, np.bincount(where, minlength=len(runs))


def _medians(ordered: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row of values sorted with the NaNs last: the median of its first `counts`
    (as median(): the middle one, or the mean of the two; a value x is (x + x) / 2)."""
    rows = np.arange(len(counts))
    return (ordered[rows, np.maximum(counts - 1, 0) // 2] + ordered[rows, counts // 2]) / 2


def _spreads(ordered: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per row as _medians': its values' absolute deviations from their median, sorted
    (their median is the MAD)."""
    spread = np.abs(ordered - _medians(ordered, counts)[:, None])
    spread.sort(axis=1)
    return spread


def _rolling(
    x: np.ndarray,
    lens: np.ndarray,
    pooled: Sequence[float | None],
    floors: Sequence[float],
    p: Params,
    start: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Per series (a row of `x`: its transformed values, oldest first, one configuration,
    `lens` of them) and run: its deviation from the median of the up to window_runs
    values before it and the scale of those (as _Direction.scale, to numpy's rounding);
    NaN where the run is not judged (fewer than min_runs before it), is before column
    `start` or past the series' end. Arrays series x runs."""
    (rows, length), w = x.shape, p.window_runs
    first = max(p.min_runs, start) if w >= p.min_runs else length  # the first run asked
    dev = np.full((rows, length), np.nan)
    scale = np.full((rows, length), np.nan)
    if first >= length:
        return dev, scale
    pool = np.array([np.nan if q is None else q for q in pooled], dtype=float)
    floor = np.array(floors, dtype=float)
    ks = np.arange(first, length)
    n = np.minimum(ks, w)  # values in the window before run k
    lo, hi, at = (n - 1) // 2, n // 2, np.arange(len(ks))
    padded = np.concatenate([np.full((rows, w), np.nan), x], axis=1)
    for a in range(0, rows, _CHUNK):
        # run k's window: x[k - w : k] = padded[k : k + w]; its NaNs (before the first
        # run) sort last, past the n values
        windows = np.lib.stride_tricks.sliding_window_view(padded[a : a + _CHUNK], w, axis=1)
        win = np.sort(windows[:, first:length], axis=2)
        med = (win[:, at, lo] + win[:, at, hi]) / 2
        spread = np.subtract(win, med[:, :, None], out=win)
        np.abs(spread, out=spread)
        spread.sort(axis=2)
        own = MAD_TO_SIGMA * ((spread[:, at, lo] + spread[:, at, hi]) / 2)
        q = pool[a : a + _CHUNK, None]
        shrunk = np.sqrt((n * own * own + p.prior_runs * q * q) / (n + p.prior_runs))
        shrunk = np.where(np.isfinite(q), shrunk, own)
        dev[a : a + _CHUNK, first:] = x[a : a + _CHUNK, first:] - med
        scale[a : a + _CHUNK, first:] = np.maximum(shrunk, floor[a : a + _CHUNK, None])
    past = np.arange(length)[None, :] >= lens[:, None]
    dev[past] = np.nan
    scale[past] = np.nan
    return dev, scale


def _mads_before(x: np.ndarray, at: Sequence[int], w: int) -> list[float]:
    """Per row of `x`: mad_scale() of the up to w values before column `at`."""
    if not x.shape[1] or not w:
        return [math.nan] * len(x)  # no values: no Window is given one
    cols = np.asarray(at, dtype=np.intp)[:, None] + np.arange(-w, 0)
    inside = (cols >= 0) & (cols < x.shape[1])
    values = np.where(inside, x[np.arange(len(x))[:, None], np.clip(cols, 0, None)], np.nan)
    values.sort(axis=1)
    counts = inside.sum(axis=1)
    return (MAD_TO_SIGMA * _medians(_spreads(values, counts), counts)).tolist()


def _first(mask: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per row: the first column where `mask` holds, else its entry of `ends`."""
    if not mask.shape[1]:
        return ends
    return np.where(mask.any(axis=1), mask.argmax(axis=1), ends)


def _loop_from(near: np.ndarray, runs: Sequence[Runs], p: Params) -> tuple[list[int], list[int]]:
    """Per series: the first run the loop must see (its length: none), from its first run
    near a threshold (`near`) and its first configuration change; but none from a change
    after which no run is judged: the last, with too few runs after it for the new
    baseline (borrowed_min_runs of a borrowed scale when the old baseline had min_runs).
    And that change (its length: none)."""
    changes, _last, count = _print_changes(runs)
    lens, w = np.array([len(r) for r in runs], dtype=np.intp), p.window_runs
    need = np.where(np.minimum(changes, w) >= p.min_runs, p.borrowed_min_runs, p.min_runs)
    settled = (count == 1) & (np.minimum(lens - changes - 1, w) < need)
    firsts = np.where(near < changes, near, np.where(settled, lens, changes))
    return firsts.tolist(), changes.tolist()


def _ordered(times: list[str], ids: list[str]) -> bool:
    """Whether the runs are in strictly increasing (time, id) order."""
    if times == sorted(times) and len(set(times)) == len(times):
        return True
    return all(a < b for a, b in pairwise(zip(times, ids, strict=True)))


def _in_path_order(runs: Sequence[Runs], sizes: Sequence[int]) -> list[bool]:
    """Per path (`sizes`: its directions, consecutive in `runs`): whether its directions'
    runs are in strictly increasing (time, id) order, each run id once, and a run id
    shared by both has the same time in each (the path orders them as one)."""
    times, row, pos = _steps(runs, "times")
    ids = _joined([r.ids for r in runs])
    later = pos[1:] > 0
    # run ids that rise with the times (a sweep id starts with its time) are each there
    # once and in order; any other series is looked at alone
    ordered = [True] * len(runs)
    for i in np.unique(row[1:][later & ~(ids[1:] > ids[:-1])]).tolist():
        ordered[i] = len(set(runs[i].ids.tolist())) == len(runs[i])
    for i in np.unique(row[1:][later & ~(times[1:] > times[:-1])]).tolist():
        ordered[i] = ordered[i] and _ordered(runs[i].times.tolist(), runs[i].ids.tolist())
    # a path's second direction with the first's runs, compared for all paths at once
    starts = np.cumsum([0, *sizes[:-1]], dtype=np.intp).tolist()
    lens = np.array([len(r) for r in runs], dtype=np.intp)
    alike = np.zeros(len(runs), dtype=bool)
    alike[[a for a, n in zip(starts, sizes, strict=True) if n == 2 and lens[a] == lens[a + 1]]] = (
        True
    )
    at = np.flatnonzero(alike[row])
    partner = at + lens[row[at]]
    alike[row[at][(ids[at] != ids[partner]) | (times[at] != times[partner])]] = False
    out = []
    for a, n in zip(starts, sizes, strict=True):
        fine = all(ordered[a : a + n])  # else a run id twice, or runs out of order
        if fine and n > 1 and not alike[a]:
            first = dict(zip(runs[a].ids, runs[a].times, strict=True))
            fine = not any(first.get(rid, t) != t for r in runs[a + 1 : a + n]
                           for t, rid in zip(r.times, r.ids, strict=True))  # fmt: skip
        out.append(fine)  # else the path would order a direction's runs by another's
    return out


def _before(times: np.ndarray, ids: np.ndarray, cut: tuple[str, str]) -> int:
    """How many of the runs, in strictly increasing (time, id) order, come before `cut`."""
    at = bisect_left(times, cut[0])
    while at < len(times) and times[at] == cut[0] and ids[at] < cut[1]:
        at += 1
    return at


_Start = tuple[list["_Direction"], list[Series], SeriesResult]


def _quiet_starts(
    by_path: Mapping[SeriesKey, Sequence[Series]], p: Params, pooled: Mapping[SeriesKey, float]
) -> dict[SeriesKey, _Start]:
    """Per path: where detect_path's state is known without its loop, and that state.
    Until a path's first run with a configuration change or a direction within rounding
    of its flag threshold, every run just joins its direction's baseline: those runs'
    deviations and scales are computed for all paths at once, and the directions start
    with their baselines of them, the runs judged noted. Returns (directions, the
    series of the runs after, the result so far) for _judge; a path whose directions'
    runs are out of order, or take their times from each other, is left out."""
    flat = [s for members in by_path.values() for s in members]
    block = _Block(flat)
    # the runs the loop judges: no log of 0 throughput (a failed test is not a level)
    runs, x, lens = block.kept((block.raw > 0) | (block.rtt & (block.raw == 0)))
    dev, scale = _rolling(
        x, lens, [pooled.get(s.key) for s in flat], [floor_scale(s.key.metric, p) for s in flat], p
    )
    least = np.array([min_change(s.key.metric, p) for s in flat])
    loud = np.abs(dev) >= np.maximum(p.k1 * scale, least[:, None]) * (1 - _MARGIN)
    firsts, changes = _loop_from(_first(loud, lens), runs, p)
    mads = _mads_before(x, changes, p.window_runs)  # for a configuration change's restart
    in_order = _in_path_order(runs, [len(members) for members in by_path.values()])
    sizes = lens.tolist()
    out: dict[SeriesKey, _Start] = {}
    row = 0
    for (key, members), fine in zip(by_path.items(), in_order, strict=True):
        rows = range(row, row + len(members))
        row += len(members)
        if not fine:
            continue
        # the path's first run that is more than a run joining a baseline
        ends = [(runs[i].times[firsts[i]], runs[i].ids[firsts[i]])
                for i in rows if firsts[i] < sizes[i]]  # fmt: skip
        cut = min(ends) if ends else None
        result = SeriesResult(key)
        states, tails, configs = [], [], []
        for k, (s, i) in enumerate(zip(members, rows, strict=True)):
            mine, change = runs[i], changes[i]
            before = sizes[i] if cut is None else _before(mine.times, mine.ids, cut)
            upto = min(before, change)  # the runs before a configuration change
            base = Window(p.window_runs, x[i, max(0, upto - p.window_runs) : upto].tolist(),
                          mads[i] if upto == change else None)  # fmt: skip
            d = _Direction(s, p, pooled.get(s.key), base)
            d.fingerprint = mine.prints[upto - 1] if upto else None
            if p.window_runs >= p.min_runs:  # else no run is ever judged
                result.evaluated_runs.update(mine.ids[p.min_runs : upto].tolist())
            if upto < before:  # the change, then runs that only join the new baseline
                t, run_id = mine.times[change], mine.ids[change]
                configs.append(((t, run_id, k), ConfigChange(
                    s.key, run_id, t, mine.prints[change - 1], mine.prints[change])))  # fmt: skip
                d.restart()
                for value in x[i, change:before].tolist():
                    d.base.push(value)
                d.fingerprint = mine.prints[before - 1]
            states.append(d)
            tails.append(Series(s.key, mine[before:] if before < sizes[i] else (), s.distance_km))
        result.config_changes = [c for _at, c in sorted(configs, key=lambda c: c[0])]
        out[key] = (states, tails, result)
    return out


# ---- one path ----------------------------------------------------------------------


class _Direction:
    """One direction's state within a path."""

    def __init__(
        self, s: Series, p: Params, pooled: float | None, base: Window | None = None
    ) -> None:
        self.key = s.key
        self.p = p
        self.pooled = pooled
        self.base = Window(p.window_runs) if base is None else base
        self.fingerprint: str | None = None
        self.post: list[float] = []
        self.old_window: list[float] = []
        self.old_level = self.old_scale = 0.0
        # after a configuration change: the previous configuration's scale, used (with a
        # level of the new runs' own) until the new baseline has min_runs runs
        self.borrowed: float | None = None

    def ready(self) -> bool:
        if self.borrowed is not None:
            return len(self.base) >= self.p.borrowed_min_runs
        return len(self.base) >= self.p.min_runs

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


def _sorted_runs(directions: Sequence[_Direction], series: Sequence[Series]) -> list[
    tuple[str, str, dict[int, Run]]
]:  # fmt: skip
    """(t, run id, {direction index: run}) in time order."""
    by_run: dict[str, tuple[str, dict[int, Run]]] = {}
    for i, s in enumerate(series):
        metric = s.key.metric
        for run in s.runs:
            if not (run.value > 0 or (metric == "rtt" and run.value == 0)):
                continue  # no log of 0 throughput: a failed test is not a level
            entry = by_run.setdefault(run.run_id, (run.t, {}))
            entry[1][i] = run
    return sorted(((t, rid, runs) for rid, (t, runs) in by_run.items()), key=lambda x: x[:2])


def detect_path(
    key: SeriesKey,
    series: Sequence[Series],
    p: Params = Params(),
    pooled: Mapping[SeriesKey, float] | None = None,
) -> SeriesResult:
    """The events, suspected runs and configuration changes of one path from its one or
    two directions' series (see the module's rules)."""
    pooled = pooled or {}
    dirs = [_Direction(s, p, pooled.get(s.key)) for s in series]
    return _judge(key, dirs, series, SeriesResult(key), p)


def _judge(
    key: SeriesKey,
    dirs: Sequence[_Direction],
    series: Sequence[Series],
    out: SeriesResult,
    p: Params,
) -> SeriesResult:
    """detect_path over `series`' runs, from `dirs` and `out` as the runs before them
    left them with no run flagged and no configuration change (fresh: from the start)."""
    metric = key.metric
    # pending: flagged runs not confirmed yet: (run id, t, {i: x}, {i: deviation}, side)
    pending: list[tuple[str, str, dict[int, float], dict[int, float], int]] = []
    episode: Episode | None = None
    post_runs = 0  # runs at the new level, the confirming ones included
    inside_runs: list[dict[int, float]] = []  # consecutive runs back inside the old levels

    def flush() -> None:
        for _rid, _t, xs, _devs, _side in pending:
            for i, x in xs.items():
                dirs[i].base.push(x)
        pending.clear()

    for t, run_id, runs in _sorted_runs(dirs, series):
        xs = {i: transform(metric, run.value) for i, run in runs.items()}
        changed = [
            i for i, run in runs.items() if dirs[i].fingerprint not in (None, run.fingerprint)
        ]
        for i in changed:
            d = dirs[i]
            out.config_changes.append(
                ConfigChange(d.key, run_id, t, d.fingerprint or "", runs[i].fingerprint)
            )
            d.restart()
        if changed:
            if episode is not None:
                episode.status = "configuration change"
                episode.closed_run, episode.closed_t = run_id, t
                episode = None
            pending.clear()
        for i, run in runs.items():
            dirs[i].fingerprint = run.fingerprint

        if episode is None:
            judged = {i: x for i, x in xs.items() if dirs[i].ready()}
            for i, x in xs.items():
                if i not in judged:
                    dirs[i].base.push(x)
            if not judged:
                continue
            out.evaluated_runs.add(run_id)
            devs: dict[int, float] = {}
            flags: dict[int, float] = {}  # deviation / flag threshold, of flagged directions
            least = min_change(metric, p)
            for i, x in judged.items():
                devs[i] = x - dirs[i].base.median()
                if abs(devs[i]) >= least:  # most runs move too little: no scale needed
                    flag, _ = thresholds(metric, dirs[i].scale(), p)
                    if abs(devs[i]) >= flag:
                        flags[i] = devs[i] / flag
            if not flags:
                flush()
                for i, x in judged.items():
                    dirs[i].base.push(x)
                continue
            out.flagged_runs.add(run_id)
            side = 1 if max(flags.values(), key=abs) > 0 else -1
            if pending and pending[-1][4] != side:
                flush()
            pending.append((run_id, t, judged, devs, side))
            if len(pending) < p.confirm_runs:
                continue
            episode = _confirmed(key, dirs, pending, side, run_id, t, p)
            if episode is None:  # not far enough: the oldest joins the baseline, slide on
                first = pending.pop(0)
                for i, x in first[2].items():
                    dirs[i].base.push(x)
                continue
            out.episodes.append(episode)
            for i, d in enumerate(dirs):
                d.old_window = d.base.values() if d.ready() else []
                d.post = [item[2][i] for item in pending if i in item[2]]
            post_runs, inside_runs = len(pending), []
            pending.clear()
            continue

        # an open event: judged against the old baselines
        out.evaluated_runs.add(run_id)
        states = []  # per judged direction: 0 inside, +1/-1 flagged on that side
        for i, x in xs.items():
            d = dirs[i]
            if not d.old_window:
                d.base.push(x)  # not judged: it had too few runs when the event began
                continue
            flag, _ = thresholds(metric, d.old_scale, p)
            dev = x - d.old_level
            states.append(0 if abs(dev) < flag else (1 if dev > 0 else -1))
        if states and all(state == 0 for state in states):
            inside_runs.append(xs)
            if len(inside_runs) >= p.revert_runs:
                episode.status, episode.closed_run, episode.closed_t = "reverted", run_id, t
                for i, d in enumerate(dirs):
                    if d.old_window:  # the old baseline resumes, with the runs back in it
                        d.base = Window(p.window_runs, d.old_window)
                        for inside_xs in inside_runs:
                            if i in inside_xs:
                                d.base.push(inside_xs[i])
                episode = None
            continue
        out.flagged_runs.add(run_id)
        inside_runs = []
        if episode.direction not in states:
            continue  # beyond the old level on the other side only: neither old nor new
        for i, x in xs.items():
            if dirs[i].old_window:
                dirs[i].post.append(x)
        post_runs += 1
        _update_levels(episode, dirs, metric)
        if post_runs >= p.new_normal_runs:
            episode.status, episode.closed_run, episode.closed_t = "new normal", run_id, t
            for d in dirs:
                if d.old_window:  # rebuilt from the post-change runs only
                    d.base = Window(p.window_runs, d.post)
            episode = None

    out.suspects = _suspects(key, out, pending, dirs, metric, p)
    for d in dirs:
        if episode is not None and d.old_window:
            out.baselines[d.key] = untransform(metric, d.old_level)
            out.scales[d.key] = d.old_scale
        elif d.ready():
            out.baselines[d.key] = untransform(metric, d.base.median())
            out.scales[d.key] = d.scale()
    return out


def _update_levels(episode: Episode, dirs: Sequence[_Direction], metric: str) -> None:
    by_key = {d.key: d for d in dirs}
    for change in episode.directions:
        d = by_key[change.key]
        if d.post:
            change.new_level = untransform(metric, median(d.post))
    moved = [c for c in episode.directions if c.moved] or episode.directions
    episode.new_level = sum(c.new_level for c in moved) / len(moved)


def _confirmed(
    key: SeriesKey,
    dirs: Sequence[_Direction],
    pending: Sequence[tuple[str, str, dict[int, float], dict[int, float], int]],
    side: int,
    run_id: str,
    t: str,
    p: Params,
) -> Episode | None:
    """The event the pending runs confirm, or None when no direction's median deviation
    over them reaches its confirmation threshold."""
    metric = key.metric
    changes: list[DirectionChange] = []
    any_moved = False
    for i, d in enumerate(dirs):
        if not d.ready():
            continue
        scale = d.scale()
        flag, confirm = thresholds(metric, scale, p)
        devs = [item[3][i] for item in pending if i in item[3]]
        level = d.base.median()
        moved = bool(devs) and side * median(devs) >= confirm
        any_moved = any_moved or moved
        d.old_level, d.old_scale = level, scale
        xs = [item[2][i] for item in pending if i in item[2]]
        changes.append(
            DirectionChange(
                d.key, untransform(metric, level), untransform(metric, median(xs) if xs else level),
                scale, flag, confirm, moved,
            )
        )  # fmt: skip
    if not any_moved:
        return None
    first = pending[0]
    z = max(((dev / dirs[i].old_scale) for i, dev in first[3].items()), key=abs)
    went = [c for c in changes if c.moved]
    return Episode(
        key=key,
        started_run=first[0],
        started_t=first[1],
        confirmed_run=run_id,
        confirmed_t=t,
        direction=side,
        old_level=sum(c.old_level for c in went) / len(went),
        z=z,
        new_level=sum(c.new_level for c in went) / len(went),
        directions=changes,
        k1=p.k1,
        k2=p.k2,
    )


def _suspects(
    key: SeriesKey,
    out: SeriesResult,
    pending: Sequence[tuple[str, str, dict[int, float], dict[int, float], int]],
    dirs: Sequence[_Direction],
    metric: str,
    p: Params,
) -> list[Suspect]:
    """The flagged runs still waiting for confirmation at the end of the series."""
    found = []
    for run_id, t, _xs, devs, _side in pending:
        items = []
        for i, dev in devs.items():
            flag, _ = thresholds(metric, dirs[i].scale(), p)
            k = dirs[i].key
            items.append((k.src, k.dst, dev, flag))
        found.append(Suspect(key, run_id, t, tuple(items)))
    return found


def detect_series(s: Series, p: Params = Params(), pooled: float | None = None) -> SeriesResult:
    """One directed pair alone: a path with one direction."""
    return detect_path(s.key, [s], p, {s.key: pooled} if pooled is not None else None)


# ---- all series ------------------------------------------------------------------------


def paths(series: Sequence[Series]) -> dict[SeriesKey, list[Series]]:
    """The series grouped by path (both directions of a pair), A -> B first."""
    out: dict[SeriesKey, list[Series]] = defaultdict(list)
    for s in series:
        out[s.key.path()].append(s)
    for members in out.values():
        members.sort(key=lambda s: (s.key.src, s.key.dst))
    return dict(out)


def detect(
    series: Sequence[Series],
    p: Params = Params(),
    groups: Mapping[str, Sequence[str]] | None = None,
    pooled: Mapping[SeriesKey, float] | None = None,
) -> Detection:
    """Every path, with pooled scales, then path events folded into host changes, then
    into region changes toward one group (`groups`: region -> its labels, e.g.
    "continent:Europe", "cloud:gcp"). `pooled`: pooled_scales(series, p), computed
    already (calibrate takes them too)."""
    with gc_paused():
        pooled = pooled if pooled is not None else pooled_scales(series, p)
        by_path = paths(series)
        starts = _quiet_starts(by_path, p, pooled)
        results = []
        for key, members in by_path.items():
            if (start := starts.get(key)) is not None:
                results.append(_judge(key, *start, p))
            else:
                results.append(detect_path(key, members, p, pooled))
    hosts, folded = host_changes(results, p)
    grouped = group_changes(results, p, groups or {}, folded)
    for g in grouped:
        folded.update(id(e) for e in g.pairs)
    episodes = [e for r in results for e in r.episodes if id(e) not in folded]
    configs = [c for r in results for c in r.config_changes]
    baselines = {k: v for r in results for k, v in r.baselines.items()}
    scales = {k: v for r in results for k, v in r.scales.items()}
    suspects = [x for r in results for x in r.suspects]
    return Detection(episodes, hosts, configs, baselines, scales, suspects, p, grouped)


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


def unjudged(series: Sequence[Series], found: Detection) -> list[Unjudged]:
    """The series `found` has no baseline for, counted by source, metric and how many
    comparable runs they have (after a configuration change a series needs only
    borrowed_min_runs when the old configuration had min_runs: it borrows its scale)."""
    p = found.params
    waiting = [s for s in series if s.key not in found.baselines and len(s.runs)]
    block = _Block(waiting)
    _tails, tail_counts = block.tails(p)
    prints = _joined([r.prints for r in block.runs])
    last = prints[block.starts[1:] - 1]  # each series' latest fingerprint
    older_runs = (prints != last[block.row]) & (block.raw > 0)  # of another configuration
    olders = np.bincount(block.row[older_runs], minlength=len(waiting)).tolist()
    counts: Counter[tuple[str, str, int, int]] = Counter()
    for s, older, tail in zip(waiting, olders, tail_counts.tolist(), strict=True):
        needed = p.borrowed_min_runs if older >= p.min_runs else p.min_runs
        counts[(s.key.source, s.key.metric, tail, needed)] += 1
    return [
        Unjudged(source, metric, runs, needed, n)
        for (source, metric, runs, needed), n in sorted(
            counts.items(), key=lambda kv: (kv[0][0], kv[0][1] != "rtt", kv[0][1], kv[0][2])
        )
    ]


def _judged_counts(
    started: Iterable[tuple[str, ...]],
    results: Sequence[SeriesResult],
    prefixes: Callable[[SeriesKey], list[tuple[str, ...]]],
) -> dict[tuple[str, ...], int]:
    """Per key of `started` (a prefix and a run id): how many results with that prefix
    (`prefixes` of a path: one per host, or host and group, it counts toward) judged that
    run. Only the runs where an event started are counted: the only counts the roll-ups
    look at."""
    wanted: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for key in started:
        wanted[key[:-1]].append(key[-1])
    counts: dict[tuple[str, ...], int] = defaultdict(int)
    if not wanted:
        return counts
    for r in results:
        for prefix in prefixes(r.key):
            for run_id in wanted.get(prefix, ()):
                if run_id in r.evaluated_runs:
                    counts[(*prefix, run_id)] += 1
    return counts


def host_changes(results: Sequence[SeriesResult], p: Params) -> tuple[list[HostChange], set[int]]:
    """Hosts where at least host_share of their evaluated paths started an event in the
    same run; returns them and the ids of the events they stand for."""
    started: dict[tuple[str, str, str, str, str], list[Episode]] = defaultdict(list)
    times: dict[str, str] = {}
    for r in results:
        k = r.key
        for e in r.episodes:
            times[e.started_run] = e.started_t
            for host in (k.src, k.dst):
                started[(k.source, k.backend, k.metric, host, e.started_run)].append(e)
    evaluated = _judged_counts(
        started, results, lambda k: [(k.source, k.backend, k.metric, h) for h in (k.src, k.dst)]
    )
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


def group_changes(
    results: Sequence[SeriesResult],
    p: Params,
    groups: Mapping[str, Sequence[str]],
    folded: set[int],
) -> list[GroupChange]:
    """Regions where at least 3 paths toward one group (continent or cloud), and at least
    group_share of those judged in that run, started an event in the same run (events
    already in a host change left out)."""
    GKey = tuple[str, str, str, str, str, str]  # source, backend, metric, host, toward, run
    started: dict[GKey, list[Episode]] = defaultdict(list)
    times: dict[str, str] = {}
    for r in results:
        k = r.key
        for host, other in ((k.src, k.dst), (k.dst, k.src)):
            for toward in groups.get(other, ()):
                for e in r.episodes:
                    if id(e) not in folded:
                        times[e.started_run] = e.started_t
                        key = (k.source, k.backend, k.metric, host, toward, e.started_run)
                        started[key].append(e)
    evaluated = _judged_counts(
        started,
        results,
        lambda k: [
            (k.source, k.backend, k.metric, host, toward)
            for host, other in ((k.src, k.dst), (k.dst, k.src))
            for toward in groups.get(other, ())
        ],
    )
    candidates = []
    for key, episodes in started.items():
        n = evaluated.get(key, 0)
        if len(episodes) >= p.host_min_pairs and n and len(episodes) / n >= p.group_share:
            candidates.append((len(episodes), len(episodes) / n, key, n))
    taken: set[int] = set()
    out = []
    for _count, _share, key, n in sorted(candidates, reverse=True):
        mine = [e for e in started[key] if id(e) not in taken]
        if len(mine) < p.host_min_pairs:
            continue
        taken.update(id(e) for e in mine)
        source, backend, metric, host, toward, run_id = key
        out.append(GroupChange(source, backend, metric, host, toward, run_id, times[run_id],
                               mine, n))  # fmt: skip
    return out


# ---- self-calibration ------------------------------------------------------------------

CALIBRATION_SCALES = 4.5  # the deviation whose rate is measured
K1_BOUNDS = (3.0, 4.5)
K2_BOUNDS = (3.75, 5.5)


@dataclass(frozen=True)
class Calibration:
    judged: int  # runs judged against a baseline in the window
    beyond: int  # of which at least CALIBRATION_SCALES scales from it
    expected: float  # the share a normal noise would give
    inflation: float  # how much wider the tails are than normal's (>= 1)
    k1: float
    k2: float

    @property
    def rate(self) -> float:
        return self.beyond / self.judged if self.judged else 0.0


def calibrate(
    series: Sequence[Series],
    p: Params = Params(),
    last_runs: int = 28,
    pooled: Mapping[SeriesKey, float] | None = None,
) -> Calibration:
    """The rate of runs at least 4.5 scales from their baseline over each series' last
    `last_runs` runs (a week of 6-hourly runs) and the thresholds it implies: if that rate
    is what a normal noise gives beyond z, the tails are 4.5 / z times wider than normal,
    and k1, k2 grow by that much, within K1_BOUNDS and K2_BOUNDS. `pooled`:
    pooled_scales(series, p), computed already."""
    from statistics import NormalDist

    with gc_paused():
        pooled = pooled if pooled is not None else pooled_scales(series, p)
        judged, beyond = _calibration_counts(series, p, last_runs, pooled)
    normal = NormalDist()
    expected = 2 * (1 - normal.cdf(CALIBRATION_SCALES))
    rate = beyond / judged if judged else 0.0
    inflation = 1.0
    if rate > expected:
        inflation = CALIBRATION_SCALES / normal.inv_cdf(1 - min(rate, 0.5) / 2)
    k1 = min(max(p.k1 * inflation, K1_BOUNDS[0]), K1_BOUNDS[1])
    k2 = min(max(p.k2 * inflation, K2_BOUNDS[0]), K2_BOUNDS[1])
    return Calibration(judged, beyond, expected, inflation, round(k1, 2), round(k2, 2))


def _calibration_counts(
    series: Sequence[Series], p: Params, last_runs: int, pooled: Mapping[SeriesKey, float]
) -> tuple[int, int]:
    """calibrate's runs judged and runs beyond CALIBRATION_SCALES."""
    # until a series' first configuration change, or first run within rounding of 4.5
    # scales, every run's deviation and scale at once; from there on, the loop
    block = _Block(series)
    kept, x, lens = block.kept(block.raw > 0)
    start = max(int((lens - last_runs).min(initial=0)), 0)  # no series' last runs before
    dev, scale = _rolling(x, lens, [pooled.get(s.key) for s in series],
                          [floor_scale(s.key.metric, p) for s in series], p, start)  # fmt: skip
    cols = np.arange(dev.shape[1])[None, :]
    last = cols >= np.maximum(lens - last_runs, 0)[:, None]  # NaN where not judged
    near = last & (np.abs(np.abs(dev) - CALIBRATION_SCALES * scale) <= _MARGIN * scale)
    firsts, changes = _loop_from(_first(near, lens), kept, p)
    before = last & (cols < np.minimum(firsts, changes)[:, None])
    judged = int((before & ~np.isnan(dev)).sum())
    beyond = int((before & (np.abs(dev) >= CALIBRATION_SCALES * scale)).sum())
    for i, (s, runs, cut) in enumerate(zip(series, kept, firsts, strict=True)):
        if cut >= len(runs):
            continue
        xs = x[i, : len(runs)].tolist()
        d = _Direction(s, p, pooled.get(s.key))
        d.base = Window(p.window_runs, xs[max(0, cut - p.window_runs) : cut])
        d.fingerprint = runs.prints[cut - 1] if cut else None
        start = len(runs) - last_runs
        for j in range(cut, len(runs)):
            fingerprint, value = runs.prints[j], xs[j]
            if d.fingerprint not in (None, fingerprint):
                d.restart()
            d.fingerprint = fingerprint
            if j >= start and d.ready():
                judged += 1
                beyond += abs(value - d.base.median()) >= CALIBRATION_SCALES * d.scale()
            d.base.push(value)
    return judged, beyond


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
        "status": e.status, "started_run": e.started_run, "started_utc": e.started_t,
        "confirmed_run": e.confirmed_run, "confirmed_utc": e.confirmed_t,
        "closed_run": e.closed_run or None, "closed_utc": e.closed_t or None,
        "old_level": e.old_level, "new_level": e.new_level, "z": round(e.z, 2),
        "one_direction": e.one_way,
        "directions": [direction_doc(c, k.metric) for c in e.directions],
        "k1": e.k1, "k2": e.k2,
    }  # fmt: skip


def suspect_doc(s: Suspect, unit: Mapping[str, str]) -> dict[str, Any]:
    k = s.key
    return {
        "kind": "suspected", "source": k.source, "backend": k.backend, "metric": k.metric,
        "unit": unit[k.metric], "src": k.src, "dst": k.dst, "run": s.run_id, "utc": s.t,
        "directions": [
            {"src": a, "dst": b, "change": _shown(k.metric, dev),
             "flag_threshold": _shown(k.metric, flag)}
            for a, b, dev, flag in s.deviations
        ],
    }  # fmt: skip


def group_doc(g: GroupChange, unit: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": g.id, "kind": "region", "source": g.source, "backend": g.backend,
        "metric": g.metric, "unit": unit[g.metric], "host": g.host, "toward": g.toward,
        "status": g.status, "started_run": g.run_id, "started_utc": g.t,
        "pairs_changed": len(g.pairs), "pairs_evaluated": g.evaluated,
        "pairs": [episode_doc(e, unit) for e in g.pairs],
    }  # fmt: skip


def host_doc(h: HostChange, unit: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": h.id, "kind": "host", "source": h.source, "backend": h.backend,
        "metric": h.metric, "unit": unit[h.metric], "host": h.host, "status": h.status,
        "started_run": h.run_id, "started_utc": h.t, "pairs_changed": len(h.pairs),
        "pairs_evaluated": h.evaluated,
        "pairs": [episode_doc(e, unit) for e in h.pairs],
    }  # fmt: skip
