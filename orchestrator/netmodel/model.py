"""The network model of the emulated cloud: what delay and bandwidth a pair of
emulated regions gets, calibrated on real AWS and GCP measurements.

Latency: RTT = base + per-km term x distance + a cross-cloud extra. Light in
fibre sets a floor of 1 ms per 100 km round trip (10 ms per 1000 km); real
routes are longer than the geodesic, so the fitted per-km term is above it.

Bandwidth: a small cloud VM's single TCP stream is capped by its NIC near home
and by its TCP window far away: throughput = min(cap, window / RTT). The
emulator reproduces that curve scaled down by `scale`, so that a 2-core machine
can carry it: the rate cap and the window both shrink by the same factor, which
keeps the RTT where the curve bends unchanged.

`delayd` (infra/local/delayd) applies the one-way delays; the emulator applies
the rate caps and TCP buffers.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.core import DATA, UserError
from orchestrator.core import distance_km as geodesic_km
from orchestrator.model import Catalog, Region, load_catalog
from orchestrator.results import PathFacts, of_ends

PUBLIC_DATA = DATA
SKYPLANE_CSV = "skyplane-latency-2022.csv"
DOIT_CSV = "doit-intercloud-throughput-2022-02.csv"
# doit's `bitrate_Bps` is the bytes iperf2 moved in its ~10 s test, not a rate.
DOIT_TEST_SECONDS = 10.0

# Pairs the bandwidth fit reads: below SHORT the NIC cap binds, above LONG the window.
SHORT_RTT_MS = 10.0
LONG_RTT_MS = 100.0


@dataclass(frozen=True)
class NetModel:
    base_rtt_ms: float  # fixed part: stacks, NICs, first and last mile
    rtt_ms_per_1000km: float  # route inflation x fibre floor (10 = a straight fibre)
    cross_cloud_rtt_ms: float  # extra for aws<->gcp paths
    jitter_ms: float  # one-way jitter: half-width of delayd's uniform sample
    loss_pct: float  # one-way packet loss
    rate_mbit: float  # emulated per-host egress and ingress cap
    tcp_buffer_bytes: int  # net.ipv4.tcp_rmem / tcp_wmem max in each host namespace
    window_efficiency: float  # share of the buffer TCP turns into its window
    scale: float  # emulated rate / a real small VM's rate

    def rtt_ms(self, distance_km: float, cross_cloud: bool) -> float:
        """The modelled round-trip time between two regions `distance_km` apart."""
        extra = self.cross_cloud_rtt_ms if cross_cloud else 0.0
        return self.base_rtt_ms + self.rtt_ms_per_1000km * distance_km / 1000.0 + extra

    def one_way_delay_us(
        self, distance_km: float, cross_cloud: bool, baseline_rtt_ms: float = 0.0
    ) -> int:
        """The delay delayd adds in each direction: half the modelled RTT less the
        RTT the emulation has with no delay at all (`baseline_rtt_ms`, measured on
        the emulated hosts), never negative."""
        return one_way_delay_us(self.rtt_ms(distance_km, cross_cloud), baseline_rtt_ms)

    @property
    def jitter_us(self) -> int:
        return round(self.jitter_ms * 1000.0)

    @property
    def loss_ppm(self) -> int:
        return round(self.loss_pct * 10_000.0)

    @property
    def rate_bps(self) -> float:
        return self.rate_mbit * 1e6

    @property
    def window_bytes(self) -> float:
        """The TCP window one stream reaches in the emulation."""
        return self.tcp_buffer_bytes * self.window_efficiency

    def expected_throughput_bps(self, rtt_ms: float, streams: int = 1) -> float:
        """What `streams` TCP streams together carry over a path of `rtt_ms` in
        the emulation: the host's rate cap, or the windows per RTT if lower."""
        if rtt_ms <= 0:
            return self.rate_bps
        return min(self.rate_bps, streams * self.window_bytes * 8.0 / (rtt_ms / 1000.0))


def one_way_delay_us(rtt_ms: float, baseline_rtt_ms: float = 0.0) -> int:
    """The delay to add in each direction for an RTT of `rtt_ms`, when the emulation
    has `baseline_rtt_ms` with no delay at all; never negative."""
    return max(0, round((rtt_ms - baseline_rtt_ms) * 1000.0 / 2.0))


# Calibrated by bench/netmodel.py on the public data in data/ (data/README.md):
# skyplane-latency-2022.csv (ping avg_rtt, 4,692 AWS/GCP pairs) and
# doit-intercloud-throughput-2022-02.csv (ping avgrtt and one iperf2 stream,
# 2,138 pairs of t3.nano and e2-small VMs). See /work/notes/readme/netmodel.md.
#  - RTT: calibrate() over all 6,830 samples; median relative error 16.4%.
#  - jitter: skyplane's median ping mdev is 0.353 ms; a one-way uniform jitter
#    of half-width j gives an RTT deviation of j * sqrt(2/3), so j = 0.43 ms.
#  - loss: the public data has no loss figures and cloud backbones lose ~0.
#  - bandwidth (fit_bandwidth on doit): a small VM's stream reaches 968 Mbit/s
#    below 10 ms RTT and a window of 2.53 MB beyond 100 ms (knee at 21 ms). The
#    emulation runs at 50 Mbit/s, scale = 50 / 968 = 0.0517, so its window is
#    131 kB. TCP alone turns 0.59-0.74 of tcp_rmem/tcp_wmem max into window,
#    depending on the packet rate (iperf3 through the emulator, kernel 6.18:
#    0.59 at 310 ms RTT, 0.74 at 44 ms), so the emulator clamps each host's
#    window to buffer x efficiency with a route metric and gives the buffer
#    2x headroom: efficiency 0.5, buffer 262 kB, window 131 kB at every RTT.
REAL_CAP_BPS = 968e6
REAL_WINDOW_BYTES = 2_534_000
_EMULATED_RATE_MBIT = 50.0
_SCALE = _EMULATED_RATE_MBIT * 1e6 / REAL_CAP_BPS
_WINDOW_EFFICIENCY = 0.5

DEFAULT_MODEL = NetModel(
    base_rtt_ms=1.49,
    rtt_ms_per_1000km=16.50,
    cross_cloud_rtt_ms=1.38,
    jitter_ms=0.43,
    loss_pct=0.0,
    rate_mbit=_EMULATED_RATE_MBIT,
    tcp_buffer_bytes=round(REAL_WINDOW_BYTES * _SCALE / _WINDOW_EFFICIENCY),
    window_efficiency=_WINDOW_EFFICIENCY,
    scale=_SCALE,
)


def rate_scale_tag(model: NetModel = DEFAULT_MODEL) -> str:
    """What stands beside every emulated throughput figure: the emulator carries the
    real small-VM curve times `scale`, so its rates read `1 / scale` times too low."""
    return f"emulated: rate scale {model.scale:.4f}, x{1.0 / model.scale:.1f} = real"


# ------------------------------------------------------- emulated machine types


@dataclass(frozen=True)
class EmulatedType:
    """A machine type of the emulated cloud: the model's rate cap, and optionally a
    network allowance as a burstable VM has one: a token bucket of `bucket_bytes` that
    refills at `baseline_mbit`; while it holds tokens the host sends at its cap, once
    drained at the baseline (each direction has its own bucket)."""

    name: str
    rate_mbit: float
    baseline_mbit: float = 0.0  # 0: no allowance
    bucket_bytes: int = 0
    scaled_from: str = ""  # the real machine type whose allowance it scales

    @property
    def baseline_bps(self) -> float:
        return (self.baseline_mbit or self.rate_mbit) * 1e6

    @property
    def burst_bps(self) -> float:
        return self.rate_mbit * 1e6


# t3.small: 0.128 Gbit/s baseline, up to 5 Gbit/s burst (EC2 DescribeInstanceTypes,
# NetworkCards[0] Baseline/PeakBandwidthInGbps). Rates scale like the cap (x scale); the
# burst lasts "from 5 to 60 minutes depending on instance size" (AWS: EC2 instance
# network bandwidth), unscaled in time: the bucket holds 5 minutes above the baseline.
T3_SMALL_BASELINE_BPS = 0.128e9
BURST_S = 300.0
SHORT_BURST_S = 5.0  # a bucket one short sweep drains: for tests and demonstrations


def emulated_types(model: NetModel = DEFAULT_MODEL) -> dict[str, EmulatedType]:
    """The emulated machine types by name; the first is the default (no allowance)."""
    plain = EmulatedType(f"emulated-{model.rate_mbit:g}mbit", model.rate_mbit)
    baseline_mbit = round(T3_SMALL_BASELINE_BPS * model.scale / 1e6, 3)

    def burstable(name: str, burst_s: float) -> EmulatedType:
        bucket = round((model.rate_mbit - baseline_mbit) * 1e6 / 8 * burst_s)
        return EmulatedType(name, model.rate_mbit, baseline_mbit, bucket, "t3.small")

    types = [
        plain,
        burstable("emulated-t3.small", BURST_S),
        burstable("emulated-t3.small-5s", SHORT_BURST_S),
    ]
    return {t.name: t for t in types}


def emulated_type(name: str | None, model: NetModel = DEFAULT_MODEL) -> EmulatedType:
    """An emulated machine type by name (None or "": the default); one-line error if unknown."""
    types = emulated_types(model)
    if not name:
        return next(iter(types.values()))
    if name not in types:
        raise UserError(
            f"--emulated-type '{name}': unknown emulated machine type (known: {', '.join(types)})"
        )
    return types[name]


def path_facts(
    src_type: str, dst_type: str, catalog: Catalog | None, model: NetModel = DEFAULT_MODEL
) -> PathFacts:
    """What a test between hosts of these machine types is bound by, for the limiter: the
    line rate (the smaller of the two hosts' per-direction caps), a burstable type's
    baseline below it, and the window one default stream reaches. An emulated type (no
    catalog, or a name the emulator knows) takes the emulator's cap, allowance and window
    clamp; a cloud type regions.yaml's figures and the window fitted on the public data."""
    emulated = emulated_types(model)
    if catalog is None or (src_type in emulated or dst_type in emulated):
        ends = [emulated.get(t) or emulated_type(None, model) for t in (src_type, dst_type)]
        line = min(t.burst_bps for t in ends)
        base = min(t.baseline_bps for t in ends)
        return PathFacts(line, base if base < line else None, model.window_bytes)
    known = [catalog.bandwidth.get(t) for t in (src_type, dst_type)]
    found = [b for b in known if b is not None]
    if not found:
        return PathFacts(window_bytes=REAL_WINDOW_BYTES)
    line = min(b.burst_bps for b in found)
    base = min(b.baseline_bps for b in found)
    return PathFacts(line, base if base < line else None, REAL_WINDOW_BYTES)


def region_rtt_ms(a: Region, b: Region, model: NetModel = DEFAULT_MODEL) -> float:
    """The modelled RTT between two regions (0 km apart: the model's base RTT)."""
    return model.rtt_ms(geodesic_km(a.lat, a.lon, b.lat, b.lon), a.cloud != b.cloud)


# ------------------------------------------------------------------ samples


@dataclass(frozen=True)
class Sample:
    """One real measurement between two catalog regions."""

    source: str  # "skyplane" or "doit"
    src: str  # cloud:region
    dst: str
    distance_km: float
    rtt_ms: float
    throughput_bps: float | None = None  # doit only: one TCP stream
    # the GCP network tiers of its ends (results.tiers): skyplane names them; doit's
    # VMs used GCP's default, Premium
    network_tier: str = "PREMIUM"

    @property
    def cross_cloud(self) -> bool:
        return self.src.split(":")[0] != self.dst.split(":")[0]

    @property
    def cloud_pair(self) -> str:
        return f"{self.src.split(':')[0]}-{self.dst.split(':')[0]}"


@dataclass(frozen=True)
class PublicSamples:
    samples: tuple[Sample, ...]
    used: Counter[str] = field(default_factory=Counter)  # source -> rows used
    skipped: Counter[str] = field(default_factory=Counter)  # source -> rows skipped
    unknown_regions: frozenset[str] = frozenset()  # regions not in the catalog

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)

    def __len__(self) -> int:
        return len(self.samples)


def _region_key(cloud: str, region: str) -> str:
    """`cloud:region` as the catalog names it; a GCP zone (us-central1-a) names its region."""
    cloud = cloud.lower()
    if cloud == "gcp" and region.count("-") == 2:
        region = region.rsplit("-", 1)[0]
    return f"{cloud}:{region}"


def load_public_samples(
    data_dir: Path = PUBLIC_DATA, catalog: Catalog | None = None
) -> PublicSamples:
    """Read the skyplane and doit CSVs in `data_dir` into samples between regions
    of the catalog; rows naming other clouds are ignored, rows naming a region
    the catalog lacks (or with no usable RTT) are skipped and counted."""
    files = [Path(data_dir) / SKYPLANE_CSV, Path(data_dir) / DOIT_CSV]
    for path in files:
        if not path.is_file():
            raise UserError(
                f"public data file {path} not found: the repository ships it in data/ "
                "(git checkout data/), or pass the folder that holds it"
            )
    catalog = catalog or load_catalog()
    known = {r.key: r for r in catalog.regions}
    samples: list[Sample] = []
    used: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    unknown: set[str] = set()

    def add(
        source: str,
        src: str,
        dst: str,
        rtt: str,
        throughput_bps: float | None,
        tier: str = "PREMIUM",
    ) -> None:
        missing = [k for k in (src, dst) if k not in known]
        try:
            rtt_ms = float(rtt)
        except ValueError:
            rtt_ms = math.nan
        if missing or not rtt_ms > 0:
            unknown.update(missing)
            skipped[source] += 1
            return
        a, b = known[src], known[dst]
        distance = geodesic_km(a.lat, a.lon, b.lat, b.lon)
        samples.append(Sample(source, src, dst, distance, rtt_ms, throughput_bps, tier))
        used[source] += 1

    with files[0].open(newline="") as f:
        for row in csv.DictReader(f):
            src_cloud, _, src = row["src_region"].partition(":")
            dst_cloud, _, dst = row["dst_region"].partition(":")
            if {src_cloud, dst_cloud} <= {"aws", "gcp"}:
                add(
                    "skyplane",
                    _region_key(src_cloud, src),
                    _region_key(dst_cloud, dst),
                    row["avg_rtt"],
                    None,
                    of_ends(row.get("src_tier", ""), row.get("dst_tier", "")),
                )
    with files[1].open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                throughput = float(row["bitrate_Bps"]) * 8.0 / DOIT_TEST_SECONDS
            except ValueError:
                throughput = None
            add(
                "doit",
                _region_key(row["from_cloud"], row["from_region"]),
                _region_key(row["to_cloud"], row["to_region"]),
                row["avgrtt"],
                throughput,
            )
    return PublicSamples(tuple(samples), used, skipped, frozenset(unknown))


def load_rtt_mdev_ms(data_dir: Path = PUBLIC_DATA) -> list[float]:
    """Ping's RTT deviation (mdev) of every AWS/GCP pair in the skyplane data
    that reports one: what the jitter is fitted to."""
    path = Path(data_dir) / SKYPLANE_CSV
    if not path.is_file():
        raise UserError(
            f"public data file {path} not found: the repository ships it in data/ "
            "(git checkout data/), or pass the folder that holds it"
        )
    with path.open(newline="") as f:
        return [
            float(row["mdev_rtt"])
            for row in csv.DictReader(f)
            if row["mdev_rtt"]
            and {row["src_region"].split(":")[0], row["dst_region"].split(":")[0]} <= {"aws", "gcp"}
        ]


# -------------------------------------------------------------- calibration


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve the small linear system a x = b (Gaussian elimination, partial pivoting)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-12:
            raise UserError("calibration data cannot separate the model's terms: add more pairs")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] for i in range(n)]


def calibrate(samples: Iterable[Sample]) -> dict[str, float]:
    """Fit base_rtt_ms, rtt_ms_per_1000km and cross_cloud_rtt_ms to the samples by
    least squares on the relative error (so a 5 ms pair counts as much as a
    300 ms one, as in the median relative error we report). Returns those
    NetModel fields: `dataclasses.replace(DEFAULT_MODEL, **calibrate(s))`.
    Without cross-cloud samples the cross-cloud term is 0."""
    rows = list(samples)
    if len(rows) < 3:
        raise UserError(f"calibration needs at least 3 samples, got {len(rows)}")
    with_cross = any(s.cross_cloud for s in rows) and not all(s.cross_cloud for s in rows)
    width = 3 if with_cross else 2
    ata = [[0.0] * width for _ in range(width)]
    aty = [0.0] * width
    for s in rows:
        x = [1.0, s.distance_km / 1000.0, 1.0 if s.cross_cloud else 0.0][:width]
        w = 1.0 / (s.rtt_ms * s.rtt_ms)
        for i in range(width):
            aty[i] += w * x[i] * s.rtt_ms
            for j in range(width):
                ata[i][j] += w * x[i] * x[j]
    coef = _solve(ata, aty)
    return {
        "base_rtt_ms": coef[0],
        "rtt_ms_per_1000km": coef[1],
        "cross_cloud_rtt_ms": coef[2] if with_cross else 0.0,
    }


def relative_errors(model: NetModel, samples: Iterable[Sample]) -> list[float]:
    """|model - measured| / measured for each sample's RTT."""
    return [abs(model.rtt_ms(s.distance_km, s.cross_cloud) - s.rtt_ms) / s.rtt_ms for s in samples]


def median_relative_error(model: NetModel, samples: Iterable[Sample]) -> float:
    """The median over samples of |modelled RTT - measured RTT| / measured RTT."""
    errors = relative_errors(model, samples)
    if not errors:
        raise UserError("no samples to compare the model with")
    return statistics.median(errors)


def jitter_from_rtt_mdev_ms(mdev_ms: float) -> float:
    """The one-way jitter half-width j that gives an RTT deviation of `mdev_ms`:
    each direction adds U(-j, j) (standard deviation j / sqrt(3)), two add up to
    j * sqrt(2/3)."""
    return mdev_ms / math.sqrt(2.0 / 3.0)


# ---------------------------------------------------------------- bandwidth


@dataclass(frozen=True)
class BandwidthFit:
    """A real small VM's single-stream TCP curve, read from measurements."""

    cap_bps: float  # median throughput of short pairs (RTT < SHORT_RTT_MS)
    window_bytes: float  # median of throughput x RTT over long pairs (RTT > LONG_RTT_MS)
    n_short: int
    n_long: int

    @property
    def knee_rtt_ms(self) -> float:
        """The RTT beyond which the window, not the cap, limits a stream."""
        return self.window_bytes * 8.0 / self.cap_bps * 1000.0

    def throughput_bps(self, rtt_ms: float) -> float:
        return min(self.cap_bps, self.window_bytes * 8.0 / (rtt_ms / 1000.0))


def fit_bandwidth(samples: Sequence[Sample]) -> BandwidthFit:
    """The cap and effective window of real small VMs from throughput samples."""
    measured = [(s.rtt_ms, s.throughput_bps) for s in samples if s.throughput_bps]
    short = [bps for rtt_ms, bps in measured if rtt_ms < SHORT_RTT_MS]
    long = [bps * rtt_ms / 1000.0 / 8.0 for rtt_ms, bps in measured if rtt_ms > LONG_RTT_MS]
    if not short or not long:
        raise UserError(
            f"bandwidth fit needs throughput samples below {SHORT_RTT_MS:g} ms "
            f"and above {LONG_RTT_MS:g} ms RTT"
        )
    return BandwidthFit(
        cap_bps=statistics.median(short),
        window_bytes=statistics.median(long),
        n_short=len(short),
        n_long=len(long),
    )
