"""Every third-party module the package imports (at the top or inside a function) comes
from a distribution that pyproject.toml declares, in `dependencies` or an extra: an
installed wheel has nothing else (tests/e2e/test_wheel.py found numpy missing)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _imported_modules() -> dict[str, str]:
    """Top-level module -> the first file importing it, over orchestrator/."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "orchestrator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


@pytest.mark.slow
def test_every_imported_distribution_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_name(r) for r in project["dependencies"]}
    for extra, requirements in project["optional-dependencies"].items():
        if extra != "dev":
            declared |= {_name(r) for r in requirements}
    providers = packages_distributions()
    missing = {}
    for module, where in _imported_modules().items():
        if module in sys.stdlib_module_names or module in ("orchestrator", "__future__"):
            continue
        dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
        assert dists, f"{module} (imported in {where}) comes from no installed distribution"
        if not dists & declared:
            missing[module] = (where, sorted(dists))
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"
