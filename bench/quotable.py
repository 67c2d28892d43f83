"""Numbers a user can quote (issue 19): distance bands, flags and physical fits.

Prints, for `make run`'s selection (the Makefile's RUN_REGIONS) and for --max-regions 8
(both spreads), the directed pairs per distance band; then, for the vendored Skyplane
and DoiT data (data/, converted as `history convert` does), the rows flagged per flag
and, per cloud pair over the unflagged rows, the physical fit (Theil-Sen, intercept >= 0,
slope >= the fibre's 10.0069 ms per 1000 km), whether the constraints bind (the free
Theil-Sen line and least squares beside it), Pearson and Spearman, and the RTT
inflation over the fibre floor (median and quartiles).

    python bench/quotable.py   (not numbers.py: that name would hide the standard library's)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from orchestrator.core import paths
from orchestrator.core.geo import FIBRE_KM_S, FIBRE_RTT_MS_PER_KM
from orchestrator.history import public_data
from orchestrator.model.catalog import load_catalog
from orchestrator.plan.selection import SelectionSpec, pairs_per_band, select
from orchestrator.report import analyze
from orchestrator.results import flags

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
        "--max-regions 8 --spread globe": SelectionSpec(max_regions=8, spread="globe"),
    }
    print("directed pairs per distance band")
    for name, spec in cases.items():
        selection = select(catalog, spec)
        counts = pairs_per_band(selection.pairs)
        shown = ", ".join(f"{band} {n}" for band, n in counts.items())
        empty = [band for band, n in counts.items() if not n]
        note = f"  EMPTY: {', '.join(empty)}" if empty else ""
        print(f"  {name:34} {len(selection.regions)} regions: {shown}{note}")
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
        for group in ("all", f"{r['src_cloud']}-{r['dst_cloud']}"):
            xs, ys = groups.setdefault(group, ([], []))
            xs.append(float(r["distance_km"]))
            ys.append(rtt)
    print(
        f"  {'cloud pair':10} {'n':>5} {'fit ms@0':>8} {'ms/1000km':>9} {'binds':>6} "
        f"{'free TS':>14} {'OLS':>14} {'Pearson':>7} {'Spearman':>8} "
        f"{'inflation p25/p50/p75':>22}"
    )
    for group in analyze.GROUPS:
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
            f"  {group:10} {len(xs):5d} {_fmt(fit.intercept, '.1f'):>8} "
            f"{_fmt(fit.slope * 1000):>9} {','.join(binds) or 'no':>6} "
            f"{_fmt(free.intercept, '.1f') + ' + ' + _fmt(free.slope * 1000):>14} "
            f"{_fmt(ols.intercept, '.1f') + ' + ' + _fmt(ols.slope * 1000):>14} "
            f"{_fmt(fit.r, '.3f'):>7} {_fmt(analyze.spearman_rho(xs, ys), '.3f'):>8} "
            f"{_fmt(p25) + ' / ' + _fmt(p50) + ' / ' + _fmt(p75):>22}"
            + ("" if ok else "  NOT PHYSICAL")
        )


def main() -> int:
    print(
        f"fibre floor: c x 2/3 = {FIBRE_KM_S:,.2f} km/s, a round trip costs "
        f"{FIBRE_RTT_MS_PER_KM * 1000:.4f} ms per 1000 km; flags' floor tolerance "
        f"{flags.FLOOR_TOLERANCE_MS:g} ms"
    )
    bands()
    for name, path in DATA.items():
        data_set(name, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
