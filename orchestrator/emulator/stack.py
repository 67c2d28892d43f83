"""From selected regions to the `infra/local` stack's variables.

Everything the stack outputs is decided here, before `terraform apply`: the
emulation id, its /24 (reserved now, so concurrent runs never collide) and each
host's address. The per-pair delays go to a spec file the stack's provisioner
hands to `python -m orchestrator.emulator up`.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator.core import UserError
from orchestrator.drivers import SweepKeys
from orchestrator.emulator.delay import effective_paths
from orchestrator.emulator.perturb import Perturbation, combined_loss_ppm
from orchestrator.emulator.perturb import from_dict as perturbation_from_dict
from orchestrator.emulator.runtime import reserve_subnet
from orchestrator.emulator.spec import (
    CONTROLLER,
    SSH_PORT,
    SSH_USER,
    EmulationSpec,
    HostSpec,
    PathSpec,
    host_addresses,
)
from orchestrator.emulator.variation import (
    DEFAULT_VARIATION,
    NO_VARIATION,
    VariationParams,
    draw_pair,
    seed_for,
)
from orchestrator.model import Region
from orchestrator.netmodel import (
    DEFAULT_MODEL,
    EmulatedType,
    NetModel,
    RouteTable,
    default_routes,
    emulated_type,
    one_way_delay_us,
    pair_rtt_ms,
)
from orchestrator.netmodel import EMPTY as EMPTY_ROUTES

# RTT between two emulated hosts with a zero delay in delayd's table: veths,
# bridge, two HTB queues and one NFQUEUE round trip, measured by bench/emulator.py.
# It is taken off the modelled RTT so the measured RTT matches the model.
BASELINE_RTT_MS = 0.2

# An emulation made through Terraform outlives the command that made it; after
# this long without a `down`, `interregion emulator reap` may remove it.
DEFAULT_TTL_S = 12 * 3600.0

SPEC_FILE = "emulation.json"


def emulation_id_for(sweep_id: str) -> str:
    """A short id (namespace and link names are length-limited) for a sweep id."""
    plain = re.sub(r"[^a-z0-9]", "", sweep_id.lower())
    if plain == sweep_id and 0 < len(plain) <= 10:
        return plain
    digest = hashlib.sha256(sweep_id.encode()).hexdigest()[:6]
    return plain[:4] + digest


@dataclass(frozen=True)
class EmulationSettings:
    """What a sweep's record says about its emulation (`emulation` in sweep.json)."""

    seed: int
    perturbations: tuple[Perturbation, ...] = ()

    def to_record(self, regions: Sequence[str] = ()) -> dict[str, Any]:
        """The record; with the sweep's `regions`, also what is `injected` on purpose
        between them (injected_effects): what a report marks and leaves out of its fits."""
        doc: dict[str, Any] = {
            "seed": self.seed,
            "perturbations": [p.to_dict() for p in self.perturbations],
        }
        if regions:
            doc["injected"] = injected_effects(self.seed, regions, self.perturbations)
        return doc

    @classmethod
    def of_record(cls, doc: Mapping[str, Any] | None, sweep_id: str) -> EmulationSettings:
        """The settings in `doc`; without a seed there, the one derived from the sweep id."""
        doc = doc or {}
        seed = doc.get("seed")
        perturbations = tuple(
            perturbation_from_dict(p, f"sweep {sweep_id}: perturbation")
            for p in doc.get("perturbations") or ()
        )
        if seed is not None and not isinstance(seed, int):
            raise UserError(f"sweep {sweep_id}: emulation seed {seed!r} is not an integer")
        return cls(seed_for(sweep_id) if seed is None else seed, perturbations)


def injected_effects(
    seed: int,
    regions: Sequence[str],
    perturbations: Sequence[Perturbation] = (),
    variation: VariationParams = DEFAULT_VARIATION,
) -> list[dict[str, Any]]:
    """What an emulation of `regions` injects on purpose, as sweep.json keeps it: each
    pair's loss episode drawn from `seed` (`{"target": "A/B", "loss_pct": x, "cause":
    "loss episode"}`, emulator.variation) and each perturbation (its own fields, `"cause":
    "perturbation"`). The delay variation every pair gets is not listed: it is the
    run-to-run noise of a real path."""
    out: list[dict[str, Any]] = []
    keys = sorted(regions)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            loss = draw_pair(seed, a, b, variation).loss_pct
            if loss:
                out.append(
                    {"target": f"{a}/{b}", "loss_pct": round(loss, 4), "cause": "loss episode"}
                )
    out.extend({**p.to_dict(), "cause": "perturbation"} for p in perturbations)
    return out


def build_spec(
    emulation_id: str,
    subnet: str,
    regions: Sequence[Region],
    keys: SweepKeys,
    model: NetModel,
    owner_pid: int = 0,
    expires_at: float = 0.0,
    baseline_rtt_ms: float = BASELINE_RTT_MS,
    controller: Region | None = None,
    machine: EmulatedType | None = None,
    *,
    routes: RouteTable = EMPTY_ROUTES,
    seed: int = 0,
    variation: VariationParams = NO_VARIATION,
    perturbations: Sequence[Perturbation] = (),
) -> EmulationSpec:
    """The emulation of `regions` under `model`: one host each, delays for every direction.
    `machine`: the hosts' emulated machine type (default: the model's cap, no allowance).

    Each pair's base RTT is its measured median in `routes` where it has one, else the
    model's (orchestrator.netmodel.routes); host pairs then get the run-to-run `variation`
    drawn from `seed` (emulator.variation). `perturbations` are kept in the spec and
    applied when it comes up (emulator.perturb).

    With a `controller` region, traffic between the controller and each host is
    delayed as if the controller sat in that region (same routes, model and jitter,
    no variation); without one it is not delayed at all. Either way it is not
    rate-capped: it is small, and a saturated test must not stall the ssh that
    controls it.
    """
    addresses = host_addresses(subnet, len(regions))
    machine = machine or emulated_type(None, model)
    hosts = tuple(
        HostSpec(r.key, r.cloud, r.id, address, machine.name)
        for r, address in zip(regions, addresses, strict=True)
    )

    def path(a: Region, b: Region, src: str, dst: str, varied: bool) -> PathSpec:
        rtt_ms = pair_rtt_ms(a, b, model, routes)
        loss_ppm = model.loss_ppm
        if varied:
            draw = draw_pair(seed, a.key, b.key, variation)
            rtt_ms *= draw.delay_factor
            loss_ppm = combined_loss_ppm(loss_ppm, round(draw.loss_pct * 10_000.0))
        delay_us = one_way_delay_us(rtt_ms, baseline_rtt_ms)
        return PathSpec(src, dst, delay_us, model.jitter_us, loss_ppm)

    paths = [path(a, b, a.key, b.key, True) for a in regions for b in regions if a.key != b.key]
    controller_paths = []
    if controller is not None:
        for r in regions:
            controller_paths += [
                path(controller, r, CONTROLLER, r.key, False),
                path(r, controller, r.key, CONTROLLER, False),
            ]
    return EmulationSpec(
        id=emulation_id,
        subnet=subnet,
        hosts=hosts,
        client_pub=keys.client_pub,
        host_key=str(keys.host_key),
        host_pub=keys.host_pub,
        paths=tuple(paths),
        rate_mbit=model.rate_mbit,
        allowance_baseline_mbit=machine.baseline_mbit,
        allowance_bucket_bytes=machine.bucket_bytes,
        tcp_buffer_bytes=model.tcp_buffer_bytes,
        tcp_window_bytes=round(model.window_bytes),
        owner_pid=owner_pid,
        expires_at=expires_at,
        controller=controller.key if controller is not None else "",
        controller_paths=tuple(controller_paths),
        seed=seed,
        perturbations=tuple(perturbations),
    )


def expected_rtts_ms(
    spec: EmulationSpec, baseline_rtt_ms: float = BASELINE_RTT_MS
) -> dict[tuple[str, str], float]:
    """The RTT a ping between two hosts should measure in this emulation, per directed
    pair: both directions' delays (perturbations included) plus the undelayed baseline."""
    delays = {(p.src, p.dst): p.delay_us for p in effective_paths(spec)}
    return {(a, b): (d + delays[(b, a)]) / 1000.0 + baseline_rtt_ms for (a, b), d in delays.items()}


def sweep_spec(state_dir: Path) -> EmulationSpec:
    """The emulation spec a local sweep ran on (kept in its state/tf-local/)."""
    return EmulationSpec.load(Path(state_dir) / "tf-local" / SPEC_FILE)


def stack_variables(spec: EmulationSpec, spec_file: Path, python: str) -> dict[str, Any]:
    """infra/local's terraform.tfvars.json for a spec already written to `spec_file`."""
    text = Path(spec_file).read_text()
    return {
        "emulation_id": spec.id,
        "python": python,
        "spec_file": str(spec_file),
        "spec_sha256": hashlib.sha256(text.encode()).hexdigest(),
        "ssh_user": SSH_USER,
        "ssh_port": SSH_PORT,
        "controller": spec.controller,
        "hosts": {
            h.name: {
                "cloud": h.cloud,
                "region": h.region,
                "address": h.address,
                "machine_type": h.machine_type,
                "host_key": spec.host_pub,
            }
            for h in spec.hosts
        },
    }


def local_variables(
    sweep_id: str,
    regions: Sequence[Region],
    keys: SweepKeys,
    workdir: Path,
    model: NetModel | None = None,
    *,
    python: str = sys.executable,
    owner_pid: int = 0,
    ttl_s: float = DEFAULT_TTL_S,
    controller: Region | None = None,
    machine_type: str = "",
    settings: EmulationSettings | None = None,
) -> dict[str, Any]:
    """Reserve the sweep's subnet, write its spec under `workdir`, return the tfvars.

    `owner_pid`: a process whose end makes the emulation reapable (tests pass
    their own pid); 0 means the emulation lives until `down` or `ttl_s`.
    `controller`: the region the controller is modelled in (None: no delay).
    `machine_type`: an emulated machine type (netmodel.emulated_types; "": the default).
    `settings`: the seed and perturbations (None: the sweep id's seed, none).
    The public data's routes and the default variation always apply.
    """
    settings = settings or EmulationSettings.of_record(None, sweep_id)
    emulation_id = emulation_id_for(sweep_id)
    model = model or DEFAULT_MODEL
    machine = emulated_type(machine_type, model)
    expires_at = time.time() + ttl_s if not owner_pid else 0.0
    subnet = reserve_subnet(emulation_id, owner_pid=owner_pid, expires_at=expires_at)
    spec = build_spec(
        emulation_id,
        subnet,
        regions,
        keys,
        model,
        owner_pid,
        expires_at,
        controller=controller,
        machine=machine,
        routes=default_routes(),
        seed=settings.seed,
        variation=DEFAULT_VARIATION,
        perturbations=settings.perturbations,
    )
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    spec_file = workdir / SPEC_FILE
    # Rewriting the same content keeps the file's hash, so Terraform sees no change.
    previous = spec_file.read_text() if spec_file.exists() else None
    text = _stable_json(spec, previous)
    if text != previous:
        spec_file.write_text(text)
    return stack_variables(spec, spec_file, python)


def _stable_json(spec: EmulationSpec, previous: str | None) -> str:
    """The spec as JSON; the expiry of an otherwise identical earlier spec is kept,
    so re-running provisioning does not replace a running emulation."""
    if previous is not None:
        try:
            old = EmulationSpec.from_dict(json.loads(previous))
        except (UserError, ValueError):
            return spec.to_json()
        if old == replace(spec, expires_at=old.expires_at):
            return previous
    return spec.to_json()
