"""The one type of every path option and argument: absolute once, at the CLI edge.

A relative path is made absolute against the folder the command was started in,
before anything is created, so nothing downstream (Terraform's provisioners run in
another folder, Ansible, the timers) ever sees a relative one. A control character
(a newline above all) is refused: written into a unit file, an inventory or a cron
line it would start a new directive.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from orchestrator.results import control_character_problem


class UserPath(click.Path):
    """click.Path that returns an absolute pathlib.Path and refuses control characters."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("path_type", Path)
        super().__init__(**kwargs)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = os.fsdecode(value) if isinstance(value, str | bytes | os.PathLike) else value
        if isinstance(text, str):
            problem = control_character_problem(text)
            if problem:
                self.fail(f"{text!r} {problem}", param, ctx)
        checked = super().convert(value, param, ctx)
        return Path(os.path.abspath(os.fsdecode(checked)))


def folder_or_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A callback for options that take a folder or a bucket URL (`publish --to`): a
    folder is made absolute like every other path; a URL is left as it is."""
    if value is None or "://" in value or not value.strip():
        return value  # an empty value is the command's own one-line error
    problem = control_character_problem(value)
    if problem:
        raise click.BadParameter(f"{value!r} {problem}", ctx, param)
    return os.path.abspath(value)
