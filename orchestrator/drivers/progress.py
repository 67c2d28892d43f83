"""Progress of a sweep's rounds: a live rich bar on a terminal, one log line per round
otherwise (CI, pipes), so a log always shows how far a sweep got."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from orchestrator.core import LOGGER, counted, log_stamp


def fmt_duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    minutes, s = divmod(seconds, 60)
    hours, m = divmod(minutes, 60)
    if hours:
        return f"{hours}h{m:02d}m"
    return f"{m}m{s:02d}s" if m else f"{s}s"


def interactive(stream: TextIO = sys.stderr) -> bool:
    return stream.isatty() and os.environ.get("CI", "").lower() not in ("1", "true", "yes")


class RoundProgress:
    """Rounds done, tests done and failed, and an ETA from the rounds measured so far."""

    def __init__(
        self,
        stream: TextIO = sys.stderr,
        live: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        quiet = not LOGGER.isEnabledFor(logging.INFO)  # --quiet: no bar either
        self.live = (interactive(stream) and not quiet) if live is None else live
        self.clock = clock
        self.total_rounds = 0
        self.total_tests = 0
        self.rounds = 0
        self.ok = 0
        self.failed = 0
        self.label = ""
        self._started = 0.0
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def begin(self, label: str, total_rounds: int, total_tests: int) -> None:
        self.label, self.total_rounds, self.total_tests = label, total_rounds, total_tests
        self.rounds = self.ok = self.failed = 0
        self._started = self.clock()
        if self.live:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("round {task.completed}/{task.total}"),
                TextColumn("{task.fields[tests]}"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task(label, total=total_rounds, tests=self._tests())
        else:
            self._line(f"{label}: {counted(total_rounds, 'round')}, {counted(total_tests, 'test')}")

    def _tests(self) -> str:
        return f"tests {self.ok + self.failed}/{self.total_tests}, {self.failed} failed"

    def eta_s(self) -> float:
        if not self.rounds:
            return float("nan")
        per_round = (self.clock() - self._started) / self.rounds
        return per_round * (self.total_rounds - self.rounds)

    def round_done(self, round_no: int, ok: int, failed: int, wall_s: float) -> None:
        self.rounds += 1
        self.ok += ok
        self.failed += failed
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self.rounds, tests=self._tests())
        else:
            self._line(
                f"{self.label}: round {self.rounds}/{self.total_rounds} (#{round_no}) "
                f"took {wall_s:.1f}s; {self._tests()}; ETA {fmt_duration(self.eta_s())}"
            )

    def end(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        self._line(
            f"{self.label}: {counted(self.rounds, 'round')} in "
            f"{fmt_duration(self.clock() - self._started)}; "
            f"{self._tests()}"
        )

    def _line(self, text: str) -> None:
        """A log line as core.log writes them (a UTC time, INFO), left out under --quiet."""
        if LOGGER.isEnabledFor(logging.INFO):
            print(f"{log_stamp()} INFO {text}", file=self.stream, flush=True)
