"""Fixtures shared by test modules in more than one package folder."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from orchestrator.drivers.keys import SweepKeys, ensure_sweep_keys

# Property tests judge answers, not speed: a loaded machine (CI beside other work) made
# hypothesis's 200 ms deadline fail examples that were right.
settings.register_profile("interregion", deadline=None)
settings.load_profile("interregion")


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> SweepKeys:
    """A sweep's ssh keys (client and host), made once per test module."""
    return ensure_sweep_keys(tmp_path_factory.mktemp("keys"))


@pytest.fixture(scope="session", autouse=True)
def xdg_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The XDG cache and state folders under the session's tmp: no test writes to the
    home folder (the commands they start, in subprocesses too, inherit these)."""
    base = tmp_path_factory.mktemp("xdg")
    wanted = {"XDG_CACHE_HOME": str(base / "cache"), "XDG_STATE_HOME": str(base / "state")}
    before = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    yield wanted
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
