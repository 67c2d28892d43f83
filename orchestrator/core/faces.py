"""The lazy package faces: a name a face exports loads its module when first imported.

A face (a package's `__init__`) imports its names under `TYPE_CHECKING`, for mypy and
the reader, and lists them in `__all__`; at run time those imports do not run, and
`lazy_getattr` reads them from the face's source instead, once, on the first name asked
for: one list of the names, which the type checker and the run time share."""

from __future__ import annotations

import ast
import importlib
import textwrap
from collections.abc import Callable
from pathlib import Path


def face_exports(init_file: str | Path) -> dict[str, tuple[str, str]]:
    """A face's `TYPE_CHECKING` imports: exported name -> (its module, its name there).
    Only that block is parsed (about a third of a face)."""
    lines = Path(init_file).read_text(encoding="utf-8").splitlines()
    exports: dict[str, tuple[str, str]] = {}
    for at, line in enumerate(lines):
        if line.rstrip() != "if TYPE_CHECKING:":
            continue
        end = next(
            (i for i in range(at + 1, len(lines)) if lines[i] and not lines[i][0].isspace()),
            len(lines),
        )
        block = textwrap.dedent("\n".join(lines[at + 1 : end]))
        for imp in ast.parse(block).body:
            if isinstance(imp, ast.ImportFrom) and imp.module:
                for alias in imp.names:
                    exports[alias.asname or alias.name] = (imp.module, alias.name)
    return exports


def lazy_getattr(package: str, init_file: str) -> Callable[[str], object]:
    """A package's module `__getattr__` (PEP 562) over its face's `TYPE_CHECKING` imports:
    the name is looked up in its module at each import, as a plain import would."""
    exports: dict[str, tuple[str, str]] = {}

    def __getattr__(name: str) -> object:
        if not exports:
            exports.update(face_exports(init_file))
        if name in exports:
            module, there = exports[name]
            return getattr(importlib.import_module(module), there)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
