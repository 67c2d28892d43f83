"""report.make: `interregion report`'s use case, called without the CLI: its sources
checked, sweeps found by id or all, a pair filter applied, the report written."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from history_support import make_sweep, sweep_id_at

from orchestrator.core.errors import UserError
from orchestrator.plan.selection import SelectionSpec
from orchestrator.report.make import ReportRequest, make_report

A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:us-west-2"
SAMPLES = {(A, B): [80.0, 81.0, 82.0], (B, A): [80.5, 81.5, 82.5], (A, C): [62.0, 63.0, 64.0]}


def _sweep(results, day=22):
    return make_sweep(results, sweep_id_at(datetime(2026, 11, day, tzinfo=UTC)), SAMPLES)


def test_a_sweep_by_id_lands_in_its_report_folder_and_a_filter_drops_pairs(tmp_path):
    folder = _sweep(tmp_path)
    said: list[str] = []
    whole = make_report(ReportRequest(sweeps=(folder.name,), results=tmp_path, png=False),
                        said.append, warn=said.append)  # fmt: skip
    assert whole.out_dir == folder / "report" and (folder / "report" / "summary.csv").exists()
    assert {s.cloud_pair for s in whole.summaries if s.n} == {
        "all",
        "aws-gcp",
        "gcp-aws",
        "aws-aws",
    }
    only = make_report(
        ReportRequest(all_sweeps=True, results=tmp_path, png=False, out=tmp_path / "out",
                      selection=SelectionSpec(cloud_pairs=(("aws", "gcp"),))),
        said.append, warn=said.append,
    )  # fmt: skip
    assert only.out_dir == tmp_path / "out"
    assert {s.cloud_pair for s in only.summaries if s.n} == {"all", "aws-gcp"}
    assert only.loaded.skipped["filtered out"] == 2  # the gcp -> aws and aws -> aws tests


def test_the_readings_warnings_are_said_once_the_report_is_written(tmp_path):
    folder = _sweep(tmp_path)
    warned: list[tuple[str, bool]] = []

    def warn(line: str) -> None:  # with whether the report was written by then
        warned.append((line, any(tmp_path.glob("**/summary.csv"))))

    request = ReportRequest(sweeps=(folder.name, folder.name), results=tmp_path, png=False)
    done = make_report(request, print, warn=warn)
    twice = f"--sweep {folder} given more than once: read once"
    assert done.loaded.warnings == [twice]
    assert warned == [(twice, True)]


@pytest.mark.parametrize(
    ("request_", "said"),
    [
        (ReportRequest(), "say what to report on"),
        (ReportRequest(sweeps=("x",), all_sweeps=True), "--all and --sweep both given"),
        (ReportRequest(all_sweeps=True, input_files=(Path(__file__),)), "--input and --all"),
        (ReportRequest(all_sweeps=True), "no sweeps under"),
        (ReportRequest(sweeps=("20261122T0000Z-ff99",)), "no sweep '20261122T0000Z-ff99'"),
        (ReportRequest(sweeps=("../x",)), "is not of the form"),
    ],
)
def test_bad_sources_are_one_line(tmp_path, request_, said):
    from dataclasses import replace

    with pytest.raises(UserError) as e:
        make_report(replace(request_, results=tmp_path / "results"), print, warn=print)
    assert said in str(e.value) and "\n" not in str(e.value)
