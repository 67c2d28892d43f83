"""What a bench measured, as text and (`--json`) as one JSON document that bench/docs.py
turns into docs/benchmarks.md.

    figures = Figures("schedule", "Scheduler", goal="rounds = Δ, or Δ+1 where optimal")
    with figures.printing(args.json):          # with --json: the text goes to stderr
        table = figures.table("rounds against the bound", ["case", "rounds", "Δ"])
        table.add("full catalog", 77, 76)
        figures.headline = "rounds = Δ or Δ+1; 4-54 ms"
    # with --json, the document is printed to stdout as the block ends

The document says when, where and at what load it was measured: `date_utc`, `machine`
(cpus, architecture, kernel, memory) and `load` (the 1-minute load average as the run
started and as it ended).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

FORMAT = "interregion-bench/v1"


def machine() -> dict[str, object]:
    """This machine, as a reader of the figures needs it."""
    memory_kib = 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_kib = int(line.split()[1])
    return {
        "cpus": os.cpu_count() or 0,
        "arch": platform.machine(),
        "kernel": platform.release(),
        "memory_gib": round(memory_kib / 2**20, 1),
        "python": platform.python_version(),
    }


def load_1m() -> float:
    return round(os.getloadavg()[0], 2)


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[object]] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{self.title}: {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([_plain(c) for c in cells])


def _plain(value: object) -> object:
    if isinstance(value, float):
        return round(value, 4) if math.isfinite(value) else None
    if value is None or isinstance(value, int | str | bool):
        return value
    return str(value)


@dataclass
class Figures:
    """One bench's figures: its tables, headline, goal and notes."""

    bench: str  # the script's name: bench/<bench>.py
    area: str  # the section title in docs/benchmarks.md
    goal: str = ""
    headline: str = ""
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    load_start: float = field(default_factory=load_1m)

    def table(self, title: str, columns: list[str]) -> Table:
        made = Table(title, columns)
        self.tables.append(made)
        return made

    def note(self, text: str) -> None:
        self.notes.append(text)

    def document(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "bench": self.bench,
            "script": f"bench/{self.bench}.py",
            "area": self.area,
            "args": [a for a in sys.argv[1:] if a != "--json"],
            "date_utc": self.started.strftime("%Y-%m-%dT%H:%MZ"),
            "machine": machine(),
            "load": {"start": self.load_start, "end": load_1m()},
            "source": "run",
            "headline": self.headline,
            "goal": self.goal,
            "tables": [
                {"title": t.title, "columns": t.columns, "rows": t.rows} for t in self.tables
            ],
            "notes": self.notes,
        }

    @contextlib.contextmanager
    def printing(self, as_json: bool) -> Iterator[Figures]:
        """The bench's run: its text on stdout, or with `as_json` on stderr and the
        document on stdout as the block ends (not when it fails)."""
        if not as_json:
            yield self
            return
        out = sys.stdout
        with contextlib.redirect_stdout(sys.stderr):
            yield self
        out.write(json.dumps(self.document(), indent=1, ensure_ascii=False) + "\n")
