"""Distances between regions: geodesic on the WGS-84 ellipsoid (geographiclib)."""

from __future__ import annotations

from geographiclib.geodesic import Geodesic

# WGS-84 with the major axis in km, as geopy's `geodesic` sets it up, so distances come
# out in km with the same arithmetic. geographiclib directly: importing geopy took ~0.1 s
# (its geocoders and HTTP adapters) on every command.
_WGS84_KM = Geodesic(6378.137, 1 / 298.257223563)

# Light in fibre covers about 200 km per ms, so the round trip over the straight
# line costs 1 ms per 100 km: the floor no route can beat.
FIBRE_KM_PER_RTT_MS = 100.0


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Geodesic distance in km between two points given in degrees."""
    return float(_WGS84_KM.Inverse(lat1, lon1, lat2, lon2, Geodesic.DISTANCE)["s12"])


def fibre_rtt_ms(distance_km: float) -> float:
    """The lowest round-trip time light in fibre allows over `distance_km`."""
    return distance_km / FIBRE_KM_PER_RTT_MS
