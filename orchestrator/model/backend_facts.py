"""The backends a sweep can run on, as data: one frozen BackendInfo per backend.

`local` is the emulated cloud on this machine; `aws` and `gcp` provision on one real
cloud each; `cloud` provisions on both at once. Code asks a backend's facts
(`info(name).emulated`, `.clouds`, `.default_concurrency`, `.setup_s`) and never
compares its name to a string: the behaviour that differs per backend lives in
orchestrator.sweep.backends, the one place that maps a name to an implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.core import UserError

CLOUDS = ("aws", "gcp")  # the clouds a region can be in
# Default --max-concurrent of a sweep on the emulated cloud. bench/emulator.py
# on the 2-core reference machine (shared, load ~3.5): single-stream 50 Mbit/s
# tests got their exact modelled throughput up to 16 at once, -4.6% at 24,
# -10% at 32 and -14% at 38 (an earlier run: -18% at 38), CPUs saturated from
# ~20; RTTs stayed within 0.25 ms throughout. 12 leaves the controller
# (Ansible, ssh) its share of the CPUs.
LOCAL_MAX_CONCURRENT = 12


@dataclass(frozen=True)
class BackendInfo:
    """What the rest of the pipeline needs to know of a backend."""

    name: str
    clouds: tuple[str, ...]  # the clouds whose regions it makes hosts in
    emulated: bool  # hosts are namespaces on this machine, results labelled emulated
    default_concurrency: int | None  # tests at once when --max-concurrent is not given
    setup_s: float  # provisioning, preparing and teardown, for the plan's estimate


BACKENDS: dict[str, BackendInfo] = {
    "local": BackendInfo("local", ("aws", "gcp"), True, LOCAL_MAX_CONCURRENT, 60.0),
    "aws": BackendInfo("aws", ("aws",), False, None, 600.0),
    "gcp": BackendInfo("gcp", ("gcp",), False, None, 600.0),
    "cloud": BackendInfo("cloud", ("aws", "gcp"), False, None, 600.0),
}
NAMES = tuple(BACKENDS)
DEFAULT = "local"
# Backends that provision on real clouds (each has a stack under infra/ of its name).
CLOUD_NAMES = tuple(name for name, b in BACKENDS.items() if not b.emulated)
# What an emulated sweep's set-up would take on the clouds, for pricing it as a cloud sweep.
CLOUD_SETUP_S = max(b.setup_s for b in BACKENDS.values() if not b.emulated)


def info(name: str) -> BackendInfo:
    """The backend called `name`; a one-line error naming the known ones otherwise."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise UserError(f"--backend '{name}': expected one of {', '.join(NAMES)}") from None


def is_emulated(name: str | None) -> bool:
    """Whether results from backend `name` are emulated (unknown or missing: no)."""
    backend = BACKENDS.get(name or "")
    return backend is not None and backend.emulated


def is_cloud(name: str | None) -> bool:
    """Whether backend `name` provisions on a real cloud (unknown or missing: no)."""
    backend = BACKENDS.get(name or "")
    return backend is not None and not backend.emulated


def single_cloud(name: str | None) -> bool:
    """Whether backend `name` is one real cloud's own (`aws`, `gcp`): a host's backend."""
    backend = BACKENDS.get(name or "")
    return backend is not None and not backend.emulated and backend.clouds == (name,)
