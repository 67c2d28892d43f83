"""Python's cyclic garbage collector paused around work that makes millions of objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (as it was after): judging many paths or
    building many pages makes millions of tuples and lists, none in a cycle, and each
    collection would walk them all again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
