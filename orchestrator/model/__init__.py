"""What a sweep is about: the region catalog (`regions.yaml`) and the host contract that every
Terraform stack outputs.

Public API: the modules below; other packages import only these names
(`from orchestrator.model import backends`), never a name starting with `_`.

- `backends`: The backends a sweep can run on, as data: one frozen BackendInfo per backend.
- `catalog`: The region catalog: `regions.yaml`, loaded and checked.
- `hosts`: The host contract every Terraform stack outputs.
"""

__all__ = [
    "backends",
    "catalog",
    "hosts",
]
