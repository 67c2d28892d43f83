"""What the renderers hand the CLI: lines and rich tables, printed in order.

`print_parts` prints a renderer's parts: a line as it is (no markup, no highlighting, never
wrapped), a table as rich draws it; `console` is the width every table is drawn at (the
terminal's, else a fixed width, as rich would assume 80 columns without one).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from rich.console import Console, RenderableType

Part = RenderableType  # a line (str) or a rich Table
WIDTH = 160  # without a terminal rich assumes 80 columns, too narrow for a summary


def console(width: int) -> Console:
    """The terminal's console, else one `width` columns wide (a pipe, a test)."""
    return Console() if sys.stdout.isatty() else Console(width=width)


def print_parts(parts: Iterable[Part], width: int, markup: bool = False) -> None:
    """Each part in order: lines as given (`markup` parses rich markup in them), tables drawn."""
    out = console(width)
    for part in parts:
        if isinstance(part, str) and not markup:
            out.print(part, soft_wrap=True, highlight=False, markup=False)
        else:
            out.print(part)
