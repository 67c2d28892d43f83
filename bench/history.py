"""History: change detection on synthetic series, and the store's timings.

Detection (orchestrator.changes) on synthetic RTT series whose noise is taken from the
public data (data/):
  - within a run: each of 20 pings = path RTT + an exponential jitter whose mean is the
    median ping mdev of the skyplane data; a ping is a transient spike with the
    probability and size of doit's tail (doit's avgrtt is a mean of 5 pings, so its
    deviations beyond max(2 ms, 5 %) from a pair's median are put on single pings);
  - run to run: Student-t (3 degrees of freedom, heavy-tailed) relative offsets scaled
    so their median |deviation| is doit's (tests of the same pair on the same day);
  - optionally whole-run spikes (--run-spike, a route flap lasting one run), to show how
    the false-change rate depends on them.
Printed: a 10 ms step on a 150 ms path confirmed within 2 runs (share of trials); false
confirmed changes of a full-catalog profile every 6 h (5,852 pairs x 28 runs = 163,856
pair-runs a week), measured on --pairs pairs and scaled to the catalog.

Timings on a synthetic store (generated in DuckDB): ingest of one 5,852-row sweep with
its raw files, the 1W matrix, one pair's whole history, detection over all pairs for the
latest run. The store holds --sweeps full-catalog sweeps (1,460 = a year every 6 h).

    python bench/history.py                                # full sizes (minutes, GBs)
    python bench/history.py --pairs 300 --trials 200 --sweeps 60   # quick
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import random
import statistics
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from orchestrator import changes, history, history_views, store
from orchestrator.catalog import load_catalog
from orchestrator.geo import distance_km
from orchestrator.netmodel import DEFAULT_MODEL, PUBLIC_DATA, load_rtt_mdev_ms
from orchestrator.schema import MEASUREMENT_COLUMNS, RESULTS_FORMAT_VERSION

PINGS = 20
WEEK_RUNS = 28  # every 6 h
CATALOG_PAIRS = 5852


# ---- the noise, from the public data ---------------------------------------------------


def doit_spread() -> dict[str, float]:
    """From doit's repeated tests of a pair: the median relative deviation from the pair's
    median, and the share and sizes of deviations beyond max(2 ms, 5 %)."""
    by_pair: dict[tuple[str, str], list[float]] = defaultdict(list)
    with (PUBLIC_DATA / "doit-intercloud-throughput-2022-02.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            try:
                by_pair[(row["from_region"], row["to_region"])].append(float(row["avgrtt"]))
            except ValueError:
                continue
    rel, big = [], []
    for values in by_pair.values():
        if len(values) < 2:
            continue
        m = statistics.median(values)
        for x in values:
            rel.append(abs(x - m) / m)
            if abs(x - m) >= max(2.0, 0.05 * m):
                big.append(abs(x - m) / m)
    return {
        "tests": len(rel),
        "median_rel": statistics.median(rel),
        "tail_share": len(big) / len(rel),
        "tail_rel": big,
    }


class Noise:
    def __init__(self, rng: random.Random, run_spike: float) -> None:
        spread = doit_spread()
        self.rng = rng
        self.jitter_ms = statistics.median(load_rtt_mdev_ms())
        # median |t3| is 0.7649: scale so the run offsets' median |deviation| is doit's
        self.run_scale = spread["median_rel"] / 0.7649
        self.ping_spike = spread["tail_share"] / 5  # 5 pings per doit mean
        self.spike_rel = [5 * r for r in spread["tail_rel"]]  # one ping carries the mean's
        self.run_spike = run_spike
        self.spread = spread
        self.heavy = True

    def t3(self) -> float:
        g = self.rng.gauss
        if not self.heavy:  # normal offsets with the same median |deviation|
            return g(0, 1) * 0.7649 / 0.6745
        return g(0, 1) / math.sqrt((g(0, 1) ** 2 + g(0, 1) ** 2 + g(0, 1) ** 2) / 3)

    def run_value(self, rtt_ms: float) -> float:
        """The median of one run's pings on a path of `rtt_ms`."""
        rng = self.rng
        level = rtt_ms * (1 + self.run_scale * self.t3())
        if self.run_spike and rng.random() < self.run_spike:
            level *= 1 + rng.uniform(0.05, 0.3)
        pings = []
        for _ in range(PINGS):
            x = level + rng.expovariate(1 / self.jitter_ms)
            if rng.random() < self.ping_spike:
                x += level * rng.choice(self.spike_rel)
            pings.append(x)
        return statistics.median(pings)


def _series(values: list[float], key: changes.SeriesKey) -> changes.Series:
    runs = [changes.Run(f"r{i:05d}", f"t{i:05d}", v, "fp") for i, v in enumerate(values)]
    return changes.Series(key, runs, 5000.0)


def step_trials(noise: Noise, trials: int) -> float:
    """Share of trials where a +10 ms step on a 150 ms path (28 runs before it) is
    confirmed at the 2nd run after it."""
    key = changes.SeriesKey("bench", "local", "rtt", "aws:a", "gcp:b")
    hits = 0
    for _ in range(trials):
        values = [noise.run_value(150.0) for _ in range(28)]
        values += [noise.run_value(160.0) for _ in range(4)]
        found = changes.detect_series(_series(values, key))
        hits += any(
            e.started_run == "r00028" and e.confirmed_run == "r00029" for e in found.episodes
        )
    return hits / trials


def false_changes(noise: Noise, pairs: int) -> tuple[int, int]:
    """(confirmed changes during the week, pair-runs in the week) on `pairs` steady pairs
    at the catalog's modelled RTTs: 28 runs of history, then a week of 28."""
    catalog = load_catalog()
    regions = catalog.regions
    all_pairs = [(a, b) for a in regions for b in regions if a.key != b.key]
    chosen = noise.rng.sample(all_pairs, min(pairs, len(all_pairs)))
    series = []
    for a, b in chosen:
        rtt = DEFAULT_MODEL.rtt_ms(distance_km(a.lat, a.lon, b.lat, b.lon), a.cloud != b.cloud)
        key = changes.SeriesKey("bench", "local", "rtt", a.key, b.key)
        values = [noise.run_value(rtt) for _ in range(2 * WEEK_RUNS)]
        series.append(_series(values, key))
    found = changes.detect(series)
    week = {f"r{i:05d}" for i in range(WEEK_RUNS, 2 * WEEK_RUNS)}
    confirmed = [e for e in found.episodes if e.confirmed_run in week]
    confirmed += [h for h in found.hosts if h.run_id in week]
    return len(confirmed), len(chosen) * WEEK_RUNS


# ---- the store's timings ---------------------------------------------------------------


def synthetic_store(results: Path, sweeps: int, seed: int = 1) -> int:
    """A store of `sweeps` full-catalog sweeps every 6 h, generated in DuckDB."""
    catalog = load_catalog()
    regions = catalog.regions
    pairs = []
    for a in regions:
        for b in regions:
            if a.key != b.key:
                km = distance_km(a.lat, a.lon, b.lat, b.lon)
                rtt = DEFAULT_MODEL.rtt_ms(km, a.cloud != b.cloud)
                pairs.append(
                    {
                        "src_cloud": a.cloud,
                        "src_region": a.id,
                        "dst_cloud": b.cloud,
                        "dst_region": b.id,
                        "src": a.key,
                        "dst": b.key,
                        "km": round(km, 1),
                        "rtt": rtt,
                        "tput": DEFAULT_MODEL.expected_throughput_bps(rtt),
                    }
                )
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(json.dumps(p) for p in pairs))
    with history.opened(results, create=True) as con:
        con.execute(f"SELECT setseed({1 / (seed + 1)})")
        con.execute(f"CREATE TEMP TABLE pairs AS SELECT * FROM read_json('{f.name}')")
        con.execute(
            "CREATE TEMP TABLE runs AS SELECT i, "
            "TIMESTAMP '2026-01-01' + i * INTERVAL 6 HOUR AS t, "
            "strftime(TIMESTAMP '2026-01-01' + i * INTERVAL 6 HOUR, '%Y%m%dT%H%MZ') || '-' || "
            f"printf('%04x', i % 65536) AS sweep_id FROM range({sweeps}) r(i)"
        )
        con.execute(
            "INSERT INTO sweeps SELECT sweep_id, 'emulated', 'local', true, 'emulated', t, "
            f"{len(pairs)}, {RESULTS_FORMAT_VERSION}, '{{}}', t FROM runs"
        )
        con.execute(
            "INSERT INTO fingerprints SELECT 'synthetic', "
            + ", ".join("''" for _ in history.FINGERPRINT_FIELDS)
        )
        con.execute(
            "INSERT INTO measurements (source, sweep_id, started_utc, backend, src_cloud, "
            "src_region, dst_cloud, dst_region, distance_km, rtt_avg_ms, throughput_bps, streams, "
            "duration_s, round, status, src, dst, fingerprint, rtt_samples_ms) "
            "SELECT 'emulated', r.sweep_id, r.t, 'local', p.src_cloud, p.src_region, p.dst_cloud, "
            "p.dst_region, p.km, p.rtt, p.tput * (0.8 + 0.2 * random()), 1, 5, 1, 'ok', p.src, "
            "p.dst, 'synthetic', "
            f"list_transform(range({PINGS}), k -> round(p.rtt + 0.35 * -ln(1 - random()), 3)) "
            "FROM runs r CROSS JOIN pairs p ORDER BY r.t, p.src, p.dst"
        )
        (rows,) = con.execute("SELECT count(*) FROM measurements").fetchone() or (0,)
    Path(f.name).unlink()
    return int(rows)


def one_sweep_folder(results: Path, when: datetime) -> str:
    """A real full-catalog sweep folder: measurements.csv and every raw ping file."""
    catalog = load_catalog()
    regions = catalog.regions
    sweep_id = store.new_sweep_id(when, "beef")
    folder = results / sweep_id
    n = len(regions)
    store.write_json(
        folder / store.SWEEP_FILE,
        {
            "format_version": RESULTS_FORMAT_VERSION,
            "sweep_id": sweep_id,
            "backend": "local",
            "emulated": True,
            "created_utc": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "params": {"pings": PINGS, "ping_interval_s": 0.2, "duration_s": 5},
        },
    )
    rows = []
    for i, a in enumerate(regions):
        for j, b in enumerate(regions):
            if i == j:
                continue
            round_no = (j - i) % n  # a host pings one peer per round
            rtt = DEFAULT_MODEL.rtt_ms(distance_km(a.lat, a.lon, b.lat, b.lon), a.cloud != b.cloud)
            samples = [rtt + 0.01 * k for k in range(PINGS)]
            text = "".join(
                f"64 bytes from x: icmp_seq={k} ttl=64 time={s:.3f} ms\n"
                for k, s in enumerate(samples)
            )
            text += (
                f"{PINGS} packets transmitted, {PINGS} received, 0% packet loss\n"
                f"rtt min/avg/max/mdev = {rtt:.3f}/{rtt:.3f}/{rtt:.3f}/0.1 ms\n"
            )
            path = store.raw_path(folder, round_no, a.key)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"agent_version": 2, "ping": {"stdout": text}}))
            row = dict.fromkeys(MEASUREMENT_COLUMNS, "")
            row.update(
                sweep_id=sweep_id,
                started_utc=when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                backend="local",
                src_cloud=a.cloud,
                src_region=a.id,
                dst_cloud=b.cloud,
                dst_region=b.id,
                rtt_avg_ms=f"{rtt:.3f}",
                throughput_bps="1e9",
                streams="1",
                duration_s="5",
                round=str(round_no),
                status="ok",
            )
            rows.append(row)
    store.write_rows(folder, rows)
    return sweep_id


def timed(what: str, fn, goal_s: float):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    took = time.perf_counter() - t0
    print(f"  {what}: {took:.3f} s (goal < {goal_s:g} s)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000, help="step trials")
    ap.add_argument(
        "--pairs", type=int, default=CATALOG_PAIRS, help="steady pairs for the false rate"
    )
    ap.add_argument(
        "--run-spike",
        type=float,
        nargs="*",
        default=[0.0, 0.001, 0.01],
        help="whole-run spike probabilities to try",
    )
    ap.add_argument("--sweeps", type=int, default=1460, help="full-catalog sweeps in the store")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    noise = Noise(rng, 0.0)
    s = noise.spread
    print(
        f"noise from the public data: doit {s['tests']} repeated tests: median relative "
        f"deviation {100 * s['median_rel']:.2f} % (run-to-run t3), {100 * s['tail_share']:.1f} % "
        f"beyond max(2 ms, 5 %) (single-ping spikes, {100 * noise.ping_spike:.2f} % of pings); "
        f"skyplane median mdev {noise.jitter_ms:.3f} ms (ping jitter)"
    )
    for heavy in (True, False):
        noise.heavy = heavy
        hit = step_trials(noise, args.trials)
        print(
            f"10 ms step on a 150 ms path confirmed within 2 runs, run-to-run "
            f"{'t3' if heavy else 'normal'}: {100 * hit:.1f} % of {args.trials} trials "
            "(goal >= 95 %)"
        )
    noise.heavy = True
    for p in args.run_spike:
        noise.run_spike = p
        t0 = time.perf_counter()
        found, pair_runs = false_changes(noise, args.pairs)
        per_week = found / pair_runs * CATALOG_PAIRS * WEEK_RUNS
        print(
            f"false confirmed changes, whole-run spikes {100 * p:g} %: {found} in {pair_runs:,} "
            f"pair-runs ({args.pairs} pairs x {WEEK_RUNS} runs) = {per_week:.2f} per catalog "
            f"week of 163,856 (goal < 1) [{time.perf_counter() - t0:.1f} s]"
        )

    with tempfile.TemporaryDirectory(prefix="interregion-hist-") as tmp:
        results = Path(tmp)
        t0 = time.perf_counter()
        rows = synthetic_store(results, args.sweeps, args.seed)
        size_mb = history.store_path(results).stat().st_size / 2**20
        print(
            f"store: {args.sweeps} full-catalog sweeps, {rows:,} rows x {PINGS} samples, "
            f"{size_mb:.0f} MiB, generated in {time.perf_counter() - t0:.1f} s"
        )
        when = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=6 * args.sweeps)
        sweep_id = one_sweep_folder(results, when)
        n = timed(
            "ingest of one sweep (raw files parsed)",
            lambda: history.ingest_sweep(results, sweep_id),
            1.0,
        )
        print(f"    ({n:,} rows)")
        with history.opened(results, read_only=True) as con:
            doc = timed(
                "matrix rtt p50 1W", lambda: history_views.matrix(con, "rtt", "p50", "1W"), 1.0
            )
            print(f"    ({len(doc['matrices'][0]['cells']):,} cells)")
            pair = ("aws:us-east-1", "gcp:europe-west1")
            one = timed(
                "one pair, all of its history",
                lambda: history_views.pair_history(con, pair, "rtt", "all"),
                0.2,
            )
            print(f"    ({one['sources'][0]['tests']} tests)")

            def detect() -> changes.Detection:
                return changes.detect(history_views.change_series(con))

            found = timed("detection over all pairs (latest 56 sweeps)", detect, 5.0)
            print(f"    ({len(found.episodes)} episodes, {len(found.hosts)} host changes)")


if __name__ == "__main__":
    main()
