"""The mesh commands' use cases called without click: `mesh up`'s checks before anything
is made, `mesh status` and `mesh matrix` of a store, `metrics` (its file written whole),
`plan --mesh`'s priced plan (its dry run and the mesh of its regions, one call)."""

from __future__ import annotations

import pytest
from mesh_support import HOSTS, SOURCE, add_mesh

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.history import store
from orchestrator.mesh import collect, openmetrics
from orchestrator.mesh import lifecycle as run
from orchestrator.mesh import mesh_views as views
from orchestrator.mesh.cost import mesh_plan, plan_mesh
from orchestrator.plan.selection import SelectionSpec
from orchestrator.sweep import launch
from orchestrator.sweep.launch import SweepRequest


@pytest.fixture
def results(tmp_path):
    with store.opened(tmp_path, create=True) as con:
        add_mesh(con, bins_n=2)
    return tmp_path


def test_the_matrix_of_the_only_mesh_source(results):
    found = views.matrix_of(results, None, "1H")
    assert found.source == SOURCE and len(found.cells) == len(HOSTS) * (len(HOSTS) - 1)
    doc = found.to_json()
    assert doc["end_utc"].endswith("Z") and len(doc["cells"]) == 6
    assert {(c["src"], c["dst"]) for c in doc["cells"]} == {
        (a, b) for a in HOSTS for b in HOSTS if a != b
    }
    with pytest.raises(UserError, match="--window 2H: one of 1H, 6H, 1D, 1W"):
        views.matrix_of(results, None, "2H")


def test_a_store_without_a_mesh_has_no_matrix(tmp_path):
    with store.opened(tmp_path, create=True):
        pass
    with pytest.raises(UserError, match="no mesh data in the store under"):
        views.matrix_of(tmp_path, None, "1H")


def test_metrics_written_whole_are_what_is_returned(results, tmp_path):
    out = tmp_path / "textfile" / "interregion.prom"
    out.parent.mkdir()
    text = openmetrics.metrics(results, "1H", "prometheus", out)
    assert out.read_text() == text and "interregion_rtt_seconds" in text
    assert openmetrics.metrics(results, "1H", "openmetrics").endswith("# EOF\n")
    with pytest.raises(UserError, match="--window 5M"):
        openmetrics.metrics(results, "5M", "openmetrics")


def test_the_status_of_no_mesh_says_how_to_start_one(tmp_path):
    with pytest.raises(UserError, match="start one with 'interregion mesh up'"):
        collect.mesh_status(tmp_path, None, print)


@pytest.mark.parametrize(
    ("regions", "yes", "message"),
    [
        (("aws:us-east-1",), True, "needs at least 2 regions"),
        (None, False, r"this mesh starts \d+ hosts \(more than 16\): pass --yes"),
    ],
)
def test_a_mesh_is_refused_before_anything_is_made(tmp_path, regions, yes, message):
    wanted = SweepRequest(selection=SelectionSpec(regions=regions or (), max_regions=None))
    started: list[object] = []
    with pytest.raises(UserError, match=message):
        collect.run_mesh(wanted, run.MeshRequest(), tmp_path / "r", yes=yes, note=print, say=print,
                     started=started.append)  # fmt: skip
    assert started == [] and not (tmp_path / "r").exists()


def test_the_mesh_plan_of_a_dry_run():
    request = SweepRequest(selection=SelectionSpec(regions=HOSTS))
    plan = launch.dry_run(request, catalog_path=paths.CATALOG, pricing_path=paths.PRICING,
                          note=print, warn=print)  # fmt: skip
    found = mesh_plan(plan, paths.PRICING, 60, 5)
    assert found.regions == tuple(r.key for r in plan.selection.regions) and found.emulated
    doc = found.to_json()
    assert doc["hosts"] == 3 and doc["directed_pairs"] == 6 and doc["interval_s"] == 60
    assert doc["total_usd_per_month"] == round(found.cost.total_usd_per_month, 2)


def test_plan_mesh_is_the_mesh_of_the_dry_runs_regions():
    request = SweepRequest(selection=SelectionSpec(regions=HOSTS))
    notes: list[str] = []
    found = plan_mesh(request, catalog_path=paths.CATALOG, pricing_path=paths.PRICING,
                      interval_s=30, echoes=2, note=notes.append, warn=notes.append)  # fmt: skip
    plan = launch.dry_run(request, catalog_path=paths.CATALOG, pricing_path=paths.PRICING,
                          note=print, warn=print)  # fmt: skip
    assert found == mesh_plan(plan, paths.PRICING, 30, 2)
    assert found.to_json()["probes_per_host_per_s"] == round(2 * 2 / 30, 3)
    with pytest.raises(UserError, match="--round-overhead -1: give 0 to 86,400 seconds"):
        plan_mesh(request, catalog_path=paths.CATALOG, pricing_path=paths.PRICING,
                  round_overhead=-1.0, note=print, warn=print)  # fmt: skip


def test_a_mesh_status_holds_times_and_writes_them_once_at_its_edges():
    from datetime import UTC, datetime

    from orchestrator.mesh.lifecycle import MeshRequest
    from orchestrator.text.sweep_lines import mesh_status_lines

    newest = datetime(2026, 11, 22, 1, 30, tzinfo=UTC)
    kept = {"hosts": {"aws:us-east-1": {"newest_t": newest.timestamp(), "first_t": 0,
                                        "probes": 10, "lag_s": 4.0}}}  # fmt: skip
    (host,) = views.host_status(kept, 60)
    assert host.last_record_utc == newest
    collected = datetime(2026, 11, 22, 1, 31, 5, 250000, tzinfo=UTC)
    status = collect.MeshStatus("m1", True, "measuring", collected, MeshRequest(), (host,))
    doc = status.to_json()
    assert doc["collected_utc"] == "2026-11-22T01:31:05.250Z"
    assert doc["hosts"][0]["last_record_utc"] == "2026-11-22T01:30:00Z"
    first, _, row = mesh_status_lines(status)
    assert first == "mesh m1: running; last collection 2026-11-22T01:31:05.250Z"
    assert row.split()[:3] == ["aws:us-east-1", "2026-11-22T01:30:00Z", "4"]
