"""A sweep: its record (`sweep.json`) and its stages, provision, prepare, measure (rounds, the
ping phase and the playbook's event stream), collect, teardown and report, the runner that
chains them, and the sweeps a crash abandoned.

Public API: the modules below; other packages import only these names
(`from orchestrator.sweep import abandoned`), never a name starting with `_`.

- `abandoned`: Sweeps whose process died mid-run (kill -9, a reboot): found and torn down.
- `backends`: The backend seam: what a sweep does differently on the emulated cloud and on the
  clouds.
- `events`: The measure playbook's event stream, turned into raw files and rows round by round.
- `hostcheck`: Checks of the prepared hosts against the test parameters, before any test runs.
- `inventory`: The Ansible inventory of a sweep, generated from the host contract.
- `launch`: One way to start a sweep, for `sweep`, `study tcp` and the scheduled tick alike.
- `measure`: The measure stage: the planned tests, in exclusive rounds, through one playbook run.
- `pingphase`: The ping phase: every host probes all its peers at once, as one round of its own.
- `provision`: Backend -> the Terraform stack that makes its hosts, and that stack's variables.
- `record`: A sweep's record: its results folder and sweep.json, made at plan time.
- `restore`: Putting back the TCP settings of tuned tests (the TCP study's tuned variant, a sweep's
  capacity measure): the agent saves what it found before a tuned test and restores it after
  (playbooks/files/ir_agent.py `--tune`/`--restore`); a restore play over every host follows the
  rounds, also after an interrupt or an error, for a round cut short.
- `runner`: A whole sweep: provision -> prepare -> measure -> collect -> teardown -> report.
- `sentinels`: Sentinel pairs in the measure stage, and their late results (`sentinels.csv`).
- `stages`: The stages around measuring: provision, prepare, collect, teardown, report.
"""

__all__ = [
    "abandoned",
    "backends",
    "events",
    "hostcheck",
    "inventory",
    "launch",
    "measure",
    "pingphase",
    "provision",
    "record",
    "restore",
    "runner",
    "sentinels",
    "stages",
]
