"""The real clouds: AWS and GCP.

Terraform (infra/aws, infra/gcp, infra/cloud) makes the hosts; the SDK code
here does what Terraform is not for: finding the regions an account can use,
checking credentials and quotas before anything is spent (preflight), and
reaping what a crashed sweep left behind (reap). `stacks` turns a sweep into
the variables of those stacks.

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.clouds import check_selection_on_clouds`),
never a module of this package (tests/check_layers.py).

- `aws`: `AwsApi`.
- `gcp`: `GcpApi`.
- `launch`: `prepare_clouds`.
- `options`: `CloudFlags`, `CloudOptions`, `NETWORK_TIERS`, `cloud_options_from`,
  `require_sdks`.
- `preflight`: `PreflightResult`, `check_selection_on_clouds`.
- `reap`: `ReapReport`, `leftover_warnings`, `reap_clouds`.
- `sync`: `SyncReport`, `sync_catalog`.
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

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "AwsApi": ("orchestrator.clouds.aws", "AwsApi"),
    "GcpApi": ("orchestrator.clouds.gcp", "GcpApi"),
    "prepare_clouds": ("orchestrator.clouds.stack_setup", "prepare"),
    "CloudFlags": ("orchestrator.clouds.cloud_flags", "CloudFlags"),
    "CloudOptions": ("orchestrator.clouds.cloud_flags", "CloudOptions"),
    "NETWORK_TIERS": ("orchestrator.clouds.cloud_flags", "NETWORK_TIERS"),
    "cloud_options_from": ("orchestrator.clouds.cloud_flags", "cloud_options_from"),
    "require_sdks": ("orchestrator.clouds.cloud_flags", "require_sdks"),
    "PreflightResult": ("orchestrator.clouds.preflight", "PreflightResult"),
    "check_selection_on_clouds": ("orchestrator.clouds.preflight", "check_selection_on_clouds"),
    "ReapReport": ("orchestrator.clouds.reap", "ReapReport"),
    "leftover_warnings": ("orchestrator.clouds.reap", "leftover_warnings"),
    "reap_clouds": ("orchestrator.clouds.reap", "reap_clouds"),
    "SyncReport": ("orchestrator.clouds.sync", "SyncReport"),
    "sync_catalog": ("orchestrator.clouds.sync", "sync_catalog"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)
