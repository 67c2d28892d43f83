"""The site's pages from the history store: the matrix (every source, metric, stat and
window precomputed, with freshness, n and baselines), the changes page and the pair pages;
the site as before without a store; the site's guarantees kept with one."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from history_support import make_sweep, sweep_id_at
from report_support import CATALOG, write_catalog
from site_support import PLANTED, _refs, write_study

from orchestrator.cli import main
from orchestrator.exchange import importer
from orchestrator.history import changes, histogram, metrics, windows
from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.site import history_pages as site_history
from orchestrator.site import static_site as site

# builds stores and sites: seconds each; `make unit` skips them
pytestmark = pytest.mark.slow

T0 = datetime(2026, 11, 1, tzinfo=UTC)
A, B, C = "aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1"


def _sweeps(results, levels, start=0, kernels=None):
    """One sweep per 6 h: A -> B pings at levels[i] ms, B -> A 80 ms, A -> C 70 + i ms."""
    for i, level in enumerate(levels, start):
        t = T0 + timedelta(hours=6 * i)
        samples = {
            (A, B): [level + 0.1 * (k % 3) for k in range(20)],
            (B, A): [148.0] * 20,  # within 10 % of A -> B: not flagged asymmetric
            (A, C): [70.0 + i] * 20,
        }
        kernel = (kernels or {}).get(i, "6.1.0-28-amd64")
        make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples, started=t, kernel=kernel)
    h.ingest_all(results)


def matrix_data(out):
    """The matrix as history_data computed it, put together from its index and its
    per-(source, metric) files, each checked to be the script history.js expects."""
    text = (out / "history" / "matrix-data.js").read_text()
    prefix = "window.InterregionMatrix = "
    assert text.startswith(prefix) and text.endswith(";\n")
    doc = json.loads(text[len(prefix) : -2])

    def call(name):
        text = (out / "history" / name).read_text()
        call = "window.InterregionMatrixPart("
        assert text.startswith(call) and text.endswith(");\n")
        return json.loads("[" + text[len(call) : -3] + "]")

    for src in doc["sources"]:
        src["views"], src["baseline"], src["open"] = {}, {}, {}
        stat_files = src.pop("stat_files")
        for metric, name in src.pop("files").items():
            source, got, part = call(name)
            assert (source, got) == (src["source"], metric)
            for window, view in part["views"].items():
                # the metric's own file: the p50 alone of the statistics
                assert [s for s in doc["stats"] if s in view] == ["p50"]
                src["views"][f"{metric}|{window}"] = view
            if part["baseline"] is not None:
                src["baseline"][metric] = part["baseline"]
            src["open"][metric] = part["open"]
            # every other statistic in a file of its own: each window's values
            assert sorted(stat_files[metric]) == sorted(s for s in doc["stats"] if s != "p50")
            for stat, name in stat_files[metric].items():
                source, got, values, named = call(name)
                assert (source, got, named) == (src["source"], metric, stat)
                assert sorted(values) == sorted(part["views"])
                for window, column in values.items():
                    src["views"][f"{metric}|{window}"][stat] = column
    return doc


@pytest.fixture
def episode_site(tmp_path):
    """12 sweeps, A -> B up from 150 to 160 ms in the last three: an open episode."""
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 9 + [160.0] * 3)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    return out


def _binned(x):
    """A percentile of RTT's windows of days, read from the histograms: within their
    bound of the exact one (as the page rounds it, to 0.01)."""
    return pytest.approx(x, rel=histogram.ERROR_BOUND, abs=0.005)


def _cell(src_doc, view, key, src, dst):
    n = len(src_doc["regions"])
    k = src_doc["regions"].index(src) * n + src_doc["regions"].index(dst)
    return src_doc["views"][view][key][k] if view else src_doc[key]


def test_matrix_holds_every_combination_with_known_values(episode_site):
    doc = matrix_data(episode_site)
    assert doc["format"] == "interregion.site-matrix" and doc["version"] == 1
    assert doc["windows"] == ["latest", "1D", "1W", "1M", "1Y"]
    assert doc["stats"] == ["min", "p10", "p25", "p50", "p75", "p90", "p99", "max", "mean"]
    assert doc["min_samples"] == {"min": 1, "p10": 100, "p25": 40, "p50": 1, "p75": 40,
                                  "p90": 100, "p99": 1000, "max": 1, "mean": 1}  # fmt: skip
    assert doc["metrics"] == ["rtt", "loss", "jitter", "throughput"]
    (src,) = doc["sources"]
    assert (src["source"], src["emulated"], src["caption"]) == (
        "emulated",
        True,
        "source: EMULATED",
    )
    # by cloud, then west to east; each with its city
    assert src["regions"] == [A, C, B]
    assert src["cities"] == [CATALOG.get(r).city for r in (A, C, B)]
    assert sorted(src["views"]) == sorted(
        f"{m}|{w}"
        for m in ("rtt", "loss", "jitter", "throughput")
        for w in ("latest", "1D", "1W", "1M", "1Y")
    )
    for view in src["views"].values():
        keys = (*doc["stats"], "samples", "tests", "newest_s", "prev_p50")
        assert all(len(view[k]) == 9 for k in keys)
    # ping's loss (0 %) and mdev (0.1 ms) of every test
    assert _cell(src, "loss|1W", "p50", A, B) == 0.0
    assert _cell(src, "jitter|1W", "p50", A, B) == pytest.approx(0.1)
    assert _cell(src, "jitter|1W", "p90", A, B) is None  # one figure a test: too few for a p90
    # the previous window: the day before the 1D window, 4 ms lower for A -> C (+1 per run)
    assert _cell(src, "rtt|1D", "prev_p50", A, C) == _binned(79.5 - 4.0)
    assert _cell(src, "rtt|latest", "prev_p50", A, C) is None
    assert _cell(src, "rtt|1M", "prev_p50", A, C) is None  # nothing a month before
    # a 3-day store: its 1Y holds what its 1M holds (computed once), but names its own start
    year, month = src["views"]["rtt|1Y"], src["views"]["rtt|1M"]
    assert year["window_start_utc"] < month["window_start_utc"]
    assert {k: x for k, x in year.items() if k != "window_start_utc"} == {
        k: x for k, x in month.items() if k != "window_start_utc"
    }
    # latest: each pair's newest test alone (run 11: 160.0, 160.1, 160.2 ... 20 samples)
    assert _cell(src, "rtt|latest", "tests", A, B) == 1
    assert _cell(src, "rtt|latest", "samples", A, B) == 20
    assert _cell(src, "rtt|latest", "p50", A, B) == pytest.approx(160.1)
    assert _cell(src, "rtt|latest", "p50", A, C) == pytest.approx(81.0)
    # 1D: runs 8..11 of A -> C (the day up to the source's latest test): 78, 79, 80, 81 ms
    assert _cell(src, "rtt|1D", "tests", A, C) == 4
    assert _cell(src, "rtt|1D", "p50", A, C) == _binned(79.5)
    assert _cell(src, "rtt|1D", "p90", A, C) is None  # 80 samples: p90 needs 100
    # 1W/1M: all 12 runs, 240 samples: p90 shown (rank 215.1 of 70..81 x 20 -> 80), p99
    # not (it needs 1,000)
    assert _cell(src, "rtt|1M", "samples", A, C) == 240
    assert _cell(src, "rtt|1M", "p50", A, C) == _binned(75.5)
    assert _cell(src, "rtt|1M", "p90", A, C) == _binned(80.0)
    assert _cell(src, "rtt|1M", "p99", A, C) is None
    # the others by hand: 70..81 ms, 20 samples each; p25 at rank 59.75 (72 and 73), p75
    # at 179.25 (78 and 79), p10 at 23.9 (both 71)
    got = {s: _cell(src, "rtt|1M", s, A, C) for s in doc["stats"]}
    assert got == {"min": 70.0, "p10": _binned(71.0), "p25": _binned(72.75),
                   "p50": _binned(75.5), "p75": _binned(78.25), "p90": _binned(80.0),
                   "p99": None, "max": 81.0, "mean": pytest.approx(75.5)}  # fmt: skip
    # 1D's 80 samples (78..81): a p25 (rank 19.75), no p10 (it needs 100)
    assert _cell(src, "rtt|1D", "p25", A, C) == _binned(78.75)
    assert _cell(src, "rtt|1D", "p10", A, C) is None
    assert _cell(src, "rtt|1D", "mean", A, C) == pytest.approx(79.5)
    # latest (computed from the tests, not the histograms): run 11 alone, 20 samples,
    # 7 of 160.0, 7 of 160.1, 6 of 160.2: mean 160.095 (to 0.01 on the page)
    got = {s: _cell(src, "rtt|latest", s, A, B) for s in doc["stats"]}
    assert got == pytest.approx({"min": 160.0, "p10": None, "p25": None, "p50": 160.1,
                                 "p75": None, "p90": None, "p99": None, "max": 160.2,
                                 "mean": 160.095}, abs=0.006)  # fmt: skip
    assert _cell(src, "throughput|1W", "mean", A, B) == pytest.approx(900.0)
    assert _cell(src, "loss|1M", "max", A, B) == 0.0
    # the window's pings lost / sent with its Wilson interval: 12 runs of 20, none lost:
    # 0 % (95 %: 0 to z^2 / (240 + z^2) = 1.575 %), not a plain 0
    assert _cell(src, "loss|1M", "pings_sent", A, B) == 240
    assert _cell(src, "loss|1M", "loss_pct", A, B) == 0.0
    assert _cell(src, "loss|1M", "loss_low_pct", A, B) == 0.0
    assert _cell(src, "loss|1M", "loss_high_pct", A, B) == pytest.approx(1.575, abs=0.001)
    assert _cell(src, "loss|latest", "pings_sent", A, B) == 20  # the newest test alone
    assert "loss_pct" not in src["views"]["rtt|1M"]
    assert _cell(src, "rtt|latest", "p99", A, C) is None  # 20 samples
    assert _cell(src, "throughput|1W", "p50", A, B) == pytest.approx(900.0)  # Mbit/s
    # freshness: the newest test's start (run 11, A -> C is the first row: +0 s)
    newest = T0 + timedelta(hours=66)
    assert _cell(src, "rtt|1W", "newest_s", A, C) == int(newest.timestamp())
    # no test from C: an empty row
    assert _cell(src, "rtt|1W", "tests", C, A) is None
    # baselines from change detection: A -> B has an open episode, judged against 150.1
    n = 3
    k_ab = src["regions"].index(A) * n + src["regions"].index(B)
    k_ac = src["regions"].index(A) * n + src["regions"].index(C)
    assert src["baseline"]["rtt"][k_ab] == pytest.approx(150.1)
    assert src["baseline"]["rtt"][k_ac] == pytest.approx(75.5)  # median of the 12 runs
    assert src["open"]["rtt"] == [k_ab] and src["open"]["throughput"] == []


def test_matrix_page_is_labelled_and_linked(episode_site):
    page = (episode_site / "history" / "matrix.html").read_text()
    assert "id='source-banner'" in page and "EMULATED" in page
    assert "id='source-banner' hidden" not in page  # the first source shown is emulated
    assert "<p id='matrix-caption' class='caption'>source: EMULATED</p>" in page
    for name in ("source", "metric", "stat", "window", "colour"):
        assert f"<select name='{name}'>" in page
    # every statistic of the CLI's matrix, the p50 first shown; the rule a null follows
    picker = re.search(r"<select name='stat'>(.*?)</select>", page).group(1)
    assert re.findall(r"<option value='([^']+)'", picker) == list(metrics.STATS)
    assert "<option value='p50' selected>" in picker
    assert "p10, p90: 100; p99: 1,000" in page
    assert "as <code>interregion matrix</code> reads them: the same numbers" in page
    # the front page is the same matrix, from the same data file; the sweep is latest.html
    index = (episode_site / "index.html").read_text()
    assert "href='history/matrix.html'" in index and "href='history/changes.html'" in index
    assert "<script src='history/matrix-data.js'>" in index
    assert "data-pairs='history/pairs/'" in index
    assert "href='latest.html'>Latest sweep" in index
    assert "Sweep " in (episode_site / "latest.html").read_text()
    sweep_page = next((episode_site / "sweeps").iterdir()).read_text()
    assert "href='../history/matrix.html'" in sweep_page


def test_history_pages_are_offline_and_labelled(episode_site):
    pages = [episode_site / "history" / n for n in ("matrix.html", "changes.html")]
    pages += sorted((episode_site / "history" / "pairs").iterdir())
    assert len(pages) == 4  # two unordered pairs: A-B (both ways) and A-C
    for page in pages:
        text = page.read_text()
        assert "class='emulated-banner'" in text, page.name
        for ref in _refs(text):
            assert not re.match(r"^[a-z]+://", ref) and not ref.startswith("//"), (page, ref)
            if not ref.startswith("data:"):
                assert (page.parent / ref.split("#")[0]).resolve().exists(), (page.name, ref)


def test_history_pages_link_the_studies_when_there_are_some(tmp_path):
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 3)
    write_study(results, "20261125T0400Z-aaaa")
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    for page, prefix in (
        (out / "history" / "matrix.html", "../"),
        (out / "history" / "changes.html", "../"),
        (next((out / "history" / "pairs").iterdir()), "../../"),
    ):
        ref = f"{prefix}studies/index.html"
        assert f"href='{ref}'" in page.read_text(), page.name
        assert (page.parent / ref).resolve().exists()


def test_changes_page_lists_open_and_closed_apart_from_configuration(tmp_path):
    results = tmp_path / "results"
    # A -> B: an episode that reverts; then a kernel change moves every pair: configuration
    kernels = {i: "6.1.0-29-amd64" for i in range(15, 18)}
    _sweeps(results, [150.0] * 10 + [160.0] * 3 + [150.0] * 2 + [170.0] * 3, kernels=kernels)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    page = (out / "history" / "changes.html").read_text()
    assert "id='episodes-open-none'" in page and "<strong id='open-count'>0 open" in page
    closed = page[page.index("<table id='episodes-closed'>") :].split("</table>")[0]
    assert closed.count("<tr data-status='reverted'") == 1
    assert f"{A} ↔ {B}" in closed and "150.1 ms" in closed and "160.1 ms" in closed
    # each direction with its thresholds, the event's k1 and k2
    assert f"{B} → {A}: 148.0 ms → 148.0 ms (did not move)" in closed
    assert (
        "flag ≥ 2 ms, confirm ≥ 2 ms" in closed and "<td class='thresholds'>3, 3.75</td>" in closed
    )
    assert "href='pairs/aws_us-east-1--gcp_europe-west1.html'" in closed
    # each direction's change in ms and in % of its old level: 150.1 -> 160.1 ms is
    # +10.0 ms, +6.7 %; B -> A did not move: +0.0 ms, +0.0 %
    assert "<th>Δ</th><th>%</th>" in closed
    assert "<td class='delta'>+10.0 ms<br>+0.0 ms</td>" in closed
    assert "<td class='pct'>+6.7 %<br>+0.0 %</td>" in closed
    # 18 runs: every pair judged, none waiting
    assert "id='not-judged'" not in page
    configs = page[page.index("<table id='configuration-changes'>") :].split("</table>")[0]
    assert "src_kernel: 6.1.0-28-amd64 -&gt; 6.1.0-29-amd64" in configs
    assert "<td>3</td>" in configs  # the three directed pairs
    # the kernel change at 170 ms is not a network change
    assert closed.count("<tr data-status=") == 1
    assert "id='suspected-none'" in page
    assert "id='calibration'" in page and "judged runs were 4.5 scales" in page


def test_after_one_sweep_the_changes_page_says_what_is_not_judged(tmp_path):
    results = tmp_path / "results"
    _sweeps(results, [150.0])
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    page = (out / "history" / "changes.html").read_text()
    waiting = page[page.index("<ul id='not-judged'>") :].split("</ul>")[0]
    # three directed pairs, each with RTT and throughput, 1 of the 8 runs needed
    assert "<li>not judged: 3 pairs have 1 of the 8 runs needed (rtt, emulated)</li>" in waiting
    assert "<li>not judged: 3 pairs have 1 of the 8 runs needed (throughput, emulated)" in waiting
    assert "nothing can have changed yet" in page


def test_pair_page_has_both_directions_and_episode_markers(episode_site):
    path = episode_site / "history" / "pairs" / site_history.pair_file(B, A)
    assert path.name == "aws_us-east-1--gcp_europe-west1.html"
    text = path.read_text()
    raw = re.search(r"<script type='application/json' id='pair-data'>(.*?)</script>", text)
    doc = json.loads(raw.group(1))
    (entry,) = doc["sources"]
    assert entry["caption"] == "source: EMULATED"
    # what history.js puts beside its throughput (hover, title)
    assert entry["rate_scale_tag"] == "emulated: rate scale 0.0517, x19.4 = real"
    assert [(d["src"], d["dst"]) for d in entry["directions"]] == [(A, B), (B, A)]
    forward = entry["directions"][0]
    assert len(forward["t"]) == 12 and forward["rtt"][-3:] == pytest.approx([160.1] * 3)
    assert forward["t"][0] == "2026-11-01T00:00:10.000Z"  # ISO 8601, milliseconds, Z
    assert forward["throughput"][0] == pytest.approx(900.0)
    # its 12 tests' pings lost / sent: none of 240, 0-1.575 % (Wilson), said on the page
    assert forward["loss"]["pings_sent"] == 240 and forward["loss"]["loss_pct"] == 0.0
    assert forward["loss"]["loss_high_pct"] == pytest.approx(1.575, abs=0.001)
    assert "0.00 % (95 %: 0.00-1.58 %, 0 of 240 pings)" in text
    (episode,) = entry["episodes"]
    assert (episode["metric"], episode["src"], episode["status"]) == ("rtt", A, "open")
    assert episode["started_utc"].startswith("2026-11-03T06:00")  # run 9
    assert "id='pair-0-rtt'" in text and "id='pair-0-throughput'" in text
    # what detection can see: scales floored at 0.3 ms, so the 2 ms minimum sets it
    size = round(changes.smallest_change(0.3), 2)
    assert [d["smallest_detectable_change_ms"] for d in entry["directions"]] == [size, size]
    assert f"{A} → {B} {size:g} ms" in text and "id='detectable-0'" in text


def test_sources_are_never_mixed_and_each_is_named(tmp_path):
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 3)
    f = tmp_path / "theirs.csv"
    f.write_text(
        "src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\n"
        "aws,us-east-1,gcp,europe-west1,77.5\n"
    )
    importer.import_file(results, f, "theirs", "2022-02", label="Their 2022 data")
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    doc = matrix_data(out)
    names = [(s["source"], s["emulated"], s["caption"]) for s in doc["sources"]]
    assert names == [
        ("emulated", True, "source: EMULATED"),
        ("theirs", False, "source: theirs (Their 2022 data), real measurements"),
    ]
    theirs = doc["sources"][1]
    assert theirs["regions"] == [A, B]
    assert _cell(theirs, "rtt|1W", "p50", A, B) == pytest.approx(77.5)
    assert _cell(theirs, "rtt|1W", "tests", B, A) is None  # B -> A is only in emulated
    page = (out / "history" / "matrix.html").read_text()
    assert "source: theirs (Their 2022 data), real measurements</option>" in page
    pair = (out / "history" / "pairs" / site_history.pair_file(A, B)).read_text()
    assert "source: EMULATED" in pair and "real measurements" in pair
    charts = re.findall(r"id='(pair-\d-\w+)'", pair)
    assert charts == ["pair-0-rtt", "pair-0-throughput", "pair-1-rtt"]  # theirs: RTT only


def test_without_a_store_the_site_is_as_before(tmp_path):
    results = tmp_path / "results"
    make_sweep(results, sweep_id_at(T0), {(A, B): [10.0] * 20}, started=T0)
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    assert not (out / "history").exists()
    assert "history/" not in (out / "index.html").read_text()
    assert sorted(p.name for p in out.iterdir()) == [
        ".interregion-manifest", "assets", "data", "data.html", "index.html", "methodology.html",
        "sweeps",
    ]  # fmt: skip


def test_a_damaged_store_is_one_warning_and_the_site_is_built_without(tmp_path):
    results = tmp_path / "results"
    make_sweep(results, sweep_id_at(T0), {(A, B): [10.0] * 20}, started=T0)
    h.store_path(results).write_bytes(b"not a duckdb file" * 100)
    warnings: list[str] = []
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG, warn=warnings.append)
    assert not (out / "history").exists() and (out / "index.html").exists()
    assert len(warnings) == 1 and "history pages left out" in warnings[0]
    assert "history rebuild" in warnings[0]


def test_a_store_failing_after_the_pair_pages_leaves_none_of_them(tmp_path, monkeypatch):
    """The pair pages are written while the matrix is still computed: when the matrix
    then fails, the site is built without history pages, none left behind."""
    import duckdb

    results = tmp_path / "results"
    _sweeps(results, [150.0] * 3)
    written = []
    real = site_history.write_pair_pages

    def pair_pages(root, data, studies=False):
        real(root, data, studies)
        written.append(sorted(p.name for p in (root / "history" / "pairs").iterdir()))

    def matrix_files(*a, **k):
        raise duckdb.IOException("the disk went away")

    monkeypatch.setattr(site_history, "write_pair_pages", pair_pages)
    monkeypatch.setattr(site_history, "matrix_files", matrix_files)
    warnings: list[str] = []
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG, warn=warnings.append)
    assert written and written[0]  # the pages were there before the failure
    assert not (out / "history").exists() and (out / "index.html").exists()
    assert len(warnings) == 1 and "the disk went away" in warnings[0]


def test_site_command_builds_the_history_pages(tmp_path):
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 3)
    out = tmp_path / "site"
    args = ["site", "--out", str(out), "--results", str(results)]
    result = CliRunner().invoke(main, [*args, "--catalog", str(write_catalog(tmp_path / "r.yaml"))])
    assert result.exit_code == 0, result.output
    for name in ("matrix.html", "matrix-data.js", "changes.html"):
        assert (out / "history" / name).exists(), name
    assert (out / "index.html").exists() and (out / "methodology.html").exists()
    # a rebuild after the store is gone drops the history pages (built whole, swapped in)
    h.store_path(results).unlink()
    result = CliRunner().invoke(main, [*args, "--catalog", str(tmp_path / "r.yaml")])
    assert result.exit_code == 0, result.output
    assert not (out / "history").exists()


def test_the_stores_sweep_records_are_not_published(tmp_path):
    results = tmp_path / "results"
    folder = make_sweep(results, sweep_id_at(T0), {(A, B): [10.0] * 20}, started=T0)
    record = json.loads((folder / "sweep.json").read_text())
    record["cloud_options"] = {k: v for k, v in PLANTED.items() if k != "error"}
    record["stages"] = {"provision": {"status": "failed", "error": PLANTED["error"]}}
    (folder / "sweep.json").write_text(json.dumps(record))
    h.ingest_all(results)
    with h.opened(results, read_only=True) as con:  # the store holds them...
        (stored,) = con.execute("SELECT record FROM sweeps").fetchone()
    assert PLANTED["gcp_project"] in stored
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    assert (out / "history" / "matrix.html").exists()
    leaks = [
        (p.name, k)
        for p in out.rglob("*")
        if p.is_file()
        for k, value in PLANTED.items()
        if value.encode() in p.read_bytes()
    ]
    assert leaks == []  # ...the site does not


def test_a_store_missing_a_table_is_one_warning_too(tmp_path):
    results = tmp_path / "results"
    make_sweep(results, sweep_id_at(T0), {(A, B): [10.0] * 20}, started=T0)
    h.ingest_all(results)
    with h.opened(results) as con:
        con.execute("DROP VIEW measurements")
    warnings: list[str] = []
    site.build_site(tmp_path / "site", results, catalog=CATALOG, warn=warnings.append)
    assert not (tmp_path / "site" / "history").exists()
    assert len(warnings) == 1 and "history pages left out" in warnings[0]
    assert "history rebuild" in warnings[0] and "\n" not in warnings[0]


def test_pair_pages_mark_only_the_episodes_of_their_window(tmp_path):
    results = tmp_path / "results"
    # days 0..13: an episode that reverts on day 13; then days 40..47, quiet
    levels = [150.0] * 10 + [160.0, 160.0, 160.0, 150.0, 150.0]
    for day, level in [*enumerate(levels), *((d, 150.0) for d in range(40, 48))]:
        t = T0 + timedelta(days=day)
        make_sweep(results, sweep_id_at(t, f"{day:04x}"),
                   {(A, B): [level + 0.1 * (k % 3) for k in range(20)]}, started=t)  # fmt: skip
    h.ingest_all(results)
    with h.opened(results, read_only=True) as con:
        data = site_history.history_data(con)
    assert [e["status"] for e in data.changes["episodes"]] == ["reverted"]  # on the changes page
    (entry,) = data.pairs[(A, B)]["sources"]
    assert entry["episodes"] == []  # closed before the pair page's 30 days
    assert len(entry["directions"][0]["t"]) == 8  # days 40..47


def test_pair_pages_and_latest_cells_of_a_pair_not_tested_lately(tmp_path):
    # A -> C is tested on days 0..2 only, A -> B on days 0..2 and 40..41: the pair page of
    # A-C shows its newest test alone (none in the 30 days), the latest matrix cell is its
    # day-2 test; A-B's page holds its window only
    results = tmp_path / "results"
    for day in (0, 1, 2, 40, 41):
        t = T0 + timedelta(days=day)
        samples = {(A, B): [100.0 + day] * 20}
        if day <= 2:
            samples[(A, C)] = [50.0 + day] * 20
        make_sweep(results, sweep_id_at(t, f"{day:04x}"), samples, started=t)
    h.ingest_all(results)
    with h.opened(results, read_only=True) as con:
        data = site_history.history_data(con)
    (ac,) = data.pairs[(C, A)]["sources"]  # keyed by the sorted pair
    assert [d["rtt"] for d in ac["directions"]] == [[52.0]]
    (ab,) = data.pairs[(A, B)]["sources"]
    assert [d["rtt"] for d in ab["directions"]] == [[140.0, 141.0]]
    (src,) = data.matrix["sources"]
    latest = data.matrix_files[src["files"]["rtt"]][2]["views"]["latest"]
    at = {r: i for i, r in enumerate(src["regions"])}
    width = len(src["regions"])
    assert latest["p50"][at[A] * width + at[C]] == 52.0
    assert latest["tests"][at[A] * width + at[C]] == 1
    assert latest["p50"][at[A] * width + at[B]] == 141.0


def test_the_changes_page_shows_suspected_runs(tmp_path):
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 10 + [160.0])  # one flagged run: suspected, not an event
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    page = (out / "history" / "changes.html").read_text()
    assert "<strong id='open-count'>0 open" in page and "id='episodes-open-none'" in page
    table = page[page.index("<table id='suspected'>") :].split("</table>")[0]
    assert table.count("<tr class='suspected'>") == 1
    assert f"{A} → {B}: +10 (2 ms)" in table


def test_a_long_table_of_the_changes_page_shows_its_first_rows_and_says_how_many_more(
    tmp_path, monkeypatch
):
    """A network-wide event flags every path's run at once: thousands of rows, a page
    of megabytes at a full catalog (1.2 MB over issue 22's 500 KB), unless capped."""
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 10 + [160.0])
    with h.opened(results, read_only=True) as con:
        data = site_history.history_data(con, catalog=CATALOG)
    one = data.changes["suspected"][0]
    data.changes["suspected"] = [{**one, "run": f"run-{i}"} for i in range(7)]
    monkeypatch.setattr(site_history, "TABLE_ROWS", 3)
    page = site_history.changes_html(data)
    table = page[page.index("<table id='suspected'>") :].split("</table>")[0]
    assert [f"run-{i}" in table for i in range(7)] == [True] * 3 + [False] * 4
    assert "id='suspected-more'>The first 3 of 7 shown" in page
    assert "interregion changes --json" in page
    monkeypatch.setattr(site_history, "TABLE_ROWS", 7)  # all shown: no line
    assert "suspected-more" not in site_history.changes_html(data)


def test_a_throughput_cell_names_what_limited_most_of_its_tests(tmp_path):
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 2)
    f = tmp_path / "theirs.csv"
    f.write_text(
        "src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms,throughput_bps,limiter\n"
        "aws,us-east-1,gcp,europe-west1,77.5,2e6,window\n"
        "aws,us-east-1,gcp,europe-west1,77.6,2.1e6,window\n"
        "aws,us-east-1,gcp,europe-west1,77.7,1.2e6,allowance\n"
        "gcp,europe-west1,aws,us-east-1,77.5,9e6,\n"
    )
    importer.import_file(results, f, "theirs", "2022-02", label="Their 2022 data")
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    theirs = matrix_data(out)["sources"][1]
    assert _cell(theirs, "throughput|1W", "limiter", A, B) == "window"
    assert _cell(theirs, "throughput|1W", "limiter", B, A) is None  # not said: not guessed
    assert _cell(theirs, "rtt|1W", "limiter", A, B) is None
    assert "limited by " in (out / "assets" / "history.js").read_text()


def test_a_tie_of_limiters_names_the_same_one_in_every_build(tmp_path):
    """DuckDB's mode() picks among ties in an order that varies between runs: the cell
    names the first of a tie by name, whatever the order the rows are read in."""
    results = tmp_path / "results"
    _sweeps(results, [150.0] * 2)
    f = tmp_path / "theirs.csv"
    f.write_text(
        "src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms,throughput_bps,limiter\n"
        + "aws,us-east-1,gcp,europe-west1,77.5,2e6,window\n" * 3
        + "aws,us-east-1,gcp,europe-west1,77.7,1.2e6,capacity\n" * 3
        + "aws,us-east-1,gcp,europe-west1,77.7,1.2e6,loss\n" * 2
    )
    importer.import_file(results, f, "theirs", "2022-02", label="Their 2022 data")
    out = tmp_path / "site"
    site.build_site(out, results, catalog=CATALOG)
    theirs = matrix_data(out)["sources"][1]
    assert _cell(theirs, "throughput|1W", "limiter", A, B) == "capacity"
    assert windows._mode({"window": 3, "capacity": 3, "loss": 2}) == "capacity"
    assert windows._mode({"window": 4, "capacity": 3}) == "window"
    assert windows._mode(None) is None and windows._mode({}) is None


def _pages(root, data):
    site_history.write_pages(root, data)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def _built_after_each(results, out, sweeps):
    """The site built after each of `sweeps` is ingested (a sweep's end does both)."""
    for i in sweeps:
        t = T0 + timedelta(hours=6 * i)
        # samples and throughputs that differ per sweep: windows that move lose the
        # smallest and largest values of some bins; a change at sweep 9
        level = 150.0 if i < 9 else 165.0
        samples = {
            (A, B): [level + 0.013 * ((7 * i + k) % 11) + 0.2 * (k % 4) for k in range(20)],
            (B, A): [148.0 + 0.05 * ((3 * i + k) % 7) for k in range(20)],
            (A, C): [70.0 + (i % 5) + 0.01 * k for k in range(20)],
        }
        sweep_id = sweep_id_at(t, f"{i:04x}")
        make_sweep(results, sweep_id, samples, started=t, throughput_bps=8.0e8 + 1.5e7 * (i % 3))
        h.ingest_sweep(results, sweep_id)
        site.build_site(out, results, catalog=CATALOG)


def _files(out):
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_site_built_after_each_of_12_sweeps_is_the_one_built_after_the_12th(tmp_path):
    """The site is a function of the store and the sweep folders: built after each of
    12 sweeps, or once over a copy of the same results, the same files, byte for byte;
    nothing kept outside the store."""
    import shutil

    results, out = tmp_path / "results", tmp_path / "site"
    _built_after_each(results, out, range(12))
    assert not (results / ".cache" / "site").exists()
    once = tmp_path / "once"
    shutil.copytree(results, once, ignore=shutil.ignore_patterns(".cache"))
    site.build_site(tmp_path / "site-once", once, catalog=CATALOG)
    built, whole = _files(out), _files(tmp_path / "site-once")
    assert built == whole
    assert "history/pairs/aws_us-east-1--gcp_europe-west1.html" in built
    # the windows are there to compare: a p90 of 240 samples
    data = matrix_data(out)["sources"][0]["views"]
    assert all(any(x is not None for x in data[f"rtt|{w}"]["p90"]) for w in ("1W", "1M"))


def test_an_old_kept_state_is_removed_and_never_read(tmp_path):
    results, out = tmp_path / "results", tmp_path / "site"
    _built_after_each(results, out, range(3))
    kept = results / ".cache" / "site" / "matrix-state"
    kept.mkdir(parents=True)
    (kept / "meta.json").write_text("{}")
    site.build_site(out, results, catalog=CATALOG)
    assert not (results / ".cache" / "site").exists()


def test_a_site_over_a_store_kept_by_ingests_equals_one_over_a_rebuilt_store(tmp_path):
    """The histograms each ingest keeps give the matrix the whole store gives."""
    import shutil

    results = tmp_path / "results"
    for i in range(40):
        t = T0 + timedelta(hours=6 * i)
        samples = {(A, B): [150.0 + 0.37 * (k % 5) + 0.01 * i for k in range(20)],
                   (B, A): [148.0 + 0.11 * k for k in range(20)]}  # fmt: skip
        h.ingest_sweep(results, make_sweep(results, sweep_id_at(t, f"{i:04x}"), samples,
                                           started=t).name)  # fmt: skip
    with h.opened(results, read_only=True) as con:
        kept = site_history.history_data(con)
    whole = tmp_path / "whole"
    shutil.copytree(results, whole, ignore=shutil.ignore_patterns("history.duckdb*", ".cache"))
    h.rebuild(whole)
    with h.opened(whole, read_only=True) as con:
        rebuilt = site_history.history_data(con)
    assert (kept.matrix, kept.matrix_files) == (rebuilt.matrix, rebuilt.matrix_files)
    # the binned windows are there to compare: a p90 from 560 samples
    p90 = kept.matrix["sources"][0]["stat_files"]["rtt"]["p90"]
    assert any(x is not None for x in kept.matrix_files[p90][2]["1W"])


def test_pair_pages_read_the_month_alone_as_the_store_searched_whole(tmp_path, monkeypatch):
    """Every pair tested in the 30 days: the pages read those rows only, and hold what
    the search of the whole store for pairs without one gives, byte for byte."""
    results = tmp_path / "results"
    _sweeps(results, [150.0 + 0.5 * (i % 4) for i in range(30)])
    with h.opened(results, read_only=True) as con:
        (info,) = v.source_infos(con).values()
        start = info.latest - timedelta(days=2)  # A -> B's and A -> C's last 8 sweeps
        fast = site_history._pair_series(con, info.name, start)
        monkeypatch.setattr("orchestrator.site.history_pages.every_pair_since", lambda *a: False)
        whole = site_history._pair_series(con, info.name, start)
    # A -> C, A -> B (10 s later in each sweep), B -> A (20 s later)
    assert [r[:2] for r in fast] == [(A, C), (A, B), (B, A)]
    assert [len(r[2]) for r in fast] == [8, 8, 9]
    assert fast == whole
    assert fast[1][4] == [150.0 + 0.5 * (i % 4) + 0.1 for i in range(22, 30)]
    assert fast[1][2][0] == "2026-11-06T12:00:10.000Z"
    assert fast[1][3][0] == sweep_id_at(T0 + timedelta(hours=6 * 22), f"{22:04x}")
    assert fast[1][5] == [900.0] * 8  # Mbit/s
    assert fast[1][6] == (160, 0)  # 8 tests of 20 pings, none lost


@pytest.mark.parametrize("metric", ["rtt", "throughput"])
def test_the_matrix_rounds_whole_arrays_as_shown_rounds_each_value(metric):
    """_rounded (numpy, a view at once) gives what shown (Python's round) gives, also
    at the halves where scaling by 10^digits rounds the other way (2.675, 1.005)."""
    import numpy as np

    scale = 1e6 if metric == "throughput" else 1.0
    rng = np.random.default_rng(7)
    values = [0.125, 2.675, 1.005, 0.285, 9.995, 99.95, 1234.5, 0.0, -0.004, 1e-9]
    values += (rng.random(2000) * 400).round(3).tolist() + rng.random(2000).tolist()
    values += [k / 1000 + 0.0005 for k in range(0, 20000, 7)]
    x = np.asarray(values) * scale
    got = site_history._rounded(metric, np.append(x, np.nan))
    assert np.isnan(got[-1])
    assert got[:-1].tolist() == [site_history.shown(metric, float(y)) for y in x]


def test_the_site_matrix_and_history_show_agree_on_every_windows_numbers(tmp_path):
    """The same window gives the same numbers in the site, `interregion matrix` and
    `history show` (the site's rounded as shown)."""
    results, out = tmp_path / "results", tmp_path / "site"
    _built_after_each(results, out, range(12))
    (doc,) = matrix_data(out)["sources"]
    with h.opened(results, read_only=True) as con:
        for metric in ("rtt", "jitter", "loss", "throughput"):
            for window in ("latest", "1D", "1W", "1M", "1Y"):
                for stat in ("p10", "p50", "p90", "max", "mean"):
                    (mx,) = v.matrix(con, metric, stat, window)["matrices"]
                    for c in mx["cells"]:
                        site_value = _cell(doc, f"{metric}|{window}", stat, c["src"], c["dst"])
                        assert site_value == site_history.shown(metric, c["value"])
                        assert (
                            _cell(doc, f"{metric}|{window}", "samples", c["src"], c["dst"])
                            == (c["samples"])
                        )
                    if window == "latest":
                        continue
                    (s,) = v.pair_history(con, (A, B), metric, window)["sources"]
                    mine = {(c["src"], c["dst"]): c["value"] for c in mx["cells"]}
                    assert s[stat] == mine[A, B]
    # the numbers compared are there: a p90 of the month's 960 samples
    assert _cell(doc, "rtt|1M", "p90", A, B) is not None
