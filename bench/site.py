"""Site weight and build time against issue 22's budgets.

  - a 77-region sweep (every ordered pair of the catalog once, 5,852 rows): report
    plus site, the largest HTML page and the largest data file;
  - a history store of --sweeps full-catalog sweeps every 6 h (1,460 = a year, about
    8.5M rows; generated as bench/history.py does), and the site built over it.

Budgets: no HTML page over 500 KB, no data file over 2 MB; site over a year < 30 s,
and < 5 s again when only the newest sweep is new (incremental: a sweep added and
ingested, the site built over the one before; the new sweep's report and ingest, which
the sweep itself runs as it ends, timed apart; also printed: the site built again
over the unchanged store; then the history pages' stages one after another, to say
where the time goes). Each build's CPU seconds beside its wall time (DuckDB's threads
included): the machine is shared, and a loaded machine stretches wall time, not CPU.
Sizes are the files as written (not gzipped). Printed with `uptime`.

The store is generated once per size into $TMPDIR/interregion-bench-cache/history-<N>
and reused by later runs (the sweep the incremental step adds is removed again);
--fresh generates it again. The new sweep comes 6 h after the store's newest judged run,
and its judgments go with it: the judges' states are put back as they were, so every run
judges a new sweep from the same states. --only ingest times that ingest alone (no site),
three times over.

    python bench/site.py                 # the sweep, and a store of 60 sweeps
    python bench/site.py --sweeps 1460   # a year (minutes, ~1 GiB)
    python bench/site.py --only sweep
    python bench/site.py --sweeps 1460 --only ingest
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # testkit/, beside the package

from _figures import Figures  # noqa: E402

HTML_BUDGET = 500_000
DATA_BUDGET = 2_000_000
DATA_SUFFIXES = (".js", ".json", ".csv")
SHARED = ("plotly.min.js", "geo_assets.js")  # libraries, the same for every site


def load() -> str:
    up = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout
    return f"{' '.join(up.split())} on {os.cpu_count()} cores"


CACHE = Path(tempfile.gettempdir()) / "interregion-bench-cache"
# raised when the generated store changes; older caches are regenerated (2: each test's
# jitter, loss and limiter, which the matrix shows as it does RTT and throughput; 3: the
# generated tests in the configuration of the real sweeps, so detection judges them; 4:
# the real sweeps' tests drawn as the generated ones, so no path changes at them; 5:
# change detection judged at ingest, every run in time order)
STORE_FORMAT = 5


def _mb(path: Path) -> float:
    """The size of a file or of everything under a folder, in MB."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6


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


def sweep_bench(figures: Figures) -> None:
    from orchestrator.model.catalog import load_catalog
    from orchestrator.report import build as report
    from orchestrator.site import static_site as site
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
        figures.table(f"a {n}-region sweep, {rows:,} rows", ["report s", "site s"]).add(
            round(report_s, 1), round(site_s, 1)
        )
        print_sizes(Path(tmp) / "site")


def history_bench(sweeps: int, fresh: bool, figures: Figures, ingest_only: bool = False) -> None:
    spec = importlib.util.spec_from_file_location(
        "bench_history", Path(__file__).with_name("history.py")
    )
    assert spec is not None and spec.loader is not None
    bench_history = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench_history  # its dataclasses look their module up
    spec.loader.exec_module(bench_history)
    from orchestrator.history import store as history
    from orchestrator.report import build as report
    from orchestrator.site import static_site as site

    results = CACHE / f"history-{sweeps}-v{STORE_FORMAT}"
    done = results / "generated"
    last = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=6 * sweeps)
    if fresh or not done.exists():
        shutil.rmtree(results, ignore_errors=True)
        results.mkdir(parents=True)
        t0 = time.perf_counter()
        bench_history.synthetic_store(results, sweeps)
        # the newest sweep as a folder too, so the site has a sweep page; the generated
        # tests in its configuration, as a schedule's sweeps are
        history.ingest_sweep(results, bench_history.one_sweep_folder(results, last))
        bench_history.same_configuration(results)
        done.write_text(f"{time.perf_counter() - t0:.0f}\n")
    shutil.rmtree(results / ".cache", ignore_errors=True)  # a cold site first
    # opened to write: a kept store of an older schema migrates
    with history.opened(results) as con:
        (rows,) = con.execute("SELECT count(*) FROM measurements").fetchone() or (0,)
        newest = con.execute("SELECT max(t) FROM judgments").fetchone()
    print(f"history store: {sweeps} full-catalog sweeps every 6 h, {rows:,} rows "
          f"(generated in {done.read_text().strip()} s, kept in {results})")  # fmt: skip
    # 6 h after the newest judged run (a store an older bench left a sweep's judgments in
    # judges it on from there)
    if newest and newest[0] is not None:
        last = max(last, newest[0].replace(tzinfo=UTC))
    if ingest_only:
        ingest_bench(results, bench_history.one_sweep_folder, last, figures, rows)
        return
    with tempfile.TemporaryDirectory(prefix="interregion-bench-site-") as tmp:
        out = Path(tmp) / "site"
        built = figures.table(
            f"the site over a store of {sweeps:,} full-catalog sweeps ({rows:,} rows)",
            ["build", "s", "CPU s", "load", "goal s"],
        )
        full_s = timed_site(site, out, results, built, "site over the store", 30)
        print_sizes(out)
        # the same store again: computed again, nothing kept
        timed_site(site, out, results, built, "again, the store unchanged", None)
        # incremental: one more sweep, 6 h later, reported and ingested as a sweep does as
        # it ends (its report's cache entry is what the site shows of it); the site over
        # the last one
        new = bench_history.one_sweep_folder(results, last + timedelta(hours=6))
        try:
            print(f"  incremental site, sweep {new} new ({load()})")
            t0 = time.perf_counter()
            report.build_report(results / new, png=False)
            report_s = time.perf_counter() - t0
            keep_states(results)
            t0 = time.perf_counter()
            history.ingest_sweep(results, new)
            ingest_s = time.perf_counter() - t0
            print(f"  the new sweep's report {report_s:.1f} s and ingest "
                  f"{ingest_s:.1f} s (as the sweep ends)")  # fmt: skip
            built.add("a new sweep's ingest", round(ingest_s, 1), None, "", 3)
            incremental_s = timed_site(site, out, results, built, "incremental: one sweep more", 5)
            figures.headline = (
                f"{sweeps:,} sweeps: site {full_s:.1f} s, incremental {incremental_s:.1f} s"
            )
            stages(results, Path(tmp) / "stages", figures)
            kept = results / ".cache" / "site"
            kept_mb = _mb(kept) if kept.exists() else 0.0
            store_mb = sum(_mb(p) for p in results.glob(f"{history.HISTORY_FILE}*"))
            previous = _mb(out.with_name(".site.previous"))
            print(
                f"  kept state outside the store: {kept_mb:.0f} MB (budget 0); the store "
                f"{store_mb:,.0f} MB; the previous site {previous:.0f} MB (deletable)"
            )
            lines = code_lines()
            print(f"  orchestrator/site/ + orchestrator/history/: {lines:,} lines (budget 7,000)")
            figures.table("the code", ["packages", "lines", "budget"]).add(
                "orchestrator/site/ + orchestrator/history/", lines, 7000
            )
        finally:
            forget_sweep(results, new)
            shutil.rmtree(results / new, ignore_errors=True)


def code_lines() -> int:
    """The lines of orchestrator/site/ and orchestrator/history/ (issue 28's budget)."""
    packages = (ROOT / "orchestrator" / name for name in ("site", "history"))
    return sum(len(f.read_text().splitlines()) for p in packages for f in p.glob("*.py"))


def timed_site(
    site: Any, out: Path, results: Path, table: Any, what: str, goal: float | None
) -> float:
    """The site built over `results` into `out`, timed (wall and CPU: the machine is
    shared, and CPU seconds are what a loaded machine does not stretch); its row added
    to `table`; returns the wall seconds."""
    up = load()
    t0, c0 = time.perf_counter(), _cpu_s()
    site.build_site(out, results)
    wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
    print(f"  {what}: site built in {wall:.1f} s (CPU {cpu:.1f} s; goal "
          f"{f'< {goal:g} s' if goal else 'none'}; {up})")  # fmt: skip
    table.add(what, round(wall, 1), round(cpu, 1), up.split("load average: ")[-1], goal)
    return wall


def stages(results: Path, out: Path, figures: Figures) -> None:
    """Where a history site's build goes, its history pages' stages timed one after
    another (the build runs the matrix's windows beside the rest, on a thread of their
    own): the windows (every metric's views.SITE_WINDOWS and the window before each),
    change detection, the pair pages' tests, the matrix's arrays, the pages
    written."""
    from orchestrator.history import judgments
    from orchestrator.history import metrics as v
    from orchestrator.history import store as history
    from orchestrator.mesh import mesh_views as mesh_views
    from orchestrator.model.catalog import load_catalog
    from orchestrator.site import history_pages as hp

    table = figures.table(
        "where the site's history pages go (over the store with the new sweep)",
        ["stage", "s", "CPU s"],
    )

    def stage(what: str, step: Any) -> Any:
        t0, c0 = time.perf_counter(), _cpu_s()
        done = step()
        wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
        print(f"    {what}: {wall:.1f} s (CPU {cpu:.1f} s)")
        table.add(what, round(wall, 1), round(cpu, 1))
        return done

    print(f"  the history pages' stages, one after another ({load()})")
    with history.opened(results, read_only=True) as con:
        meshes = set(mesh_views.mesh_sources(con))
        infos = [i for i in v.source_infos(con).values() if i.name not in meshes]
        cells = stage("matrix windows", lambda: hp._source_windows(con, infos))
        runs = hp.CHANGE_RUNS
        found = stage("change detection", lambda: judgments.detection(con, last_runs=runs))
        pairs = stage("pair pages' tests", lambda: hp.pair_data(con, infos, found))
        matrix, files = stage(
            "matrix arrays",
            lambda: hp.matrix_files(con, infos, found, load_catalog(), cells),
        )
        emulated = {i.name: i.emulated for i in infos}
        changes = hp.changes_data(con, found, emulated)
        data = hp.HistoryData(matrix, files, changes, pairs, emulated)
        stage("pages written", lambda: hp.write_pages(out, data))


INGESTS = 3  # --only ingest: the same new sweep ingested (and taken out again) this often


def ingest_bench(
    results: Path, sweep_folder: Any, last: datetime, figures: Figures, rows: int
) -> None:
    """The ingest of one more full-catalog sweep into the store, INGESTS times, each
    from the same store (the sweep and its judgments taken out again after each)."""
    from orchestrator.history import store as history

    new = sweep_folder(results, last + timedelta(hours=6))
    table = figures.table(
        f"one full-catalog sweep ingested into a store of {rows:,} rows",
        ["ingest", "s", "CPU s", "load", "goal s"],
    )
    took, cpus = [], []
    try:
        for i in range(INGESTS):
            keep_states(results)
            up = load()
            t0, c0 = time.perf_counter(), _cpu_s()
            history.ingest_sweep(results, new)
            wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
            took.append(wall)
            cpus.append(cpu)
            print(f"  ingest of {new}: {wall:.2f} s (CPU {cpu:.2f} s; goal < 3 s; {up})")
            table.add(
                f"run {i + 1}", round(wall, 2), round(cpu, 2), up.split("load average: ")[-1], 3
            )
            forget_sweep(results, new)
    finally:
        forget_sweep(results, new)
        shutil.rmtree(results / new, ignore_errors=True)
    figures.goal = "one full-catalog sweep's ingest, with its judgments and day summaries, < 3 s"
    figures.headline = (
        f"one full-catalog sweep's ingest {min(took):.1f}-{max(took):.1f} s, "
        f"CPU {min(cpus):.1f}-{max(cpus):.1f} s"
    )


def _cpu_s() -> float:
    """CPU time of this process and its threads (DuckDB's), user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_KEPT = "bench_kept_states"  # the judges' states before the bench's sweep


def keep_states(results: Path) -> None:
    """Keep a copy of the judges' states in the store, for forget_sweep."""
    from orchestrator.history import store as history

    with history.opened(results) as con, history.transaction(con):
        con.execute(f"CREATE OR REPLACE TABLE {_KEPT} AS SELECT * FROM detection_state")


def forget_sweep(results: Path, sweep_id: str) -> None:
    """Take the bench's sweep out of the store again (its folder stays): its rows and day
    summaries, its judgments, and the judges' states as keep_states kept them (the
    generated sweeps change no path: it opened no episode)."""
    from orchestrator.history import store as history

    with history.opened(results) as con, history.transaction(con):
        history.delete_sweep(con, sweep_id)  # its rows, and its days' summaries
        for table in ("judgments", "calibrations", "config_changes"):
            con.execute(f"DELETE FROM {table} WHERE sweep_id = ?", [sweep_id])
        kept = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [_KEPT]
        ).fetchone()
        if kept and kept[0]:
            con.execute("DELETE FROM detection_state")
            con.execute(f"INSERT INTO detection_state SELECT * FROM {_KEPT}")
            con.execute(f"DROP TABLE {_KEPT}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweeps", type=int, default=60, help="full-catalog sweeps in the store")
    ap.add_argument(
        "--only",
        choices=("sweep", "history", "ingest"),
        help="run one half only (ingest: a new sweep's ingest into the store, alone)",
    )
    ap.add_argument("--fresh", action="store_true", help="generate the store again")
    ap.add_argument("--json", action="store_true", help="the figures as JSON (bench/docs.py)")
    args = ap.parse_args()
    if args.sweeps < 1:
        sys.exit("--sweeps: at least 1")
    figures = Figures("site", "Site weight", goal="a year's site < 30 s, incremental < 5 s; "
                      "no page over 500 KB, no data file over 2 MB")  # fmt: skip
    with figures.printing(args.json):
        if args.only in (None, "sweep"):
            sweep_bench(figures)
        if args.only in (None, "history"):
            history_bench(args.sweeps, args.fresh, figures)
        if args.only == "ingest":
            history_bench(args.sweeps, args.fresh, figures, ingest_only=True)


if __name__ == "__main__":
    main()
