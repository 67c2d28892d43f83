"""The static site's files: pages, downloads, schema, offline and emulated labels."""

import csv
import json
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner
from test_report import CATALOG  # the small fixture catalog (pytest puts tests/ on the path)

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.netmodel import synthetic
from orchestrator.report import analyze
from orchestrator.results.schema import MEASUREMENT_COLUMNS
from orchestrator.site import build as site
from orchestrator.study.report import PAGE_FILE, STUDIES_DIR, page_html


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


def write_study(results, study_id):
    """A finished TCP study's page, where `study tcp` leaves it (results/studies/<id>/)."""
    folder = results / STUDIES_DIR / study_id
    folder.mkdir(parents=True)
    (folder / PAGE_FILE).write_text(page_html(f"## {study_id}\n| a | b |\n", study_id))


@pytest.mark.parametrize("studies", [False, True])
def test_pages_are_offline_and_labelled_emulated(tmp_path, results, studies):
    if studies:
        write_study(results, "20261125T0400Z-aaaa")
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    pages = [out / "index.html", out / "methodology.html", out / "data.html"]
    pages += sorted((out / "sweeps").iterdir())
    for page in pages:
        text = page.read_text()
        assert "class='emulated-banner'" in text, page.name
        # the header links the TCP studies' list when there are studies, else not at all
        prefix = "../" if page.parent.name == "sweeps" else ""
        assert (f"href='{prefix}studies/index.html'" in text) is studies, page.name
    if studies:  # the list and the study's page are reached from it: their links too
        pages += [out / "studies" / "index.html", out / "studies" / "20261125T0400Z-aaaa.html"]
        assert "href='20261125T0400Z-aaaa.html'" in pages[-2].read_text()
    else:
        assert not (out / "studies").exists()
    for page in pages:
        text = page.read_text()
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
    from orchestrator.netmodel.model import DEFAULT_MODEL

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


# --- damaged sweeps, whole builds, what is published ---------------------------------


def _catalog_yaml(tmp_path):
    from test_report import write_catalog

    return write_catalog(tmp_path / "regions.yaml")


def _site_cli(tmp_path, out, results):
    args = ["site", "--out", str(out), "--results", str(results)]
    return CliRunner().invoke(main, [*args, "--catalog", str(_catalog_yaml(tmp_path))])


def _good_sweep(results, sweep_id, n=40, seed=0, meta=None):
    rows = synthetic.synthetic_rows(CATALOG.regions, n, sweep_id=sweep_id, seed=seed)
    synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
    record = {"format_version": 1, "sweep_id": sweep_id, "backend": "local"}
    (results / sweep_id / "sweep.json").write_text(json.dumps({**record, **(meta or {})}))
    return results / sweep_id


def test_a_corrupt_sweep_is_left_out_with_a_one_line_warning(tmp_path):
    results = tmp_path / "results"
    _good_sweep(results, "20261120T0000Z-0001")
    bad_json = _good_sweep(results, "20261121T0000Z-0002")
    (bad_json / "sweep.json").write_text('{"backend": "loc')
    binary = _good_sweep(results, "20261122T0000Z-0003")
    (binary / "measurements.csv").write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)))
    _good_sweep(results, "20261123T0000Z-0004", seed=4)
    out = tmp_path / "site"
    result = _site_cli(tmp_path, out, results)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(warnings) == 2, result.stderr
    assert warnings[0].startswith("warning: site: sweep 20261121T0000Z-0002 left out: ")
    assert "unreadable sweep.json" in warnings[0]
    assert warnings[1].startswith("warning: site: sweep 20261122T0000Z-0003 left out: ")
    assert "gzip" in warnings[1]
    assert sorted(p.name for p in (out / "sweeps").iterdir()) == [
        "20261120T0000Z-0001.html",
        "20261123T0000Z-0004.html",
    ]
    assert sorted(p.name for p in (out / "data").iterdir()) == [
        "20261120T0000Z-0001",
        "20261123T0000Z-0004",
        "schema.json",
    ]


def test_a_rebuild_is_whole_and_a_failed_one_changes_nothing(tmp_path, monkeypatch):
    results = tmp_path / "results"
    _good_sweep(results, "20261120T0000Z-0001")
    old = _good_sweep(results, "20261121T0000Z-0002")
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    assert (out / "sweeps" / "20261121T0000Z-0002.html").exists()
    import shutil

    shutil.rmtree(old)  # that sweep is gone: its page and data must go too
    site.build_site(out, results, catalog=CATALOG)
    assert not (out / "sweeps" / "20261121T0000Z-0002.html").exists()
    assert not (out / "data" / "20261121T0000Z-0002").exists()
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    def broken(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(site, "_methodology_html", broken)
    with pytest.raises(UserError, match=r"cannot write the site .*unchanged"):
        site.build_site(out, results, catalog=CATALOG)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results", "site"]  # no half site


def test_site_out_on_a_file_or_a_folder_of_other_files_is_one_line(tmp_path):
    results = tmp_path / "results"
    _good_sweep(results, "20261120T0000Z-0001")
    blocker = tmp_path / "notes.txt"
    blocker.write_text("keep")
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("keep")
    for out, needle in ((blocker, "is a file"), (blocker / "site", "cannot create"),
                        (home, "not part of a site")):  # fmt: skip
        result = _site_cli(tmp_path, out, results)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and needle in lines[0], result.stderr
    assert blocker.read_text() == "keep" and [p.name for p in home.iterdir()] == ["thesis.tex"]


def test_downloads_hold_only_rows_that_parsed(tmp_path):
    results = tmp_path / "results"
    folder = _good_sweep(results, "20261120T0000Z-0001", n=20)
    path = folder / "measurements.csv"
    lines = path.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    rtt = header.index("rtt_avg_ms")
    bad = lines[3].rstrip("\n").split(",")
    bad[rtt] = "12abc"
    lines[3] = ",".join(bad) + "\n"
    cut = lines[-1][: len(lines[-1]) // 2]  # the writer died mid-row
    path.write_text("".join(lines[:-1]) + cut)
    warnings: list[str] = []
    site.build_site(tmp_path / "site", results, catalog=CATALOG, warn=warnings.append)
    with (tmp_path / "site" / "data" / "20261120T0000Z-0001" / "measurements.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 18  # 20, less the bad number and the cut row
    assert all(r["rtt_avg_ms"] != "12abc" for r in rows)
    assert cut.split(",")[0] == rows[-1]["sweep_id"] and rows[-1]["status"] == "ok"
    assert "2 damaged row(s) of measurements.csv not published" in " ".join(warnings)


def test_a_cut_row_of_the_same_width_is_not_published(tmp_path):
    src = tmp_path / "m.csv"
    src.write_text("sweep_id,status,error\ns,ok,\ns,failed,iperf3: conn")
    written, dropped = site.write_parsed_rows(src, tmp_path / "out.csv")
    assert (written, dropped) == (1, 1)
    with (tmp_path / "out.csv").open() as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["ok"]


PLANTED = {
    "operator_cidr": "203.0.113.77/32",
    "gcp_project": "planted-project-4821",
    "aws_profile": "planted-profile-9133",
    "owner": "planted.owner@example.org",
    "error": "planted error: ssh to 203.0.113.99 refused",
}


def test_sweep_json_is_published_from_an_allow_list(tmp_path):
    results = tmp_path / "results"
    meta = {
        "emulated": False,
        "params": {"pings": 10},
        "cloud_options": {k: v for k, v in PLANTED.items() if k != "error"},
        "owner": PLANTED["owner"],
        "error": PLANTED["error"],
        "stages": {
            "provision": {"status": "failed", "wall_s": 1.5, "error": PLANTED["error"]},
            "measure": {"status": "done", "operator_cidr": PLANTED["operator_cidr"]},
        },
        "rounds": [{"round": 1, "tests_ok": 3, "slots": [{"client": PLANTED["gcp_project"]}]}],
        "measure_runs": [{"kind": "measure", "ansible_rc": 0, "msg": PLANTED["error"]}],
        "plan": {"backend": "aws", "variables": {"aws_profile": PLANTED["aws_profile"]}},
        "hosts": [{"address": "203.0.113.5", "owner": PLANTED["owner"]}],
    }
    _good_sweep(results, "20261120T0000Z-0001", meta=meta)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    published = json.loads((out / "data" / "20261120T0000Z-0001" / "sweep.json").read_text())
    assert published == {
        "format_version": 1,
        "sweep_id": "20261120T0000Z-0001",
        "backend": "local",
        "emulated": False,
        "params": {"pings": 10},
        "stages": {"provision": {"status": "failed", "wall_s": 1.5}, "measure": {"status": "done"}},
        "rounds": [{"round": 1, "tests_ok": 3}],
        "measure_runs": [{"kind": "measure", "ansible_rc": 0}],
        "plan": {"backend": "aws"},
    }
    leaks = []
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaks += [(path.name, k) for k, v in PLANTED.items() if v.encode() in data]
            leaks += [(path.name, "host") for v in ("203.0.113.5",) if v.encode() in data]
    assert leaks == []
