"""The pair pages' tests kept between site builds, updated by the sweeps added since.

A pair page shows each direction's tests of the last month (history_pages.PAIR_WINDOW),
each test's RTT the median of its ping samples: over a full catalog 700,000 tests, read
in 1.2 s or more per build (the medians two thirds of it). The site keeps the tests
it showed, as they are shown (`Rows`), in `results/.cache/site/pair-state/` (a
meta.json and one .npy file per array, mapped when read, as matrix_state), and the next
build reads only the tests after the newest one it saw (a 6-hourly sweep: one test
per directed pair) and drops those that left the window.

The kept tests are used only when the store holds exactly the sweeps they were read
from, each as it was then (id, source, rows, ingest and start time), plus sweeps whose
tests all start after the newest test it saw, the window did not start earlier, and the
code and format are the same (KEY_MODULES); otherwise (as matrix_state) the source's
tests are read from the store again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.site.matrix_state import (
    from_us,
    load_sources,
    saving_sources,
    state_key,
    us,
)

if TYPE_CHECKING:
    import duckdb

# a folder: meta.json and one .npy file per array
STATE_DIR = Path(".cache") / "site" / "pair-state"
STATE_FORMAT = "interregion.site-pair-state"
STATE_VERSION = 1
_HERE = Path(__file__).parent
# the code that reads and shows the tests (history_pages: the query and the rounding)
KEY_MODULES = (
    _HERE / "pair_state.py",
    _HERE / "history_pages.py",
    _HERE.parent / "history" / "views.py",
    _HERE.parent / "history" / "store.py",
)
_ARRAYS = ("pair", "us", "t", "sweep", "rtt", "tput")


@dataclass
class Rows:
    """A source's tests as its pair pages show them, in (src, dst, start) order: each
    test's directed pair (an index into `pairs`, which is sorted), start (`us`, and as
    shown, `t`: ISO 8601 bytes), sweep (an index into `sweeps`), RTT (ms) and
    throughput (Mbit/s), rounded as shown (NaN: none)."""

    pairs: list[tuple[str, str]]
    sweeps: list[str]
    pair: Any  # int32
    us: Any  # int64
    t: Any  # bytes (numpy "S")
    sweep: Any  # int32
    rtt: Any  # float64
    tput: Any  # float64

    def series(self) -> list[tuple[str, str, list[Any], list[Any], list[Any], list[Any]]]:
        """Per directed pair: (src, dst, [t], [sweep], [rtt], [throughput]), None for a
        missing value (the lists made whole, then cut: a list per test costs twice)."""
        import numpy as np

        n = len(self.pair)
        if not n:
            return []
        cuts = (np.flatnonzero(self.pair[1:] != self.pair[:-1]) + 1).tolist()
        firsts, ends = [0, *cuts], [*cuts, n]
        names = [self.pairs[p] for p in self.pair[firsts].tolist()]
        # the times as one text split at its newlines: a str per test made in C, a third
        # of the time numpy's conversion to str takes
        width = self.t.dtype.itemsize
        lines = np.full((n, width + 1), ord("\n"), dtype=np.uint8)
        lines[:, :width] = self.t.view(np.uint8).reshape(n, width)
        times = lines.tobytes().decode("ascii").replace("\0", "")[:-1].split("\n")
        sweeps = np.asarray(self.sweeps, dtype=object)[self.sweep].tolist()
        rtts, tputs = (_listed(x) for x in (self.rtt, self.tput))
        return [
            (src, dst, times[i:j], sweeps[i:j], rtts[i:j], tputs[i:j])
            for (src, dst), i, j in zip(names, firsts, ends, strict=True)
        ]


def _listed(values: Any) -> list[float | None]:
    """A float array as a list, None for NaN."""
    import numpy as np

    return np.ma.masked_invalid(values).tolist() if np.isnan(values).any() else values.tolist()


@dataclass
class Kept:
    rows: Rows
    start: datetime | None  # the window's start (None: every test)
    latest: datetime  # the source's newest test when they were read


@dataclass
class PairState:
    """The tests kept (`kept`, by source, from the last build) and this build's (`made`)."""

    kept: dict[str, Kept] = field(default_factory=dict)
    made: dict[str, Kept] = field(default_factory=dict)
    # why the kept tests were not used (None: they were, or there were none)
    reason: str | None = None
    used: list[str] = field(default_factory=list)  # the sources updated, not read whole


def rows_from(found: dict[str, Any]) -> Rows:
    """Rows from the columns DuckDB gave (fetchnumpy: src, dst, us, t, sweep_id, rtt,
    tput) in (src, dst, start) order."""
    import numpy as np

    src, dst = found["src"], found["dst"]
    if not len(src):
        return empty()
    cuts = np.flatnonzero((src[1:] != src[:-1]) | (dst[1:] != dst[:-1])) + 1
    firsts = np.array([0, *cuts.tolist()])
    names = list(zip(src[firsts].tolist(), dst[firsts].tolist(), strict=True))
    pair = np.repeat(np.arange(len(names), dtype=np.int32), np.diff([*firsts, len(src)]))
    index: dict[str, int] = {}
    sweep = np.fromiter(
        (index.setdefault(s, len(index)) for s in found["sweep_id"].tolist()),
        dtype=np.int32,
        count=len(src),
    )
    return Rows(
        pairs=names,
        sweeps=list(index),
        pair=pair,
        us=np.asarray(found["us"], dtype=np.int64),
        t=np.asarray(found["t"]).astype("S"),
        sweep=sweep,
        rtt=np.ma.filled(np.ma.asarray(found["rtt"], dtype=np.float64), np.nan),
        tput=np.ma.filled(np.ma.asarray(found["tput"], dtype=np.float64), np.nan),
    )


def empty() -> Rows:
    import numpy as np

    return Rows([], [], *(np.zeros(0, dtype=d) for d in ("i4", "i8", "S1", "i4", "f8", "f8")))


def moved(kept: Rows, new: Rows, start: datetime | None) -> Rows:
    """The kept tests with the newer ones (`new`, every one after them) added, less those
    before `start`: each pair's tests from `start` on, or its newest when it has none."""
    import numpy as np

    pairs = sorted({*kept.pairs, *new.pairs})
    sweeps = list(dict.fromkeys([*kept.sweeps, *new.sweeps]))
    pair_at = {p: n for n, p in enumerate(pairs)}
    sweep_at = {s: n for n, s in enumerate(sweeps)}

    def numbered(rows: Rows) -> tuple[Any, Any]:
        """The rows' pairs and sweeps as indices into `pairs` and `sweeps`."""
        pair = np.array([pair_at[p] for p in rows.pairs], dtype=np.int32)
        sweep = np.array([sweep_at[s] for s in rows.sweeps], dtype=np.int32)
        if not len(rows.pair):
            return rows.pair, rows.sweep
        return pair[rows.pair], sweep[rows.sweep]

    (kept_pair, kept_sweep), (new_pair, new_sweep) = numbered(kept), numbered(new)
    pair = np.concatenate([kept_pair, new_pair])
    # stable: each pair's kept tests, then its new ones (newer): still in start order
    order = np.argsort(pair, kind="stable")
    pair = pair[order]
    if start is not None and len(pair):
        shown = np.concatenate([kept.us, new.us])[order] >= us(start)
        newest = np.append(pair[1:] != pair[:-1], True)  # each pair's last test
        has = np.zeros(len(pairs), dtype=bool)
        has[pair[shown]] = True
        keep = shown | (newest & ~has[pair])
        order, pair = order[keep], pair[keep]
    # each array copied once more than it must (numpy has no take from two arrays)
    arrays = {
        name: np.concatenate([getattr(kept, name), getattr(new, name)])[order]
        for name in ("us", "t", "rtt", "tput")
    }
    arrays["sweep"] = np.concatenate([kept_sweep, new_sweep])[order]
    # the pairs and sweeps no test is of any more are dropped, the others numbered again
    pair_used = np.bincount(pair, minlength=len(pairs)) > 0
    sweep_used = np.bincount(arrays["sweep"], minlength=len(sweeps)) > 0
    return Rows(
        pairs=[p for p, used in zip(pairs, pair_used.tolist(), strict=True) if used],
        sweeps=[s for s, used in zip(sweeps, sweep_used.tolist(), strict=True) if used],
        pair=(np.cumsum(pair_used, dtype=np.int32) - 1)[pair],
        sweep=(np.cumsum(sweep_used, dtype=np.int32) - 1)[arrays["sweep"]],
        us=arrays["us"],
        t=arrays["t"],
        rtt=arrays["rtt"],
        tput=arrays["tput"],
    )


def usable(state: PairState, source: str, start: datetime | None) -> Kept | None:
    """The source's kept tests, if a window from `start` can be made from them."""
    kept = state.kept.get(source)
    if kept is None or start is None:
        return None
    if kept.start is None or start < kept.start:
        return None  # the window starts earlier: tests the kept ones lack
    return kept


# ---- the store's state -----------------------------------------------------------------


def code_key() -> str:
    return state_key(STATE_FORMAT, STATE_VERSION, KEY_MODULES)


# ---- the file ---------------------------------------------------------------------------


def load(con: duckdb.DuckDBPyConnection, results: Path) -> PairState:
    """The state kept under `results`, its tests dropped (with the reason) unless the
    store is the state's plus newer sweeps; an unreadable one is no state."""
    kept, reason = load_sources(con, results / STATE_DIR, STATE_FORMAT, code_key(), _ARRAYS, _kept)
    return PairState(kept=kept, reason=reason)


def _kept(doc: dict[str, Any], arrays: dict[str, Any]) -> Kept:
    rows = Rows(
        pairs=[(str(a), str(b)) for a, b in doc["pairs"]],
        sweeps=[str(s) for s in doc["sweeps"]],
        **arrays,
    )
    latest = from_us(int(doc["latest"]))
    assert latest is not None
    return Kept(rows, from_us(doc["start"]), latest)


def save(con: duckdb.DuckDBPyConnection, results: Path, state: PairState) -> None:
    """Write this build's tests, a folder swapped in whole (a read-only results folder
    keeps none)."""
    saving(con, results, state)()


def saving(con: duckdb.DuckDBPyConnection, results: Path, state: PairState) -> Callable[[], None]:
    """save, its writing left for later (as matrix_state.saving)."""
    made = {
        source: (
            {
                "start": None if k.start is None else us(k.start),
                "latest": us(k.latest),
                "pairs": k.rows.pairs,
                "sweeps": k.rows.sweeps,
            },
            {f: getattr(k.rows, f) for f in _ARRAYS},
        )
        for source, k in state.made.items()
    }
    return saving_sources(con, results / STATE_DIR, STATE_FORMAT, code_key(), made)
