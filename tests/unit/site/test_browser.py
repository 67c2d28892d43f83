"""The site in a real headless Chromium, driven over the DevTools protocol.

Served from a local HTTP server on 127.0.0.1 (and once from file://): no
console errors, no request to any other host, the charts rendered, the
filter works, and a screenshot is saved (path printed; set
INTERREGION_SCREENSHOTS=DIR to keep them).
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from orchestrator.exchange import importer
from orchestrator.model.catalog import load_catalog
from orchestrator.site import static_site as site
from testkit import synthetic

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"),
    pytest.mark.slow,
]

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1300,1800",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
]


class Browser:
    """One Chromium process and a websocket to its first page."""

    def __init__(self, profile: Path) -> None:
        import websocket

        self.proc = subprocess.Popen(
            [CHROMIUM or "chromium", *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its helpers share our pid's group: killed together
        )
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            targets = json.load(r)
        page = next(t for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(
            page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True
        )
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        for domain in ("Runtime", "Log", "Network", "Page"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def load(self, url: str, ready: str, timeout_s: float = 60) -> None:
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if self.evaluate(ready):
                    return
            except RuntimeError:
                pass  # the page is between documents
            time.sleep(0.2)
        raise AssertionError(f"{url}: not ready after {timeout_s} s ({ready})")

    def errors(self) -> list[str]:
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:300])
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(json.dumps(params.get("args"))[:300])
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"].get("text", "")[:300])
        return found

    def requested(self) -> list[str]:
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        ]

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """A site of two emulated sweeps over 12 catalog regions, 20k rows in the latest."""
    root = tmp_path_factory.mktemp("site")
    catalog = load_catalog()
    regions = catalog.regions[::6]
    results = root / "results"
    for k, n in ((0, 300), (1, 20000)):
        sweep_id = f"2026112{k + 1}T0000Z-b{k}00"
        rows = synthetic.synthetic_rows(regions, n, sweep_id=sweep_id, seed=k)
        synthetic.write_measurements(results / sweep_id / "measurements.csv", rows)
    site.build_site(root / "site", results, catalog=catalog)
    return root / "site"


@pytest.fixture
def server(built_site):
    handler = functools.partial(
        _QuietHandler, directory=str(built_site)
    )  # serves only the site folder
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def browser(tmp_path):
    b = Browser(tmp_path / "profile")
    yield b
    b.close()


def _keep(path: Path) -> None:
    target = os.environ.get("INTERREGION_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, Path(target) / path.name)
    print(f"screenshot: {path}")


READY = (
    "document.body && document.body.getAttribute('data-charts-ready') !== null && "
    "document.querySelectorAll('.js-plotly-plot').length == "
    "document.querySelectorAll('div.chart').length"
)


def test_index_renders_without_errors_and_filters(server, browser, tmp_path):
    browser.load(f"{server}/index.html", READY)
    time.sleep(1.0)  # let the map's topojson draw
    charts = browser.evaluate("document.querySelectorAll('div.chart').length")
    plots = browser.evaluate("document.querySelectorAll('.js-plotly-plot').length")
    # 5 distance charts, 2 heatmaps, the map, and the time series over two sweeps
    assert charts == plots == 9
    svgs = browser.evaluate("document.querySelectorAll('.js-plotly-plot .main-svg').length")
    assert svgs >= 2 * plots
    points = browser.evaluate(
        "document.querySelectorAll('#chart-distance-all .scatterlayer .point').length"
    )
    assert points > 1000  # drawn, but downsampled from 2 x 20,000
    assert points <= 2 * 4000 + 100
    land = browser.evaluate("document.querySelectorAll('#chart-map .geo .land').length")
    assert land >= 1  # the bundled world map, not a CDN
    banner = browser.evaluate("document.querySelector('.emulated-banner').innerText")
    assert "EMULATED" in banner
    assert "EMULATED" in browser.evaluate(
        "document.querySelector('#chart-distance-all .gtitle').textContent"
    )
    _keep(browser.screenshot(tmp_path / "site-index.png"))

    before = int(browser.evaluate("document.body.getAttribute('data-filter-points')"))
    summary_n = "document.querySelector('#summary tr[data-pair=all] td[data-col=n]').textContent"
    every_row = browser.evaluate(summary_n)
    assert int(every_row) == 20000  # from every row, not the plotted subset
    browser.evaluate(
        """(() => {
          const f = document.getElementById('filter');
          f.querySelectorAll('input[name=pair]')
            .forEach(b => { b.checked = b.value === 'aws-gcp'; });
          f.elements['min_km'].value = '5000';
          f.dispatchEvent(new Event('change'));
        })()"""
    )
    after = int(browser.evaluate("document.body.getAttribute('data-filter-points')"))
    assert 0 < after < before
    shown = browser.evaluate(
        """(() => {
          const gd = document.getElementById('chart-distance-all');
          return gd.data.filter(t => t.meta && t.meta.filter === 'points' && t.x.length > 0)
            .map(t => [t.meta.cloud_pair, Math.min(...t.x)]);
        })()"""
    )
    assert shown and all(pair == "aws-gcp" and low >= 5000 for pair, low in shown)
    # each kept point keeps its hover's extras (its test's p90, loss, n and time)
    custom = browser.evaluate(
        """(() => document.getElementById('chart-distance-all').data
          .filter(t => t.meta && t.meta.filter === 'points' && t.x.length > 0)
          .map(t => [t.x.length, t.customdata.length, t.customdata[0][3]]))()"""
    )
    assert all(n == k and when.endswith("Z") for n, k, when in custom), custom
    hidden = browser.evaluate(
        "[...document.querySelectorAll('#summary tr[data-pair]')]"
        ".filter(r => r.style.display === 'none').map(r => r.dataset.pair)"
    )
    assert sorted(hidden) == ["aws-aws", "gcp-aws", "gcp-gcp"]
    # the summary, fit lines and outliers follow the filter, not only the points
    n_all = browser.evaluate(
        "document.querySelector('#summary tr[data-pair=all] td[data-col=n]').textContent"
    )
    assert int(n_all) == after, (n_all, after)
    fits = browser.evaluate(
        """(() => document.getElementById('chart-distance-all').data
          .filter(t => t.meta && t.meta.filter === 'fit' && t.visible !== false)
          .map(t => [t.meta.cloud_pair, t.x[0]]))()"""
    )
    assert fits and all(pair == "aws-gcp" and low >= 5000 for pair, low in fits), fits
    near = browser.evaluate(
        "[...document.querySelectorAll('#outliers tr[data-km]')]"
        ".filter(r => r.style.display !== 'none' && +r.dataset.km < 5000).length"
    )
    assert near == 0
    browser.evaluate("document.getElementById('filter').reset()")
    time.sleep(0.3)
    assert browser.evaluate(summary_n) == every_row
    routes = browser.evaluate(
        """(() => {
          const gd = document.getElementById('chart-map');
          return gd.data.filter(t => t.meta && t.meta.filter === 'routes')
            .reduce((n, t) => n + t.lat.length, 0);
        })()"""
    )
    assert routes > 0
    # the lines hover themselves: every point of a line has its pair's text and figures
    lines = browser.evaluate(
        """(() => document.getElementById('chart-map')._fullData
          .filter(t => t.meta && t.meta.filter === 'routes' && t.meta.points > 1)
          .map(t => [t.lat.length, t.text.length, t.customdata.length, t.hoverinfo,
                     t.text[0]]))()"""
    )
    assert lines and all(n == k == c > 0 and info != "skip" for n, k, c, info, _ in lines)
    assert all(" km, median RTT " in text for *_, text in lines), lines[0]
    _keep(browser.screenshot(tmp_path / "site-index-filtered.png"))

    # the time series: the pairs that moved most, and a picker for any other pair
    series = (
        "[...new Set(document.getElementById('chart-timeseries').data"
        ".filter(t => t.meta && t.meta.filter === 'series').map(t => t.name))]"
    )
    most = browser.evaluate(series)
    assert len(most) == 8, most
    options = browser.evaluate(
        "[...document.querySelectorAll('#series-picker option')].map(o => [o.value, o.text])"
    )
    assert options[0] == ["", "the 8 pairs that moved most"] and len(options) > 9
    value, name = next(o for o in options[1:] if o[1] not in most)
    browser.evaluate(
        f"""(() => {{
          const s = document.querySelector('#series-picker select');
          s.value = '{value}';
          s.dispatchEvent(new Event('change', {{bubbles: true}}));
        }})()"""
    )
    drawn = browser.evaluate(series)
    a, b = name.split(" → ")
    assert drawn[0] == name and set(drawn) <= {name, f"{b} → {a}"}, drawn
    assert browser.evaluate("document.getElementById('chart-timeseries').dataset.picked") == name
    # its RTT and throughput, one point per sweep, as the figure's meta holds them
    ys = browser.evaluate(
        "document.getElementById('chart-timeseries').data.filter(t => t.name === "
        f"{json.dumps(name)}).map(t => t.y.filter(v => v !== null).length)"
    )
    assert ys == [2, 2], ys
    browser.evaluate(
        """(() => {
          const s = document.querySelector('#series-picker select');
          s.value = '';
          s.dispatchEvent(new Event('change', {bubbles: true}));
        })()"""
    )
    assert browser.evaluate(series) == most

    assert browser.errors() == []
    foreign = [u for u in browser.requested() if not u.startswith((server, "data:"))]
    assert foreign == []


def test_every_page_loads_without_errors(server, browser, built_site):
    pages = ["methodology.html", "data.html"]
    pages += [f"sweeps/{p.name}" for p in sorted((built_site / "sweeps").iterdir())]
    for page in pages:
        browser.load(f"{server}/{page}", "document.readyState === 'complete'")
        if page.startswith("sweeps/"):
            browser.load(f"{server}/{page}", READY)
        text = browser.evaluate("document.body.innerText")
        assert "EMULATED" in text, page
    assert browser.errors() == []
    foreign = [u for u in browser.requested() if not u.startswith((server, "data:"))]
    assert foreign == []


def test_site_works_from_file_urls(browser, built_site, tmp_path):
    url = (built_site / "index.html").as_uri()
    browser.load(url, READY)
    assert browser.evaluate("document.querySelectorAll('.js-plotly-plot').length") == 9
    time.sleep(0.5)
    assert browser.evaluate("document.querySelectorAll('#chart-map .geo .land').length") >= 1
    assert browser.errors() == []
    foreign = [u for u in browser.requested() if not u.startswith(("file://", "data:"))]
    assert foreign == []
    _keep(browser.screenshot(tmp_path / "site-file-url.png"))


# --- the pages built from the history store ------------------------------------------


@pytest.fixture(scope="module")
def history_site(tmp_path_factory):
    """A site with a history store: 12 emulated sweeps of three region pairs, daily then the
    last two 12 h apart (A <-> B jumps by 30, 55 and 65 ms in the last three: an open path
    event, and a last day 25-35 ms above the day before; B <-> C steady), and
    an imported source."""
    from datetime import UTC, datetime, timedelta

    from history_support import make_sweep, sweep_id_at

    from orchestrator.history import store as history

    root = tmp_path_factory.mktemp("history-site")
    results = root / "results"
    a, b, c = HISTORY_REGIONS
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    for day in range(12):
        jump = {9: 30.0, 10: 55.0, 11: 65.0}.get(day, 0.0)
        # 100 samples a test: p90 is shown from 100 on (10 beyond it)
        # a route change moves a round trip both ways (both directions' RTT), in one sweep
        samples = {
            (a, b): [100.0 + jump + day * 0.1 + k / 5 for k in range(100)],
            (b, a): [90.0 + jump + k * 0.4 for k in range(100)],  # p90 14 % above its p50
            (a, c): [70.0 + day] * 100,
            (b, c): [90.0 + k * 0.01 for k in range(100)],  # steady both ways
            (c, b): [90.0 + k * 0.01 for k in range(100)],
        }
        t = t0 + timedelta(days=min(day, 10), hours=12 * (day == 11))
        make_sweep(results, sweep_id_at(t, f"{day:04x}"), samples, started=t,
                   throughput_bps=(9.0e8 if day % 2 else 4.0e8))  # fmt: skip
    imported = root / "theirs.csv"
    imported.write_text(
        "src_cloud,src_region,dst_cloud,dst_region,rtt_avg_ms\naws,us-east-1,gcp,europe-west1,77.5\n"
    )
    history.ingest_all(results)
    importer.import_file(results, imported, "theirs", "2022-02", label="Their 2022 data")
    site.build_site(root / "site", results, catalog=load_catalog())
    return root / "site"


HISTORY_REGIONS = ("aws:us-east-1", "gcp:europe-west1", "aws:eu-west-1")
MATRIX_READY = "document.body && document.body.getAttribute('data-history-ready') === 'matrix'"


def _cell_text(browser: Browser, src: str, dst: str) -> str:
    return browser.evaluate(
        f"""(() => {{
          const rows = [...document.querySelectorAll('#matrix tbody tr')];
          const heads = [...document.querySelectorAll('#matrix thead th.to')]
            .map(t => t.dataset.region);
          const row = rows.find(
            r => r.querySelector('th.from').dataset.region === {json.dumps(src)});
          if (!row) return null;
          const td = row.querySelectorAll('td')[heads.indexOf({json.dumps(dst)})];
          return td ? td.innerText + '|' + td.className + '|' + td.title : null;
        }})()"""
    )


def _matrix_view(browser: Browser) -> str:
    return str(browser.evaluate("document.body.getAttribute('data-matrix-view')"))


def _choose(browser: Browser, name: str, value: str) -> str:
    """Pick an option of the matrix's selectors, as a reader would; the view key after."""
    browser.evaluate(
        f"""(() => {{
          const s = document.querySelector('#matrix-controls select[name={name}]');
          s.value = {json.dumps(value)};
          s.dispatchEvent(new Event('change', {{bubbles: true}}));
        }})()"""
    )
    # a metric not shown before is loaded from its own file first
    deadline = time.monotonic() + 10
    while browser.evaluate("document.body.hasAttribute('data-matrix-loading')"):
        assert time.monotonic() < deadline, f"{name}={value}: its data did not load"
        time.sleep(0.05)
    return str(browser.evaluate("document.body.getAttribute('data-matrix-view')"))


def test_matrix_selectors_change_what_is_shown_from_file_urls(browser, history_site, tmp_path):
    a, b, c = HISTORY_REGIONS
    browser.load((history_site / "history" / "matrix.html").as_uri(), MATRIX_READY)
    assert browser.evaluate("document.body.getAttribute('data-matrix-view')") == (
        "emulated|rtt|p50|1W|absolute"
    )
    caption = "document.getElementById('matrix-caption').textContent"
    banner_hidden = "document.getElementById('source-banner').hidden"
    assert "source: EMULATED" in browser.evaluate(caption)
    assert browser.evaluate(banner_hidden) is False
    week = _cell_text(browser, a, b)
    assert week.split("|")[0] and "n = 800 samples, 8 tests" in week  # days 4..10.5

    # every statistic, each beyond the p50 loaded from its own file: numbers as text in
    # every measured cell, in order, the mean that of the 8 tests' samples (as the fixture
    # makes them), and p99 (it needs 1,000 samples) a dash that says why
    def stat_files() -> list[str]:
        return [u.rsplit("-", 1)[1] for u in browser.requested() if "-emulated-rtt-" in u]

    assert stat_files() == []  # the p50 is in the metric's own file
    numbers = {}
    for stat in ("min", "p10", "p25", "p75", "p90", "p99", "max", "mean", "p50"):
        assert _choose(browser, "stat", stat) == f"emulated|rtt|{stat}|1W|absolute"
        texts = browser.evaluate("[...document.querySelectorAll('#matrix td[data-k]')]"
                                 ".map(td => td.innerText)")  # fmt: skip
        assert len(texts) == 5, texts  # five measured pairs
        if stat == "p99":
            assert texts == ["—"] * 5, texts
            assert "(p99, needs 1000 samples), n = 800 samples" in _cell_text(browser, a, b)
            continue
        assert all(re.fullmatch(r"\d+\.\d", t) for t in texts), (stat, texts)
        numbers[stat] = float(_cell_text(browser, a, b).split("|")[0])
    # each loaded once, on first use
    assert stat_files() == [
        f"{s}.js" for s in ("min", "p10", "p25", "p75", "p90", "p99", "max", "mean")
    ]
    order = ["min", "p10", "p25", "p50", "p75", "p90", "max"]
    assert [numbers[s] for s in order] == sorted(numbers[s] for s in order), numbers
    assert len(set(numbers.values())) == len(numbers), numbers
    jumps = {9: 30.0, 10: 55.0, 11: 65.0}
    pooled = [100.0 + jumps.get(d, 0.0) + d * 0.1 + k / 5 for d in range(4, 12) for k in range(100)]
    assert numbers["mean"] == round(sum(pooled) / len(pooled), 1)
    assert (numbers["min"], numbers["max"]) == (round(min(pooled), 1), round(max(pooled), 1))
    shown = {"1W": week}
    for name, value in (("stat", "p90"), ("window", "1D"), ("window", "latest"),
                        ("metric", "throughput")):  # fmt: skip
        key = _choose(browser, name, value)
        assert value in key.split("|"), key
        shown[value] = _cell_text(browser, a, b)
    values = [v.split("|")[0] for v in shown.values()]
    assert len(set(values)) == len(values), shown  # each selector changed the cell
    assert "n = 100 samples, 1 tests" in shown["latest"]
    assert "Mbit/s" in browser.evaluate(caption)
    # colour by deviation from the baseline: A -> B is 30 % above it, an open episode
    _choose(browser, "metric", "rtt")
    absolute = _cell_text(browser, a, b).split("|")[1]
    assert _choose(browser, "colour", "deviation").endswith("|deviation")
    deviation = _cell_text(browser, a, b).split("|")[1]
    assert absolute.startswith("q") and deviation == "dw3 open", (absolute, deviation)
    assert "open episode" in _cell_text(browser, a, b)
    # the colour compares the window's p50 with the baseline, whatever the stat shown
    assert "|p90|" in _matrix_view(browser)
    assert _cell_text(browser, b, c).split("|")[1] == "d0"
    assert "(p50 +0.0 ms, +0.0 %)" in _cell_text(browser, b, c)
    _choose(browser, "show", "detail")  # n and the age in each cell, not only on hover
    assert "n 100" in _cell_text(browser, a, b).split("|")[0]
    _keep(browser.screenshot(tmp_path / "site-matrix.png"))
    _choose(browser, "show", "value")
    # the change vs the previous window: A -> B's last day is 20-30 ms above the day before
    _choose(browser, "window", "1D")
    assert _choose(browser, "colour", "delta").endswith("|1D|delta")
    text, cls, title = _cell_text(browser, a, b).split("|")
    assert text.startswith("+") and float(text) > 15 and cls.startswith("dw3"), (text, cls)
    assert "previous window p50" in title
    assert "change vs the previous window" in browser.evaluate(caption)
    _choose(browser, "colour", "absolute")
    # loss and jitter: ping's own figures, numbers in every measured cell (one figure a
    # test: a p90 of them needs 100 tests, so their p50)
    _choose(browser, "stat", "p50")
    _choose(browser, "metric", "loss")
    text, _cls, title = _cell_text(browser, a, b).split("|")
    assert text == "0.00"
    # the window's pings lost / sent with its Wilson interval: none lost is not 0 %
    assert re.search(r"pings lost / sent 0 % \(95 %: 0-\d+(\.\d+)? % of \d+ pings\)", title), title
    _choose(browser, "metric", "jitter")
    assert _cell_text(browser, a, b).split("|")[0] == "0.1"
    # emulated throughput: coloured over its own range, the rate scale stated beside it
    _choose(browser, "metric", "throughput")
    scale = browser.evaluate(
        "(() => { const p = document.getElementById('matrix-scale');"
        " return p.hidden ? null : p.textContent; })()"
    )
    assert scale and "rate scale" in scale and "EMULATED" in scale
    _choose(browser, "metric", "rtt")
    assert browser.evaluate("document.getElementById('matrix-scale').hidden") is True

    # region heads: code and city, or either; the city is always in the tooltip
    def heads() -> list[str]:
        return browser.evaluate(
            "[...document.querySelectorAll('#matrix thead th.to')].map(t => t.innerText)"
        )

    assert any("Ashburn" in h and "us-east-1" in h for h in heads()), heads()
    _choose(browser, "heads", "city")
    assert "Ashburn" in heads() and not any("us-east-1" in h for h in heads())
    _choose(browser, "heads", "code")
    assert a in heads() and not any("Ashburn" in h for h in heads())
    _choose(browser, "window", "1W")
    # another source: its own caption, no EMULATED banner, none of the emulated cells;
    # its one imported test is one sample: a p50, never a p90
    _choose(browser, "stat", "p90")
    assert _choose(browser, "source", "theirs").startswith("theirs|")
    assert _cell_text(browser, a, b).split("|")[0] == "—"
    _choose(browser, "stat", "p50")
    assert "source: theirs (Their 2022 data), real measurements" in browser.evaluate(caption)
    assert browser.evaluate(banner_hidden) is True
    assert _cell_text(browser, a, b).split("|")[0] == "77.5"
    assert _cell_text(browser, a, c) is None
    # a cell links to its pair page, which draws both directions with the episode
    href = browser.evaluate("document.querySelector('#matrix td a').getAttribute('href')")
    assert (history_site / "history" / href).exists()
    browser.load(
        (history_site / "history" / "pairs" / "aws_us-east-1--gcp_europe-west1.html").as_uri(),
        "document.body && document.body.getAttribute('data-history-ready') === 'pair'",
    )
    traces = browser.evaluate(
        "[...document.querySelectorAll('div.pair-chart')].map(d => d.data.length)"
    )
    assert traces == [2, 2, 1]  # emulated: both directions; theirs: A -> B, RTT only
    # the axis spans the caption's window (30 days up to the latest test), not the tests
    span = (
        "(() => {{ const r = document.getElementById('{}').layout.xaxis.range;"
        " return (new Date(r[1] + 'Z') - new Date(r[0] + 'Z')) / 86400000; }})()"
    )
    # (and a margin of 3 % each side, so a test at either end is drawn whole)
    days = browser.evaluate(span.format("pair-0-rtt"))
    assert 31.7 < days < 31.9, days
    # a source with one test of the pair: its 30 days too, not ±1 ms around the test
    assert browser.evaluate("document.getElementById('pair-1-rtt').data.map(t => t.x.length)") == [
        1
    ]
    days = browser.evaluate(span.format("pair-1-rtt"))
    assert 31.7 < days < 31.9, days
    # its one test, the window's last, lies inside the axis, not cut in half by its edge
    before_edge = (
        "(() => { const d = document.getElementById('pair-1-rtt');"
        " const r = d.layout.xaxis.range, x = String(d.data[0].x[0]);"
        " return (new Date(r[1] + 'Z') - new Date(x.endsWith('Z') ? x : x + 'Z')) / 86400000; })()"
    )
    assert browser.evaluate(before_edge) > 0.5
    # the path event, drawn on each direction's series
    assert browser.evaluate("document.getElementById('pair-0-rtt').dataset.episodes") == "2"
    assert "EMULATED" in browser.evaluate(
        "document.querySelector('#pair-0-rtt .gtitle').textContent"
    )
    _keep(browser.screenshot(tmp_path / "site-pair.png"))
    browser.load((history_site / "history" / "changes.html").as_uri(),
                 "document.readyState === 'complete'")  # fmt: skip
    assert "aws:us-east-1 ↔ gcp:europe-west1" in browser.evaluate(
        "document.getElementById('episodes-open').innerText"
    )
    assert browser.errors() == []
    foreign = [u for u in browser.requested() if not u.startswith(("file://", "data:"))]
    assert foreign == []


# --- phone width ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def full_site(history_site):
    """The history site with a TCP study beside it, rebuilt: every kind of page."""
    from site_support import write_study

    results = history_site.parent / "results"
    write_study(results, "20261125T0400Z-aaaa")
    site.build_site(history_site, results, catalog=load_catalog())
    return history_site


WIDTH_PAGES = {
    "index": ("index.html", MATRIX_READY),  # the matrix is the front page
    "sweep": ("latest.html", READY),
    "matrix": ("history/matrix.html", MATRIX_READY),
    "pair": (
        "history/pairs/aws_us-east-1--gcp_europe-west1.html",
        "document.body && document.body.getAttribute('data-history-ready') === 'pair'",
    ),
    "changes": ("history/changes.html", "document.readyState === 'complete'"),
    "study": ("studies/20261125T0400Z-aaaa.html", "document.readyState === 'complete'"),
    "data": ("data.html", "document.readyState === 'complete'"),
}


def test_every_kind_of_page_fits_a_phone_and_a_desktop(browser, full_site, tmp_path):
    """At 400 px nothing scrolls sideways but a table in its own box; the nav wraps and
    the side-by-side charts stack. Screenshots at 1400 and 400 px of each kind of page."""
    widths = {}
    for width in (1400, 400):
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=1000,
            deviceScaleFactor=1,
            mobile=width < 700,
        )
        for name, (path, ready) in WIDTH_PAGES.items():
            browser.load((full_site / path).as_uri(), ready)
            time.sleep(0.3)
            widths[name, width] = browser.evaluate("document.documentElement.scrollWidth")
            _keep(browser.screenshot(tmp_path / f"width-{name}-{width}.png"))
            if width == 400:
                # every header link on screen, none cut off at the right edge
                right = browser.evaluate(
                    "Math.max(...[...document.querySelectorAll('header a')]"
                    ".map(a => a.getBoundingClientRect().right))"
                )
                assert right <= 400, (name, right)
            if name == "sweep":
                # the distance chart's two subplots: side by side, or one above the other
                boxes = browser.evaluate(
                    """[...document.querySelectorAll('#chart-distance-all .draglayer .nsewdrag')]
                    .map(r => { const b = r.getBoundingClientRect();
                                return [b.left, b.top, b.right, b.bottom]; })"""
                )
                assert len(boxes) == 2, boxes
                (_l1, t1, r1, b1), (l2, t2, r2, _b2) = boxes
                if width == 400:
                    assert b1 <= t2 and r1 <= 400 and r2 <= 400, boxes  # stacked
                else:
                    assert r1 <= l2 and abs(t1 - t2) < 1, boxes  # side by side
    for name in WIDTH_PAGES:
        assert widths[name, 400] <= 400, (name, widths[name, 400])
        assert widths[name, 1400] <= 1400, (name, widths[name, 1400])
    # the summary table is wider than a phone: it scrolls inside itself
    browser.load((full_site / "latest.html").as_uri(), READY)
    inner = browser.evaluate(
        "(() => { const t = document.getElementById('summary');"
        " return [t.scrollWidth, t.clientWidth]; })()"
    )
    assert inner[0] > inner[1] and inner[1] <= 400, inner
    assert browser.errors() == []


# --- the continuous mesh on a pair page ----------------------------------------------


def test_a_pair_page_draws_the_meshs_bins_and_its_change_from_file_urls(browser, tmp_path):
    """Three sweeps of A <-> B and a mesh of three regions for 20 bins, A <-> B up 10 ms
    from bin 16 (tests/mesh_support.py): the mesh's charts beside the sweeps'."""
    from datetime import UTC, datetime, timedelta

    from history_support import make_sweep, sweep_id_at
    from mesh_support import HOSTS, add_mesh

    from orchestrator.history import store as history

    a, b, _ = HOSTS
    results = tmp_path / "results"
    for i in range(3):
        t = datetime(2027, 1, 14, tzinfo=UTC) + timedelta(hours=6 * i)
        make_sweep(results, sweep_id_at(t, f"{i:04x}"), {(a, b): [90.0] * 20, (b, a): [91.0] * 20},
                   started=t)  # fmt: skip
    history.ingest_all(results)
    with history.opened(results) as con:
        add_mesh(con)
    site.build_site(tmp_path / "site", results, catalog=load_catalog())
    browser.load(
        (tmp_path / "site" / "history" / "pairs" / "aws_us-east-1--gcp_europe-west1.html").as_uri(),
        "document.body && document.body.getAttribute('data-history-ready') === 'pair'",
    )
    charts = browser.evaluate(
        "[...document.querySelectorAll('div.pair-chart')].map(d => [d.id, d.data.length,"
        " d.dataset.episodes, d.data.map(t => t.x.length).join(',')])"
    )
    assert charts == [
        ["pair-0-rtt", 2, "0", "3,3"],  # the sweeps: both directions, never the mesh's
        ["pair-0-throughput", 2, "0", "3,3"],
        ["pair-1-rtt", 6, "2", ",".join(["20"] * 6)],  # p50, p90, p99 of each direction
        ["pair-1-loss", 2, "2", "20,20"],
        ["pair-1-change-0", 6, "2", ",".join(["16"] * 6)],  # the bins around the change
    ]
    # the change's span starts at its first bin and the confirmation is a line
    shapes = browser.evaluate(
        "document.getElementById('pair-1-change-0').layout.shapes.map(s => [s.type, s.x0])"
    )
    assert ["rect", "2027-01-15T09:20:00.000Z"] in shapes
    assert ["line", "2027-01-15T09:25:00.000Z"] in shapes
    assert "mesh" in browser.evaluate("document.querySelector('#pair-1-rtt .gtitle').textContent")
    _keep(browser.screenshot(tmp_path / "site-pair-mesh.png"))
    assert browser.errors() == []
    foreign = [u for u in browser.requested() if not u.startswith(("file://", "data:"))]
    assert foreign == []
