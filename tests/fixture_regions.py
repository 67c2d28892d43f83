"""A small catalog for tests of selection, scheduling and planning.

Real regions with real coordinates, few enough to reason about by hand; it
does not depend on regions.yaml, which other tests check on its own.
"""

from orchestrator.model.catalog import Catalog, parse_catalog

_REGIONS = [
    # cloud, id, city, country, lat, lon, opt_in
    ("aws", "us-east-1", "Ashburn", "US", 39.04, -77.49, False),
    ("aws", "us-west-2", "Boardman", "US", 45.84, -119.70, False),
    ("aws", "eu-west-1", "Dublin", "IE", 53.35, -6.26, False),
    ("aws", "eu-central-1", "Frankfurt", "DE", 50.11, 8.68, False),
    ("aws", "ap-northeast-1", "Tokyo", "JP", 35.68, 139.69, False),
    ("aws", "ap-southeast-2", "Sydney", "AU", -33.87, 151.21, False),
    ("aws", "sa-east-1", "Sao Paulo", "BR", -23.55, -46.63, False),
    ("aws", "af-south-1", "Cape Town", "ZA", -33.92, 18.42, True),
    ("gcp", "us-east4", "Ashburn", "US", 39.04, -77.49, False),
    ("gcp", "us-central1", "Council Bluffs", "US", 41.26, -95.86, False),
    ("gcp", "europe-west1", "Saint-Ghislain", "BE", 50.47, 3.82, False),
    ("gcp", "asia-northeast1", "Tokyo", "JP", 35.68, 139.69, False),
    ("gcp", "australia-southeast1", "Sydney", "AU", -33.87, 151.21, False),
    ("gcp", "southamerica-east1", "Osasco", "BR", -23.53, -46.79, False),
]

CATALOG_DATA = {
    "clouds": {"aws": {"machine_type": "t3.small"}, "gcp": {"machine_type": "e2-small"}},
    "regions": [
        {
            "cloud": cloud,
            "id": id_,
            "city": city,
            "country": country,
            "lat": lat,
            "lon": lon,
            "source": "test fixture",
            **({"zone": f"{id_}-b"} if cloud == "gcp" else {}),
            **({"opt_in": True} if opt_in else {}),
        }
        for cloud, id_, city, country, lat, lon, opt_in in _REGIONS
    ],
}


def fixture_catalog() -> Catalog:
    return parse_catalog(CATALOG_DATA, "fixture")
