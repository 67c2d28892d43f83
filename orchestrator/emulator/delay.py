"""WAN delay between hosts: delayd's table and the hub's iptables rules.

The kernel here has no netem, so the hub's FORWARD chain hands host-to-host
packets to `delayd` (infra/local/delayd) through NFQUEUE; delayd holds each
verdict until that (source, destination) pair's one-way delay has passed.
Controller traffic is accepted first and never queued, unless the spec places
the controller somewhere (`controller`): then it is queued like host traffic and
delayed by the modelled delay between that region and each host.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

from orchestrator.core import INFRA, UserError, cache_home
from orchestrator.emulator import perturb
from orchestrator.emulator.spec import CONTROLLER, EmulationSpec, PathSpec

DELAYD_SOURCE = INFRA / "local" / "delayd"  # delayd.c and its Makefile
BUILD_NEEDS = "gcc, make, pkg-config, libnetfilter-queue-dev and libmnl-dev"
QUEUE_FIRST = 0
QUEUE_COUNT = 2  # one per CPU of the 2-core reference machine
RT_PRIORITY = 50
# What delayd may hold over all queues. A sweep's tests are window-bound (131 kB
# each way, 12 at once: ~3 MB in flight), so this is only reached by a runaway;
# with GSO a held packet can be 64 kB, so a bound in packets alone is no bound.
MAX_HELD_BYTES = 256 << 20
READY_PREFIX = "delayd: ready"


def effective_paths(spec: EmulationSpec) -> tuple[PathSpec, ...]:
    """The host paths with the spec's perturbations added (delay summed, loss combined)."""
    added = perturb.effects(spec.perturbations, [h.name for h in spec.hosts])
    out = []
    for p in spec.paths:
        e = added.get((p.src, p.dst))
        if e is not None:
            p = replace(
                p,
                delay_us=p.delay_us + e.delay_us,
                loss_ppm=perturb.combined_loss_ppm(p.loss_ppm, e.loss_ppm),
            )
        out.append(p)
    return tuple(out)


def lossy_senders(spec: EmulationSpec) -> set[str]:
    """Hosts that send on a path with loss: their segmentation offload is turned off
    (net.segmentation_args), so delayd drops wire-sized packets, not 64 kB GSO bursts
    whose loss TCP would feel as one event for up to 45 segments."""
    return {p.src for p in effective_paths(spec) if p.loss_ppm and p.src != CONTROLLER}


def table(spec: EmulationSpec) -> str:
    """`src_ip dst_ip delay_us jitter_us loss_ppm`, one line per direction."""
    address = {h.name: h.address for h in spec.hosts}
    address[CONTROLLER] = spec.controller_address
    lines = [f"# emulation {spec.id}: one-way delay per direction (seed {spec.seed})"]
    if spec.controller:
        lines.append(f"# controller {spec.controller} at {spec.controller_address}")
    lines += [f"# perturbation {p.text}" for p in spec.perturbations]
    for p in (*effective_paths(spec), *spec.controller_paths):
        lines.append(f"{address[p.src]} {address[p.dst]} {p.delay_us} {p.jitter_us} {p.loss_ppm}")
    return "\n".join(lines) + "\n"


def iptables_rules(spec: EmulationSpec) -> str:
    """`iptables-restore` input for the hub (its own namespace, so its own tables)."""
    ctl = f"{spec.controller_address}/32"
    last = QUEUE_FIRST + QUEUE_COUNT - 1
    # A controller without a location is never queued: ssh stays fast even if
    # delayd is slow. With one, its packets take the same path as the hosts'.
    spare_controller = []
    if not spec.controller_paths:
        spare_controller = [f"-A FORWARD -s {ctl} -j ACCEPT", f"-A FORWARD -d {ctl} -j ACCEPT"]
    return "\n".join(
        [
            "*filter",
            ":INPUT ACCEPT [0:0]",
            ":FORWARD ACCEPT [0:0]",
            ":OUTPUT ACCEPT [0:0]",
            *spare_controller,
            # Without --queue-bypass: if delayd dies, tests fail loudly instead
            # of silently measuring an undelayed network.
            f"-A FORWARD -s {spec.subnet} -d {spec.subnet} "
            f"-j NFQUEUE --queue-balance {QUEUE_FIRST}:{last}",
            "COMMIT",
            "",
        ]
    )


def delayd_binary(source: Path = DELAYD_SOURCE, cache: Path | None = None) -> Path:
    """The delayd program, built on first use when there is none.

    A checkout has the one `make setup` built beside its source. An installed package
    ships the source only (a binary is built for one machine's libraries): it is built
    once into the cache folder ($XDG_CACHE_HOME/interregion/delayd-<hash of the source>),
    so a new version of the source gets a new build."""
    beside = source / "delayd"
    if os.access(beside, os.X_OK):
        return beside
    digest = hashlib.sha256()
    for name in ("delayd.c", "Makefile"):
        try:
            digest.update((source / name).read_bytes())
        except OSError as e:
            raise UserError(f"{source / name}: delayd's source is missing ({e.strerror})") from None
    folder = (cache or cache_home()) / f"delayd-{digest.hexdigest()[:16]}"
    built = folder / "delayd"
    if os.access(built, os.X_OK):
        return built
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".delayd-", dir=folder.parent))
    try:
        for name in ("delayd.c", "Makefile"):
            shutil.copyfile(source / name, work / name)
        try:
            done = subprocess.run(
                ["make", "-s", "-C", str(work), "delayd"],
                capture_output=True,
                text=True,
                timeout=300,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise UserError(f"delayd could not be built ({e}): it needs {BUILD_NEEDS}") from None
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise UserError(
                f"delayd could not be built ({said[-1] if said else done.returncode}): it "
                f"needs {BUILD_NEEDS} ('make setup' installs them)"
            )
        try:
            work.rename(folder)  # whole or not at all; another build may have won
        except OSError:
            if not os.access(built, os.X_OK):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return built


def command(table_file: str, pid_file: str) -> list[str]:
    return [
        str(delayd_binary()),
        "--table",
        table_file,
        "--queue-first",
        str(QUEUE_FIRST),
        "--queue-count",
        str(QUEUE_COUNT),
        "--rt-priority",
        str(RT_PRIORITY),
        "--max-held-bytes",
        str(MAX_HELD_BYTES),
        "--pidfile",
        pid_file,
    ]
