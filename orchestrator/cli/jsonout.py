"""`--json` of the commands that list things: one versioned envelope around the data.

    {"schema": "interregion/v1", "command": "schedule list",
     "generated_at": "2026-11-26T05:40:00Z", "data": ...}

`schema` changes (to `interregion/v2`) only when a field of `data` is removed or
changes meaning; fields may be added within a version. The envelope is defined here
once; `json_option` is the flag, `emit` prints it (docs/development.md); `json_flag(help)` is
the other commands' `--json`.

`echo_listing` is those commands' one choice between the envelope and the text lines;
`echo_result` is the other commands' one choice between a result's JSON (its `to_json`,
without the envelope) and its text lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar

import click

from orchestrator.core import iso, utc_now

SCHEMA = "interregion/v1"
F = TypeVar("F", bound=Callable[..., Any])


def json_flag(help: str) -> Callable[[F], F]:
    """`--json` (as `as_json`), `help` saying what it prints (echo_result: the result's own
    JSON)."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def json_option(f: F) -> F:
    """`--json` (as `as_json`): print the answer as the versioned JSON envelope."""
    return json_flag(f"Print JSON in the {SCHEMA} envelope.")(f)


def envelope(command: str, data: Any, now: datetime | None = None) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "command": command,
        "generated_at": iso(now or utc_now()),
        "data": data,
    }


def emit(data: Any) -> None:
    """Print `data` in the envelope, named after the running command (`regions sync`)."""
    ctx = click.get_current_context()
    command = " ".join(ctx.command_path.split()[1:])  # without the program's own name
    click.echo(json.dumps(envelope(command, data), indent=2, default=str))


def echo_result(found: Any, as_json: bool, lines: Callable[[Any], Iterable[str]],
                indent: int = 1) -> None:  # fmt: skip
    """Print `found.to_json()` with `as_json`, else the lines `lines(found)` renders."""
    click.echo(json.dumps(found.to_json(), indent=indent) if as_json else "\n".join(lines(found)))


def echo_listing(data: Any, as_json: bool, lines: Iterable[str]) -> None:
    """Print `data` in the envelope with `as_json` (emit), else the text `lines`."""
    if as_json:
        emit(data)
    else:
        click.echo("\n".join(lines))
