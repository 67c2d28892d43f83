"""Log lines on stderr: a UTC time, a level, the message.

`2026-11-26T05:40:00Z INFO sweep 20261126T0540Z-3fa2: results/...`: one line per
event, so a cron log or a CI log says when each thing happened. What a command
prints as its answer goes to stdout, never through here. The one-line error that
ends a command (`error: ...`) is the command's answer about bad input or a failed
run, printed by the CLI itself, not a log line.

`configure(verbosity)` sets how much is shown: -1 (`--quiet`) warnings only, 0
(the default) information too, 1 (`--verbose`) debugging lines too. The library
logs through `info`, `warning` and `debug` or hands them on as `log=` callbacks.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = [
    "configure",
    "counted",
    "debug",
    "info",
    "is_verbose",
    "say",
    "stamp",
    "step",
    "warning",
]

LOGGER = logging.getLogger("interregion")
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
QUIET, NORMAL, VERBOSE = -1, 0, 1
_LEVELS = {QUIET: logging.WARNING, NORMAL: logging.INFO, VERBOSE: logging.DEBUG}
LOGGER.setLevel(logging.INFO)  # the default, also for the library called without the CLI


class _Stderr(logging.Handler):
    """Writes to whatever sys.stderr is at the time of the line (a test's capture too)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # logging must not end the command
            self.handleError(record)


class _UtcFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(message)s", TIME_FORMAT)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return stamp(record.created)


def _handler() -> logging.Handler:
    for handler in LOGGER.handlers:
        if isinstance(handler, _Stderr):
            return handler
    handler = _Stderr()
    handler.setFormatter(_UtcFormatter())
    LOGGER.addHandler(handler)
    LOGGER.propagate = False
    return handler


def configure(verbosity: int = NORMAL) -> None:
    """Show warnings only (-1), information too (0) or debugging lines too (1)."""
    _handler()
    LOGGER.setLevel(_LEVELS[max(QUIET, min(VERBOSE, verbosity))])


def is_verbose() -> bool:
    return LOGGER.getEffectiveLevel() <= logging.DEBUG


def counted(count: int, noun: str, plural: str = "") -> str:
    """`count` and its noun as a printed line says it: "1 round", "2 rounds", "0 sweeps"
    (`plural` where adding an s is wrong: "1 study", "2 studies")."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def stamp(when: float | None = None) -> str:
    """A UTC time as the log lines write it: 2026-11-26T05:40:00Z."""
    return time.strftime(TIME_FORMAT, time.gmtime(time.time() if when is None else when))


def _ready() -> None:
    if not LOGGER.handlers:
        configure(NORMAL)


def info(message: str) -> None:
    _ready()
    LOGGER.info(message)


def warning(message: str) -> None:
    _ready()
    LOGGER.warning(message)


def say(message: str) -> None:
    """The `log=` callback the library is handed: a line it starts with `warning: ` is a
    WARNING (the prefix dropped), any other line INFO."""
    if message.startswith("warning: "):
        warning(message.removeprefix("warning: "))
    else:
        info(message)


def debug(message: str) -> None:
    _ready()
    LOGGER.debug(message)


@contextmanager
def step(
    what: str,
    done: str = "",
    tell: Callable[[str], None] | None = None,
    after_s: float = 0.0,
) -> Iterator[None]:
    """A step that can take more than 2 seconds: a line as it starts (`what`, e.g.
    "rendering 9 PNG charts"), and one with its time when it ends (`done`, else `what`
    again: "rendering 9 PNG charts: done in 7.4 s"). `tell` is where the lines go (a
    sweep's log, else INFO); a step that fails says nothing more (its error will).

    With `after_s`, the start line waits that long (a timer thread) and a step over by
    then says nothing at all: a command whose bad input ends it at once keeps its error
    the one line it prints."""
    tell = tell or info
    said = threading.Event()

    def start() -> None:
        said.set()
        tell(what)

    timer = None
    if after_s > 0:
        timer = threading.Timer(after_s, start)
        timer.daemon = True
        timer.start()
    else:
        start()
    started = time.monotonic()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
            timer.join()
    if said.is_set():
        tell(f"{done or what}: done in {time.monotonic() - started:.1f} s")
