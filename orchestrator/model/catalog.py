"""The region catalog: `regions.yaml`, loaded and checked.

A region is named `cloud:id` everywhere (`aws:us-east-1`, `gcp:europe-west1`).
Loading reports every problem in the file at once, one line each, so a broken
catalog is fixed in one pass and never reaches the clouds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from orchestrator.core import CATALOG, UserError, load_yaml
from orchestrator.model.backend_facts import CLOUDS

_REGION_REQUIRED = ("cloud", "id", "city", "country", "lat", "lon", "source")
_REGION_OPTIONAL = ("zone", "opt_in")
_CLOUD_REQUIRED = ("machine_type",)
_CLOUD_OPTIONAL = ("vcpus", "memory_gib", "note")
_TOP_LEVEL = ("clouds", "regions", "machine_types", "machine_type_sources")
_MACHINE_KEYS = ("cloud", "baseline_gbps", "burst_gbps", "source")
_COUNTRY = re.compile(r"[A-Z]{2}")


class CatalogError(UserError):
    """The catalog file is invalid; the message has one line per problem."""


@dataclass(frozen=True)
class Region:
    cloud: str
    id: str
    city: str
    country: str  # ISO 3166-1 alpha-2
    lat: float
    lon: float
    source: str
    zone: str = ""  # GCP: the default zone; empty for AWS
    opt_in: bool = False  # AWS regions that must be enabled per account

    @property
    def key(self) -> str:
        return f"{self.cloud}:{self.id}"


@dataclass(frozen=True)
class MachineBandwidth:
    """A machine type's network allowance per direction: what it sustains (baseline)
    and what it reaches while a burst lasts."""

    name: str
    cloud: str
    baseline_bps: float
    burst_bps: float
    source: str  # the text of the source the figures come from


@dataclass(frozen=True)
class Catalog:
    regions: tuple[Region, ...]
    machine_types: dict[str, str]  # cloud -> default small machine type
    bandwidth: dict[str, MachineBandwidth] = field(default_factory=dict)  # by type name

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", {r.key: r for r in self.regions})

    def get(self, key: str) -> Region:
        """The region named `cloud:id`; an unknown name is a one-line error with a hint."""
        by_key: dict[str, Region] = self._by_key  # type: ignore[attr-defined]
        if key in by_key:
            return by_key[key]
        if ":" not in key:
            owners = [r.key for r in self.regions if r.id == key.strip().lower()]
            example = " or ".join(owners) if owners else "aws:us-east-1"
            raise UserError(
                f"region '{key}' has no cloud: write it as cloud:region, e.g. {example}"
            )
        hint = closest_names(key.strip().lower(), by_key)
        also = f" (did you mean {_or(hint)}?)" if hint else " (see 'interregion regions')"
        raise UserError(f"unknown region '{key}'{also}")

    def keys(self) -> list[str]:
        return [r.key for r in self.regions]

    def in_clouds(self, clouds: Iterable[str]) -> list[Region]:
        wanted = set(clouds)
        return [r for r in self.regions if r.cloud in wanted]

    def listing(self, clouds: Iterable[str]) -> RegionListing:
        """`interregion regions`: the regions of `clouds`, with each cloud's machine type."""
        return RegionListing(tuple(self.in_clouds(clouds)), self.machine_types)


@dataclass(frozen=True)
class RegionListing:
    regions: tuple[Region, ...]
    machine_types: dict[str, str]  # cloud -> default small machine type

    def to_json(self) -> list[dict[str, Any]]:
        """`regions --json`: every field of each region, its key and machine type."""
        return [
            {**region_to_dict(r), "machine_type": self.machine_types.get(r.cloud, "")}
            for r in self.regions
        ]


def region_order(keys: Iterable[str], catalog: Catalog) -> list[str]:
    """The one order of regions in every table and chart: by cloud, then west to east
    (longitude, then north to south); a region the catalog lacks goes last in its cloud,
    by name."""
    by_key = {r.key: r for r in catalog.regions}

    def rank(key: str) -> tuple[str, int, float, float, str]:
        r = by_key.get(key)
        cloud = key.split(":", 1)[0]
        if r is None:
            return (cloud, 1, 0.0, 0.0, key)
        return (cloud, 0, round(r.lon, 1), -r.lat, key)

    return sorted(set(keys), key=rank)


def closest_names(word: str, names: Iterable[str], cutoff: float = 0.6) -> list[str]:
    """Every name as close to `word` as the closest one (difflib's ratio), sorted.

    difflib.get_close_matches(n=1) breaks a tie by taking the name that sorts last:
    us-est-1 became us-west-1 when us-east-1 is just as close. A hint must not guess.
    """
    matcher = SequenceMatcher(b=word)
    scores: dict[str, float] = {}
    for name in names:
        matcher.set_seq1(name)
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
            ratio = matcher.ratio()
            if ratio >= cutoff:
                scores[name] = ratio
    best = max(scores.values(), default=0.0)
    return sorted(name for name, score in scores.items() if score == best)


def _or(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def region_listing(path: Path, clouds: Iterable[str]) -> RegionListing:
    """`interregion regions`' use case: the regions of `clouds` in the catalog at `path`."""
    return load_catalog(path).listing(clouds)


def load_catalog(path: Path = CATALOG) -> Catalog:
    """Load and validate a catalog file; raise CatalogError listing every problem."""
    try:
        data = load_yaml(Path(path), "catalog")
    except FileNotFoundError:
        raise CatalogError(f"{path}: catalog file not found") from None
    except UserError as e:
        raise CatalogError(str(e)) from None
    return parse_catalog(data, str(path))


def parse_catalog(data: Any, source: str = "catalog") -> Catalog:
    problems: list[str] = []
    if not isinstance(data, dict):
        raise CatalogError(f"{source}: expected a mapping with 'clouds' and 'regions'")
    for key in data:
        if key not in _TOP_LEVEL:
            problems.append(f"{source}: unknown top-level key '{key}'")
    machine_types = _parse_clouds(data.get("clouds"), source, problems)
    regions = _parse_regions(data.get("regions"), source, problems)
    bandwidth = _parse_bandwidth(
        data.get("machine_types"), data.get("machine_type_sources"), source, problems
    )
    if problems:
        raise CatalogError("\n".join(problems))
    return Catalog(regions=tuple(regions), machine_types=machine_types, bandwidth=bandwidth)


def _parse_bandwidth(
    items: Any, sources: Any, source: str, problems: list[str]
) -> dict[str, MachineBandwidth]:
    """machine_types: {name: {cloud, baseline_gbps, burst_gbps, source}}, each source a
    key of machine_type_sources (optional as a whole: a catalog without it has no
    baselines to check)."""
    if items is None:
        return {}
    if not isinstance(items, dict) or not isinstance(sources or {}, dict):
        problems.append(f"{source}: 'machine_types' and 'machine_type_sources' must be mappings")
        return {}
    found = {}
    for name, item in items.items():
        where = f"{source}: machine_types.{name}"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected a mapping")
            continue
        bad = len(problems)
        for key in item:
            if key not in _MACHINE_KEYS:
                problems.append(f"{where}: unknown key '{key}'")
        for key in _MACHINE_KEYS:
            if item.get(key) in (None, ""):
                problems.append(f"{where}: missing '{key}'")
        if item.get("cloud") not in (None, *CLOUDS):
            problems.append(f"{where}: unknown cloud '{item['cloud']}'")
        rates = [item.get("baseline_gbps"), item.get("burst_gbps")]
        if any(
            v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or v <= 0)
            for v in rates
        ):
            problems.append(f"{where}: baseline_gbps and burst_gbps must be positive numbers")
        elif rates[0] is not None and rates[1] is not None and rates[0] > rates[1]:
            problems.append(f"{where}: baseline_gbps is above burst_gbps")
        if item.get("source") and item["source"] not in (sources or {}):
            problems.append(f"{where}: source '{item['source']}' is not in machine_type_sources")
        if len(problems) == bad:
            found[str(name)] = MachineBandwidth(
                name=str(name),
                cloud=str(item["cloud"]),
                baseline_bps=float(item["baseline_gbps"]) * 1e9,
                burst_bps=float(item["burst_gbps"]) * 1e9,
                source=" ".join(str(sources[item["source"]]).split()),
            )
    return found


def _parse_clouds(clouds: Any, source: str, problems: list[str]) -> dict[str, str]:
    if not isinstance(clouds, dict):
        problems.append(f"{source}: 'clouds' must map each cloud to its settings")
        return {}
    machine_types = {}
    for cloud, settings in clouds.items():
        where = f"{source}: clouds.{cloud}"
        if cloud not in CLOUDS:
            problems.append(f"{where}: unknown cloud (known: {', '.join(CLOUDS)})")
            continue
        if not isinstance(settings, dict):
            problems.append(f"{where}: expected a mapping")
            continue
        for key in settings:
            if key not in _CLOUD_REQUIRED + _CLOUD_OPTIONAL:
                problems.append(f"{where}: unknown key '{key}'")
        for key in _CLOUD_REQUIRED:
            if not settings.get(key):
                problems.append(f"{where}: missing '{key}'")
        machine_types[cloud] = str(settings.get("machine_type", ""))
    for cloud in CLOUDS:
        if cloud not in clouds:
            problems.append(f"{source}: clouds: missing '{cloud}'")
    return machine_types


def _parse_regions(items: Any, source: str, problems: list[str]) -> list[Region]:
    if not isinstance(items, list):
        problems.append(f"{source}: 'regions' must be a list")
        return []
    regions: list[Region] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"{source}: regions[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected a mapping")
            continue
        if "cloud" in item and "id" in item:
            where = f"{source}: {item['cloud']}:{item['id']}"
        bad = len(problems)
        for key in item:
            if key not in _REGION_REQUIRED + _REGION_OPTIONAL:
                problems.append(f"{where}: unknown key '{key}'")
        for key in _REGION_REQUIRED:
            if item.get(key) in (None, ""):
                problems.append(f"{where}: missing field '{key}'")
        cloud = item.get("cloud")
        if cloud is not None and cloud not in CLOUDS:
            problems.append(f"{where}: unknown cloud '{cloud}' (known: {', '.join(CLOUDS)})")
        for key, limit in (("lat", 90), ("lon", 180)):
            value = item.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                problems.append(f"{where}: {key} must be a number, got {value!r}")
            elif not -limit <= value <= limit:
                problems.append(f"{where}: {key} {value} is out of range [-{limit}, {limit}]")
        country = item.get("country")
        if country not in (None, "") and not _COUNTRY.fullmatch(str(country)):
            problems.append(
                f"{where}: country {country!r} is not an ISO 3166-1 alpha-2 code like 'US'"
            )
        zone = item.get("zone")
        if cloud == "gcp" and not zone:
            problems.append(f"{where}: missing field 'zone' (GCP regions need a default zone)")
        elif zone and item.get("id") and not str(zone).startswith(f"{item['id']}-"):
            problems.append(f"{where}: zone '{zone}' is not in region '{item['id']}'")
        if "opt_in" in item and not isinstance(item["opt_in"], bool):
            problems.append(f"{where}: opt_in must be true or false")
        elif item.get("opt_in") and cloud == "gcp":
            problems.append(f"{where}: opt_in applies to AWS regions only: remove it")
        if cloud is not None and item.get("id") not in (None, ""):
            key = f"{cloud}:{item['id']}"
            if key in seen:
                problems.append(f"{where}: duplicate id '{key}'")
            seen.add(key)
        if len(problems) == bad:
            regions.append(
                Region(
                    cloud=str(cloud),
                    id=str(item["id"]),
                    city=str(item["city"]),
                    country=str(item["country"]),
                    lat=float(item["lat"]),
                    lon=float(item["lon"]),
                    source=str(item["source"]),
                    zone=str(item.get("zone", "")),
                    opt_in=bool(item.get("opt_in", False)),
                )
            )
    return regions


def region_to_dict(region: Region) -> dict[str, Any]:
    """Every field of a region, plus its `key`: what plans and `regions --json` print."""
    return {"key": region.key, **asdict(region)}


def region_from_dict(data: dict[str, Any]) -> Region:
    """The inverse of `region_to_dict` (`key` is derived, so it is ignored).

    Older plan files lack `source`, `zone` or `opt_in`: they take the defaults.
    """
    return Region(
        cloud=str(data["cloud"]),
        id=str(data["id"]),
        city=str(data.get("city", "")),
        country=str(data.get("country", "")),
        lat=float(data["lat"]),
        lon=float(data["lon"]),
        source=str(data.get("source", "")),
        zone=str(data.get("zone", "")),
        opt_in=bool(data.get("opt_in", False)),
    )
