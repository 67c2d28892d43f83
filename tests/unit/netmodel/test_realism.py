"""The emulated history's realism, pure parts: route detours from the public data,
seeded run-to-run variation, perturbations (parsing, effects, delayd table, tc), the
sweep record's emulation settings and the demo's check."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.core.geo import distance_km
from orchestrator.demo import DemoPlan, check_changes, prepare_out
from orchestrator.drivers.keys import SweepKeys
from orchestrator.emulator import delay, perturb, shaping
from orchestrator.emulator.perturb import Perturbation
from orchestrator.emulator.spec import EmulationSpec
from orchestrator.emulator.stack import (
    BASELINE_RTT_MS,
    EmulationSettings,
    build_spec,
    expected_rtts_ms,
    injected_effects,
)
from orchestrator.emulator.variation import (
    DEFAULT_VARIATION,
    NO_VARIATION,
    draw_pair,
    seed_for,
)
from orchestrator.history.changes import Params
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel import routes
from orchestrator.netmodel.model import DEFAULT_MODEL, Sample

KEYS = SweepKeys(
    Path("/k/client"), "ssh-ed25519 AAAAclient c", Path("/k/host"), "ssh-ed25519 AAAAhost h"
)
CATALOG = load_catalog()
R4 = [CATALOG.get(k) for k in ("aws:us-east-1", "gcp:europe-west1", "aws:ap-southeast-2",
                               "aws:af-south-1")]  # fmt: skip


def sample(source: str, src: str, dst: str, rtt_ms: float) -> Sample:
    return Sample(source, src, dst, 1000.0, rtt_ms)


# ------------------------------------------------------------------ routes


def test_median_rtts_pool_both_directions_and_skip_same_region_pairs():
    samples = [
        sample("skyplane", "aws:a", "aws:b", 10.0),
        sample("skyplane", "aws:b", "aws:a", 12.0),
        sample("skyplane", "aws:b", "aws:a", 30.0),
        sample("skyplane", "aws:a", "aws:a", 1.0),
        sample("doit", "aws:a", "aws:b", 99.0),
    ]
    assert routes.median_rtts(samples, "skyplane") == {("aws:a", "aws:b"): 12.0}
    assert routes.median_rtts(samples) == {("aws:a", "aws:b"): 21.0}  # all four pooled


def test_route_table_takes_each_pair_from_the_first_source_that_has_it():
    samples = [
        sample("doit", "aws:a", "aws:b", 50.0),
        sample("skyplane", "aws:b", "aws:a", 40.0),
        sample("doit", "aws:a", "gcp:c", 70.0),
    ]
    table = routes.route_table(samples)
    assert table.get("aws:b", "aws:a") == 40.0 and table.source_of[("aws:a", "aws:b")] == "skyplane"
    assert table.get("gcp:c", "aws:a") == 70.0 and table.source_of[("aws:a", "gcp:c")] == "doit"
    assert table.get("aws:a", "gcp:zz") is None
    assert routes.route_table(samples, ("doit",)).get("aws:a", "aws:b") == 50.0


def test_pair_rtt_follows_the_measured_route_else_the_distance_model():
    a, b = CATALOG.get("aws:af-south-1"), CATALOG.get("aws:ap-southeast-2")
    table = routes.RouteTable({routes.pair_key(a.key, b.key): 401.0}, {})
    assert routes.pair_rtt_ms(a, b, routes=table) == 401.0
    km = distance_km(a.lat, a.lon, b.lat, b.lon)
    assert routes.pair_rtt_ms(a, b) == DEFAULT_MODEL.rtt_ms(km, cross_cloud=False)


def test_pearson_r_known_answers():
    assert routes.pearson_r([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert routes.pearson_r([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # by hand: both means 2.5, sxy = 2.25 - 0.25 - 0.25 + 2.25 = 4, sxx = syy = 5
    assert routes.pearson_r([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert math.isnan(routes.pearson_r([1, 1], [1, 2]))  # a flat series
    assert math.isnan(routes.pearson_r([1], [1]))  # one point: undefined, as in the report
    with pytest.raises(ValueError):
        routes.pearson_r([1, 2], [1])


def test_the_public_routes_give_cape_town_to_sydney_its_real_detour():
    table = routes.default_routes()
    cape, sydney = CATALOG.get("aws:af-south-1"), CATALOG.get("aws:ap-southeast-2")
    measured = table.get(cape.key, sydney.key)
    km = distance_km(cape.lat, cape.lon, sydney.lat, sydney.lon)
    # the distance model says ~180 ms; the real route goes round by Asia or Europe
    assert measured is not None and measured > 1.8 * DEFAULT_MODEL.rtt_ms(km, False)
    assert len(table) > 1000


def test_the_emulated_matrix_no_longer_follows_distance_exactly():
    """r(RTT, distance) over every catalog pair: 1.000 with the distance model alone;
    with the measured routes it comes near the real data's."""
    regions = CATALOG.regions
    pairs = [(a, b) for i, a in enumerate(regions) for b in regions[i + 1 :]]
    km = [distance_km(a.lat, a.lon, b.lat, b.lon) for a, b in pairs]
    plain = [routes.pair_rtt_ms(a, b) for a, b in pairs]
    routed = [routes.pair_rtt_ms(a, b, routes=routes.default_routes()) for a, b in pairs]
    assert routes.pearson_r(km, plain) > 0.999
    assert 0.80 < routes.pearson_r(km, routed) < 0.96


# --------------------------------------------------------------- variation


def test_same_seed_same_draws_and_another_seed_other_draws():
    first = [draw_pair(7, a.key, b.key) for a in R4 for b in R4 if a.key < b.key]
    again = [draw_pair(7, a.key, b.key) for a in R4 for b in R4 if a.key < b.key]
    other = [draw_pair(8, a.key, b.key) for a in R4 for b in R4 if a.key < b.key]
    assert first == again
    assert first != other
    assert draw_pair(7, "aws:x", "gcp:y") == draw_pair(7, "gcp:y", "aws:x")  # unordered


def test_variation_is_small_heavy_tailed_and_clipped_with_rare_loss_episodes():
    draws = [draw_pair(s, "aws:a", "gcp:b") for s in range(4000)]
    rel = [abs(d.delay_factor - 1.0) for d in draws]
    assert statistics.median(rel) == pytest.approx(DEFAULT_VARIATION.delay_rel_median, rel=0.1)
    assert max(rel) <= DEFAULT_VARIATION.delay_rel_max + 1e-12
    # heavier than normal: a normal with this median |e| exceeds 4 x it in 1 in 10^4 draws
    assert sum(r > 4 * DEFAULT_VARIATION.delay_rel_median for r in rel) > 20
    lossy = [d.loss_pct for d in draws if d.loss_pct]
    assert 0.01 < len(lossy) / len(draws) < 0.03
    assert all(0.5 <= x <= 3.0 for x in lossy)
    assert {draw_pair(s, "a", "b", NO_VARIATION).delay_factor for s in range(50)} == {1.0}


def test_seed_for_a_sweep_id_is_stable():
    assert seed_for("20261123T1649Z-bc67") == seed_for("20261123T1649Z-bc67")
    assert seed_for("20261123T1649Z-bc67") != seed_for("20261123T1649Z-bc68")


def spec(seed: int = 1, perturbations=(), regions=R4) -> EmulationSpec:
    return build_spec(
        "abc", "198.18.7.0/24", regions, KEYS, DEFAULT_MODEL,
        routes=routes.default_routes(), seed=seed, variation=DEFAULT_VARIATION,
        perturbations=perturbations,
    )  # fmt: skip


def test_build_spec_records_the_seed_and_same_seed_gives_the_same_emulation():
    a, b, c = spec(11), spec(11), spec(12)
    assert a.seed == 11 and a.paths == b.paths
    assert a.paths != c.paths
    # a pair's draws do not depend on the other regions selected
    small = spec(11, regions=R4[:2])
    assert small.paths[0] == next(p for p in a.paths if (p.src, p.dst) == (R4[0].key, R4[1].key))


def test_build_spec_rtts_follow_routes_within_the_variation():
    s = spec(5)
    rtts = expected_rtts_ms(s)
    table = routes.default_routes()
    cape, sydney = "aws:af-south-1", "aws:ap-southeast-2"
    measured = table.get(cape, sydney)
    assert measured is not None
    assert rtts[(cape, sydney)] == pytest.approx(measured, rel=DEFAULT_VARIATION.delay_rel_max)
    assert rtts[(cape, sydney)] == rtts[(sydney, cape)]
    # both directions of a pair carry the same drawn factor
    for p in s.paths:
        twin = next(q for q in s.paths if (q.src, q.dst) == (p.dst, p.src))
        assert p.delay_us == twin.delay_us and p.loss_ppm == twin.loss_ppm


def test_without_variation_and_routes_build_spec_is_the_distance_model_as_before():
    s = build_spec("abc", "198.18.7.0/24", R4[:2], KEYS, DEFAULT_MODEL)
    a, b = R4[0], R4[1]
    km = distance_km(a.lat, a.lon, b.lat, b.lon)
    assert s.paths[0].delay_us == DEFAULT_MODEL.one_way_delay_us(km, True, BASELINE_RTT_MS)
    assert s.seed == 0 and s.perturbations == ()


# ------------------------------------------------------------ perturbations


def test_parse_targets_and_amounts():
    p = perturb.parse("aws:us-east-1/gcp:europe-west1,delay_ms=10,loss_pct=0.5")
    assert p == Perturbation("aws:us-east-1/gcp:europe-west1", delay_ms=10.0, loss_pct=0.5)
    assert perturb.ends(p.target) == ("aws:us-east-1", "gcp:europe-west1", True)
    assert perturb.ends("aws:a>gcp:b") == ("aws:a", "gcp:b", False)
    assert perturb.ends("aws:a") == ("aws:a", "", True)
    assert perturb.parse(p.text) == p
    assert perturb.parse(" aws:a , rate_mbit=5 ").rate_mbit == 5.0


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("aws:a/gcp:b", "sets nothing"),
        ("aws:a/gcp:b,delay=10", "is not one of"),
        ("aws:a/gcp:b,delay_ms=ten", "is not a number"),
        ("aws:a/gcp:b,delay_ms=-1", "outside"),
        ("aws:a/gcp:b,loss_pct=101", "outside"),
        ("aws:a/gcp:b,rate_mbit=-3", "negative"),
        ("aws:a/gcp:b,delay_ms=0", "changes nothing"),
        ("aws:a/aws:a,delay_ms=1", "is not A/B"),
        ("aws:a/,delay_ms=1", "is not A/B"),
        ("useast,delay_ms=1", "is not A/B"),
        ("aws:a/gcp:b/gcp:c,delay_ms=1", "is not A/B"),
    ],
)
def test_bad_perturbations_are_one_line_errors(text, fragment):
    with pytest.raises(UserError) as e:
        perturb.parse(text)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_perturbation_files(tmp_path):
    good = tmp_path / "p.yaml"
    good.write_text(
        "perturbations:\n  - target: aws:a/gcp:b\n    delay_ms: 10\n  - target: aws:a\n"
        "    rate_mbit: 5\n"
    )
    assert perturb.load_file(good) == (
        Perturbation("aws:a/gcp:b", delay_ms=10.0),
        Perturbation("aws:a", rate_mbit=5.0),
    )
    for text, fragment in [
        ("- target: aws:a\n  jitter_ms: 3\n", "unknown key jitter_ms"),
        ("- aws:a\n", "expected a mapping"),
        ("target: aws:a\n", "expected a list"),
        ("- target: aws:a\n  delay_ms: [1]\n", "must be numbers"),
        ("- {target: aws:a\n", "not valid YAML"),
    ]:
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        with pytest.raises(UserError) as e:
            perturb.load_file(bad)
        assert fragment in str(e.value) and "\n" not in str(e.value), text
    with pytest.raises(UserError, match="not found"):
        perturb.load_file(tmp_path / "missing.yaml")


def test_effects_sum_delays_combine_losses_and_keep_the_lowest_pair_cap():
    hosts = ["aws:a", "gcp:b", "gcp:c"]
    found = perturb.effects(
        [
            Perturbation("aws:a/gcp:b", delay_ms=10.0, loss_pct=10.0),
            Perturbation("aws:a>gcp:b", delay_ms=2.5, loss_pct=10.0, rate_mbit=20.0),
            Perturbation("aws:a/gcp:b", rate_mbit=8.0),
            Perturbation("gcp:c", delay_ms=1.0, rate_mbit=3.0),
        ],
        hosts,
    )
    assert found[("aws:a", "gcp:b")] == perturb.Effect(12_500, 190_000, 8.0)
    assert found[("gcp:b", "aws:a")] == perturb.Effect(10_000, 100_000, 8.0)
    # a host perturbation touches every path to and from it; its cap is the host's own
    assert found[("gcp:c", "aws:a")] == perturb.Effect(1_000, 0, 0.0)
    assert found[("gcp:b", "gcp:c")] == perturb.Effect(1_000, 0, 0.0)
    assert set(found) == {("aws:a", "gcp:b"), ("gcp:b", "aws:a")} | {
        (x, y) for x in hosts for y in hosts if x != y and "gcp:c" in (x, y)
    }
    assert perturb.host_caps([Perturbation("gcp:c", rate_mbit=3.0),
                              Perturbation("gcp:c", rate_mbit=9.0)]) == {"gcp:c": 3.0}  # fmt: skip


def test_a_perturbation_naming_a_host_the_emulation_lacks_is_refused():
    with pytest.raises(UserError, match="aws:eu-west-9 is not a host of this emulation"):
        spec(perturbations=[Perturbation("aws:us-east-1/aws:eu-west-9", delay_ms=1.0)])


def test_the_delay_table_adds_perturbations_and_the_spec_round_trips(tmp_path):
    p = Perturbation("aws:us-east-1>gcp:europe-west1", delay_ms=10.0, loss_pct=2.0)
    plain, perturbed = spec(3), spec(3, [p])
    assert plain.paths == perturbed.paths  # the spec keeps the base; `up` applies them
    before, after = expected_rtts_ms(plain), expected_rtts_ms(perturbed)
    for pair, rtt in before.items():
        added = 10.0 if set(pair) == {"aws:us-east-1", "gcp:europe-west1"} else 0.0
        assert after[pair] == pytest.approx(rtt + added)
    text = delay.table(perturbed)
    assert "# perturbation aws:us-east-1>gcp:europe-west1,delay_ms=10,loss_pct=2" in text
    assert "(seed 3)" in text
    a, b = perturbed.hosts[0].address, perturbed.hosts[1].address
    line = next(x for x in text.splitlines() if x.startswith(f"{a} {b} "))
    base = next(q for q in plain.paths if (q.src, q.dst) == (R4[0].key, R4[1].key))
    assert line.split()[2:] == [str(base.delay_us + 10_000), str(base.jitter_us),
                                str(perturb.combined_loss_ppm(base.loss_ppm, 20_000))]  # fmt: skip
    path = tmp_path / "spec.json"
    path.write_text(perturbed.to_json())
    assert EmulationSpec.load(path) == perturbed


def test_rate_caps_become_htb_classes():
    host_cap = Perturbation("gcp:europe-west1", rate_mbit=10.0)
    pair_cap = Perturbation("aws:us-east-1>aws:ap-southeast-2", rate_mbit=5.0)
    batch = shaping.tc_batch(spec(1, [host_cap, pair_cap]))
    rate10 = f"{shaping.htb_rate_kbit(10.0)}kbit"
    rate50 = f"{shaping.htb_rate_kbit(50.0)}kbit"
    # host 2 (gcp:europe-west1): its own class at 10 Mbit/s both ways; the others at 50
    assert f"class add dev p2 parent 1: classid 1:10 htb rate {rate10}" in batch
    assert f"class add dev q2 parent 1: classid 1:10 htb rate {rate10}" in batch
    assert f"class add dev p1 parent 1: classid 1:10 htb rate {rate50}" in batch
    # host 1's egress to host 3 (198.18.7.12) has a class of its own at 5 Mbit/s
    rate5 = f"{shaping.htb_rate_kbit(5.0)}kbit"
    assert f"class add dev q1 parent 1: classid 1:1002 htb rate {rate5}" in batch
    assert "filter add dev q1 parent 1: protocol ip prio 2 u32 match ip dst 198.18.7.12/32 " \
        "flowid 1:1002" in batch  # fmt: skip
    assert "dev q3 parent 1: classid 1:10" in batch and "1:1002" not in batch.split("q2")[-1]
    # no model rate and no caps: no shaping at all, as before
    uncapped = build_spec("abc", "198.18.7.0/24", R4, KEYS, DEFAULT_MODEL)
    from dataclasses import replace

    assert shaping.tc_batch(replace(uncapped, rate_mbit=0.0)) == ""


# ----------------------------------------------------------- sweep record


def test_emulation_settings_from_the_sweep_record():
    settings = EmulationSettings.of_record(
        {"seed": 4, "perturbations": [{"target": "aws:a/gcp:b", "delay_ms": 10}]}, "s1"
    )
    assert settings == EmulationSettings(4, (Perturbation("aws:a/gcp:b", delay_ms=10.0),))
    assert EmulationSettings.of_record(settings.to_record(), "s1") == settings
    assert EmulationSettings.of_record(None, "s1").seed == seed_for("s1")
    with pytest.raises(UserError, match="not an integer"):
        EmulationSettings.of_record({"seed": "x"}, "s1")


def test_what_an_emulation_injects_is_its_loss_episodes_and_perturbations():
    regions = ["aws:us-east-1", "gcp:europe-west1", "aws:ap-southeast-2", "gcp:us-east4",
               "aws:sa-east-1", "aws:af-south-1", "gcp:asia-southeast1"]  # fmt: skip
    # a seed under which some of the 21 pairs draw a loss episode (2 % each)
    seed = next(s for s in range(1000) if any(
        draw_pair(s, a, b).loss_pct for a in regions for b in regions if a < b))  # fmt: skip
    perturbation = Perturbation("aws:us-east-1/gcp:europe-west1", delay_ms=10.0)
    got = injected_effects(seed, regions, (perturbation,))
    episodes = [e for e in got if e["cause"] == "loss episode"]
    assert episodes and all(0.5 <= e["loss_pct"] <= 3.0 for e in episodes)
    for e in episodes:
        a, b = e["target"].split("/")
        assert a < b and draw_pair(seed, a, b).loss_pct == pytest.approx(e["loss_pct"], abs=1e-4)
    assert got[-1] == {"target": "aws:us-east-1/gcp:europe-west1", "delay_ms": 10.0,
                       "cause": "perturbation"}  # fmt: skip
    # every pair without an episode is left out: its delay draw is run-to-run noise
    drawn = sum(1 for a in regions for b in regions if a < b and draw_pair(seed, a, b).loss_pct)
    assert len(episodes) == drawn
    assert EmulationSettings(seed).to_record(regions)["injected"] == episodes


def test_sweep_plan_only_records_the_seed_and_perturbations(tmp_path):
    args = ["sweep", "--regions", "aws:us-east-1,gcp:europe-west1", "--plan-only",
            "--results", str(tmp_path)]  # fmt: skip
    result = CliRunner().invoke(
        main,
        [*args, "--emulation-seed", "42", "--perturb", "aws:us-east-1/gcp:europe-west1,delay_ms=7"],
    )
    assert result.exit_code == 0, result.output
    sweep_id = result.stdout.strip().splitlines()[-1]
    record = json.loads((tmp_path / sweep_id / "sweep.json").read_text())
    pair = ("aws:us-east-1", "gcp:europe-west1")
    loss = round(draw_pair(42, *pair).loss_pct, 4)
    episode = [{"target": "/".join(sorted(pair)), "loss_pct": loss, "cause": "loss episode"}]
    assert record["emulation"] == {
        "seed": 42,
        "perturbations": [{"target": "aws:us-east-1/gcp:europe-west1", "delay_ms": 7.0}],
        "injected": [
            *(episode if loss else []),
            {"target": "aws:us-east-1/gcp:europe-west1", "delay_ms": 7.0, "cause": "perturbation"},
        ],
    }
    # without options: the seed derived from the sweep id, recorded
    result = CliRunner().invoke(main, args)
    sweep_id = result.stdout.strip().splitlines()[-1]
    record = json.loads((tmp_path / sweep_id / "sweep.json").read_text())
    seed = seed_for(sweep_id)
    assert record["emulation"]["seed"] == seed and record["emulation"]["perturbations"] == []
    assert len(record["emulation"]["injected"]) == (1 if draw_pair(seed, *pair).loss_pct else 0)


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--perturb", "aws:us-east-1/gcp:europe-west1"], "sets nothing"),
        (["--perturb", "aws:us-east-1/aws:eu-west-1,delay_ms=3"], "is not a host"),
        (["--perturb-file", "/nonexistent.yaml"], "not found"),
        (["--backend", "cloud", "--perturb", "aws:us-east-1,delay_ms=3"], "--backend local only"),
    ],
)
def test_bad_sweep_perturbations_are_one_line_and_make_nothing(tmp_path, extra, fragment):
    args = ["sweep", "--regions", "aws:us-east-1,gcp:europe-west1", "--plan-only", "--yes",
            "--results", str(tmp_path)]  # fmt: skip
    result = CliRunner().invoke(main, [*args, *extra])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
    assert fragment in line and result.stderr.endswith(line + "\n")
    assert not list(tmp_path.glob("2*"))


def test_emulator_up_checks_perturbations_before_anything_else():
    result = CliRunner().invoke(
        main, ["emulator", "up", "--regions", "aws:us-east-1", "--perturb", "aws:us-east-1,x=1"]
    )
    assert result.exit_code == 2 and "is not one of" in result.stderr


# ------------------------------------------------------------------- demo


def doc(*episodes, hosts=(), configs=()):
    return {
        "episodes": list(episodes),
        "hosts": list(hosts),
        "configuration_changes": list(configs),
    }


def episode(src, dst, started="s9", metric="rtt", moved=((True, True))):
    """A path event of `changes --json`: its ends and which direction moved."""
    return {"src": src, "dst": dst, "metric": metric, "started_run": started, "status": "open",
            "directions": [{"src": src, "dst": dst, "moved": moved[0]},
                           {"src": dst, "dst": src, "moved": moved[1]}]}  # fmt: skip


def test_the_demo_check_wants_the_injected_change_and_nothing_else():
    plan = DemoPlan()
    ids = [f"s{i}" for i in range(1, 12)]
    a, b = "aws:us-east-1", "gcp:europe-west1"
    assert plan.expected_episodes() == {(a, b), (b, a)}
    assert check_changes(doc(episode(a, b)), plan, ids) == []
    assert check_changes(doc(episode(a, b, moved=(True, False))), plan, ids) == [
        f"the injected change {b} -> {a} was not found"
    ]
    late = check_changes(doc(episode(a, b, "s10")), plan, ids)
    assert late == [
        f"the injected change {a} -> {b} was dated s10, not s9",
        f"the injected change {b} -> {a} was dated s10, not s9",
    ]
    extra = check_changes(doc(episode(a, b), episode(a, "aws:sa-east-1")), plan, ids)
    assert len(extra) == 1 and "a change nobody injected" in extra[0]
    moved = {"host": a, "started_run": "s9"}
    host = check_changes(doc(episode(a, b), hosts=[moved]), plan, ids)
    assert host == [f"a host change nobody injected: {a} from s9"]
    assert check_changes(doc(), plan, ids)[0].endswith("was not found")


def test_a_demo_too_short_for_change_detection_is_refused():
    with pytest.raises(UserError, match="needs 8 clean sweeps"):
        DemoPlan(sweeps=11, change_from=8)
    with pytest.raises(UserError, match="and 3 after it"):
        DemoPlan(sweeps=10, change_from=9)
    assert DemoPlan(sweeps=5, change_from=3, detection=Params(min_runs=2)).perturbations(3)
    assert not DemoPlan().perturbations(8) and DemoPlan().seed(1) != DemoPlan().seed(2)


def test_the_demo_folder_is_new_or_an_earlier_demo(tmp_path):
    prepare_out(tmp_path / "new", replace=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("x")
    with pytest.raises(UserError, match="holds no demo"):
        prepare_out(other, replace=True)
    assert (other / "precious.txt").exists()
    old = tmp_path / "old"
    old.mkdir()
    (old / "demo.json").write_text("{}")
    with pytest.raises(UserError, match="--replace"):
        prepare_out(old, replace=False)
    # a link to a demo's folder: never deleted through
    link = tmp_path / "link"
    link.symlink_to(old, target_is_directory=True)
    with pytest.raises(UserError, match="symbolic link"):
        prepare_out(link, replace=True)
    assert (old / "demo.json").exists()
    prepare_out(old, replace=True)
    assert list(old.iterdir()) == []


def test_tc_clear_removes_every_qdisc_tc_batch_may_set():
    text = shaping.tc_clear(spec(1))
    assert text.splitlines() == [
        f"qdisc del dev {dev}{n} {where}"
        for n in range(1, 5)
        for dev, where in (("p", "root"), ("p", "ingress"), ("q", "root"))
    ]


def test_changes_min_runs_above_the_baseline_is_one_line(tmp_path):
    result = CliRunner().invoke(
        main, ["changes", "--min-runs", "9", "--baseline-runs", "4", "--results", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert result.stderr == "error: --min-runs 9 is above --baseline-runs 4\n"


def test_a_resumed_sweep_keeps_its_recorded_emulation(tmp_path):
    result = CliRunner().invoke(
        main, ["sweep", "--resume", "20261123T1649Z-bc67", "--emulation-seed", "3",
               "--results", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "a resumed sweep keeps the emulation it recorded" in result.stderr
