"""PNG export of the charts through kaleido and the Debian Chromium."""

import shutil

import pytest
from report_support import CATALOG

from orchestrator.report import analyze, charts
from orchestrator.report import build as report
from testkit import synthetic

pytestmark = pytest.mark.slow


def _figures(tmp_path):
    folder = tmp_path / "s"
    synthetic.write_measurements(
        folder / "measurements.csv", synthetic.synthetic_rows(CATALOG.regions, 60, sweep_id="s")
    )
    loaded = report.load_inputs(sweep_dirs_=[folder], catalog=CATALOG)
    figures = report.report_figures(loaded, analyze.summarize(loaded.data))
    return {k: figures[k] for k in ("distance-all", "map")}


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_pngs_are_written_with_the_offline_world_map(tmp_path):
    written, why = charts.write_pngs(_figures(tmp_path), tmp_path)
    assert why == ""
    assert sorted(p.name for p in written) == ["distance-all.png", "map.png"]
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.stat().st_size > 20_000  # a drawn chart, not an empty canvas


def test_no_renderer_is_a_reason_not_a_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-chromium"))
    written, why = charts.write_pngs(_figures(tmp_path), tmp_path)
    assert written == [] and why
    assert not list(tmp_path.glob("*.png"))
