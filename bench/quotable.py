"""Numbers a user can quote (issues 19 and 29): distance bands, flags, physical fits, and
what the emulator's clean paths say about throughput accounting and sentinels.

Prints, for `make run`'s selection (the Makefile's RUN_REGIONS) and for --max-regions 8
(both spreads), the directed pairs per distance band; then, for the vendored Skyplane
and DoiT data (data/, converted as `history convert` does), the rows flagged per flag
and, per cloud pair over the unflagged rows, the physical fit (Theil-Sen, intercept >= 0,
slope >= the fibre's 10.0069 ms per 1000 km), whether the constraints bind (the free
Theil-Sen line and least squares beside it), Pearson and Spearman, and the RTT
inflation over the fibre floor (median and quartiles).

Then (issue 29, items 3 and 4), with the load: Skyplane's gcp->gcp rows per network tier
(rows and distinct pairs, before and after flags: the tiers are never pooled), the 95 %
bootstrap intervals (resampling region pairs) of every cloud-pair group's median RTT and
fit slope, with their widths, the pairs beside n and the fit's marks, for both public
sets; and `advise`'s low-high range (the network model, no store) against the public
medians for 10 pairs DoiT measured: the pair's Premium RTT median (Skyplane, else DoiT)
inside the RTT range, DoiT's single-stream throughput median inside the default TCP
throughput range.

Then (issue 29), with the machine's load before and after, for emulated sweeps of both
measures on clean paths (no perturbation): `--run` runs one on `make run`'s regions (as
root; about 6 minutes), `--sweeps DIR ...` reads sweep folders already made. From each
test's raw iperf3 output (both ends), parsed as `collect` does:
  flagged        throughput rows flagged receiver_exceeds_sender (aligned counts)
                                                                goal < 1 % of the rows
  old rule       the rows the rule before alignment flagged: iperf3's receiver rate
                 over 1 % above the sender's
  aligned        rows whose counts were aligned (both ends' omitted intervals complete)
  spreads        receiver against sender, min / median / max: iperf3's own figures, and
                 the aligned counts (never above 0 for a good test)
  sentinels      the sentinel check (like with like) and its warnings      goal 0
                 beside it what matching by (src, dst) alone gave

    python bench/quotable.py [--run] [--sweeps DIR ...] [--no-public]
    (not numbers.py: that name would hide the standard library's)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from _figures import Figures

from orchestrator.advise import sources, spread
from orchestrator.advise import tcp_model as advise_model
from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.core.geo import FIBRE_KM_S, FIBRE_RTT_MS_PER_KM
from orchestrator.exchange import public_data
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import load_public_samples
from orchestrator.netmodel.routes import default_routes
from orchestrator.plan import allowance
from orchestrator.plan.selection import SelectionSpec, pairs_per_band, select
from orchestrator.report import analyze, build, uncertainty
from orchestrator.results import files as store
from orchestrator.results import flags, parse, record, tiers
from orchestrator.results import raw_rows as collect

FIGURES = Figures("quotable", "Numbers a user can quote")

DATA = {
    "skyplane": paths.DATA / "skyplane-latency-2022.csv",
    "doit": paths.DATA / "doit-intercloud-throughput-2022-02.csv",
}


def run_regions() -> tuple[str, ...]:
    text = (paths.ROOT / "Makefile").read_text()
    parts = re.findall(r"^RUN_REGIONS := (?:\$\(RUN_REGIONS\),)?(.*)$", text, re.M)
    return tuple(",".join(parts).split(","))


def bands() -> None:
    catalog = load_catalog(paths.CATALOG)
    cases = {
        "make run (RUN_REGIONS)": SelectionSpec(regions=run_regions()),
        "--max-regions 8 (--spread bands)": SelectionSpec(max_regions=8),
        "--max-regions 8 --opt-in": SelectionSpec(max_regions=8, opt_in=True),
        "--max-regions 8 --spread globe": SelectionSpec(max_regions=8, spread="globe"),
    }
    print("directed pairs per distance band")
    table = None
    for name, spec in cases.items():
        selection = select(catalog, spec)
        counts = pairs_per_band(selection.pairs)
        shown = ", ".join(f"{band} {n}" for band, n in counts.items())
        empty = [band for band, n in counts.items() if not n]
        note = f"  EMPTY: {', '.join(empty)}" if empty else ""
        print(f"  {name:34} {len(selection.regions)} regions: {shown}{note}")
        if table is None:
            table = FIGURES.table("directed pairs per distance band", ["selection", "regions",
                                  *(f"{band} km" for band in counts)])  # fmt: skip
        table.add(name, len(selection.regions), *counts.values())
        if name.startswith("make run"):
            print(f"    {', '.join(r.key for r in selection.regions)}")


def _fmt(x: float, spec: str = ".2f") -> str:
    return format(x, spec) if x == x else "-"


def data_set(name: str, path: Path) -> None:
    catalog = load_catalog(paths.CATALOG)
    rows = public_data.convert(name, path.read_text(encoding="utf-8"), catalog)
    counts = flags.count(r["flags"] for r in rows)
    flagged = sum(1 for r in rows if r["flags"])
    print(f"\n{name}: {len(rows)} AWS/GCP rows, {flagged} flagged")
    for flag, n in counts.items():
        print(f"  {flag:24} {n:5d}  ({flags.REASONS[flag]})")
    kept = [r for r in rows if not r["flags"] and r["distance_km"]]
    groups: dict[str, tuple[list[float], list[float]]] = {}
    for r in kept:
        rtt = flags.row_rtt_ms(r)
        if rtt is None:
            continue
        tier = tiers.of_row(r)  # tiers never pooled: 'all' is the default tier's rows
        named = tiers.group_name(f"{r['src_cloud']}-{r['dst_cloud']}", tier)
        for group in ("all", named) if tiers.is_default(tier) else (named,):
            xs, ys = groups.setdefault(group, ([], []))
            xs.append(float(r["distance_km"]))
            ys.append(rtt)
    print(
        f"  {'cloud pair':24} {'n':>5} {'fit ms@0':>8} {'ms/1000km':>9} {'binds':>6} "
        f"{'free TS':>14} {'OLS':>14} {'Pearson':>7} {'Spearman':>8} "
        f"{'inflation p25/p50/p75':>22}"
    )
    fits = FIGURES.table(
        f"{name}: {len(rows):,} AWS/GCP rows, {flagged:,} flagged; physical RTT fits "
        "(Theil-Sen) over the unflagged rows",
        ["cloud pair", "n", "ms at 0 km", "ms per 1000 km", "Pearson", "Spearman",
         "RTT over the fibre floor p25 / p50 / p75"],
    )  # fmt: skip
    for group in [*analyze.GROUPS, *sorted(set(groups) - set(analyze.GROUPS))]:
        if group not in groups:
            continue
        xs, ys = groups[group]
        fit = analyze.physical_rtt_fit(xs, ys)
        free = analyze.theil_sen(xs, ys)
        ols = analyze.linear_fit(xs, ys)
        binds = []
        if free.slope < FIBRE_RTT_MS_PER_KM:
            binds.append("slope")
        if fit.intercept == 0.0 and free.intercept < 0.0:
            binds.append("icpt")
        infl = analyze.finite([analyze.route_inflation(y, x) for x, y in zip(xs, ys, strict=True)])
        p25, p50, p75 = analyze.percentiles(infl, (25, 50, 75))
        ok = fit.intercept >= 0.0 and fit.slope >= FIBRE_RTT_MS_PER_KM
        print(
            f"  {group:24} {len(xs):5d} {_fmt(fit.intercept, '.1f'):>8} "
            f"{_fmt(fit.slope * 1000):>9} {','.join(binds) or 'no':>6} "
            f"{_fmt(free.intercept, '.1f') + ' + ' + _fmt(free.slope * 1000):>14} "
            f"{_fmt(ols.intercept, '.1f') + ' + ' + _fmt(ols.slope * 1000):>14} "
            f"{_fmt(fit.r, '.3f'):>7} {_fmt(analyze.spearman_rho(xs, ys), '.3f'):>8} "
            f"{_fmt(p25) + ' / ' + _fmt(p50) + ' / ' + _fmt(p75):>22}"
            + ("" if ok else "  NOT PHYSICAL")
        )
        fits.add(group, len(xs), _fmt(fit.intercept, ".1f"), _fmt(fit.slope * 1000),
                 _fmt(fit.r, ".3f"), _fmt(analyze.spearman_rho(xs, ys), ".3f"),
                 f"{_fmt(p25)} / {_fmt(p50)} / {_fmt(p75)}")  # fmt: skip


# ---- issue 29: tiers kept apart, and every figure's uncertainty ---------------------------


def tier_counts(path: Path) -> None:
    catalog = load_catalog(paths.CATALOG)
    rows = public_data.convert("skyplane", path.read_text(encoding="utf-8"), catalog)
    gcp = [r for r in rows if r["src_cloud"] == r["dst_cloud"] == "gcp"]
    print(f"\nSkyplane gcp->gcp per network tier (source/destination): {load()}")
    print(f"  {'tier':18} {'rows':>5} {'pairs':>5} {'unflagged':>9} {'pairs':>5}")
    table = FIGURES.table(
        "Skyplane gcp->gcp per network tier (never pooled)",
        ["tier", "rows", "pairs", "unflagged rows", "unflagged pairs"],
    )
    for tier in sorted({r["network_tier"] for r in gcp}):
        mine = [r for r in gcp if r["network_tier"] == tier]
        kept = [r for r in mine if not flags.rtt_invalid(r["flags"])]

        def pairs(rs: Sequence[Mapping[str, Any]]) -> int:
            return len({(r["src_region"], r["dst_region"]) for r in rs})

        print(f"  {tier:18} {len(mine):5d} {pairs(mine):5d} {len(kept):9d} {pairs(kept):5d}")
        table.add(tier, len(mine), pairs(mine), len(kept), pairs(kept))
    print(f"  {'all tiers pooled':18} {len(gcp):5d}   (what report counted as gcp-gcp before)")


def intervals(name: str, path: Path) -> None:
    catalog = load_catalog(paths.CATALOG)
    rows = public_data.convert(name, path.read_text(encoding="utf-8"), catalog)
    with tempfile.TemporaryDirectory(prefix="quotable-") as tmp:
        csv_path = Path(tmp) / f"{name}.csv"
        csv_path.write_text(store.csv_text(rows, extra=public_data.EXTRA_COLUMNS))
        loaded = build.load_inputs(input_files=[csv_path], catalog=catalog)
    started = time.perf_counter()
    summaries = analyze.summarize(loaded.data)
    took = time.perf_counter() - started
    print(
        f"\n{name}: 95 % bootstrap intervals over region pairs ({uncertainty.DRAWS} draws, "
        f"seed {uncertainty.SEED}), unflagged rows; summarized in {took:.1f} s; {load()}"
    )
    print(
        f"  {'group':26} {'n':>5} {'pairs':>5} {'inflation':>9} {'95 % CI':>11} "
        f"{'RTT median':>10} {'95 % CI':>15} "
        f"{'width':>6} {'ms/1000km':>9} {'95 % CI':>13} {'width':>5}  marks, intercept"
    )
    table = FIGURES.table(
        f"{name}: 95 % bootstrap intervals over region pairs, unflagged rows",
        ["group", "n", "pairs", "RTT median ms", "95 % CI", "width ms", "ms per 1000 km",
         "95 % CI", "width", "marks"],
    )  # fmt: skip
    for s in summaries:
        u = s.uncertainty
        if not s.n or u is None:
            continue
        slope = s.rtt_fit.slope * 1000
        infl = (u.inflation_median.low, u.inflation_median.high)
        table.add(
            s.cloud_pair, s.n, u.pairs, _fmt(s.rtt_median_over_tests_ms),
            uncertainty.range_text(u.rtt_median.low, u.rtt_median.high),
            _fmt(u.rtt_median.width, ".1f"), _fmt(slope),
            uncertainty.range_text(u.slope.low * 1000, u.slope.high * 1000, "{:.2f}"),
            _fmt(u.slope.width * 1000), ",".join(u.fit_marks) or "-",
        )  # fmt: skip
        print(
            f"  {s.cloud_pair:26} {s.n:5d} {u.pairs:5d} {_fmt(s.route_inflation_median):>9} "
            f"{uncertainty.range_text(*infl, '{:.2f}'):>11} "
            f"{_fmt(s.rtt_median_over_tests_ms):>10} "
            f"{uncertainty.range_text(u.rtt_median.low, u.rtt_median.high):>15} "
            f"{_fmt(u.rtt_median.width, '.1f'):>6} {_fmt(slope):>9} "
            f"{uncertainty.range_text(u.slope.low * 1000, u.slope.high * 1000, '{:.2f}'):>13} "
            f"{_fmt(u.slope.width * 1000):>5}  {','.join(u.fit_marks) or '-'}, "
            f"{u.intercept_text(s.rtt_fit.intercept)}"
        )


ADVISE_PAIRS = 10


def advise_ranges() -> None:
    """advise's range (network model, no store) against the public medians, 10 pairs."""
    catalog = load_catalog(paths.CATALOG)
    samples = load_public_samples().samples
    measured: dict[tuple[str, str], list[float]] = {}
    for x in samples:
        if x.source == "doit" and x.throughput_bps and x.src != x.dst:
            measured.setdefault((x.src, x.dst), []).append(x.throughput_bps)
    pairs = sorted(measured)
    chosen = [pairs[i * len(pairs) // ADVISE_PAIRS] for i in range(ADVISE_PAIRS)]
    premium = default_routes(tier=tiers.DEFAULT)
    print(
        f"\nadvise --size 10GB, network model (no store), Premium tier: its range against the "
        f"public medians for {ADVISE_PAIRS} pairs DoiT measured; {load()}"
    )
    print(
        f"  {'pair':44} {'RTT':>6} {'range':>13} {'public':>7} {'in':>3} "
        f"{'Mbit/s':>7} {'range':>13} {'DoiT':>6} {'in':>3} {'loss below':>10}"
    )
    table = FIGURES.table(
        f"advise --size 10GB (network model, Premium): its range against the public "
        f"medians, {ADVISE_PAIRS} pairs DoiT measured",
        ["pair", "RTT ms", "range", "public", "inside", "Mbit/s", "range", "DoiT", "inside",
         "loss below"],
    )  # fmt: skip
    inside_rtt = inside_bps = 0
    with tempfile.TemporaryDirectory(prefix="quotable-") as empty:
        for src, dst in chosen:
            a, b = catalog.get(src), catalog.get(dst)
            evidence = sources.find_evidence(Path(empty), src, dst, tier=tiers.DEFAULT)
            facts = sources.path_facts(evidence, a, b, catalog, tiers.DEFAULT)
            advice = advise_model.advise(facts, 10 * 10**9)
            ranged = spread.advice_range(
                facts, sources.spread_of(evidence, facts, a, b), 10 * 10**9, 4, None, advice
            )
            rtt = ranged.spread.rtt_ms
            public_rtt = premium.get(src, dst)
            slow = ranged.slow.option("default").throughput_bps
            fast = ranged.fast.option("default").throughput_bps
            doit = statistics.median(measured[(src, dst)])
            in_rtt = public_rtt is not None and rtt.low <= public_rtt <= rtt.high
            in_bps = slow <= doit <= fast
            inside_rtt += in_rtt
            inside_bps += in_bps
            print(
                f"  {src + ' -> ' + dst:44} {facts.rtt_ms:6.1f} "
                f"{uncertainty.range_text(rtt.low, rtt.high):>13} "
                f"{_fmt(public_rtt if public_rtt is not None else math.nan, '.1f'):>7} "
                f"{'yes' if in_rtt else 'NO':>3} "
                f"{advice.option('default').throughput_bps / 1e6:7.1f} "
                f"{uncertainty.range_text(slow / 1e6, fast / 1e6):>13} {doit / 1e6:6.1f} "
                f"{'yes' if in_bps else 'NO':>3} {ranged.loss_bound:10.2g}"
            )
            table.add(
                f"{src} -> {dst}", round(facts.rtt_ms, 1),
                uncertainty.range_text(rtt.low, rtt.high),
                _fmt(public_rtt if public_rtt is not None else math.nan, ".1f"),
                "yes" if in_rtt else "no",
                round(advice.option("default").throughput_bps / 1e6, 1),
                uncertainty.range_text(slow / 1e6, fast / 1e6), round(doit / 1e6, 1),
                "yes" if in_bps else "no", f"{ranged.loss_bound:.2g}",
            )  # fmt: skip
    FIGURES.note(
        f"advise's range holds the public RTT median for {inside_rtt} of {ADVISE_PAIRS} "
        f"pairs and DoiT's throughput median for {inside_bps} of {ADVISE_PAIRS}"
    )
    print(
        f"  inside the range: RTT {inside_rtt} of {ADVISE_PAIRS}, default TCP throughput "
        f"{inside_bps} of {ADVISE_PAIRS} (public window quartiles: "
        f"{spread.public_windows()[0] / 1e6:.2f}-{spread.public_windows()[1] / 1e6:.2f} MB)"
    )


# ---- issue 29: throughput accounting and sentinels on the emulator's clean paths ---------


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} (1/5/15 min) on {os.cpu_count()} CPUs"


def run_sweep(results: Path) -> Path | None:
    """One emulated sweep of both measures on make run's regions, clean paths; its folder."""
    if os.geteuid() != 0:
        print("  --run: the emulated cloud needs root (network namespaces); skipped")
        return None
    cmd = [
        sys.executable,
        "-m",
        "orchestrator",
        "sweep",
        "--backend",
        "local",
        "--yes",
        "--regions",
        ",".join(run_regions()),
        "--measures",
        "single_stream,capacity",
        "--results",
        str(results),
        "--no-report",
        "--quiet",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    folders = sorted(d for d in results.iterdir() if (d / "sweep.json").exists())
    if done.returncode != 0 or not folders:
        print(f"  --run: the sweep failed ({done.returncode}): {done.stderr.strip()[-300:]}")
        return None
    return folders[-1]  # the newest: sweep ids start with their UTC time


def client_tests(sweep_dir: Path) -> list[dict[str, Any]]:
    """Every throughput test of a sweep, parsed from its raw files as collect does (the
    client's document, with the server's own output beside it), with its measure."""
    out = []
    for folder in sorted((sweep_dir / "raw").glob("round-*")):
        docs = {}
        for path in folder.glob("*.json"):
            doc, _ = collect.host_doc(path.read_text(encoding="utf-8", errors="replace"))
            if doc is not None:
                docs[str(doc.get("host"))] = doc
        for doc in docs.values():
            if doc.get("role") != "client":
                continue
            server = docs.get(str(doc.get("peer"))) or {}
            served = [str(r.get("stdout") or "") for r in server.get("iperf3_server", [])]
            for test in doc.get("iperf3") or []:
                parsed = parse.parse_iperf3(str(test.get("run", {}).get("stdout", "")), served)
                if parsed["ok"]:
                    where = f"{folder.name} {doc.get('host')} -> {doc.get('peer')}"
                    out.append({**parsed, "where": where, "direction": test.get("direction")})
    return out


def omit_listings(sweep_dir: Path, test: Mapping[str, Any]) -> str:
    """How far each end's omitted intervals reached, for a flagged test."""
    folder, host = test["where"].split()[:2]
    doc, _ = collect.host_doc(
        (sweep_dir / "raw" / folder / f"{store.safe_name(host)}.json").read_text()
    )
    for run in (doc or {}).get("iperf3") or []:
        if run.get("direction") != test["direction"]:
            continue
        client = json.loads(run["run"]["stdout"])
        omit = client["start"]["test_start"]["omit"]
        parts = []
        for name, end_doc in (
            ("client", client),
            ("server", client.get("server_output_json") or {}),
        ):
            listed = [i["sum"] for i in end_doc.get("intervals", []) if i["sum"].get("omitted")]
            parts.append(f"{name} to {listed[-1]['end'] if listed else 0:.4f} s")
        return f"omit {omit} s, listed: " + ", ".join(parts)
    return ""


def _spread(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return (
        f"{min(values) * 100:+.2f} / {statistics.median(values) * 100:+.2f} / "
        f"{max(values) * 100:+.2f} %"
    )


def pair_only_check(early: Sequence[Mapping[str, Any]], late: Sequence[Mapping[str, Any]]) -> Any:
    """The sentinel check as it matched before issue 29: by (src, dst) alone."""
    late_bps = {
        store.pair_key(r): float(r["throughput_bps"]) for r in late if r.get("throughput_bps")
    }
    pairs = [
        (float(r["throughput_bps"]), late_bps[store.pair_key(r)])
        for r in early
        if r.get("throughput_bps") and store.pair_key(r) in late_bps
    ]
    if not pairs:
        return None
    e, x = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    return len(pairs), e, x, 1 - x / e


def accounting(sweep_dirs: Sequence[Path]) -> None:
    print(f"\nthroughput accounting and sentinels on clean emulated paths: {load()}")
    tests: list[dict[str, Any]] = []
    warnings = 0
    for sweep_dir in sweep_dirs:
        rec = record.read_record(sweep_dir / "sweep.json")
        if rec is None:
            print(f"  {sweep_dir}: no sweep record it can read (sweep.json); skipped")
            continue
        if rec.emulation is not None and rec.emulation.perturbations:
            print(f"  {sweep_dir.name}: perturbed on purpose; not a clean path, skipped")
            continue
        found = [
            {**t, "sweep": sweep_dir.name, "sweep_dir": str(sweep_dir)}
            for t in client_tests(sweep_dir)
        ]
        try:
            rows = store.read_rows(sweep_dir / store.MEASUREMENTS_FILE)
            late = [r for r in store.read_rows(sweep_dir / "sentinels.csv") if r["status"] == "ok"]
        except UserError as e:
            print(f"  {sweep_dir.name}: {e}; skipped")
            continue
        tests += found
        early = [r for r in rows if r["status"] == "ok"]
        measures = sorted({r.get("measure") or "single_stream" for r in rows})
        check = allowance.sentinel_check(early, late)
        old = pair_only_check(early, late)
        written = sum(1 for r in rows if flags.RECEIVER_EXCEEDS_SENDER in flags.parse(r["flags"]))
        print(
            f"  {sweep_dir.name}: {len(found)} throughput tests ({', '.join(measures)}); "
            f"measurements.csv flags {written} receiver_exceeds_sender"
        )
        if check is None:
            print("    sentinels: no test with both an early and a late result")
        else:
            warnings += check.flagged
            print(
                f"    sentinels, like with like: {check.tests} tests, "
                f"{check.early_bps / 1e6:.1f} -> {check.late_bps / 1e6:.1f} Mbit/s, "
                f"{-check.drop:+.1%}: {'WARNING' if check.flagged else 'no warning'}"
            )
        if old is not None:
            n, e, x, drop = old
            print(
                f"    sentinels by (src, dst) alone, as before: {n} tests, "
                f"{e / 1e6:.1f} -> {x / 1e6:.1f} Mbit/s, {-drop:+.1%}"
                f"{': WARNING' if drop > allowance.SENTINEL_DROP else ''}"
            )
    if not tests:
        print("  no throughput tests read")
        return
    n = len(tests)
    flagged = [t for t in tests if flags.RECEIVER_EXCEEDS_SENDER in flags.row_flags(t)]
    old_rule = [t for t in tests if t["receiver_own_bps"] > t["throughput_sender_bps"] * 1.01]
    aligned = [t for t in tests if t["aligned"]]
    own = [t["receiver_own_bps"] / t["throughput_sender_bps"] - 1 for t in tests]
    counts = [c[0] / c[1] - 1 for t in aligned if (c := flags.receiver_and_sender(t))]
    print(
        f"  flagged (aligned counts)   {len(flagged):3d} of {n} = {len(flagged) / n:.1%}"
        "   goal < 1 %"
    )
    print(f"  old rule (rates, 1 %)      {len(old_rule):3d} of {n} = {len(old_rule) / n:.1%}")
    print(f"  aligned                    {len(aligned):3d} of {n}")
    print(f"  receiver vs sender, iperf3's own figures  {_spread(own)}")
    print(f"  receiver vs sender, aligned counts        {_spread(counts)}")
    print("  omit backlog: what the sender wrote in its omit and the receiver read after its")
    print("  boundary, min / median / max")
    for name, several in (("single stream", False), ("several streams", True)):
        backlog = [
            t["omit_backlog_bytes"]
            for t in aligned
            if t["omit_backlog_bytes"] is not None and (t["streams"] > 1) == several
        ]
        if backlog:
            print(
                f"    {name:16} {min(backlog):>12,} / {statistics.median(backlog):>12,.0f} / "
                f"{max(backlog):>12,} bytes"
            )
    for t in flagged:
        counts = flags.receiver_and_sender(t) or (0.0, 1.0)
        print(
            f"  flagged: {t['sweep']} {t['where']} {t['direction']}, {t['streams']} streams: "
            f"aligned {counts[0] / counts[1] - 1:+.2%}; "
            f"{omit_listings(Path(t['sweep_dir']), t)}"
        )
    print(f"  sentinel warnings           {warnings}   goal 0")
    print(f"  {load()}")
    table = FIGURES.table(
        f"throughput accounting and sentinels on clean emulated paths ({load()})",
        ["figure", "value", "goal"],
    )
    table.add(
        "throughput rows flagged receiver_exceeds_sender (aligned counts)",
        f"{len(flagged)} of {n} = {len(flagged) / n:.1%}",
        "< 1 %",
    )
    table.add(
        "the rule before alignment (rates, 1 %)",
        f"{len(old_rule)} of {n} = {len(old_rule) / n:.1%}",
        "",
    )
    table.add("sentinel warnings, like with like", warnings, "0")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="run a clean sweep of both measures")
    parser.add_argument("--sweeps", nargs="*", type=Path, default=[], help="sweep folders")
    parser.add_argument("--no-public", action="store_true", help="skip bands and public data")
    parser.add_argument(
        "--keep", type=Path, help="--run's results folder, kept (default: a temporary one)"
    )
    parser.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    args = parser.parse_args()
    with FIGURES.printing(args.json):
        return run(args)


def run(args: argparse.Namespace) -> int:
    if not args.no_public:
        print(
            f"fibre floor: c x 2/3 = {FIBRE_KM_S:,.2f} km/s, a round trip costs "
            f"{FIBRE_RTT_MS_PER_KM * 1000:.4f} ms per 1000 km; flags' floor tolerance "
            f"{flags.FLOOR_TOLERANCE_MS:g} ms"
        )
        FIGURES.headline = (
            f"fibre floor {FIBRE_KM_S:,.2f} km/s: {FIBRE_RTT_MS_PER_KM * 1000:.4f} ms of round "
            "trip per 1000 km"
        )
        bands()
        for name, path in DATA.items():
            data_set(name, path)
        tier_counts(DATA["skyplane"])
        for name, path in DATA.items():
            intervals(name, path)
        advise_ranges()
    sweeps = list(args.sweeps)
    with tempfile.TemporaryDirectory(prefix="quotable-") as tmp:
        if args.run:
            print(f"\nrunning a clean sweep of both measures on make run's regions: {load()}")
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
            made = run_sweep(args.keep or Path(tmp))
            if made is not None:
                sweeps.append(made)
        if sweeps:
            accounting(sweeps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
