"""The real clouds: AWS and GCP.

Terraform (infra/aws, infra/gcp, infra/cloud) makes the hosts; the SDK code
here does what Terraform is not for: finding the regions an account can use,
checking credentials and quotas before anything is spent (preflight), and
reaping what a crashed sweep left behind (reap). `stacks` turns a sweep into
the variables of those stacks.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.clouds import check_selection_on_clouds`), never a module of
this package (tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.clouds.aws import AwsApi
    from orchestrator.clouds.cloud_flags import (
        NETWORK_TIERS,
        CloudFlags,
        CloudOptions,
        cloud_options_from,
        require_sdks,
    )
    from orchestrator.clouds.gcp import GcpApi
    from orchestrator.clouds.preflight import PreflightResult, check_selection_on_clouds
    from orchestrator.clouds.reap import ReapReport, leftover_warnings, reap_clouds
    from orchestrator.clouds.stack_setup import prepare as prepare_clouds
    from orchestrator.clouds.sync import SyncReport, sync_catalog

__all__ = [
    "NETWORK_TIERS",
    "AwsApi",
    "CloudFlags",
    "CloudOptions",
    "GcpApi",
    "PreflightResult",
    "ReapReport",
    "SyncReport",
    "check_selection_on_clouds",
    "cloud_options_from",
    "leftover_warnings",
    "prepare_clouds",
    "reap_clouds",
    "require_sdks",
    "sync_catalog",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
