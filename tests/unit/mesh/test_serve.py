"""`interregion metrics --serve`: /metrics over loopback from a real process, read back by
prometheus_client's parsers (OpenMetrics when the scraper asks for it, else the
Prometheus text format), 503 while the store is held, and its bind address checked."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from mesh_support import HOSTS, SOURCE, add_mesh
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families as prom_parse

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.history import store
from orchestrator.mesh import openmetrics, serve

OPENMETRICS_ACCEPT = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"


def test_bind_defaults_to_loopback_and_every_interface_only_when_given():
    assert serve.parse_bind("9109") == ("127.0.0.1", 9109)
    assert serve.parse_bind(":9109") == ("127.0.0.1", 9109)
    assert serve.parse_bind("[::1]:9109") == ("::1", 9109)
    assert serve.parse_bind("0.0.0.0:9109") == ("0.0.0.0", 9109)
    assert serve.every_interface("0.0.0.0") and serve.every_interface("::")
    assert not serve.every_interface("127.0.0.1") and not serve.every_interface("localhost")
    for bad, words in (("example.com:80", "IP address"), ("1.2.3.4:70000", "0 to 65535"),
                       ("1.2.3.4", "HOST:PORT"), ("", "HOST:PORT")):  # fmt: skip
        with pytest.raises(UserError, match=words):
            serve.parse_bind(bad)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    results = tmp_path_factory.mktemp("serve")
    with store.opened(results, create=True) as con:
        add_mesh(con, bins_n=4)
    return results


@pytest.fixture(scope="module")
def served(results):
    """The CLI serving the store on a free loopback port: its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "orchestrator", "metrics", "--serve", "127.0.0.1:0",
         "--results", str(results)],
        cwd=paths.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "metrics: serving http://127.0.0.1:" in line, line
        yield line.split("serving ", 1)[1].split()[0].removesuffix("/metrics")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _get(url, accept=None):
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=30) as r:
        return r.status, r.headers["Content-Type"], r.read().decode()


def test_metrics_over_loopback_read_back_by_prometheus_clients_parsers(served, results):
    status, kind, text = _get(f"{served}/metrics", OPENMETRICS_ACCEPT)
    assert status == 200 and kind.startswith("application/openmetrics-text; version=1.0.0")
    families = {f.name: f for f in om_parse(text)}
    assert set(families) == set(openmetrics.FAMILIES)
    probes = families["interregion_probes"].samples
    assert len(probes) == len(HOSTS) * (len(HOSTS) - 1)
    assert {s.labels["source"] for s in probes} == {SOURCE}
    assert {s.value for s in probes} == {4 * 25}  # 4 bins of 5 cycles of 5 echoes
    # what a file written now holds, served
    with store.opened(results, read_only=True) as con:
        assert text == openmetrics.render(con, "1H")
    # a scraper that does not ask for OpenMetrics: the Prometheus text format
    status, kind, text = _get(f"{served}/metrics")
    assert status == 200 and kind.startswith("text/plain; version=0.0.4")
    families = {f.name: f for f in prom_parse(text)}
    assert families["interregion_probes"].type == "counter" and "# EOF" not in text
    rtt = [s for s in families["interregion_rtt_seconds"].samples if "quantile" in s.labels]
    assert all(0.05 < s.value < 0.3 for s in rtt)  # seconds
    # p50 of every pair; p90 of the pairs with 100 replies (A's two lost echoes: 98)
    quantiles = sorted(s.labels["quantile"] for s in rtt)
    assert quantiles == ["0.5"] * 6 + ["0.9"] * 4
    with pytest.raises(urllib.error.HTTPError) as e:
        _get(f"{served}/")
    assert e.value.code == 404


def test_a_store_held_by_a_writer_is_a_503_for_that_scrape_alone(served, results):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
         "print('open', flush=True); time.sleep(60)", str(results / store.HISTORY_FILE)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(urllib.error.HTTPError) as e:
            _get(f"{served}/metrics")
        assert e.value.code == 503
        assert "in use by another process" in e.value.read().decode()
    finally:
        holder.kill()
        holder.wait()
    assert _get(f"{served}/metrics")[0] == 200
