"""GCP network tiers as a key: rows of different tiers are different measurements.

A row's `network_tier` names the tier of each end, source's then destination's:
"PREMIUM", "STANDARD" (both ends), or "PREMIUM/STANDARD" (mixed). An AWS end has no
tier of its own and counts as PREMIUM (what the public Skyplane data writes). Empty
means the default, PREMIUM: a sweep's own rows from before the column, the emulator,
AWS alone. Premium is the default everywhere; every other tier is shown apart and
named, never pooled with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT = "PREMIUM"
TIERS = ("PREMIUM", "STANDARD")
NETWORK_TIERS = tuple(t.lower() for t in TIERS)  # as a sweep's flag and a profile spell them


def of_ends(src_tier: str, dst_tier: str) -> str:
    """One network_tier for a directed pair: the tier both ends use, else
    `source/destination` ("PREMIUM/STANDARD")."""
    a = (src_tier or DEFAULT).strip().upper() or DEFAULT
    b = (dst_tier or DEFAULT).strip().upper() or DEFAULT
    return a if a == b else f"{a}/{b}"


def normal(tier: Any) -> str:
    """A tier cell as of_ends writes it: "" and "premium" are PREMIUM, "X/X" is X."""
    text = str(tier or "").strip().upper()
    if "/" in text:
        a, _, b = text.partition("/")
        return of_ends(a, b)
    return text or DEFAULT


def of_row(row: Mapping[str, Any]) -> str:
    """The row's tier (normal), PREMIUM when it names none."""
    return normal(row.get("network_tier"))


def reverse(tier: Any) -> str:
    """The tier of the reverse direction over the same ends: PREMIUM/STANDARD ->
    STANDARD/PREMIUM (each end keeps its own tier)."""
    text = normal(tier)
    a, slash, b = text.partition("/")
    return f"{b}/{a}" if slash else text


def for_sweep(src_cloud: str, dst_cloud: str, gcp_tier: Any) -> str:
    """The tier of a row of one of our sweeps, whose GCP hosts all use `gcp_tier` (the
    sweep's cloud option); an AWS end is PREMIUM."""
    chosen = normal(gcp_tier)

    def end(cloud: str) -> str:
        return chosen if cloud.strip().lower() == "gcp" else DEFAULT

    return of_ends(end(src_cloud), end(dst_cloud))


def is_default(tier: Any) -> bool:
    return normal(tier) == DEFAULT


def label(tier: Any) -> str:
    """How a report names a tier beside a cloud pair: "" for the default,
    "standard", "premium/standard" otherwise."""
    return "" if is_default(tier) else normal(tier).lower()


def describe(tier: Any) -> str:
    """A tier in words, for a line of text: "Premium tier", "Standard tier",
    "Premium/Standard tiers (source/destination)"."""
    text = normal(tier)
    if "/" in text:
        return f"{text.title()} tiers (source/destination)"
    return f"{text.title()} tier"


def group_name(cloud_pair: str, tier: Any) -> str:
    """The report's group of a cloud pair in a tier: "gcp-gcp" for the default tier,
    "gcp-gcp standard" for another."""
    named = label(tier)
    return f"{cloud_pair} {named}" if named else cloud_pair


def parse_option(text: str) -> str:
    """A --tier value (premium, standard, premium/standard; any case) as normal
    writes it; ValueError naming the tiers for another."""
    tier = normal(text)
    if any(part not in TIERS for part in tier.split("/")):
        raise ValueError(
            f"network tier '{text}' is unknown: use premium or standard "
            "(or source/destination, such as premium/standard)"
        )
    return tier
