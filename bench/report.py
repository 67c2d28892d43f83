"""Report and site generation time and peak memory for 10k, 100k and 1M rows.

Each size runs in its own process so its peak RSS (ru_maxrss) is its own.
Rows are synthetic (testkit.synthetic) over the whole catalog, one
sweep, written as a sweep writes them (results' writer, which marks a plain file). The
report of the whole sweep keeps its cache entry (orchestrator.report.cache),
which the site then reads; "site again" is a second site over the same results (every
sweep unchanged: the incremental case). "CLI" is the same as a user runs it:
`interregion report --no-png --sweep ID` then `interregion site --out DIR`, each a fresh
process (imports, the catalog, the cache entry written then read), on the same rows with
no report, cache entry or site yet; Python's bytecode is cached, as an installed
package's is. Goal (issue 22): report + site for 1M rows under 5 s, and under 2 GiB.
Figures on a shared machine are noisy.

    python bench/report.py            # all sizes
    python bench/report.py --rows N   # one size
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # testkit/, beside the package

SIZES = (10_000, 100_000, 1_000_000)


def _cpu() -> float:
    """CPU seconds of this process, every thread (DuckDB reads with two): on a shared
    machine a steadier figure than the wall time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one(rows: int, png: bool) -> dict[str, float]:
    from orchestrator.model.catalog import load_catalog
    from orchestrator.report import build as report
    from orchestrator.site import static_site as site
    from testkit import synthetic

    catalog = load_catalog()
    with tempfile.TemporaryDirectory(prefix="interregion-bench-") as tmp:
        results = Path(tmp) / "results"
        sweep_id = "20261122T0000Z-b0c4"  # a sweep id the CLI takes
        t0 = time.perf_counter()
        # in a child process: the text the writer checks and writes whole (three copies
        # of 164 MB at 1M rows) is no part of the report's peak memory
        child = multiprocessing.get_context("fork").Process(
            target=synthetic.write_measurements,
            args=(
                results / sweep_id / "measurements.csv",
                synthetic.synthetic_rows(catalog.regions, rows, sweep_id=sweep_id),
            ),
            kwargs={"marked": True},  # as a sweep writes it: its plain mark beside it
        )
        child.start()
        child.join()
        if child.exitcode != 0:
            raise SystemExit(f"writing the synthetic rows failed ({child.exitcode})")
        generate_s = time.perf_counter() - t0
        cli_report_s, cli_site_s = cli(results, sweep_id, Path(tmp) / "cli-site")
        for made in (results / sweep_id / "report", results / ".cache", results / "assets"):
            if made.exists():  # the in-process run starts from the same state
                shutil.rmtree(made)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

        c0 = _cpu()
        t0 = time.perf_counter()
        loaded = report.load_inputs(sweep_dirs_=[results / sweep_id], catalog=catalog)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = report.write_report(loaded, results / sweep_id / "report", png=False)
        report_s = time.perf_counter() - t0
        report_cpu_s = _cpu() - c0
        png_s = float("nan")
        if png:
            from orchestrator.report import charts

            figures = report.report_figures(loaded, out.summaries)
            t0 = time.perf_counter()
            written, why = charts.write_pngs(figures, Path(tmp))
            png_s = time.perf_counter() - t0 if written else float("nan")
            if why:
                print(f"  PNG skipped: {why}", file=sys.stderr)
        del loaded, out
        c0 = _cpu()
        t0 = time.perf_counter()
        site.build_site(Path(tmp) / "site", results, catalog=catalog)
        site_s = time.perf_counter() - t0
        site_cpu_s = _cpu() - c0
        t0 = time.perf_counter()
        site.build_site(Path(tmp) / "site", results, catalog=catalog)
        again_s = time.perf_counter() - t0
        index_mb = (Path(tmp) / "site" / "index.html").stat().st_size / 1e6
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "rows": rows,
        "generate_s": generate_s,
        "load_s": load_s,
        "report_s": load_s + report_s,
        "png_s": png_s,
        "site_s": site_s,
        "report_cpu_s": report_cpu_s,
        "site_cpu_s": site_cpu_s,
        "again_s": again_s,
        "peak_rss_mib": peak_mib,
        "rss_before_mib": rss_before / 1024,
        "index_html_mb": index_mb,
        "cli_report_s": cli_report_s,
        "cli_site_s": cli_site_s,
    }


def cli(results: Path, sweep_id: str, site_dir: Path) -> tuple[float, float]:
    """Wall seconds of `interregion report --no-png` then `interregion site`, each a
    fresh process as a user runs them (the console script beside this Python)."""
    script = Path(sys.executable).with_name("interregion")
    base = [str(script)] if script.exists() else [sys.executable, "-m", "orchestrator"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for args in (
        ["report", "--no-png", "--results", str(results), "--sweep", sweep_id],
        ["site", "--results", str(results), "--out", str(site_dir)],
    ):
        t0 = time.perf_counter()
        subprocess.run(base + args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return times[0], times[1]


def main() -> None:
    if "--rows" in sys.argv:
        rows = int(sys.argv[sys.argv.index("--rows") + 1])
        print(json.dumps(one(rows, png="--png" in sys.argv)))
        return
    from _figures import Figures

    figures = Figures("report", "Reports", goal="report + site < 5 s at 1M rows; peak < 2 GiB")
    with figures.printing("--json" in sys.argv):
        run(figures)


def run(figures: Any) -> None:
    import os

    print(subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip())
    one_min, five_min, _ = os.getloadavg()
    print("report + site for synthetic sweeps (whole catalog, one sweep; shared 2-core machine, "
          f"load average {one_min:.2f} {five_min:.2f})")  # fmt: skip
    print(
        f"{'rows':>9} {'load s':>7} {'report s':>9} {'site s':>7} {'total s':>8} {'cpu s':>6} "
        f"{'again s':>8} {'PNG s':>6} {'peak MiB':>9} {'index MB':>9} {'CLI s':>6} "
        f"{'(report':>7} {'+ site)':>7}"
    )
    table = figures.table(
        "report + site of one synthetic sweep",
        ["rows", "load s", "report s", "site s", "total s", "CPU s", "site again s", "PNG s",
         "peak MiB", "CLI s (report + site)"],
    )  # fmt: skip
    for rows in SIZES:
        args = [sys.executable, __file__, "--rows", str(rows)]
        if rows == SIZES[0]:
            args.append("--png")  # PNG time does not depend on rows (charts are downsampled)
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{rows:>9} failed: {done.stderr.strip().splitlines()[-1:]}")
            sys.exit(1)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        total = r["report_s"] + r["site_s"]
        print(
            f"{rows:>9} {r['load_s']:>7.2f} {r['report_s']:>9.2f} {r['site_s']:>7.2f} "
            f"{total:>8.2f} {r['report_cpu_s'] + r['site_cpu_s']:>6.2f} {r['again_s']:>8.2f} "
            f"{r['png_s']:>6.2f} {r['peak_rss_mib']:>9.0f} "
            f"{r['index_html_mb']:>9.2f} {r['cli_report_s'] + r['cli_site_s']:>6.2f} "
            f"{r['cli_report_s']:>7.2f} {r['cli_site_s']:>7.2f}"
        )
        cli = r["cli_report_s"] + r["cli_site_s"]
        table.add(
            f"{rows:,}", r["load_s"], r["report_s"], r["site_s"], round(total, 2),
            round(r["report_cpu_s"] + r["site_cpu_s"], 2), r["again_s"], r["png_s"] or None,
            round(r["peak_rss_mib"]),
            f"{cli:.2f} ({r['cli_report_s']:.2f} + {r['cli_site_s']:.2f})",
        )  # fmt: skip
        if rows == SIZES[-1]:
            figures.headline = (
                f"{rows:,} rows: report + site {total:.2f} s in-process, {cli:.2f} s from the "
                f"command line; peak {r['peak_rss_mib']:.0f} MiB"
            )
    figures.note("report s includes load s; site s builds every page from the report's cache "
                 "entry; CPU s: report + site, all threads; CLI: `interregion report --no-png` "
                 "+ `interregion site`, as a user runs them")  # fmt: skip
    print("report s includes load s; site s builds every page from the report's cache entry")
    print("and copies the rows that parse; again s: the site once more, nothing new")
    print("cpu s: CPU seconds of report + site (all threads), steadier than wall on a busy machine")
    print("CLI s: `interregion report --no-png` + `interregion site`, as a user runs them")
    print("goal at 1M rows: report + site < 5 s (issue 22), also from the CLI; peak < 2048 MiB")


if __name__ == "__main__":
    main()
