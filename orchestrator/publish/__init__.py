"""Publishing: a built static site copied to a folder, S3 or Google Cloud Storage, only what
changed, the root index last (`interregion publish`, a schedule's `publish:` key).

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.publish import parse_target`),
never a module of this package (tests/check_layers.py).

- `upload`: `parse_target`, `publish_site`.
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.publish.upload import parse_target, publish_site

__all__ = [
    "parse_target",
    "publish_site",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
