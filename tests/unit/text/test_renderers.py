"""The text renderers without click: each takes a use case's result and returns the lines
(and rich tables) the CLI prints, formatting only."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from history_support import make_sweep, sweep_id_at
from rich.console import Console
from rich.table import Table

from orchestrator.advise.transfer import AdviseRequest, advise_transfer
from orchestrator.demo import DemoOutcome, DemoPlan
from orchestrator.emulator import Perturbation
from orchestrator.exchange import Converted
from orchestrator.history import Ingested
from orchestrator.report.make import ReportRequest, make_report
from orchestrator.text import advice_table, demo_outcome, history_lines, matrix_table, report_tables

A, B = "aws:us-east-1", "gcp:europe-west1"


def _drawn(table: Table) -> str:
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(table)
    return console.export_text()


def test_report_tables_summary_intervals_and_where_it_went(tmp_path):
    folder = make_sweep(tmp_path, sweep_id_at(datetime(2026, 11, 22, tzinfo=UTC)),
                        {(A, B): [80.0, 81.0, 82.0], (B, A): [80.5, 81.5, 82.5]})  # fmt: skip
    result = make_report(ReportRequest(sweeps=(folder.name,), results=tmp_path, png=False),
                         lambda line: None, warn=lambda line: None)  # fmt: skip
    parts = report_tables.render(result)
    summary, intervals = parts[0], parts[1]
    assert isinstance(summary, Table) and isinstance(intervals, Table)
    assert str(summary.title) == "Summary by cloud pair [bold red](EMULATED)[/]"
    assert "aws-gcp" in _drawn(summary) and "its CI" in _drawn(intervals)
    assert parts[-2:] == [f"report: {folder / 'report'}", "PNG charts: skipped (--no-png given)"]
    assert "2 of 2 measurements used" in parts


def test_advice_table_lines_then_the_options_table(tmp_path):
    found = advise_transfer(AdviseRequest(A, "gcp:asia-northeast1", "100GB", files="10",
                                          results=tmp_path))  # fmt: skip
    parts = advice_table.render(found.doc)
    assert parts[0] == (
        f"{A} -> gcp:asia-northeast1: 100.00 GB (100,000,000,000 bytes), GCP Premium tier"
    )
    (table,) = [p for p in parts if isinstance(p, Table)]
    drawn = _drawn(table)
    for label in ("default TCP", "tuned buffers", "4 streams", "new connection per file"):
        assert label in drawn
    assert parts[-1].startswith("  - ")  # type: ignore[union-attr]  # the assumptions last


def test_demo_outcome_a_line_per_direction_that_moved():
    ways = [{"src": A, "dst": B, "old_level": 80.04, "new_level": 90.06, "moved": True},
            {"src": B, "dst": A, "old_level": 80.0, "new_level": 80.0, "moved": False}]  # fmt: skip
    episode = {"metric": "rtt", "started_run": "r9", "status": "open", "directions": ways}
    outcome = DemoOutcome(("r1", "r2", "r3"), {"episodes": [episode]}, (), 61.4, Path("d/site"))
    assert demo_outcome.render(outcome) == [
        f"found: rtt {A} -> {B} 80.0 -> 90.1 ms from r9 (open)",
        "site: d/site",
        "demo: 3 sweeps in 61 s",
    ]
    plan = DemoPlan(perturbation=Perturbation(f"{B}/{A}", delay_ms=5.0))
    passed = DemoOutcome(("r1",), {}, (), 1.0, None, plan)
    assert demo_outcome.passed_line(passed) == (
        f"demo check passed: the injected change {B}/{A},delay_ms=5 and nothing else"
    )


def test_ingest_lines_a_line_per_set_of_changed_fields():
    done = Ingested("s1", 2, Path("r/history.duckdb"),
                    [(["src_kernel: 6.1 -> 6.2"], 1), ([], 3)])  # fmt: skip
    assert history_lines.ingest_lines(done) == [
        "s1: 2 rows in r/history.duckdb",
        "configuration changed for 1 pair since their previous test: src_kernel: 6.1 -> 6.2",
        "configuration changed for 3 pairs since their previous test: fingerprint differs",
    ]
    assert history_lines.ingest_lines(Ingested("s2", 1, Path("h"), [])) == ["s2: 1 row in h"]


def test_converted_line_counts_only_the_flags_found():
    found = Converted(Path("o.csv"), 10, {"below_fibre_floor": 0, "asymmetric": 2, "x": 1})
    assert history_lines.converted_line(found) == "10 rows -> o.csv (flagged: 2 asymmetric, 1 x)"
    none = Converted(Path("o.csv"), 1, {"asymmetric": 0})
    assert history_lines.converted_line(none) == "1 row -> o.csv (flagged: none)"


def test_matrix_cell_of_loss_has_its_interval_below():
    doc = {"metric": "loss", "unit": "%"}
    cell = {"value": 0.5, "loss_pct": 0.5, "loss_low_pct": 0.1, "loss_high_pct": 1.25}
    assert matrix_table.cell_text(doc, cell) == "0.50\n0.50 (0.10-1.25)"
    assert matrix_table.cell_text({"metric": "rtt", "unit": "ms"}, {"value": None}) == "—"
