"""A sweep's computed report, kept so that a site over the same inputs does not compute
it again: `results/.cache/report/<sweep id>.json`.

An entry holds what a site page shows of one sweep (counts, notes, summary, outliers,
the figures as JSON, each pair's medians for the time series) and is keyed by the
sweep's input files (size, modification time and inode of measurements.csv, sweep.json
and sentinels.csv), the catalog, the options and the code that computes them. An entry
whose key differs is recomputed; an entry that cannot be read is a miss, never an
error. `interregion report` of a whole sweep writes one; `interregion site` reads it,
and writes it on a miss.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from orchestrator.report import analyze

CACHE_DIR = Path(".cache") / "report"  # under the results folder
FORMAT = 1  # raised when an entry's fields change
INPUT_FILES = ("measurements.csv", "sweep.json", "sentinels.csv")
# the packages whose code decides what an entry holds
_CODE = ("core", "model", "results", "report", "plan")

# (src, dst) region keys -> sweep id -> (median RTT ms, median throughput bps)
Medians = dict[tuple[str, str], dict[str, tuple[float, float]]]


@dataclass
class Products:
    """What a report computed of one sweep folder, as a site page shows it."""

    key: str
    sweep_id: str
    max_points: int
    emulated: bool
    started_utc: str  # the sweep's own
    backends: list[str]
    rows: int  # rows used
    regions: list[str]  # in order of first appearance (ties in the time series)
    sweeps: list[str]  # the sweep ids of its rows
    started: dict[str, str]  # sweep id -> start (or the id), for the time series
    notes: list[str]
    warnings: list[str]
    summaries: list[analyze.GroupSummary]
    outliers: list[analyze.PairOutlier]
    figures: dict[str, Any]  # name -> figure JSON (NaN as null)
    medians: Medians
    # the site's published copy of measurements.csv: {"rows", "dropped", "bytes"}
    published: dict[str, int] = field(default_factory=dict)
    # the rows of measurements.csv when a site may publish the file as it is (each row
    # parses, and csv.writer would write the same bytes: site.build.write_parsed_rows);
    # -1 when the site must parse it row by row
    verbatim_rows: int = -1


def path_of(sweep_dir: Path) -> Path:
    return sweep_dir.parent / CACHE_DIR / f"{sweep_dir.name}.json"


def source_digest(sources: Iterable[Path]) -> str:
    """A digest of source files' names and bytes: a cache made by other code is a miss."""
    h = hashlib.sha256()
    for source in sources:
        h.update(source.name.encode())
        h.update(source.read_bytes())
    return h.hexdigest()


@functools.cache
def _code_digest() -> str:
    root = Path(__file__).resolve().parents[1]
    return source_digest(s for package in _CODE for s in sorted((root / package).glob("*.py")))


def input_key(sweep_dir: Path, catalog: object, include_flagged: bool) -> str:
    """The key of a sweep folder's entry: its input files as they are now, the catalog
    (its repr), `include_flagged` and the code."""
    parts: list[Any] = [FORMAT, _code_digest(), include_flagged]
    parts.append(hashlib.sha256(repr(catalog).encode()).hexdigest())
    for name in INPUT_FILES:
        try:
            st = (sweep_dir / name).stat()
        except OSError:
            parts.append([name])
            continue
        parts.append([name, st.st_size, st.st_mtime_ns, st.st_ino])
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def load(sweep_dir: Path, key: str) -> Products | None:
    """The entry of `sweep_dir` when its key is `key`; None otherwise."""
    try:
        doc = json.loads(path_of(sweep_dir).read_text(encoding="utf-8"))
        if doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        return _products(doc)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def save(sweep_dir: Path, products: Products) -> None:
    """Write the entry whole (a reader never sees half of one); a folder that cannot be
    written to keeps no entry."""
    # field by field: asdict would deep-copy the figures' data (seconds at a full catalog)
    doc = {f.name: getattr(products, f.name) for f in fields(products)}
    doc["summaries"] = [asdict(s) for s in products.summaries]
    doc["outliers"] = [asdict(o) for o in products.outliers]
    doc["format"] = FORMAT
    doc["medians"] = [[s, d, per] for (s, d), per in products.medians.items()]
    path = path_of(sweep_dir)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def prune(results: Path, keep: set[str]) -> None:
    """Remove the entries of sweeps not in `keep` (folders since deleted)."""
    folder = results / CACHE_DIR
    if not folder.is_dir():
        return
    for entry in folder.glob("*.json"):
        if entry.stem not in keep:
            with contextlib.suppress(OSError):
                entry.unlink()


def _nan(x: Any) -> float:
    return math.nan if x is None else float(x)


def _products(doc: dict[str, Any]) -> Products:
    def summary(d: dict[str, Any]) -> analyze.GroupSummary:
        for k in ("rtt_fit", "log_throughput_fit"):
            d[k] = analyze.Fit(**d[k])
        return analyze.GroupSummary(**d)

    fields = {k: v for k, v in doc.items() if k != "format"}
    fields["summaries"] = [summary(d) for d in doc["summaries"]]
    fields["outliers"] = [analyze.PairOutlier(**d) for d in doc["outliers"]]
    fields["medians"] = {
        (s, d): {k: (_nan(r), _nan(t)) for k, (r, t) in per.items()} for s, d, per in doc["medians"]
    }
    return Products(**fields)
