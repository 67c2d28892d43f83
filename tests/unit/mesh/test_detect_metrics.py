"""The mesh's bins judged by the store's change detection (a +10 ms step confirmed at
its second bin, nothing else), the metrics those bins give (promtool, prometheus_client's
OpenMetrics parser) and the Grafana dashboard that reads them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from types import SimpleNamespace

import pytest
from mesh_support import BINS, CHANGED, HOSTS, STEP_BIN, T0
from mesh_support import samples as mesh_samples
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from orchestrator.core import paths
from orchestrator.history import store
from orchestrator.mesh import bins, detect, openmetrics
from orchestrator.mesh.lifecycle import MeshRequest

# a store judged bin by bin (20 transactions), promtool: seconds; `make unit` skips them
pytestmark = pytest.mark.slow


def promtool() -> str | None:
    """promtool: `make promtool`'s copy (.tools/bin, out of Debian's prometheus package,
    not installed), else one on PATH."""
    local = paths.ROOT / ".tools" / "bin" / "promtool"
    return str(local) if local.is_file() else shutil.which("promtool")


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    c = store.connect(tmp_path_factory.mktemp("mesh") / "h.duckdb", create=True)
    samples = mesh_samples(lost_echoes=False)
    mesh = SimpleNamespace(id="m1", backend="local")
    request = MeshRequest(interval_s=60, collect_every_s=120)
    # collected a bin at a time, as the controller does every few minutes
    for b in range(BINS):
        chunk = [s for s in samples if T0 + b * 300 <= s.t < T0 + (b + 1) * 300]
        with store.transaction(c):
            bins.add_samples(c, "mesh-emulated", "m1", chunk)
            hosts = {h: {"newest_t": T0 + b * 300 + 240, "error": ""} for h in HOSTS}
            detect.judge_final_bins(c, mesh, "mesh-emulated", hosts, request, T0 + b * 300 + 301)
    yield c
    c.close()


def test_the_step_is_confirmed_at_its_second_bin_and_nothing_else(con):
    rows = con.execute(
        "SELECT src, dst, status, started_run, confirmed_run, old_level, new_level "
        "FROM episodes WHERE source = 'mesh-emulated'"
    ).fetchall()
    assert len(rows) == 1
    src, dst, status, started, confirmed, old, new = rows[0]
    assert frozenset((src, dst)) == CHANGED and status == "open"
    assert started == detect.run_id("m1", T0 + STEP_BIN * 300)
    assert confirmed == detect.run_id("m1", T0 + (STEP_BIN + 1) * 300)  # within 10 minutes
    assert new - old == pytest.approx(10.0, abs=0.5)
    judged = con.execute(
        "SELECT count(DISTINCT sweep_id) FROM judgments WHERE source = 'mesh-emulated'"
    ).fetchone()[0]
    assert judged == BINS  # every bin judged once (the first 6 learning)


def test_rejudging_the_sweeps_keeps_the_meshs_judgments(con):
    from orchestrator.history import judgments

    before = con.execute("SELECT count(*) FROM judgments").fetchone()[0]
    with store.transaction(con):
        judgments.rejudge(con)
    assert con.execute("SELECT count(*) FROM judgments").fetchone()[0] == before > 0


def test_metrics_pass_promtool_and_read_back_as_openmetrics(con, tmp_path):
    prom = openmetrics.render(con, "1H", fmt="prometheus")
    tool = promtool()
    assert tool, "promtool is missing: 'make promtool' puts it in .tools/bin"
    done = subprocess.run([tool, "check", "metrics"], input=prom, capture_output=True,
                          text=True)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    text = openmetrics.render(con, "1H")
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert set(families) == set(openmetrics.FAMILIES)
    assert families["interregion_rtt_seconds"].type == "summary"
    assert families["interregion_rtt_seconds"].unit == "seconds"
    samples = families["interregion_rtt_seconds"].samples
    medians = {(s.labels["src_region"], s.labels["dst_region"]): s.value
               for s in samples if s.labels.get("quantile") == "0.5"}  # fmt: skip
    assert len(medians) == 6
    # the last hour: 12 bins of 25 samples, seconds
    assert medians[("ap-northeast-1", "us-east-1")] == pytest.approx(0.1687, abs=0.0005)
    quantiles = {s.labels.get("quantile") for s in samples if "quantile" in s.labels}
    assert quantiles == {"0.5", "0.9"}  # 300 samples: p99 needs 1,000 (the sample rule)
    counts = [s for s in samples if s.name == "interregion_rtt_seconds_count"]
    assert {s.value for s in counts} == {BINS * 25}
    (change,) = families["interregion_change_delta_seconds"].samples
    assert change.value == pytest.approx(0.010, abs=0.0005)
    probes = families["interregion_probes"].samples
    assert {s.value for s in probes} == {BINS * 25}
    assert {s.labels["source"] for s in probes} == {"mesh-emulated"}


def test_a_failed_probe_is_absent_and_counted(tmp_path):
    c = store.connect(tmp_path / "h.duckdb", create=True)
    with store.transaction(c):
        bins.add_samples(c, "mesh-emulated", "m1", [
            bins.Sample("aws:a", "gcp:b", T0, 5, ()), bins.Sample("gcp:b", "aws:a", T0, 5, (5.0,))
        ])  # fmt: skip
    families = {f.name: f for f in text_string_to_metric_families(openmetrics.render(c))}
    c.close()
    rtt = [s for s in families["interregion_rtt_seconds"].samples if "quantile" in s.labels]
    assert [s.labels["src_region"] for s in rtt] == ["b"]  # a -> b has no RTT, no zero
    failures = {s.labels["src_region"]: s.value
                for s in families["interregion_probe_failures"].samples}  # fmt: skip
    assert failures == {"a": 5.0, "b": 4.0}
    loss = {s.labels["src_region"]: s.value for s in families["interregion_loss_ratio"].samples}
    assert loss == {"a": 1.0, "b": 0.8}


def test_the_grafana_dashboard_reads_only_exported_metrics():
    doc = json.loads((paths.ROOT / "infra" / "grafana" / "interregion-mesh.json").read_text())
    exprs = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expr", "query") and isinstance(value, str):
                    exprs.append(value)
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(doc)
    names = {n for e in exprs for n in re.findall(r"\binterregion_[a-z_]+", e)}
    assert names, "the dashboard queries no interregion metric"
    assert names <= set(openmetrics.SAMPLE_NAMES), names - set(openmetrics.SAMPLE_NAMES)
    assert {p["type"] for p in doc["panels"]} >= {"table", "timeseries"}
    labels = {n for e in exprs for n in re.findall(r"(\w+)=\"\$", e)}
    assert labels <= {"source", "src_cloud", "src_region", "dst_cloud", "dst_region"}
