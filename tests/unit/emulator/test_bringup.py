"""emulator.bring_up: `emulator up`'s pipeline (regions chosen, keys made, a subnet
reserved, the spec built and brought up, known_hosts written), called without the CLI."""

from __future__ import annotations

import os

import pytest
from emulator_support import new_id

from orchestrator import emulator as emu
from orchestrator.core.errors import UserError
from orchestrator.emulator import perturb
from orchestrator.model.catalog import load_catalog

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, iptables)")


def test_named_regions_are_chosen_and_a_count_spreads_over_the_globe():
    catalog = load_catalog()
    named = emu.UpRequest(regions=("aws:us-east-1", "gcp:europe-west1"))
    assert [r.key for r in emu.bringup.chosen_regions(named, catalog)] == [
        "aws:us-east-1",
        "gcp:europe-west1",
    ]
    assert len(emu.bringup.chosen_regions(emu.UpRequest(), catalog)) == 8  # the default
    assert len(emu.bringup.chosen_regions(emu.UpRequest(max_regions=3), catalog)) == 3


def test_a_perturbation_of_a_host_not_chosen_or_an_unknown_controller_is_one_line():
    catalog = load_catalog()
    request = emu.UpRequest(
        regions=("aws:us-east-1", "gcp:europe-west1"),
        perturbations=(perturb.parse("aws:ap-southeast-2,loss_pct=2"),),
    )
    with pytest.raises(UserError, match="ap-southeast-2"):
        emu.bringup.chosen_regions(request, catalog)
    with pytest.raises(UserError, match=r"^--controller: "):
        emu.bringup.controller_of(catalog, "aws:nowhere-1")
    assert emu.bringup.controller_of(catalog, "") is None


@pytest.mark.parametrize(
    "given",
    [
        {"controller": "aws:us-east-1"},
        {"seed": 7},
        {"perturbations": (perturb.parse("aws:us-east-1,loss_pct=2"),)},
    ],
)
def test_a_spec_file_refuses_what_goes_into_the_spec_before_anything_runs(tmp_path, given):
    request = emu.UpRequest(spec_file=tmp_path / "no-such-spec.json", **given)
    with pytest.raises(UserError, match=r"^--controller, --seed and --perturb go into the spec"):
        emu.bring_up(request)


@pytest.mark.root
@needs_root
def test_bring_up_makes_keys_known_hosts_and_models_the_controller(tmp_path):
    request = emu.UpRequest(
        emulation_id=new_id(),
        regions=("aws:us-east-1", "gcp:europe-west1"),
        keys_dir=tmp_path / "keys",
        ttl_hours=1.0,
        controller="aws:us-east-1",
        seed=7,
        perturbations=(perturb.parse("aws:us-east-1/gcp:europe-west1,delay_ms=10"),),
    )
    try:
        done = emu.bring_up(request)
        assert [h.name for h in done.hosts] == ["aws:us-east-1", "gcp:europe-west1"]
        assert done.spec.seed == 7 and done.spec.perturbations == request.perturbations
        assert done.known_hosts == tmp_path / "keys" / "known_hosts"
        assert len(done.known_hosts.read_text().splitlines()) == 2
        assert done.client_key is not None and done.client_key.exists()
        assert done.controller is not None and done.controller.key == "aws:us-east-1"
        # the farthest host is in Belgium: tens of ms away, modelled from geography
        assert done.controller_rtt_ms is not None and 40 < done.controller_rtt_ms < 200
        assert [s.id for s in emu.status()].count(request.emulation_id) == 1
    finally:
        emu.down(request.emulation_id)
