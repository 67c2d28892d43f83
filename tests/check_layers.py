"""The package layers, checked from the source: `make lint` runs this file.

Lowest first; a package imports only packages of lower layers, and never a sibling
of its own layer (`a | b`), not even inside a function or under TYPE_CHECKING: a lazy
import is still a dependency. Also checked:
- other packages import only the names a package's `__all__` declares (the functions,
  types and constants its `__init__` re-exports), and no name starting with `_`: never
  one of its modules (`from orchestrator.history import changes_report`, not
  `from orchestrator.history.store import ...` nor `from orchestrator.history import store`);
- an `__all__` names no module of its package (NAMESPACES: packages that are a namespace
  of modules on purpose; none);
- nothing imports `orchestrator.cli` but the entry points;
- click is imported only in `orchestrator.cli`: the library takes typed values
  (orchestrator.sweep.launch), never a command's parameters;
- `orchestrator.cli` parses, calls one use case and renders: it imports none of the
  libraries a pipeline is made of (CLI_NEVER: data, SQL, child processes) and holds no
  SQL text; the work is in the package that owns it.

usage: python tests/check_layers.py [ROOT]   (ROOT: the checkout; default: this one)
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

LAYERS: list[tuple[str, ...]] = [
    ("core",),
    ("model",),
    ("results",),
    ("netmodel",),
    ("plan",),
    ("report", "history"),
    ("drivers",),
    ("emulator", "clouds"),
    ("sweep",),
    ("advise", "mesh", "exchange"),
    ("study",),
    ("site", "publish"),
    ("schedule", "demo"),
    ("text",),
    ("cli",),
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
# Entry points, the only modules allowed to import upward (by name, with why):
ENTRY_POINTS = {
    "orchestrator.__main__",  # `python -m orchestrator`: the CLI
    "orchestrator.emulator.__main__",  # what infra/local's provisioners run: the emulator's CLI
}
ROOT_NAMES = {"__version__"}  # what any module may take from `orchestrator` itself
# Packages whose face is their modules, on purpose (other packages import those modules):
# none. A face names what other packages use; its modules are its own business.
NAMESPACES: set[str] = set()
CLI_ONLY = {"click"}  # third-party packages only the CLI imports
# what the CLI never imports: a query, an array or a child process is a use case's work
CLI_NEVER = {"duckdb", "numpy", "pandas", "pyarrow", "sqlite3", "subprocess"}
# a statement's keyword, then one of its clauses within the same string, over lines too
SQL = re.compile(
    r"\b(SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|CREATE\s+TABLE)\b[\s\S]{0,300}?"
    r"(\b(FROM|VALUES|SET|WHERE|AS)\b|\()"
)


@dataclass(frozen=True)
class Problem:
    module: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.text}"


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted((root / "orchestrator").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def package_of(module: str) -> str:
    """`orchestrator.sweep.stages` -> `sweep`; `orchestrator.demo` -> `demo`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def declared_all(path: Path) -> list[str] | None:
    """A package `__init__`'s `__all__`, read from its source (None: none declared)."""
    found = all_line(path)
    return found[1] if found else None


def all_line(path: Path) -> tuple[int, list[str]] | None:
    """(line, names) of a package `__init__`'s `__all__` (`__all__ = [...]` or
    `__all__: list[str] = [...]`), read from its source."""
    for node in ast.parse(path.read_text()).body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value  # type: ignore[attr-defined]
            return node.lineno, [ast.literal_eval(e) for e in value.elts]
    return None


def imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) of every absolute import in the file, wherever it is."""
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.extend((node.lineno, node.module, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:
            out.append((node.lineno, "." * node.level + (node.module or ""), None))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name, None) for a in node.names)
    return out


def sql_texts(path: Path) -> list[int]:
    """The lines of the file's strings that read as SQL: constants, and f-strings read with
    each replacement field as `{}` (`f"SELECT {cols} FROM t"`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            parts = node.values
            text = "".join(str(v.value) if isinstance(v, ast.Constant) else "{}" for v in parts)
        else:
            continue
        if SQL.search(text):
            found.add(node.lineno)
    return sorted(found)


def check(root: Path) -> list[Problem]:
    mods = modules(root)
    public = {
        package_of(name): declared_all(path)
        for name, path in mods.items()
        if path.name == "__init__.py" and name.count(".") == 1
    }
    problems: list[Problem] = []
    for name, path in mods.items():
        if path.name != "__init__.py" or name.count(".") != 1 or package_of(name) in NAMESPACES:
            continue
        line, names = all_line(path) or (0, [])
        for face in names:
            if f"{name}.{face}" in mods:
                problems.append(
                    Problem(
                        name,
                        line,
                        f"__all__ names module {face}: a face names functions, types and constants",
                    )
                )
    for name, path in mods.items():
        mine = package_of(name)
        if mine == "cli":
            for line in sql_texts(path):
                problems.append(Problem(name, line, "SQL in the CLI: a query is a use case's work"))
        for line, target, imported in imports(path):
            if target.startswith("."):
                problems.append(Problem(name, line, f"relative import {target}: use absolute"))
                continue
            if target.split(".")[0] in CLI_ONLY and mine != "cli" and name not in ENTRY_POINTS:
                problems.append(Problem(name, line, f"imports {target}: only orchestrator.cli may"))
            if target.split(".")[0] in CLI_NEVER and mine == "cli":
                problems.append(
                    Problem(name, line, f"imports {target}: the CLI calls a use case that does")
                )
            if target != "orchestrator" and not target.startswith("orchestrator."):
                continue
            if target == "orchestrator":
                if imported in ROOT_NAMES:
                    continue
                full = f"orchestrator.{imported}"
            elif imported is not None and f"{target}.{imported}" in mods:
                full = f"{target}.{imported}"
            else:
                full = target
            theirs = package_of(full)
            private = imported and imported.startswith("_") and imported not in ROOT_NAMES
            if private and full != name:
                problems.append(Problem(name, line, f"imports private {target}.{imported}"))
            if not theirs or theirs == mine:
                continue
            if name in ENTRY_POINTS:
                continue
            if theirs == "cli":
                problems.append(Problem(name, line, f"imports {full}: only entry points may"))
                continue
            if mine not in RANK or theirs not in RANK:
                unknown = mine if mine not in RANK else theirs
                problems.append(Problem(name, line, f"package '{unknown}' has no layer"))
                continue
            if RANK[theirs] > RANK[mine]:
                problems.append(Problem(name, line, f"upward import: {mine} -> {full}"))
            elif RANK[theirs] == RANK[mine]:
                problems.append(Problem(name, line, f"sibling import: {mine} -> {full}"))
            declared = public.get(theirs)
            if declared is None:
                if (root / "orchestrator" / theirs).is_dir():
                    problems.append(Problem(name, line, f"package {theirs} declares no __all__"))
                continue
            # from orchestrator.pkg import X: X is public; from orchestrator.pkg.mod import Y:
            # mod is public
            parts = full.split(".")
            if len(parts) == 2 and target == "orchestrator":
                continue  # the package itself: `from orchestrator import sweep`
            if len(parts) > 2 and full in mods and theirs not in NAMESPACES:
                problems.append(
                    Problem(
                        name,
                        line,
                        f"imports module {full}: import its names from orchestrator.{theirs}",
                    )
                )
                continue
            face = parts[2] if len(parts) > 2 else imported
            if face is not None and face not in declared:
                problems.append(
                    Problem(name, line, f"{full}: not in orchestrator.{theirs}.__all__")
                )
    return list(dict.fromkeys(problems))


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check(root)
    for p in problems:
        print(f"layers: {p}")
    if problems:
        print(f"layers: {len(problems)} problems (layers, lowest first: tests/check_layers.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
