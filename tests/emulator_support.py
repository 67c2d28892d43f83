"""Emulations for the tests: a random id and a spec of a few regions (root needed to
bring them up). The `keys` fixture they take is in conftest.py."""

from __future__ import annotations

import os
import secrets

from orchestrator import emulator as emu
from orchestrator.drivers.keys import SweepKeys
from orchestrator.emulator.spec import EmulationSpec
from orchestrator.emulator.stack import build_spec
from orchestrator.model.catalog import load_catalog
from orchestrator.netmodel.model import DEFAULT_MODEL

REGIONS = ("aws:us-east-1", "gcp:us-east4", "aws:eu-west-1", "gcp:europe-west1")


def new_id() -> str:
    return "t" + secrets.token_hex(3)


def make_spec(
    emulation_id: str, keys: SweepKeys, regions=REGIONS, controller: str = ""
) -> EmulationSpec:
    catalog = load_catalog()
    subnet = emu.reserve_subnet(emulation_id, owner_pid=os.getpid())
    chosen = [catalog.get(k) for k in regions]
    return build_spec(
        emulation_id,
        subnet,
        chosen,
        keys,
        DEFAULT_MODEL,
        owner_pid=os.getpid(),
        controller=catalog.get(controller) if controller else None,
    )
