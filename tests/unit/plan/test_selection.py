"""Selection filters, alone and combined, and their errors."""

import math
import re
from itertools import permutations

import pytest
from fixture_regions import fixture_catalog
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import load_catalog
from orchestrator.plan.selection import (
    Pair,
    SelectionSpec,
    band_of,
    farthest_point_sample,
    pair_distance_km,
    pair_filter,
    pairs_per_band,
    select,
)

CATALOG = fixture_catalog()
AWS = [r.key for r in CATALOG.regions if r.cloud == "aws"]
GCP = [r.key for r in CATALOG.regions if r.cloud == "gcp"]


def keys(selection):
    return sorted(p.key for p in selection.pairs)


def test_default_is_every_directed_pair_of_both_clouds():
    selection = select(CATALOG, SelectionSpec())
    n = len(CATALOG.regions)
    assert len(selection.regions) == n == 14
    assert len(selection.pairs) == n * (n - 1)
    assert {p.cloud_pair for p in selection.pairs} == {"aws-aws", "aws-gcp", "gcp-aws", "gcp-gcp"}
    assert len(set(keys(selection))) == len(selection.pairs)


def test_distances_are_geodesic_and_the_same_both_ways():
    selection = select(CATALOG, SelectionSpec())
    by_key = {p.key: p.distance_km for p in selection.pairs}
    assert by_key[("aws:us-east-1", "aws:eu-west-1")] == by_key[("aws:eu-west-1", "aws:us-east-1")]
    # Ashburn (39.04, -77.49) to Dublin (53.35, -6.26): 5,476 km
    assert by_key[("aws:us-east-1", "aws:eu-west-1")] == pytest.approx(5476, abs=1)
    assert by_key[("aws:us-east-1", "gcp:us-east4")] == 0  # both clouds in Ashburn


def test_clouds_keeps_one_cloud():
    selection = select(CATALOG, SelectionSpec(clouds=("aws",)))
    assert [r.key for r in selection.regions] == AWS
    assert {p.cloud_pair for p in selection.pairs} == {"aws-aws"}
    assert len(selection.pairs) == 8 * 7


def test_regions_lists_the_regions_explicitly():
    spec = SelectionSpec(regions=("gcp:europe-west1", "aws:us-east-1", "aws:ap-northeast-1"))
    selection = select(CATALOG, spec)
    # catalog order, whatever the order on the command line
    assert selection.keys == ("aws:us-east-1", "aws:ap-northeast-1", "gcp:europe-west1")
    assert len(selection.pairs) == 6


def test_exclude_and_no_opt_in_remove_regions():
    selection = select(CATALOG, SelectionSpec(exclude=("aws:us-east-1", "gcp:us-east4")))
    assert "aws:us-east-1" not in selection.keys and "gcp:us-east4" not in selection.keys
    assert len(selection.regions) == 12
    selection = select(CATALOG, SelectionSpec(no_opt_in=True))
    assert "aws:af-south-1" not in selection.keys
    assert len(selection.regions) == 13


def test_cloud_pair_is_directed():
    selection = select(CATALOG, SelectionSpec(cloud_pairs=(("aws", "gcp"),)))
    assert all(p.src.cloud == "aws" and p.dst.cloud == "gcp" for p in selection.pairs)
    assert len(selection.pairs) == 8 * 6
    both = select(CATALOG, SelectionSpec(cloud_pairs=(("aws", "gcp"), ("gcp", "aws"))))
    assert len(both.pairs) == 2 * 8 * 6
    same = select(CATALOG, SelectionSpec(cloud_pairs=(("gcp", "gcp"),)))
    assert {p.cloud_pair for p in same.pairs} == {"gcp-gcp"}
    assert same.keys == tuple(GCP)


def test_distance_band_is_inclusive():
    d = pair_distance_km(CATALOG.get("aws:us-east-1"), CATALOG.get("aws:eu-west-1"))
    selection = select(CATALOG, SelectionSpec(min_km=d, max_km=d))
    # Ashburn hosts both clouds, so gcp:us-east4 is exactly as far from Dublin.
    assert keys(selection) == sorted(
        [
            ("aws:us-east-1", "aws:eu-west-1"),
            ("aws:eu-west-1", "aws:us-east-1"),
            ("gcp:us-east4", "aws:eu-west-1"),
            ("aws:eu-west-1", "gcp:us-east4"),
        ]
    )


def test_zero_km_band_keeps_co_located_regions_only():
    selection = select(CATALOG, SelectionSpec(max_km=0))
    pairs = {frozenset(p.key) for p in selection.pairs}
    assert pairs == {
        frozenset({"aws:us-east-1", "gcp:us-east4"}),
        frozenset({"aws:ap-northeast-1", "gcp:asia-northeast1"}),
        frozenset({"aws:ap-southeast-2", "gcp:australia-southeast1"}),
    }
    assert len(selection.pairs) == 6


def test_band_drops_regions_without_a_pair():
    selection = select(CATALOG, SelectionSpec(min_km=1, max_km=1000))
    # Dublin-Frankfurt 1,088 km and Dublin-Saint-Ghislain 790 km: only the latter fits
    assert all(1 <= p.distance_km <= 1000 for p in selection.pairs)
    assert "aws:us-west-2" not in selection.keys  # nothing within 1000 km of Boardman
    assert set(selection.keys) == {k for p in selection.pairs for k in p.key}


def test_explicit_pairs_run_both_directions_unless_a_cloud_pair_narrows_them():
    spec = SelectionSpec(pairs=(("aws:us-east-1", "gcp:europe-west1"),))
    assert keys(select(CATALOG, spec)) == [
        ("aws:us-east-1", "gcp:europe-west1"),
        ("gcp:europe-west1", "aws:us-east-1"),
    ]
    narrowed = SelectionSpec(pairs=spec.pairs, cloud_pairs=(("gcp", "aws"),))
    assert keys(select(CATALOG, narrowed)) == [("gcp:europe-west1", "aws:us-east-1")]


def test_combined_filters():
    spec = SelectionSpec(
        clouds=("aws", "gcp"),
        exclude=("aws:af-south-1",),
        cloud_pairs=(("aws", "gcp"),),
        min_km=5000,
        max_km=10000,
    )
    selection = select(CATALOG, spec)
    assert selection.pairs
    for p in selection.pairs:
        assert p.cloud_pair == "aws-gcp"
        assert 5000 <= p.distance_km <= 10000
        assert "aws:af-south-1" not in p.key
    expected = [
        (a.key, b.key)
        for a, b in permutations(CATALOG.regions, 2)
        if a.cloud == "aws"
        and b.cloud == "gcp"
        and a.id != "af-south-1"
        and 5000 <= pair_distance_km(a, b) <= 10000
    ]
    assert keys(selection) == sorted(expected)


def test_spread_globe_is_farthest_point_sampling_from_us_east_1():
    # By hand (fixture distances): seed aws:us-east-1; gcp's farthest from Ashburn is
    # Sydney (15,673 km); aws's farthest from {Ashburn, Sydney} is Cape Town
    # (min 11,034 km, Tokyo only 7,792); gcp's farthest from those three is Tokyo
    # (min 7,792 km, Saint-Ghislain 6,233, Osasco 6,371).
    # (--opt-in: Cape Town is one; the sampling over every region is what is checked)
    selection = select(CATALOG, SelectionSpec(max_regions=4, spread="globe", opt_in=True))
    assert selection.keys == (
        "aws:us-east-1",
        "aws:af-south-1",
        "gcp:asia-northeast1",
        "gcp:australia-southeast1",
    )
    assert len(selection.pairs) == 12


def test_max_regions_is_deterministic_balanced_and_spread():
    for n, spread in ((n, spread) for n in range(2, 15) for spread in ("bands", "globe")):
        first = select(CATALOG, SelectionSpec(max_regions=n, spread=spread, opt_in=True))
        again = select(CATALOG, SelectionSpec(max_regions=n, spread=spread, opt_in=True))
        assert first == again
        assert len(first.regions) == n
        clouds = [r.cloud for r in first.regions]
        # even shares, until the fixture's 6 gcp regions run out
        assert min(clouds.count("aws"), clouds.count("gcp")) == min(n // 2, len(GCP))
    # spread: the closest two of the sample are farther apart than in the first 4
    sample = select(CATALOG, SelectionSpec(max_regions=4, spread="globe", opt_in=True)).regions
    first_four = CATALOG.regions[:4]

    def closest(regions):
        return min(pair_distance_km(a, b) for a, b in permutations(regions, 2))

    assert closest(sample) > 3 * closest(first_four)


def test_max_regions_applies_after_the_other_filters():
    selection = select(CATALOG, SelectionSpec(clouds=("gcp",), max_regions=3, no_opt_in=True))
    assert len(selection.regions) == 3
    assert all(r.cloud == "gcp" for r in selection.regions)
    # without aws, the seed falls back to gcp:us-central1
    assert "gcp:us-central1" in selection.keys


def test_farthest_point_sample_falls_back_to_the_medoid():
    regions = [r for r in CATALOG.regions if r.key not in ("aws:us-east-1", "gcp:us-central1")]
    medoid = min(regions, key=lambda r: sum(pair_distance_km(r, o) for o in regions))
    assert medoid in farthest_point_sample(regions, 3)


def test_more_regions_than_exist_keeps_all():
    assert len(select(CATALOG, SelectionSpec(max_regions=100, opt_in=True)).regions) == 14
    # without --opt-in, all but the fixture's opt-in region (af-south-1)
    assert len(select(CATALOG, SelectionSpec(max_regions=100)).regions) == 13


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (SelectionSpec(min_km=5000, max_km=1000), "--min-km 5000 is above --max-km 1000"),
        (SelectionSpec(min_km=-1), "--min-km -1 is negative"),
        (SelectionSpec(regions=("aws:us-east-9",)), "unknown region 'aws:us-east-9'"),
        (SelectionSpec(regions=("us-east-1",)), "has no cloud"),
        (SelectionSpec(exclude=("gcp:nowhere1",)), "unknown region 'gcp:nowhere1'"),
        (SelectionSpec(clouds=("azure",)), "--clouds 'azure': unknown cloud"),
        (SelectionSpec(clouds=()), "--clouds is empty"),
        (SelectionSpec(clouds=("aws",), cloud_pairs=(("aws", "gcp"),)), "needs gcp"),
        (SelectionSpec(clouds=("aws",), regions=("gcp:us-east4",)), "is a gcp region"),
        (
            SelectionSpec(regions=("aws:us-east-1",), exclude=("aws:us-east-1",)),
            "both in --regions and in --exclude",
        ),
        (SelectionSpec(regions=("aws:af-south-1",), no_opt_in=True), "is an opt-in region"),
        (SelectionSpec(pairs=(("aws:us-east-1", "aws:us-east-1"),)), "two different regions"),
        (
            SelectionSpec(pairs=(("aws:us-east-1", "gcp:us-east4"),), exclude=("gcp:us-east4",)),
            "which --exclude removes",
        ),
        (
            SelectionSpec(regions=("aws:us-east-1",), pairs=(("aws:us-east-1", "gcp:us-east4"),)),
            "not in --regions",
        ),
        (SelectionSpec(min_km=25000), "no pair is between 25000 and inf km"),
        (SelectionSpec(max_regions=1), "at least 2 regions"),
        (SelectionSpec(regions=("aws:us-east-1",)), "only aws:us-east-1 is selected"),
        (
            SelectionSpec(
                regions=("aws:us-east-1", "aws:eu-west-1"), cloud_pairs=(("aws", "gcp"),)
            ),
            "no pair of the selected regions is of cloud pair aws:gcp",
        ),
        (
            SelectionSpec(pairs=(("aws:us-east-1", "gcp:us-east4"),), min_km=1),
            "no pair is between 1 and inf km",
        ),
        (
            SelectionSpec(clouds=("aws",), exclude=tuple(AWS)),
            "no region is left after --clouds",
        ),
    ],
)
def test_contradictions_and_empty_results_are_one_line_errors(spec, message):
    with pytest.raises(UserError) as e:
        select(CATALOG, spec)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_unknown_region_suggests_the_closest_name():
    with pytest.raises(UserError, match="did you mean aws:us-east-1"):
        select(CATALOG, SelectionSpec(regions=("aws:us-east1",)))


def test_pair_filter_applies_the_selection_filters():
    spec = SelectionSpec(
        cloud_pairs=(("aws", "gcp"),), min_km=100, max_km=9000, exclude=("gcp:us-east4",)
    )
    keep = pair_filter(spec, CATALOG)
    assert keep("aws:us-east-1", "gcp:europe-west1", 6233)
    assert not keep("gcp:europe-west1", "aws:us-east-1", 6233)  # wrong direction
    assert not keep("aws:us-east-1", "gcp:europe-west1", 9001)  # outside the band
    assert not keep("aws:us-east-1", "gcp:europe-west1", None)  # unknown distance
    assert not keep("aws:eu-west-1", "gcp:us-east4", 5476)  # excluded
    assert not keep("aws:us-east-1", "aws:eu-west-1", 5476)  # aws-aws


def test_pair_filter_no_opt_in_and_regions_and_pairs():
    keep = pair_filter(SelectionSpec(no_opt_in=True), CATALOG)
    assert not keep("aws:af-south-1", "aws:us-east-1", 12743)
    assert keep("aws:eu-west-1", "aws:us-east-1", 5476)
    keep = pair_filter(SelectionSpec(regions=("aws:eu-west-1", "aws:us-east-1")))
    assert keep("aws:eu-west-1", "aws:us-east-1", None)
    assert not keep("aws:eu-west-1", "gcp:us-east4", None)
    keep = pair_filter(SelectionSpec(pairs=(("aws:eu-west-1", "aws:us-east-1"),)))
    assert keep("aws:us-east-1", "aws:eu-west-1", None)
    assert not keep("aws:us-east-1", "gcp:europe-west1", None)


def test_pair_is_labelled_by_its_cloud_pair():
    a, b = CATALOG.get("gcp:us-east4"), CATALOG.get("aws:eu-west-1")
    pair = Pair(a, b, pair_distance_km(a, b))
    assert pair.cloud_pair == "gcp-aws"
    assert pair.to_dict() == {
        "src": "gcp:us-east4",
        "dst": "aws:eu-west-1",
        "distance_km": round(pair.distance_km, 1),
        "cloud_pair": "gcp-aws",
    }


_ALL = [r.key for r in CATALOG.regions]


@settings(max_examples=150, deadline=None)
@given(
    clouds=st.sampled_from([("aws",), ("gcp",), ("aws", "gcp")]),
    exclude=st.lists(st.sampled_from(_ALL), max_size=4, unique=True),
    no_opt_in=st.booleans(),
    cloud_pairs=st.lists(
        st.sampled_from([("aws", "aws"), ("aws", "gcp"), ("gcp", "aws"), ("gcp", "gcp")]),
        max_size=3,
        unique=True,
    ),
    band=st.tuples(st.none() | st.floats(0, 12000), st.none() | st.floats(0, 20000)),
)
def test_select_keeps_exactly_the_pairs_the_pair_filter_keeps(
    clouds, exclude, no_opt_in, cloud_pairs, band
):
    cloud_pairs = [cp for cp in cloud_pairs if set(cp) <= set(clouds)]
    spec = SelectionSpec(
        clouds=clouds,
        exclude=tuple(exclude),
        no_opt_in=no_opt_in,
        cloud_pairs=tuple(cloud_pairs),
        min_km=band[0],
        max_km=band[1],
    )
    low = 0.0 if band[0] is None else band[0]
    high = math.inf if band[1] is None else band[1]  # 0.0 is a bound, not "none"
    keep = pair_filter(spec, CATALOG) if low <= high else None
    expected = sorted(
        (a.key, b.key)
        for a, b in permutations(CATALOG.regions, 2)
        if keep and keep(a.key, b.key, pair_distance_km(a, b))
    )
    if not expected:
        with pytest.raises(UserError):
            select(CATALOG, spec)
        return
    selection = select(CATALOG, spec)
    assert keys(selection) == expected
    assert set(selection.keys) == {k for p in expected for k in p}


def test_pairs_per_band_by_hand():
    assert [band_of(km) for km in (0.0, 999.9, 1000.0, 2999.0, 3000.0, 7999.9, 8000.0)] == [
        "<1000 km",
        "<1000 km",
        "1000-3000 km",
        "1000-3000 km",
        "3000-8000 km",
        "3000-8000 km",
        ">8000 km",
    ]
    a, b, c = CATALOG.regions[:3]
    pairs = [Pair(a, b, 500.0), Pair(b, a, 500.0), Pair(a, c, 9000.0)]
    assert pairs_per_band(pairs) == {
        "<1000 km": 2,
        "1000-3000 km": 0,
        "3000-8000 km": 0,
        ">8000 km": 1,
    }


def _bands_allowed(regions):
    return {band_of(pair_distance_km(a, b)) for a, b in permutations(regions, 2)}


@pytest.mark.parametrize("catalog", [CATALOG, load_catalog(paths.CATALOG)], ids=["fixture", "real"])
def test_max_regions_covers_every_distance_band_the_catalog_allows(catalog):
    everywhere = _bands_allowed(catalog.regions)
    for n in (6, 8, 12):
        selection = select(catalog, SelectionSpec(max_regions=n))
        covered = {band for band, k in pairs_per_band(selection.pairs).items() if k}
        assert covered == everywhere, n
        # still both clouds, in even shares
        clouds = [r.cloud for r in selection.regions]
        assert abs(clouds.count("aws") - clouds.count("gcp")) <= 1
    # farthest-point sampling alone leaves the short bands out on the real catalog
    if catalog is not CATALOG:
        globe = select(catalog, SelectionSpec(max_regions=8, spread="globe"))
        assert pairs_per_band(globe.pairs)["<1000 km"] == 0


def test_make_run_regions_have_pairs_in_every_band():
    text = (paths.ROOT / "Makefile").read_text()
    keys = ",".join(re.findall(r"^RUN_REGIONS := (?:\$\(RUN_REGIONS\),)?(.*)$", text, re.M))
    catalog = load_catalog(paths.CATALOG)
    selection = select(catalog, SelectionSpec(regions=tuple(keys.split(","))))
    assert len(selection.regions) == 8
    assert all(pairs_per_band(selection.pairs).values())


def test_spread_is_checked():
    with pytest.raises(UserError, match="--spread"):
        select(CATALOG, SelectionSpec(max_regions=4, spread="random"))


def test_max_regions_leaves_opt_in_regions_out_unless_asked_or_named():
    real = load_catalog(paths.CATALOG)
    opt_in = {r.key for r in real.regions if r.opt_in}
    assert len(opt_in) == 17
    for n in (4, 6, 8, 12, 24):
        chosen = set(select(real, SelectionSpec(max_regions=n)).keys)
        assert len(chosen) == n and not chosen & opt_in, (n, chosen & opt_in)
    # asked: at 6 the spread takes two of them (Dubai, Querétaro), as it did by default
    asked = set(select(real, SelectionSpec(max_regions=6, opt_in=True)).keys)
    assert asked & opt_in == {"aws:me-central-1", "aws:mx-central-1"}
    # named: an opt-in region --regions names may be chosen
    named = ("aws:me-central-1", "aws:us-east-1", "gcp:europe-west1", "gcp:asia-east1")
    chosen = set(select(real, SelectionSpec(regions=named, max_regions=4)).keys)
    assert chosen == set(named)
    with pytest.raises(UserError, match=r"--opt-in .* --no-opt-in"):
        select(real, SelectionSpec(max_regions=4, opt_in=True, no_opt_in=True))


def test_opt_in_is_a_chooser_a_report_and_a_matrix_refuse():
    from click.testing import CliRunner

    from orchestrator.cli import main

    for command in (["report", "--all"], ["matrix"]):
        out = CliRunner().invoke(main, [*command, "--opt-in"])
        assert out.exit_code == 2 and "--opt-in chooses regions for a sweep" in out.output
        listed = CliRunner().invoke(main, [*command, "--help"]).output
        for hidden in ("--max-regions", "--spread", "--opt-in"):
            assert hidden not in listed, (command, hidden)
