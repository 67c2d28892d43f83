"""The continuous mesh on the site's pair pages: its own section beside a pair's sweep
sources (never pooled with them), its recent 5-minute bins and its change with the bins
around it; no mesh source in the sweeps' matrix."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from history_support import make_sweep, sweep_id_at
from mesh_support import HOSTS, SOURCE, STEP_BIN, T0, add_mesh
from report_support import CATALOG

from orchestrator.history import store as h
from orchestrator.site import history_pages as site_history
from orchestrator.site import static_site as site

# a store judged bin by bin and a site built: seconds; `make unit` skips them
pytestmark = pytest.mark.slow

A, B, C = HOSTS


def _iso(t: int) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


@pytest.fixture(scope="module")
def mesh_site(tmp_path_factory):
    """Three sweeps of A <-> B, and a mesh of A, B, C for 20 bins: A <-> B up 10 ms from
    bin 16 (an open episode)."""
    root = tmp_path_factory.mktemp("mesh-site")
    results = root / "results"
    for i in range(3):
        t = datetime(2027, 1, 14, tzinfo=UTC) + timedelta(hours=6 * i)
        make_sweep(results, sweep_id_at(t, f"{i:04x}"), {(A, B): [90.0] * 20, (B, A): [91.0] * 20},
                   started=t)  # fmt: skip
    h.ingest_all(results)
    with h.opened(results) as con:
        add_mesh(con)
    site.build_site(root / "site", results, catalog=CATALOG)
    return root / "site"


def _page(out, a, b):
    text = (out / "history" / "pairs" / site_history.pair_file(a, b)).read_text()
    raw = re.search(r"<script type='application/json' id='pair-data'>(.*?)</script>", text)
    return text, json.loads(raw.group(1))


def test_the_pair_page_shows_the_mesh_apart_with_its_bins_and_its_change(mesh_site):
    text, doc = _page(mesh_site, A, B)
    sweeps, mesh = doc["sources"]
    assert (sweeps["source"], sweeps.get("kind")) == ("emulated", None)
    assert [len(d["t"]) for d in sweeps["directions"]] == [3, 3]  # the sweeps alone
    assert (mesh["source"], mesh["kind"], mesh["bin_s"]) == (SOURCE, "mesh", 300)
    assert [(d["src"], d["dst"]) for d in mesh["directions"]] == [(A, B), (B, A)]
    forward = mesh["directions"][0]
    assert forward["t"][0] == _iso(T0) and forward["t"][-1] == _iso(T0 + 19 * 300)
    assert len(forward["t"]) == 20 and forward["received"] == [25] * 3 + [23] + [25] * 16
    # a bin of 25 samples: its p50, never a p90 or p99 (the sample rule)
    assert forward["p50"][0] == pytest.approx(89.7 + 0.2, abs=0.2)
    assert forward["p50"][-1] == pytest.approx(99.7 + 0.2, abs=0.2)
    assert set(forward["p90"]) == set(forward["p99"]) == {None}
    assert forward["loss"][3] == pytest.approx(8.0) and forward["loss"][0] == 0.0  # 2 of 25
    assert mesh["window_end_utc"] == _iso(T0 + 19 * 300)
    # the episode, both directions, judged once by the mesh's detection
    assert {(e["src"], e["status"]) for e in mesh["episodes"]} == {(A, "open"), (B, "open")}
    (change,) = mesh["changes"]
    started = _iso(T0 + STEP_BIN * 300)
    assert {e["started_utc"] for e in change["episodes"]} == {started}
    assert {e["confirmed_utc"] for e in change["episodes"]} == {_iso(T0 + (STEP_BIN + 1) * 300)}
    # the bins around it: an hour before its start up to the newest (an hour after its
    # confirmation is not there yet)
    around = change["directions"]
    assert [(d["src"], d["dst"]) for d in around] == [(A, B), (B, A)]
    assert around[0]["t"][0] == _iso(T0 + (STEP_BIN - 12) * 300)
    assert around[0]["t"][-1] == _iso(T0 + 19 * 300) and len(around[0]["t"]) == 16
    # its own charts: RTT and loss of the recent bins, one of the change
    charts = re.findall(r"id='(pair-\d-[\w-]+)'", text)
    assert charts == ["pair-0-rtt", "pair-0-throughput", "pair-1-rtt", "pair-1-loss",
                      "pair-1-change-0"]  # fmt: skip
    assert "source: mesh-emulated, EMULATED: the continuous mesh" in text
    assert f"Change from {started}" in text and "89.9" in text


def test_a_pair_only_the_mesh_probes_has_a_page_of_the_mesh_alone(mesh_site):
    text, doc = _page(mesh_site, A, C)
    (mesh,) = doc["sources"]
    assert mesh["kind"] == "mesh" and mesh["changes"] == [] and mesh["episodes"] == []
    assert [(d["src"], d["dst"]) for d in mesh["directions"]] == [(C, A), (A, C)]  # a < b first
    assert "No change of this pair judged by the mesh." in text


def test_the_sweeps_matrix_holds_no_mesh_source(mesh_site):
    index = (mesh_site / "history" / "matrix-data.js").read_text()
    doc = json.loads(index[len("window.InterregionMatrix = ") : -2])
    assert [s["source"] for s in doc["sources"]] == ["emulated"]
    matrix = (mesh_site / "history" / "matrix.html").read_text()
    assert "mesh-emulated" not in re.sub(r"<p class='mesh-note'>.*?</p>", "", matrix)
    assert "interregion mesh matrix" in matrix
    # its changes are on the changes page, named by their source
    assert SOURCE in (mesh_site / "history" / "changes.html").read_text()
