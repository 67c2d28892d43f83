"""Site weight and build time against issue 22's budgets.

  - a 77-region sweep (every ordered pair of the catalog once, 5,852 rows): report
    plus site, the largest HTML page and the largest data file;
  - a history store of --sweeps full-catalog sweeps every 6 h (1,460 = a year, about
    8.5M rows; generated as bench/history.py does), and the site built over it.

Budgets: no HTML page over 500 KB, no data file over 2 MB; site over a year < 30 s.
Sizes are the files as written (not gzipped). Printed with the machine's load average:
the machine is shared, timings are noisy.

    python bench/site.py                 # the sweep, and a store of 60 sweeps
    python bench/site.py --sweeps 1460   # a year (minutes, ~1 GiB)
    python bench/site.py --only sweep
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # testkit/, beside the package

HTML_BUDGET = 500_000
DATA_BUDGET = 2_000_000
DATA_SUFFIXES = (".js", ".json", ".csv")
SHARED = ("plotly.min.js", "geo_assets.js")  # libraries, the same for every site


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def largest(site: Path) -> tuple[tuple[int, str], tuple[int, str], int]:
    """(size, path) of the largest HTML page and data file, and the file count."""
    html, data, count = (0, ""), (0, ""), 0
    for path in site.rglob("*"):
        if not path.is_file():
            continue
        count += 1
        size, rel = path.stat().st_size, str(path.relative_to(site))
        if path.suffix == ".html":
            html = max(html, (size, rel))
        elif path.suffix in DATA_SUFFIXES and path.name not in SHARED:
            data = max(data, (size, rel))
    return html, data, count


def verdict(size: int, budget: int) -> str:
    return "ok" if size <= budget else "OVER"


def print_sizes(site: Path) -> None:
    (h, hp), (d, dp), count = largest(site)
    print(f"  {count:,} files; largest HTML page {h / 1e3:,.0f} KB ({hp}), budget "
          f"{HTML_BUDGET / 1e3:.0f} KB: {verdict(h, HTML_BUDGET)}")  # fmt: skip
    print(f"  largest data file {d / 1e6:,.2f} MB ({dp}), budget {DATA_BUDGET / 1e6:.0f} MB: "
          f"{verdict(d, DATA_BUDGET)}")  # fmt: skip


def sweep_bench() -> None:
    from orchestrator.model.catalog import load_catalog
    from orchestrator.report import build as report
    from orchestrator.site import build as site
    from testkit import synthetic

    catalog = load_catalog()
    n = len(catalog.regions)
    rows = n * (n - 1)
    with tempfile.TemporaryDirectory(prefix="interregion-bench-site-") as tmp:
        results = Path(tmp) / "results"
        sweep_id = "20261122T0000Z-bnch"
        synthetic.write_measurements(
            results / sweep_id / "measurements.csv",
            synthetic.synthetic_rows(catalog.regions, rows, sweep_id=sweep_id),
        )
        print(f"{n}-region sweep, {rows:,} rows ({load()})")
        t0 = time.perf_counter()
        report.build_report(results / sweep_id, catalog=catalog, png=False)
        report_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        site.build_site(Path(tmp) / "site", results, catalog=catalog)
        site_s = time.perf_counter() - t0
        print(f"  report {report_s:.1f} s, site {site_s:.1f} s")
        print_sizes(Path(tmp) / "site")


def history_bench(sweeps: int) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_history", Path(__file__).with_name("history.py")
    )
    assert spec is not None and spec.loader is not None
    bench_history = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench_history  # its dataclasses look their module up
    spec.loader.exec_module(bench_history)
    from orchestrator.history import store as history
    from orchestrator.site import build as site

    with tempfile.TemporaryDirectory(prefix="interregion-bench-site-") as tmp:
        results = Path(tmp)
        t0 = time.perf_counter()
        rows, _archiving = bench_history.synthetic_store(results, sweeps)
        print(f"history store: {sweeps} full-catalog sweeps every 6 h, {rows:,} rows, "
              f"generated in {time.perf_counter() - t0:.0f} s")  # fmt: skip
        # the newest sweep as a folder too, so the site has a sweep page
        when = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=6 * sweeps)
        sweep_id = bench_history.one_sweep_folder(results, when)
        history.ingest_sweep(results, sweep_id)
        print(f"  site over the store ({load()})")
        t0 = time.perf_counter()
        site.build_site(results / "site", results)
        full_s = time.perf_counter() - t0
        goal = "goal < 30 s at a year (1,460 sweeps)"
        print(f"  site built in {full_s:.1f} s ({goal})")
        print_sizes(results / "site")
        print("  incremental site (only the newest sweep new, goal < 5 s): not implemented")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweeps", type=int, default=60, help="full-catalog sweeps in the store")
    ap.add_argument("--only", choices=("sweep", "history"), help="run one half only")
    args = ap.parse_args()
    if args.sweeps < 1:
        sys.exit("--sweeps: at least 1")
    if args.only in (None, "sweep"):
        sweep_bench()
    if args.only in (None, "history"):
        history_bench(args.sweeps)


if __name__ == "__main__":
    main()
