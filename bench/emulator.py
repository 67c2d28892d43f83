"""Benchmark of the emulated cloud: prints set-up/teardown time and memory, RTT
accuracy, the measured matrix with the public data's routes (r(RTT, distance)),
single-stream throughput against the model, and concurrent load.

Needs root. The machine may be shared: timing figures are noisy then.

    .venv/bin/python bench/emulator.py                # everything (~3 min)
    .venv/bin/python bench/emulator.py --only rtt     # one part
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _figures import Figures

from orchestrator import emulator as emu
from orchestrator.core.geo import distance_km
from orchestrator.drivers.keys import SweepKeys, ensure_sweep_keys
from orchestrator.emulator import net
from orchestrator.emulator.spec import EmulationSpec, HostSpec, PathSpec, host_addresses
from orchestrator.emulator.stack import BASELINE_RTT_MS, build_spec
from orchestrator.model.catalog import Region, load_catalog
from orchestrator.netmodel.model import DEFAULT_MODEL, NetModel
from orchestrator.netmodel.routes import EMPTY, controller_rtt_ms
from orchestrator.plan.selection import farthest_point_sample

PARTS = ("scale", "rtt", "routes", "controller", "throughput", "concurrent")
CONTROLLER = "aws:us-east-1"  # where the controller is modelled in the "controller" part
RTT_HOSTS = 12
DURATION_S = 5  # a sweep's default iperf3 test (plan.TestParams)
OMIT_S = 1


def regions(n: int) -> list[Region]:
    catalog = load_catalog()
    return (
        farthest_point_sample(list(catalog.regions), n)
        if n < len(catalog.regions)
        else list(catalog.regions)
    )


def spec_for(
    emulation_id: str, chosen: Sequence[Region], keys: SweepKeys, controller: Region | None = None
) -> EmulationSpec:
    subnet = emu.reserve_subnet(emulation_id, owner_pid=os.getpid())
    return build_spec(
        emulation_id,
        subnet,
        chosen,
        keys,
        DEFAULT_MODEL,
        owner_pid=os.getpid(),
        controller=controller,
    )


def model_rtt_ms(model: NetModel, a: Region, b: Region) -> float:
    return model.rtt_ms(distance_km(a.lat, a.lon, b.lat, b.lon), a.cloud != b.cloud)


def mem_available_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


def rss_kib(pids: Sequence[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def bench_scale(keys: SweepKeys, sizes: Sequence[int], figures: Figures) -> None:
    table = figures.table(
        "set-up and teardown (rss: sshd + delayd resident; mem: drop of MemAvailable)",
        ["hosts", "up s", "down s", "processes", "rss MiB", "mem MiB"],
    )
    print("== set-up and teardown (goal: 77 hosts up < 60 s, down < 10 s)")
    print(f"{'hosts':>5} {'up_s':>7} {'down_s':>7} {'procs':>5} {'rss_MiB':>8} {'mem_MiB':>8}")
    for n in sizes:
        emulation_id = f"bs{n}"
        spec = spec_for(emulation_id, regions(n), keys)
        before = mem_available_kib()
        started = time.monotonic()
        emu.up(spec)
        up_s = time.monotonic() - started
        inodes = [net.netns_inode(ns) for ns in net.namespaces(spec)]
        pids = list(net.pids_in_netns(i for i in inodes if i))
        rss = rss_kib(pids)
        used = before - mem_available_kib()
        started = time.monotonic()
        emu.down(emulation_id)
        down_s = time.monotonic() - started
        print(f"{n:5} {up_s:7.2f} {down_s:7.2f} {len(pids):5} {rss / 1024:8.1f} {used / 1024:8.1f}")
        table.add(n, round(up_s, 2), round(down_s, 2), len(pids), round(rss / 1024, 1),
                  round(used / 1024, 1))  # fmt: skip
        figures.headline = f"{n} hosts up / down {up_s:.2f} / {down_s:.2f} s"
    print("  rss = sshd + delayd resident memory; mem = drop of MemAvailable (kernel objects too)")


def ping(netns: str, address: str, count: int = 20) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["ip", "netns", "exec", netns, "ping", "-n", "-c", str(count), "-i", "0.2", address],
        stdout=subprocess.PIPE,
        text=True,
    )


def median_rtt(proc: subprocess.Popen[str]) -> float:
    out, _ = proc.communicate(timeout=120)
    rtts = [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]
    return statistics.median(rtts) if rtts else float("nan")


def bench_rtt(keys: SweepKeys, figures: Figures) -> None:
    chosen = regions(RTT_HOSTS)
    spec = spec_for("brtt", chosen, keys)
    emu.up(spec)
    try:
        pairs = [(i, j) for i in range(len(chosen)) for j in range(i + 1, len(chosen))]
        # All pairs at once: 66 x 5 pings/s is nothing for delayd; 4 s instead of 4 min.
        procs = {(i, j): ping(net.host_ns(spec.id, i), spec.hosts[j].address) for i, j in pairs}
        errors = []
        within = 0
        for (i, j), proc in procs.items():
            measured = median_rtt(proc)
            expected = model_rtt_ms(DEFAULT_MODEL, chosen[i], chosen[j])
            err = measured - expected
            errors.append(err)
            within += abs(err) <= 0.5 + 0.02 * expected
        abs_errors = sorted(abs(e) for e in errors)
        print(
            f"== RTT accuracy: {len(pairs)} pairs of a {len(chosen)}-host emulation, median of 20"
        )
        print(
            f"  within 0.5 ms + 2% of the model: {within}/{len(pairs)} "
            f"({100 * within / len(pairs):.0f}%)"
        )
        print(
            f"  measured - model: median {statistics.median(errors):+.3f} ms, "
            f"max |err| {abs_errors[-1]:.3f} ms, 90th pct |err| "
            f"{abs_errors[int(0.9 * (len(abs_errors) - 1))]:.3f} ms "
            f"(baseline subtracted: {BASELINE_RTT_MS} ms)"
        )
        accuracy = figures.table(
            "RTT against the model (median of 20 pings a pair)",
            ["pairs", "hosts", "within 0.5 ms + 2 %", "median error ms", "max error ms"],
        )
        accuracy.add(len(pairs), len(chosen), within, round(statistics.median(errors), 3),
                     round(abs_errors[-1], 3))  # fmt: skip
    finally:
        emu.down(spec.id)


def bench_routes(keys: SweepKeys) -> None:
    """The demo's 12 regions with the public data's routes and a seed's variation, as a
    sweep gets them: measured RTTs against the spec, and how far they are from distance."""
    from orchestrator.demo import DEMO_REGIONS
    from orchestrator.emulator.stack import expected_rtts_ms
    from orchestrator.emulator.variation import DEFAULT_VARIATION
    from orchestrator.netmodel.routes import default_routes, pearson_r

    catalog = load_catalog()
    chosen = [catalog.get(k) for k in DEMO_REGIONS]
    subnet = emu.reserve_subnet("broutes", owner_pid=os.getpid())
    spec = build_spec(
        "broutes", subnet, chosen, keys, DEFAULT_MODEL, owner_pid=os.getpid(),
        routes=default_routes(), seed=1, variation=DEFAULT_VARIATION,
    )  # fmt: skip
    emu.up(spec)
    try:
        pairs = [(i, j) for i in range(len(chosen)) for j in range(i + 1, len(chosen))]
        procs = {(i, j): ping(net.host_ns(spec.id, i), spec.hosts[j].address) for i, j in pairs}
        measured = {p: median_rtt(proc) for p, proc in procs.items()}
    finally:
        emu.down(spec.id)
    expected = expected_rtts_ms(spec)
    errors = [measured[(i, j)] - expected[(chosen[i].key, chosen[j].key)] for i, j in pairs]
    within = sum(
        abs(e) <= 0.5 + 0.02 * expected[(chosen[i].key, chosen[j].key)]
        for e, (i, j) in zip(errors, pairs, strict=True)
    )
    km = [distance_km(chosen[i].lat, chosen[i].lon, chosen[j].lat, chosen[j].lon) for i, j in pairs]
    table = default_routes()
    real = [table.get(chosen[i].key, chosen[j].key) for i, j in pairs]
    by_model = [model_rtt_ms(DEFAULT_MODEL, chosen[i], chosen[j]) for i, j in pairs]
    print(f"== routes: the demo's {len(chosen)} regions, public routes + variation (seed 1)")
    print(
        f"  within 0.5 ms + 2% of the spec: {within}/{len(pairs)}; measured - spec: median "
        f"{statistics.median(errors):+.3f} ms, max |err| {max(abs(e) for e in errors):.3f} ms"
    )
    real_r = pearson_r([k for k, r in zip(km, real, strict=True) if r],
                       [r for r in real if r])  # fmt: skip
    print(
        f"  r(RTT, distance): measured {pearson_r(km, [measured[p] for p in pairs]):.3f}, "
        f"public data {real_r:.3f} ({sum(bool(r) for r in real)} pairs), "
        f"distance model alone {pearson_r(km, by_model):.3f}"
    )
    cape, sydney = DEMO_REGIONS.index("aws:af-south-1"), DEMO_REGIONS.index("aws:ap-southeast-2")
    pair = (min(cape, sydney), max(cape, sydney))
    print(
        f"  aws:af-south-1 - aws:ap-southeast-2: measured {measured[pair]:.1f} ms, "
        f"distance model {model_rtt_ms(DEFAULT_MODEL, chosen[cape], chosen[sydney]):.1f} ms"
    )


def bench_controller(keys: SweepKeys) -> None:
    """Pings from the controller (this namespace) to every host of a spread set, with
    the controller placed in CONTROLLER: the modelled RTT from there, per host."""
    chosen = regions(RTT_HOSTS)
    controller = load_catalog().get(CONTROLLER)
    spec = spec_for("bctl", chosen, keys, controller)
    emu.up(spec)
    try:
        procs = [
            subprocess.Popen(
                ["ping", "-n", "-c", "20", "-i", "0.2", h.address],
                stdout=subprocess.PIPE,
                text=True,
            )
            for h in spec.hosts
        ]
        errors, within = [], 0
        for region, proc in zip(chosen, procs, strict=True):
            expected = model_rtt_ms(DEFAULT_MODEL, controller, region)
            err = median_rtt(proc) - expected
            errors.append(err)
            within += abs(err) <= 0.5 + 0.02 * expected
        abs_errors = sorted(abs(e) for e in errors)
        print(
            f"== controller RTT accuracy: controller in {CONTROLLER}, {len(chosen)} hosts, "
            f"median of 20 pings from the root namespace"
        )
        print(
            f"  within 0.5 ms + 2% of the model: {within}/{len(chosen)}; measured - model: "
            f"median {statistics.median(errors):+.3f} ms, max |err| {abs_errors[-1]:.3f} ms "
            f"(farthest host {controller_rtt_ms(controller, chosen, routes=EMPTY):.1f} ms)"
        )
    finally:
        emu.down(spec.id)


_ports = iter(range(5301, 6000))


def iperf3(
    spec: EmulationSpec, src: int, dst: int, duration_s: float = DURATION_S
) -> subprocess.Popen[str]:
    """One test: a one-off server in dst, then the client in src (JSON on stdout)."""
    return iperf3_many(spec, [(src, dst)], duration_s)[0]


def iperf3_many(
    spec: EmulationSpec, pairs: Sequence[tuple[int, int]], duration_s: float = DURATION_S
) -> list[subprocess.Popen[str]]:
    """Tests that run at the same time: every server first, then every client.

    Each test gets its own port, so a server still finishing an earlier test on
    the same host is never in the way.
    """
    started = []
    for src, dst in pairs:
        address, port = spec.hosts[dst].address, str(next(_ports))
        subprocess.run(
            ["ip", "netns", "exec", net.host_ns(spec.id, dst),
             "iperf3", "-s", "-1", "-D", "-B", address, "-p", port],
            check=True,
        )  # fmt: skip
        started.append((src, address, port))
    time.sleep(0.3)
    clients = []
    for src, address, port in started:
        args = ["iperf3", "-c", address, "-p", port, "-t", str(duration_s), "-O", str(OMIT_S), "-J"]
        clients.append(
            subprocess.Popen(
                net.netns_exec(net.host_ns(spec.id, src), args), stdout=subprocess.PIPE, text=True
            )
        )
    return clients


def received_bps(proc: subprocess.Popen[str]) -> float:
    out, _ = proc.communicate(timeout=120)
    try:
        return float(json.loads(out)["end"]["sum_received"]["bits_per_second"])
    except (ValueError, KeyError):
        return float("nan")


def bench_throughput(keys: SweepKeys) -> None:
    """The catalog's shortest and longest pair, and the median pair of a spread set."""
    catalog = load_catalog()
    everything = list(catalog.regions)
    pairs = [(a, b) for a in everything for b in everything if a.key < b.key]
    rtt = {p: model_rtt_ms(DEFAULT_MODEL, *p) for p in pairs}
    spread = regions(RTT_HOSTS)
    spread_pairs = sorted(
        ((a, b) for a in spread for b in spread if a.key < b.key), key=lambda p: rtt[p]
    )
    picks = {
        "shortest": min(pairs, key=lambda p: rtt[p]),
        "median": spread_pairs[len(spread_pairs) // 2],
        "longest": max(pairs, key=lambda p: rtt[p]),
    }
    chosen = list(dict.fromkeys(r for pair in picks.values() for r in pair))
    index = {r.key: i for i, r in enumerate(chosen)}
    spec = spec_for("btput", chosen, keys)
    emu.up(spec)
    m = DEFAULT_MODEL
    try:
        print(
            f"== single-stream iperf3 ({DURATION_S} s, omit {OMIT_S} s) vs model "
            f"min(rate, window/RTT): rate {m.rate_mbit:g} Mbit/s, window "
            f"{m.window_bytes / 1000:.0f} kB (buffer {m.tcp_buffer_bytes} B"
            f" x {m.window_efficiency})"
        )
        for label, (a, b) in picks.items():
            expected = m.expected_throughput_bps(rtt[(a, b)])
            got = received_bps(iperf3(spec, index[a.key], index[b.key]))
            window = got / 8 * rtt[(a, b)] / 1000  # the window the stream really had
            print(
                f"  {label:8} {a.key} -> {b.key}: RTT {rtt[(a, b)]:.1f} ms, "
                f"{got / 1e6:.2f} Mbit/s vs {expected / 1e6:.2f} expected "
                f"({100 * (got / expected - 1):+.1f}%), throughput x RTT {window / 1000:.0f} kB"
            )
    finally:
        emu.down(spec.id)


def short_spec(emulation_id: str, n: int, keys: SweepKeys, rtt_ms: float) -> EmulationSpec:
    """n hosts all `rtt_ms` apart (model RTT), so every test is bound by the rate cap."""
    m = DEFAULT_MODEL
    subnet = emu.reserve_subnet(emulation_id, owner_pid=os.getpid())
    hosts = tuple(
        HostSpec(f"aws:bench-{i}", "aws", f"bench-{i}", address, "emulated")
        for i, address in enumerate(host_addresses(subnet, n))
    )
    delay_us = round((rtt_ms - BASELINE_RTT_MS) * 1000 / 2)
    paths = tuple(
        PathSpec(a.name, b.name, delay_us, m.jitter_us, m.loss_ppm)
        for a in hosts
        for b in hosts
        if a != b
    )
    return EmulationSpec(
        id=emulation_id,
        subnet=subnet,
        hosts=hosts,
        client_pub=keys.client_pub,
        host_key=str(keys.host_key),
        host_pub=keys.host_pub,
        paths=paths,
        rate_mbit=m.rate_mbit,
        tcp_buffer_bytes=m.tcp_buffer_bytes,
        tcp_window_bytes=round(m.window_bytes),
        owner_pid=os.getpid(),
    )


def bench_concurrent(keys: SweepKeys, levels: Sequence[int]) -> None:
    """K rate-bound tests at once on disjoint pairs, with pings on an idle pair."""
    rtt_ms = 5.0
    most = max(levels)
    spec = short_spec("bconc", 2 * most + 2, keys, rtt_ms)
    emu.up(spec)
    expected = DEFAULT_MODEL.expected_throughput_bps(rtt_ms)
    print(
        f"== concurrent single-stream tests, {DEFAULT_MODEL.rate_mbit:g} Mbit/s cap, "
        f"RTT {rtt_ms:g} ms ({DURATION_S} s each), and pings on an idle pair meanwhile"
    )
    print(
        f"{'tests':>5} {'min_Mbit/s':>10} {'mean_Mbit/s':>11} "
        f"{'worst_vs_model':>14} {'rtt_err_ms':>10} {'cpu_busy':>8}"
    )
    try:
        ping_src, ping_dst = 2 * most, 2 * most + 1
        for k in levels:
            clients = iperf3_many(spec, [(2 * t, 2 * t + 1) for t in range(k)])
            busy_before = _cpu_busy()
            time.sleep(OMIT_S + 0.3)
            pinger = ping(net.host_ns(spec.id, ping_src), spec.hosts[ping_dst].address, 15)
            got = [received_bps(c) for c in clients]
            busy = _cpu_busy(busy_before)
            rtt_err = median_rtt(pinger) - rtt_ms
            print(
                f"{k:5} {min(got) / 1e6:10.2f} {statistics.mean(got) / 1e6:11.2f} "
                f"{100 * (min(got) / expected - 1):+13.1f}% {rtt_err:+10.3f} {busy:7.0%}"
            )
            time.sleep(1)
    finally:
        emu.down(spec.id)
    print(
        "  accuracy holds while worst_vs_model >= -15% and |rtt_err| <= 0.5 ms + 2%; "
        "cpu_busy is the whole machine's (other work included)"
    )


def _cpu_busy(since: tuple[int, int] | float | None = None):  # type: ignore[no-untyped-def]
    """Share of CPU time not idle since `since` (a previous call's result)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle, total = fields[3] + fields[4], sum(fields)
    if not isinstance(since, tuple):
        return (idle, total)
    d_total = total - since[1]
    return 1 - (idle - since[0]) / d_total if d_total else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=PARTS, action="append")
    parser.add_argument("--sizes", default="8,46,77")
    parser.add_argument("--levels", default="1,2,4,6,8")
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("bench/emulator.py: skipped, the emulated cloud needs root")
        return 0
    figures = Figures("emulator", "Emulated cloud", goal="77 hosts up < 60 s, down < 10 s; "
                      "RTT within 0.5 ms + 2 % of the model")  # fmt: skip
    with figures.printing(args.json):
        return run(args, figures)


def run(args: argparse.Namespace, figures: Figures) -> int:
    emu.reap()
    parts = args.only or PARTS
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f} (shared machine: noisy)")
    with tempfile.TemporaryDirectory() as tmp:
        keys = ensure_sweep_keys(Path(tmp))
        if "scale" in parts:
            bench_scale(keys, [int(n) for n in args.sizes.split(",")], figures)
        if "rtt" in parts:
            bench_rtt(keys, figures)
        if "routes" in parts:
            bench_routes(keys)
        if "controller" in parts:
            bench_controller(keys)
        if "throughput" in parts:
            bench_throughput(keys)
        if "concurrent" in parts:
            bench_concurrent(keys, [int(n) for n in args.levels.split(",")])
    return 0


if __name__ == "__main__":
    sys.exit(main())
