"""CLI commands: `interregion emulator up/perturb/down/status/reap` (the emulated cloud), also
`python -m orchestrator.emulator`, which the infra/local stack's provisioners call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from orchestrator import emulator as emu
from orchestrator import text
from orchestrator.cli import options as opt
from orchestrator.emulator import DEFAULT_ID

_ID = click.option("--id", "emulation_id", default=DEFAULT_ID, show_default=True,
                   help="Emulation id.")  # fmt: skip


@opt.examples("interregion emulator up --max-regions 8", "interregion emulator down --id local")
@click.group("emulator")
def emulator() -> None:
    """The emulated cloud: each region a network namespace on this machine.

    Needs root (network namespaces, iptables). How it is built: docs/emulator.md.
    """


@opt.examples(
    "interregion emulator up --regions aws:us-east-1,gcp:europe-west1,aws:ap-southeast-2",
    "interregion emulator up --regions aws:us-east-1,gcp:us-east4,aws:ap-southeast-2 \\\n"
    "  --id demo --controller aws:us-east-1",
    "interregion emulator up --regions aws:us-east-1,gcp:europe-west1 --seed 7 \\\n"
    "  --perturb aws:us-east-1/gcp:europe-west1,delay_ms=10",
)
@emulator.command("up")
@click.option("--regions", default="", help="Comma-separated regions (cloud:id) to emulate.")
@click.option("--max-regions", type=click.IntRange(2, 240), help="Spread N regions over the globe.")
@_ID
@click.option("--spec", "spec_file", type=opt.UserPath(dir_okay=False),
              help="Bring up exactly this spec file (what the infra/local stack runs).",
              )  # fmt: skip
@click.option("--keys-dir", type=opt.UserPath(file_okay=False),
              help="Where the SSH keys and known_hosts go "
              "[default: $XDG_STATE_HOME/interregion/emulator/<id>, ~/.local/state if unset].",
              )  # fmt: skip
@click.option("--ttl-hours", default=12.0, show_default=True,
              help="After this, reap may remove it.")  # fmt: skip
@click.option("--controller", metavar="REGION", default="",
              help="Region (cloud:id) the controller is modelled in: its traffic to each host "
              "gets the model's delay. Default: not delayed.")  # fmt: skip
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Seed of the run-to-run variation (per-pair delay changes, loss episodes). "
              "Default: drawn at random and printed.")  # fmt: skip
@opt.perturb_options
def up_command(regions: str, perturb: tuple[str, ...], perturb_file: Path | None,
               **kwargs: Any) -> None:  # fmt: skip
    """Bring an emulated cloud up (first removing leftovers of the same id). Needs root."""
    listed = tuple(r.strip() for r in regions.split(",") if r.strip())
    request = emu.UpRequest(regions=listed, perturbations=emu.gather(perturb, perturb_file),
                            **kwargs)  # fmt: skip
    click.echo("\n".join(text.up_lines(emu.bring_up(request))))


@opt.examples(
    "interregion emulator perturb --id demo --perturb aws:us-east-1/gcp:us-east4,delay_ms=10",
    "interregion emulator perturb --id demo --perturb aws:ap-southeast-2,loss_pct=2",
    "interregion emulator perturb --id demo",
)
@emulator.command("perturb")
@_ID
@opt.perturb_options
def perturb_command(emulation_id: str, perturb: tuple[str, ...], perturb_file: Path | None) -> None:
    """Replace a running emulation's perturbations; with none given, remove them all.

    Between two sweeps on a kept-up emulation this is how a route changes. Needs root.
    """
    spec = emu.set_perturbations(emulation_id, emu.gather(perturb, perturb_file))
    click.echo("\n".join(text.perturbed_lines(spec)))


@opt.examples("interregion emulator down --id local")
@emulator.command("down")
@click.option("--id", "emulation_id", required=True, help="Emulation id (see 'status').")
def down_command(emulation_id: str) -> None:
    """Tear an emulation down; does nothing if it is not there. Needs root."""
    click.echo(text.down_line(emulation_id, emu.down(emulation_id)))


@opt.examples("interregion emulator status", "interregion emulator status --json")
@emulator.command("status")
@opt.json_option
def status_command(as_json: bool) -> None:
    """List the emulations on this machine and whether their programs run."""
    rows = emu.status()
    opt.echo_listing([s.to_json() for s in rows], as_json, text.emulator_status_lines(rows))


@opt.examples("interregion emulator reap")
@emulator.command("reap")
def reap_command() -> None:
    """Remove what crashed or expired runs left: ir-* namespaces, links, processes, state.

    Needs root; when an emulation is reaped: docs/emulator.md.
    """
    click.echo("\n".join(text.reaped_lines(emu.reap())))


COMMANDS: list[click.Command] = [emulator]
