"""Zones and images: recorded per host in hosts.json, and pinned by a later sweep
(`--pin-from`)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from orchestrator.cli import main
from orchestrator.clouds.stacks import check_pins
from orchestrator.core.errors import UserError
from orchestrator.model.catalog import load_catalog
from orchestrator.model.hosts import Host, hosts_from_output, pins_from, pins_from_file, placement
from orchestrator.results import files as store

EARLIER = "20261122T0130Z-3fa2"
IMAGE = "projects/debian-cloud/global/images/debian-12-bookworm-v20261101"


def _host(name: str, backend: str, zone: str, image_id: str, machine_type: str) -> Host:
    cloud, region = name.split(":")
    return Host(name, cloud, region, "192.0.2.1", "192.0.2.1", "u", 22, machine_type, backend,
                "", zone, image_id)  # fmt: skip


CLOUD_HOSTS = [
    _host("gcp:europe-west1", "gcp", "europe-west1-c", IMAGE, "e2-small"),
    _host("aws:us-east-1", "aws", "use1-az4", "ami-0123456789abcdef0", "t3.small"),
]


def test_placement_names_zone_image_and_machine_type_per_host():
    assert placement(CLOUD_HOSTS) == {
        "aws:us-east-1": {
            "zone": "use1-az4",
            "image_id": "ami-0123456789abcdef0",
            "machine_type": "t3.small",
        },
        "gcp:europe-west1": {
            "zone": "europe-west1-c",
            "image_id": IMAGE,
            "machine_type": "e2-small",
        },
    }
    assert list(placement(CLOUD_HOSTS)) == ["aws:us-east-1", "gcp:europe-west1"]  # sorted


def test_pins_come_from_cloud_hosts_only():
    hosts = [*CLOUD_HOSTS, _host("aws:eu-west-1", "local", "local", "emulated", "t3.small")]
    zones, images = pins_from(hosts)
    assert zones == {"aws:us-east-1": "use1-az4", "gcp:europe-west1": "europe-west1-c"}
    assert images == {"aws:us-east-1": "ami-0123456789abcdef0", "gcp:europe-west1": IMAGE}
    # what the stacks record is what they accept as a pin
    catalog = load_catalog()
    check_pins([catalog.get(k) for k in zones], zones, images)


def test_hosts_json_written_before_zones_were_recorded_still_reads():
    old = {k: v for k, v in CLOUD_HOSTS[1].to_dict().items() if k not in ("zone", "image_id")}
    assert Host(**old).zone == "" and Host(**old).image_id == ""  # as sweep.load_hosts reads it
    output = {"hosts": {"value": {old["name"]: old}}}
    (host,) = hosts_from_output(output)
    assert (host.zone, host.image_id) == ("", "")


def _write_hosts(results, sweep_id: str, hosts: list[Host]) -> None:
    directory = store.sweep_dir(results, sweep_id)
    directory.mkdir(parents=True)
    store.write_json(directory / store.HOSTS_FILE, {"hosts": [h.to_dict() for h in hosts]})


def test_pins_from_file_errors_are_one_line(tmp_path):
    missing = tmp_path / EARLIER / "hosts.json"
    with pytest.raises(UserError, match="never provisioned"):
        pins_from_file(missing, EARLIER)
    missing.parent.mkdir()
    missing.write_text("{not json")
    with pytest.raises(UserError, match="is damaged"):
        pins_from_file(missing, EARLIER)
    old = [{k: v for k, v in CLOUD_HOSTS[1].to_dict().items() if k not in ("zone", "image_id")}]
    missing.write_text(json.dumps({"hosts": old}))
    with pytest.raises(UserError, match="nothing to pin"):
        pins_from_file(missing, EARLIER)


def _plan(tmp_path, *extra: str):
    args = ["sweep", "--backend", "cloud", "--regions", "aws:us-east-1,gcp:europe-west1"]
    return CliRunner().invoke(
        main, [*args, "--plan-only", "--yes", "--results", str(tmp_path), *extra]
    )


def test_sweep_pin_from_records_the_earlier_zones_and_images(tmp_path):
    _write_hosts(tmp_path, EARLIER, CLOUD_HOSTS)
    result = _plan(tmp_path, "--pin-from", EARLIER)
    assert result.exit_code == 0, result.output
    sweep_id = result.output.strip().splitlines()[-1]
    record = store.load_record(tmp_path, sweep_id)
    options = record.cloud_options
    assert options is not None
    assert options.pinned_from == EARLIER
    assert options.zones == {"aws:us-east-1": "use1-az4", "gcp:europe-west1": "europe-west1-c"}
    assert options.images == {
        "aws:us-east-1": "ami-0123456789abcdef0",
        "gcp:europe-west1": IMAGE,
    }


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("none", f"--pin-from {EARLIER}: no such sweep in"),
        ("no-hosts", "was never provisioned"),
        ("emulated", "nothing to pin"),
    ],
)
def test_sweep_pin_from_a_sweep_without_cloud_hosts_is_one_line(tmp_path, setup, message):
    if setup == "no-hosts":
        store.sweep_dir(tmp_path, EARLIER).mkdir()
    elif setup == "emulated":
        _write_hosts(tmp_path, EARLIER, [_host("aws:us-east-1", "local", "local", "emulated", "m")])
    result = _plan(tmp_path, "--pin-from", EARLIER)
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.strip().splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1 and message in lines[0], result.output
    assert not [p for p in tmp_path.iterdir() if p.name != EARLIER]  # no sweep folder made
