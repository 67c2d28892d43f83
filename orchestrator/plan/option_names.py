"""The names of the selection and test-parameter options, shared by the CLI
(`cli/options.py`) and the profiles file (`profiles.py`): a profile's keys are the
same options, spelt as the CLI's parameter names. A module of its own, so that neither
imports the other (profiles -> cli -> schedule -> profiles would be a cycle)."""

from __future__ import annotations

SELECTION_OPTIONS = (
    "clouds",
    "regions",
    "exclude",
    "no_opt_in",
    "cloud_pair",
    "min_km",
    "max_km",
    "pairs",
    "max_regions",
    "opt_in",
)
TEST_PARAMS_OPTIONS = (
    "pings",
    "ping_interval",
    "duration",
    "omit",
    "streams",
    "window",
    "congestion",
    "tests",
    "measures",
)
