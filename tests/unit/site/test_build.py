"""The static site's files: pages, downloads, schema, offline and emulated labels."""

import csv
import json
import re
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner
from report_support import CATALOG
from site_support import (
    PLANTED,
    _Links,  # noqa: F401
    _refs,
    write_study,
)

from orchestrator.cli import main
from orchestrator.core.errors import UserError
from orchestrator.report import analyze
from orchestrator.results import PlanRecord, write_parsed_rows
from orchestrator.results import files as store
from orchestrator.results.schema import MEASUREMENT_COLUMNS
from orchestrator.site import static_site as site
from orchestrator.study.findings import STUDIES_DIR
from testkit import synthetic


@pytest.fixture
def results(tmp_path):
    results = tmp_path / "results"
    for k, (n, backend) in enumerate(((60, "local"), (9000, "local"))):
        sweep_id = f"2026112{k}T0000Z-a{k}"
        rows = synthetic.synthetic_rows(
            CATALOG.regions, n, sweep_id=sweep_id, seed=k, backend=backend
        )
        synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
        (results / sweep_id / "sweep.json").write_text(
            json.dumps(synthetic.sweep_record(sweep_id, backend))
        )
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
    titles = [f["layout"]["title"]["text"] for f in _figures(out / "index.html")]
    assert any("500 of 9000 points shown" in title for title in titles), titles


@pytest.mark.slow
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
    figures = _figures(out / "index.html")
    assert len(figures) >= 8
    for fig in figures:
        assert "EMULATED" in fig["layout"]["title"]["text"]
    # and every emulated throughput figure its rate scale beside it
    index = (out / "index.html").read_text()
    tag = "Mbit/s, emulated: rate scale 0.0517, x19.4 = real"
    assert f"median over tests, throughput ({tag})" in index
    assert "throughput is emulated: rate scale 0.0517" in index  # the sweep's notes


@pytest.mark.slow
def test_study_pages_render_their_markdown_in_the_site_frame(tmp_path, results):
    for sid in ("20261125T0400Z-aaaa", "20261125T0500Z-bbbb"):
        write_study(results, sid)
    (results / STUDIES_DIR / "unfinished").mkdir()  # no page yet: left out
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    index = (out / "studies" / "index.html").read_text()
    assert "href='20261125T0500Z-bbbb.html'" in index and "unfinished" not in index
    page = (out / "studies" / "20261125T0400Z-aaaa.html").read_text()
    # the site's frame: viewport, stylesheet, header links, the EMULATED banner
    assert "name='viewport'" in page and "href='../assets/site.css'" in page
    assert "href='../methodology.html'" in page and "class='emulated-banner'" in page
    # Markdown rendered, not printed: bullets are a list, the table a table, text escaped
    assert "<li>idle RTT 80.1 ms" in page and "- idle RTT" not in page
    assert page.count("<table>") == 1 and "<td>tuned</td>" in page
    assert "<h2>aws:a -&gt; &lt;gcp:b&gt;</h2>" in page
    assert "<pre><code>sysctl -w" in page


@pytest.mark.slow
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
    assert "rate scale" not in index and "median over tests, throughput (Mbit/s)" in index


def test_no_sweeps_is_a_clear_error(tmp_path):
    with pytest.raises(UserError, match="no sweeps under"):
        site.build_site(tmp_path / "site", tmp_path / "empty", catalog=CATALOG)


def test_a_catalog_file_is_read_first_then_used(tmp_path):
    """`interregion site --catalog FILE` hands the file over: a bad one is its error before
    the sweeps are looked for, a good one builds the site."""
    from history_support import make_sweep, sweep_id_at

    from orchestrator.core import CATALOG as SHIPPED

    with pytest.raises(UserError, match="catalog file not found"):
        site.build_site(tmp_path / "site", tmp_path / "empty", catalog=tmp_path / "no.yaml")
    results = tmp_path / "results"
    make_sweep(results, sweep_id_at(datetime(2026, 11, 22, tzinfo=UTC)),
               {("aws:us-east-1", "gcp:europe-west1"): [80.0, 81.0]})  # fmt: skip
    shipped = tmp_path / "regions.yaml"
    shipped.write_text(SHIPPED.read_text())
    index = site.build_site(tmp_path / "site", results, catalog=shipped)
    assert index == tmp_path / "site" / "index.html" and index.is_file()


def test_json_in_pages_cannot_close_the_script_element(tmp_path):
    from orchestrator.site.html import json_script  # the pair pages' data

    text = json_script("x", {"a": "</script><script>alert(1)</script>"})
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
    from report_support import write_catalog

    return write_catalog(tmp_path / "regions.yaml")


def _site_cli(tmp_path, out, results):
    args = ["site", "--out", str(out), "--results", str(results)]
    return CliRunner().invoke(main, [*args, "--catalog", str(_catalog_yaml(tmp_path))])


def _good_sweep(results, sweep_id, n=40, seed=0, meta=None):
    rows = synthetic.synthetic_rows(CATALOG.regions, n, sweep_id=sweep_id, seed=seed)
    synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
    record = synthetic.sweep_record(sweep_id, **(meta or {}))
    (results / sweep_id / "sweep.json").write_text(json.dumps(record))
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
    assert "Z WARNING site: sweep 20261121T0000Z-0002 left out: " in warnings[0]
    assert "sweep.json: unreadable" in warnings[0]
    assert "Z WARNING site: sweep 20261122T0000Z-0003 left out: " in warnings[1]
    assert "gzip" in warnings[1]
    assert sorted(p.name for p in (out / "sweeps").iterdir()) == [
        "20261120T0000Z-0001.html",
        "20261123T0000Z-0004.html",
    ]
    assert sorted(p.name for p in (out / "data").iterdir()) == [
        "20261120T0000Z-0001",
        "20261123T0000Z-0004",
        "schema.json",
        "timeseries.js",
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
                        (home, "interregion did not write there (thesis.tex")):  # fmt: skip
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


def _damaged(text: str, damage: str) -> bytes:
    """A measurements.csv's text with one kind of damage or oddity."""
    lines = text.splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")

    def cell(line: int, column: str, value: str) -> None:
        cells = lines[line].rstrip("\n").split(",")
        cells[header.index(column)] = value
        lines[line] = ",".join(cells) + "\n"

    if damage == "quoted":
        cell(2, "error", '"no route, try again"')
    elif damage == "negative":  # a column the report does not read
        cell(3, "tcp_rtt_ms", "-1")
    elif damage == "huge":
        cell(3, "retransmits", "1" + "0" * 400)
    elif damage == "spaced":  # float() reads it; published, not as a plain number
        cell(4, "retransmits", " 5")
    elif damage == "blank":
        lines.insert(5, "," * (len(header) - 1) + "\n")
    elif damage == "cut":
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
    elif damage == "utf8":
        cell(2, "error", "délai dépassé")
    elif damage == "crlf":
        lines = [line.replace("\n", "\r\n") for line in lines]
    return "".join(lines).encode()


@pytest.mark.parametrize(
    "damage", ["", "quoted", "negative", "huge", "spaced", "blank", "cut", "utf8", "crlf"]
)
def test_a_sweep_published_as_it_is_holds_what_parsing_it_would(tmp_path, damage):
    # the report notes a file whose every row parses and whose bytes are what the
    # csv writer writes (cache.Products.verbatim_rows); the site then copies it whole
    from orchestrator.report import build as report
    from orchestrator.report import cache

    results = tmp_path / "results"
    folder = _good_sweep(results, "20261120T0000Z-0001", n=30)
    path = folder / "measurements.csv"
    path.write_bytes(_damaged(path.read_text(), damage))
    loaded = report.load_inputs(sweep_dirs_=[folder], catalog=CATALOG)
    report.write_report(loaded, folder / "report", png=False)
    assert loaded.cache is not None
    entry = cache.load(folder, loaded.cache[1])
    assert entry is not None and entry.verbatim_rows == (30 if damage == "" else -1)
    site.build_site(tmp_path / "site", results, catalog=CATALOG)
    parsed = tmp_path / "parsed.csv"
    write_parsed_rows(path, parsed)
    published = tmp_path / "site" / "data" / "20261120T0000Z-0001" / "measurements.csv"
    assert published.read_bytes() == parsed.read_bytes()
    if damage == "":
        assert published.read_bytes() == path.read_bytes()


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
        "rounds": [
            {
                "round": 1,
                "kind": "main",
                "tests_ok": 3,
                "slots": [{"client": PLANTED["gcp_project"]}],
            }
        ],
        "measure_runs": [{"kind": "measure", "ansible_rc": 0, "msg": PLANTED["error"]}],
        "plan": {
            "backend": "aws",
            "estimate": {"wall_s": 60.0},
            "variables": {"aws_profile": PLANTED["aws_profile"]},
        },
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
        "created_utc": "2026-11-20T00:00:00.000Z",
        "status": "done",
        "emulated": False,
        "params": {"pings": 10},
        "sequential": False,  # the record's defaults (results.SweepRecord)
        "versions": {},
        "stages": {"provision": {"status": "failed", "wall_s": 1.5}, "measure": {"status": "done"}},
        "rounds": [{"round": 1, "kind": "main", "tests_ok": 3}],
        "measure_runs": [{"kind": "measure", "ansible_rc": 0}],
        # the plan as its record reads it (results.PlanRecord), less its variables
        "plan": {k: v for k, v in PlanRecord.from_json(meta["plan"]).to_json().items()
                 if k != "variables"},
    }  # fmt: skip
    leaks = []
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaks += [(path.name, k) for k, v in PLANTED.items() if v.encode() in data]
            leaks += [(path.name, "host") for v in ("203.0.113.5",) if v.encode() in data]
    assert leaks == []


# d3's SI format type: ".4s", "s", "~s" (0.5 ms reads "500.0m ms", 2 Gbit/s "2.000G")
SI_FORMAT = re.compile(r"%\{[^}:]*:[^}]*s\}")


FIGURES_JS = "window.InterregionFigures = Object.assign(window.InterregionFigures || {}, "


def _figures(page):
    """The figures a page draws: one per chart div, from the fig-*.js files it loads
    (never inlined in the HTML)."""
    text = page.read_text()
    assert "application/json" not in text
    found = {}
    for src in re.findall(r"<script src='([^']*(?:/fig-[^/']*|timeseries)\.js)'>", text):
        js = (page.parent / src).read_text()
        assert js.startswith(FIGURES_JS) and js.endswith(");\n")
        found.update(json.loads(js[len(FIGURES_JS) : -3]))
    charts = re.findall(r"<div class='chart' id='chart-[^']*' data-fig='([^']*)'>", text)
    assert sorted(charts) == sorted(found)
    return [found[name] for name in charts]


def _hover_formats(fig):
    """Every hover template and axis hover/tick format of one figure's JSON."""
    found = [t.get("hovertemplate", "") for t in fig["data"]]
    found += [
        axis.get(key, "")
        for name, axis in fig["layout"].items()
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict)
        for key in ("hoverformat", "tickformat")
    ]
    return [f for f in found if f]


@pytest.mark.slow
def test_no_figure_uses_an_si_format_for_ms_or_mbit(tmp_path, results):
    assert SI_FORMAT.search("%{y:.4s} ms") and not SI_FORMAT.search("%{y:.1f} ms")
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    figures = _figures(out / "index.html")
    assert len(figures) >= 8
    templates = [f for fig in figures for f in _hover_formats(fig)]
    assert any(" ms" in t for t in templates) and any("Mbit/s" in t for t in templates)
    assert [t for t in templates if SI_FORMAT.search(t) or re.fullmatch(r".*s", t)] == []
    # the map's lines hover too (a point at the middle of each), with the pair and its km
    (mid,) = [
        t for fig in figures for t in fig["data"] if t.get("name", "").startswith("pairs (hover")
    ]
    assert len(mid["text"]) == len(mid["meta"]["segments"]) > 0
    assert " km, median RTT " in mid["text"][0] and mid["text"][0].endswith(" ms")
    # hovers name the regions' cities (the catalog's), on the map and on every point
    pair = re.compile(r"\S+ \(.+\) (→|↔) \S+ \(.+\)")
    assert pair.match(mid["text"][0]), mid["text"][0]
    points = [t for t in figures[0]["data"] if (t.get("meta") or {}).get("filter") == "points"]
    assert points and all(pair.fullmatch(s) for t in points for s in t["text"])


@pytest.mark.slow
def test_latency_only_data_draws_no_throughput_axis(tmp_path):
    results = tmp_path / "results"
    for k in range(2):  # two sweeps: the time series is drawn too
        sweep_id = f"2026112{k}T0000Z-p{k}"
        rows = (
            {**row, "throughput_bps": "", "throughput_sender_bps": ""}
            for row in synthetic.synthetic_rows(CATALOG.regions, 200, sweep_id=sweep_id, seed=k)
        )
        synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    figures = _figures(out / "index.html")
    names = [f["layout"]["title"]["text"] for f in figures]
    assert not any("throughput" in n for n in names), names
    charted = [f for f in figures if any(k.startswith("xaxis") for k in f["layout"])]
    assert len(charted) >= 6  # 5 distance charts, the time series (and the heatmap)
    for fig in charted:
        axes = [k for k in fig["layout"] if k.startswith("yaxis")]
        titles = [fig["layout"][a].get("title", {}).get("text", "") for a in axes]
        assert not any("throughput" in t for t in titles), titles


def test_site_leaves_flagged_rows_out_unless_asked(tmp_path):
    """A row faster than light in fibre is flagged: every page leaves it out and says so;
    `site --include-flagged` keeps it."""
    import csv

    from report_support import _sweep, write_catalog

    results = tmp_path / "results"
    folder = _sweep(results, "20261120T0000Z-a0", n=60)
    path = folder / "measurements.csv"
    rows = list(csv.DictReader(path.open()))
    far = max(range(len(rows)), key=lambda i: float(rows[i]["distance_km"] or 0))
    for column in ("rtt_min_ms", "rtt_avg_ms", "rtt_p50_ms", "rtt_p90_ms", "rtt_p99_ms",
                   "rtt_max_ms"):  # fmt: skip
        rows[far][column] = "1.0"
    store.write_rows(folder, rows)  # as a sweep writes them: with their flags
    catalog = write_catalog(tmp_path / "regions.yaml")
    base = ["site", "--results", str(results), "--catalog", str(catalog)]
    left_out = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "a")])
    assert left_out.exit_code == 0, left_out.output
    page = (tmp_path / "a" / "index.html").read_text()
    note = re.search(
        r"(\d+) flagged rows: ([^<]*) left out of every statistic and fit: ([^<]*)", page
    )
    assert note and int(note.group(1)) >= 1 and "1 below_fibre_floor" in note.group(2), note
    assert "RTT of" in note.group(3) and "throughput of" in note.group(3), note
    kept = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "b"), "--include-flagged"])
    assert kept.exit_code == 0, kept.output
    assert "flagged rows:" not in (tmp_path / "b" / "index.html").read_text()


def test_every_downloadable_column_says_what_it_means():
    """data/schema.json: each column of measurements.csv, summary.csv and outliers.csv
    with a description, from the docs kept beside each file's columns."""
    for name, columns in site.schema_json().items():
        assert columns, name
        undocumented = [c["name"] for c in columns if not c["description"]]
        assert not undocumented, (name, undocumented)
