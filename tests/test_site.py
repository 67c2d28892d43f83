"""The static site's files: pages, downloads, schema, offline and emulated labels."""

import csv
import json
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner
from test_report import CATALOG  # the small fixture catalog (pytest puts tests/ on the path)

from orchestrator import analyze, site, synthetic
from orchestrator.cli import main
from orchestrator.errors import UserError
from orchestrator.schema import MEASUREMENT_COLUMNS


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value is not None:
                self.refs.append(value)


def _refs(text):
    parser = _Links()
    parser.feed(text)
    return parser.refs


@pytest.fixture
def results(tmp_path):
    results = tmp_path / "results"
    for k, (n, backend) in enumerate(((60, "local"), (9000, "local"))):
        sweep_id = f"2026112{k}T0000Z-a{k}"
        rows = synthetic.synthetic_rows(
            CATALOG.regions, n, sweep_id=sweep_id, seed=k, backend=backend
        )
        synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
        (results / sweep_id / "sweep.json").write_text(json.dumps({"backend": backend}))
    return results


def test_site_layout_and_downloads(tmp_path, results):
    out = tmp_path / "site"
    index = site.build_site(out, results, catalog=CATALOG, max_points=500)
    assert index == out / "index.html"
    for name in ("index.html", "methodology.html", "data.html", "data/schema.json"):
        assert (out / name).exists(), name
    for asset in ("plotly.min.js", "geo_assets.js", "site.js", "site.css"):
        assert (out / "assets" / asset).stat().st_size > 0
    assert sorted(p.name for p in (out / "sweeps").iterdir()) == [
        "20261120T0000Z-a0.html",
        "20261121T0000Z-a1.html",
    ]
    # Downloads keep every row, whatever the charts show.
    with (out / "data" / "20261121T0000Z-a1" / "measurements.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 9000 and tuple(rows[0]) == MEASUREMENT_COLUMNS
    with (out / "data" / "20261121T0000Z-a1" / "summary.csv").open() as f:
        assert tuple(next(csv.reader(f))) == analyze.SUMMARY_COLUMNS
    schema = json.loads((out / "data" / "schema.json").read_text())
    described = {c["name"]: c["description"] for c in schema["measurements.csv"]}
    assert tuple(described) == MEASUREMENT_COLUMNS and all(described.values())
    assert all(c["description"] for c in schema["summary.csv"])


def test_index_is_the_latest_sweep_with_a_time_series(tmp_path, results):
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG, max_points=500)
    index = (out / "index.html").read_text()
    assert "Sweep 20261121T0000Z-a1" in index
    assert "chart-timeseries" in index
    assert "chart-timeseries" not in (out / "sweeps" / "20261120T0000Z-a0.html").read_text()
    # the big sweep's distance chart was downsampled and says so
    assert "500 of 9000 points shown" in index or "of 9000 points shown" in index


def test_pages_are_offline_and_labelled_emulated(tmp_path, results):
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    pages = [out / "index.html", out / "methodology.html", out / "data.html"]
    pages += sorted((out / "sweeps").iterdir())
    for page in pages:
        text = page.read_text()
        assert "class='emulated-banner'" in text, page.name
        for ref in _refs(text):
            # relative links only (and data: for the empty favicon): nothing from the net
            assert not re.match(r"^[a-z]+://", ref) and not ref.startswith("//"), (page, ref)
            if not ref.startswith("data:"):
                target = (page.parent / ref.split("#")[0]).resolve()
                assert target.exists(), (page.name, ref)
    # every chart of emulated results carries the label in its own title
    index = (out / "index.html").read_text()
    figures = re.findall(r"<script type='application/json' id='fig-\d+'>(.*?)</script>", index)
    assert len(figures) >= 8
    for raw in figures:
        fig = json.loads(raw)
        assert "EMULATED" in fig["layout"]["title"]["text"]


def test_methodology_has_the_emulator_model(tmp_path, results):
    from orchestrator.netmodel import DEFAULT_MODEL

    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    text = (out / "methodology.html").read_text()
    assert f"{DEFAULT_MODEL.rtt_ms_per_1000km:.2f} ms" in text
    assert f"{DEFAULT_MODEL.base_rtt_ms:.2f} ms" in text
    assert "Hyndman-Fan method 7" in text


def test_real_results_have_no_emulated_label(tmp_path):
    results = tmp_path / "results"
    rows = synthetic.synthetic_rows(CATALOG.regions, 60, sweep_id="s-aws", backend="aws")
    synthetic.write_measurements(results / "s-aws" / "measurements.csv", rows)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    index = (out / "index.html").read_text()
    assert "emulated-banner" not in index and "EMULATED" not in index


def test_no_sweeps_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="no sweeps under"):
        site.build_site(tmp_path / "site", tmp_path / "empty", catalog=CATALOG)


def test_json_in_pages_cannot_close_the_script_element(tmp_path):
    text = site._json_script("x", {"a": "</script><script>alert(1)</script>"})
    assert text.count("</script>") == 1
    inner = text[text.index(">") + 1 : text.rindex("</script>")]
    assert json.loads(inner)["a"] == "</script><script>alert(1)</script>"


def test_site_command(tmp_path, results):
    import yaml

    cat = tmp_path / "regions.yaml"
    regions = [
        {k: v for k, v in r.__dict__.items() if v not in ("", False)} for r in CATALOG.regions
    ]
    clouds = {"aws": {"machine_type": "t3.small"}, "gcp": {"machine_type": "e2-small"}}
    cat.write_text(yaml.safe_dump({"clouds": clouds, "regions": regions}))
    out = tmp_path / "site"
    args = ["site", "--out", str(out), "--results", str(results), "--catalog", str(cat)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert (out / "index.html").exists()
    empty = CliRunner().invoke(main, ["site", "--out", str(out), "--results", str(tmp_path / "x")])
    assert empty.exit_code == 2 and empty.output.startswith("error: no sweeps under")
