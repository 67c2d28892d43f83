"""Calibrate the emulator's network model on the public AWS/GCP data and print
how well it fits: the fitted parameters, the samples used and skipped, the
median relative RTT error per cloud pair, and how the bandwidth is scaled.

Then the per-pair route detours (orchestrator/netmodel/routes.py): fitted on one source and
checked against the other, and r(RTT, distance) of the emulated matrix against the
real data's.

Run: .venv/bin/python bench/netmodel.py [--json] [DATA_DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

from _figures import Figures, Table

from orchestrator.core.errors import UserError
from orchestrator.core.geo import distance_km
from orchestrator.demo import DEMO_REGIONS
from orchestrator.model.catalog import Region, load_catalog
from orchestrator.netmodel import model as netmodel
from orchestrator.netmodel import routes
from orchestrator.netmodel.model import DEFAULT_MODEL, Sample

RTT_BINS_MS = ((0, 10), (10, 20), (20, 40), (40, 80), (80, 160), (160, 320), (320, 1000))


def _errors(
    model: netmodel.NetModel, samples: list[Sample], table: Table | None = None, name: str = ""
) -> str:
    errors = netmodel.relative_errors(model, samples)
    p90 = statistics.quantiles(errors, n=10)[-1] if len(errors) > 1 else errors[0]
    median = statistics.median(errors)
    if table is not None:
        table.add(name, len(samples), f"{median:.1%}", f"{p90:.1%}")
    return f"n={len(samples):5d}  median {median:6.1%}  p90 {p90:6.1%}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", nargs="?", type=Path, default=netmodel.PUBLIC_DATA)
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    args = parser.parse_args()
    figures = Figures("netmodel", "Network model")
    with figures.printing(args.json):
        return run(args.data_dir, figures)


def run(data_dir: Path, figures: Figures) -> int:
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

    figures.note(
        f"public data: {', '.join(f'{s} {loaded.used[s]:,} used' for s in ('skyplane', 'doit'))}"
    )
    fits = figures.table(
        "RTT fit: rtt = base + k x km/1000 + cross-cloud",
        ["data", "base ms", "ms per 1000 km", "cross-cloud ms"],
    )
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
        fits.add(name, round(fit["base_rtt_ms"], 2), round(fit["rtt_ms_per_1000km"], 2),
                 round(fit["cross_cloud_rtt_ms"], 2))  # fmt: skip
    m = DEFAULT_MODEL
    fits.add("the emulator's model", m.base_rtt_ms, m.rtt_ms_per_1000km, m.cross_cloud_rtt_ms)
    print(
        f"  {'DEFAULT':10s} {m.base_rtt_ms:8.2f} {m.rtt_ms_per_1000km:10.2f}"
        f" {m.cross_cloud_rtt_ms:9.2f}"
        f"  (route inflation over the fibre floor: x{m.rtt_ms_per_1000km / 10:.2f})"
    )

    errors = figures.table(
        "the model's relative RTT error, |model - measured| / measured",
        ["samples", "n", "median", "p90"],
    )
    print("\nDEFAULT_MODEL relative RTT error |model - measured| / measured")
    for pair in sorted({s.cloud_pair for s in samples}):
        chosen = [s for s in samples if s.cloud_pair == pair]
        print(f"  {pair:9s} {_errors(m, chosen, errors, pair)}")
    for source in ("skyplane", "doit"):
        chosen = [s for s in samples if s.source == source]
        print(f"  {source:9s} {_errors(m, chosen, errors, source)}")
    print(f"  {'overall':9s} {_errors(m, samples, errors, 'overall')}")
    figures.headline = f"median relative RTT error {errors.rows[-1][2]} (distance model)"
    print("  by distance:")
    for lo, hi in ((0, 1000), (1000, 3000), (3000, 6000), (6000, 10000), (10000, 21000)):
        subset = [s for s in samples if lo <= s.distance_km < hi]
        if subset:
            print(f"    {lo:5d}-{hi:5d} km {_errors(m, subset)}")

    _routes(samples, figures)

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


def _median_error(predicted: list[float], measured: list[float]) -> str:
    errors = [abs(p - m) / m for p, m in zip(predicted, measured, strict=True)]
    return f"{statistics.median(errors):6.1%}" if errors else "     -"


def _routes(samples: list[Sample], figures: Figures) -> None:
    checks = figures.table(
        "route detours fitted on one source, checked on the other: median relative error",
        ["fit", "check", "pairs", "samples", "distance model", "routes"],
    )
    print("\nroute detours: a pair's median RTT in one source, checked on the other's samples")
    print(f"  {'fit':9s} {'check':9s} {'pairs':>6s} {'samples':>8s}   median relative error")
    print(f"  {'':9s} {'':9s} {'':>6s} {'':>8s}   {'distance':>8s} {'routes':>8s}")
    for fit, check in (("skyplane", "doit"), ("doit", "skyplane")):
        fitted = dataclasses.replace(
            DEFAULT_MODEL, **netmodel.calibrate([s for s in samples if s.source == fit])
        )
        table = routes.route_table(samples, (fit,))
        checked = [s for s in samples if s.source == check and s.src != s.dst]
        covered = [s for s in checked if table.get(s.src, s.dst) is not None]
        by_distance = [fitted.rtt_ms(s.distance_km, s.cross_cloud) for s in covered]
        by_route = [table.get(s.src, s.dst) or 0.0 for s in covered]
        measured = [s.rtt_ms for s in covered]
        pairs = len({routes.pair_key(s.src, s.dst) for s in covered})
        print(
            f"  {fit:9s} {check:9s} {pairs:6d}"
            f" {len(covered):8d}   {_median_error(by_distance, measured):>8s}"
            f" {_median_error(by_route, measured):>8s}"
        )
        checks.add(fit, check, pairs, len(covered), _median_error(by_distance, measured).strip(),
                   _median_error(by_route, measured).strip())  # fmt: skip
    catalog = load_catalog()
    medians = routes.median_rtts(samples)
    km = {k: _km(catalog.get(k[0]), catalog.get(k[1])) for k in medians}
    real_r = routes.pearson_r([km[k] for k in medians], [medians[k] for k in medians])
    all_r = routes.pearson_r([s.distance_km for s in samples], [s.rtt_ms for s in samples])
    print(f"\nr(RTT, distance), real: {real_r:.3f} over {len(medians)} pairs' medians,"
          f" {all_r:.3f} over all {len(samples)} samples")  # fmt: skip
    table = routes.default_routes()
    for name, chosen in (
        ("full catalog", list(catalog.regions)),
        ("demo's 12 regions", [catalog.get(k) for k in DEMO_REGIONS]),
    ):
        pairs = [(a, b) for i, a in enumerate(chosen) for b in chosen[i + 1 :]]
        covered = sum(table.get(a.key, b.key) is not None for a, b in pairs)
        x = [_km(a, b) for a, b in pairs]
        plain = routes.pearson_r(x, [routes.pair_rtt_ms(a, b) for a, b in pairs])
        routed = routes.pearson_r(x, [routes.pair_rtt_ms(a, b, routes=table) for a, b in pairs])
        print(
            f"  emulated, {name:18s} {len(pairs):5d} pairs ({covered} measured):"
            f" {routed:.3f} with routes, {plain:.3f} by distance alone"
        )
    cape, sydney = catalog.get("aws:af-south-1"), catalog.get("aws:ap-southeast-2")
    print(
        f"  e.g. {cape.key} - {sydney.key}: {routes.pair_rtt_ms(cape, sydney, routes=table):.0f} ms"
        f" measured ({table.source_of[routes.pair_key(cape.key, sydney.key)]}),"
        f" {routes.pair_rtt_ms(cape, sydney):.0f} ms by distance"
    )


def _km(a: Region, b: Region) -> float:
    return distance_km(a.lat, a.lon, b.lat, b.lon)


if __name__ == "__main__":
    sys.exit(main())
