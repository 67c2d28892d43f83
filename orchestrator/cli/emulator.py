"""CLI commands: emulator."""

import click

COMMANDS: list[click.Command] = []
