"""Change detection's tests kept between site builds, updated by the sweeps added since.

The site's change detection (history_pages.history_data) judges each path's tests of
its source's last CHANGE_RUNS sweeps: over a full catalog 330,000 tests, each RTT the
median of its ping samples, read in 0.7 s or more per build (the medians most of it).
The site keeps them as they were read (views.SeriesRows) in
`results/.cache/site/series-state/` (a meta.json and one .npy file per array, mapped
when read, as matrix_state), and the next build reads only the tests after the newest
one it saw (a 6-hourly sweep: one test per directed pair and backend) and drops those
that start before the new cut-off (views.series_cutoff): the same series as
views.change_series gives.

They are used under the rule the pair pages' kept tests are (orchestrator.site.pair_state:
the store the state's plus newer sweeps, the same code and format), and only when the
cut-off did not move back; otherwise the source's tests are read from the store again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.history import views as v
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
STATE_DIR = Path(".cache") / "site" / "series-state"
STATE_FORMAT = "interregion.site-series-state"
STATE_VERSION = 1
_HERE = Path(__file__).parent
# the code that reads the tests (views: the query, the cut-off and the series)
KEY_MODULES = (
    _HERE / "series_state.py",
    _HERE.parent / "history" / "views.py",
    _HERE.parent / "history" / "store.py",
)


@dataclass
class Kept:
    rows: v.SeriesRows
    cutoff: datetime | None  # the first start kept (None: every test)
    latest: datetime  # the source's newest test when they were read


@dataclass
class SeriesState:
    """The tests kept (`kept`, by source, from the last build) and this build's (`made`)."""

    kept: dict[str, Kept] = field(default_factory=dict)
    made: dict[str, Kept] = field(default_factory=dict)
    # why the kept tests were not used (None: they were, or there were none)
    reason: str | None = None
    used: list[str] = field(default_factory=list)  # the sources updated, not read whole


def change_series(
    con: duckdb.DuckDBPyConnection,
    last_runs: int,
    state: SeriesState | None = None,
    infos: Sequence[v.SourceInfo] | None = None,
) -> list[Any]:
    """views.change_series(con, last_runs), each source's tests the kept ones with the
    newer ones read, or all read from the store; `state` gets this build's in `made`.
    `infos`: views.source_infos(con)'s values, read already (in its order)."""
    from orchestrator.history.changes import gc_paused

    out: list[Any] = []
    with gc_paused():  # a year's series are 650,000 runs
        for info in infos if infos is not None else v.chosen_sources(v.source_infos(con)):
            cutoff = v.series_cutoff(con, info.name, last_runs)
            kept = _usable(state, info.name, cutoff)
            if kept is not None and state is not None:
                new = v.series_rows(con, info.name, None, after=kept.latest)
                rows = moved(kept.rows, new, cutoff)
                state.used.append(info.name)
            else:
                rows = v.series_rows(con, info.name, cutoff)
            if state is not None and info.latest is not None:
                state.made[info.name] = Kept(rows, cutoff, info.latest)
            out += v.series_from(info.name, rows)
    return out


def _usable(state: SeriesState | None, source: str, cutoff: datetime | None) -> Kept | None:
    """The source's kept tests, if the tests from `cutoff` on can be made from them."""
    kept = state.kept.get(source) if state is not None else None
    if kept is None:
        return None
    if kept.cutoff is not None and (cutoff is None or cutoff < kept.cutoff):
        return None  # the cut-off moved back: tests the kept ones lack
    return kept


def moved(kept: v.SeriesRows, new: v.SeriesRows, cutoff: datetime | None) -> v.SeriesRows:
    """The kept tests with the newer ones (`new`, every one after them) added, less
    those that start before `cutoff`."""
    import numpy as np

    groups = sorted({*kept.groups, *new.groups}, key=v.group_order)
    sweeps = list(dict.fromkeys([*kept.sweeps, *new.sweeps]))
    prints = list(dict.fromkeys([*kept.prints, *new.prints]))
    group_at = {g: n for n, g in enumerate(groups)}
    sweep_at = {s: n for n, s in enumerate(sweeps)}
    print_at = {p: n for n, p in enumerate(prints)}

    def numbered(rows: v.SeriesRows) -> tuple[Any, Any, Any]:
        """The rows' groups, sweeps and fingerprints as indices into the lists above."""
        if not len(rows.group):
            return rows.group, rows.sweep, rows.print
        group = np.array([group_at[g] for g in rows.groups], dtype=np.int32)[rows.group]
        sweep = np.array([sweep_at[s] for s in rows.sweeps], dtype=np.int32)[rows.sweep]
        index = np.array([*(print_at[p] for p in rows.prints), -1], dtype=np.int32)
        return group, sweep, index[rows.print]  # -1 (none) stays -1

    (kept_group, kept_sweep, kept_print), (new_group, new_sweep, new_print) = (
        numbered(kept),
        numbered(new),
    )
    group = np.concatenate([kept_group, new_group])
    # stable: each group's kept tests, then its new ones (newer): still in start order
    order = np.argsort(group, kind="stable")
    if cutoff is not None:
        order = order[np.concatenate([kept.us, new.us])[order] >= us(cutoff)]
    group = group[order]
    arrays = {
        name: np.concatenate([getattr(kept, name), getattr(new, name)])[order]
        for name in ("us", "t", "km", "rtt", "tput")
    }
    sweep = np.concatenate([kept_sweep, new_sweep])[order]
    fingerprint = np.concatenate([kept_print, new_print])[order]
    # the groups, sweeps and fingerprints no test is of any more are dropped, the others
    # numbered again
    group_used = np.bincount(group, minlength=len(groups)) > 0
    sweep_used = np.bincount(sweep, minlength=len(sweeps)) > 0
    print_used = np.bincount(fingerprint[fingerprint >= 0], minlength=len(prints)) > 0
    print_index = np.append(np.cumsum(print_used, dtype=np.int32) - 1, -1)
    return v.SeriesRows(
        groups=[g for g, used in zip(groups, group_used.tolist(), strict=True) if used],
        sweeps=[s for s, used in zip(sweeps, sweep_used.tolist(), strict=True) if used],
        prints=[p for p, used in zip(prints, print_used.tolist(), strict=True) if used],
        group=(np.cumsum(group_used, dtype=np.int32) - 1)[group],
        sweep=(np.cumsum(sweep_used, dtype=np.int32) - 1)[sweep],
        print=print_index[fingerprint],  # -1 takes the last: -1
        **arrays,
    )


# ---- the file ---------------------------------------------------------------------------


def code_key() -> str:
    return state_key(STATE_FORMAT, STATE_VERSION, KEY_MODULES)


def load(con: duckdb.DuckDBPyConnection, results: Path) -> SeriesState:
    """The state kept under `results`, its tests dropped (with the reason) unless the
    store is the state's plus newer sweeps; an unreadable one is no state."""
    kept, reason = load_sources(
        con, results / STATE_DIR, STATE_FORMAT, code_key(), v.SERIES_ARRAYS, _kept
    )
    return SeriesState(kept=kept, reason=reason)


def _kept(doc: dict[str, Any], arrays: dict[str, Any]) -> Kept:
    rows = v.SeriesRows(
        groups=[_group(g) for g in doc["groups"]],
        sweeps=[str(s) for s in doc["sweeps"]],
        prints=[str(p) for p in doc["prints"]],
        **arrays,
    )
    latest = from_us(int(doc["latest"]))
    assert latest is not None
    return Kept(rows, from_us(doc["cutoff"]), latest)


def _group(doc: Sequence[Any]) -> tuple[str | None, str, str]:
    backend, src, dst = doc
    return (None if backend is None else str(backend), str(src), str(dst))


def save(con: duckdb.DuckDBPyConnection, results: Path, state: SeriesState) -> None:
    """Write this build's tests, a folder swapped in whole (a read-only results folder
    keeps none)."""
    saving(con, results, state)()


def saving(con: duckdb.DuckDBPyConnection, results: Path, state: SeriesState) -> Callable[[], None]:
    """save, its writing left for later (as matrix_state.saving)."""
    made = {
        source: (
            {
                "cutoff": None if k.cutoff is None else us(k.cutoff),
                "latest": us(k.latest),
                "groups": k.rows.groups,
                "sweeps": k.rows.sweeps,
                "prints": k.rows.prints,
            },
            {f: getattr(k.rows, f) for f in v.SERIES_ARRAYS},
        )
        for source, k in state.made.items()
    }
    return saving_sources(con, results / STATE_DIR, STATE_FORMAT, code_key(), made)
