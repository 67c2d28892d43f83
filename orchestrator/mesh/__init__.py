"""The continuous mesh: one host per region kept up, every directed pair probed every
interval, 5-minute bins in the store, changes judged within 15 minutes, OpenMetrics.

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.mesh import matrix_of`),
never a module of this package (tests/check_layers.py).

- `collect`: `MeshStatus`, `mesh_status`, `run_mesh`.
- `cost`: `DEFAULT_ECHOES`, `DEFAULT_INTERVAL_S`, `HOURS_PER_MONTH`, `MeshPlan`, `mesh_plan`,
  `plan_mesh`.
- `openmetrics`: `metrics`.
- `run`: `MeshRequest`, `mesh_down`.
- `serve`: `serve_metrics`.
- `views`: `MeshMatrix`, `matrix_of`, `newest_bin`, `pair_bins`.
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.mesh.collect import MeshStatus, mesh_status, run_mesh
    from orchestrator.mesh.cost import (
        DEFAULT_ECHOES,
        DEFAULT_INTERVAL_S,
        HOURS_PER_MONTH,
        MeshPlan,
        mesh_plan,
        plan_mesh,
    )
    from orchestrator.mesh.lifecycle import MeshRequest
    from orchestrator.mesh.lifecycle import down as mesh_down
    from orchestrator.mesh.mesh_views import MeshMatrix, matrix_of, newest_bin, pair_bins
    from orchestrator.mesh.openmetrics import metrics
    from orchestrator.mesh.serve import serve_metrics

__all__ = [
    "DEFAULT_ECHOES",
    "DEFAULT_INTERVAL_S",
    "HOURS_PER_MONTH",
    "MeshMatrix",
    "MeshPlan",
    "MeshRequest",
    "MeshStatus",
    "matrix_of",
    "mesh_down",
    "mesh_plan",
    "mesh_status",
    "metrics",
    "newest_bin",
    "pair_bins",
    "plan_mesh",
    "run_mesh",
    "serve_metrics",
]

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "MeshStatus": ("orchestrator.mesh.collect", "MeshStatus"),
    "mesh_status": ("orchestrator.mesh.collect", "mesh_status"),
    "DEFAULT_ECHOES": ("orchestrator.mesh.cost", "DEFAULT_ECHOES"),
    "DEFAULT_INTERVAL_S": ("orchestrator.mesh.cost", "DEFAULT_INTERVAL_S"),
    "HOURS_PER_MONTH": ("orchestrator.mesh.cost", "HOURS_PER_MONTH"),
    "MeshPlan": ("orchestrator.mesh.cost", "MeshPlan"),
    "mesh_plan": ("orchestrator.mesh.cost", "mesh_plan"),
    "plan_mesh": ("orchestrator.mesh.cost", "plan_mesh"),
    "metrics": ("orchestrator.mesh.openmetrics", "metrics"),
    "MeshRequest": ("orchestrator.mesh.lifecycle", "MeshRequest"),
    "mesh_down": ("orchestrator.mesh.lifecycle", "down"),
    "run_mesh": ("orchestrator.mesh.collect", "run_mesh"),
    "serve_metrics": ("orchestrator.mesh.serve", "serve_metrics"),
    "MeshMatrix": ("orchestrator.mesh.mesh_views", "MeshMatrix"),
    "matrix_of": ("orchestrator.mesh.mesh_views", "matrix_of"),
    "newest_bin": ("orchestrator.mesh.mesh_views", "newest_bin"),
    "pair_bins": ("orchestrator.mesh.mesh_views", "pair_bins"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)
