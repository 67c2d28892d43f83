"""Distances against values computed by hand or published for the WGS-84 ellipsoid."""

import math

import pytest

from orchestrator.core.geo import distance_km, fibre_rtt_ms

WGS84_A_KM = 6378.137  # equatorial radius
WGS84_F = 1 / 298.257223563


def test_one_degree_of_longitude_on_the_equator_is_an_arc_of_the_equator():
    # On the equator a geodesic shorter than half the circumference runs along it:
    # a x pi / 180 = 111.3195 km.
    expected = WGS84_A_KM * math.pi / 180
    assert distance_km(0, 0, 0, 1) == pytest.approx(expected, abs=1e-3)
    assert distance_km(0, 0, 0, 1) == pytest.approx(111.32, abs=0.005)


def test_one_degree_of_latitude_at_the_equator_uses_the_meridian_radius():
    # Meridian radius of curvature at the equator: M = a (1 - e^2); the arc from
    # 0 to 1 degree is 110.574 km (published meridian-arc tables).
    assert distance_km(0, 0, 1, 0) == pytest.approx(110.574, abs=0.002)
    e2 = WGS84_F * (2 - WGS84_F)
    m_km = WGS84_A_KM * (1 - e2)
    assert distance_km(0, 0, 0.01, 0) * 100 == pytest.approx(m_km * math.pi / 180, rel=1e-4)


def test_quarter_meridian_is_the_published_10001_966_km():
    assert distance_km(0, 0, 90, 0) == pytest.approx(10001.966, abs=0.001)


def test_geographiclib_example_jfk_to_lhr():
    # GeographicLib documentation: Inverse(40.6, -73.8, 51.6, -0.5) -> s12 = 5551759.4 m
    assert distance_km(40.6, -73.8, 51.6, -0.5) == pytest.approx(5551.7594, abs=0.001)


def test_geopy_readme_newport_to_cleveland():
    # geopy README: geodesic(newport_ri, cleveland_oh).miles == 538.39044536
    km = distance_km(41.49008, -71.312796, 41.499498, -81.695391)
    assert km / 1.609344 == pytest.approx(538.39044536, abs=1e-6)


def test_distance_is_symmetric_and_zero_for_one_point():
    assert distance_km(39.04, -77.49, 53.35, -6.26) == distance_km(53.35, -6.26, 39.04, -77.49)
    assert distance_km(35.68, 139.69, 35.68, 139.69) == 0


def test_antipodes_on_the_equator_go_over_a_pole():
    # Between antipodal equator points the shortest geodesic runs through the
    # poles: twice the quarter meridian, shorter than half the equator.
    km = distance_km(0, 0, 0, 180)
    assert km == pytest.approx(2 * 10001.966, abs=0.01)
    assert km < WGS84_A_KM * math.pi


def test_fibre_rtt_floor_is_one_ms_per_100_km():
    assert fibre_rtt_ms(0) == 0
    assert fibre_rtt_ms(1000) == pytest.approx(10.0)
    assert fibre_rtt_ms(5551.76) == pytest.approx(55.5176)
