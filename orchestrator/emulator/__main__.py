"""`python -m orchestrator.emulator up --spec FILE` / `down --id ID`.

What the infra/local Terraform stack's provisioners run: the same commands as
`interregion emulator`, with the same one-line errors.
"""

import sys

import click

from orchestrator.cli.emulator import emulator
from orchestrator.core.errors import UserError


def main() -> None:
    try:
        emulator.main(prog_name="python -m orchestrator.emulator", standalone_mode=False)
    except UserError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)


if __name__ == "__main__":
    main()
