"""Publishing: a built static site copied to a folder, S3 or Google Cloud Storage, only what
changed, the root index last (`interregion publish`, a schedule's `publish:` key).

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.publish import parse_target`), never a module of this package
(tests/check_layers.py).
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
