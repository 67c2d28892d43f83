"""The network model behind the emulated cloud and the estimates: delay and bandwidth from
distance, and per-pair route detours. (Synthetic rows and the run-to-run noise model, which
only tests and benches use, live in `testkit/` beside the package.)

Public API: the modules below; other packages import only these names
(`from orchestrator.netmodel import model`), never a name starting with `_`.

- `model`: The network model of the emulated cloud: what delay and bandwidth a pair of emulated
  regions gets, calibrated on real AWS and GCP measurements.
- `routes`: Per-pair route detours: the RTT the public measurements give a pair of regions.
"""

__all__ = [
    "model",
    "routes",
]
