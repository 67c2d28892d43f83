"""Measurements in and out of the history store beside the sweeps: other projects' public data
converted to the results schema, external CSV files imported as dated sources, and the stored
rows exported (`interregion history convert`, `import`, `export`).

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.exchange import convert_file`),
never a module of this package (tests/check_layers.py).

- `exporter`: `export_measurements`.
- `importer`: `import_source`.
- `public_data`: `Converted`, `convert_file`.
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.exchange.exporter import export as export_measurements
    from orchestrator.exchange.importer import import_source
    from orchestrator.exchange.public_data import Converted, convert_file

__all__ = [
    "Converted",
    "convert_file",
    "export_measurements",
    "import_source",
]

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "export_measurements": ("orchestrator.exchange.exporter", "export"),
    "import_source": ("orchestrator.exchange.importer", "import_source"),
    "convert_file": ("orchestrator.exchange.public_data", "convert_file"),
    "Converted": ("orchestrator.exchange.public_data", "Converted"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)
