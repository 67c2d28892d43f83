"""The orchestrator's own import graph: no cycles, parsing apart from analysis.

Statically (every `import` in the source, including those inside functions
and under TYPE_CHECKING, since a lazy import is still a dependency) and at
run time (each module imported alone in a fresh interpreter).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.core import paths
from orchestrator.core.faces import face_exports

# every module imported in a fresh interpreter: seconds; `make unit` skips it
pytestmark = pytest.mark.slow

PACKAGE = paths.ROOT / "orchestrator"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(paths.ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _faces(modules: dict[str, Path]) -> dict[str, dict[str, str]]:
    """Package -> its face's lazy names -> the module that defines each (its
    `TYPE_CHECKING` imports, which the face's `__getattr__` reads)."""
    return {
        name: {export: where for export, (where, _) in face_exports(path).items()}
        for name, path in modules.items()
        if path.name == "__init__.py"
    }


def import_graph() -> dict[str, set[str]]:
    """Module -> the orchestrator modules its source imports, wherever the import is; a
    name taken from a package's face counts as an import of the module defining it."""
    modules = _modules()
    faces = _faces(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                face = faces.get(node.module, {})
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    deps.add(full if full in modules else face.get(alias.name, node.module))
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dep in graph[todo.pop()]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_the_graph_is_read():
    graph = import_graph()
    assert "orchestrator.core.stats" in graph["orchestrator.results.parse"]
    assert (
        "orchestrator.report.charts" in graph["orchestrator.report.build"]
    )  # the lazy import counts


def test_no_module_imports_itself_through_others():
    graph = import_graph()
    cycles = sorted(name for name in graph if name in _reachable(graph, name))
    assert cycles == []


def test_charts_does_not_depend_on_the_report():
    assert "orchestrator.report.build" not in _reachable(
        import_graph(), "orchestrator.report.charts"
    )


def test_parsing_does_not_depend_on_analysis():
    deps = _reachable(import_graph(), "orchestrator.results.parse")
    assert "orchestrator.report.analyze" not in deps and "orchestrator.report.build" not in deps


_PROBE = """
import importlib, json, sys
name = sys.argv[1]
before = set(sys.modules)
importlib.import_module(name)
print(json.dumps(sorted(m for m in set(sys.modules) - before if m.startswith("orchestrator"))))
"""


def _loaded_by(name: str) -> set[str]:
    """Orchestrator modules loaded by importing `name` alone in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, name],
        capture_output=True,
        text=True,
        cwd=paths.ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def test_each_module_imports_alone_in_a_fresh_interpreter():
    # One interpreter for all of them would hide an import that only works
    # because another module happened to be imported first; a fresh one per
    # module is slower, so the probe imports each module as the first one.
    probe = """
import importlib, sys
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "orchestrator" or m.startswith("orchestrator.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as e:
        failed.append(f"{name}: {type(e).__name__}: {e}")
print("\\n".join(failed))
"""
    names = sorted(n for n in _modules() if not n.endswith("__main__"))  # that one runs the CLI
    done = subprocess.run(
        [sys.executable, "-c", probe, *names],
        capture_output=True,
        text=True,
        cwd=paths.ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_parse_loads_no_analysis_and_charts_no_report():
    assert "orchestrator.report.analyze" not in _loaded_by("orchestrator.results.parse")
    assert "orchestrator.report.build" not in _loaded_by("orchestrator.report.charts")
    assert "orchestrator.report.charts" not in _loaded_by(
        "orchestrator.report.build"
    )  # plotly only to chart


def test_no_import_of_our_own_code_is_allowed_to_fail():
    # `try: import ... except ImportError` around our own modules turns a bug
    # into a silently missing feature (the site's model table once did that).
    guarded = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Try):
                continue
            catches = {
                n.id
                for h in node.handlers
                for n in ast.walk(h.type or ast.Name("BaseException"))
                if isinstance(n, ast.Name)
            }
            if not catches & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
                continue
            for inner in (n for stmt in node.body for n in ast.walk(stmt)):
                module = (
                    inner.module
                    if isinstance(inner, ast.ImportFrom)
                    else inner.names[0].name
                    if isinstance(inner, ast.Import)
                    else None
                )
                if module and module.split(".")[0] == "orchestrator":
                    guarded.append(f"{name}:{inner.lineno}")
    assert guarded == []
