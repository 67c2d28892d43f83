"""The emulated allowance counters a sweep's agents read, from its emulation's spec."""

from __future__ import annotations

from pathlib import Path

from orchestrator.emulator.net import hub_ns
from orchestrator.emulator.shaping import allowance_probes
from orchestrator.emulator.spec import EmulationSpec
from orchestrator.emulator.stack import SPEC_FILE


def spec_probes(workdir: Path) -> dict[str, dict[str, list[str]]]:
    """{host name: {counter: command}} of the emulation whose spec is in `workdir` (the
    local stack's working copy); {} when there is none or its hosts have no allowance."""
    path = Path(workdir) / SPEC_FILE
    if not path.exists():
        return {}
    spec = EmulationSpec.load(path)
    return allowance_probes(spec, hub_ns(spec.id))
