"""The network model behind the emulated cloud and the estimates: delay and bandwidth from
distance, per-pair route detours, run-to-run RTT noise, and synthetic measurements.

Public API: the modules below; other packages import only these names
(`from orchestrator.netmodel import model`), never a name starting with `_`.

- `model`: The network model of the emulated cloud: what delay and bandwidth a pair of emulated
  regions gets, calibrated on real AWS and GCP measurements.
- `noise`: A run-to-run RTT noise model calibrated on the public data (data/), for judging change
  detection on synthetic series (bench/history.py, tests).
- `routes`: Per-pair route detours: the RTT the public measurements give a pair of regions.
- `synthetic`: Synthetic measurements in the results schema, for benchmarks and tests.
"""

__all__ = [
    "model",
    "noise",
    "routes",
    "synthetic",
]
