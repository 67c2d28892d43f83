"""The `interregion` console script: option parsing only.

Each command module exposes `COMMANDS`, a list of click commands, and is imported when
one of them is first asked for (COMMAND_MODULES): a command pays for its own imports only.
Every command takes `--verbose` and `--quiet`; its errors are one line and an exit code
(docs/development.md, command-line conventions).

Public API: `main()`, the console script (and `python -m orchestrator`). Only the
entry points import this package (tests/check_layers.py).
"""

from __future__ import annotations

import csv
import importlib
import signal
import sys
import traceback
from collections.abc import Iterable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any, NoReturn

import click
from click.core import ParameterSource

from orchestrator import __version__
from orchestrator.core import (
    BAD_INPUT,
    DOCS,
    NORMAL,
    QUIET,
    RUN_FAILED,
    VERBOSE,
    UserError,
    ceiling,
    configure_log,
    is_verbose,
)
from orchestrator.drivers import (
    deferred,
    interrupt_requested,
    on_signal,
    reset_interrupts,
    stop_all,
)

__all__ = ["main"]


def _usage_error(e: click.UsageError) -> NoReturn:
    """An option click itself refuses: one line too, naming the command's help."""
    if isinstance(e, click.exceptions.NoArgsIsHelpError):  # a bare group: its help, as is
        e.show()
        sys.exit(e.exit_code)
    where = e.ctx.command_path if e.ctx else "interregion"
    said = " ".join(e.format_message().split())
    _exit(f"error: {said} (see '{where} --help')", BAD_INPUT)


def _exit(line: str, code: int) -> NoReturn:
    click.echo(line, err=True)
    sys.exit(code)


def _verbosity(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        configure_log(VERBOSE if param.name == "verbose" else QUIET)


def _verbosity_options() -> list[click.Option]:
    """`--verbose` and `--quiet`, added to the group and to every command under it."""
    return [click.Option(opts, help=text, is_flag=True, expose_value=False, is_eager=True,
                         callback=_verbosity)
            for opts, text in ((["-v", "--verbose"], "Log debugging lines too."),
                               (["-q", "--quiet"], "Log warnings only."))]  # fmt: skip


def bound_integers(params: Iterable[Any]) -> None:
    """Every integer click parameter in `params` without an upper bound given one
    (core.grammar.ceiling): the CLI applies it to every command, as a profile's keys
    are bounded where they are read."""
    for param in params:
        kind = param.type
        if isinstance(kind, click.IntRange) and kind.max is None:
            param.type = click.IntRange(kind.min, ceiling(param.name or ""),
                                        min_open=kind.min_open)  # fmt: skip
        elif isinstance(kind, click.types.IntParamType) and not isinstance(kind, click.IntRange):
            param.type = click.IntRange(None, ceiling(param.name or ""))


def _add_conventions(command: click.Command) -> None:
    """--verbose and --quiet on `command` and every command under it; an upper bound on
    every integer."""
    command.params.extend(_verbosity_options())
    bound_integers(command.params)
    group = command if isinstance(command, click.Group) else click.Group()
    for sub in group.commands.values():
        _add_conventions(sub)
        _take_from_group(group, sub)


_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.PROMPT)


def _take_from_group(group: click.Group, sub: click.Command) -> None:
    """An option a group and its subcommand both have applies to the subcommand when it
    is given to the group alone: `history --results X ingest --all` ingests X."""
    shared = {p.name for p in group.params if p.expose_value}
    for param in [p for p in sub.params if p.expose_value and p.name in shared]:
        param.callback = _group_value(param.callback)


def _group_value(own: Any) -> Any:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        parent, name = ctx.parent, param.name or ""
        to_group = parent is not None and parent.get_parameter_source(name) in _GIVEN
        if parent is not None and to_group and ctx.get_parameter_source(name) not in _GIVEN:
            return parent.params[name]  # converted and checked as the group's option
        return own(ctx, param, value) if own is not None else value

    return callback


# Each command's module under orchestrator.cli (its COMMANDS); tests/unit/cli/test_startup.py
# holds this to the modules.
COMMAND_MODULES = {
    name: module
    for module, names in (
        ("plan", "plan regions preflight reap"), ("emulator", "emulator"),
        ("sweep", "sweep provision prepare measure collect teardown mesh metrics"),
        ("report", "report site publish"), ("history", "history matrix changes advise"),
        ("schedule", "schedule"), ("study", "study demo"),
    )
    for name in names.split()
}  # fmt: skip


class _Commands(MutableMapping[str, click.Command]):
    """The group's commands by name: a command's module is imported (and its commands given
    the conventions) when one of its commands is first looked up, every module when the
    commands are listed (--help). A command added by add_command is kept as it is."""

    def __init__(self) -> None:
        self._found: dict[str, click.Command] = {}
        self._loaded: set[str] = set()

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._found and name in COMMAND_MODULES:
            self._load(COMMAND_MODULES[name])
        return self._found[name]

    def __iter__(self) -> Iterator[str]:
        for module in sorted(set(COMMAND_MODULES.values())):
            self._load(module)
        return iter(self._found)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._found[name] = command

    def __delitem__(self, name: str) -> None:
        del self._found[name]

    def _load(self, module: str) -> None:
        if module not in self._loaded:
            self._loaded.add(module)
            for command in importlib.import_module(f"orchestrator.cli.{module}").COMMANDS:
                _add_conventions(command)
                self._found[command.name] = command


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP (a closed SSH session) stop the command inside alike
    (drivers.on_signal); on the way out every child process that still runs is ended, so
    the command never exits before them. The only place that installs signal handlers."""
    reset_interrupts()
    stops = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.signal(s, lambda signum, _frame: on_signal(signum)) for s in stops}
    try:
        yield
    finally:
        with deferred():
            stop_all()
        for s, handler in old.items():
            signal.signal(s, handler)


class _Main(click.Group):
    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None,
                     **extra: Any) -> click.Context:  # fmt: skip
        if parent is None:
            configure_log(NORMAL)  # each run starts from the default; the options change it
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:  # the top level's own options
            _usage_error(e)

    def invoke(self, ctx: click.Context) -> object:
        try:
            with stop_on_signals():
                return super().invoke(ctx)
        except Exception as e:
            # an interrupt is 130 wherever it lands: a library that turns it into its own
            # error (DuckDB: RuntimeError 'Query interrupted') or a failed write included
            if interrupt_requested():
                _exit("interrupted", 130)
            self._fail(e)
        except KeyboardInterrupt:
            _exit("interrupted", 130)

    @staticmethod
    def _fail(error: Exception) -> NoReturn:
        """One line and the exit code of `error`; anything else is re-raised as it is."""
        try:
            raise error
        except UserError as e:
            _exit(f"error: {e}", e.exit_code)
        except click.UsageError as e:  # a command's options, or no such command
            _usage_error(e)
        except click.ClickException as e:
            _exit(f"error: {' '.join(e.format_message().split())}", BAD_INPUT)
        except click.Abort:  # a question answered no
            _exit("error: aborted", RUN_FAILED)
        except OSError as e:  # the system refused (a full disk, a permission): the run failed
            if is_verbose():
                traceback.print_exc()
            _exit(f"error: {e}", RUN_FAILED)
        except csv.Error as e:  # a reader that did not name its file: still one line
            _exit(f"error: a CSV file cannot be read ({e})", BAD_INPUT)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="interregion")
def main() -> None:
    """Measure latency and throughput between AWS and GCP regions.

    \b
    Example:
      interregion plan --clouds aws,gcp --max-regions 8
    """


main.params.extend(_verbosity_options())
# the pages ship with the package: the folder named is there, installed or in a checkout
main.epilog = (
    f"Documentation: the pages in {DOCS} (sweeps.md, planning.md, history.md, "
    "scheduled-sweeps.md, ...); each command's --help ends with examples."
)
main.commands = _Commands()
