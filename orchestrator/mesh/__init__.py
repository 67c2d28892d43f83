"""The continuous mesh: one host per region kept up, every directed pair probed every
interval, 5-minute bins in the store, changes judged within 15 minutes, OpenMetrics.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.mesh import matrix_of`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.mesh.collect import MeshStatus, mesh_status, run_mesh
    from orchestrator.mesh.cost import HOURS_PER_MONTH, MeshPlan, mesh_plan, plan_mesh
    from orchestrator.mesh.defaults import DEFAULT_ECHOES, DEFAULT_INTERVAL_S
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


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
