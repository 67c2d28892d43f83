"""Planning a sweep before anything is spent: which regions and pairs, in which rounds (no VM
in two tests at once), with what test parameters, how long and at what cost.

Public API: the modules below; other packages import only these names
(`from orchestrator.plan import allowance`), never a name starting with `_`.

- `allowance`: Host allowance against path: is a throughput figure the path's, or the VM's
  allowance?
- `option_names`: The names of the selection and test-parameter options, shared by the CLI
  (`cli/options.py`) and the profiles file (`profiles.py`): a profile's keys are the same options,
  spelt as the CLI's parameter names. A module of its own, so that neither imports the other
  (profiles -> cli -> schedule -> profiles would be a cycle).
- `options`: The options shared by plan, sweep, study and report, read into types: the selection
  (`selection_spec`), the test parameters (`params_spec`) and where and how concurrently a sweep
  runs (`RunOptions`).
- `ping_timing`: How long the ping phase takes: every host probes all its peers at once.
- `pricing`: List prices for the cost estimate: `infra/pricing.yaml`, loaded and checked.
- `ramp`: How long a throughput test must skip and measure: the slow-start ramp at a pair's idle
  RTT to the window it is expected to reach, then a measured interval after it.
- `rounds`: Rounds of tests in which no VM takes part twice.
- `selection`: Which regions and which directed pairs a sweep (or a report) covers.
- `spend`: What a sweep actually cost, from the bytes it moved, at list prices
  (orchestrator.plan.pricing).
- `sweep_plan`: A dry run: what a sweep would test, in which rounds, how long and at what cost.
- `tuning`: Host buffers sized for a path's bandwidth-delay product: what the TCP study's tuned
  variant and a sweep's capacity measure set on both hosts of a test (the agent's `tune`,
  playbooks/files/ir_agent.py), put back after the test.
"""

__all__ = [
    "allowance",
    "option_names",
    "options",
    "ping_timing",
    "pricing",
    "ramp",
    "rounds",
    "selection",
    "spend",
    "sweep_plan",
    "tuning",
]
