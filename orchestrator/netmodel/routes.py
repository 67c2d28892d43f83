"""Per-pair route detours: the RTT the public measurements give a pair of regions.

Real routes are not the geodesic scaled: Cape Town to Sydney goes through Europe or
Asia, and two regions of one metro may be a few ms apart or one. Where the vendored
public data (data/README.md) has measured a pair, the emulator takes that pair's
median RTT as its base; elsewhere the distance model (orchestrator.netmodel) applies.

A pair is unordered: the median pools both directions of every source's samples
(an RTT is a round trip, the same path both ways). Sources are tried in order of
preference, so each pair's figure comes from one source only and the bench can fit
on one source and check against the other (bench/netmodel.py).
"""

from __future__ import annotations

import functools
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.core import distance_km, fibre_rtt_ms
from orchestrator.core import pearson_r as pearson_r  # bench/netmodel uses it here
from orchestrator.model import Region
from orchestrator.netmodel.model import (
    DEFAULT_MODEL,
    PUBLIC_DATA,
    NetModel,
    Sample,
    load_public_samples,
)
from orchestrator.results import FLOOR_TOLERANCE_MS, for_sweep

# skyplane first: 10 pings per pair and 1,128 of the catalog's pairs, against doit's 5 and 779.
ROUTE_SOURCES = ("skyplane", "doit")

PairKey = tuple[str, str]


def pair_key(a: str, b: str) -> PairKey:
    """The unordered pair of two `cloud:region` names."""
    return (a, b) if a <= b else (b, a)


def median_rtts(
    samples: Iterable[Sample], source: str | None = None, tier: str | None = None
) -> dict[PairKey, float]:
    """The median RTT of every measured pair of distinct regions (both directions
    pooled), from one source or, with `source` None, from all; of one GCP network tier
    (the tier of a GCP end: tiers.for_sweep) or, with `tier` None, of all."""
    found: dict[PairKey, list[float]] = defaultdict(list)
    for s in samples:
        if tier is not None and s.network_tier != for_sweep(
            s.src.split(":")[0], s.dst.split(":")[0], tier
        ):
            continue
        if s.src != s.dst and (source is None or s.source == source):
            found[pair_key(s.src, s.dst)].append(s.rtt_ms)
    return {k: statistics.median(v) for k, v in found.items()}


@dataclass(frozen=True)
class RouteTable:
    """Measured median RTT per unordered pair, and which source gave it."""

    rtt_ms: Mapping[PairKey, float]
    source_of: Mapping[PairKey, str]

    def get(self, a: str, b: str) -> float | None:
        return self.rtt_ms.get(pair_key(a, b))

    def __len__(self) -> int:
        return len(self.rtt_ms)


EMPTY = RouteTable({}, {})


def route_table(
    samples: Sequence[Sample], sources: Sequence[str] = ROUTE_SOURCES, tier: str | None = None
) -> RouteTable:
    """Each pair's median RTT from the first of `sources` that measured it; of the GCP
    network tier `tier` alone when given (None: every tier, what the emulator uses)."""
    rtt: dict[PairKey, float] = {}
    source_of: dict[PairKey, str] = {}
    for source in sources:
        for key, value in median_rtts(samples, source, tier).items():
            if key not in rtt:
                rtt[key], source_of[key] = value, source
    return RouteTable(rtt, source_of)


@functools.cache
def default_routes(data_dir: Path = PUBLIC_DATA, tier: str | None = None) -> RouteTable:
    """The route table of the vendored public data (read once per process); of one GCP
    network tier when `tier` is given (what advise quotes: without the samples below the
    fibre floor, which flags.BELOW_FIBRE_FLOOR leaves out of every figure), else of all
    (what the emulator's delays were calibrated on)."""
    samples = load_public_samples(data_dir).samples
    if tier is None:
        return route_table(samples)
    physical = [
        s for s in samples
        if s.rtt_ms >= fibre_rtt_ms(s.distance_km) - FLOOR_TOLERANCE_MS
    ]  # fmt: skip
    return route_table(physical, tier=tier)


def pair_rtt_ms(
    a: Region, b: Region, model: NetModel = DEFAULT_MODEL, routes: RouteTable = EMPTY
) -> float:
    """A pair's base RTT: its measured median where `routes` has one, else the model's."""
    measured = routes.get(a.key, b.key) if a.key != b.key else None
    if measured is not None:
        return measured
    return model.rtt_ms(distance_km(a.lat, a.lon, b.lat, b.lon), a.cloud != b.cloud)


def controller_rtt_ms(
    controller: Region,
    hosts: Sequence[Region],
    model: NetModel = DEFAULT_MODEL,
    routes: RouteTable | None = None,
) -> float:
    """The RTT from a controller in region `controller` to the farthest of `hosts`, by
    the same routes the emulator delays its traffic with (default: the public data's);
    0 without hosts. What a round that waits for every host pays per exchange."""
    table = default_routes() if routes is None else routes
    return max((pair_rtt_ms(controller, h, model, table) for h in hosts), default=0.0)
