"""The TCP study's plan and analysis: variants, orders, buffers, rounds, the report's
figures and the cap/window fit, with answers computed by hand."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from click.testing import CliRunner
from fixture_regions import fixture_catalog
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.routes import default_routes
from orchestrator.plan.ping_timing import LAUNCH_BASE_S, PER_HOST_S, phase_seconds
from orchestrator.plan.pricing import load_pricing
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import (
    TestParams,
    make_plan,
    round_overhead_s,
    slot_seconds,
)
from orchestrator.plan.tuning import (
    emulated_window_bytes,
    line_rate_bps,
    sysctl_values,
    tuned_buffer_bytes,
)
from orchestrator.results.record import StudyRecord
from orchestrator.results.schema import PING_PACKET_BYTES
from orchestrator.study.estimate import study_plan
from orchestrator.study.findings import (
    PairResult,
    VariantResult,
    cloud_pair_fits,
    fit_cap_window,
    page_html,
    pair_results,
    report_text,
)
from orchestrator.study.variants import (
    VARIANTS,
    check_buffer,
    check_repeats,
    host_buffer_limit,
    parse_variants,
    run_order,
)

CATALOG = fixture_catalog()
PRICING = load_pricing()


def test_variants_parse_in_order_and_unknown_ones_are_one_line():
    assert [v.name for v in parse_variants("default, tuned,p8")] == ["default", "tuned", "p8"]
    assert parse_variants("default,bbr")[1].congestion == "bbr"
    assert parse_variants("default,p4")[1].streams == 4
    for text, match in (
        ("default,p16", "unknown variant 'p16'"),
        ("tuned,p4", "include 'default'"),
        ("default,default", "named twice"),
    ):
        with pytest.raises(UserError, match=match) as e:
            parse_variants(text)
        assert "\n" not in str(e.value)


def test_fewer_than_three_repeats_is_refused():
    assert check_repeats(3) == 3
    with pytest.raises(UserError, match="at least 3"):
        check_repeats(2)


@settings(max_examples=50, deadline=None)
@given(
    names=st.lists(st.sampled_from(list(VARIANTS)), min_size=1, unique=True),
    repeats=st.integers(3, 6),
    seed=st.integers(0, 2**32),
)
def test_every_variant_runs_repeats_times_in_a_seeded_order(names, repeats, seed):
    variants = [VARIANTS[n] for n in names]
    order = run_order("aws:a", "gcp:b", variants, repeats, seed)
    assert Counter(order) == Counter((n, k) for n in names for k in range(1, repeats + 1))
    assert order == run_order("aws:a", "gcp:b", variants, repeats, seed)  # recorded = rerun


def test_orders_differ_between_pairs_and_seeds():
    variants = list(VARIANTS.values())
    a = run_order("aws:a", "gcp:b", variants, 3, 1)
    assert a != run_order("aws:a", "gcp:c", variants, 3, 1)
    assert a != run_order("aws:a", "gcp:b", variants, 3, 2)
    # no variant always first: over pairs, several variants open the order
    firsts = {run_order("aws:a", f"gcp:{i}", variants, 3, 7)[0][0] for i in range(30)}
    assert len(firsts) >= 4


def test_tuned_buffers_are_twice_the_bdp_at_line_rate():
    # 50 Mbit/s x 100 ms = 625,000 bytes in flight; x 2
    assert tuned_buffer_bytes(50e6, 100.0) == 1_250_000
    # the vendor's example: 300 Mbit/s at 150 ms needs 5.625 MB; tuned doubles it
    assert tuned_buffer_bytes(300e6, 150.0) == 11_250_000
    assert line_rate_bps(True) == 50e6
    assert sysctl_values(1_250_000) == {
        "tcp_rmem": "4096 131072 1250000",
        "tcp_wmem": "4096 16384 1250000",
    }
    # scaled as the default clamp is: 262 kB of buffer -> 131 kB of window
    assert emulated_window_bytes(261_777) == 130_888


def test_a_buffer_above_the_hosts_limit_is_one_line_naming_it():
    assert host_buffer_limit() == 2**31 - 1
    assert host_buffer_limit(10**6) == 10**6
    check_buffer("a->b", 10**6, 80.0, 10**6)
    with pytest.raises(UserError, match=r"above what the hosts can set \(1000000 bytes\)"):
        check_buffer("a->b", 10**6 + 1, 80.0, 10**6)


def test_the_fit_recovers_cap_and_window_from_exact_points():
    cap, window = 50e6, 131_000.0
    points = [(rtt, min(cap, window * 8 / (rtt / 1000))) for rtt in (2, 5, 12, 40, 85, 150, 220)]
    fit = fit_cap_window(points, "aws-gcp")
    assert fit.cap_bps == pytest.approx(cap)
    assert fit.window_bytes == pytest.approx(window)
    assert fit.mean_error_pct == 0.0
    assert fit.predict_bps(100.0) == pytest.approx(window * 8 / 0.1)
    with pytest.raises(UserError, match="at least 2"):
        fit_cap_window([(10.0, 1e6)])


def _row(src, dst, variant, bps, retransmits=0, sent=10**8, rtt=80.0):
    s, d = src.split(":"), dst.split(":")
    return {
        "src_cloud": s[0], "src_region": s[1], "dst_cloud": d[0], "dst_region": d[1],
        "variant": variant, "status": "ok", "throughput_bps": str(bps),
        "retransmits": str(retransmits), "bytes": str(sent), "tcp_rtt_ms": str(rtt),
    }  # fmt: skip


PAIR = {
    "aws:a->gcp:b": {
        "src": "aws:a", "dst": "gcp:b", "idle_rtt_ms": 80.0,
        "line_rate_bps": 50e6, "tuned_buffer_bytes": 1_000_000,
    }
}  # fmt: skip


def test_pair_results_give_ceilings_spread_gain_and_a_window_recommendation():
    rows = [
        *(_row("aws:a", "gcp:b", "default", b) for b in (12e6, 13e6, 14e6)),
        *(_row("aws:a", "gcp:b", "tuned", b) for b in (48e6, 49e6, 50e6)),
        *(_row("aws:a", "gcp:b", "p4", b) for b in (45e6, 47e6, 49e6)),
        {**_row("aws:a", "gcp:b", "default", 1.0), "status": "failed"},  # not counted
    ]
    (p,) = pair_results(rows, PAIR, default_window_bytes=131_000)
    assert p.bdp_bytes == pytest.approx(500_000)
    assert p.default_ceiling_bps == pytest.approx(131_000 * 8 / 0.08)
    assert p.tuned_ceiling_bps == pytest.approx(500_000 * 8 / 0.08)
    assert p.variants["default"].runs == 3 and p.variants["default"].median_bps == 13e6
    assert p.variants["tuned"].gain == pytest.approx(49 / 13)
    assert p.variants["p4"].spread_pct == pytest.approx(100 * 4 / 47)
    assert p.loss_rate == 0.0 and math.isinf(p.mathis_bps)
    assert p.limit == "window"
    rec = p.recommendation()
    # 2 x BDP is 1 MB, below the kernel's default maximum: advice never goes below it
    assert rec[0] == "net.ipv4.tcp_rmem = 4096 131072 6291456"
    assert rec[1] == "net.ipv4.tcp_wmem = 4096 16384 4194304"
    assert rec[-1] == "or 4 parallel streams with default settings"


def test_when_loss_is_the_limit_the_recommendation_says_so_instead_of_memory():
    # 1 % of segments retransmitted: Mathis = 1448 x 8 / 0.08 x 1.22 / 0.1 = 1.77 Mbit/s
    sent = 10**8
    retransmits = round(sent / 1448 / 99)
    rows = [_row("aws:a", "gcp:b", "default", 1.8e6, retransmits, sent) for _ in range(3)]
    (p,) = pair_results(rows, PAIR, default_window_bytes=131_000)
    assert p.loss_rate == pytest.approx(0.01, rel=1e-3)
    assert p.mathis_bps == pytest.approx(1448 * 8 / 0.08 * 1.22 / 0.1, rel=1e-3)
    assert p.limit == "loss"
    (rec,) = p.recommendation()
    assert rec.startswith("loss, not the window, limits this path")
    assert "more buffer memory will not help" in rec and "tcp_rmem" not in rec


def test_one_default_stream_at_line_rate_needs_nothing():
    p = PairResult("aws:a", "aws:b", 2.0, 2.5, 50e6, 131_000, 25_000, 0.0,
                   {"default": VariantResult("default", 3, 49e6, 48e6, 50e6, 1.0)})  # fmt: skip
    assert p.limit == "line rate"
    assert p.recommendation() == ["nothing to tune: one default stream fills the line rate"]


def test_loaded_minus_idle_is_queueing_only_beyond_the_rtt_noise():
    v = {"default": VariantResult("default", 3, 4e6, 4e6, 4e6, 1.0)}

    def pair(idle, loaded, noise):
        return PairResult("aws:a", "aws:b", idle, loaded, 50e6, 131_000, 0, None, v, noise)

    # the page: 90.4 ms loaded below 90.5 ms idle
    below = pair(90.5, 90.4, 0.35)
    assert below.queueing_ms is None
    assert (
        below.queueing_text() == "no queueing measured (loaded - idle within 0.7 ms of RTT noise)"
    )
    assert pair(90.5, 91.1, 0.35).queueing_ms is None  # +0.6 ms: inside 2 x 0.35
    assert pair(90.5, 91.5, 0.35).queueing_ms == pytest.approx(1.0)
    assert pair(90.5, 91.5, 0.35).queueing_text() == "queueing 1.0 ms"
    assert pair(90.5, 90.55, None).queueing_ms is None  # below the 0.1 ms floor
    assert pair(90.5, None, None).queueing_text() == "no loaded RTT"
    study = StudyRecord("tcp", ["default"], repeats=3, seed=1)
    text = report_text([below], "x", "local", study)
    assert "loaded RTT 90.4 ms (no queueing measured" in text
    assert "the difference is queueing" not in text


def test_fits_are_per_cloud_pair_and_say_why_not():
    def pair(src, dst, rtt, bps):
        v = {"default": VariantResult("default", 3, bps, bps, bps, 1.0)}
        return PairResult(src, dst, rtt, None, 50e6, 131_000, 0, None, v)

    results = [
        pair("aws:a", "aws:b", 5, 50e6),
        pair("aws:a", "aws:c", 100, 131_000 * 8 / 0.1),
        pair("aws:a", "gcp:d", 50, 20e6),
    ]
    fits = cloud_pair_fits(results)
    assert fits[0].clouds == "aws-aws" and fits[0].cap_bps == 50e6  # type: ignore[union-attr]
    assert fits[0].window_bytes == pytest.approx(131_000)  # type: ignore[union-attr]
    assert fits[1] == "aws-gcp: needs at least 2 measured pairs"


def test_the_page_escapes_what_it_shows():
    page = page_html("## a -> <b>\n\n| x | y |\n| --- | --- |\n| 1 | <2> |\n", "T")
    assert "<h2>a -&gt; &lt;b&gt;</h2>" in page and "<td>&lt;2&gt;</td>" in page
    assert page.count("<table>") == 1


def test_a_pair_without_data_says_where_to_get_some():
    study = StudyRecord("tcp", ["default"], repeats=3, seed=1)
    failed = {**_row("aws:a", "gcp:b", "default", 1.0), "status": "failed"}
    (p,) = pair_results([failed], PAIR, default_window_bytes=131_000)
    text = report_text([p], "x", "local", study)
    assert "No measured test" in text
    assert "interregion study tcp --regions aws:a,gcp:b" in text


# --- the estimate: what the study runs, by hand ----------------------------------------

US_EU = SelectionSpec(pairs=(("aws:us-east-1", "aws:eu-west-1"),))
AWS_VM_USD_PER_HOUR = 0.0208 + 0.005 + 0.0009  # instance + public IPv4 + disk


def _study(backend: str, names: str = ",".join(VARIANTS), repeats: int = 3):
    plan = make_plan(CATALOG, US_EU, TestParams(), backend=backend, pricing=PRICING)
    return plan, *study_plan(plan, CATALOG, parse_variants(names), repeats, PRICING)


def _rtt_ms(pair) -> float:
    """The plan's RTT input: the pair's median in the public data (both fixture regions
    have one)."""
    rtt = default_routes().get(pair.src.key, pair.dst.key)
    assert rtt is not None
    return rtt


def test_a_two_region_cloud_study_by_hand():
    sweep, plan, found = _study("aws")
    # one slot, forward test only (the schedule's first direction): 6 variants x 3
    # repeats = 18 tests in 18 rounds, where the sweep ran 2 directions in one round
    (forward,) = [slot.pairs[0] for rnd in plan.rounds for slot in rnd]
    assert forward.key == ("aws:us-east-1", "aws:eu-west-1")
    assert (found.tests, found.rounds) == (18, 18)
    rtt_s = _rtt_ms(forward) / 1000
    # one default stream: a small VM's 2.534 MB window per RTT (below the 5 Gbit/s cap)
    w = 2_534_000 * 8 / rtt_s
    assert w < 968e6
    rates = {
        "default": w,
        "tuned": 968e6,  # the line rate its buffers are sized for, above the window
        "p4": min(5e9, 4 * w),
        "p8": min(5e9, 8 * w),
        "cubic": w,
        "bbr": w,
    }
    per_variant = {name: 3 * rate * (1 + 5) / 8 for name, rate in rates.items()}
    assert found.bytes_by_variant == pytest.approx(per_variant)
    pings = 20 * PING_PACKET_BYTES
    e = plan.estimate
    assert e.bytes == pytest.approx(sum(per_variant.values()) + pings)
    assert e.bytes_by_cloud_pair == pytest.approx({"aws-aws": e.bytes})
    # aws to aws across the Atlantic: $0.02 per GB
    assert e.egress_usd == pytest.approx(e.bytes / 1e9 * 0.02)
    assert found.egress_usd_by_variant["tuned"] == pytest.approx(per_variant["tuned"] / 1e9 * 0.02)
    # the ping phase (one source host: 20 probes 0.2 s apart, 1 s margin), then 18 rounds
    # of one direction (1 + 5 s + 7 RTTs + 1 s margin + the controller's overhead for 2
    # hosts), then the restore play over both hosts (a playbook start)
    phase = LAUNCH_BASE_S + PER_HOST_S + 19 * 0.2 + 1
    rounds = 18 * (6 + 7 * rtt_s + 1 + 0.3 + 2 * 0.02)
    restore = LAUNCH_BASE_S + 2 * PER_HOST_S
    assert e.wall_s == pytest.approx(phase + rounds + restore)
    hours = (e.wall_s + 600) / 3600
    assert e.vm_hours == pytest.approx(2 * hours)
    assert e.vm_usd == pytest.approx(2 * hours * AWS_VM_USD_PER_HOUR)
    assert e.cost_usd == pytest.approx(e.egress_usd + e.vm_usd) == e.cloud_cost_usd
    # what the sweep's estimate said: 2 default tests (both directions; one round has no
    # sentinels)
    assert sweep.estimate.bytes == pytest.approx(2 * (w * 6 / 8 + pings))
    assert e.bytes > 10 * sweep.estimate.bytes and e.wall_s > 5 * sweep.estimate.wall_s
    # the plan keeps the sweep's schedule; sweep.json records the study's estimate
    assert plan.rounds == sweep.rounds
    assert plan.to_json()["estimate"] == e.to_dict()


def test_a_two_region_local_study_sends_emulated_bytes_and_prices_the_cloud():
    _, cloud, _ = _study("aws", "default,tuned,p8", repeats=4)
    _, plan, found = _study("local", "default,tuned,p8", repeats=4)
    (forward,) = [slot.pairs[0] for rnd in plan.rounds for slot in rnd]
    rtt_s = _rtt_ms(forward) / 1000
    # the emulator: 50 Mbit/s, a window of the real one scaled by 50/968 (the buffer,
    # rounded, x 0.5)
    window = round(2_534_000 * 50 / 968 / 0.5) * 0.5
    one = min(50e6, window * 8 / rtt_s)
    assert one < 50e6
    rates = {"default": one, "tuned": 50e6, "p8": min(50e6, 8 * one)}
    assert found.bytes_by_variant == pytest.approx({n: 4 * r * 6 / 8 for n, r in rates.items()})
    assert (found.tests, found.rounds) == (12, 12)
    e = plan.estimate
    assert e.bytes == pytest.approx(4 * sum(rates.values()) * 6 / 8 + 20 * PING_PACKET_BYTES)
    assert e.cost_usd == 0 and e.setup_s == 60
    # priced on the cloud figures, VMs at the cloud's setup time
    assert e.egress_usd == pytest.approx(cloud.estimate.egress_usd)
    assert e.cloud_cost_usd == pytest.approx(cloud.estimate.cost_usd)


def test_without_a_tuned_variant_no_restore_play_is_counted():
    _, with_tuned, _ = _study("aws", "default,tuned")
    _, without, _ = _study("aws", "default,p4")
    assert with_tuned.estimate.wall_s - without.estimate.wall_s == pytest.approx(
        LAUNCH_BASE_S + 2 * PER_HOST_S
    )


def test_the_estimate_plays_each_schedule_round_once_per_test_of_an_order():
    # 4 regions, full mesh: 6 slots in 3 rounds of 2; the study plays each 2 x 3 times
    spec = SelectionSpec(
        regions=("aws:us-east-1", "aws:us-west-2", "aws:eu-west-1", "aws:eu-central-1")
    )
    sweep = make_plan(CATALOG, spec, TestParams(), backend="aws", pricing=PRICING)
    plan, found = study_plan(sweep, CATALOG, parse_variants("default,p4"), 3, PRICING)
    assert [len(r) for r in plan.rounds] == [2, 2, 2]
    assert (found.rounds, found.tests) == (3 * 6, 6 * 6)
    params = TestParams()
    slowest = [
        max(slot_seconds(params, 1, _rtt_ms(s.pairs[0]), pings=False) for s in rnd)
        for rnd in plan.rounds
    ]
    phase = phase_seconds([s.pairs[0].key for r in plan.rounds for s in r], 20, 0.2)
    rounds = sum(6 * (s + round_overhead_s(4)) for s in slowest)
    assert plan.estimate.wall_s == pytest.approx(phase + rounds)


# --- the estimate through the CLI ---------------------------------------------------------


def _cli(*args: str):
    return CliRunner().invoke(main, ["study", "tcp", *args])


def test_a_cloud_study_above_the_budget_is_refused_before_anything_is_provisioned(tmp_path):
    regions = "aws:us-east-1,aws:eu-west-1"
    catalog = load_catalog()
    spec = SelectionSpec(regions=tuple(regions.split(",")))
    sweep = make_plan(catalog, spec, TestParams(), backend="aws")
    plan, _ = study_plan(sweep, catalog, list(VARIANTS.values()), 3)
    # a budget the sweep's estimate is within and the study's is not
    assert sweep.estimate.cost_usd < 0.1 < plan.estimate.cost_usd
    results = tmp_path / "results"
    result = _cli("--backend", "aws", "--regions", regions, "--budget-usd", "0.1",
                  "--results", str(results))  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: estimated cost ${plan.estimate.cost_usd:.2f} is above --budget-usd 0.1: "
        "pass --yes to accept it or raise --budget-usd"
    ]
    assert "plan: 2 regions, 18 tests, a ping phase, then 18 rounds" in result.stderr
    assert f"estimated cost ${plan.estimate.cost_usd:.2f}\n" in result.stderr
    assert result.stdout == ""
    assert not results.exists()  # no study folder, no lock: nothing was provisioned


def test_a_study_budget_must_be_above_zero(tmp_path):
    result = _cli("--budget-usd", "0", "--results", str(tmp_path / "s"))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip() == "error: --budget-usd 0: must be above 0"
    assert not (tmp_path / "s").exists()


def test_sweep_json_records_the_studys_estimate(tmp_path, monkeypatch):
    # the stages after planning need hosts; here they only read what was recorded
    seen = {}

    def record(run, **kwargs):
        seen["record"] = json.loads((run.dir / "sweep.json").read_text())
        seen["dir"] = run.dir

    monkeypatch.setattr("orchestrator.sweep.runner.run_sweep", record)
    monkeypatch.setattr("orchestrator.sweep.run_sweep", record)
    regions = "aws:us-east-1,aws:eu-west-1"
    result = _cli("--backend", "local", "--regions", regions, "--variants", "default,p4",
                  "--repeats", "3", "--yes", "--results", str(tmp_path))  # fmt: skip
    assert result.exit_code == 0, result.output
    catalog = load_catalog()
    sweep = make_plan(catalog, SelectionSpec(regions=tuple(regions.split(","))), TestParams())
    plan, found = study_plan(sweep, catalog, parse_variants("default,p4"), 3)
    record = seen["record"]
    # --results is the sweeps' folder, as for every command: the study lands apart
    assert seen["dir"].parent == tmp_path / "studies"
    assert record["plan"]["estimate"] == plan.estimate.to_dict()
    assert record["plan"]["estimate"] != sweep.estimate.to_dict()
    assert record["study"]["estimate"] == found.to_dict()
    assert record["study"]["estimate"]["tests"] == 6


def test_readers_of_sweeps_and_of_studies_never_take_the_other(tmp_path):
    """A study put where sweeps are (as --results of old sent it) is no sweep to the
    report, the site or the history; a sweep put where studies are is no study."""
    from orchestrator.history import store as history
    from orchestrator.report.build import sweep_dirs
    from orchestrator.results import files as store
    from orchestrator.study.findings import study_ids
    from testkit.synthetic import sweep_record

    def run_folder(parent, run_id, study):
        folder = parent / run_id
        folder.mkdir(parents=True)
        record = sweep_record(run_id)
        if study:
            record["study"] = {"kind": "tcp", "variants": ["default"], "repeats": 1, "seed": 1}
        (folder / store.SWEEP_FILE).write_text(json.dumps(record))
        (folder / store.MEASUREMENTS_FILE).write_text(",".join(store.MEASUREMENT_COLUMNS) + "\n")
        (folder / "study.html").write_text("<html></html>")
        return folder

    results = tmp_path / "results"
    sweep = run_folder(results, "20261125T0400Z-aaaa", study=False)
    run_folder(results, "20261125T0500Z-bbbb", study=True)
    assert sweep_dirs(results) == [sweep]
    assert history.sweep_ids(results) == [sweep.name]
    with pytest.raises(UserError, match="is a TCP study, not a sweep"):
        history.sweep_batch(results, "20261125T0500Z-bbbb")
    studies = results / store.STUDIES_DIR
    run_folder(studies, "20261125T0600Z-cccc", study=True)
    run_folder(studies, "20261125T0700Z-dddd", study=False)
    assert study_ids(studies) == ["20261125T0600Z-cccc"]


def test_the_loss_relation_allows_the_counting_error_of_few_retransmissions():
    """A ceiling from k counted losses is known to 2/sqrt(k) in p, the square root of
    that in the ceiling: the band is the model's 30 % widened by it, one-sided below
    4 losses; a stream far below its ceiling (held by something else) stays out."""
    from orchestrator.netmodel.model import DEFAULT_MODEL
    from orchestrator.results.limiter import loss_band
    from orchestrator.study.check import check

    assert loss_band(400) == pytest.approx((0.7 / 1.1**0.5, 1.3 / 0.9**0.5))
    assert loss_band(16) == pytest.approx((0.7 / 1.5**0.5, 1.3 / 0.5**0.5))
    assert loss_band(3)[1] == math.inf and loss_band(None) == loss_band(1)

    def lossy(bps, retransmits):
        v = {"default": VariantResult("default", 3, bps, bps, bps, 1.0)}
        return PairResult("aws:a", "aws:b", 80.0, None, 50e6, 4_000_000, 0, 0.01, v,
                          retransmits=retransmits)  # fmt: skip

    ceiling = lossy(1.0, 3).mathis_bps
    fifth = {  # measured share of the ceiling, retransmissions -> relation 5 holds?
        (0.6, 3): True,
        (0.4, 3): False,
        (0.6, 400): False,
        (1.3, 400): True,
        (1.4, 400): False,
        (1.5, 16): True,
        (2.0, 16): False,
    }
    for (share, k), holds in fifth.items():
        relation = check([lossy(share * ceiling, k)], DEFAULT_MODEL, {"aws:a->aws:b"})[4]
        assert relation.number == 5 and relation.ok is holds, (share, k, relation.detail)
