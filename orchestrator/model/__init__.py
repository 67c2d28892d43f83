"""What a sweep is about: the region catalog (`regions.yaml`) and the host contract that every
Terraform stack outputs.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.model import backend_info`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.model.backend_facts import (
        BACKENDS,
        CLOUD_NAMES,
        CLOUD_SETUP_S,
        CLOUDS,
        LOCAL_MAX_CONCURRENT,
        BackendInfo,
        is_cloud,
        is_emulated,
    )
    from orchestrator.model.backend_facts import DEFAULT as DEFAULT_BACKEND
    from orchestrator.model.backend_facts import NAMES as BACKEND_NAMES
    from orchestrator.model.backend_facts import info as backend_info
    from orchestrator.model.catalog import (
        Catalog,
        MachineBandwidth,
        Region,
        RegionListing,
        load_catalog,
        region_from_dict,
        region_listing,
        region_order,
        region_to_dict,
    )
    from orchestrator.model.hosts import (
        IPERF3_PORTS,
        Host,
        hosts_from_output,
        iperf3_port,
        pins_from_file,
        placement,
    )

__all__ = [
    "BACKENDS",
    "BACKEND_NAMES",
    "CLOUDS",
    "CLOUD_NAMES",
    "CLOUD_SETUP_S",
    "DEFAULT_BACKEND",
    "IPERF3_PORTS",
    "LOCAL_MAX_CONCURRENT",
    "BackendInfo",
    "Catalog",
    "Host",
    "MachineBandwidth",
    "Region",
    "RegionListing",
    "backend_info",
    "hosts_from_output",
    "iperf3_port",
    "is_cloud",
    "is_emulated",
    "load_catalog",
    "pins_from_file",
    "placement",
    "region_from_dict",
    "region_listing",
    "region_order",
    "region_to_dict",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
