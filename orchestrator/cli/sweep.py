"""CLI commands: sweep."""

import click

COMMANDS: list[click.Command] = []
