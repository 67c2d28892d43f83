"""The names of the selection and test-parameter options, shared by the CLI
(`cli/options.py`) and the profiles file (`profiles.py`): a profile's keys are the
same options, spelt as the CLI's parameter names. A module of its own, so that neither
imports the other (profiles -> cli -> schedule -> profiles would be a cycle).

Also the defaults of a sweep that its commands' help shows: constants alone here, so
that `--help` loads none of the planner or the sweep machinery."""

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
DEFAULT_BUDGET_USD = 5.0
# A sweep past either asks first, whatever it costs: a local sweep is $0 and never
# reached the budget's question, and a bare `interregion sweep` starts 77 hosts.
BIG_HOSTS = 16
BIG_MINUTES = 10
# prepare's SSH sessions at once: each fork costs the controller a process, an ssh
# client and its share of two cores; beyond this, more forks were slower (bench/sweep.py)
PREPARE_FORKS = 24
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
