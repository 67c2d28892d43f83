"""Calibrate the emulator's network model on the public AWS/GCP data and print
how well it fits: the fitted parameters, the samples used and skipped, the
median relative RTT error per cloud pair, and how the bandwidth is scaled.

Run: .venv/bin/python bench/netmodel.py [DATA_DIR]
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
from pathlib import Path

from orchestrator import netmodel
from orchestrator.errors import UserError
from orchestrator.netmodel import DEFAULT_MODEL, Sample

RTT_BINS_MS = ((0, 10), (10, 20), (20, 40), (40, 80), (80, 160), (160, 320), (320, 1000))


def _errors(model: netmodel.NetModel, samples: list[Sample]) -> str:
    errors = netmodel.relative_errors(model, samples)
    p90 = statistics.quantiles(errors, n=10)[-1] if len(errors) > 1 else errors[0]
    return f"n={len(samples):5d}  median {statistics.median(errors):6.1%}  p90 {p90:6.1%}"


def main(data_dir: Path) -> int:
    try:
        loaded = netmodel.load_public_samples(data_dir)
    except UserError as e:
        print(f"skipped: {e}")
        return 0
    samples = list(loaded.samples)

    print(f"public data: {data_dir}")
    for source in ("skyplane", "doit"):
        print(f"  {source:9s} used {loaded.used[source]:5d}  skipped {loaded.skipped[source]:4d}")
    if loaded.unknown_regions:
        print(f"  regions not in the catalog: {', '.join(sorted(loaded.unknown_regions))}")

    print("\nRTT fit (least squares on relative error): rtt = base + k * km/1000 + cross")
    print(f"  {'data':10s} {'base ms':>8s} {'ms/1000km':>10s} {'cross ms':>9s}  fit error")
    for name, subset in (
        ("all", samples),
        ("skyplane", [s for s in samples if s.source == "skyplane"]),
        ("doit", [s for s in samples if s.source == "doit"]),
    ):
        fit = netmodel.calibrate(subset)
        fitted = dataclasses.replace(DEFAULT_MODEL, **fit)
        print(
            f"  {name:10s} {fit['base_rtt_ms']:8.2f} {fit['rtt_ms_per_1000km']:10.2f}"
            f" {fit['cross_cloud_rtt_ms']:9.2f}  {_errors(fitted, subset)}"
        )
    m = DEFAULT_MODEL
    print(
        f"  {'DEFAULT':10s} {m.base_rtt_ms:8.2f} {m.rtt_ms_per_1000km:10.2f}"
        f" {m.cross_cloud_rtt_ms:9.2f}"
        f"  (route inflation over the fibre floor: x{m.rtt_ms_per_1000km / 10:.2f})"
    )

    print("\nDEFAULT_MODEL relative RTT error |model - measured| / measured")
    for pair in sorted({s.cloud_pair for s in samples}):
        print(f"  {pair:9s} {_errors(m, [s for s in samples if s.cloud_pair == pair])}")
    for source in ("skyplane", "doit"):
        print(f"  {source:9s} {_errors(m, [s for s in samples if s.source == source])}")
    print(f"  {'overall':9s} {_errors(m, samples)}")
    print("  by distance:")
    for lo, hi in ((0, 1000), (1000, 3000), (3000, 6000), (6000, 10000), (10000, 21000)):
        subset = [s for s in samples if lo <= s.distance_km < hi]
        if subset:
            print(f"    {lo:5d}-{hi:5d} km {_errors(m, subset)}")

    mdev_ms = netmodel.load_rtt_mdev_ms(data_dir)
    median_mdev = statistics.median(mdev_ms)
    print(
        f"\njitter: median ping mdev {median_mdev:.3f} ms over {len(mdev_ms)} skyplane pairs"
        f" -> one-way uniform half-width {netmodel.jitter_from_rtt_mdev_ms(median_mdev):.3f} ms"
        f" (DEFAULT {m.jitter_ms} ms)"
    )

    bw = netmodel.fit_bandwidth(samples)
    print("\nbandwidth: real small VMs (doit: t3.nano / e2-small, one iperf2 stream)")
    print(
        f"  cap    = median throughput, RTT < {netmodel.SHORT_RTT_MS:g} ms:"
        f" {bw.cap_bps / 1e6:7.1f} Mbit/s (n={bw.n_short})"
    )
    print(
        f"  window = median throughput x RTT, RTT > {netmodel.LONG_RTT_MS:g} ms:"
        f" {bw.window_bytes / 1e6:5.2f} MB (n={bw.n_long});"
        f" knee at {bw.knee_rtt_ms:.1f} ms"
    )
    print(
        f"  emulated cap {m.rate_mbit:g} Mbit/s -> scale = {m.rate_mbit:g} /"
        f" {bw.cap_bps / 1e6:.0f} = {m.rate_mbit * 1e6 / bw.cap_bps:.4f} (DEFAULT {m.scale:.4f})"
    )
    print(
        f"  emulated window {m.window_bytes / 1e3:.0f} kB = tcp buffer"
        f" {m.tcp_buffer_bytes} B x window efficiency {m.window_efficiency}"
    )
    print(f"  {'RTT ms':>10s} {'n':>5s} {'real median':>12s} {'real fit':>10s}"
          f" {'x scale':>9s} {'emulated':>9s}  (Mbit/s)")  # fmt: skip
    for lo, hi in RTT_BINS_MS:
        subset = [s for s in samples if s.throughput_bps and lo <= s.rtt_ms < hi]
        if not subset:
            continue
        median_rtt = statistics.median(s.rtt_ms for s in subset)
        real = statistics.median(s.throughput_bps or 0.0 for s in subset)
        print(
            f"  {lo:4d}-{hi:<5d} {len(subset):5d} {real / 1e6:12.1f}"
            f" {bw.throughput_bps(median_rtt) / 1e6:10.1f} {real * m.scale / 1e6:9.2f}"
            f" {m.expected_throughput_bps(median_rtt) / 1e6:9.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else netmodel.PUBLIC_DATA))
