"""CLI commands: report."""

import click

COMMANDS: list[click.Command] = []
