"""The continuous mesh: one host per region kept up, every directed pair probed every
interval, 5-minute bins in the store, changes judged within 15 minutes, OpenMetrics.

Public API, its modules (what the CLI and benches use): `run` (MeshRequest, create, up, down,
open_mesh, running: a mesh's life, on the sweep's stages), `collect` (collect: one pull
of every host into the store), `bins` (records -> samples -> 5-minute bins), `detect`
(the bins judged by the store's change detection, with the mesh's RULE), `views`
(host_status, matrix, pair_bins), `openmetrics` (render), `cost` (mesh_cost: `plan
--mesh`), `serve` (parse_bind, make_server: `metrics --serve`).
"""

__all__ = ["bins", "collect", "cost", "detect", "openmetrics", "run", "serve", "views"]
