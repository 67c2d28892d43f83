"""CLI commands: plan."""

import click

COMMANDS: list[click.Command] = []
