"""Which regions and which directed pairs a sweep (or a report) covers.

The command line says it with a SelectionSpec; `select` turns it into concrete
regions and directed pairs with their geodesic distance, computed once per
pair. The same spec filters measurement rows in reports (`pair_filter`).

Order of the filters: regions (--clouds, --regions, --exclude, --no-opt-in),
then pairs (--cloud-pair, --min-km/--max-km, --pairs), then --max-regions
samples among the regions that still take part in a pair. A region left with
no pair is dropped: a VM that tests nothing costs money and tells nothing.

--max-regions chooses among the regions a new account has (AWS opt-in regions only with
--opt-in, or when --regions or --pairs names them). It spreads the pairs over the
distance bands (DISTANCE_BANDS_KM) as well as over the globe and both clouds
(`--spread bands`, the default: `band_spread_sample`); `--spread globe` is
farthest-point sampling alone, which leaves short pairs out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import permutations
from typing import Any

from orchestrator.core import UserError, distance_km
from orchestrator.model import CLOUDS, Catalog, Region
from orchestrator.results import SelectionSpec

# Where --max-regions starts each cloud: the providers' default regions, so a
# small sample always has its best-known region and the rest spread from it.
SEED_REGIONS = ("aws:us-east-1", "gcp:us-central1")
ALL_CLOUD_PAIRS: tuple[tuple[str, str], ...] = tuple((a, b) for a in CLOUDS for b in CLOUDS)
# The distance bands a selection should cover: within a metro or a country, within a
# continent, across an ocean, and around the world. Lower bound inclusive.
DISTANCE_BANDS_KM: tuple[tuple[str, float, float], ...] = (
    ("<1000 km", 0.0, 1000.0),
    ("1000-3000 km", 1000.0, 3000.0),
    ("3000-8000 km", 3000.0, 8000.0),
    (">8000 km", 8000.0, float("inf")),
)
SPREADS = ("bands", "globe")


def band_of(km: float) -> str:
    """The name of the distance band `km` falls in."""
    return next(name for name, lo, hi in DISTANCE_BANDS_KM if lo <= km < hi)


def pairs_per_band(pairs: Iterable[Pair]) -> dict[str, int]:
    """Directed pairs in each distance band, every band named (0 when empty)."""
    counts = {name: 0 for name, _lo, _hi in DISTANCE_BANDS_KM}
    for p in pairs:
        counts[band_of(p.distance_km)] += 1
    return counts


@dataclass(frozen=True)
class Pair:
    """One directed test: traffic from `src` to `dst`."""

    src: Region
    dst: Region
    distance_km: float

    @property
    def cloud_pair(self) -> str:
        return f"{self.src.cloud}-{self.dst.cloud}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.src.key, self.dst.key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "src": self.src.key,
            "dst": self.dst.key,
            "distance_km": round(self.distance_km, 1),
            "cloud_pair": self.cloud_pair,
        }


@dataclass(frozen=True)
class Selection:
    regions: tuple[Region, ...]  # catalog order, each in at least one pair
    pairs: tuple[Pair, ...]  # directed, sorted by (src, dst) in catalog order

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(r.key for r in self.regions)


@lru_cache(maxsize=65536)
def _distance(a: Region, b: Region) -> float:
    if (a.lat, a.lon) > (b.lat, b.lon):
        a, b = b, a  # same cache entry for both directions
    return distance_km(a.lat, a.lon, b.lat, b.lon)


def pair_distance_km(a: Region, b: Region) -> float:
    """Geodesic distance between two regions, computed once per pair and process."""
    return _distance(a, b)


def select(catalog: Catalog, spec: SelectionSpec) -> Selection:
    """Resolve a spec against the catalog; UserError on contradictions or an empty result."""
    check_spec(catalog, spec)
    regions = _filter_regions(catalog, spec)
    pairs = _filter_pairs(regions, spec)
    if spec.max_regions is not None:
        named = set(spec.regions) | {key for pair in spec.pairs for key in pair}
        taking_part = [
            r for r in _in_pairs(regions, pairs) if spec.opt_in or not r.opt_in or r.key in named
        ]
        if spec.spread == "globe":
            sample = farthest_point_sample(taking_part, spec.max_regions)
        else:
            allowed = {frozenset(p.key) for p in pairs}
            sample = band_spread_sample(taking_part, spec.max_regions, allowed)
        chosen = {r.key for r in sample}
        pairs = [p for p in pairs if p.src.key in chosen and p.dst.key in chosen]
        if not pairs:
            raise UserError(
                f"the {spec.max_regions} regions chosen by --max-regions share no pair that "
                "passes the other filters: raise --max-regions or loosen the filters"
            )
    return Selection(regions=tuple(_in_pairs(regions, pairs)), pairs=tuple(pairs))


def max_regions_note(spec: SelectionSpec, selection: Selection) -> str | None:
    """A note when --max-regions asks for more regions than the other filters leave:
    the sweep is smaller than asked, and saying nothing reads as if it were not."""
    if spec.max_regions is None or spec.max_regions <= len(selection.regions):
        return None
    return (
        f"--max-regions {spec.max_regions}: the other filters leave {len(selection.regions)} "
        "regions, all of them are used"
    )


def check_spec(catalog: Catalog, spec: SelectionSpec) -> None:
    """Reject contradictions and unknown names before anything is computed."""
    for cloud in spec.clouds:
        if cloud not in CLOUDS:
            raise UserError(f"--clouds '{cloud}': unknown cloud (known: {', '.join(CLOUDS)})")
    if not spec.clouds:
        raise UserError(f"--clouds is empty: name at least one of {', '.join(CLOUDS)}")
    clouds = ", ".join(spec.clouds)
    for src, dst in spec.cloud_pairs:
        for cloud in (src, dst):
            if cloud not in CLOUDS:
                raise UserError(
                    f"--cloud-pair {src}:{dst}: unknown cloud '{cloud}' "
                    f"(known: {', '.join(CLOUDS)})"
                )
            if cloud not in spec.clouds:
                raise UserError(
                    f"--cloud-pair {src}:{dst} needs {cloud}, but --clouds is {clouds}: "
                    f"add {cloud} to --clouds or drop the cloud pair"
                )
    for km, name in ((spec.min_km, "--min-km"), (spec.max_km, "--max-km")):
        if km is not None and km < 0:
            raise UserError(f"{name} {km:g} is negative: distances are 0 km or more")
    if spec.min_km is not None and spec.max_km is not None and spec.min_km > spec.max_km:
        raise UserError(
            f"--min-km {spec.min_km:g} is above --max-km {spec.max_km:g}: "
            "the band is empty, swap them"
        )
    if spec.max_regions is not None and spec.max_regions < 2:
        raise UserError(f"--max-regions {spec.max_regions}: a test needs at least 2 regions")
    if spec.spread not in SPREADS:
        raise UserError(f"--spread {spec.spread}: one of {', '.join(SPREADS)}")
    if spec.opt_in and spec.no_opt_in:
        raise UserError(
            "--opt-in lets --max-regions choose opt-in regions, --no-opt-in skips them: give one"
        )
    explicit = {catalog.get(key).key for key in spec.regions}
    for key in spec.regions:
        region = catalog.get(key)
        if region.cloud not in spec.clouds:
            raise UserError(
                f"--regions {key} is a {region.cloud} region, but --clouds is {clouds}: "
                f"add {region.cloud} to --clouds or drop the region"
            )
        if spec.no_opt_in and region.opt_in:
            raise UserError(
                f"--regions {key} is an opt-in region, but --no-opt-in skips those: drop one"
            )
    for key in spec.exclude:
        if catalog.get(key).key in explicit:
            raise UserError(f"{key} is both in --regions and in --exclude: drop one")
    for a, b in spec.pairs:
        ra, rb = catalog.get(a), catalog.get(b)
        if ra.key == rb.key:
            raise UserError(f"--pairs {a}/{b}: a pair needs two different regions")
        for region in (ra, rb):
            if region.cloud not in spec.clouds:
                raise UserError(
                    f"--pairs {a}/{b} uses a {region.cloud} region, but --clouds is {clouds}"
                )
            if region.key in spec.exclude:
                raise UserError(f"--pairs {a}/{b} uses {region.key}, which --exclude removes")
            if spec.no_opt_in and region.opt_in:
                raise UserError(
                    f"--pairs {a}/{b} uses opt-in region {region.key}, "
                    "but --no-opt-in skips those: drop one"
                )
            if explicit and region.key not in explicit:
                raise UserError(
                    f"--pairs {a}/{b} uses {region.key}, which is not in --regions: "
                    "add it there or leave --regions out"
                )


def _filter_regions(catalog: Catalog, spec: SelectionSpec) -> list[Region]:
    wanted = set(spec.regions)
    excluded = set(spec.exclude)
    if spec.pairs:
        wanted = {key for pair in spec.pairs for key in pair}
    regions = [
        r
        for r in catalog.regions
        if r.cloud in spec.clouds
        and (not wanted or r.key in wanted)
        and r.key not in excluded
        and not (spec.no_opt_in and r.opt_in)
    ]
    if not regions:
        raise UserError(
            "no region is left after --clouds, --regions, --exclude and --no-opt-in: "
            "loosen them (see 'interregion regions')"
        )
    if len(regions) < 2:
        raise UserError(f"only {regions[0].key} is selected: a test needs at least 2 regions")
    return regions


def _filter_pairs(regions: Sequence[Region], spec: SelectionSpec) -> list[Pair]:
    """Directed pairs among `regions` that pass every pair filter, in catalog order."""
    pairs = [Pair(a, b, pair_distance_km(a, b)) for a, b in permutations(regions, 2)]
    cloud_pairs = set(spec.cloud_pairs) if spec.cloud_pairs else set(ALL_CLOUD_PAIRS)
    pairs = [p for p in pairs if (p.src.cloud, p.dst.cloud) in cloud_pairs]
    if not pairs:
        wanted = ", ".join(f"{a}:{b}" for a, b in sorted(cloud_pairs))
        raise UserError(
            f"no pair of the selected regions is of cloud pair {wanted}: "
            "select regions of both clouds or change --cloud-pair"
        )
    if spec.min_km is not None or spec.max_km is not None:
        low = spec.min_km if spec.min_km is not None else 0.0
        high = spec.max_km if spec.max_km is not None else float("inf")
        shortest = min(p.distance_km for p in pairs)
        longest = max(p.distance_km for p in pairs)
        pairs = [p for p in pairs if low <= p.distance_km <= high]
        if not pairs:
            raise UserError(
                f"no pair is between {low:g} and {high:g} km: the selected pairs span "
                f"{shortest:,.0f} to {longest:,.0f} km; widen --min-km/--max-km"
            )
    if spec.pairs:
        explicit = {frozenset(pair) for pair in spec.pairs}
        pairs = [p for p in pairs if frozenset(p.key) in explicit]
        if not pairs:
            raise UserError(
                "none of --pairs passes --cloud-pair and --min-km/--max-km: "
                "loosen those filters or change --pairs"
            )
    return pairs


def _in_pairs(regions: Iterable[Region], pairs: Iterable[Pair]) -> list[Region]:
    used = {key for p in pairs for key in p.key}
    return [r for r in regions if r.key in used]


def farthest_point_sample(regions: Sequence[Region], n: int) -> list[Region]:
    """`n` regions spread across the globe, deterministically (farthest-point sampling).

    The seed is aws:us-east-1 (else gcp:us-central1, the providers' default
    regions; else the medoid, the region with the smallest summed distance to
    the others). Then, turn by turn, the cloud with the fewest chosen regions
    adds its region farthest from all regions chosen so far (of both clouds),
    so the clouds stay balanced and together cover the globe. Ties go to
    catalog order. Returned in catalog order.
    """
    if n >= len(regions):
        return list(regions)
    order = {r.key: i for i, r in enumerate(regions)}
    seed = next((r for key in SEED_REGIONS for r in regions if r.key == key), None)
    if seed is None:
        seed = min(regions, key=lambda r: (_spread(r, regions), order[r.key]))
    taken = {seed.key}
    count = {cloud: 0 for cloud in CLOUDS} | {seed.cloud: 1}
    nearest = {r.key: pair_distance_km(r, seed) for r in regions}
    while len(taken) < n:
        left = [r for r in regions if r.key not in taken]
        clouds = {r.cloud for r in left}
        turn = min(clouds, key=lambda c: (count.get(c, 0), CLOUDS.index(c)))
        pick = max(
            (r for r in left if r.cloud == turn),
            key=lambda r: (nearest[r.key], -order[r.key]),
        )
        taken.add(pick.key)
        count[turn] = count.get(turn, 0) + 1
        for r in left:
            nearest[r.key] = min(nearest[r.key], pair_distance_km(r, pick))
    return [r for r in regions if r.key in taken]


def band_spread_sample(
    regions: Sequence[Region], n: int, allowed: set[frozenset[str]] | None = None
) -> list[Region]:
    """`n` regions whose pairs cover the distance bands, the globe and both clouds.

    The first half (rounded up) are anchors spread over the globe, as
    farthest_point_sample picks them. Then, turn by turn, the cloud with the fewest
    chosen regions adds the region that (1) leaves the most distance bands with a pair,
    then (2) leaves the emptiest band fullest, then (3) lies farthest from the regions
    chosen so far, then comes first in the catalog: short pairs beside the anchors. Only
    pairs in `allowed` (unordered keys; None: all) count. Returned in catalog order.
    """
    if n >= len(regions):
        return list(regions)
    order = {r.key: i for i, r in enumerate(regions)}
    chosen = farthest_point_sample(regions, (n + 1) // 2)
    count = {cloud: 0 for cloud in CLOUDS}
    for r in chosen:
        count[r.cloud] = count.get(r.cloud, 0) + 1

    def counted(a: Region, b: Region) -> bool:
        return allowed is None or frozenset((a.key, b.key)) in allowed

    bands = {name: 0 for name, _lo, _hi in DISTANCE_BANDS_KM}
    for i, a in enumerate(chosen):
        for b in chosen[i + 1 :]:
            if counted(a, b):
                bands[band_of(pair_distance_km(a, b))] += 1
    nearest = {r.key: min(pair_distance_km(r, c) for c in chosen) for r in regions}
    while len(chosen) < n:
        taken = {r.key for r in chosen}
        left = [r for r in regions if r.key not in taken]
        clouds = {r.cloud for r in left}
        turn = min(clouds, key=lambda c: (count.get(c, 0), CLOUDS.index(c)))

        def score(r: Region) -> tuple[Any, ...]:
            after = dict(bands)
            for c in chosen:
                if counted(r, c):
                    after[band_of(pair_distance_km(r, c))] += 1
            filled = sum(1 for v in after.values() if v)
            return (filled, min(after.values()), nearest[r.key], -order[r.key])

        pick = max((r for r in left if r.cloud == turn), key=score)
        for c in chosen:
            if counted(pick, c):
                bands[band_of(pair_distance_km(pick, c))] += 1
        chosen.append(pick)
        count[turn] = count.get(turn, 0) + 1
        for r in left:
            nearest[r.key] = min(nearest[r.key], pair_distance_km(r, pick))
    taken = {r.key for r in chosen}
    return [r for r in regions if r.key in taken]


def _spread(region: Region, regions: Sequence[Region]) -> float:
    return sum(pair_distance_km(region, other) for other in regions)


def pair_filter(
    spec: SelectionSpec, catalog: Catalog | None = None
) -> Callable[[str, str, float | None], bool]:
    """A predicate on (src key, dst key, distance_km) applying the spec's filters.

    For reports: the same --clouds, --regions, --exclude, --cloud-pair,
    --min-km/--max-km and --pairs as `select`. --no-opt-in needs the catalog to
    know which regions are opt-in. --max-regions chooses regions for a sweep; it
    is not a property of a row and is ignored here. A row without a distance
    fails a distance band.
    """
    if catalog is not None:
        check_spec(catalog, spec)
    clouds = set(spec.clouds)
    regions = set(spec.regions)
    excluded = set(spec.exclude)
    cloud_pairs = set(spec.cloud_pairs) if spec.cloud_pairs else set(ALL_CLOUD_PAIRS)
    explicit = {frozenset(pair) for pair in spec.pairs}
    opt_in = {r.key for r in catalog.regions if r.opt_in} if catalog and spec.no_opt_in else set()
    band = spec.min_km is not None or spec.max_km is not None
    low = spec.min_km if spec.min_km is not None else 0.0
    high = spec.max_km if spec.max_km is not None else float("inf")

    def keep(src: str, dst: str, distance: float | None) -> bool:
        src_cloud, dst_cloud = src.split(":", 1)[0], dst.split(":", 1)[0]
        if src_cloud not in clouds or dst_cloud not in clouds:
            return False
        if (src_cloud, dst_cloud) not in cloud_pairs:
            return False
        if regions and (src not in regions or dst not in regions):
            return False
        if src in excluded or dst in excluded or src in opt_in or dst in opt_in:
            return False
        if explicit and frozenset((src, dst)) not in explicit:
            return False
        return not band or (distance is not None and low <= distance <= high)

    return keep
