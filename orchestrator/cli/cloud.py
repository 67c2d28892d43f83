"""CLI commands: cloud."""

import click

COMMANDS: list[click.Command] = []
