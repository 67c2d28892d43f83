"""Plan: time model, estimate by hand, JSON shape, pricing file, and the CLI."""

import json
import math

import pytest
import yaml
from click.testing import CliRunner
from fixture_regions import CATALOG_DATA, fixture_catalog

from orchestrator.cli import main
from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.model.backend_facts import BACKENDS, CLOUD_SETUP_S, LOCAL_MAX_CONCURRENT
from orchestrator.model.catalog import load_catalog, region_from_dict
from orchestrator.netmodel.routes import default_routes
from orchestrator.plan.ping_timing import LAUNCH_BASE_S, PER_HOST_S
from orchestrator.plan.pricing import PricingError, load_pricing, parse_pricing
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import (
    SLOT_MARGIN_S,
    TestParams,
    effective_max_concurrent,
    make_plan,
    round_overhead_s,
    slot_seconds,
    timing_of,
    window_bytes,
)
from orchestrator.results.schema import PING_PACKET_BYTES

CATALOG = fixture_catalog()
PRICING = load_pricing()
GIB_PER_GB = 1e9 / 2**30


def test_slot_seconds_is_pings_plus_both_directions_plus_margin():
    assert SLOT_MARGIN_S == 1.0
    assert slot_seconds(TestParams()) == pytest.approx(20 * 0.2 + 2 * (1 + 5) + 1)
    assert slot_seconds(TestParams(), directions=1) == pytest.approx(4 + 6 + 1)
    params = TestParams(pings=50, ping_interval_s=0.5, duration_s=10, omit_s=2)
    assert slot_seconds(params) == pytest.approx(25 + 24 + 1)


def test_slot_seconds_adds_the_last_ping_reply_and_iperf3_protocol_round_trips():
    # 100 ms RTT: +0.1 s for the last ping reply, +7 x 0.1 s per iperf3 direction
    assert slot_seconds(TestParams(), rtt_ms=100) == pytest.approx(4 + 0.1 + 2 * (6 + 0.7) + 1)
    assert slot_seconds(TestParams(), directions=1, rtt_ms=100) == pytest.approx(4 + 0.1 + 6.7 + 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pings": 0}, "--pings 0"),
        ({"ping_interval_s": 0}, "--ping-interval 0"),
        ({"duration_s": 0}, "--duration 0"),
        ({"omit_s": -1}, "--omit -1"),
        ({"duration_s": 2.5}, "--duration 2.5: iperf3 takes whole seconds"),
        ({"omit_s": 0.5}, "--omit 0.5: iperf3 takes whole seconds"),
        ({"duration_s": float("inf")}, "--duration inf: must be a finite number"),
        ({"omit_s": float("nan")}, "--omit nan: must be a finite number"),
        ({"ping_interval_s": float("nan")}, "--ping-interval nan: must be a finite number"),
        ({"ping_interval_s": float("inf")}, "--ping-interval inf: must be a finite number"),
        ({"duration_s": "5"}, "--duration '5': must be a number"),
        ({"streams": 0}, "--streams 0"),
        ({"streams": 129}, "1 to 128 streams"),
        ({"window": "lots"}, "--window 'lots'"),
        # ping's own limits (iputils: -i in ms fits an int), which keep the time model finite
        ({"ping_interval_s": 1e308}, "--ping-interval 1e\\+308: ping waits above 0 and up to"),
        ({"pings": 2**63}, "--pings 9223372036854775808: ping sends 1 to"),
        # iperf3's own limits (esnet/iperf src/iperf.h MAX_TIME, MAX_TCP_BUFFER; -O 0..60)
        ({"duration_s": 86_401}, "--duration 86401: iperf3 runs 1 to 86,400 s"),
        ({"omit_s": 61}, "--omit 61: iperf3 skips 0 to 60 s"),
        ({"window": "513M"}, "--window '513M': iperf3 takes above 0 and up to 512M"),
        ({"window": "536870913"}, "--window '536870913'"),
        ({"window": "1t"}, "--window '1t'"),
        ({"window": "0"}, "--window '0'"),
        ({"window": "4 M"}, "--window '4 M'"),
        ({"window": "4MB"}, "--window '4MB'"),
        ({"congestion": "Cubic!"}, "--congestion 'Cubic!'"),
    ],
)
def test_bad_test_params_are_one_line_errors(kwargs, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        TestParams(**kwargs)


@pytest.mark.parametrize(
    ("window", "size"),
    [("4m", 4 * 2**20), ("4M", 4 * 2**20), ("256k", 256 * 1024), ("1.5K", 1536), ("512M", 2**29),
     ("536870912", 2**29), ("0.5g", 2**29)],
)  # fmt: skip
def test_windows_iperf3_accepts_are_accepted_in_either_case(window, size):
    assert TestParams(window=window).window == window  # passed to iperf3 -w as written
    assert window_bytes(window) == size


def test_iperf3_limits_themselves_are_accepted():
    params = TestParams(duration_s=86_400, omit_s=60)
    assert (params.duration_s, params.omit_s) == (86_400, 60)


def test_whole_second_floats_become_ints_for_iperf3():
    params = TestParams(duration_s=10.0, omit_s=0.0)  # as an older plan file holds them
    assert params.duration_s == 10 and type(params.duration_s) is int
    assert params.omit_s == 0 and type(params.omit_s) is int


@pytest.mark.parametrize(
    ("backend", "max_concurrent", "sequential", "expected"),
    [
        ("local", None, False, LOCAL_MAX_CONCURRENT),
        ("local", 3, False, 3),
        ("local", None, True, None),
        ("aws", None, False, None),
        ("cloud", 5, False, 5),
        ("gcp", None, True, None),
    ],
)
def test_effective_max_concurrent(backend, max_concurrent, sequential, expected):
    assert effective_max_concurrent(backend, max_concurrent, sequential) == expected


def test_max_concurrent_with_sequential_is_an_error():
    with pytest.raises(UserError, match="give one"):
        effective_max_concurrent("aws", 2, True)


def test_local_plan_caps_rounds_like_a_local_sweep():
    plan = make_plan(CATALOG, SelectionSpec(), pricing=PRICING)
    assert plan.max_concurrent == LOCAL_MAX_CONCURRENT
    assert all(len(rnd) <= LOCAL_MAX_CONCURRENT for rnd in plan.rounds)
    cloud = make_plan(CATALOG, SelectionSpec(), backend="cloud", pricing=PRICING)
    assert cloud.max_concurrent is None


def expected_rtt_ms(pair):
    """By hand: the pair's median in the public data, else DEFAULT_MODEL's line."""
    measured = default_routes().get(pair.src.key, pair.dst.key)
    if measured is not None:
        return measured
    cross_ms = 1.38 if pair.src.cloud != pair.dst.cloud else 0.0
    return 1.49 + 16.50 * pair.distance_km / 1000 + cross_ms


def test_a_pair_with_a_measured_route_is_planned_at_its_measured_rtt():
    # Cape Town - Sydney goes round by Europe or Asia: 403 ms measured, 184 ms by distance
    spec = SelectionSpec(pairs=(("aws:af-south-1", "aws:ap-southeast-2"),))
    from orchestrator.plan.sweep_plan import pair_rtt_ms

    pair = make_plan(CATALOG, spec, pricing=PRICING).selection.pairs[0]
    assert pair_rtt_ms(pair) == pytest.approx(default_routes().get(pair.src.key, pair.dst.key))
    assert pair_rtt_ms(pair) > 1.5 * (1.49 + 16.50 * pair.distance_km / 1000)
    # a pair the data lacks (the fixture's all have one; the catalog's newest do not)
    lone_spec = SelectionSpec(pairs=(("aws:mx-central-1", "gcp:me-central2"),))
    lone = make_plan(load_catalog(paths.CATALOG), lone_spec, pricing=PRICING)
    assert default_routes().get("aws:mx-central-1", "gcp:me-central2") is None
    p = lone.selection.pairs[0]
    assert pair_rtt_ms(p) == pytest.approx(1.49 + 16.50 * p.distance_km / 1000 + 1.38)


def test_estimate_of_one_cross_cloud_pair_by_hand():
    spec = SelectionSpec(pairs=(("aws:us-east-1", "gcp:us-east4"),))
    plan = make_plan(CATALOG, spec, TestParams(), backend="cloud", pricing=PRICING)
    assert len(plan.rounds) == 1 == plan.lower_bound_rounds
    e = plan.estimate
    # same metro: RTT = 1.49 + 1.38 (cross-cloud) ms. The ping phase: each host probes its
    # one peer 20 times 0.2 s apart (19 gaps) + 1 s margin; then one round, iperf3 alone:
    # 2 x (1 + 5 s + 7 round trips) + 1 s margin with the controller's overhead. The
    # phase's playbook starts both agents, then waits for both (fewer than its forks)
    rtt_s = expected_rtt_ms(plan.selection.pairs[0]) / 1000
    phase = LAUNCH_BASE_S + 2 * PER_HOST_S + 19 * 0.2 + 1
    assert e.wall_s == pytest.approx(phase + 13 + 14 * rtt_s + round_overhead_s(2))
    # aws sends at most 5 Gbit/s, gcp 1 Gbit/s, for omit + duration = 6 s; plus 20 pings
    aws_bytes = 5e9 * 6 / 8 + 20 * PING_PACKET_BYTES
    gcp_bytes = 1e9 * 6 / 8 + 20 * PING_PACKET_BYTES
    assert e.bytes == pytest.approx(aws_bytes + gcp_bytes)
    assert e.bytes_by_cloud_pair == pytest.approx({"aws-gcp": aws_bytes, "gcp-aws": gcp_bytes})
    # cross-cloud is internet egress: AWS $0.09/GB, Google $0.12/GiB
    egress = aws_bytes / 1e9 * 0.09 + gcp_bytes / 1e9 * 0.12 * GIB_PER_GB
    assert e.egress_usd == pytest.approx(egress)
    hours = (e.wall_s + CLOUD_SETUP_S) / 3600
    vm = hours * ((0.0208 + 0.005 + 0.0009) + (0.016751 + 0.005 + 0.0014))
    assert e.vm_hours == pytest.approx(2 * hours)
    assert e.vm_usd == pytest.approx(vm)
    assert e.cost_usd == pytest.approx(egress + vm) == e.cloud_cost_usd


def test_capacity_tests_are_extra_rounds_in_the_estimate_by_hand():
    spec = SelectionSpec(pairs=(("aws:us-east-1", "gcp:us-east4"),))
    single = make_plan(CATALOG, spec, TestParams(), backend="cloud", pricing=PRICING)
    both = TestParams(measures=("capacity", "single_stream"))
    assert both.measures == ("single_stream", "capacity")  # always in that order
    plan = make_plan(CATALOG, spec, both, backend="cloud", pricing=PRICING)
    rtt_s = expected_rtt_ms(plan.selection.pairs[0]) / 1000
    # one more round of the same slot, no sentinels: 2 x (1 + 5 s + 7 round trips) + 1 s
    extra = 13 + 14 * rtt_s + round_overhead_s(2)
    assert plan.estimate.wall_s == pytest.approx(single.estimate.wall_s + extra)
    # a few ms: both measures send at the senders' caps for omit + duration = 6 s
    iperf3 = (5e9 + 1e9) * 6 / 8
    assert plan.estimate.bytes == pytest.approx(single.estimate.bytes + iperf3)
    doc = plan.to_json()
    assert set(doc["capacity_timings"]) == set(doc["timings"]) and len(doc["timings"]) == 2
    assert "once per measure (single_stream, capacity)" in plan.shape()


def test_a_capacity_tests_streams_ramp_to_their_share_of_the_bdp():
    # 250 ms at 968 Mbit/s: a BDP of 30.25 MB, 3.78 MB per stream of 8: longer than one
    # default stream's ramp to 2.53 MB, so the omit covers it
    capacity = timing_of(TestParams(), 250.0, "capacity")
    single = timing_of(TestParams(), 250.0)
    assert capacity.window_bytes == pytest.approx(968e6 * 0.25 / 8 / 8)
    assert capacity.ramp_s > single.ramp_s and capacity.omit_s >= math.ceil(capacity.ramp_s)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--streams", "4"], "--streams 4 sets the capacity measure's streams"),
        (["--measures", "bulk"], "--measures 'bulk': write single_stream, capacity"),
        (["--measures", ","], "--measures ','"),
    ],
)
def test_bad_measures_are_one_line_errors(catalog_file, args, said):
    result = run("plan", "--catalog", catalog_file, "--regions", "aws:us-east-1,gcp:us-east4",
                 *args)  # fmt: skip
    assert result.exit_code == 2 and said in result.output, result.output
    assert "Traceback" not in result.output


def test_an_old_records_params_measure_single_stream():
    old = {"pings": 20, "ping_interval_s": 0.2, "duration_s": 5, "omit_s": 1, "streams": 1,
           "window": None, "congestion": None, "tests": ["ping", "throughput"]}  # fmt: skip
    params = TestParams.from_dict(old)
    assert params.measures == ("single_stream",) and params.streams_of("single_stream") == 1


def test_local_backend_costs_nothing_but_shows_the_cloud_cost():
    spec = SelectionSpec(pairs=(("aws:us-east-1", "gcp:us-east4"),))
    local = make_plan(CATALOG, spec, pricing=PRICING)
    cloud = make_plan(CATALOG, spec, backend="cloud", pricing=PRICING)
    assert local.estimate.cost_usd == 0
    assert local.estimate.cloud_cost_usd == pytest.approx(cloud.estimate.cost_usd)
    assert local.estimate.setup_s == BACKENDS["local"].setup_s < cloud.estimate.setup_s
    assert local.to_json()["emulated"] is True


def test_wall_time_is_rounds_times_slowest_slot_plus_overhead():
    spec = SelectionSpec(clouds=("aws",))  # 8 regions, full mesh: 7 rounds
    plan = make_plan(CATALOG, spec, round_overhead=2.5, pricing=PRICING)
    assert len(plan.rounds) == 7 == plan.lower_bound_rounds
    # the ping phase: 8 agents started, each probes its 7 peers 20 times, 0.2/7 s apart,
    # + 1 s margin (its playbook's own overhead, not a round's)
    expected = LAUNCH_BASE_S + 8 * PER_HOST_S + (20 * 7 - 1) * 0.2 / 7 + 1

    # then each round lasts as long as its longest pair: both directions' omit (the
    # slow-start ramp at its RTT, at least 1 s) + 5 s, 1 s margin, + 2 x 7 RTTs of that pair
    def slot_s(rtt_ms: float) -> float:
        omit = timing_of(TestParams(), rtt_ms).omit_s
        return 2 * (omit + 5) + 1 + 14 * rtt_ms / 1000

    for rnd in plan.rounds:
        expected += slot_s(max(expected_rtt_ms(slot.pairs[0]) for slot in rnd)) + 2.5
    # then the sentinels: the first round's first two slots again, in a round of their own
    # (the last round of a full mesh of 8 has no free host)
    assert plan.sentinel_round and [s.regions for s in plan.sentinels] == [
        s.regions for s in plan.rounds[0][:2]
    ]
    expected += slot_s(max(expected_rtt_ms(slot.pairs[0]) for slot in plan.sentinels)) + 2.5
    assert plan.estimate.wall_s == pytest.approx(expected)
    one_way = make_plan(
        CATALOG, SelectionSpec(clouds=("aws",), cloud_pairs=(("aws", "aws"),)), pricing=PRICING
    )
    # a round's modelled overhead grows with its busy hosts (both ends of each slot)
    modelled = sum(round_overhead_s(2 * len(rnd)) - 2.5 for rnd in one_way.rounds)
    modelled += round_overhead_s(2 * len(one_way.sentinels)) - 2.5  # the sentinels' round
    assert one_way.estimate.wall_s == pytest.approx(plan.estimate.wall_s + modelled)


def test_round_overhead_grows_with_busy_hosts_and_the_controllers_distance():
    assert round_overhead_s(24) == pytest.approx(0.3 + 24 * 0.02)
    assert round_overhead_s(24, controller_rtt_ms=200) == pytest.approx(0.78 + 2 * 0.2)
    spec = SelectionSpec(clouds=("aws",))
    near = make_plan(CATALOG, spec, pricing=PRICING)
    far = make_plan(CATALOG, spec, pricing=PRICING, controller=CATALOG.get("aws:us-east-1"))
    # the farthest host by the measured routes the emulator delays controller traffic by
    others = [r.key for r in far.selection.regions if r.key != "aws:us-east-1"]
    rtt_ms = max(default_routes().get("aws:us-east-1", k) for k in others)
    assert far.controller_rtt_ms == pytest.approx(rtt_ms) and rtt_ms > 200
    # 7 rounds and the sentinels' round, each waiting 2 round trips for the farthest host;
    # the ping phase 3: two to start the last agent, one to collect it
    assert far.estimate.wall_s == pytest.approx(near.estimate.wall_s + 19 * rtt_ms / 1000)
    assert far.to_json()["controller"] == "aws:us-east-1"


@pytest.mark.parametrize(
    ("src", "dst", "usd_per_gb"),
    [
        ("aws:us-east-1", "aws:eu-west-1", 0.02),  # AWS inter-region, default
        ("aws:ap-southeast-2", "aws:ap-northeast-1", 0.098),  # Sydney's surcharge
        ("aws:sa-east-1", "gcp:southamerica-east1", 0.15),  # internet from Sao Paulo
        ("gcp:us-east4", "gcp:us-central1", 0.02 * GIB_PER_GB),  # same continent
        ("gcp:us-east4", "gcp:europe-west1", 0.05 * GIB_PER_GB),  # NA-Europe pair
        ("gcp:asia-northeast1", "gcp:australia-southeast1", 0.08 * GIB_PER_GB),
        ("gcp:europe-west1", "aws:eu-west-1", 0.12 * GIB_PER_GB),  # internet
    ],
)
def test_egress_price_by_source_and_destination_kind(src, dst, usd_per_gb):
    price = PRICING.egress_usd_per_gb(CATALOG.get(src), CATALOG.get(dst))
    assert price == pytest.approx(usd_per_gb)


def test_every_region_of_the_real_catalog_has_a_pricing_continent():
    catalog = load_catalog()
    for region in catalog.regions:
        PRICING.continent(region)  # raises on a missing country
    assert PRICING.as_of and set(PRICING.clouds) == {"aws", "gcp"}
    assert catalog.machine_types == {c: p.machine_type for c, p in PRICING.clouds.items()}


def _pricing_doc():
    return yaml.safe_load(paths.PRICING.read_text())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("as_of"), "missing 'as_of'"),
        (
            lambda d: d["clouds"]["aws"]["egress_usd"]["internet"].update(source="nowhere"),
            "source 'nowhere' is not under 'sources'",
        ),
        (
            lambda d: d["clouds"]["gcp"].update(instance_usd_per_hour={"value": -1}),
            "expected a number >= 0",
        ),
        (lambda d: d["clouds"]["gcp"].update(egress_unit="TB"), "egress_unit"),
        (lambda d: d["continents"]["asia"].append("US"), "country US is in two continents"),
        (
            lambda d: d["clouds"]["gcp"]["continent_egress_usd"].update(
                {"north_america-europe": {"value": 0.05, "source": "gcp_vpc_network"}}
            ),
            "alphabetical order",
        ),
        (lambda d: d["clouds"].pop("gcp"), "clouds: missing 'gcp'"),
    ],
)
def test_pricing_file_problems_are_named(edit, message):
    doc = _pricing_doc()
    edit(doc)
    with pytest.raises(PricingError, match=message):
        parse_pricing(doc, "pricing.yaml")


def test_missing_pricing_country_is_a_clear_error():
    doc = _pricing_doc()
    doc["continents"]["africa"].remove("ZA")
    pricing = parse_pricing(doc)
    with pytest.raises(UserError, match="country ZA has no continent"):
        pricing.continent(CATALOG.get("aws:af-south-1"))


def test_backend_must_host_every_region():
    with pytest.raises(UserError, match="--backend aws cannot host gcp:"):
        make_plan(CATALOG, SelectionSpec(), backend="aws", pricing=PRICING)
    plan = make_plan(CATALOG, SelectionSpec(clouds=("aws",)), backend="aws", pricing=PRICING)
    assert plan.estimate.cost_usd > 0
    with pytest.raises(UserError, match="--backend 'azure'"):
        make_plan(CATALOG, SelectionSpec(), backend="azure", pricing=PRICING)


def test_json_shape():
    plan = make_plan(CATALOG, SelectionSpec(max_regions=6), max_concurrent=2, pricing=PRICING)
    doc = json.loads(json.dumps(plan.to_json()))
    for key in ("regions", "pairs", "rounds", "lower_bound_rounds", "estimate", "params"):
        assert key in doc
    assert {"wall_s", "bytes", "cost_usd", "cloud_cost_usd", "vm_hours"} <= set(doc["estimate"])
    assert len(doc["regions"]) == 6 and len(doc["pairs"]) == 30
    assert set(doc["pairs"][0]) >= {"src", "dst", "distance_km"}
    in_rounds = sorted((p["src"], p["dst"]) for rnd in doc["rounds"] for p in rnd)
    assert in_rounds == sorted((p["src"], p["dst"]) for p in doc["pairs"])
    assert all(len(slots) <= 2 for slots in doc["round_slots"])
    assert doc["lower_bound_rounds"] == 8 == len(doc["rounds"])  # ceil(15 slots / 2)


def test_json_regions_rebuild_the_selected_regions_with_their_zones():
    plan = make_plan(CATALOG, SelectionSpec(clouds=("gcp",)), pricing=PRICING)
    doc = json.loads(json.dumps(plan.to_json()))
    rebuilt = [region_from_dict(r) for r in doc["regions"]]
    assert rebuilt == list(plan.selection.regions)
    assert all(r.zone.startswith(r.id + "-") for r in rebuilt)
    assert [r["key"] for r in doc["regions"]] == [r.key for r in rebuilt]


# --- the CLI ----------------------------------------------------------------


@pytest.fixture
def catalog_file(tmp_path):
    path = tmp_path / "regions.yaml"
    path.write_text(yaml.safe_dump(CATALOG_DATA))
    return str(path)


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_plan_json(catalog_file):
    result = run("plan", "--catalog", catalog_file, "--cloud-pair", "aws:gcp", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert len(doc["pairs"]) == 48
    assert {(p["src"].split(":")[0], p["dst"].split(":")[0]) for p in doc["pairs"]} == {
        ("aws", "gcp")
    }
    assert doc["lower_bound_rounds"] == 8 == len(doc["rounds"])  # bipartite 8 x 6: Δ = 8


def test_plan_table(catalog_file):
    result = run(
        "plan", "--catalog", catalog_file, "--regions", "aws:us-east-1,gcp:europe-west1",
        "--pings", "10", "--duration", "2",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 regions" in result.output and "2 directed pairs" in result.output
    assert "a ping phase, then 1 round (lower bound 1)" in result.output
    assert "6,233" in result.output  # Ashburn - Saint-Ghislain km
    assert "emulated cloud" in result.output
    latency = run(
        "plan", "--catalog", catalog_file, "--regions", "aws:us-east-1,gcp:europe-west1",
        "--tests", "ping",
    )  # fmt: skip
    assert latency.exit_code == 0, latency.output
    assert "one ping phase (latency only: no exclusive rounds)" in latency.output


def test_plan_options_reach_the_plan(catalog_file):
    result = run(
        "plan", "--catalog", catalog_file, "--clouds", "gcp", "--exclude", "gcp:us-east4",
        "--min-km", "1000", "--max-km", "12000", "--max-regions", "4", "--streams", "4",
        "--window", "4m", "--congestion", "cubic", "--omit", "0", "--ping-interval", "0.5",
        "--sequential", "--tests", "ping", "--measures", "capacity", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["params"] == {
        "measures": ["capacity"],
        "pings": 20,
        "ping_interval_s": 0.5,
        "duration_s": 5,
        "omit_s": 0,
        "streams": 4,
        "window": "4m",
        "congestion": "cubic",
        "tests": ["ping"],
    }
    assert all(r["cloud"] == "gcp" and r["key"] != "gcp:us-east4" for r in doc["regions"])
    assert len(doc["regions"]) <= 4
    assert all(1000 <= p["distance_km"] <= 12000 for p in doc["pairs"])
    assert all(len(slots) == 1 for slots in doc["round_slots"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cloud-pair", "aws-gcp"], "--cloud-pair 'aws-gcp': write it as SRC:DST, e.g. aws:gcp"),
        (["--cloud-pair", "aws:azure"], "unknown cloud 'azure'"),
        (["--pairs", "aws:us-east-1-gcp:us-east4"], "write each pair as cloud:region/"),
        (["--min-km", "5000", "--max-km", "10"], "--min-km 5000 is above --max-km 10"),
        (["--regions", "aws:mars-1"], "unknown region 'aws:mars-1'"),
        (["--clouds", "aws,azure"], "--clouds 'azure': unknown cloud"),
        (["--max-concurrent", "0"], "'--max-concurrent': 0 is not in the range 1<=x<=1000000"),
        (["--max-concurrent", "2", "--sequential"], "give one"),
        (["--streams", "0"], "--streams 0"),
        (["--duration", "86401"], "--duration 86401: iperf3 runs 1 to 86,400 s"),
        (["--round-overhead", "nan"], "'nan' is not a finite number"),
        (["--round-overhead", "-1"], "--round-overhead -1: give 0 to 86,400 seconds"),
        (["--omit", "61"], "--omit 61: iperf3 skips 0 to 60 s"),
        (["--window", "600M"], "--window '600M': iperf3 takes above 0 and up to 512M"),
        (["--min-km", "30000"], "no pair is between 30000"),
    ],
)
def test_plan_errors_are_one_line(catalog_file, args, message):
    result = run("plan", "--catalog", catalog_file, *args)
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert message in result.output
    assert result.output.count("\n") == 1
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("option", "value"), [("--duration", "2.5"), ("--omit", "0.5")])
def test_fractional_iperf3_seconds_are_refused(catalog_file, option, value):
    result = run("plan", "--catalog", catalog_file, option, value)
    assert result.exit_code == 2
    assert f"Invalid value for '{option}'" in result.output and "Traceback" not in result.output


def test_plan_with_a_missing_catalog(tmp_path):
    result = run("plan", "--catalog", str(tmp_path / "none.yaml"))
    assert result.exit_code == 2 and "catalog file not found" in result.output


def test_regions_lists_the_catalog(catalog_file):
    result = run("regions", "--catalog", catalog_file, "--cloud", "gcp", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["data"]  # in the interregion/v1 envelope
    assert [r["key"] for r in rows] == [r.key for r in CATALOG.regions if r.cloud == "gcp"]
    assert rows[0]["zone"] and rows[0]["machine_type"] == "e2-small"
    table = run("regions", "--catalog", catalog_file)
    assert table.exit_code == 0 and "14 regions" in table.output and "Cape Town" in table.output
    bad = run("regions", "--catalog", catalog_file, "--cloud", "azure")
    assert bad.exit_code == 2 and "--cloud 'azure': unknown cloud" in bad.output


def test_plan_on_the_real_catalog_default_sample():
    result = run("plan", "--max-regions", "8", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    clouds = [r["cloud"] for r in doc["regions"]]
    assert clouds.count("aws") == clouds.count("gcp") == 4
    assert len(doc["rounds"]) == 7  # full mesh of 8: n - 1


def test_estimate_of_a_long_pair_is_window_limited():
    spec = SelectionSpec(pairs=(("aws:us-east-1", "aws:ap-southeast-2"),))
    plan = make_plan(CATALOG, spec, TestParams(), backend="aws", pricing=PRICING)
    rtt_s = expected_rtt_ms(plan.selection.pairs[0]) / 1000
    rate_bps = 2_534_000 * 8 / rtt_s  # a real small VM's window over that RTT, < 5 Gbit/s
    # omit + 5 s, the omit being slow start to that window: 7.45 RTTs of ~200 ms, so 2 s
    seconds = timing_of(TestParams(), rtt_s * 1000).omit_s + 5
    assert seconds == 7
    one_direction = rate_bps * seconds / 8 + 20 * PING_PACKET_BYTES
    assert rate_bps < 1e9
    assert plan.estimate.bytes == pytest.approx(2 * one_direction, rel=1e-6)


def test_local_estimate_counts_emulated_bytes_but_prices_the_cloud():
    spec = SelectionSpec(pairs=(("aws:us-east-1", "aws:ap-southeast-2"),))
    local = make_plan(CATALOG, spec, TestParams(), backend="local", pricing=PRICING).estimate
    cloud = make_plan(CATALOG, spec, TestParams(), backend="aws", pricing=PRICING).estimate
    assert local.cost_usd == 0
    assert local.bytes < cloud.bytes / 10  # the emulator runs at about 1/19 of a real VM
    assert local.egress_usd == pytest.approx(cloud.egress_usd)


def test_the_plan_says_its_sentinel_round_and_the_retrys_bound_and_why():
    spec = SelectionSpec(clouds=("aws",))  # 8 regions, full mesh: 7 rounds + 1 sentinel round
    plan = make_plan(CATALOG, spec, pricing=PRICING)
    # the failed tests' schedule: at most Δ + 1 = 8 rounds, Δ = 7 (each region's peers)
    assert plan.retry_rounds == 8 and plan.to_json()["retry_rounds_max"] == 8
    assert plan.shape() == (
        "a ping phase, then 7 rounds (lower bound 7) + 1 sentinel round, "
        "+ up to 8 retry rounds if tests fail"
    )
    sentinels, retries = plan.extra_rounds()
    first = " <> ".join(plan.rounds[0][0].regions)
    assert sentinels.startswith("sentinels: 2 slots of round 1 (") and first in sentinels
    assert "in one more round" in sentinels
    assert retries.startswith("retries: a test without an ok result") and "at most 8" in retries
    # two measures: the retry can take the bound once per measure
    both = make_plan(
        CATALOG, spec, TestParams(measures=("single_stream", "capacity")), pricing=PRICING
    )
    assert "+ up to 16 retry rounds" in both.shape()
    # one slot per round: the failed tests take at most the sweep's own rounds
    one = make_plan(CATALOG, SelectionSpec(clouds=("aws",)), sequential=True, pricing=PRICING)
    assert one.retry_rounds == len(one.rounds) == 28
    latency = make_plan(CATALOG, spec, TestParams(tests=("ping",)), pricing=PRICING)
    assert "+ one more for the tests that fail" in latency.shape()
    assert (
        latency.extra_rounds()[0].startswith("retries:")
        and "ping phase" in latency.extra_rounds()[0]
    )


def test_plans_table_shows_the_sentinel_round_and_the_rules(catalog_file):
    out = CliRunner().invoke(main, ["plan", "--clouds", "aws", "--catalog", str(catalog_file)])
    assert out.exit_code == 0, out.output
    assert "(sentinels, again)" in out.output and "retries: a test without" in out.output
