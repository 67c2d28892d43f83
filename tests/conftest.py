"""Fixtures shared by test modules in more than one package folder."""

from __future__ import annotations

import pytest

from orchestrator.drivers.keys import SweepKeys, ensure_sweep_keys


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> SweepKeys:
    """A sweep's ssh keys (client and host), made once per test module."""
    return ensure_sweep_keys(tmp_path_factory.mktemp("keys"))
