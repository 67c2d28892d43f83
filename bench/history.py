"""History: change detection on synthetic series, and the store's timings.

Detection (orchestrator.history.changes, the issue's rules) on synthetic RTT series whose noise
is fitted on the public data (orchestrator.netmodel.noise):
  - run to run: doit's pairs tested on two days (GCP<->GCP: the same zone each time, i.e.
    comparable runs); the model (Student-t offsets, 3 degrees of freedom, with a per-pair
    log-normal scale) is fitted so that the DIFFERENCE of two simulated runs matches their
    quartiles (it then matches p90-p99 too);
  - within a run: skyplane's 10-ping runs: exponential ping jitter (median mdev) and
    transient spikes on single pings; a run's value is the median of its 20 pings;
  - optionally whole-run spikes (--run-spike, a route flap lasting one run).
Printed: a 10 ms step on a 150 ms path confirmed within 2 runs (share of trials, each a
path with its own scale), with ablations (pooled shrinkage, floor, mean of pings, later
confirmation), what-if rules and smaller run-to-run noise; false confirmed changes of a
full-catalog profile every 6 h (5,852 pairs x 28 runs = 163,856 pair-runs a week).

Timings on a synthetic year (generated in DuckDB in a child process, in a temporary
folder removed at the end): ingest of one 5,852-row sweep with its raw files, the 1W
matrix, one pair's whole history, detection over all pairs for the latest run, report
of the latest sweep plus the site (with its history pages), and the peak memory of
those commands. --sweeps full-catalog sweeps (1,460 = a year every 6 h, 8.5M rows).

    python bench/history.py                      # full sizes (a few minutes, ~1 GiB)
    python bench/history.py --small              # 60 sweeps, 300 pairs, 300 trials
    python bench/history.py --only quality       # or --only store
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import resource
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from orchestrator.core.geo import distance_km
from orchestrator.history import changes
from orchestrator.history import store as history
from orchestrator.history import views as history_views
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel import noise as rtt_noise
from orchestrator.netmodel.model import DEFAULT_MODEL
from orchestrator.results import store
from orchestrator.results.schema import MEASUREMENT_COLUMNS, RESULTS_FORMAT_VERSION

PINGS = 20
WEEK_RUNS = 28  # every 6 h
CATALOG_PAIRS = 5852
RULES = changes.Params()  # the rules, as orchestrator.history.changes has them


# ---- detection quality on noise calibrated to the public data -------------------------


@dataclass(frozen=True)
class Variant:
    """One way of running the step trials: the noise, the rules and how a run is read."""

    name: str
    model: rtt_noise.NoiseModel
    params: changes.Params = RULES
    run_stat: str = "median"  # of a run's pings: "median" (the store's) or "mean"
    pooled: bool = False  # shrink toward the scale pooled over similar pairs
    within: int = 2  # confirmed by the n-th run after the step


def _series(values: Sequence[float], key: changes.SeriesKey) -> changes.Series:
    runs = [changes.Run(f"r{i:05d}", f"t{i:05d}", v, "fp") for i, v in enumerate(values)]
    return changes.Series(key, runs, 5000.0)


def step_trials(v: Variant, trials: int, seed: int) -> float:
    """Share of trials (each a 150 ms path with its own noise scale, 28 runs of history)
    where a +10 ms step is confirmed by the `within`-th run after it."""
    rng = random.Random(seed)
    key = changes.SeriesKey("bench", "local", "rtt", "aws:a", "gcp:b")
    hits = 0
    for _ in range(trials):
        scale = v.model.pair_scale(rng)
        values = [v.model.run_value(rng, 150.0, scale, v.run_stat) for _ in range(28)]
        values += [v.model.run_value(rng, 160.0, scale, v.run_stat) for _ in range(4)]
        pooled = None
        if v.pooled:  # the group's scale: what the own scale of a median pair would be
            fit = v.model.fit
            pooled = changes.MAD_TO_SIGMA * rtt_noise.median_abs_t(fit.df) * 150 * fit.median_scale
        found = changes.detect_series(_series(values, key), v.params, pooled)
        # an episode of the step: started at or after it, confirmed by the within-th run
        last = f"r{28 + v.within - 1:05d}"
        hits += any(e.started_run >= "r00028" and e.confirmed_run <= last for e in found.episodes)
    return hits / trials


def false_changes(
    model: rtt_noise.NoiseModel, pairs: int, seed: int, p: changes.Params = RULES
) -> tuple[int, int]:
    """(confirmed changes during the week, pair-runs in the week) on `pairs` steady pairs
    of the catalog at their modelled RTTs, each with its own noise scale: 28 runs of
    history, then a week of 28, detected together (pooled scales, host changes)."""
    rng = random.Random(seed)
    regions = load_catalog().regions
    all_pairs = [(a, b) for a in regions for b in regions if a.key != b.key]
    chosen = rng.sample(all_pairs, min(pairs, len(all_pairs)))
    series = []
    for a, b in chosen:
        rtt = DEFAULT_MODEL.rtt_ms(distance_km(a.lat, a.lon, b.lat, b.lon), a.cloud != b.cloud)
        key = changes.SeriesKey("bench", "local", "rtt", a.key, b.key)
        scale = model.pair_scale(rng)
        values = [model.run_value(rng, rtt, scale) for _ in range(2 * WEEK_RUNS)]
        series.append(_series(values, key))
    found = changes.detect(series, p)
    week = {f"r{i:05d}" for i in range(WEEK_RUNS, 2 * WEEK_RUNS)}
    confirmed = [e for e in found.episodes if e.confirmed_run in week]
    confirmed += [h for h in found.hosts if h.run_id in week]
    return len(confirmed), len(chosen) * WEEK_RUNS


# ---- the store's timings ---------------------------------------------------------------


def catalog_pairs_file(folder: Path) -> Path:
    """The full catalog's directed pairs with their modelled RTT, as JSON lines."""
    regions = load_catalog().regions
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
    path = folder / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in pairs))
    return path


GENERATE_CHUNK = 28  # sweeps per insert (a week), then old rows archived, as ingests do


def synthetic_store(results: Path, sweeps: int, seed: int = 1) -> tuple[int, float]:
    """A store of `sweeps` full-catalog sweeps every 6 h, generated in DuckDB, a week of
    sweeps per transaction, each followed by the archiving an ingest does. Returns the
    rows and the longest archiving step (s)."""
    pairs_file = catalog_pairs_file(results)
    with history.opened(results, create=True) as con:
        con.execute("SET preserve_insertion_order = false")
        con.execute(f"SELECT setseed({1 / (seed + 1)})")
        con.execute(f"CREATE TEMP TABLE pairs AS SELECT * FROM read_json('{pairs_file}')")
        n_pairs = con.execute("SELECT count(*) FROM pairs").fetchone()[0]  # type: ignore[index]
        con.execute(
            "CREATE TEMP TABLE runs AS SELECT i, "
            "TIMESTAMP '2026-01-01' + i * INTERVAL 6 HOUR AS t, "
            "strftime(TIMESTAMP '2026-01-01' + i * INTERVAL 6 HOUR, '%Y%m%dT%H%MZ') || '-' || "
            f"printf('%04x', i % 65536) AS sweep_id FROM range({sweeps}) r(i)"
        )
        con.execute(
            "INSERT INTO fingerprints SELECT 'synthetic', "
            + ", ".join("''" for _ in history.FINGERPRINT_FIELDS)
        )
        longest = 0.0
        for first in range(0, sweeps, GENERATE_CHUNK):
            with history.transaction(con):
                con.execute(
                    "INSERT INTO sweeps SELECT sweep_id, 'emulated', 'local', true, "
                    f"'emulated', t, {n_pairs}, {RESULTS_FORMAT_VERSION}, '{{}}', t FROM runs "
                    "WHERE i >= ? AND i < ?",
                    [first, first + GENERATE_CHUNK],
                )
                con.execute(
                    "INSERT INTO recent (source, sweep_id, started_utc, backend, "
                    "src_cloud, src_region, dst_cloud, dst_region, distance_km, rtt_avg_ms, "
                    "throughput_bps, streams, duration_s, round, status, src, dst, fingerprint, "
                    "rtt_samples_ms) "
                    "SELECT 'emulated', r.sweep_id, r.t, 'local', p.src_cloud, p.src_region, "
                    "p.dst_cloud, p.dst_region, p.km, p.rtt, p.tput * (0.8 + 0.2 * random()), "
                    "1, 5, 1, 'ok', p.src, p.dst, 'synthetic', "
                    f"list_transform(range({PINGS}), "
                    "k -> round(p.rtt + 0.35 * -ln(1 - random()), 3)) "
                    "FROM runs r CROSS JOIN pairs p WHERE r.i >= ? AND r.i < ? "
                    "ORDER BY r.t, p.src, p.dst",
                    [first, first + GENERATE_CHUNK],
                )
                t0 = time.perf_counter()
                history.archive_old_rows(con)
                longest = max(longest, time.perf_counter() - t0)
        con.execute("CHECKPOINT")
        (rows,) = con.execute("SELECT count(*) FROM measurements").fetchone() or (0,)
    pairs_file.unlink()
    return int(rows), longest


def _generate(results: str, sweeps: int, seed: int) -> tuple[int, float]:
    return synthetic_store(Path(results), sweeps, seed)


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
    """Wall time against the goal, and the process's CPU time (all threads): on a shared
    machine the wall time depends on the others' load, the CPU time much less."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    took, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"  {what}: {took:.3f} s (goal < {goal_s:g} s; CPU {cpu:.3f} s)")
    return out


def peak_rss_mib(who: int) -> float:
    """Peak resident memory (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(who).ru_maxrss / 1024


def _scaled(model: rtt_noise.NoiseModel, factor: float, spread: float | None = None):  # type: ignore[no-untyped-def]
    fit = model.fit
    new_fit = rtt_noise.Fit(
        fit.median_scale * factor, fit.pair_spread if spread is None else spread, fit.df, 0.0
    )
    return replace(model, fit=new_fit)


def quality(args: argparse.Namespace) -> None:
    model, diffs = rtt_noise.public_model(comparable_only=True)
    model_all, diffs_all = rtt_noise.public_model(comparable_only=False)
    # the data (two runs per pair) cannot tell heavy tails within a pair from a spread
    # across pairs: the same fit with normal offsets within a pair is the other reading
    normal, _ = rtt_noise.public_model(comparable_only=True, df=math.inf)

    def quartiles(d: Sequence[float]) -> str:
        return "/".join(f"{100 * rtt_noise.quantile(d, q):.2f}" for q in (0.25, 0.5, 0.75, 0.9))

    for name, m, d in (("GCP<->GCP (comparable runs)", model, diffs),
                       ("all pairs", model_all, diffs_all)):  # fmt: skip
        f = m.fit
        print(
            f"doit run-to-run, {name}: {len(d)} differences of two runs, |x1-x2|/mean "
            f"p25/p50/p75/p90 {quartiles(d)} % -> offsets t{f.df:g} x scale median "
            f"{100 * f.median_scale:.2f} %, log-normal spread across pairs {f.pair_spread:g}"
        )
    within = rtt_noise.direction_differences(rtt_noise.PUBLIC_DATA / rtt_noise.DOIT_CSV)
    print(
        f"doit within a run, GCP<->GCP: the two directions of {len(within)} pairs in the same "
        f"run differ by p25/p50/p75/p90 {quartiles(within)} %: a run's own noise is that "
        f"small, so the differences above are of runs"
    )
    print(
        f"skyplane within a run: ping jitter exponential, mean {model.jitter_ms:.3f} ms; "
        f"transient spikes on {100 * model.spikes.per_ping:.2f} % of pings; a run's value is "
        f"the median of its {model.pings} pings"
    )
    # the old bench: doit's half-differences read as one run's deviation, every pair alike
    old = _scaled(model_all, 0.00559 / 0.7649 / model_all.fit.median_scale, 0.0)
    variants = [
        Variant("issue's rules, noise fitted on GCP<->GCP  [headline]", model),
        Variant("issue's rules, noise fitted on all pairs", model_all),
        Variant(
            f"issue's rules, fitted on GCP<->GCP, normal within a pair (scale "
            f"{100 * normal.fit.median_scale:.2f} %, spread {normal.fit.pair_spread:g})",
            normal,
        ),
        Variant("issue's rules, the previous bench's noise (half-differences)", old),
        Variant("  ablation: scale shrunk toward the pooled scale", model, pooled=True),
        Variant(
            "  ablation: no MAD floor",
            model,
            changes.Params(floor_rel=0.0, floor_rtt_ms=0.0),
        ),
        Variant("  ablation: a run's mean of pings instead of median", model, run_stat="mean"),
        Variant("  ablation: confirmed by the 3rd run after the step", model, within=3),
        Variant("  ablation: confirmed by the 4th run after the step", model, within=4),
        Variant("  what-if rule: z >= 3", model, changes.Params(z=3.0)),
        Variant("  what-if rule: change >= 2 ms and 3 %", model, changes.Params(rtt_min_rel=0.03)),
    ]
    variants += [
        Variant(f"  sensitivity: run-to-run scale x {k:g}", _scaled(model, k))
        for k in (0.75, 0.5, 0.35, 0.25)
    ]
    print(
        f"10 ms step on a 150 ms path confirmed within 2 runs ({args.trials} trials, goal >= 95 %):"
    )
    for v in variants:
        hit = step_trials(v, args.trials, args.seed)
        print(f"  {100 * hit:5.1f} %  {v.name}")
    print(
        f"false confirmed changes per catalog week (163,856 pair-runs), measured on "
        f"{args.pairs} steady pairs x {WEEK_RUNS} runs, goal < 1:"
    )
    for name, m in (
        ("noise fitted on GCP<->GCP", model),
        ("noise fitted on GCP<->GCP, normal within a pair", normal),
        ("run-to-run scale x 0.25", _scaled(model, 0.25)),
    ):
        for spike in args.run_spike:
            t0 = time.perf_counter()
            found, pair_runs = false_changes(replace(m, run_spike=spike), args.pairs, args.seed)
            per_week = found / pair_runs * CATALOG_PAIRS * WEEK_RUNS
            print(
                f"  {per_week:7.2f}  {name}, whole-run spikes {100 * spike:g} % "
                f"({found} in {pair_runs:,} pair-runs) [{time.perf_counter() - t0:.1f} s]"
            )


def store_timings(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="interregion-hist-") as tmp:
        results = Path(tmp)
        t0 = time.perf_counter()
        # generated in a child process: its memory is not the measured commands'
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(1, mp_context=spawn) as pool:
            rows, archiving = pool.submit(_generate, str(results), args.sweeps, args.seed).result()
        size_mb = history.store_path(results).stat().st_size / 2**20
        print(
            f"store: {args.sweeps} full-catalog sweeps, {rows:,} rows x {PINGS} samples, "
            f"{size_mb:.0f} MiB, generated in {time.perf_counter() - t0:.1f} s "
            f"(generator peak {peak_rss_mib(resource.RUSAGE_CHILDREN):.0f} MiB); the longest "
            f"weekly archiving of old rows into pair order (one ingest a week pays it): "
            f"{archiving:.2f} s"
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

        def report_and_site() -> int:
            from orchestrator.report.build import load_inputs, write_report
            from orchestrator.site import build as site

            folder = store.sweep_dir(results, sweep_id)
            loaded = load_inputs(sweep_dirs_=[folder])
            write_report(loaded, folder / "report", png=not args.no_png)
            site.build_site(results / "site", results)
            return sum(1 for _ in (results / "site" / "history" / "pairs").iterdir())

        pages = timed(
            f"report of the latest sweep{' (no PNG)' if args.no_png else ''} plus site",
            report_and_site,
            30.0,
        )
        print(f"    ({pages:,} pair pages)")
        peak = peak_rss_mib(resource.RUSAGE_SELF)
        print(f"  peak memory of the commands above: {peak:.0f} MiB (goal < 2048 MiB)")


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
    ap.add_argument(
        "--small",
        action="store_true",
        help="quick sizes: 60 sweeps, 300 pairs, 300 trials (overrides those options)",
    )
    ap.add_argument("--only", choices=("quality", "store"), help="run one half only")
    ap.add_argument("--no-png", action="store_true", help="report without PNG charts")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    # a stopped bench still removes its temporary store (TemporaryDirectory's exit)
    signal.signal(signal.SIGTERM, lambda _sig, _frame: sys.exit(143))
    if args.small:
        args.sweeps, args.pairs, args.trials = 60, 300, 300
    if args.only != "store":
        quality(args)
    if args.only != "quality":
        store_timings(args)


if __name__ == "__main__":
    main()
