"""The matrix's windows of days kept between site builds, updated by the sweeps added since.

A year's RTT window is a histogram of millions of samples per source (views.Bins, read
from the store's rtt_bins and the tests at its ends): seconds of DuckDB per build. The
site keeps each RTT window of MIN_DAYS or more (1D to 1Y, and the window of the same
length before each) in `results/.cache/site/matrix-state/`, and the next build updates
it: the samples of the tests that entered the window added, those of the tests that
left it subtracted (a 6-hourly sweep moves every window by 6 hours: two slices of
tests; the first window updated reads every window's slices, _read_rtt_slices). Counts
are integers, so the histogram's counts are exact, and the percentiles are estimated
from the counts and bin edges (orchestrator.history.histogram), save those in a pair's
first or last bin, which read the pair's smallest or largest sample.
Those (and every bin's) cannot be subtracted. Each bin keeps a time at or after which
a test holds a sample equal to its smallest (largest) one (lo_t, hi_t: the first day
of the store's day, week or month row, a test's start, or a slice's start, whichever
last held it): a sample equal to it that leaves (ping's samples repeat: the year's
minimum is seen many times) takes it only when that time left too. Then the bin's
extreme is unknown (NaN), and a pair whose statistics need an unknown extreme has its
first and last bins read again from the store (views.binned_range of those rows
alone): rare in long windows, which lose one 6-hour slice of many (none of a year's
5,852 pairs, 13 of a month's after one slice of the bench's year), common in the
day's (a fifth of its pairs), where the update costs what reading it whole does. Each
bin's sum is kept too, snapped to SUM_STEP (ping's samples have three decimals, so a
sum of them is a multiple of 0.001 ms: snapped, what was added and subtracted is
exactly what the store sums), for the mean. The cells are those views.binned_cells
gives, value for value, for the statistics the matrix shows (views.SITE_STATS; the
distance is not kept).

The state is used only when the store holds exactly the sweeps it was made from, each
as it was then (id, source, rows, ingest and start time), plus sweeps whose tests all
start after the newest test the state saw, and the pairs are numbered as then, and the
code and format are the same (KEY_MODULES): otherwise (a sweep deleted, re-ingested or
added with older tests, a rebuild) every window is computed from the store again. A
window also is when it moved more than MAX_SHIFT, or has no entry.

The one-value metrics (throughput, loss, jitter: one value per test) keep every
window of days (1D to 1Y, and the window before each), exactly: each pair's distinct
values with their tests (Values), to which the tests that entered are added and from
which those that left are taken, so their percentiles are DuckDB's quantile_cont of
the window's tests to the bit (a year of throughput is 8.5M values: DuckDB's
percentiles of them take a second per metric). Every window moves by the same sweep,
so their slices are a dozen time ranges shared by the three metrics: the first window
updated reads them all in one query (_read_slices). Each window's rows are rewritten
once per build, what left and what entered together (_updated); each pair's rows are
kept as bounds, not as a pair per row. Their "latest" windows (each pair's newest
test) are read together too, from the source's last day (latest_cells).

The arrays are kept as .npy files, mapped when read (a year's are 200 MB).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from orchestrator.history import views as v
from orchestrator.report.cache import source_digest

if TYPE_CHECKING:
    import duckdb

T = TypeVar("T")

# a folder: meta.json and one .npy file per array (mapped when read)
STATE_DIR = Path(".cache") / "site" / "matrix-state"
_OLD_FILE = Path(".cache") / "site" / "matrix-state.npz"
STATE_FORMAT = "interregion.site-matrix-state"
# 2: each bin's sum (`total`); 3: the one-value metrics' windows; 4: their newest tests
# by pair, without the pairs again; 5: when each bin's extremes were last seen (`lo_t`,
# `hi_t`)
STATE_VERSION = 5
# the bins' sums kept to this step (ms): far below the mean's display (0.01 ms), far
# above the error of a sum of doubles
SUM_STEP = 1e-4
# a window moved further is computed again (the slices would cost what the window does)
MAX_SHIFT = timedelta(days=2)
# shorter windows are read whole. Every window of days is kept: updated, a week costs
# half of what reading it does, a day (a quarter of whose tests leave with each
# 6-hourly sweep, and with them half its pairs' extremes) about what reading it does
MIN_DAYS = 1
_HERE = Path(__file__).parent
KEY_MODULES = (
    _HERE / "matrix_state.py",
    _HERE.parent / "history" / "views.py",
    _HERE.parent / "history" / "histogram.py",
    _HERE.parent / "history" / "store.py",
)
# the statistics read from the histograms (the mean is the sums')
_QUANTILES = tuple(s for s in v.SITE_STATS if s in v.QUANTILES)
_KINDS = {
    "bins": ("key", "n", "lo", "hi", "total", "pair", "tests", "newest_us", "lo_t", "hi_t"),
    # a Values' pairs' rows counted, not bounded (_packed)
    "values": ("pairs", "rows", "x", "n", "newest_us", "lim_pair", "lim", "lim_n"),
}
_EPOCH = datetime(1970, 1, 1)
_NEVER = -(2**63)  # lo_t, hi_t: no test known to hold the extreme


def us(t: datetime) -> int:
    """A naive UTC time in microseconds since 1970 (as DuckDB's epoch_us)."""
    return (t - _EPOCH) // timedelta(microseconds=1)


def _us(t: datetime | None) -> int | None:
    return None if t is None else us(t)


def from_us(x: int | None) -> datetime | None:
    """us() undone (None stays None)."""
    return None if x is None else _EPOCH + timedelta(microseconds=x)


class Stale(Exception):
    """A window's entry does not fit the store: it is computed again."""


@dataclass
class Values:
    """A one-value metric's tests of a window (views.Metric.one_value: throughput, loss,
    jitter), per pair (numbered as in the store's `pairs`; `pairs` sorted, each one's
    rows from `starts[i]` to `starts[i + 1]`): each distinct value `x` (sorted within
    the pair) with its tests `n`; each pair's newest test (`newest_us`, UNIX
    microseconds); the tests of each limiter (`lim_pair`, `lim`, `lim_n`; rows sorted
    by pair, then limiter; throughput's alone, the other metrics' limiter "")."""

    pairs: Any
    starts: Any
    x: Any
    n: Any
    newest_us: Any
    lim_pair: Any
    lim: Any
    lim_n: Any


@dataclass
class Entry:
    source: str
    a: datetime  # the window's start (its tests start in [a, b))
    b: datetime | None  # its end; None: the window runs to the source's newest test
    latest: datetime | None  # the source's newest test when it was made
    bins: v.Bins | Values


@dataclass
class MatrixState:
    """The windows read (`entries`, from the last build) and those of this build (`made`)."""

    entries: dict[str, Entry] = field(default_factory=dict)
    made: dict[str, Entry] = field(default_factory=dict)
    # why the kept windows were not used (None: they were, or there were none)
    reason: str | None = None
    used: list[str] = field(default_factory=list)  # the windows updated, not read whole
    # the slices read this build, by (source, from, to): a window's start is the end of
    # the window before it, so what leaves one enters the other
    slices: dict[tuple[str, datetime, datetime | None], v.Bins] = field(default_factory=dict)
    value_slices: dict[tuple[str, str, datetime, datetime | None], Values] = field(
        default_factory=dict
    )
    value_sources: set[str] = field(default_factory=set)  # whose slices were read
    rtt_sources: set[str] = field(default_factory=set)  # whose RTT slices were read
    # each one-value metric's "latest" cells by (source, metric), read together (None:
    # read by views.window_cells)
    latest: dict[tuple[str, str], v.CellTable | None] = field(default_factory=dict)
    names: dict[int, tuple[str, str]] | None = None  # views.pair_names, read once a build


def _name(source: str, window: str, previous: bool) -> str:
    return f"{source}|{window}|{'previous' if previous else 'window'}"


# ---- the store's state -----------------------------------------------------------------


def sweep_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(sweep id, what identifies its content) of every stored sweep."""
    rows = con.execute(
        "SELECT sweep_id, concat_ws('|', source, rows, ingested_utc, started_utc) FROM sweeps "
        "ORDER BY sweep_id"
    ).fetchall()
    return [(str(a), str(b)) for a, b in rows]


def _pairs_digest(con: duckdb.DuckDBPyConnection) -> str:
    (digest,) = con.execute(
        "SELECT md5(coalesce(string_agg(concat_ws('|', pair, src, dst), ';' ORDER BY pair), '')) "
        "FROM pairs"
    ).fetchone() or ("",)
    return str(digest)


def code_key() -> str:
    return state_key(STATE_FORMAT, STATE_VERSION, KEY_MODULES)


def check_store(
    con: duckdb.DuckDBPyConnection,
    meta: dict[str, Any],
    latest: dict[str, int | None],
    form: str = STATE_FORMAT,
    code: str | None = None,
    pairs: bool = True,
) -> str | None:
    """Why the store is not the state's plus newer sweeps (None: it is): a state's
    `meta` of format `form` and code `code` (code_key() without), with each source's
    newest test kept (`latest`, UNIX microseconds); `pairs`: numbered as then too. The
    site's pair pages keep their tests under the same rule (site.pair_state)."""
    if meta.get("format") != form or meta.get("code") != (code or code_key()):
        return "other code or format"
    if pairs and meta.get("pairs") != _pairs_digest(con):
        return "the pairs were numbered again"
    now = dict(sweep_rows(con))
    kept = {str(a): str(b) for a, b in meta.get("sweeps", [])}
    if any(now.get(sweep) != what for sweep, what in kept.items()):
        return "a sweep was deleted or stored again"
    added = sorted(set(now) - set(kept))
    if added:
        rows = con.execute(
            "SELECT source, epoch_us(min(started_utc)) FROM measurements "
            "WHERE sweep_id IN (SELECT unnest(?)) GROUP BY source",
            [added],
        ).fetchall()
        for source, first in rows:
            newest = latest.get(source)
            if newest is not None and (first is None or first <= newest):
                return f"an added sweep of {source} holds tests older than the kept newest"
    return None


# ---- the file ---------------------------------------------------------------------------


def load(con: duckdb.DuckDBPyConnection, results: Path) -> MatrixState:
    """The state kept under `results`, its entries dropped (with the reason) unless the
    store is the state's plus newer sweeps; an unreadable one is no state. Its arrays
    are mapped, not read: a year's are 200 MB, of which a build reads what it uses."""
    import numpy as np

    folder = results / STATE_DIR
    if not (folder / "meta.json").is_file():
        return MatrixState()
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        latest = {str(k): (None if x is None else int(x)) for k, x in meta["latest"].items()}
        reason = check_store(con, meta, latest)
        if reason is not None:
            return MatrixState(reason=reason)
        entries = {}
        for n, (name, doc) in enumerate(meta["entries"].items()):
            kind = doc["kind"]
            arrays = read_arrays(folder, n, _KINDS[kind])
            bins: v.Bins | Values
            if kind == "values":
                bins = _unpacked(arrays)
            else:
                bins = v.Bins(**arrays, km=np.full(len(arrays["pair"]), np.nan))
            a = from_us(doc["a"])
            if a is None:
                raise ValueError(f"{name} has no start")
            entries[name] = Entry(
                str(doc["source"]), a, from_us(doc["b"]), from_us(doc["latest"]), bins
            )
    except (OSError, ValueError, KeyError, TypeError) as e:
        return MatrixState(reason=f"unreadable ({e})")
    return MatrixState(entries=entries)


def save(con: duckdb.DuckDBPyConnection, results: Path, state: MatrixState) -> None:
    """Write this build's windows, a folder swapped in whole (a read-only results folder
    keeps none)."""
    saving(con, results, state)()


def saving(con: duckdb.DuckDBPyConnection, results: Path, state: MatrixState) -> Callable[[], None]:
    """save, its writing left for later: what it needs of the store is read now, and
    the function returned writes the files (on another thread if it likes: numpy
    writes without the GIL; the store need not be open then)."""
    latest: dict[str, int | None] = {}
    arrays: dict[str, Any] = {}
    docs = {}
    for n, (name, e) in enumerate(state.made.items()):
        latest[e.source] = _us(e.latest)
        kind = "values" if isinstance(e.bins, Values) else "bins"
        docs[name] = {
            "source": e.source, "kind": kind, "a": _us(e.a), "b": _us(e.b),
            "latest": _us(e.latest),
        }  # fmt: skip
        fields = _packed(e.bins) if isinstance(e.bins, Values) else vars(e.bins)
        for f in _KINDS[kind]:
            arrays[f"{n}.{f}"] = fields[f]
    meta = {
        "format": STATE_FORMAT,
        "code": code_key(),
        "pairs": _pairs_digest(con),
        "sweeps": sweep_rows(con),
        "latest": latest,
        "entries": docs,
    }

    def write() -> None:
        with contextlib.suppress(OSError):
            (results / _OLD_FILE).unlink(missing_ok=True)  # what version 2 kept, one file
            write_folder(results / STATE_DIR, arrays, meta)

    return write


def state_key(form: str, version: int, modules: Sequence[Path]) -> str:
    """A kept state's code key: its format, version and the code that makes it."""
    return hashlib.sha256(f"{form}:{version}:{source_digest(list(modules))}".encode()).hexdigest()


def load_sources(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    form: str,
    code: str,
    fields: Sequence[str],
    make: Callable[[dict[str, Any], dict[str, Any]], T],
) -> tuple[dict[str, T], str | None]:
    """A state kept per source (saving_sources) of format `form` and code `code`: each
    source's `make(doc, arrays)` (its arrays `fields`, mapped), and why there are none
    (None: there were none, or they are used). Unless the store is the state's plus
    newer sweeps (check_store, the pairs' numbering aside) none is; an unreadable one
    neither."""
    if not (folder / "meta.json").is_file():
        return {}, None
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        docs = meta["sources"]
        newest: dict[str, int | None] = {s: int(d["latest"]) for s, d in docs.items()}
        reason = check_store(con, meta, newest, form, code, pairs=False)
        if reason is not None:
            return {}, reason
        return {
            str(source): make(doc, read_arrays(folder, n, fields))
            for n, (source, doc) in enumerate(docs.items())
        }, None
    except (OSError, ValueError, KeyError, TypeError) as e:
        return {}, f"unreadable ({e})"


def saving_sources(
    con: duckdb.DuckDBPyConnection,
    folder: Path,
    form: str,
    code: str,
    made: dict[str, tuple[dict[str, Any], dict[str, Any]]],
) -> Callable[[], None]:
    """A state kept per source, its writing left for later (as saving): each source's
    doc (with its newest test's time, `latest`, UNIX microseconds) and arrays; a
    read-only results folder keeps none."""
    arrays = {f"{n}.{f}": x for n, (_doc, a) in enumerate(made.values()) for f, x in a.items()}
    meta = {
        "format": form,
        "code": code,
        "sweeps": sweep_rows(con),
        "sources": {source: doc for source, (doc, _a) in made.items()},
    }

    def write() -> None:
        with contextlib.suppress(OSError):
            write_folder(folder, arrays, meta)

    return write


def read_arrays(folder: Path, n: int, fields: Sequence[str]) -> dict[str, Any]:
    """Entry n's arrays of a folder write_folder wrote (as `<n>.<field>`), mapped."""
    import numpy as np

    # plain arrays over the mapping (numpy's memmap class costs microseconds an index: a
    # build indexes them tens of thousands of times)
    return {
        f: np.asarray(np.load(folder / f"{n}.{f}.npy", mmap_mode="r", allow_pickle=False))
        for f in fields
    }


def write_folder(folder: Path, arrays: dict[str, Any], meta: dict[str, Any]) -> None:
    """A kept state written whole: meta.json and each array as <name>.npy, in a folder
    beside `folder` swapped into its place (OSError when it cannot be)."""
    import numpy as np

    from orchestrator.core import outdir

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", array, allow_pickle=False)
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        tmp.chmod(outdir.mode_for(folder))  # mkdtemp made it 0700
        outdir.swap_into_place(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# ---- a window ---------------------------------------------------------------------------


def window_cells(
    con: duckdb.DuckDBPyConnection,
    state: MatrixState,
    info: v.SourceInfo,
    window: str,
    previous: bool,
    stats: Sequence[str] = v.SITE_STATS,
    table: bool = False,
) -> list[v.Cell] | v.CellTable:
    """views.binned_cells' cells (`stats`, the mean from the kept sums, counts and
    newest test) of the window, from its kept entry updated, or from the store; a
    window of MIN_DAYS or more goes into state.made. The extremes that left are read
    again for the statistics asked for only."""
    days = v.window_days(window)
    start, _end = v.window_bounds(info, window)
    if days is None or start is None:
        return v.binned_cells(con, info, window, previous)
    a, b = (start - timedelta(days=days), start) if previous else (start, None)
    name = _name(info.name, window, previous)
    kept = state.entries.get(name) if days >= MIN_DAYS else None
    bins = None
    if kept is not None:
        try:
            bins = _moved(con, state, info, kept, a, b)
            state.used.append(name)
        except Stale:
            bins = None
    if bins is None:
        bins = _whole(con, info.name, a, b)
    asked = tuple(s for s in stats if s in v.QUANTILES)
    bins, quantiles = _known(con, info.name, a, b, bins, asked)
    if days >= MIN_DAYS:  # the shorter ones are read whole next time too
        state.made[name] = Entry(info.name, a, b, info.latest, bins)
    if table:  # a views.CellTable
        return v.bins_table(bins, stats, quantiles)
    return v.bins_cells(con, bins, stats, quantiles, _names(con, state))


def _whole(con: duckdb.DuckDBPyConnection, source: str, a: datetime, b: datetime | None) -> v.Bins:
    """The window read from the store, its sums snapped, each bin's extremes with a test
    that holds them (lo_t, hi_t), without the distances (never kept: the cells are the
    same whichever way they came)."""
    import numpy as np

    got = v.binned_range(con, source, a, b, witnesses=True)
    return replace(got, total=_snapped(got.total), km=np.full(len(got.pair), np.nan))


def _snapped(total: Any) -> Any:
    """Sums to the nearest SUM_STEP: what was summed in any order is the same number."""
    import numpy as np

    return np.rint(np.asarray(total, dtype=np.float64) / SUM_STEP) * SUM_STEP


def _moved(
    con: duckdb.DuckDBPyConnection,
    state: MatrixState,
    info: v.SourceInfo,
    kept: Entry,
    a: datetime,
    b: datetime | None,
) -> v.Bins:
    """The kept window moved to [a, b): the tests that entered added, those that left
    subtracted. Stale when it cannot be (moved back or too far, an end changed kind)."""
    leave, enter = _shift(info, kept, a, b)
    bins = kept.bins
    if not isinstance(bins, v.Bins):
        raise Stale
    if leave is not None:
        bins = _subtract(bins, _slice(con, state, info, *leave), us(a))
    if enter is not None:
        bins = _add(bins, _slice(con, state, info, *enter))
    return bins


Span = tuple[datetime, datetime | None]


def _shift(info: v.SourceInfo, kept: Entry, a: datetime, b: datetime | None) -> tuple[
    Span | None, Span | None
]:  # fmt: skip
    """The tests that left the kept window and those that entered it, moved to [a, b)
    (None: none). Stale when it cannot be moved (back or too far, an end changed kind)."""
    if (kept.b is None) != (b is None) or a < kept.a:
        raise Stale
    if b is None:  # to the newest test: what entered is every test after the kept newest
        if kept.latest is None or info.latest is None or info.latest < kept.latest:
            raise Stale
        enter: Span = (kept.latest + timedelta(microseconds=1), None)
        moved = info.latest - kept.latest
    else:
        assert kept.b is not None
        if b < kept.b:
            raise Stale
        enter, moved = (kept.b, b), b - kept.b
    if max(moved, a - kept.a) > MAX_SHIFT or a > enter[0]:
        raise Stale  # the slices would be most of the window
    return (kept.a, a) if a > kept.a else None, enter if moved > timedelta(0) else None


def _slice(
    con: duckdb.DuckDBPyConnection,
    state: MatrixState,
    info: v.SourceInfo,
    a: datetime,
    b: datetime | None,
) -> v.Bins:
    """The Bins of the tests of a slice [a, b), read with every slice the source's kept
    RTT windows need this build (_read_rtt_slices): the first one asked for reads them
    all."""
    key = (info.name, a, b)
    if key not in state.slices:
        spans = {(a, b)}
        if info.name not in state.rtt_sources:
            state.rtt_sources.add(info.name)
            spans |= set(_rtt_slices_needed(state, info))
        _read_rtt_slices(con, state, info.name, spans)
    return state.slices[key]


def _rtt_slices_needed(state: MatrixState, info: v.SourceInfo) -> list[Span]:
    """Every slice of every kept RTT window of the source that can be moved."""
    out = []
    for name, kept in state.entries.items():
        if kept.source != info.name or not isinstance(kept.bins, v.Bins):
            continue
        _source, window, which = name.rsplit("|", 2)
        span = _value_span(info, window, which == "previous")
        if span is None:
            continue
        try:
            out += [s for s in _shift(info, kept, *span) if s is not None]
        except Stale:
            continue
    return out


def _read_rtt_slices(
    con: duckdb.DuckDBPyConnection, state: MatrixState, source: str, spans: set[Span]
) -> None:
    """The Bins of the tests in each span (state.slices), as views.binned_range bins
    them (the bins DuckDB's, as the store's), grouped here: two queries for all (a
    6-hourly build's RTT slices are seven sweeps; each read alone is two queries)."""
    import numpy as np

    from orchestrator.history.histogram import bin_sql

    m = v.METRICS["rtt"]
    ordered = sorted(spans, key=lambda s: (s[0], s[1] is None, s[1] or s[0]))
    # each span a range of its own, tagged: DuckDB prunes each by the column's zone maps
    # (an OR of them it would not)
    tests_sql, samples_sql, params = [], [], []
    for i, (a, b) in enumerate(ordered):
        where = (
            f"source = ? AND status = 'ok' AND {v.valid_sql(m.measure)} AND started_utc >= ?"
            + (" AND started_utc < ?" if b is not None else "")
        )
        params += [source, a, *([b] if b is not None else [])]
        tests_sql.append(
            f"SELECT {i} AS s, p.pair, epoch_us(started_utc) AS t FROM measurements m "
            f"JOIN pairs p ON m.src = p.src AND m.dst = p.dst WHERE {where} AND {m.present_sql}"
        )
        samples_sql.append(
            f"SELECT {i} AS s, p.pair, {bin_sql('x')} AS bin, x FROM (SELECT src, dst, "
            f"unnest({m.samples_sql}) AS x FROM measurements WHERE {where}) r "
            "JOIN pairs p ON r.src = p.src AND r.dst = p.dst WHERE x IS NOT NULL"
        )
    tests = con.execute(" UNION ALL ".join(tests_sql), params).fetchnumpy()
    samples = con.execute(" UNION ALL ".join(samples_sql), params).fetchnumpy()
    test_span = np.asarray(tests["s"], dtype=np.int64)
    test_pair = np.asarray(tests["pair"], dtype=np.int64)
    test_t = np.asarray(tests["t"], dtype=np.int64)
    span = np.asarray(samples["s"], dtype=np.int64)
    x = np.asarray(samples["x"], dtype=np.float64)
    keys = (
        np.asarray(samples["pair"], dtype=np.int64) * (1 << 32)
        + np.asarray(samples["bin"], dtype=np.int64)
        + (1 << 31)
    )  # views.bin_key_sql
    for i, (a, b) in enumerate(ordered):
        inside = span == i
        order = np.argsort(keys[inside], kind="stable")
        key, xs = keys[inside][order], x[inside][order]
        firsts = v.run_starts(key)
        n = np.diff(np.append(firsts, len(key)))
        counted = test_span == i
        by_pair = np.argsort(test_pair[counted], kind="stable")
        pair, when = test_pair[counted][by_pair], test_t[counted][by_pair]
        pfirsts = v.run_starts(pair)
        lo = np.minimum.reduceat(xs, firsts) if len(xs) else xs
        state.slices[source, a, b] = v.Bins(
            key=key[firsts], n=n, lo=lo,
            hi=np.maximum.reduceat(xs, firsts) if len(xs) else xs,
            total=_snapped(np.add.reduceat(xs, firsts) if len(xs) else xs),
            pair=pair[pfirsts], tests=np.diff(np.append(pfirsts, len(pair))),
            newest_us=np.maximum.reduceat(when, pfirsts) if len(when) else when,
            km=np.full(len(pfirsts), np.nan),
            # the tests holding its extremes start at a or after
            lo_t=np.full(len(firsts), us(a), dtype=np.int64),
            hi_t=np.full(len(firsts), us(a), dtype=np.int64),
        )  # fmt: skip


def _positions(keys: Any, of: Any) -> Any:
    """Where each of `of` is in sorted `keys` (each must be there)."""
    import numpy as np

    at = np.searchsorted(keys, of)
    if len(of) and (at.max() >= len(keys) or not np.array_equal(keys[at], of)):
        raise Stale
    return at


def _subtract(bins: v.Bins, out: v.Bins, a: int) -> v.Bins:
    """bins less the samples and tests of `out` (which they must hold: the tests before
    `a`, UNIX microseconds, the window's new start). A bin whose smallest (largest)
    sample equals out's loses it, unknown (NaN) unless a test of a or after holds one
    equal to it too (lo_t, hi_t) or none is left."""
    import numpy as np

    assert bins.total is not None and out.total is not None  # the state keeps its sums
    assert bins.lo_t is not None and bins.hi_t is not None
    n, lo, hi, total = bins.n.copy(), bins.lo.copy(), bins.hi.copy(), bins.total.copy()
    at = _positions(bins.key, out.key)
    n[at] -= out.n
    total[at] = _snapped(total[at] - out.total)
    if (n[at] < 0).any():
        raise Stale
    lo[at] = np.where((out.lo <= lo[at]) & (bins.lo_t[at] < a), np.nan, lo[at])
    hi[at] = np.where((out.hi >= hi[at]) & (bins.hi_t[at] < a), np.nan, hi[at])
    tests = bins.tests.copy()
    pat = _positions(bins.pair, out.pair)
    tests[pat] -= out.tests
    if (tests[pat] < 0).any():
        raise Stale
    # a pair with tests left keeps its newest one (the tests that left are older)
    keep, pkeep = n > 0, tests > 0
    return v.Bins(
        key=bins.key[keep], n=n[keep], lo=lo[keep], hi=hi[keep], total=total[keep],
        pair=bins.pair[pkeep], tests=tests[pkeep], newest_us=bins.newest_us[pkeep],
        km=bins.km[pkeep], lo_t=bins.lo_t[keep], hi_t=bins.hi_t[keep],
    )  # fmt: skip


def _merged(keys: Any, more: Any) -> Any:
    """Sorted `keys` with those of sorted `more` it lacks inserted."""
    import numpy as np

    if not len(keys):
        return more.copy()
    at = np.searchsorted(keys, more)
    lacks = (at >= len(keys)) | (keys[np.minimum(at, len(keys) - 1)] != more)
    return np.insert(keys, at[lacks], more[lacks]) if lacks.any() else keys


def _add(bins: v.Bins, more: v.Bins) -> v.Bins:
    """bins with the samples and tests of `more` (newer tests) added."""
    import numpy as np

    assert bins.lo_t is not None and bins.hi_t is not None  # the state keeps them
    assert more.lo_t is not None and more.hi_t is not None
    key = _merged(bins.key, more.key)
    n = np.zeros(len(key), dtype=np.int64)
    lo = np.full(len(key), np.inf)
    hi = np.full(len(key), -np.inf)
    total = np.zeros(len(key))
    lo_t = np.full(len(key), _NEVER, dtype=np.int64)
    hi_t = lo_t.copy()
    at, mat = np.searchsorted(key, bins.key), np.searchsorted(key, more.key)
    n[at], lo[at], hi[at], total[at] = bins.n, bins.lo, bins.hi, bins.total
    lo_t[at], hi_t[at] = bins.lo_t, bins.hi_t
    n[mat] += more.n
    total[mat] = _snapped(total[mat] + more.total)
    # the newer tests' extreme, where it is the bin's, was seen when they were
    lo_t[mat] = np.where(more.lo <= lo[mat], np.maximum(lo_t[mat], more.lo_t), lo_t[mat])
    hi_t[mat] = np.where(more.hi >= hi[mat], np.maximum(hi_t[mat], more.hi_t), hi_t[mat])
    lo[mat] = np.minimum(lo[mat], more.lo)  # NaN (unknown) stays unknown
    hi[mat] = np.maximum(hi[mat], more.hi)
    pair = _merged(bins.pair, more.pair)
    tests = np.zeros(len(pair), dtype=np.int64)
    newest = np.full(len(pair), np.iinfo(np.int64).min, dtype=np.int64)
    pat, pmat = np.searchsorted(pair, bins.pair), np.searchsorted(pair, more.pair)
    tests[pat], newest[pat] = bins.tests, bins.newest_us
    tests[pmat] += more.tests
    newest[pmat] = np.maximum(newest[pmat], more.newest_us)
    return v.Bins(key=key, n=n, lo=lo, hi=hi, total=total, pair=pair, tests=tests,
                  newest_us=newest, km=np.full(len(pair), np.nan), lo_t=lo_t,
                  hi_t=hi_t)  # fmt: skip


def _read_again(
    con: duckdb.DuckDBPyConnection,
    source: str,
    a: datetime,
    b: datetime | None,
    bins: v.Bins,
    rows: Any,
) -> v.Bins | None:
    """bins with the extremes of `rows` (and when they were last seen) read from the
    store; None when the store's counts of those rows differ."""
    import numpy as np

    keys = bins.key[rows]
    fresh = v.binned_range(
        con, source, a, b, np.unique(v.bin_pairs(keys)).tolist(), counts=False,
        keys=keys.tolist(), witnesses=True,
    )  # fmt: skip
    if not np.array_equal(keys, fresh.key) or not np.array_equal(bins.n[rows], fresh.n):
        return None
    assert bins.lo_t is not None and bins.hi_t is not None  # the state keeps them
    lo, hi, lo_t, hi_t = bins.lo.copy(), bins.hi.copy(), bins.lo_t.copy(), bins.hi_t.copy()
    lo[rows], hi[rows], lo_t[rows], hi_t[rows] = fresh.lo, fresh.hi, fresh.lo_t, fresh.hi_t
    return replace(bins, lo=lo, hi=hi, lo_t=lo_t, hi_t=hi_t)


def _known(
    con: duckdb.DuckDBPyConnection,
    source: str,
    a: datetime,
    b: datetime | None,
    bins: v.Bins,
    asked: Sequence[str] = _QUANTILES,
) -> tuple[v.Bins, tuple[Any, Any]]:
    """bins with every unknown extreme the quantiles `asked` read taken from the store,
    and those quantiles. They read a pair's smallest sample (its first bin's lo) or its
    largest (its last bin's hi) alone (histogram.quantiles; min and max always): a pair
    whose one they read left has its first and last rows read again, two rows of the
    pairs that need them. Stale pairs (counts that differ from the store's) are never
    kept: then the window is read whole."""
    import numpy as np

    if not len(bins.n):
        return bins, (np.zeros(0, dtype=np.int64), np.zeros((0, len(asked))))
    firsts, qs = v.bins_quantiles(bins, asked)
    bad = np.isnan(qs).any(axis=1)
    if not bad.any():
        return bins, (firsts, qs)
    lasts = np.append(firsts[1:], len(bins.n)) - 1
    ends = np.union1d(firsts[bad], lasts[bad])
    unknown = ends[np.isnan(bins.lo[ends]) | np.isnan(bins.hi[ends])]
    # (never empty: only those rows' extremes are read)
    known = _read_again(con, source, a, b, bins, unknown) if len(unknown) else None
    # never trust a state that disagrees with the store
    bins = known if known is not None else _whole(con, source, a, b)
    return bins, v.bins_quantiles(bins, asked)


# ---- the one-value metrics' windows ------------------------------------------------------


def value_cells(
    con: duckdb.DuckDBPyConnection,
    state: MatrixState,
    info: v.SourceInfo,
    metric: str,
    window: str,
    previous: bool,
    stats: Sequence[str] = v.SITE_STATS,
    table: bool = False,
) -> list[v.Cell] | v.CellTable:
    """views.window_cells of a one-value metric (flagged tests left out, `stats`):
    a window of days (every one: a day's is updated by a tenth of what reading it
    costs, none has extremes to read again) from its kept entry updated, or read
    whole, into state.made. Its percentiles are DuckDB's quantile_cont of the same
    values, to the bit; its mean the sum of the values in order over their count
    (DuckDB's avg adds in an order of its own: the last bits may differ)."""
    span = _value_span(info, window, previous)
    if span is None:
        return v.window_cells(con, info, metric, window, previous, stats=stats)
    a, b = span
    name = _name(info.name, f"{metric}:{window}", previous)
    kept = state.entries.get(name)
    values = None
    if kept is not None and isinstance(kept.bins, Values):
        try:
            leave, enter = _shift(info, kept, a, b)
            values = _updated(
                kept.bins,
                None if leave is None else _value_slice(con, state, info, metric, *leave),
                None if enter is None else _value_slice(con, state, info, metric, *enter),
            )
            state.used.append(name)
        except Stale:
            values = None
    if values is None:
        values = read_values(con, info.name, metric, a, b)
    state.made[name] = Entry(info.name, a, b, info.latest, values)
    if table:  # a views.CellTable
        return values_table(values, stats)
    return values_cells(con, values, stats, _names(con, state))


def _value_span(info: v.SourceInfo, window: str, previous: bool) -> Span | None:
    """The tests [a, b) of a one-value window of days (None: another window)."""
    days = v.window_days(window)
    start, _end = v.window_bounds(info, window)
    if days is None or start is None:
        return None
    return (start - timedelta(days=days), start) if previous else (start, None)


def latest_cells(
    con: duckdb.DuckDBPyConnection,
    state: MatrixState,
    info: v.SourceInfo,
    metric: str,
    table: bool = False,
) -> list[v.Cell] | v.CellTable:
    """views.window_cells' "latest" window of a one-value metric (flagged tests left out,
    every statistic; `table`: as a views.CellTable, rows in pair order): each pair's
    newest test, the one-value metrics' read in one query of the source's last day. As
    views.window_cells reads it when every pair has a test in that day and none has
    two at its newest start (which of those it takes is DuckDB's choice); otherwise
    read by it."""
    if (info.name, metric) not in state.latest:
        _read_latest(con, state, info)
    found = state.latest.get((info.name, metric))
    if found is None:
        return v.window_cells(con, info, metric, "latest", stats=v.SITE_STATS)
    return found if table else found.cells(_names(con, state))


def _read_latest(con: duckdb.DuckDBPyConnection, state: MatrixState, info: v.SourceInfo) -> None:
    import numpy as np

    metrics = [m for m, x in v.METRICS.items() if x.one_value]
    state.latest.update({(info.name, m): None for m in metrics})
    if info.latest is None:
        return
    columns = _metric_columns(metrics)
    rows = con.execute(
        f"SELECT p.pair, epoch_us(started_utc) AS t, distance_km AS km, limiter, {columns} "
        "FROM measurements m JOIN pairs p ON m.src = p.src AND m.dst = p.dst "
        "WHERE source = ? AND started_utc >= ? ORDER BY p.pair, started_utc",
        [info.name, info.latest - timedelta(days=1)],
    ).fetchnumpy()
    pairs = len(_names(con, state))
    pair = np.asarray(rows["pair"], dtype=np.int64)
    t = np.asarray(rows["t"], dtype=np.int64)
    km = np.ma.filled(np.ma.asarray(rows["km"], dtype=np.float64), np.nan)
    limiter = np.ma.asarray(rows["limiter"]).tolist()  # None where null
    for i, m in enumerate(metrics):
        ok = np.flatnonzero(np.ma.filled(rows[f"ok{i}"], False))
        if not len(ok) or len(np.unique(pair[ok])) < pairs:
            continue  # a pair without a test in the day: its newest is older
        last = ok[np.append(pair[ok][1:] != pair[ok][:-1], True)]  # each pair's newest
        before = ok[np.maximum(np.searchsorted(ok, last) - 1, 0)]  # the test before it
        if ((before != last) & (pair[before] == pair[last]) & (t[before] == t[last])).any():
            continue
        x = np.asarray(np.ma.getdata(rows[f"x{i}"])[last], dtype=np.float64)
        one = np.ones(len(last), dtype=np.int64)
        state.latest[info.name, m] = v.CellTable(
            pair=pair[last],
            tests=one,
            samples=one,
            stats=np.repeat(x[:, None], len(v.STATS), axis=1),
            newest_us=t[last],
            limiter=[limiter[at] or None for at in last.tolist()],
            km=km[last],
        )


def _names(con: duckdb.DuckDBPyConnection, state: MatrixState) -> dict[int, tuple[str, str]]:
    """views.pair_names, read once a build."""
    if state.names is None:
        state.names = v.pair_names(con)
    return state.names


def _tests_sql(metric: str) -> str:
    """SQL true for the tests a one-value metric's window holds (valid, ok, present)."""
    m = v.metric(metric)
    return f"(status = 'ok' AND {m.present_sql} AND {v.valid_sql(m.measure)})"


def _limiter_sql(metric: str) -> str:
    """A test's limiter as kept: throughput's (the matrix shows no other metric's)."""
    return "coalesce(limiter, '')" if metric == "throughput" else "''"


def read_values(
    con: duckdb.DuckDBPyConnection, source: str, metric: str, a: datetime, b: datetime | None
) -> Values:
    """The Values of the metric's valid ok tests of `source` starting in [a, b) (b None:
    from a on)."""
    import numpy as np

    where = f"source = ? AND {_tests_sql(metric)} AND started_utc >= ?"
    where += " AND started_utc < ?" if b is not None else ""
    params = [source, a, *([b] if b is not None else [])]
    tests = (
        f"(SELECT p.pair, {v.metric(metric).run_sql} AS x, limiter, started_utc "
        f"FROM measurements m JOIN pairs p ON m.src = p.src AND m.dst = p.dst WHERE {where})"
    )
    # the rows as they come, sorted here: a third of the time DuckDB takes to group or
    # sort them (a year's 8.5M)
    found = con.execute(f"SELECT pair, x FROM {tests}", params).fetchnumpy()
    lims = con.execute(
        f"SELECT pair, {_limiter_sql(metric)} AS lim, count(*) AS n, "
        f"epoch_us(max(started_utc)) AS newest FROM {tests} GROUP BY pair, lim "
        "ORDER BY pair, lim",
        params,
    ).fetchnumpy()
    lim_pair = np.asarray(lims["pair"], dtype=np.int32)
    per_pair = v.run_starts(lim_pair)
    newest = np.asarray(lims["newest"], dtype=np.int64)
    return _values_of(
        found["pair"],
        found["x"],
        lim_pair,
        np.asarray(lims["lim"], dtype=str),
        np.asarray(lims["n"], dtype=np.int64),
        np.maximum.reduceat(newest, per_pair) if len(newest) else newest,
    )


def _values_of(pair: Any, x: Any, lim_pair: Any, lim: Any, lim_n: Any, newest_us: Any) -> Values:
    """The Values of tests (each one's `pair` and value `x`, in any order), their
    limiters' counts (rows sorted by pair, then limiter) and each pair's newest test
    (in pair order)."""
    import numpy as np

    keys = np.empty(len(x), dtype=np.complex128)
    keys.real, keys.imag = pair, x
    keys.sort()
    firsts = v.run_starts(keys)
    row_pair = keys.real[firsts].astype(np.int32)
    per_pair = v.run_starts(row_pair)
    return Values(
        pairs=row_pair[per_pair],
        starts=np.append(per_pair, len(firsts)).astype(np.int64),
        x=keys.imag[firsts].copy(),
        n=np.diff(np.append(firsts, len(keys))).astype(np.int32),
        newest_us=np.asarray(newest_us, dtype=np.int64),
        lim_pair=np.asarray(lim_pair, dtype=np.int32),
        lim=np.asarray(lim, dtype=str),
        lim_n=np.asarray(lim_n, dtype=np.int32),
    )


def _value_slice(
    con: duckdb.DuckDBPyConnection,
    state: MatrixState,
    info: v.SourceInfo,
    metric: str,
    a: datetime,
    b: datetime | None,
) -> Values:
    """The Values of a slice, read with every slice the source's kept windows need this
    build (_read_slices): the first one asked for reads them all."""
    key = (info.name, metric, a, b)
    if key not in state.value_slices:
        spans = {(a, b)}
        metrics = {metric}
        if info.name not in state.value_sources:
            state.value_sources.add(info.name)
            for m, span in _slices_needed(state, info):
                metrics.add(m)
                spans.add(span)
        _read_slices(con, state, info.name, sorted(metrics), spans)
    return state.value_slices[key]


def _slices_needed(state: MatrixState, info: v.SourceInfo) -> list[tuple[str, Span]]:
    """(metric, slice) of every kept one-value window of the source that can be moved."""
    out = []
    for name, kept in state.entries.items():
        if kept.source != info.name or not isinstance(kept.bins, Values):
            continue
        _source, what, which = name.rsplit("|", 2)
        metric, _sep, window = what.rpartition(":")
        span = _value_span(info, window, which == "previous")
        if span is None:
            continue
        try:
            slices = _shift(info, kept, *span)
        except Stale:
            continue
        out += [(metric, s) for s in slices if s is not None]
    return out


def _metric_columns(metrics: Sequence[str], limiters: bool = False) -> str:
    """SQL of each metric's columns, numbered as `metrics`: ok<i> (a test of it counts),
    x<i> (its value then) and, with `limiters`, lim<i>."""
    return ", ".join(
        f"{_tests_sql(m)} AS ok{i}, CASE WHEN {_tests_sql(m)} THEN {v.metric(m).run_sql} END "
        f"AS x{i}" + (f", {_limiter_sql(m)} AS lim{i}" if limiters else "")
        for i, m in enumerate(metrics)
    )


def _read_slices(
    con: duckdb.DuckDBPyConnection,
    state: MatrixState,
    source: str,
    metrics: Sequence[str],
    spans: set[Span],
) -> None:
    """The Values of each metric's tests in each span (state.value_slices): one query
    for all, its rows split here (a 6-hourly build's spans are a dozen sweeps; each
    read alone is a query of its own per metric)."""
    import numpy as np

    ordered = sorted(spans, key=lambda s: (s[0], s[1] is None, s[1] or s[0]))
    ranges = " OR ".join(
        "started_utc >= ?" + (" AND started_utc < ?" if b is not None else "") for _a, b in ordered
    )
    params: list[Any] = [source]
    for a, b in ordered:
        params += [a, *([b] if b is not None else [])]
    columns = _metric_columns(metrics, limiters=True)
    found = con.execute(
        f"SELECT p.pair, epoch_us(started_utc) AS t, {columns} FROM measurements m "
        f"JOIN pairs p ON m.src = p.src AND m.dst = p.dst WHERE source = ? AND ({ranges})",
        params,
    ).fetchnumpy()
    pair = np.asarray(found["pair"], dtype=np.int32)
    t = np.asarray(found["t"], dtype=np.int64)
    for a, b in ordered:
        inside = t >= us(a)
        if b is not None:
            inside &= t < us(b)
        for i, m in enumerate(metrics):
            rows = np.flatnonzero(inside & np.ma.filled(found[f"ok{i}"], False))
            x = np.asarray(np.ma.getdata(found[f"x{i}"])[rows], dtype=np.float64)
            lim = np.asarray(found[f"lim{i}"][rows], dtype=str)
            state.value_slices[source, m, a, b] = _values_of(
                pair[rows], x, *_counted(pair[rows], lim, t[rows])
            )


def _counted(pair: Any, lim: Any, t: Any) -> tuple[Any, Any, Any, Any]:
    """Tests' limiter counts as read_values groups them (pair, limiter, count; sorted by
    pair, then limiter) and each pair's newest start (pair order)."""
    import numpy as np

    names, code = np.unique(lim, return_inverse=True)
    keys, counts = np.unique(pair.astype(np.int64) * max(len(names), 1) + code, return_counts=True)
    order = np.argsort(pair, kind="stable")
    per_pair = v.run_starts(pair[order])
    newest = np.maximum.reduceat(t[order], per_pair) if len(t) else t
    return keys // max(len(names), 1), names[keys % max(len(names), 1)], counts, newest


def _packed(values: Values) -> dict[str, Any]:
    """values' fields for the file: each pair's rows counted rather than bounded, the
    tests of each row in the smallest integer that holds them (a throughput is seldom
    seen twice: a byte each, for a year's 8.5M rows)."""
    import numpy as np

    fields = {k: x for k, x in vars(values).items() if k != "starts"}
    most = int(values.n.max()) if len(values.n) else 0
    fields["n"] = np.asarray(values.n, dtype=np.min_scalar_type(most))
    return {**fields, "rows": np.diff(values.starts)}


def _unpacked(arrays: dict[str, Any]) -> Values:
    import numpy as np

    fields = {k: x for k, x in arrays.items() if k != "rows"}
    starts = np.zeros(len(arrays["rows"]) + 1, dtype=np.int64)
    np.cumsum(arrays["rows"], out=starts[1:])
    return Values(starts=starts, **fields)


def _row_pairs(values: Values) -> Any:
    """Each row's pair (for a slice's few rows)."""
    import numpy as np

    return np.repeat(values.pairs, np.diff(values.starts))


def _search(values: Values, pair: Any, x: Any) -> tuple[Any, Any]:
    """Where each (pair, x) is, or would go, in values' rows (sorted by pair, then
    value), and whether it is there: a binary search within each pair's rows, all at
    once (a year's 8.5M rows are never copied to search them)."""
    import numpy as np

    at = np.searchsorted(values.pairs, pair)
    inside = at < len(values.pairs)
    has = np.zeros(len(pair), dtype=bool)
    has[inside] = values.pairs[at[inside]] == pair[inside]
    # a pair not there: where it would go, before the next pair's rows
    lo = values.starts[at]
    hi = np.where(has, values.starts[np.minimum(at + 1, len(values.pairs))], lo)
    while (lo < hi).any():
        mid = (lo + hi) // 2
        less = np.zeros(len(mid), dtype=bool)
        open_ = lo < hi
        less[open_] = values.x[mid[open_]] < x[open_]
        lo = np.where(open_ & less, mid + 1, lo)
        hi = np.where(open_ & ~less, mid, hi)
    found = np.zeros(len(lo), dtype=bool)
    within = has & (lo < values.starts[np.minimum(at + 1, len(values.pairs))])
    found[within] = values.x[lo[within]] == x[within]
    return lo, found


def _updated(values: Values, out: Values | None, more: Values | None) -> Values:
    """values less the tests of `out` (which they must hold; older than those left)
    and with those of `more` (newer ones) added, every array written once: the rows
    whose tests all left taken out and the new ones put in, in one pass."""
    import numpy as np

    if out is None and more is None:
        return values
    none = _values_of(np.zeros(0), np.zeros(0), [], [], [], [])
    out, more = out or none, more or none
    # each distinct (pair, x) of the slices, the tests that left and entered with it
    pair = np.concatenate((_row_pairs(out), _row_pairs(more)))
    keys = np.empty(len(pair), dtype=np.complex128)
    keys.real, keys.imag = pair, np.concatenate((out.x, more.x))
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    firsts = v.run_starts(keys)
    left = np.concatenate((out.n, np.zeros(len(more.n), dtype=np.int32)))[order]
    entered = np.concatenate((np.zeros(len(out.n), dtype=np.int32), more.n))[order]
    left, entered = np.add.reduceat(left, firsts), np.add.reduceat(entered, firsts)
    d_pair, d_x = keys.real[firsts].astype(np.int32), keys.imag[firsts]
    at, found = _search(values, d_pair, d_x)
    if (left[~found] > 0).any():
        raise Stale
    was = np.asarray(values.n[at[found]], dtype=np.int64)
    now = was - left[found]
    if (now < 0).any():
        raise Stale
    now += entered[found]
    gone = at[found][now == 0]  # rows whose tests all left
    fresh = ~found  # rows new to the window, before old row `at`
    x = _spliced(values.x, gone, at[fresh], d_x[fresh], np.float64)
    n = _spliced(values.n, gone, at[fresh], entered[fresh], np.int32)
    # the rows still there, where they went: less those gone before, with those put in
    stays, counts = at[found][now > 0], now[now > 0]
    n[stays - np.searchsorted(gone, stays) + np.searchsorted(at[fresh], stays, "right")] = counts
    # each pair's rows: its old ones, less those gone, with the new ones
    pairs = np.union1d(values.pairs, d_pair)
    rows = np.zeros(len(pairs), dtype=np.int64)
    rows[np.searchsorted(pairs, values.pairs)] = np.diff(values.starts)
    gone_pair = values.pairs[np.searchsorted(values.starts, gone, side="right") - 1]
    np.subtract.at(rows, np.searchsorted(pairs, gone_pair), 1)
    np.add.at(rows, np.searchsorted(pairs, d_pair[fresh]), 1)
    newest = np.full(len(pairs), np.iinfo(np.int64).min, dtype=np.int64)
    newest[np.searchsorted(pairs, values.pairs)] = values.newest_us
    at_more = np.searchsorted(pairs, more.pairs)
    newest[at_more] = np.maximum(newest[at_more], more.newest_us)
    still = rows > 0
    starts = np.zeros(int(still.sum()) + 1, dtype=np.int64)
    np.cumsum(rows[still], out=starts[1:])
    return Values(
        pairs=pairs[still].astype(np.int32),
        starts=starts,
        x=x,
        n=n,
        newest_us=newest[still],
        **_limiters_updated(values, out, more, pairs[still]),
    )


def _spliced(a: Any, gone: Any, at: Any, more: Any, dtype: Any) -> Any:
    """A new array of `dtype`: `a` without its rows `gone` and with `more` put before
    its rows `at` (both sorted). A long array (a year's 8.5M rows) is copied once, a
    piece between two changes at a time, rather than through masks that copy each row
    twice; a short one (a few rows per change) through masks, with no loop."""
    import numpy as np

    changes = len(gone) + len(at)
    if len(a) < 256 * changes:
        keep = np.ones(len(a), dtype=bool)
        keep[gone] = False
        new_at = at - np.searchsorted(gone, at) + np.arange(len(at))
        out = np.empty(len(a) - len(gone) + len(at), dtype=dtype)
        mask = np.ones(len(out), dtype=bool)
        mask[new_at] = False
        out[mask], out[new_at] = a[keep], more
        return out
    # the cuts in order: a row put in before a row that is gone there
    where = np.concatenate((at, gone))
    dropped = np.concatenate((np.zeros(len(at), dtype=bool), np.ones(len(gone), dtype=bool)))
    order = np.argsort(where * 2 + dropped, kind="stable")
    which = np.concatenate((np.arange(len(at)), np.zeros(len(gone), dtype=np.int64)))[order]
    put = np.asarray(more, dtype=dtype)
    parts, start = [], 0
    for w, d, j in zip(where[order].tolist(), dropped[order].tolist(), which.tolist(), strict=True):
        parts.append(a[start:w])
        if d:
            start = w + 1
        else:
            parts.append(put[j : j + 1])
            start = w
    parts.append(a[start:])
    return np.concatenate(parts, dtype=dtype)


def _limiters_updated(values: Values, out: Values, more: Values, pairs: Any) -> dict[str, Any]:
    """The limiter counts of values less out's, plus more's: the rows of the pairs
    with tests (`pairs`) with a count, sorted by pair, then limiter."""
    import numpy as np

    names, code = np.unique(np.concatenate((values.lim, out.lim, more.lim)), return_inverse=True)
    base = max(len(names), 1)
    keys = np.concatenate((values.lim_pair, out.lim_pair, more.lim_pair)).astype(np.int64) * base
    keys += code
    sign = np.repeat(np.array([1, -1, 1]), [len(values.lim), len(out.lim), len(more.lim)])
    counts = np.concatenate((values.lim_n, out.lim_n, more.lim_n)).astype(np.int64) * sign
    unique, inverse = np.unique(keys, return_inverse=True)
    total = np.zeros(len(unique), dtype=np.int64)
    np.add.at(total, inverse, counts)
    if (total < 0).any():
        raise Stale
    pair = unique // base
    wanted = (total > 0) & np.isin(pair, pairs)
    return {
        "lim_pair": pair[wanted].astype(np.int32),
        "lim": names[unique[wanted] % base],
        "lim_n": total[wanted].astype(np.int32),
    }


def values_cells(
    con: duckdb.DuckDBPyConnection,
    values: Values,
    stats: Sequence[str] = v.SITE_STATS,
    names: dict[int, tuple[str, str]] | None = None,
) -> list[v.Cell]:
    """The Cells of values' pairs, sorted by (src, dst), with `stats`; `names`: each
    pair's (src, dst), views.pair_names(con), read already."""
    if not len(values.n):
        return []
    return values_table(values, stats).cells(names if names is not None else v.pair_names(con))


def values_table(values: Values, stats: Sequence[str] = v.SITE_STATS) -> v.CellTable:
    """values_cells as a views.CellTable (rows in pair order)."""
    import numpy as np

    if not len(values.n):
        return v.empty_table()
    firsts = values.starts[:-1]
    # a value seldom has two tests (a throughput, of 8.5M a year): then the k-th test of
    # a pair is its k-th row, without counting them
    ones = int(values.n.max()) == 1
    cum = None if ones else np.cumsum(values.n, dtype=np.int64)
    before = values.starts if cum is None else np.append(0, cum[values.starts[1:] - 1])
    tests = np.diff(before)
    before = before[:-1]
    table = np.full((len(firsts), len(v.STATS)), np.nan)
    for stat, q in v.QUANTILES.items():
        if stat not in stats:
            continue
        # as DuckDB's quantile_cont: the order statistics at floor and ceil of (N - 1) q,
        # lo (1 - d) + hi d between them
        h = (tests - 1).astype(np.float64) * q
        lo, hi = np.floor(h), np.ceil(h)
        at_lo, at_hi = before + lo.astype(np.int64), before + hi.astype(np.int64)
        if cum is not None:
            at_lo = np.searchsorted(cum, at_lo, side="right")
            at_hi = np.searchsorted(cum, at_hi, side="right")
        x_lo, x_hi = values.x[at_lo], values.x[at_hi]
        d = h - lo
        table[:, v.STATS.index(stat)] = np.where(lo == hi, x_lo, x_lo * (1 - d) + x_hi * d)
    if "mean" in stats:  # each value times its tests (x * 1 is x: not multiplied)
        table[:, v.STATS.index("mean")] = (
            np.add.reduceat(values.x if ones else values.x * values.n, firsts) / tests
        )
    # each pair's limiter: the one of most tests (rows by name: the first of a tie)
    named = np.flatnonzero(values.lim != "")
    order = named[np.lexsort((named, -values.lim_n[named], values.lim_pair[named]))]
    best = order[v.run_starts(values.lim_pair[order])]
    limiter: list[str | None] = [None] * len(firsts)
    for at, lim in zip(
        np.searchsorted(values.pairs, values.lim_pair[best]).tolist(),
        values.lim[best].tolist(),
        strict=True,
    ):
        limiter[at] = lim
    return v.CellTable(
        pair=values.pairs.astype(np.int64),
        tests=tests,
        samples=tests,
        stats=table,
        newest_us=np.asarray(values.newest_us, dtype=np.int64),
        limiter=limiter,
    )
