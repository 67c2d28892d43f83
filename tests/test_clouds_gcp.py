"""GCP code against a local Compute REST server: the real client library and transport run."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from fakes.gcp_compute import FakeCompute
from google.auth.credentials import AnonymousCredentials

from orchestrator.clouds import gcp, preflight, reap, sync
from orchestrator.clouds.labels import gcp_labels, gcp_name_prefix, resource_tags
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import Region

NOW = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
PROJECT = "test-project"


@pytest.fixture
def fake():
    with FakeCompute(PROJECT) as server:
        s = server.state
        s.add_region(
            "europe-west1",
            {"europe-west1-b": "UP", "europe-west1-c": "UP", "europe-west1-d": "UP"},
            {"CPUS": (24, 0), "IN_USE_ADDRESSES": (8, 1), "STATIC_ADDRESSES": (8, 0)},
        )
        s.add_region(
            "asia-northeast1",
            {"asia-northeast1-a": "DOWN", "asia-northeast1-b": "UP"},
            {"CPUS": (24, 23), "IN_USE_ADDRESSES": (8, 0)},
        )
        s.add_region(
            "us-east4", {"us-east4-a": "UP"}, {"CPUS": (24, 0), "IN_USE_ADDRESSES": (8, 0)}
        )
        for zone in s.zones:
            s.add_machine_type(zone, "e2-small", 2, 2048)
        del s.machine_types[("europe-west1-b", "e2-small")]  # sold out in the default zone
        s.project_quotas = [{"metric": "CPUS_ALL_REGIONS", "limit": 32, "usage": 4}]
        yield server


def _api(server: FakeCompute) -> gcp.GcpApi:
    return gcp.GcpApi(PROJECT, credentials=AnonymousCredentials(), api_endpoint=server.endpoint)


def _region(rid: str, zone: str) -> Region:
    return Region("gcp", rid, "City", "BE", 0.0, 0.0, "test", zone=zone)


def test_regions_zones_and_quotas_through_the_client(fake):
    api = _api(fake)
    known = gcp.regions(api)
    assert set(known) == {"europe-west1", "asia-northeast1", "us-east4"}
    assert known["europe-west1"].zones == ("europe-west1-b", "europe-west1-c", "europe-west1-d")
    assert known["europe-west1"].quotas["IN_USE_ADDRESSES"] == (8, 1)
    assert gcp.zone_status(api)["asia-northeast1-a"] == "DOWN"
    assert gcp.project_quotas(api) == {"CPUS_ALL_REGIONS": (32, 4)}
    assert gcp.machine_type_cpus(api, "europe-west1-c", "e2-small") == 2
    assert gcp.machine_type_cpus(api, "europe-west1-c", "e2-nope") is None  # a real 404


def test_zone_fallback_when_the_default_zone_cannot_host(fake):
    api = _api(fake)
    known, zones = gcp.regions(api), gcp.zone_status(api)
    facts = gcp.region_facts(api, "europe-west1", "europe-west1-b", "e2-small", known, zones)
    assert (facts.zone, facts.machine_type_cpus) == ("europe-west1-c", 2)
    # a DOWN default zone is skipped too
    facts = gcp.region_facts(api, "asia-northeast1", "asia-northeast1-a", "e2-small", known, zones)
    assert facts.zone == "asia-northeast1-b"


def test_preflight_drops_quota_and_unknown_regions_and_picks_zones(fake):
    regions = [
        _region("europe-west1", "europe-west1-b"),
        _region("asia-northeast1", "asia-northeast1-a"),  # CPUS: 23 of 24 used
        _region("me-central2", "me-central2-a"),  # not offered to the project
    ]
    warnings: list[str] = []
    result = preflight.preflight(
        regions, {"gcp": "e2-small"}, gcp_api=lambda: _api(fake), warn=warnings.append
    )
    assert [r.key for r in result.regions] == ["gcp:europe-west1"]
    assert result.gcp_zones == {"europe-west1": "europe-west1-c"}
    assert result.identities == {"gcp": PROJECT}
    assert (
        warnings[0]
        == "gcp:europe-west1: zone europe-west1-b cannot host the VM, using europe-west1-c"
    )
    assert any(
        w.startswith("gcp:asia-northeast1: CPUS quota exceeded: needs 2, 23 of 24")
        for w in warnings
    )
    assert any(w.startswith("gcp:me-central2 is not offered to this GCP project") for w in warnings)
    with pytest.raises(UserError, match="CPUS quota exceeded"):
        preflight.preflight(
            regions[:2], {"gcp": "e2-small"}, gcp_api=lambda: _api(fake), strict=True, warn=print
        )


def test_unknown_machine_type_is_one_line(fake):
    with pytest.raises(UserError) as e:
        preflight.preflight(
            [_region("us-east4", "us-east4-a")],
            {"gcp": "e2-nope"},
            gcp_api=lambda: _api(fake),
            strict=True,
            warn=print,
        )
    assert str(e.value).startswith("gcp:us-east4: unknown machine type 'e2-nope'")
    assert "\n" not in str(e.value)


def test_project_cpu_quota_for_the_whole_sweep(fake):
    fake.state.project_quotas = [{"metric": "CPUS_ALL_REGIONS", "limit": 8, "usage": 7}]
    with pytest.raises(UserError, match="CPUS_ALL_REGIONS quota exceeded: the sweep needs 4"):
        preflight.preflight(
            [_region("europe-west1", "europe-west1-b"), _region("us-east4", "us-east4-a")],
            {"gcp": "e2-small"},
            gcp_api=lambda: _api(fake),
            warn=print,
        )


def test_missing_credentials_and_project_are_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    monkeypatch.setenv("NO_GCE_CHECK", "true")  # never probe a metadata server
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    with pytest.raises(UserError) as e:
        gcp.GcpApi("p")
    # the variable is set: the error names its file, not "set GOOGLE_APPLICATION_CREDENTIALS"
    assert str(e.value).startswith(
        f"no GCP credentials: GOOGLE_APPLICATION_CREDENTIALS names {tmp_path / 'none.json'}, "
        "which does not exist"
    )
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with pytest.raises(UserError, match="no GCP project"):
        gcp.GcpApi(None, credentials=AnonymousCredentials())


def _sweep(fake: FakeCompute, sweep: str, created: datetime, ttl_h: float, region: str, n: int):
    """What infra/gcp makes, labelled and described as it does."""
    tags = resource_tags(sweep, "Tester", created, created + timedelta(hours=ttl_h))
    labels = gcp_labels(tags)
    prefix = gcp_name_prefix(sweep)
    s = fake.state
    zone = f"{region}-c"
    s.add_instance(f"{prefix}-{region}", zone, labels)
    s.add_address(f"{prefix}-{region}", region, f"203.0.113.{n}", labels)
    s.add_subnetwork(f"{prefix}-{region}", region, prefix, json.dumps(labels))
    s.add_global("firewall", f"{prefix}-ssh", json.dumps(labels))
    s.add_global("firewall", f"{prefix}-peers", json.dumps(labels))
    s.add_global("network", prefix, json.dumps(labels))
    return {
        ("instance", f"{prefix}-{region}"),
        ("address", f"{prefix}-{region}"),
        ("subnetwork", f"{prefix}-{region}"),
        ("firewall", f"{prefix}-ssh"),
        ("firewall", f"{prefix}-peers"),
        ("network", prefix),
    }


def _present(fake: FakeCompute) -> set[tuple[str, str]]:
    s = fake.state
    return (
        {("instance", n) for n in s.instances}
        | {("address", n) for n in s.addresses}
        | {("subnetwork", n) for n in s.subnetworks}
        | {("firewall", n) for n in s.firewalls}
        | {("network", n) for n in s.networks}
    )


def test_reaper_deletes_expired_sweeps_and_nothing_else(fake):
    old = _sweep(fake, "20261121T2300Z-aaaa", NOW - timedelta(hours=4), 2, "europe-west1", 1)
    new = _sweep(fake, "20261122T0250Z-bbbb", NOW - timedelta(minutes=10), 2, "us-east4", 2)
    s = fake.state
    s.add_instance("someone-else", "europe-west1-b", {"project": "other"})
    s.add_global("firewall", "default-allow-ssh", "")
    s.add_global("firewall", "ir-lookalike", "not json")  # our prefix, no labels: left alone
    s.add_global("network", "default", "")
    before = _present(fake)

    api = lambda: _api(fake)  # noqa: E731
    dry = reap.reap(["gcp"], dry_run=True, now=NOW, gcp_api=api, warn=print)
    assert {(x.kind, x.name if x.kind != "address" else x.id) for x in dry.due} == old
    assert _present(fake) == before
    # the aggregated lists were asked with the label filter
    assert any("labels.project" in path for _, path in s.requests if "aggregated/instances" in path)

    warnings: list[str] = []
    report = reap.reap(["gcp"], now=NOW, gcp_api=api, warn=warnings.append)
    assert warnings == []
    assert {(x.kind, x.id) for x in report.deleted} == old
    assert _present(fake) == before - old
    assert new <= _present(fake)
    # deletions went in dependency order and every operation was waited for
    deletes = [path for method, path in s.requests if method == "DELETE"]
    kinds = [
        next(
            k
            for k in ("instances", "addresses", "firewalls", "subnetworks", "networks")
            if f"/{k}/" in p
        )
        for p in deletes
    ]
    assert kinds == sorted(
        kinds, key=["instances", "addresses", "firewalls", "subnetworks", "networks"].index
    )
    assert sum(1 for _, p in s.requests if p.endswith("/wait")) == len(deletes)


def test_reaper_by_sweep_id_matches_the_sanitised_label(fake):
    a = _sweep(fake, "20261122T0100Z-Cccc", NOW - timedelta(minutes=5), 24, "europe-west1", 3)
    b = _sweep(fake, "20261122T0110Z-dddd", NOW - timedelta(minutes=5), 24, "us-east4", 4)
    report = reap.reap(
        ["gcp"], sweep_id="20261122T0100Z-Cccc", now=NOW, gcp_api=lambda: _api(fake), warn=print
    )
    assert {(x.kind, x.id) for x in report.deleted} == a
    assert b <= _present(fake)


def test_regions_sync_lists_what_the_catalog_lacks(fake):
    from orchestrator.model.catalog import Catalog

    catalog = Catalog(
        regions=(
            _region("europe-west1", "europe-west1-b"),
            _region("me-central2", "me-central2-a"),
        ),
        machine_types={"aws": "t3.small", "gcp": "e2-small"},
    )
    report = sync.sync(catalog, ["gcp"], gcp_api=lambda: _api(fake))
    assert report.missing == ["gcp:asia-northeast1", "gcp:us-east4"]
    assert report.stale == ["gcp:me-central2"]


def test_a_failed_deletion_is_a_warning_and_the_rest_goes_on(fake):
    old = _sweep(fake, "20261121T2300Z-eeee", NOW - timedelta(hours=4), 2, "europe-west1", 5)
    address = next(name for kind, name in old if kind == "address")
    fake.state.fail_deletes.add(("addresses", address))
    warnings: list[str] = []
    report = reap.reap(["gcp"], now=NOW, gcp_api=lambda: _api(fake), warn=warnings.append)
    assert {(x.kind, x.id) for x in report.deleted} == old - {("address", address)}
    (warning,) = warnings
    assert warning.startswith("could not delete gcp europe-west1 address 203.0.113.5")
    assert "already being used" in warning
    assert address in fake.state.addresses


def test_network_failures_are_one_line_also_after_retries():
    import requests
    from google.api_core import exceptions as gexc

    try:
        requests.get("http://127.0.0.1:9/compute/v1/projects/p/regions", timeout=5)
    except requests.exceptions.ConnectionError as e:
        refused = e
    for error in (refused, gexc.RetryError("Deadline of 120.0s exceeded", refused)):
        with pytest.raises(UserError) as caught, gcp.network_errors():
            raise error
        assert str(caught.value).startswith(
            "cannot reach GCP at http://127.0.0.1:9 (no connection)"
        )
    timeout = requests.exceptions.ReadTimeout("slow", request=refused.request)
    with (
        pytest.raises(UserError, match=r"^cannot reach GCP at http://127\.0\.0\.1:9 \(timed out\)"),
        gcp.network_errors(),
    ):
        raise timeout
