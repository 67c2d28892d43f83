"""`interregion advise`: how long a transfer between two regions takes and what wins the time
back, from the best figures available for the pair.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.advise import advise_transfer`), never a module of this
package (tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.advise.tcp_model import (
        WINDOW_EFFICIENCY,
        PathFacts,
        format_bytes,
        format_duration,
        format_rate,
        loss_limited_bps,
        loss_rate,
        sysctl_lines,
        window_limited_bps,
    )
    from orchestrator.advise.transfer import AdviseRequest, advise_transfer

__all__ = [
    "WINDOW_EFFICIENCY",
    "AdviseRequest",
    "PathFacts",
    "advise_transfer",
    "format_bytes",
    "format_duration",
    "format_rate",
    "loss_limited_bps",
    "loss_rate",
    "sysctl_lines",
    "window_limited_bps",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
