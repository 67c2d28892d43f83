"""Signal handling at the CLI edge: Ctrl-C, SIGTERM and SIGHUP (a closed SSH session
running a sweep) all stop the command the same way, through orchestrator.drivers.interrupts."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from orchestrator.drivers import deferred, on_signal, reset_interrupts, stop_all

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _handler(signum: int, frame: FrameType | None) -> None:
    on_signal(signum)


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Turn the stop signals into Interrupted for the command inside; on the way out,
    end every child process that still runs, so the command never exits before them."""
    reset_interrupts()
    old = {s: signal.signal(s, _handler) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        with deferred():
            stop_all()
        for s, handler in old.items():
            signal.signal(s, handler)
