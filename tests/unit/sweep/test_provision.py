"""provision: the seam to the clouds fails loudly when our own code cannot be imported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import orchestrator.clouds
from orchestrator.drivers.keys import SweepKeys
from orchestrator.model.catalog import Region
from orchestrator.sweep import provision


def test_a_broken_cloud_module_is_an_import_error_not_a_fallback(monkeypatch, tmp_path):
    # As if orchestrator/clouds/stack_setup.py failed to import (a syntax error, a missing
    # dependency): the sweep must stop with that error, not quietly take another path.
    monkeypatch.delattr(orchestrator.clouds, "stack_setup", raising=False)
    monkeypatch.setitem(sys.modules, "orchestrator.clouds.stack_setup", None)
    pub = "ssh-ed25519 AAAA test"
    keys = SweepKeys(
        client_key=tmp_path / "id", client_pub=pub, host_key=tmp_path / "h", host_pub=pub
    )
    regions = [Region("aws", r, "City", "US", 0.0, 0.0, "test") for r in ("us-east-1", "eu-west-1")]
    with pytest.raises(ImportError, match=r"orchestrator\.clouds\.stack_setup"):
        provision.cloud_stack(
            "aws",
            "20261122T0130Z-3fa2",
            regions,
            keys,
            Path(tmp_path),
            machine_types={"aws": "t3.small", "gcp": "e2-small"},
            estimate_wall_s=60.0,
        )
