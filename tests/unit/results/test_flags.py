"""The physics and consistency flags of measurement rows, against values by hand."""

import csv

from orchestrator.core import paths
from orchestrator.exchange import public_data
from orchestrator.model.catalog import load_catalog
from orchestrator.results import files as store
from orchestrator.results import flags, tiers


def _row(**values):
    base = {"sweep_id": "s", "status": "ok", "src_cloud": "aws", "src_region": "a",
            "dst_cloud": "gcp", "dst_region": "b"}  # fmt: skip
    return {**base, **values}


def test_below_fibre_floor_with_its_tolerance():
    # floor at 1000 km: 10.006922 ms; tolerance 2 ms -> a statistic under 8.006922 is flagged
    assert flags.row_flags(_row(distance_km=1000, rtt_min_ms=8.0)) == [flags.BELOW_FIBRE_FLOOR]
    assert flags.row_flags(_row(distance_km=1000, rtt_min_ms=8.01)) == []
    # any statistic counts, as text or number; a row without distance is not judged
    assert flags.row_flags(_row(distance_km="1000", rtt_avg_ms="7.9", rtt_max_ms="50")) == [
        flags.BELOW_FIBRE_FLOOR
    ]
    assert flags.row_flags(_row(distance_km="", rtt_min_ms=0.1)) == []


def test_receiver_sender_duration_and_samples():
    # the counts: the sender's 8 Mbit/s over 5 s is 5,000,000 bytes; the receiver's aligned
    # count may be up to 1 % above it (5,050,000), not more
    sent = {"throughput_sender_bps": 8e6, "duration_s": 5.0}
    assert flags.row_flags(_row(bytes=5_050_000, **sent)) == []
    assert flags.row_flags(_row(bytes=5_050_001, **sent)) == [flags.RECEIVER_EXCEEDS_SENDER]
    # ... or up to one congestion window above it, when that is more: the bytes in flight
    # as the omit ended (an emulated sweep's sa-east-1 -> asia-southeast1 at 3 Mbit/s over
    # 330 ms: the receiver 69,504 bytes ahead, 3.7 %, under its 260,640-byte window)
    far = {"throughput_sender_bps": 2_993_305.6, "duration_s": 5.0}
    assert flags.row_flags(_row(bytes=1_940_320, max_cwnd_bytes=260_640, **far)) == []
    assert flags.row_flags(_row(bytes=1_940_320, max_cwnd_bytes=60_000, **far)) == [
        flags.RECEIVER_EXCEEDS_SENDER
    ]
    assert flags.row_flags(_row(bytes=1_940_320, **far)) == [flags.RECEIVER_EXCEEDS_SENDER]
    # the 1 % still holds where it is more than a window
    assert flags.row_flags(_row(bytes=5_050_001, max_cwnd_bytes=20_000, **sent)) == [
        flags.RECEIVER_EXCEEDS_SENDER
    ]
    # the rates are not compared when the counts are there: the receiver's goodput over the
    # window may be ahead by what the omit boundary moved
    assert flags.row_flags(_row(bytes=4_900_000, throughput_bps=8.3e6, **sent)) == []
    assert flags.receiver_and_sender(_row(bytes="4900000", **sent)) == (4_900_000, 5_000_000)
    # a row without its counts (an import): the rates, 1 % over the sender allowed
    assert flags.row_flags(_row(throughput_bps=101.0, throughput_sender_bps=100.0)) == []
    assert flags.row_flags(_row(throughput_bps=101.5, throughput_sender_bps=100)) == [
        flags.RECEIVER_EXCEEDS_SENDER
    ]
    assert flags.receiver_and_sender(_row(throughput_bps=101.0)) is None  # no sender figure
    # asked 10 s: 9.5 s is within 5 %, 9.4 s is short; unknown asked duration: no check
    assert flags.row_flags(_row(duration_s=9.5), asked_duration_s=10) == []
    assert flags.row_flags(_row(duration_s=9.4), asked_duration_s=10) == [flags.DURATION_SHORT]
    assert flags.row_flags(_row(duration_s=1.0)) == []
    assert flags.row_flags(_row(rtt_samples=4)) == [flags.FEW_SAMPLES]
    assert flags.row_flags(_row(rtt_samples=5)) == []


def test_asymmetry_by_hand():
    # 100 vs 109 ms: bound max(5, 10 % of 100) = 10 -> not asymmetric; 100 vs 111 is
    assert not flags.asymmetric(100.0, 109.0)
    assert flags.asymmetric(100.0, 111.0)
    # 20 vs 26: bound max(5, 2) = 5 -> asymmetric; 20 vs 24.9 is not
    assert flags.asymmetric(20.0, 26.0) and not flags.asymmetric(20.0, 24.9)
    fwd = _row(rtt_p50_ms=100.0)
    rev = _row(src_region="b", dst_region="a", src_cloud="gcp", dst_cloud="aws", rtt_p50_ms=115)
    other_sweep = {**rev, "sweep_id": "t"}
    assert flags.flag_rows([fwd, rev]) == ["asymmetric", "asymmetric"]
    assert flags.flag_rows([fwd, other_sweep]) == ["", ""]  # not the same sweep
    # the median is the RTT; the mean only stands in when there is no median
    assert flags.flag_rows([fwd, {**rev, "rtt_p50_ms": 101, "rtt_avg_ms": 150}]) == ["", ""]
    # different network tiers are different measurements
    tiered = [{**fwd, "network_tier": "PREMIUM"}, {**rev, "network_tier": "STANDARD"}]
    assert flags.flag_rows(tiered) == ["", ""]


def test_flags_are_written_with_every_sweep_file(tmp_path):
    rows = [
        _row(distance_km=1000, rtt_min_ms=5.0, rtt_p50_ms=20.0, duration_s=3.0),
        _row(src_region="b", dst_region="a", src_cloud="gcp", dst_cloud="aws", rtt_p50_ms=40.0),
    ]
    store.write_rows(tmp_path, rows, asked_duration_s=5)
    back = store.read_rows(tmp_path / store.MEASUREMENTS_FILE)
    assert [r["flags"] for r in back] == [
        "below_fibre_floor;asymmetric;duration_short",
        "asymmetric",
    ]
    assert flags.count(r["flags"] for r in back)["asymmetric"] == 2


def test_the_vendored_skyplane_grid_keeps_tiers_apart_and_flags_the_floor():
    text = (paths.DATA / "skyplane-latency-2022.csv").read_text()
    rows = public_data.convert("skyplane", text, load_catalog())
    below = [r for r in rows if flags.BELOW_FIBRE_FLOOR in flags.parse(r["flags"])]
    # the example: gcp:europe-west4 -> gcp:asia-southeast2, min 12.77 ms at 11,224 km
    assert any(
        (r["src_region"], r["dst_region"]) == ("europe-west4", "asia-southeast2") for r in below
    )
    # every row below the floor by the rule, and no other
    with (paths.DATA / "skyplane-latency-2022.csv").open() as f:
        raw = [r for r in csv.DictReader(f) if "azure" not in r["src_region"] + r["dst_region"]]
    assert len(raw) == len(rows)
    expected = sum(
        1
        for r in rows
        if r["distance_km"] and float(r["rtt_min_ms"]) < float(r["distance_km"]) * 0.010006922 - 2.0
    )
    assert len(below) == expected > 100
    assert {r["network_tier"] for r in rows} == {
        "PREMIUM",
        "STANDARD",
        "PREMIUM/STANDARD",
        "STANDARD/PREMIUM",
    }


def test_each_flag_invalidates_only_its_measures():
    # every flag declares what it says is wrong, and nothing else is a measure
    assert set(flags.INVALIDATES) == set(flags.FLAGS)
    assert all(set(m) <= set(flags.MEASURES) for m in flags.INVALIDATES.values())
    # only a flag whose samples are out of the row's figures already invalidates nothing
    assert [f for f, m in flags.INVALIDATES.items() if not m] == [flags.HOST_STALL]
    assert not flags.rtt_invalid("host_stall") and not flags.throughput_invalid("host_stall")
    assert flags.rtt_invalid("host_stall;few_samples")
    # the throughput checks say nothing against the ping's RTT, and the ping's against iperf3
    for cell in (
        "receiver_exceeds_sender",
        "duration_short",
        "duration_short;receiver_exceeds_sender",
    ):
        assert flags.throughput_invalid(cell) and not flags.rtt_invalid(cell)
    for cell in ("asymmetric", "few_samples", "asymmetric;few_samples"):
        assert flags.rtt_invalid(cell) and not flags.throughput_invalid(cell)
    # faster than light: the row is not of the pair it names; one RTT flag among others
    for cell in ("below_fibre_floor", "few_samples;duration_short"):
        assert flags.rtt_invalid(cell) and flags.throughput_invalid(cell)
    for cell in ("", None, ";"):
        assert not flags.rtt_invalid(cell) and not flags.throughput_invalid(cell)
    # a name we do not know (a later version's, a typo) leaves nothing standing
    assert flags.rtt_invalid("made_up") and flags.throughput_invalid("made_up")
    assert flags.harmless(flags.RTT) == ("receiver_exceeds_sender", "duration_short", "host_stall")
    assert flags.harmless(flags.THROUGHPUT) == ("asymmetric", "few_samples", "host_stall")


def test_a_mixed_tier_row_is_checked_against_the_reverse_over_the_same_ends():
    # aws -> gcp with the GCP end on Standard: its reverse is gcp(Standard) -> aws, whose
    # tier reads STANDARD/PREMIUM; the same ends, so the two are compared
    fwd = _row(rtt_p50_ms=100.0, network_tier="PREMIUM/STANDARD")
    rev = _row(
        src_region="b", dst_region="a", src_cloud="gcp", dst_cloud="aws", rtt_p50_ms=115,
        network_tier="STANDARD/PREMIUM",
    )  # fmt: skip
    assert flags.flag_rows([fwd, rev]) == ["asymmetric", "asymmetric"]
    # a Premium reverse is another measurement: not compared
    assert flags.flag_rows([fwd, {**rev, "network_tier": "PREMIUM"}]) == ["", ""]
    assert tiers.reverse("PREMIUM/STANDARD") == "STANDARD/PREMIUM"
    assert tiers.reverse("") == tiers.reverse("premium") == "PREMIUM"
    assert tiers.normal("standard/standard") == "STANDARD"


def test_the_skyplane_mixed_tier_aws_gcp_rows_are_checked_for_asymmetry():
    # issue 29: the 882 mixed-tier aws<->gcp rows were never paired with their reverse;
    # paired over the same ends, 152 of them differ beyond the bound
    text = (paths.DATA / "skyplane-latency-2022.csv").read_text()
    rows = public_data.convert("skyplane", text, load_catalog())
    mixed = [r for r in rows if r["src_cloud"] != r["dst_cloud"] and "/" in r["network_tier"]]
    assert len(mixed) == 882
    assert sum(flags.ASYMMETRIC in flags.parse(r["flags"]) for r in mixed) == 152
