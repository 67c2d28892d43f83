"""`interregion report`'s use case: which sweeps or files, filtered how, reported where.

ReportRequest         the sources (sweep ids, every sweep, or external CSVs), the
                      results folder, the output folder, the catalog, the pair
                      filter (a SelectionSpec of filters only) and what to keep
make_report(req, log) -> build.Report: the sources checked and read, the report
                      written (summary.csv, outliers.csv, report.json, charts)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.core import CATALOG, RESULTS, UserError, shell_word
from orchestrator.model import load_catalog
from orchestrator.plan import SelectionSpec, pair_filter
from orchestrator.report.build import Report, default_out_dir, load_inputs, sweep_dirs, write_report
from orchestrator.results import check_sweep_id


@dataclass(frozen=True)
class ReportRequest:
    sweeps: tuple[str, ...] = ()
    all_sweeps: bool = False
    input_files: tuple[Path, ...] = ()
    results: Path = RESULTS
    out: Path | None = None  # None: build.default_out_dir
    png: bool = True
    catalog: Path = CATALOG
    selection: SelectionSpec = field(default_factory=SelectionSpec)
    include_flagged: bool = False
    include_injected: bool = False


def check_sources(request: ReportRequest) -> None:
    """One kind of source per report: sweeps (ids or all) or files."""
    sweep, all_, input_files = request.sweeps, request.all_sweeps, request.input_files
    if input_files and (sweep or all_):
        given = "--all" if all_ else "--sweep"
        raise UserError(
            f"--input and {given} both given: a report reads either files (--input) "
            "or sweeps (--sweep/--all); drop one of them"
        )
    if sweep and all_:
        raise UserError("--all and --sweep both given: --all already takes every sweep")
    if not (sweep or all_ or input_files):
        raise UserError("say what to report on: one of --sweep ID, --all or --input FILE")


def chosen_sweeps(results: Path, sweep: tuple[str, ...], all_: bool) -> list[Path]:
    """The sweep folders asked for: every one with `all_`, else each id's (one line for
    an id with no measurements, naming the latest)."""
    if all_:
        found = sweep_dirs(results)
        if not found:
            raise UserError(
                f"no sweeps under {results}: run 'interregion sweep --max-regions 4 "
                f"--results {shell_word(results)}' first"
            )
        return found
    chosen = []
    for sweep_id in sweep:
        folder = results / check_sweep_id(sweep_id)  # as the stage commands: no "../x"
        if not (folder / "measurements.csv").exists():
            known = [p.name for p in sweep_dirs(results)]
            hint = f" (latest: {known[-1]})" if known else " (no sweeps yet)"
            raise UserError(f"no sweep '{sweep_id}' under {results}{hint}")
        chosen.append(folder)
    return chosen


def make_report(request: ReportRequest, log: Callable[[str], None], *,
                warn: Callable[[str], None]) -> Report:  # fmt: skip
    """The report of the sweeps or files asked for; `log` hears its progress lines, `warn`
    the reading's warnings (also on the result, `loaded.warnings`) once the report is
    written: a report that fails says its one error line alone."""
    check_sources(request)
    dirs = (
        chosen_sweeps(request.results, request.sweeps, request.all_sweeps)
        if not request.input_files
        else []
    )
    catalog = load_catalog(request.catalog)
    spec = request.selection
    keep = pair_filter(spec, catalog) if spec != SelectionSpec() else None
    loaded = load_inputs(
        sweep_dirs_=dirs,
        input_files=request.input_files,
        catalog=catalog,
        keep=keep,
        include_flagged=request.include_flagged,
        include_injected=request.include_injected,
    )
    out_dir = request.out if request.out is not None else default_out_dir(dirs, request.input_files)
    report = write_report(loaded, out_dir, png=request.png, log=log)
    for line in loaded.warnings:
        warn(line)
    return report
