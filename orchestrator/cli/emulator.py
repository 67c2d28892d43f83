"""CLI commands: `interregion emulator up/down/status/reap` (the emulated cloud).

`python -m orchestrator.emulator` runs the same group: it is what the
`infra/local` Terraform stack's provisioners call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from orchestrator import emulator as emu
from orchestrator.cli.jsonout import emit, json_option
from orchestrator.cli.pathopt import UserPath
from orchestrator.core.log import counted
from orchestrator.core.times import iso_of_epoch
from orchestrator.emulator import perturb as perturbing

DEFAULT_ID = "local"

F = TypeVar("F", bound=Callable[..., Any])


def perturb_options(f: F) -> F:
    """--perturb (repeatable) and --perturb-file: changes set on purpose (emulator.perturb)."""
    f = click.option(
        "--perturb-file",
        type=UserPath(dir_okay=False),
        default=None,
        help="A YAML file of perturbations (a list of target plus delay_ms, loss_pct, rate_mbit).",
    )(f)
    return click.option(
        "--perturb",
        multiple=True,
        metavar="TARGET,KEY=VALUE",
        help="A change on the emulated network: TARGET is A/B (both ways), 'A>B' or a host A; "
        "KEY is delay_ms (extra one-way), loss_pct or rate_mbit. Repeatable. "
        "E.g. aws:us-east-1/gcp:europe-west1,delay_ms=10.",
    )(f)


def perturbations_from_options(
    texts: Sequence[str], file: Path | None
) -> tuple[perturbing.Perturbation, ...]:
    found = perturbing.load_file(file) if file is not None else ()
    return (*found, *(perturbing.parse(t) for t in texts))


def _utc(epoch: float) -> str:
    if not epoch:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M")


@click.group("emulator")
def emulator() -> None:
    """The emulated cloud: each region a network namespace on this machine.

    Hosts get addresses in 198.18.0.0/15, their own sshd (key-only, root), a
    rate cap, TCP buffers and per-pair WAN delays from the network model.
    Needs root (network namespaces, iptables).

    \b
    Example:
      interregion emulator up --max-regions 8
      interregion emulator down --id local
    """


@emulator.command("up")
@click.option("--regions", default="", help="Comma-separated regions (cloud:id) to emulate.")
@click.option("--max-regions", type=click.IntRange(2, 240), help="Spread N regions over the globe.")
@click.option("--id", "emulation_id", default=DEFAULT_ID, show_default=True, help="Emulation id.")
@click.option(
    "--spec",
    "spec_file",
    type=UserPath(dir_okay=False),
    help="Bring up exactly this spec file (what the infra/local stack runs).",
)
@click.option(
    "--keys-dir",
    type=UserPath(file_okay=False),
    help="Where the SSH keys and known_hosts go "
    "[default: $XDG_STATE_HOME/interregion/emulator/<id>, ~/.local/state if unset].",
)
@click.option(
    "--ttl-hours", default=12.0, show_default=True, help="After this, reap may remove it."
)
@click.option(
    "--controller",
    metavar="REGION",
    default="",
    help="Region (cloud:id) the controller is modelled in: its traffic to each host gets "
    "the model's delay. Default: not delayed.",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the run-to-run variation (per-pair delay changes, loss episodes). "
    "Default: drawn at random and printed.",
)
@perturb_options
def up_command(
    regions: str,
    max_regions: int | None,
    emulation_id: str,
    spec_file: Path | None,
    keys_dir: Path | None,
    ttl_hours: float,
    controller: str,
    seed: int | None,
    perturb: tuple[str, ...],
    perturb_file: Path | None,
) -> None:
    """Bring an emulated cloud up (first removing leftovers of the same id). Needs root.

    \b
    Example:
      interregion emulator up --regions aws:us-east-1,gcp:europe-west1,aws:ap-southeast-2
      interregion emulator up --regions aws:us-east-1,gcp:us-east4,aws:ap-southeast-2 \\
        --id demo --controller aws:us-east-1
      interregion emulator up --regions aws:us-east-1,gcp:europe-west1 --seed 7 \\
        --perturb aws:us-east-1/gcp:europe-west1,delay_ms=10
    """
    if spec_file is not None:
        if controller or seed is not None or perturb or perturb_file:
            raise click.UsageError(
                "--controller, --seed and --perturb go into the spec: leave them out with --spec"
            )
        done = emu.bring_up_spec(spec_file)
        click.echo(
            f"emulation {done.spec.id} up: {counted(len(done.hosts), 'host')} in "
            f"{done.spec.subnet} ({done.elapsed_s:.1f} s)"
        )
        return
    request = emu.UpRequest(
        emulation_id=emulation_id,
        regions=tuple(r.strip() for r in regions.split(",") if r.strip()),
        max_regions=max_regions,
        keys_dir=keys_dir,
        ttl_hours=ttl_hours,
        controller=controller,
        seed=seed,
        perturbations=perturbations_from_options(perturb, perturb_file),
    )
    done = emu.bring_up(request)
    click.echo(f"emulation {emulation_id} up in {done.elapsed_s:.1f} s (seed {done.spec.seed}):")
    for host in done.hosts:
        click.echo(f"  {host.name:32} {host.address}")
    if done.controller is not None:
        click.echo(
            f"controller modelled in {done.controller.key}: RTT to the farthest host "
            f"{done.controller_rtt_ms:.1f} ms"
        )
    click.echo(
        f"log in: ssh -i {done.client_key} -o UserKnownHostsFile={done.known_hosts} "
        f"-o StrictHostKeyChecking=yes root@{done.hosts[0].address}"
    )
    for p in request.perturbations:
        click.echo(f"perturbation: {p.text}")
    click.echo(f"remove: interregion emulator down --id {emulation_id}")


@emulator.command("perturb")
@click.option("--id", "emulation_id", default=DEFAULT_ID, show_default=True, help="Emulation id.")
@perturb_options
def perturb_command(emulation_id: str, perturb: tuple[str, ...], perturb_file: Path | None) -> None:
    """Replace a running emulation's perturbations; with none given, remove them all.

    Between two sweeps on a kept-up emulation this is how a route changes: delays and
    losses are reloaded into delayd without losing a packet, rate caps rebuilt. Needs root.

    \b
    Example:
      interregion emulator perturb --id demo --perturb aws:us-east-1/gcp:us-east4,delay_ms=10
      interregion emulator perturb --id demo --perturb aws:ap-southeast-2,loss_pct=2
      interregion emulator perturb --id demo
    """
    perturbations = perturbations_from_options(perturb, perturb_file)
    spec = emu.set_perturbations(emulation_id, perturbations)
    if not spec.perturbations:
        click.echo(f"emulation {emulation_id}: no perturbations")
    for p in spec.perturbations:
        click.echo(f"emulation {emulation_id}: perturbation {p.text}")


@emulator.command("down")
@click.option("--id", "emulation_id", required=True, help="Emulation id (see 'status').")
def down_command(emulation_id: str) -> None:
    """Tear an emulation down; does nothing if it is not there. Needs root.

    \b
    Example:
      interregion emulator down --id local
    """
    removed = emu.down(emulation_id)
    if removed:
        click.echo(f"emulation {emulation_id} removed ({len(removed)} objects)")
    else:
        click.echo(f"emulation {emulation_id}: nothing to remove")


@emulator.command("status")
@json_option
def status_command(as_json: bool) -> None:
    """List the emulations on this machine and whether their programs run.

    \b
    Example:
      interregion emulator status
      interregion emulator status --json
    """
    rows = emu.status()
    if as_json:
        emit([{**asdict(s), "expires_utc": iso_of_epoch(s.expires_at)} for s in rows])
        return
    if not rows:
        click.echo("no emulations")
        return
    click.echo(
        f"{'id':10} {'phase':9} {'subnet':16} {'hosts':>5} {'sshd':>5} "
        f"{'delayd':7} {'owner':>7} {'expires (UTC)':16} stale"
    )
    for s in rows:
        delayd = "-" if s.delayd_running is None else ("up" if s.delayd_running else "DOWN")
        click.echo(
            f"{s.id:10} {s.phase:9} {s.subnet:16} {s.hosts:5} {s.sshd_running:5} "
            f"{delayd:7} {s.owner_pid or '-':>7} {_utc(s.expires_at):16} "
            f"{'yes' if s.stale else 'no'}"
        )


@emulator.command("reap")
def reap_command() -> None:
    """Remove what crashed or expired runs left: ir-* namespaces, links, processes, state.

    An emulation is reaped when the process that owns it has ended or, if it
    has no owner (made through Terraform or 'emulator up'), once it expired. Needs root.

    \b
    Example:
      interregion emulator reap
    """
    removed = emu.reap()
    for item in removed:
        click.echo(f"removed {item}")
    click.echo(f"{len(removed)} objects removed")


COMMANDS: list[click.Command] = [emulator]
