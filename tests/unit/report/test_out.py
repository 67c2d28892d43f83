"""Where a report is written: whole or not at all, and never over other files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from report_support import CATALOG, _sweep, write_catalog

from orchestrator.cli import main
from orchestrator.core import outdir
from orchestrator.core.errors import UserError
from orchestrator.report import build as report


@pytest.fixture
def loaded(tmp_path):
    folder = _sweep(tmp_path / "results", "20261122T0100Z-aaaa", n=60)
    return report.load_inputs(sweep_dirs_=[folder], catalog=CATALOG)


def test_a_reused_out_folder_keeps_no_stale_charts(tmp_path, loaded):
    out = tmp_path / "out"
    first = report.write_report(loaded, out, png=False)
    assert (out / "charts" / "distance-gcp-gcp.html").exists()
    stale = out / "charts" / "timeseries.html"  # as an earlier multi-sweep report left it
    stale.write_text("old")
    (out / "charts" / "timeseries.png").write_bytes(b"old")
    second = report.write_report(loaded, out, png=False)
    assert not stale.exists() and not (out / "charts" / "timeseries.png").exists()
    assert set(second.charts) == set(first.charts)
    assert all(p.parent == out / "charts" and p.exists() for p in second.charts.values())
    assert sorted(p.name for p in out.iterdir()) == sorted(report.REPORT_FILES)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_failed_report_leaves_the_earlier_one(tmp_path, loaded, monkeypatch):
    out = tmp_path / "out"
    report.write_report(loaded, out, png=False)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(*_args, **_kwargs):
        raise RuntimeError("chart failed")

    monkeypatch.setattr(report, "report_figures", broken)
    monkeypatch.setattr("orchestrator.site.static_site.report_figures", broken)
    with pytest.raises(RuntimeError):
        report.write_report(loaded, out, png=False)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_folder_of_other_files_is_never_replaced(tmp_path, loaded):
    out = tmp_path / "home"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    with pytest.raises(UserError, match=r"holds files that are not part of a report \(thesis"):
        report.write_report(loaded, out, png=False)
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]


@pytest.mark.parametrize("under", [False, True])
def test_out_on_or_under_a_file_is_one_line(tmp_path, under):
    results = tmp_path / "results"
    _sweep(results, "20261122T0100Z-aaaa", n=30)
    blocker = tmp_path / "blocker"
    blocker.write_text("keep")
    out = blocker / "report" if under else blocker
    args = ["report", "--sweep", "20261122T0100Z-aaaa", "--results", str(results), "--no-png"]
    args += ["--catalog", str(write_catalog(tmp_path / "regions.yaml")), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "error" in lines[0].lower(), result.stderr
    assert blocker.read_text() == "keep"


def test_swap_replaces_a_folder_whole(tmp_path):
    out, new = tmp_path / "out", tmp_path / "new"
    out.mkdir()
    new.mkdir()
    (out / "old.txt").write_text("old")
    (new / "new.txt").write_text(json.dumps("new"))
    outdir.swap_into_place(new, out)
    assert [p.name for p in out.iterdir()] == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_symlinked_out_folder_stays_a_link(tmp_path, loaded):
    real = tmp_path / "srv" / "report"
    report.write_report(loaded, real, png=False)
    (real / "charts" / "stale.html").write_text("old")
    link = tmp_path / "report-link"
    link.symlink_to(real, target_is_directory=True)
    report.write_report(loaded, link, png=False)
    assert link.is_symlink() and link.resolve() == real
    assert (real / "summary.csv").exists() and not (real / "charts" / "stale.html").exists()
    assert sorted(p.name for p in (tmp_path / "srv").iterdir()) == ["report"]
