"""A run-to-run RTT noise model calibrated on the public data (data/), for judging change
detection on synthetic series (bench/history.py, tests).

What the public data says, and what each part of the model takes from it:
  - run to run (doit): pairs tested on two days, three days apart, on fresh VMs. Their
    relative difference |x1 - x2| / mean is the DIFFERENCE of two runs' offsets, so a
    model is fitted by simulating that difference (not by reading half of it as one run's
    deviation). GCP<->GCP pairs are the comparable runs (doit puts GCP VMs in zone -b every
    time; its AWS VMs land in any AZ, which our fingerprint would call a configuration
    change). Offsets are Student-t (heavy-tailed) with a per-pair scale drawn from a
    log-normal: the data's differences are both wide-bodied and spread across pairs (its
    lower quartile is far below any single symmetric law's).
  - within a run (skyplane, 10 pings per pair): ping jitter (exponential, mean = the median
    mdev) and transient spikes: the share of runs with a ping beyond max(2 ms, 5 %) of the
    run's minimum gives a per-ping spike probability, the sizes are those runs' max - min.
A run's value is the median of its pings, as the store takes it (list_median).
"""

from __future__ import annotations

import csv
import math
import random
import statistics
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.netmodel.model import DOIT_CSV, PUBLIC_DATA, SKYPLANE_CSV, load_rtt_mdev_ms

T_DF = 3.0  # degrees of freedom of a run's offset: heavy-tailed
PAIR_SPREADS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25)  # log-normal sigmas the fit tries


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _doit_rtts(path: Path, comparable_only: bool) -> Iterator[tuple[str, str, str, float]]:
    """(run id, "cloud:source", "cloud:destination", avgrtt ms) of doit's CSV rows with an
    RTT; only GCP<->GCP pairs when `comparable_only`."""
    with Path(path).open(newline="") as f:
        for row in csv.DictReader(f):
            if comparable_only and not row["from_cloud"] == row["to_cloud"] == "GCP":
                continue
            try:
                rtt = float(row["avgrtt"])
            except ValueError:
                continue
            if rtt > 0:
                src = f"{row['from_cloud']}:{row['from_region']}"
                yield row["run_id"], src, f"{row['to_cloud']}:{row['to_region']}", rtt


def _relative(a: float, b: float) -> float:
    return abs(a - b) / ((a + b) / 2)


def run_differences(path: Path, comparable_only: bool = True) -> list[float]:
    """|x1 - x2| / mean(x1, x2) of every two tests of the same directed pair in doit's CSV
    (avgrtt, ms); only GCP<->GCP pairs when `comparable_only`."""
    by_pair: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _, src, dst, rtt in _doit_rtts(path, comparable_only):
        by_pair[(src, dst)].append(rtt)
    return [
        _relative(a, b)
        for values in by_pair.values()
        for i, a in enumerate(values)
        for b in values[i + 1 :]
    ]


def direction_differences(path: Path, comparable_only: bool = True) -> list[float]:
    """|x(A>B) - x(B>A)| / mean of the two directions of a pair tested in the same run of
    doit's CSV. Both directions cross the same two one-way paths on the same VMs at about
    the same time, so this is what a run's own noise (five pings averaged on small VMs)
    adds, without any run-to-run change: the check that `run_differences` measures runs."""
    by_run = {(run, src, dst): rtt for run, src, dst, rtt in _doit_rtts(path, comparable_only)}
    return [
        _relative(a, by_run[(run, dst, src)])
        for (run, src, dst), a in by_run.items()
        if src < dst and (run, dst, src) in by_run
    ]


@dataclass(frozen=True)
class PingSpikes:
    per_ping: float  # probability that a ping is a transient spike
    sizes_rel: tuple[float, ...]  # a spike's size over the path RTT


def ping_spikes(path: Path) -> PingSpikes:
    """Per-ping spike probability and sizes from skyplane's 10-ping runs (AWS/GCP rows):
    a run with max - min >= max(2 ms, 5 % of min) holds a spike."""
    runs = spiky = 0
    sizes = []
    with Path(path).open(newline="") as f:
        for row in csv.DictReader(f):
            clouds = {row["src_region"].split(":")[0], row["dst_region"].split(":")[0]}
            if not clouds <= {"aws", "gcp"}:
                continue
            try:
                low, high = float(row["min_rtt"]), float(row["max_rtt"])
            except ValueError:
                continue
            runs += 1
            if high - low >= max(2.0, 0.05 * low):
                spiky += 1
                sizes.append((high - low) / low)
    share = spiky / runs if runs else 0.0
    return PingSpikes(1 - (1 - share) ** (1 / 10), tuple(sizes))


def student_t(rng: random.Random, df: float) -> float:
    if math.isinf(df):
        return rng.gauss(0, 1)
    return rng.gauss(0, 1) / math.sqrt(rng.gammavariate(df / 2, 2) / df)


@dataclass(frozen=True)
class Fit:
    median_scale: float  # median over pairs of the relative scale of a run's offset
    pair_spread: float  # sigma of log(scale) across pairs; 0 = every pair alike
    df: float
    error: float  # sum of squared log errors at the fitted quartiles


def fit_run_noise(
    diffs: Sequence[float],
    df: float = T_DF,
    spreads: Sequence[float] = PAIR_SPREADS,
    draws: int = 20000,
    seed: int = 7,
) -> Fit:
    """The per-pair log-normal scale x Student-t offsets whose simulated differences of two
    runs match the data's quartiles (25, 50, 75 %). Common random numbers: the draws are the
    same for every candidate, so the fit is smooth and repeatable."""
    rng = random.Random(seed)
    base = [(rng.gauss(0, 1), abs(student_t(rng, df) - student_t(rng, df))) for _ in range(draws)]
    want = [quantile(diffs, q) for q in (0.25, 0.5, 0.75)]
    best: Fit | None = None
    for spread in spreads:
        sim = [math.exp(spread * z) * d for z, d in base]
        # the median scale is exact: differences scale linearly with it
        scale = want[1] / quantile(sim, 0.5)
        got = [scale * quantile(sim, q) for q in (0.25, 0.5, 0.75)]
        error = sum(math.log(g / w) ** 2 for g, w in zip(got, want, strict=True))
        if best is None or error < best.error:
            best = Fit(scale, spread, df, error)
    assert best is not None
    return best


@dataclass
class NoiseModel:
    """Per-run medians of PINGS pings on a path: what change detection sees."""

    fit: Fit
    jitter_ms: float
    spikes: PingSpikes
    pings: int = 20
    run_spike: float = 0.0  # share of runs lifted whole (a route flap lasting one run)

    def pair_scale(self, rng: random.Random) -> float:
        return self.fit.median_scale * math.exp(self.fit.pair_spread * rng.gauss(0, 1))

    def run_value(
        self, rng: random.Random, rtt_ms: float, pair_scale: float, stat: str = "median"
    ) -> float:
        """One run on a path of `rtt_ms`: the median (or "mean") of its pings."""
        level = rtt_ms * (1 + pair_scale * student_t(rng, self.fit.df))
        if self.run_spike and rng.random() < self.run_spike:
            level *= 1 + rng.uniform(0.05, 0.3)
        pings = []
        for _ in range(self.pings):
            x = level + rng.expovariate(1 / self.jitter_ms)
            if self.spikes.sizes_rel and rng.random() < self.spikes.per_ping:
                x += level * rng.choice(self.spikes.sizes_rel)
            pings.append(x)
        return statistics.median(pings) if stat == "median" else statistics.fmean(pings)


def public_model(
    data_dir: Path = PUBLIC_DATA, comparable_only: bool = True, df: float = T_DF
) -> tuple[NoiseModel, list[float]]:
    """The model fitted on the public data, and the run differences it was fitted on."""
    diffs = run_differences(Path(data_dir) / DOIT_CSV, comparable_only)
    jitter = statistics.median(load_rtt_mdev_ms(Path(data_dir)))
    spikes = ping_spikes(Path(data_dir) / SKYPLANE_CSV)
    return NoiseModel(fit_run_noise(diffs, df), jitter, spikes), diffs


def median_abs_t(df: float, draws: int = 200001, seed: int = 3) -> float:
    """The median of |t| with `df` degrees of freedom (0.6745 for a normal, 0.7649 for 3)."""
    if df == 3.0:
        return 0.7649
    if math.isinf(df):
        return 0.6745
    rng = random.Random(seed)
    return quantile([abs(student_t(rng, df)) for _ in range(draws)], 0.5)


# ---- the per-path model (issue 21): a shared offset growing slowly with RTT ------------

# median |t| of each reading's offsets: a t draw is scaled by 0.6745 / this, so that every
# reading has the fitted body (the median absolute offset) and differs only in its tails
MEDIAN_ABS = {math.inf: 0.6745, 6.0: 0.7176, 4.0: 0.7407, 3.0: 0.7649}
READINGS = (math.inf, 6.0, 4.0)  # normal, t6, t4


def path_run_differences(path: Path, comparable_only: bool = True) -> list[tuple[float, float]]:
    """(mean RTT ms, |x1 - x2| ms) of every two tests of the same directed pair in doit's
    CSV (GCP<->GCP only when `comparable_only`): what two runs' offsets differ by."""
    by_pair: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _, src, dst, rtt in _doit_rtts(path, comparable_only):
        by_pair[(src, dst)].append(rtt)
    return [
        ((a + b) / 2, abs(a - b))
        for values in by_pair.values()
        for i, a in enumerate(values)
        for b in values[i + 1 :]
    ]


def fit_power_law(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(sigma at 100 ms, exponent) of sigma(RTT) = c x (RTT / 100 ms)^b from differences of
    two runs (each sqrt(2) x sigma x |N(0,1)|): b by least squares of log|d| on
    log(RTT / 100); c from the median of d / (RTT / 100)^b, which is 0.6745 x sqrt(2) x c."""
    pts = [(math.log(r / 100), math.log(d)) for r, d in points if r > 0 and d > 0]
    if len(pts) < 3:
        raise ValueError("too few run differences to fit")
    mx = statistics.fmean(x for x, _ in pts)
    my = statistics.fmean(y for _, y in pts)
    b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    ratios = [d / (r / 100) ** b for r, d in points if r > 0 and d > 0]
    return statistics.median(ratios) / (MEDIAN_ABS[math.inf] * math.sqrt(2)), b


@dataclass(frozen=True)
class PathNoise:
    """A path's runs: both directions share one offset per run (sigma growing with RTT as
    a power law), each direction adds a small residual of its own, then PINGS pings with
    exponential jitter and transient spikes; a run's value is the median of its pings."""

    scale_100_ms: float  # sigma of a run's shared offset on a 100 ms path
    exponent: float
    residual_rel: float  # sigma of a direction's own part, over the RTT
    jitter_ms: float
    spikes: PingSpikes
    df: float = math.inf  # the offsets' reading: normal, or Student-t with df
    pings: int = 20

    def sigma_ms(self, rtt_ms: float) -> float:
        return self.scale_100_ms * (rtt_ms / 100) ** self.exponent

    @property
    def t_factor(self) -> float:
        """What a t draw is multiplied by to keep the fitted median absolute offset."""
        return MEDIAN_ABS[math.inf] / MEDIAN_ABS[self.df]

    @property
    def name(self) -> str:
        return "normal" if math.isinf(self.df) else f"t{self.df:g}"


def path_model(data_dir: Path = PUBLIC_DATA, df: float = math.inf) -> PathNoise:
    """The per-path model fitted on the public data: the power law on doit's GCP<->GCP
    pairs tested on two days, the residual from the two directions of one run, the ping
    jitter and spikes from skyplane."""
    if df not in MEDIAN_ABS:
        raise ValueError(f"no reading with {df} degrees of freedom")
    doit = Path(data_dir) / DOIT_CSV
    scale, exponent = fit_power_law(path_run_differences(doit))
    # |x(A>B) - x(B>A)| / RTT within one run = sqrt(2) x residual x |N(0,1)|
    residual = statistics.median(direction_differences(doit)) / (
        MEDIAN_ABS[math.inf] * math.sqrt(2)
    )
    jitter = statistics.median(load_rtt_mdev_ms(Path(data_dir)))
    spikes = ping_spikes(Path(data_dir) / SKYPLANE_CSV)
    return PathNoise(scale, exponent, residual, jitter, spikes, df)
