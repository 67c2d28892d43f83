"""`interregion emulator up`: an emulated cloud brought up from what its options ask.

UpRequest             the regions (or a count spread over the globe), its id, where
                      its keys go, how long it lives, where the controller is
                      modelled, the seed and the perturbations
bring_up(request)     regions selected, keys made, a subnet reserved, the spec built
                      and brought up, known_hosts written -> UpResult (or, given a
                      spec file, bring_up_spec's)
bring_up_spec(path)   exactly the spec in a file (what infra/local's stack runs)
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from orchestrator.core import CATALOG, UserError, state_home
from orchestrator.drivers import ensure_sweep_keys, write_known_hosts
from orchestrator.emulator import perturb, runtime
from orchestrator.emulator.spec import EmulationSpec
from orchestrator.emulator.stack import build_spec
from orchestrator.emulator.state import DEFAULT_ID
from orchestrator.emulator.variation import DEFAULT_VARIATION
from orchestrator.model import Catalog, Host, Region, load_catalog
from orchestrator.netmodel import DEFAULT_MODEL, controller_rtt_ms, default_routes
from orchestrator.plan import SelectionSpec, select

DEFAULT_REGIONS = 8  # spread over the globe when no region is named


@dataclass(frozen=True)
class UpRequest:
    """What `emulator up` is asked for; `keys_dir` None: under the state home, by id;
    `seed` None: drawn at random; `controller` "": not modelled (not delayed); `spec_file`:
    exactly that spec instead (bring_up_spec), which holds the controller, seed and
    perturbations itself."""

    emulation_id: str = DEFAULT_ID
    regions: tuple[str, ...] = ()
    max_regions: int | None = None
    keys_dir: Path | None = None
    ttl_hours: float = 12.0
    controller: str = ""
    seed: int | None = None
    perturbations: tuple[perturb.Perturbation, ...] = ()
    spec_file: Path | None = None


@dataclass(frozen=True)
class UpResult:
    """An emulation that is up: its spec, hosts and how long bringing it up took; from a
    request also its client key, known_hosts and the controller's modelled region with
    its RTT to the farthest host (None without a controller)."""

    spec: EmulationSpec
    hosts: tuple[Host, ...]
    elapsed_s: float
    client_key: Path | None = None
    known_hosts: Path | None = None
    controller: Region | None = None
    controller_rtt_ms: float | None = None


def chosen_regions(request: UpRequest, catalog: Catalog) -> list[Region]:
    """The regions named, or `max_regions` (default 8 with none named) spread over the
    globe; the perturbations' hosts checked against them."""
    wanted = request.regions
    max_regions = request.max_regions or (None if wanted else DEFAULT_REGIONS)
    chosen = list(select(catalog, SelectionSpec(regions=wanted, max_regions=max_regions)).regions)
    perturb.check_hosts(request.perturbations, [r.key for r in chosen])
    return chosen


def controller_of(catalog: Catalog, key: str) -> Region | None:
    """The catalog region of a `--controller` key; None for ""."""
    if not key:
        return None
    try:
        return catalog.get(key)
    except UserError as exc:
        raise UserError(f"--controller: {exc}") from None


def bring_up(request: UpRequest, catalog: Catalog | None = None) -> UpResult:
    """Bring the emulation up (first removing leftovers of the same id), or the spec in
    `request.spec_file`. Needs root."""
    if request.spec_file is not None:
        if request.controller or request.seed is not None or request.perturbations:
            raise UserError(
                "--controller, --seed and --perturb go into the spec: leave them out with --spec"
            )
        return bring_up_spec(request.spec_file)
    runtime.require_root()
    catalog = catalog or load_catalog(CATALOG)
    where = controller_of(catalog, request.controller)
    chosen = chosen_regions(request, catalog)
    seed = secrets.randbelow(2**31) if request.seed is None else request.seed
    keys_dir = request.keys_dir or state_home() / "emulator" / request.emulation_id
    keys = ensure_sweep_keys(keys_dir)
    expires_at = time.time() + request.ttl_hours * 3600
    subnet = runtime.reserve_subnet(request.emulation_id, expires_at=expires_at)
    spec = build_spec(
        request.emulation_id,
        subnet,
        chosen,
        keys,
        DEFAULT_MODEL,
        expires_at=expires_at,
        controller=where,
        routes=default_routes(),
        seed=seed,
        variation=DEFAULT_VARIATION,
        perturbations=request.perturbations,
    )
    started = time.monotonic()
    hosts = runtime.up(spec)
    elapsed = time.monotonic() - started
    known_hosts = keys_dir / "known_hosts"
    write_known_hosts(known_hosts, hosts)
    return UpResult(
        spec=spec,
        hosts=tuple(hosts),
        elapsed_s=elapsed,
        client_key=keys.client_key,
        known_hosts=known_hosts,
        controller=where,
        controller_rtt_ms=controller_rtt_ms(where, chosen) if where is not None else None,
    )


def bring_up_spec(path: Path) -> UpResult:
    """Bring up exactly the spec in `path`. Needs root."""
    spec = EmulationSpec.load(path)
    started = time.monotonic()
    hosts = runtime.up(spec)
    return UpResult(spec=spec, hosts=tuple(hosts), elapsed_s=time.monotonic() - started)
