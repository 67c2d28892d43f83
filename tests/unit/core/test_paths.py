"""Where the project writes outside a results folder: the XDG cache and state folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.core import paths


@pytest.mark.parametrize(
    ("function", "variable", "fallback"),
    [
        (paths.cache_home, "XDG_CACHE_HOME", ".cache"),
        (paths.state_home, "XDG_STATE_HOME", ".local/state"),
    ],
)
def test_xdg_folders_follow_the_variable_then_the_home_folder(
    tmp_path, monkeypatch, function, variable, fallback
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(variable, str(tmp_path / "xdg"))
    assert function() == tmp_path / "xdg" / "interregion"
    for unusable in ("", "relative/folder"):  # the specification ignores a relative one
        monkeypatch.setenv(variable, unusable)
        assert function() == tmp_path / "home" / fallback / "interregion"
    monkeypatch.delenv(variable)
    assert function() == tmp_path / "home" / fallback / "interregion"


def test_the_tests_write_no_cache_or_state_into_the_home_folder():
    # tests/conftest.py points both at the session's tmp folder
    for folder in (paths.cache_home(), paths.state_home()):
        assert not folder.is_relative_to(Path.home()), folder
