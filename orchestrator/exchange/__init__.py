"""Measurements in and out of the history store beside the sweeps: other projects' public data
converted to the results schema, external CSV files imported as dated sources, and the stored
rows exported (`interregion history convert`, `import`, `export`).

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.exchange import convert_file`), never a module of this
package (tests/check_layers.py).
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


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
