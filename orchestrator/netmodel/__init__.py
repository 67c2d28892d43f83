"""The network model behind the emulated cloud and the estimates: delay and bandwidth from
distance, and per-pair route detours. (Synthetic rows and the run-to-run noise model, which
only tests and benches use, live in `testkit/` beside the package.)

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.netmodel import controller_rtt_ms`), never a module of this
package (tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.netmodel.model import (
        BURST_S,
        DEFAULT_MODEL,
        DOIT_TEST_SECONDS,
        REAL_CAP_BPS,
        REAL_WINDOW_BYTES,
        EmulatedType,
        NetModel,
        emulated_type,
        emulated_types,
        load_public_samples,
        one_way_delay_us,
        path_facts,
        rate_scale_tag,
        region_rtt_ms,
    )
    from orchestrator.netmodel.routes import (
        EMPTY,
        RouteTable,
        controller_rtt_ms,
        default_routes,
        pair_key,
        pair_rtt_ms,
    )

__all__ = [
    "BURST_S",
    "DEFAULT_MODEL",
    "DOIT_TEST_SECONDS",
    "EMPTY",
    "REAL_CAP_BPS",
    "REAL_WINDOW_BYTES",
    "EmulatedType",
    "NetModel",
    "RouteTable",
    "controller_rtt_ms",
    "default_routes",
    "emulated_type",
    "emulated_types",
    "load_public_samples",
    "one_way_delay_us",
    "pair_key",
    "pair_rtt_ms",
    "path_facts",
    "rate_scale_tag",
    "region_rtt_ms",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
