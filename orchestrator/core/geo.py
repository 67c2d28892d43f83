"""Distances between regions: geodesic on the WGS-84 ellipsoid (geopy)."""

from __future__ import annotations

from functools import cache

# Light in fibre covers about 200 km per ms, so the round trip over the straight
# line costs 1 ms per 100 km: the floor no route can beat.
FIBRE_KM_PER_RTT_MS = 100.0


@cache
def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Geodesic distance in km between two points given in degrees.

    geopy is imported on the first call, not with this module: importing it loads its
    geocoders (~0.1 s), which commands that never compute a distance (--help, shell
    completion) should not pay. Cached: there are only so many region pairs, and the
    readers of published data ask for the same pairs row after row.
    """
    from geopy.distance import geodesic

    return float(geodesic((lat1, lon1), (lat2, lon2), ellipsoid="WGS-84").km)


def fibre_rtt_ms(distance_km: float) -> float:
    """The lowest round-trip time light in fibre allows over `distance_km`."""
    return distance_km / FIBRE_KM_PER_RTT_MS
