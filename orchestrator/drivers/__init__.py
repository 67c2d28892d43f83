"""The tools a sweep drives and the process machinery around them: Terraform, Ansible, per-sweep
ssh keys, child processes, interrupts, the results-folder lock and progress output.

Public API: the modules below; other packages import only these names
(`from orchestrator.drivers import ansible`), never a name starting with `_`.

- `ansible`: Running ansible-playbook and reading its events as they happen.
- `interrupts`: Interrupts (Ctrl-C, SIGTERM, SIGHUP) as the library sees them.
- `keys`: Per-sweep SSH material: a client key and a host key, made with ssh-keygen.
- `lock`: One sweep at a time per results folder: a kernel lock (flock) on `results/.sweep.lock`.
- `processes`: Every process a sweep starts (ansible-playbook, terraform), so none outlives it.
- `progress`: Progress of a sweep's rounds: a live rich bar on a terminal, one log line per round
  otherwise (CI, pipes), so a log always shows how far a sweep got.
- `terraform`: The one Terraform driver, for the local, AWS and GCP stacks alike.
"""

__all__ = [
    "ansible",
    "interrupts",
    "keys",
    "lock",
    "processes",
    "progress",
    "terraform",
]
