"""What tests and benches share and the installed package does not carry: synthetic
measurements and the run-to-run RTT noise model. It sits beside `orchestrator/`, not in
it (the wheel holds only `orchestrator*`); it imports the package, the package never
imports it. Tests find it through pytest's `pythonpath`, bench scripts put the
repository root on `sys.path`.

- `synthetic`: Synthetic measurements in the results schema, for benchmarks and tests.
- `noise`: A run-to-run RTT noise model calibrated on the public data (data/), for judging
  change detection on synthetic series (bench/history.py, tests).
"""

__all__ = [
    "noise",
    "synthetic",
]
