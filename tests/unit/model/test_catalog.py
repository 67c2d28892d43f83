"""The region catalog: the real regions.yaml, its geography, and every bad input."""

from __future__ import annotations

import copy
import itertools
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.core.geo import distance_km
from orchestrator.model.catalog import (
    Catalog,
    CatalogError,
    Region,
    load_catalog,
    parse_catalog,
    region_from_dict,
    region_listing,
    region_to_dict,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "catalog"

AWS_OPT_IN = {
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-south-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-6",
    "ap-southeast-7",
    "ca-west-1",
    "eu-central-2",
    "eu-south-1",
    "eu-south-2",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
}

# Coarse boxes (lat_min, lat_max, lon_min, lon_max) around each country: the whole
# mainland, so a real town is never rejected, but tight enough that a swapped sign,
# swapped lat/lon or a region placed in the wrong country falls outside.
COUNTRY_BOXES: dict[str, tuple[float, float, float, float]] = {
    "AE": (22.6, 26.1, 51.5, 56.4),
    "AU": (-43.7, -10.6, 113.1, 153.7),
    "BE": (49.5, 51.5, 2.5, 6.4),
    "BH": (25.8, 26.3, 50.3, 50.7),
    "BR": (-33.8, 5.3, -74.0, -34.7),
    # Southern band only: every Canadian city a cloud could be in lies below 56 N,
    # and the empty north is where a misplaced region would land.
    "CA": (41.6, 56.0, -141.0, -52.6),
    "CH": (45.8, 47.9, 5.9, 10.5),
    "CL": (-56.0, -17.5, -75.8, -66.4),
    "DE": (47.2, 55.1, 5.8, 15.1),
    "ES": (36.0, 43.8, -9.4, 4.4),
    "FI": (59.8, 70.1, 20.5, 31.6),
    "FR": (41.3, 51.1, -5.2, 9.6),
    "GB": (49.9, 60.9, -8.7, 1.8),
    "HK": (22.15, 22.57, 113.8, 114.45),
    "ID": (-11.0, 6.1, 95.0, 141.0),
    "IE": (51.4, 55.4, -10.5, -6.0),
    "IL": (29.5, 33.3, 34.2, 35.9),
    "IN": (6.7, 35.7, 68.1, 97.4),
    "IT": (36.6, 47.1, 6.6, 18.6),
    "JP": (24.0, 45.6, 122.9, 145.9),
    "KR": (33.1, 38.7, 124.6, 131.0),
    "MX": (14.5, 32.8, -118.5, -86.7),
    "MY": (0.8, 7.4, 99.6, 119.3),
    "NL": (50.7, 53.6, 3.3, 7.3),
    "NZ": (-47.3, -34.4, 166.4, 178.6),
    "PL": (49.0, 54.9, 14.1, 24.2),
    "QA": (24.4, 26.2, 50.7, 51.7),
    "SA": (16.3, 32.2, 34.5, 55.7),
    "SE": (55.3, 69.1, 11.0, 24.2),
    "SG": (1.15, 1.48, 103.6, 104.1),
    "TH": (5.6, 20.5, 97.3, 105.7),
    "TW": (21.9, 25.3, 120.0, 122.0),
    # The contiguous states: no region is in Alaska or Hawaii.
    "US": (24.5, 49.5, -125.0, -66.9),
    "ZA": (-34.9, -22.1, 16.4, 32.9),
}

ASHBURN = (39.04, -77.49)
SAO_PAULO = (-23.55, -46.63)


def outside_country(region: Region) -> str | None:
    """Why `region` is not inside the box of the country it claims, or None if it is."""
    box = COUNTRY_BOXES.get(region.country)
    if box is None:
        return f"{region.key}: no bounding box for country {region.country}"
    lat_min, lat_max, lon_min, lon_max = box
    if lat_min <= region.lat <= lat_max and lon_min <= region.lon <= lon_max:
        return None
    return f"{region.key}: ({region.lat}, {region.lon}) is outside {region.country}"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(paths.CATALOG)


# --- the real catalog --------------------------------------------------------


def test_real_catalog_has_every_region_of_both_clouds(catalog: Catalog) -> None:
    assert len(catalog.in_clouds(["aws"])) == 34
    assert len(catalog.in_clouds(["gcp"])) == 43
    assert len(set(catalog.keys())) == 77
    assert catalog.machine_types == {"aws": "t3.small", "gcp": "e2-small"}


def test_opt_in_is_exactly_the_regions_aws_requires_enabling(catalog: Catalog) -> None:
    assert {r.id for r in catalog.regions if r.opt_in} == AWS_OPT_IN
    assert all(r.cloud == "aws" for r in catalog.regions if r.opt_in)


def test_gcp_zones_belong_to_their_region_and_aws_has_none(catalog: Catalog) -> None:
    for r in catalog.in_clouds(["gcp"]):
        assert r.zone.startswith(f"{r.id}-"), r.key
        assert len(r.zone) == len(r.id) + 2, r.key  # one zone letter
    assert all(r.zone == "" for r in catalog.in_clouds(["aws"]))
    # The regions without an -a zone.
    assert catalog.get("gcp:europe-west1").zone == "europe-west1-b"
    assert catalog.get("gcp:us-east1").zone == "us-east1-b"


def test_regions_are_grouped_by_cloud_and_sorted_by_id(catalog: Catalog) -> None:
    def natural(region_id: str) -> list[Any]:
        # europe-west10 sorts after europe-west9, as a reader expects.
        return [int(t) if t.isdigit() else t for t in _split_digits(region_id)]

    clouds = [r.cloud for r in catalog.regions]
    assert clouds == sorted(clouds)
    for cloud in ("aws", "gcp"):
        ids = [r.id for r in catalog.in_clouds([cloud])]
        assert ids == sorted(ids, key=natural)


def _split_digits(text: str) -> list[str]:
    return ["".join(g) for _, g in itertools.groupby(text, key=str.isdigit)]


def test_every_coordinate_lies_in_the_country_it_claims(catalog: Catalog) -> None:
    problems = [p for r in catalog.regions if (p := outside_country(r))]
    assert problems == []


def test_coordinates_have_two_decimals(catalog: Catalog) -> None:
    for r in catalog.regions:
        assert round(r.lat, 2) == r.lat and round(r.lon, 2) == r.lon, r.key


@pytest.mark.parametrize(
    ("key", "lat", "lon", "country"),
    [
        ("aws:sa-east-1", -23.55, -30.00, "BR"),  # São Paulo pushed into the mid-Atlantic
        ("aws:ca-central-1", 62.40, -96.47, "CA"),  # Montréal at the centre of Canada
        ("gcp:us-east4", 39.04, 77.49, "US"),  # Ashburn with the sign of lon lost
        ("aws:eu-north-1", 18.07, 59.33, "SE"),  # Stockholm with lat and lon swapped
        ("aws:eu-west-1", 53.35, -6.26, "FR"),  # Dublin filed under the wrong country
        ("aws:us-east-1", 39.04, -77.49, "XX"),  # a country with no box is reported too
    ],
)
def test_misplaced_region_is_caught(key: str, lat: float, lon: float, country: str) -> None:
    cloud, region_id = key.split(":")
    region = Region(cloud, region_id, "x", country, lat, lon, "test")
    assert outside_country(region) is not None


def test_the_box_check_accepts_the_real_position(catalog: Catalog) -> None:
    # The other half of the misplaced cases: the check is not rejecting everything.
    assert outside_country(catalog.get("aws:sa-east-1")) is None
    assert outside_country(catalog.get("aws:ca-central-1")) is None


def test_different_cities_never_share_a_point_and_same_city_is_close(catalog: Catalog) -> None:
    for a, b in itertools.combinations(catalog.regions, 2):
        if a.city == b.city:
            assert a.country == b.country, (a.key, b.key)
            assert distance_km(a.lat, a.lon, b.lat, b.lon) < 50, (a.key, b.key)
        else:
            assert (a.lat, a.lon) != (b.lat, b.lon), (a.key, b.key)


def test_known_geography(catalog: Catalog) -> None:
    # Oregon's AWS region is in Boardman, east of the Cascades (not Portland).
    assert catalog.get("aws:us-west-2").lon > -121
    us_east_1 = catalog.get("aws:us-east-1")
    assert distance_km(us_east_1.lat, us_east_1.lon, *ASHBURN) < 50
    for key in ("aws:sa-east-1", "gcp:southamerica-east1"):
        r = catalog.get(key)
        assert distance_km(r.lat, r.lon, *SAO_PAULO) < 50, key
    # Both clouds in Ashburn, both in Columbus: a pair tens of km apart, not hundreds.
    east4 = catalog.get("gcp:us-east4")
    assert distance_km(us_east_1.lat, us_east_1.lon, east4.lat, east4.lon) < 50
    ohio, east5 = catalog.get("aws:us-east-2"), catalog.get("gcp:us-east5")
    assert distance_km(ohio.lat, ohio.lon, east5.lat, east5.lon) < 50
    # Frankfurt to Sydney is one of the longest pairs: about 16,500 km.
    fra, syd = catalog.get("aws:eu-central-1"), catalog.get("aws:ap-southeast-2")
    assert 16_000 < distance_km(fra.lat, fra.lon, syd.lat, syd.lon) < 17_000


def test_every_region_has_a_source_and_an_iso_country(catalog: Catalog) -> None:
    for r in catalog.regions:
        assert r.source.startswith(("AWS: ", "GCP: ")), r.key
        assert r.source[:3].lower() == r.cloud, r.key
        assert r.country in COUNTRY_BOXES, r.key


# --- Catalog.get -------------------------------------------------------------


def test_get_finds_a_region(catalog: Catalog) -> None:
    r = catalog.get("gcp:europe-west4")
    assert (r.city, r.country, r.zone) == ("Eemshaven", "NL", "europe-west4-a")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("aws:us-eats-1", "unknown region 'aws:us-eats-1' (did you mean aws:us-east-1?)"),
        ("aws:us-east-3", "(did you mean aws:us-east-1 or aws:us-east-2?)"),
        # equally close names are all listed, never one of them picked by sort order
        (
            "aws:us-est-1",
            "unknown region 'aws:us-est-1' (did you mean aws:us-east-1 or aws:us-west-1?)",
        ),
        ("AWS:EU-WEST-1", "unknown region 'AWS:EU-WEST-1' (did you mean aws:eu-west-1?)"),
        ("gcp:europe-westt4", "(did you mean gcp:europe-west4?)"),
        ("azure:zzzz", "unknown region 'azure:zzzz' (see 'interregion regions')"),
        (
            "europe-west1",
            "region 'europe-west1' has no cloud: write it as cloud:region, e.g. gcp:europe-west1",
        ),
        ("us-east-1", "e.g. aws:us-east-1"),
        ("nowhere", "region 'nowhere' has no cloud: write it as cloud:region, e.g. aws:us-east-1"),
    ],
)
def test_get_on_a_bad_name_is_one_line_with_a_hint(
    catalog: Catalog, name: str, message: str
) -> None:
    with pytest.raises(UserError) as e:
        catalog.get(name)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


# --- bad input ---------------------------------------------------------------


def _valid() -> dict[str, Any]:
    return {
        "clouds": {"aws": {"machine_type": "t3.small"}, "gcp": {"machine_type": "e2-small"}},
        "regions": [
            {
                "cloud": "aws",
                "id": "us-east-1",
                "city": "Ashburn",
                "country": "US",
                "lat": 39.04,
                "lon": -77.49,
                "source": "AWS: US East (N. Virginia)",
            },
            {
                "cloud": "gcp",
                "id": "us-east4",
                "zone": "us-east4-a",
                "city": "Ashburn",
                "country": "US",
                "lat": 39.04,
                "lon": -77.49,
                "source": "GCP: Ashburn",
            },
        ],
    }


def _with(change: Any) -> dict[str, Any]:
    data = _valid()
    change(data)
    return data


def _set(index: int, **fields: Any) -> Any:
    return lambda d: d["regions"][index].update(fields)


def _drop(index: int, field: str) -> Any:
    return lambda d: d["regions"][index].pop(field)


BAD_CASES = {
    "unknown key": (
        _set(0, altitude=12),
        ["aws:us-east-1: unknown key 'altitude'"],
    ),
    "missing field": (
        _drop(0, "city"),
        ["aws:us-east-1: missing field 'city'"],
    ),
    "lat out of range": (
        _set(0, lat=91.5),
        ["aws:us-east-1: lat 91.5 is out of range [-90, 90]"],
    ),
    "lon out of range": (
        _set(1, lon=-181),
        ["gcp:us-east4: lon -181 is out of range [-180, 180]"],
    ),
    "lat not a number": (
        _set(0, lat="39.04N"),
        ["aws:us-east-1: lat must be a number, got '39.04N'"],
    ),
    "duplicate id": (
        lambda d: d["regions"].append(copy.deepcopy(d["regions"][0])),
        ["aws:us-east-1: duplicate id 'aws:us-east-1'"],
    ),
    "unknown cloud": (
        _set(0, cloud="azure"),
        ["azure:us-east-1: unknown cloud 'azure' (known: aws, gcp)"],
    ),
    "unknown cloud in clouds": (
        lambda d: d["clouds"].update(azure={"machine_type": "B2s"}),
        ["clouds.azure: unknown cloud (known: aws, gcp)"],
    ),
    "missing machine type": (
        lambda d: d["clouds"]["gcp"].pop("machine_type"),
        ["clouds.gcp: missing 'machine_type'"],
    ),
    "gcp without zone": (
        _drop(1, "zone"),
        ["gcp:us-east4: missing field 'zone' (GCP regions need a default zone)"],
    ),
    "zone of another region": (
        _set(1, zone="us-east1-b"),
        ["gcp:us-east4: zone 'us-east1-b' is not in region 'us-east4'"],
    ),
    "country not ISO": (
        _set(0, country="USA"),
        ["aws:us-east-1: country 'USA' is not an ISO 3166-1 alpha-2 code like 'US'"],
    ),
    "opt_in not a bool": (
        _set(0, opt_in="yes please"),
        ["aws:us-east-1: opt_in must be true or false"],
    ),
    "opt_in on gcp": (
        _set(1, opt_in=True),
        ["gcp:us-east4: opt_in applies to AWS regions only: remove it"],
    ),
    "unknown top-level key": (
        lambda d: d.update(region=[]),
        ["unknown top-level key 'region'"],
    ),
    "regions not a list": (
        lambda d: d.update(regions={"aws:us-east-1": {}}),
        ["'regions' must be a list"],
    ),
    # Two regions without an id are two missing fields, not a duplicate "aws:None".
    "two ids missing": (
        lambda d: [d["regions"][0].pop("id"), d["regions"][1].pop("id")],
        ["regions[0]: missing field 'id'", "regions[1]: missing field 'id'"],
    ),
    "several problems at once": (
        lambda d: [
            d["regions"][0].update(lat=100, lon=200, colour="red"),
            d["regions"][1].pop("source"),
        ],
        [
            "aws:us-east-1: unknown key 'colour'",
            "aws:us-east-1: lat 100 is out of range [-90, 90]",
            "aws:us-east-1: lon 200 is out of range [-180, 180]",
            "gcp:us-east4: missing field 'source'",
        ],
    ),
}


def test_the_valid_base_parses() -> None:
    # Each bad case below differs from this one by the change it names.
    c = parse_catalog(_valid())
    assert c.keys() == ["aws:us-east-1", "gcp:us-east4"]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_dict_gives_one_line_per_problem(case: str) -> None:
    change, expected = BAD_CASES[case]
    with pytest.raises(CatalogError) as e:
        parse_catalog(_with(change), "cat")
    lines = str(e.value).splitlines()
    assert lines == [f"cat: {line}" for line in expected]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_file_gives_one_line_per_problem_naming_the_file(case: str, tmp_path: Path) -> None:
    change, expected = BAD_CASES[case]
    path = tmp_path / "regions.yaml"
    path.write_text(yaml.safe_dump(_with(change), allow_unicode=True))
    with pytest.raises(CatalogError) as e:
        load_catalog(path)
    assert str(e.value).splitlines() == [f"{path}: {line}" for line in expected]


def test_catalog_error_is_a_user_error() -> None:
    # The CLI prints UserErrors as one line with exit code 2, never a traceback.
    assert issubclass(CatalogError, UserError)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(CatalogError, match=r"nope\.yaml: catalog file not found$"):
        load_catalog(path)


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match=r"is a folder, expected a catalog$"):
        load_catalog(tmp_path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("regions:\n  - city: S\xe3o Paulo\n".encode("latin-1"))
    with pytest.raises(CatalogError, match=r"not UTF-8 text: save the catalog as UTF-8$"):
        load_catalog(path)


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("bad_yaml.yaml", r"bad_yaml\.yaml: line 7: not valid YAML \(.+\): fix the file$"),
        (
            "duplicate_key.yaml",
            r"line 11: not valid YAML \(duplicate key 'lat', also on line 10\): fix the file$",
        ),
        ("empty.yaml", r"empty\.yaml: expected a mapping with 'clouds' and 'regions'$"),
    ],
)
def test_unreadable_catalog_files(fixture: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / fixture
    shutil.copy(DATA / fixture, path)
    with pytest.raises(CatalogError, match=message) as e:
        load_catalog(path)
    assert "\n" not in str(e.value)


def test_hand_written_file_with_several_problems(tmp_path: Path) -> None:
    path = tmp_path / "several.yaml"
    shutil.copy(DATA / "several_problems.yaml", path)
    with pytest.raises(CatalogError) as e:
        load_catalog(path)
    assert str(e.value).splitlines() == [
        f"{path}: clouds: missing 'gcp'",
        f"{path}: aws:us-east-1: lon -277.49 is out of range [-180, 180]",
        f"{path}: aws:eu-west-1: missing field 'country'",
        f"{path}: gcp:europe-west1: unknown key 'zones'",
        f"{path}: gcp:europe-west1: missing field 'zone' (GCP regions need a default zone)",
        f"{path}: aws:us-east-1: duplicate id 'aws:us-east-1'",
    ]


def test_yaml_merge_keys_still_work(tmp_path: Path) -> None:
    # The duplicate-key guard must not break YAML's `<<` merges.
    path = tmp_path / "merge.yaml"
    path.write_text(
        "clouds: {aws: {machine_type: t3.small}, gcp: {machine_type: e2-small}}\n"
        "base: &ashburn {city: Ashburn, country: US, lat: 39.04, lon: -77.49, source: s}\n"
        "regions:\n"
        "  - {<<: *ashburn, cloud: aws, id: us-east-1}\n"
    )
    with pytest.raises(CatalogError) as e:
        load_catalog(path)
    # Only the extra top-level key is a problem: the merged region itself is valid.
    assert str(e.value) == f"{path}: unknown top-level key 'base'"


def test_region_dict_round_trip_keeps_every_field() -> None:
    region = Region(
        "gcp", "europe-west1", "St. Ghislain", "BE", 50.45, 3.82, "src", "europe-west1-b"
    )
    data = region_to_dict(region)
    assert data["key"] == "gcp:europe-west1" and data["zone"] == "europe-west1-b"
    assert set(data) == {"key", *Region.__dataclass_fields__}
    assert region_from_dict(data) == region
    aws = Region("aws", "af-south-1", "Cape Town", "ZA", -33.9, 18.4, "src", opt_in=True)
    assert region_from_dict(region_to_dict(aws)) == aws


def test_region_order_is_by_cloud_then_west_to_east_unknown_last():
    from orchestrator.model.catalog import load_catalog, region_order

    keys = ["gcp:europe-west1", "aws:zz-nowhere-1", "aws:ap-southeast-2", "gcp:us-west1",
            "aws:us-east-1", "aws:eu-west-1"]  # fmt: skip
    assert region_order(keys, load_catalog()) == [
        "aws:us-east-1", "aws:eu-west-1", "aws:ap-southeast-2", "aws:zz-nowhere-1",
        "gcp:us-west1", "gcp:europe-west1",
    ]  # fmt: skip


def test_the_charts_order_regions_as_the_matrix_does():
    from orchestrator.model.catalog import load_catalog, region_order
    from orchestrator.report.charts import geographic_order

    catalog = load_catalog()
    coords = {r.key: (r.lat, r.lon) for r in catalog.regions}
    assert geographic_order(list(coords), coords) == region_order(coords, catalog)


def test_the_region_listing_of_a_catalog_file_holds_the_clouds_named():
    found = region_listing(paths.CATALOG, ["gcp"])
    every = load_catalog(paths.CATALOG)
    assert [r.key for r in found.regions] == [r.key for r in every.in_clouds(["gcp"])]
    assert found.regions and {r.cloud for r in found.regions} == {"gcp"}
    assert found == every.listing(["gcp"])
