"""Distances between regions: geodesic on the WGS-84 ellipsoid (geopy)."""

from __future__ import annotations

from functools import cache

# Light in glass fibre (refractive index ~1.5) travels at 2/3 of c: 199,861.64 km/s,
# so the round trip over the straight line costs 2000 / 199,861.64 s = 10.0069 ms per
# 1000 km of distance. The floor no route can beat.
SPEED_OF_LIGHT_KM_S = 299_792.458
FIBRE_KM_S = SPEED_OF_LIGHT_KM_S * 2.0 / 3.0
FIBRE_RTT_MS_PER_KM = 2.0 * 1000.0 / FIBRE_KM_S  # 0.0100069...
# kept for callers that want the round number: km of distance per ms of round trip
FIBRE_KM_PER_RTT_MS = 1.0 / FIBRE_RTT_MS_PER_KM  # 99.93


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
    """The lowest round-trip time light in fibre (c x 2/3) allows over `distance_km`:
    2 x distance / (c x 2/3)."""
    return distance_km * FIBRE_RTT_MS_PER_KM
