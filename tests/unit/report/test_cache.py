"""The report cache: a site from cache entries is the site computed again, and an entry
follows its sweep's files."""

import json

import pytest
from report_support import CATALOG

from orchestrator.report import analyze, cache, charts
from orchestrator.report import build as report
from orchestrator.site import static_site as site
from testkit import synthetic


@pytest.fixture
def results(tmp_path):
    results = tmp_path / "results"
    for k, n in enumerate((300, 400)):
        sweep_id = f"2026112{k}T0000Z-c{k}"
        rows = synthetic.synthetic_rows(CATALOG.regions[:8], n, sweep_id=sweep_id, seed=k)
        synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
        (results / sweep_id / "sweep.json").write_text(json.dumps(synthetic.sweep_record(sweep_id)))
    return results


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _no_computing(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(analyze, "summarize", refuse)
    monkeypatch.setattr(report, "load_inputs", refuse)
    monkeypatch.setattr("orchestrator.site.static_site.load_inputs", refuse)


def test_a_site_from_the_cache_is_the_site_computed_again(tmp_path, results, monkeypatch):
    site.build_site(tmp_path / "first", results, catalog=CATALOG, max_points=200)
    entries = sorted(p.name for p in (results / cache.CACHE_DIR).iterdir())
    assert entries == ["20261120T0000Z-c0.json", "20261121T0000Z-c1.json"]
    _no_computing(monkeypatch)
    site.build_site(tmp_path / "second", results, catalog=CATALOG, max_points=200)
    first, second = _files(tmp_path / "first"), _files(tmp_path / "second")
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []
    # and again over itself: the published rows are taken from the site it replaces
    site.build_site(tmp_path / "second", results, catalog=CATALOG, max_points=200)
    assert _files(tmp_path / "second") == first


def test_the_time_series_from_cached_medians_is_the_one_from_every_row(tmp_path, results):
    site.build_site(tmp_path / "site", results, catalog=CATALOG, max_points=200)
    text = (tmp_path / "site" / "data" / site.TIMESERIES_FILE).read_text()
    drawn = json.loads(text[text.index("{}, ") + 4 : text.rindex(");")])["timeseries"]
    loaded = report.load_inputs(sweep_dirs_=sorted(results.iterdir())[1:], catalog=CATALOG)
    started = {s.id: s.started_utc or s.id for s in loaded.sweeps.values()}
    again = charts.timeseries_figure(loaded.data, started, emulated=loaded.emulated)
    assert drawn == report.figure_data(again)
    assert len(drawn["data"]) > 2


def test_an_entry_follows_its_sweeps_files(tmp_path, results):
    sweep = results / "20261121T0000Z-c1"
    site.build_site(tmp_path / "site", results, catalog=CATALOG)
    lines = (sweep / "measurements.csv").read_text().splitlines(keepends=True)
    (sweep / "measurements.csv").write_text("".join(lines[:101]))  # 100 rows left
    site.build_site(tmp_path / "site", results, catalog=CATALOG)
    page = (tmp_path / "site" / "sweeps" / f"{sweep.name}.html").read_text()
    assert "<p>100 measurements between" in page
    published = (tmp_path / "site" / "data" / sweep.name / "measurements.csv").read_text()
    assert len(published.splitlines()) == 101
    # a damaged entry is a miss, not an error; a deleted sweep's entry goes
    cache.path_of(sweep).write_text("{not json")
    (results / "20261120T0000Z-c0" / "measurements.csv").unlink()
    site.build_site(tmp_path / "site", results, catalog=CATALOG)
    assert [p.name for p in (results / cache.CACHE_DIR).iterdir()] == [f"{sweep.name}.json"]
    key = cache.input_key(sweep, CATALOG, False)
    entry = cache.load(sweep, key)
    assert entry is not None and entry.rows == 100
    assert cache.load(sweep, cache.input_key(sweep, CATALOG, True)) is None


def test_a_whole_sweeps_report_writes_the_entry_a_site_reads(tmp_path, results, monkeypatch):
    for sweep in sorted(results.iterdir()):
        report.build_report(sweep, catalog=CATALOG, png=False)
    _no_computing(monkeypatch)
    site.build_site(tmp_path / "site", results, catalog=CATALOG)
    summary = (tmp_path / "site" / "data" / "20261121T0000Z-c1" / "summary.csv").read_text()
    assert summary == (results / "20261121T0000Z-c1" / "report" / "summary.csv").read_text()


def test_a_filtered_report_writes_no_entry(results):
    sweep = results / "20261120T0000Z-c0"
    loaded = report.load_inputs(
        sweep_dirs_=[sweep], catalog=CATALOG, keep=lambda s, d, km: km > 1000
    )
    report.write_report(loaded, sweep / "report", png=False)
    assert not cache.path_of(sweep).exists()


def test_an_entry_keeps_its_figures_as_the_text_the_site_writes(tmp_path, results):
    sweep = results / "20261121T0000Z-c1"
    report.build_report(sweep, catalog=CATALOG, png=False)
    key = cache.input_key(sweep, CATALOG, False)
    entry = cache.load(sweep, key)
    assert entry is not None and {"distance-all", "heatmap-rtt", "map"} <= set(entry.figures)
    for name in entry.figures:  # each line the compact JSON of its figure
        assert cache.compact(entry.figures[name]) == entry.figures.text(name)
    site.build_site(tmp_path / "site", results, catalog=CATALOG)
    for name in entry.figures:
        js = (tmp_path / "site" / "data" / sweep.name / site.figure_file(name)).read_text()
        assert js.count(entry.figures.text(name)) == 1
    # a figure's line changed after it was written: a miss, not a figure drawn wrong
    lines = cache.path_of(sweep).read_text().split("\n")
    changed = lines[2].replace(":5", ":6", 1)
    assert changed != lines[2]
    cache.path_of(sweep).write_text("\n".join([*lines[:2], changed, *lines[3:]]))
    assert cache.load(sweep, key) is None
