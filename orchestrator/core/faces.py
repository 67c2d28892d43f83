"""The lazy package faces: a name a face exports loads its module when first imported."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_getattr(package: str, lazy: Mapping[str, tuple[str, str]]) -> Callable[[str], object]:
    """A package's module `__getattr__` (PEP 562) over `lazy`, name -> (module, its name
    there): the name is looked up in its module at each import, as a plain import would."""

    def __getattr__(name: str) -> object:
        if name in lazy:
            module, there = lazy[name]
            return getattr(importlib.import_module(module), there)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
