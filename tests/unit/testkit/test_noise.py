"""The RTT noise model fitted on the public data: its readers and its fit, on known answers."""

from __future__ import annotations

import math
import random

import pytest

from testkit import noise as rn

DOIT_HEADER = "timestamp,run_id,from_cloud,from_region,to_cloud,to_region,bitrate_Bps,avgrtt\n"
SKY_HEADER = "src_region,src_tier,src_instance_class,dst_region,dst_tier,dst_instance_class,"
SKY_HEADER += "min_rtt,avg_rtt,max_rtt,mdev_rtt\n"


def test_quantile_interpolates_like_numpy():
    assert rn.quantile([4.0, 1.0, 3.0, 2.0], 0.5) == 2.5
    assert rn.quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.25) == 2.0
    assert rn.quantile([10.0], 0.9) == 10.0
    assert math.isnan(rn.quantile([], 0.5))


def test_run_differences_are_of_two_runs_and_comparable_pairs_only(tmp_path):
    path = tmp_path / "doit.csv"
    path.write_text(
        DOIT_HEADER
        + "t,a,GCP,us-east1,GCP,europe-west1,1,100.0\n"
        + "t,b,GCP,us-east1,GCP,europe-west1,1,102.0\n"  # 2 / 101
        + "t,a,GCP,asia-east1,GCP,us-west1,1,120.0\n"
        + "t,b,GCP,asia-east1,GCP,us-west1,1,120.0\n"
        + "t,c,GCP,asia-east1,GCP,us-west1,1,130.0\n"  # three tests: three differences
        + "t,a,AWS,us-east-1,GCP,europe-west1,1,90.0\n"
        + "t,b,AWS,us-east-1,GCP,europe-west1,1,99.0\n"  # an AWS VM: any AZ
        + "t,a,GCP,us-east4,GCP,us-west1,1,60.0\n"  # tested once: no difference
        + "t,b,GCP,us-east1,GCP,us-west1,1,\n"  # no RTT
    )
    got = sorted(rn.run_differences(path))
    assert got == pytest.approx(sorted([2 / 101, 0.0, 10 / 125, 10 / 125]))
    every = rn.run_differences(path, comparable_only=False)
    assert len(every) == 5 and max(every) == pytest.approx(9 / 94.5)


def test_direction_differences_pair_the_two_directions_of_one_run(tmp_path):
    path = tmp_path / "doit.csv"
    path.write_text(
        DOIT_HEADER
        + "t,a,GCP,us-east1,GCP,europe-west1,1,100.0\n"
        + "t,a,GCP,europe-west1,GCP,us-east1,1,101.0\n"  # same run: 1 / 100.5
        + "t,b,GCP,europe-west1,GCP,us-east1,1,110.0\n"  # another run, one direction only
        + "t,a,GCP,asia-east1,GCP,us-west1,1,120.0\n"
        + "t,a,GCP,us-west1,GCP,asia-east1,1,120.0\n"  # 0
        + "t,a,AWS,us-east-1,GCP,us-east1,1,5.0\n"
        + "t,a,GCP,us-east1,AWS,us-east-1,1,6.0\n"  # an AWS VM: comparable only when asked
        + "t,a,GCP,us-east4,GCP,us-west1,1,\n"  # no RTT
    )
    assert sorted(rn.direction_differences(path)) == pytest.approx([0.0, 1 / 100.5])
    every = rn.direction_differences(path, comparable_only=False)
    assert sorted(every) == pytest.approx([0.0, 1 / 100.5, 1 / 5.5])


def test_ping_spikes_from_runs_with_a_ping_beyond_2_ms_and_5_percent(tmp_path):
    path = tmp_path / "sky.csv"
    rows = [
        "aws:us-east-1,P,m,gcp:us-east1-b,P,n,100.0,100.2,100.5,0.1",  # 0.5 ms: quiet
        "aws:us-east-1,P,m,aws:eu-west-1,P,m,70.0,75.0,105.0,9.0",  # 35 ms: a spike
        "aws:us-east-1,P,m,gcp:asia-east1,P,n,200.0,200.5,209.0,2.0",  # 9 ms < 5 %: quiet
        "gcp:us-east1,P,n,azure:eastus,P,d,10.0,50.0,90.0,9.0",  # Azure: ignored
    ]
    path.write_text(SKY_HEADER + "\n".join(rows) + "\n")
    spikes = rn.ping_spikes(path)
    assert spikes.sizes_rel == (0.5,)
    # one run in three holds a spike: 1 - (1 - p)^10 = 1/3
    assert 1 - (1 - spikes.per_ping) ** 10 == pytest.approx(1 / 3)


def _differences(scale: float, spread: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = scale * math.exp(spread * rng.gauss(0, 1))
        out.append(s * abs(rn.student_t(rng, 3.0) - rn.student_t(rng, 3.0)))
    return out


@pytest.mark.parametrize("spread", [0.0, 0.75])
def test_fit_recovers_a_known_scale_and_spread(spread):
    fit = rn.fit_run_noise(_differences(0.01, spread, 6000, seed=11), draws=12000)
    assert fit.pair_spread == spread
    assert fit.median_scale == pytest.approx(0.01, rel=0.1)


def test_median_abs_t():
    assert rn.median_abs_t(math.inf) == 0.6745
    assert rn.median_abs_t(3.0) == 0.7649
    assert rn.median_abs_t(5.0, draws=40001) == pytest.approx(0.7267, abs=0.01)


def test_a_run_is_the_median_of_its_pings_so_a_few_spikes_do_not_move_it():
    fit = rn.Fit(median_scale=0.0, pair_spread=0.0, df=3.0, error=0.0)
    quiet = rn.NoiseModel(fit, jitter_ms=0.2, spikes=rn.PingSpikes(0.0, ()))
    spiky = rn.NoiseModel(fit, jitter_ms=0.2, spikes=rn.PingSpikes(0.1, (1.0,)))
    values = [spiky.run_value(random.Random(k), 150.0, 0.0) for k in range(200)]
    clean = [quiet.run_value(random.Random(k), 150.0, 0.0) for k in range(200)]
    # a spike doubles a ping; 10 % of 20 pings never reach the median
    assert max(values) < 151.5 and min(values) > 150.0
    assert sum(clean) / 200 == pytest.approx(150.0 + 0.2 * math.log(2), abs=0.05)
    means = [spiky.run_value(random.Random(k), 150.0, 0.0, stat="mean") for k in range(200)]
    assert sum(means) / 200 == pytest.approx(150.2 + 0.1 * 150.0, rel=0.05)


def test_the_public_model_is_fitted_on_the_vendored_data():
    model, diffs = rn.public_model()
    assert len(diffs) >= 150  # doit's GCP<->GCP pairs tested on two days
    assert 0.005 < model.fit.median_scale < 0.02
    assert 0.005 < model.spikes.per_ping < 0.05
    assert 0.1 < model.jitter_ms < 1.0


# ---- the per-path model -----------------------------------------------------------------


def test_the_power_law_fit_recovers_a_known_law():
    # differences of two runs of a law 1.5 ms x (RTT/100)^0.4, at |N(0,1)| quantiles
    rng = random.Random(5)
    points = []
    for _ in range(4000):
        rtt = rng.uniform(10, 350)
        points.append((rtt, math.sqrt(2) * 1.5 * (rtt / 100) ** 0.4 * abs(rng.gauss(0, 1))))
    scale, exponent = rn.fit_power_law(points)
    assert scale == pytest.approx(1.5, rel=0.05)
    assert exponent == pytest.approx(0.4, abs=0.05)
    with pytest.raises(ValueError):
        rn.fit_power_law([(100.0, 1.0)])


def test_the_path_model_fitted_on_the_public_data():
    m = rn.path_model()
    # the issue's reading of doit (1.42 ms x (RTT/100)^0.34): 0.94 .. 1.95 ms at 30 .. 250
    for rtt, issue in ((30, 0.94), (80, 1.32), (150, 1.64), (250, 1.95)):
        assert m.sigma_ms(rtt) == pytest.approx(issue, rel=0.1)
    # the two directions within one run differ by a median 0.16 %: residual sqrt(2) smaller
    assert m.residual_rel == pytest.approx(0.0016 / (0.6745 * math.sqrt(2)), rel=0.1)
    assert m.name == "normal" and m.t_factor == 1.0
    t4 = rn.path_model(df=4.0)
    assert t4.name == "t4" and t4.t_factor == pytest.approx(0.6745 / 0.7407)
    with pytest.raises(ValueError):
        rn.path_model(df=5.0)


def test_the_median_abs_table_is_the_t_quantile():
    # median |t_df| is the 75th percentile of t_df, here by simulation
    for df in (6.0, 4.0):
        rng = random.Random(11)
        draws = [abs(rn.student_t(rng, df)) for _ in range(40001)]
        assert rn.quantile(draws, 0.5) == pytest.approx(rn.MEDIAN_ABS[df], abs=0.02)
