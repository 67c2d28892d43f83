"""Interrupts (Ctrl-C, SIGTERM, SIGHUP) as the library sees them.

The CLI installs the signal handlers (orchestrator.cli.stop_on_signals) and reports each
signal here; the library only declares what it needs: `check()` before starting
anything new, and `deferred()` around work that must finish (teardown). So an
interrupt stops a sweep at any point, and a second one cannot cut teardown short.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


class Interrupted(KeyboardInterrupt):
    """The run was asked to stop (by `signal_name`); handled like Ctrl-C."""

    def __init__(self, signal_name: str = "SIGINT") -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


_requested: list[str] = []  # names of the signals received, in order
_deferring = 0  # > 0 while inside deferred(): signals are recorded, not raised


def requested() -> str | None:
    """The first interrupt received, if any."""
    return _requested[0] if _requested else None


def reset() -> None:
    """Forget earlier interrupts (a new command in the same process)."""
    _requested.clear()


def on_signal(signum: int) -> None:
    """What the CLI's handler calls: record the signal, raise unless deferring."""
    name = signal.Signals(signum).name
    _requested.append(name)
    if not _deferring:
        raise Interrupted(name)


def check() -> None:
    """Raise if an interrupt arrived: nothing new may start after one."""
    if _requested and not _deferring:
        raise Interrupted(_requested[0])


@contextmanager
def deferred() -> Iterator[None]:
    """Signals inside are recorded, not raised: teardown must finish."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
