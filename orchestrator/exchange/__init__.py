"""Measurements in and out of the history store beside the sweeps: other projects' public data
converted to the results schema, external CSV files imported as dated sources, and the stored
rows exported (`interregion history convert`, `import`, `export`).

Public API: the modules below; other packages import only these names
(`from orchestrator.exchange import importer`), never a name starting with `_`.

- `exporter`: Exporting the history store's rows: `interregion history export`.
- `importer`: Importing measurements that other tools made: `interregion history import`.
- `public_data`: Converters: the public AWS/GCP measurements vendored in data/ -> our CSV schema.
"""

__all__ = [
    "exporter",
    "importer",
    "public_data",
]
