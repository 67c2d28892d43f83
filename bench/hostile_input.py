"""What the checks on hostile input cost on the paths every command takes.

Prints, with the load (a shared machine: figures are indicative):
  - the catalog's load (every command that plans), with the YAML alias bound;
  - read_text's throughput on a 100 MB CSV (read in 1 MiB chunks, each checked for NUL);
  - script_safe on a year's pair pages' size of JSON (30 MB), without and with '<' in it;
  - the store's cell conversion (_typed: range-checked numbers) per measurements row;
  - how soon a billion-laughs YAML (10^9 values once expanded) is refused.

Run: .venv/bin/python bench/hostile_input.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _figures import Figures

from orchestrator.core import grammar, textfile
from orchestrator.core.errors import UserError
from orchestrator.history import store
from orchestrator.model.catalog import load_catalog
from orchestrator.results.schema import MEASUREMENT_COLUMNS

REPEATS = 5
FIGURES = Figures(
    "hostile_input", "Checks on hostile input", goal="no path slower by more than a few ms"
)


def timed(work: Callable[[], object], repeats: int = REPEATS) -> float:
    """The median wall time of `work`, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="the figures as JSON on stdout")
    with FIGURES.printing(ap.parse_args().json):
        _measure(FIGURES.table("what the checks cost", ["what", "figure"]))


def _measure(table) -> None:  # type: ignore[no-untyped-def]
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f} (shared machine)")
    load_catalog()  # imports and the first read aside
    catalog_ms = timed(load_catalog) * 1000
    print(f"catalog load: {catalog_ms:.1f} ms (median of {REPEATS})")
    table.add("catalog load", f"{catalog_ms:.1f} ms")

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.csv"
        line = b"aws,us-east-1,gcp,europe-west1,80.123,900000000.0\n"
        path.write_bytes(line * (100_000_000 // len(line)))
        size_mb = path.stat().st_size / 1e6
        seconds = timed(lambda: textfile.read_text(path, "CSV file"), 3)
        print(f"read_text: {size_mb:.0f} MB in {seconds:.2f} s ({size_mb / seconds:.0f} MB/s)")
        table.add(f"read_text, {size_mb:.0f} MB", f"{size_mb / seconds:.0f} MB/s")

    plain = json.dumps([{"a": "aws:us-east-1", "v": [80.5] * 40}] * 80_000)
    marked = plain.replace("us-east-1", "<us&east>", 1000)
    for name, text in (("no unsafe character", plain), ("1000 '<', '&', '>'", marked)):
        mb = len(text) / 1e6
        seconds = timed(lambda t=text: grammar.script_safe(t))
        print(f"script_safe, {name}: {mb:.0f} MB in {seconds * 1000:.0f} ms")
        table.add(f"script_safe, {mb:.0f} MB, {name}", f"{seconds * 1000:.0f} ms")

    row = dict.fromkeys(MEASUREMENT_COLUMNS, "12.5")
    rows = 10_000
    seconds = timed(lambda: [{c: store._typed(c, row[c]) for c in row} for _ in range(rows)], 3)
    print(
        f"_typed: {seconds / rows * 1e6:.1f} us per {len(MEASUREMENT_COLUMNS)}-column row "
        f"({rows / seconds:,.0f} rows/s)"
    )
    per_row = f"{seconds / rows * 1e6:.1f} us"
    table.add(f"_typed, per {len(MEASUREMENT_COLUMNS)}-column row", per_row)

    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n' + "".join(
        f"{n}: &{n} [" + ",".join([f"*{p}"] * 10) + "]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )

    def refuse() -> None:
        try:
            textfile.parse_yaml(bomb, "bomb.yaml")
        except UserError:
            return
        raise AssertionError("the alias bomb was accepted")

    refused_ms = timed(refuse) * 1000
    print(f"billion laughs (10^9 values) refused in {refused_ms:.1f} ms")
    table.add("billion laughs (10^9 values) refused", f"{refused_ms:.1f} ms")
    FIGURES.headline = f"catalog {catalog_ms:.0f} ms; an alias bomb refused in {refused_ms:.1f} ms"


if __name__ == "__main__":
    main()
