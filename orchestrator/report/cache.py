"""A sweep's computed report, kept so that a site over the same inputs does not compute
it again: `results/.cache/report/<sweep id>.json`.

An entry holds what a site page shows of one sweep (counts, notes, summary, outliers,
the figures as JSON, each pair's medians for the time series) and is keyed by the
sweep's input files (size, modification time and inode of measurements.csv, sweep.json
and sentinels.csv), the catalog, the options and the code that computes them. An entry
whose key differs is recomputed; an entry that cannot be read is a miss, never an
error. `interregion report` of a whole sweep writes one; `interregion site` reads it,
and writes it on a miss. The file is one line of JSON (every field but the figures),
then a line per figure: its name (a JSON string), a tab and its compact JSON, kept as
text (FigureSet): the site writes a figure's file from that text, so the megabytes of a
full catalog's figures are never parsed or encoded again to read or update an entry.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from orchestrator.core import remove_within, within
from orchestrator.report import analyze, uncertainty

CACHE_DIR = Path(".cache") / "report"  # under the results folder
FORMAT = 3  # raised when an entry's fields change (2: figures on lines; 3: tiers, uncertainty)
INPUT_FILES = ("measurements.csv", "sweep.json", "sentinels.csv")
# the packages whose code decides what an entry holds
_CODE = ("core", "model", "results", "report", "plan")

# (src, dst) region keys -> sweep id -> (median RTT ms, median throughput bps)
Medians = dict[tuple[str, str], dict[str, tuple[float, float]]]


def compact(value: Any) -> str:
    """JSON without spaces, as the entry and the site's figure files hold it."""
    return json.dumps(value, separators=(",", ":"))


class FigureSet(Mapping[str, Any]):
    """Figure JSON by name, each kept as its compact JSON text too and parsed only when
    asked for: written out (an entry, the site's figure files) as that text."""

    def __init__(self, texts: dict[str, str], parsed: dict[str, Any] | None = None) -> None:
        self._texts = texts
        self._parsed = dict(parsed or {})

    @classmethod
    def of(cls, figures: Mapping[str, Any]) -> FigureSet:
        """The figures given as JSON data (NaN as null), each encoded once."""
        return cls({name: compact(fig) for name, fig in figures.items()}, dict(figures))

    def __getitem__(self, name: str) -> Any:
        if name not in self._parsed:
            self._parsed[name] = json.loads(self._texts[name])
        return self._parsed[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def text(self, name: str) -> str:
        """The figure's compact JSON."""
        return self._texts[name]

    def only(self, name: str) -> FigureSet:
        return FigureSet(
            {name: self._texts[name]}, {k: v for k, v in self._parsed.items() if k == name}
        )

    def json(self) -> str:
        """compact() of the figures as one JSON object, from their texts."""
        return "{" + ",".join(f"{compact(n)}:{t}" for n, t in self._texts.items()) + "}"


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
    figures: FigureSet  # name -> figure JSON (NaN as null)
    medians: Medians
    # the site's published copy of measurements.csv: {"rows", "dropped", "bytes"}
    published: dict[str, int] = field(default_factory=dict)
    # the rows of measurements.csv when a site may publish the file as it is (each row
    # parses, and csv.writer would write the same bytes: site.static_site.write_parsed_rows);
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
        head, _, figures = path_of(sweep_dir).read_text(encoding="utf-8").partition("\n")
        doc = json.loads(head)
        if doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        if hashlib.sha256(figures.encode()).hexdigest() != doc.pop("figures_sha256"):
            return None  # the figures' lines are not those written with it
        texts = {}
        for line in figures.split("\n")[:-1]:
            name, tab, text = line.partition("\t")
            if not tab:
                return None
            texts[json.loads(name)] = text
        return _products(doc, FigureSet(texts))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def save(sweep_dir: Path, products: Products) -> None:
    """Write the entry whole (a reader never sees half of one); a folder that cannot be
    written to keeps no entry."""
    # field by field: asdict would deep-copy the figures' data (seconds at a full catalog)
    doc = {f.name: getattr(products, f.name) for f in fields(products) if f.name != "figures"}
    doc["summaries"] = [asdict(s) for s in products.summaries]
    doc["outliers"] = [asdict(o) for o in products.outliers]
    doc["format"] = FORMAT
    doc["medians"] = [[s, d, per] for (s, d), per in products.medians.items()]
    figures = "".join(f"{compact(n)}\t{products.figures.text(n)}\n" for n in products.figures)
    doc["figures_sha256"] = hashlib.sha256(figures.encode()).hexdigest()
    path = path_of(sweep_dir)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not within(sweep_dir.parent, path):
            return  # a linked .cache leads out of the results folder: no entry there
        tmp.write_text(compact(doc) + "\n" + figures, encoding="utf-8")
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
                remove_within(results, entry)  # never through a linked .cache


def _nan(x: Any) -> float:
    return math.nan if x is None else float(x)


def _products(doc: dict[str, Any], figures: FigureSet) -> Products:
    def summary(d: dict[str, Any]) -> analyze.GroupSummary:
        for k in ("rtt_fit", "log_throughput_fit"):
            d[k] = analyze.Fit(**d[k])
        if d.get("uncertainty") is not None:
            d["uncertainty"] = uncertainty.from_dict(d["uncertainty"])
        return analyze.GroupSummary(**d)

    fields = {k: v for k, v in doc.items() if k != "format"}
    fields["summaries"] = [summary(d) for d in doc["summaries"]]
    fields["outliers"] = [analyze.PairOutlier(**d) for d in doc["outliers"]]
    fields["figures"] = figures
    fields["medians"] = {
        (s, d): {k: (_nan(r), _nan(t)) for k, (r, t) in per.items()} for s, d, per in doc["medians"]
    }
    return Products(**fields)
