"""What `mesh up` probes by default and `plan --mesh` prices: one place for both, and a module
of constants alone, so that their `--help` loads none of the mesh machinery."""

DEFAULT_INTERVAL_S = 60
DEFAULT_ECHOES = 5
