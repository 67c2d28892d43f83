"""List prices for the cost estimate: `infra/pricing.yaml`, loaded and checked.

Egress is charged by the sending side's cloud, by what the traffic crosses:
- same cloud, same continent ("same_continent"), same cloud, other continent
  ("other_continent"), or another cloud ("internet": cross-cloud traffic
  leaves over the internet and is billed as internet egress).
AWS raises the price for some source regions; Google for some continent pairs.
Prices are kept per GB (10^9 bytes); a cloud that bills per GiB is converted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.core import PRICING, UserError, load_yaml
from orchestrator.model import CLOUDS, Region

EGRESS_KINDS = ("same_continent", "other_continent", "internet")
BYTES_PER_UNIT = {"GB": 1e9, "GiB": 2.0**30}
_NUMBERS = ("instance_usd_per_hour", "ipv4_usd_per_hour", "disk_usd_per_hour", "max_egress_bps")


class PricingError(UserError):
    """The pricing file is invalid; the message has one line per problem."""


@dataclass(frozen=True)
class CloudPrices:
    machine_type: str
    instance_usd_per_hour: float
    ipv4_usd_per_hour: float
    disk_usd_per_hour: float
    max_egress_bps: float  # the most one VM can send: byte estimates are ceilings
    egress_usd_per_gb: dict[str, float]  # kind -> USD per 10^9 bytes
    region_egress_usd_per_gb: dict[str, dict[str, float]] = field(default_factory=dict)
    continent_egress_usd_per_gb: dict[str, float] = field(default_factory=dict)

    @property
    def vm_usd_per_hour(self) -> float:
        """What one running test VM costs per hour: instance, public IPv4 and disk."""
        return self.instance_usd_per_hour + self.ipv4_usd_per_hour + self.disk_usd_per_hour


@dataclass(frozen=True)
class Pricing:
    as_of: str
    currency: str
    sources: dict[str, str]
    continents: dict[str, str]  # ISO country code -> continent
    clouds: dict[str, CloudPrices]

    def continent(self, region: Region) -> str:
        try:
            return self.continents[region.country]
        except KeyError:
            raise UserError(
                f"{region.key}: country {region.country} has no continent in the pricing "
                "file: add it under 'continents' in infra/pricing.yaml"
            ) from None

    def egress_kind(self, src: Region, dst: Region) -> str:
        if src.cloud != dst.cloud:
            return "internet"
        same = self.continent(src) == self.continent(dst)
        return "same_continent" if same else "other_continent"

    def egress_usd_per_gb(self, src: Region, dst: Region) -> float:
        """USD per 10^9 bytes sent from `src` to `dst`, charged by src's cloud."""
        prices = self.clouds[src.cloud]
        kind = self.egress_kind(src, dst)
        by_region = prices.region_egress_usd_per_gb.get(src.id, {})
        if kind == "internet":
            return by_region.get("internet", prices.egress_usd_per_gb[kind])
        if "inter_region" in by_region:
            return by_region["inter_region"]
        pair = "-".join(sorted((self.continent(src), self.continent(dst))))
        return prices.continent_egress_usd_per_gb.get(pair, prices.egress_usd_per_gb[kind])


def load_pricing(path: Path = PRICING) -> Pricing:
    try:
        data = load_yaml(Path(path), "pricing file")
    except FileNotFoundError:
        raise PricingError(f"{path}: pricing file not found") from None
    except UserError as e:
        raise PricingError(str(e)) from None
    return parse_pricing(data, str(path))


def parse_pricing(data: Any, source: str = "pricing") -> Pricing:
    """Check a parsed pricing document; every problem is one line of the error."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise PricingError(f"{source}: expected a mapping with as_of, sources, clouds")
    for key in ("as_of", "currency", "sources", "continents", "clouds"):
        if key not in data:
            problems.append(f"{source}: missing '{key}'")
    sources = data.get("sources") or {}
    if not isinstance(sources, dict):
        problems.append(f"{source}: 'sources' must map a name to a description")
        sources = {}

    def number(item: Any, where: str) -> float:
        if isinstance(item, dict):
            if item.get("source") not in sources:
                problems.append(f"{where}: source '{item.get('source')}' is not under 'sources'")
            item = item.get("value")
        if isinstance(item, bool) or not isinstance(item, int | float) or item < 0:
            problems.append(f"{where}: expected a number >= 0, got {item!r}")
            return 0.0
        return float(item)

    continents: dict[str, str] = {}
    for continent, countries in (data.get("continents") or {}).items():
        for country in countries or ():
            if country in continents:
                problems.append(f"{source}: country {country} is in two continents")
            continents[country] = continent
    clouds: dict[str, CloudPrices] = {}
    raw_clouds = data.get("clouds") or {}
    for cloud in CLOUDS:
        if cloud not in raw_clouds:
            problems.append(f"{source}: clouds: missing '{cloud}'")
    for cloud, raw in raw_clouds.items():
        where = f"{source}: clouds.{cloud}"
        if cloud not in CLOUDS or not isinstance(raw, dict):
            problems.append(f"{where}: unknown cloud or not a mapping")
            continue
        unit = raw.get("egress_unit")
        if unit not in BYTES_PER_UNIT:
            problems.append(f"{where}.egress_unit: expected one of {', '.join(BYTES_PER_UNIT)}")
            unit = "GB"
        per_gb = 1e9 / BYTES_PER_UNIT[unit]
        values = {key: number(raw.get(key), f"{where}.{key}") for key in _NUMBERS}
        egress = raw.get("egress_usd") or {}
        by_kind = {
            k: number(egress.get(k), f"{where}.egress_usd.{k}") * per_gb for k in EGRESS_KINDS
        }
        by_region: dict[str, dict[str, float]] = {}
        for region, prices in (raw.get("region_egress_usd") or {}).items():
            if not isinstance(prices, dict) or prices.get("source") not in sources:
                problems.append(f"{where}.region_egress_usd.{region}: needs a known source")
                continue
            by_region[region] = {
                k: number(v, f"{where}.region_egress_usd.{region}.{k}") * per_gb
                for k, v in prices.items()
                if k != "source"
            }
        by_pair = {}
        for pair, v in (raw.get("continent_egress_usd") or {}).items():
            a, _, b = str(pair).partition("-")
            if pair != "-".join(sorted((a, b))) or not {a, b} <= set(continents.values()):
                problems.append(
                    f"{where}.continent_egress_usd.{pair}: write it as two known continents "
                    "in alphabetical order, e.g. europe-north_america"
                )
            by_pair[pair] = number(v, f"{where}.continent_egress_usd.{pair}") * per_gb
        clouds[cloud] = CloudPrices(
            machine_type=str(raw.get("machine_type", "")),
            egress_usd_per_gb=by_kind,
            region_egress_usd_per_gb=by_region,
            continent_egress_usd_per_gb=by_pair,
            **values,
        )
    if problems:
        raise PricingError("\n".join(problems))
    return Pricing(
        as_of=str(data["as_of"]),
        currency=str(data["currency"]),
        sources={str(k): str(v) for k, v in sources.items()},
        continents=continents,
        clouds=clouds,
    )
