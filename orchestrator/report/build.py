"""The report of one or more sweeps: read measurements, summarise, chart.

`build_report(sweep_dir)` is what a sweep calls at its end; `interregion
report` calls `load_inputs` and `write_report` with the user's choices.
Rows are read into columns (analyze.Measurements), so a million rows stay well under a
gigabyte: a plain file of this version's (every number a plain decimal, every region
known, a flags column) by DuckDB's CSV reader and numpy, anything else row by row with
the csv module, which also names each row it drops and why.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.core import (
    CATALOG,
    UserError,
    building,
    counted,
    debug,
    distance_km,
    median,
    step,
)
from orchestrator.model import Catalog, Region, is_emulated, load_catalog
from orchestrator.netmodel import DEFAULT_MODEL, rate_scale_tag
from orchestrator.plan import ALLOWANCE_COLUMNS, STEAL_COLUMNS, SentinelCheck, sentinel_check
from orchestrator.plan import host_flags as allowance_host_flags
from orchestrator.report import analyze, cache
from orchestrator.results import (
    ASYMMETRIC,
    CAPACITY,
    DEFAULT_TIER,
    FLAG_REASONS,
    FLAG_SEPARATOR,
    FLAGGED_MEASURES,
    FLAGS,
    INVALIDATES,
    MEASUREMENT_COLUMNS,
    MEASUREMENTS_FILE,
    MEASUREMENTS_HEADER,
    NUMERIC_COLUMNS,
    PLAIN_LINE,
    PLAIN_NUMBER,
    PUBLISHED_NUMBER,
    RTT,
    RTT_STATS,
    STAMP_PATTERN,
    SWEEP_FILE,
    TEXT_CELL,
    THROUGHPUT,
    asymmetric_rows,
    for_sweep,
    invalidates_text,
    is_default,
    is_study_dir,
    load_record_file,
    marked_rows,
    normal_tier,
    pair_key,
    parse_flags,
    read_rows,
    row_flags,
    rtt_invalid,
    throughput_invalid,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go

REQUIRED_COLUMNS = ("src_cloud", "src_region", "dst_cloud", "dst_region")
# The RTT of a test is the median of its samples (rtt_p50_ms). A source that published
# only the mean (the public data sets) is read as the mean, and the report says so.
RTT_COLUMN = "rtt_p50_ms"
RTT_MEAN_COLUMN = "rtt_avg_ms"
METRIC_COLUMNS = (RTT_COLUMN, RTT_MEAN_COLUMN, "throughput_bps")
# Tried in this order on the header line: the first that yields the required columns wins.
DELIMITERS = (",", ";", "\t", "|")
# Above these a value is a unit or typing mistake, not a measurement.
MAX_RTT_MS = 3_600_000.0  # an hour
MAX_THROUGHPUT_BPS = 1e15  # 1 Pbit/s
MAX_DISTANCE_KM = 20_040.0  # half the Earth's circumference, the longest geodesic
LIMITS = {RTT_COLUMN: MAX_RTT_MS, RTT_MEAN_COLUMN: MAX_RTT_MS,
          "throughput_bps": MAX_THROUGHPUT_BPS, "distance_km": MAX_DISTANCE_KM}  # fmt: skip
# Read only to compute the flags of a file that has no flags column.
FLAG_INPUT_COLUMNS = (
    *RTT_STATS,
    # receiver_exceeds_sender: the receiver's aligned count against the sender's, with
    # one congestion window allowed
    "bytes",
    "max_cwnd_bytes",
    "duration_s",
    "throughput_bps",
    "throughput_sender_bps",
    "rtt_samples",
)
BAD_LINES_SHOWN = 5  # line numbers named in the warning about rows with bad numbers
# Leading bytes of files that are not CSV text, and what to do about them.
_NOT_TEXT = (
    (b"\x1f\x8b", "is gzip-compressed: gunzip it first"),
    (b"PK\x03\x04", "is a ZIP file (an .xlsx?): export it as CSV (UTF-8)"),
    (b"\xff\xfe", "is UTF-16: save it as UTF-8"),
    (b"\xfe\xff", "is UTF-16: save it as UTF-8"),
)

# Formats for summary.csv and outliers.csv: enough digits to recompute, no noise.
_FORMATS = {
    "n": "{:d}",
    "rtt_distance_r": "{:.4f}",
    "rtt_distance_spearman": "{:.4f}",
    "route_inflation_p25": "{:.3f}",
    "route_inflation_p75": "{:.3f}",
    "rtt_intercept_ms": "{:.3f}",
    "rtt_slope_ms_per_1000km": "{:.4f}",
    "log_throughput_distance_r": "{:.4f}",
    "log_throughput_intercept": "{:.5f}",
    "log_throughput_slope_per_1000km": "{:.6f}",
    "route_inflation_median": "{:.3f}",
    "route_inflation": "{:.3f}",
    "rtt_median_over_tests_ms": "{:.3f}",
    "rtt_p90_over_tests_ms": "{:.3f}",
    "throughput_median_over_tests_bps": "{:.0f}",
    "throughput_p90_over_tests_bps": "{:.0f}",
    "distance_km": "{:.1f}",
    "rtt_ms": "{:.3f}",
    "fit_rtt_ms": "{:.3f}",
    "excess_ms": "{:.3f}",
    "robust_z": "{:.2f}",
    "route_inflation_median_ci_low": "{:.3f}",
    "route_inflation_median_ci_high": "{:.3f}",
    "rtt_median_ci_low_ms": "{:.3f}",
    "rtt_median_ci_high_ms": "{:.3f}",
    "throughput_median_ci_low_bps": "{:.0f}",
    "throughput_median_ci_high_bps": "{:.0f}",
    "rtt_slope_ci_low_ms_per_1000km": "{:.4f}",
    "rtt_slope_ci_high_ms_per_1000km": "{:.4f}",
    "rtt_intercept_ci_low_ms": "{:.3f}",
    "rtt_intercept_ci_high_ms": "{:.3f}",
    "rtt_nearest_km": "{:.1f}",
}


# (src "cloud:id", dst "cloud:id", distance_km) -> keep the row? See selection.pair_filter.
PairPredicate = Callable[[str, str, float], bool]


@dataclass
class SweepInfo:
    id: str
    started_utc: str = ""  # earliest started_utc of its rows, as written
    started_s: float = math.inf  # its UNIX time: the earliest compared as a time
    backends: set[str] = field(default_factory=set)
    meta: dict[str, Any] = field(default_factory=dict)  # sweep.json when there is one

    @property
    def emulated(self) -> bool:
        return any(is_emulated(b) for b in self.backends) or self.meta.get("emulated") is True


@dataclass
class Loaded:
    """Measurements plus what reading them found out."""

    data: analyze.Measurements
    sweeps: dict[str, SweepInfo]
    catalog: Catalog
    rows_read: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> rows
    unknown_regions: Counter[str] = field(default_factory=Counter)  # region -> rows
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # one line each, for stderr
    # the hosts' own evidence (orchestrator.plan.allowance), from the sweeps' folders
    host_flags: list[dict[str, Any]] = field(default_factory=list)
    sentinels: dict[str, SentinelCheck] = field(default_factory=dict)  # by sweep
    rtt_from_mean: int = 0  # rows whose source gave no median: their RTT is the mean
    # what was left out for flags (orchestrator.results.flags), all 0 with include_flagged:
    # flag -> rows (a row may have several); rows with any flag; measure -> rows whose
    # value of that measure was left out (a flag leaves out only what it invalidates);
    # rows left out whole (nothing valid was left)
    flagged: Counter[str] = field(default_factory=Counter)
    rows_flagged: int = 0
    measures_flagged: Counter[str] = field(default_factory=Counter)
    rows_flagged_out: int = 0
    include_flagged: bool = False
    # the capacity measure's ok rows ("src -> dst": throughput_bps of each test), kept
    # apart: every statistic, fit and chart is of single_stream rows alone
    capacity: dict[str, list[float]] = field(default_factory=dict)
    # (sweep folder, key) when these are a whole sweep folder's rows (orchestrator.report.cache)
    cache: tuple[Path, str] | None = None
    # per CSV read into columns: rows with a host counter or CPU steal cell; and, for a
    # file a site may publish as it is (results.write_parsed_rows), its rows
    evidence: dict[Path, int] = field(default_factory=dict)
    publishable: dict[Path, int] = field(default_factory=dict)
    # the rows of tests the emulator perturbed on purpose (sweep.json emulation.injected:
    # loss episodes, perturbations): row -> (what, the measures it moved); marked on the
    # charts and left out of the summary and its fits unless include_injected
    injected: dict[int, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    include_injected: bool = False

    @property
    def emulated(self) -> bool:
        """True when any row came from the emulated backend."""
        return any(s.emulated for s in self.sweeps.values())

    @property
    def all_emulated(self) -> bool:
        return bool(self.sweeps) and all(s.emulated for s in self.sweeps.values())


class _Reader:
    """Accumulates rows from several CSV files into one set of columns."""

    def __init__(
        self, catalog: Catalog, keep: PairPredicate | None, include_flagged: bool = False
    ) -> None:
        self.catalog = catalog
        self.keep = keep
        self.include_flagged = include_flagged
        # per row kept: its flags cell (as read or computed), coded: flag_names[code]
        self.flag_codes = array("i")
        self.flag_names: list[str] = [""]
        self._flag_code: dict[str, int] = {"": 0}
        self.computed = array("b")  # per row: flags computed here (no flags column)
        self.rtt_from_mean = 0
        self.by_key: dict[str, Region] = {r.key: r for r in catalog.regions}
        self.region_index: dict[str, int] = {}
        self.sweep_index: dict[str, int] = {}
        self.sweeps: dict[str, SweepInfo] = {}
        self.data = analyze.Measurements(
            regions=[],
            sweeps=[],
            src=array("i"),  # type: ignore[arg-type]
            dst=array("i"),  # type: ignore[arg-type]
            sweep=array("i"),  # type: ignore[arg-type]
            distance_km=array("d"),
            rtt_ms=array("d"),
            throughput_bps=array("d"),
            rtt_p90_ms=array("d"),
            loss_pct=array("d"),
            rtt_samples=array("d"),
            started_s=array("d"),
            tiers=[DEFAULT_TIER],
            tier=array("i"),
        )
        self.tier_index: dict[str, int] = {DEFAULT_TIER: 0}
        # the GCP network tier of the sweep being read (its sweep.json), for the rows of
        # a file without a network_tier column
        self.gcp_tier = DEFAULT_TIER
        self.rows_read = 0
        self.skipped: Counter[str] = Counter()
        self.unknown: Counter[str] = Counter()
        self.warnings: list[str] = []
        self.capacity: dict[str, list[float]] = {}
        # per file read by _columns: rows with host evidence, and the rows of a file a
        # site may publish as it is (what results.write_parsed_rows would write)
        self.evidence: dict[Path, int] = {}
        self.publishable: dict[Path, int] = {}
        self._distance_cache: dict[tuple[str, str], float] = {}
        self._keep_cache: dict[tuple[str, str], bool] = {}

    def _region(self, key: str) -> int:
        i = self.region_index.get(key)
        if i is None:
            i = self.region_index[key] = len(self.data.regions)
            self.data.regions.append(key)
        return i

    def _tier(self, tier: str) -> int:
        i = self.tier_index.get(tier)
        if i is None:
            i = self.tier_index[tier] = len(self.data.tiers)
            self.data.tiers.append(tier)
        return i

    def _sweep(self, sweep_id: str) -> int:
        i = self.sweep_index.get(sweep_id)
        if i is None:
            i = self.sweep_index[sweep_id] = len(self.data.sweeps)
            self.data.sweeps.append(sweep_id)
            self.sweeps.setdefault(sweep_id, SweepInfo(sweep_id))
        return i

    def _names(self, name: str) -> list[str]:
        """The empty name, then the catalog's clouds or region ids (`name`), sorted."""
        part = 0 if name == "cloud" else 1
        return ["", *sorted({key.split(":", 1)[part] for key in self.by_key})]

    def _distance(self, src: str, dst: str) -> float:
        km = self._distance_cache.get((src, dst))
        if km is None:
            a, b = self.by_key[src], self.by_key[dst]
            km = self._distance_cache[(src, dst)] = distance_km(a.lat, a.lon, b.lat, b.lon)
        return km

    def read(self, path: Path, default_sweep: str) -> None:
        """Add the rows of one CSV; UserError for a file that is not a readable CSV."""
        _check_text(path)
        try:
            # utf-8-sig: a byte order mark (Excel writes one) is not part of the first name
            handle = path.open(newline="", encoding="utf-8-sig")
        except OSError as e:
            raise UserError(f"{path}: cannot read measurements ({e.strerror})") from None
        reader = None
        try:
            with handle:
                first = handle.readline()
                if not first.strip():
                    raise UserError(
                        f"{path}: empty file: expected a measurements CSV with a header"
                    )
                delimiter, col = _header(path, first)
                if delimiter != ",":
                    self.warnings.append(f"{path}: read as {_name(delimiter)}-separated")
                if delimiter == "," and self._columns(path, first, col, default_sweep):
                    return
                reader = csv.reader(handle, delimiter=delimiter)
                bad = self._rows(reader, col, default_sweep)
        except UnicodeDecodeError as e:
            raise UserError(
                f"{path}: not UTF-8 text (byte 0x{e.object[e.start]:02x} on line "
                f"{_bad_utf8_line(path)}): save it as UTF-8"
            ) from None
        except csv.Error as e:
            line = reader.line_num + 1 if reader is not None else 1
            raise UserError(f"{path}: line {line}: not a readable CSV ({e})") from None
        if bad:
            self.warnings.append(_bad_rows_warning(path, bad))

    def _columns(self, path: Path, first: str, col: dict[str, int], default_sweep: str) -> bool:
        """Add the rows of a plain file (this version's own, every number a plain
        decimal, every region known, a flags column, no pair filter) read by DuckDB
        into columns, as _rows would add them; False, having added nothing, for any
        other file, which _rows then reads row by row (and explains)."""
        import duckdb
        import numpy as np

        names = next(csv.reader([first]), [])
        if (
            self.keep is not None
            or first.startswith("\ufeff")
            or len(set(names)) != len(names)
            or any(c not in col for c in _FAST_COLUMNS)
            or "network_tier" in col  # tiers: row by row (the public data's few thousand)
            or not is_default(self.gcp_tier)
        ):
            return False
        # only the columns read here, plus what the site and the host evidence ask of
        # every row (one scan of the file, not three): is it publishable as it is, has
        # it a host counter or CPU steal cell
        # the numbers are checked and cast as they are read (the table keeps no text of them)
        names_read = [c for c in _FAST_COLUMNS if c not in _NUMBERS]
        as_is = first == _HEADER_LINE
        publishable = _publishable_sql() if as_is else "false"
        evidence = " OR ".join(f"coalesce({_q(c)}, '') <> ''" for c in _EVIDENCE_COLUMNS)
        if any(c not in col for c in _EVIDENCE_COLUMNS):
            evidence = "true"  # unknown: host evidence reads the file itself
        # a row is odd (read row by row, which explains) when a number is not plain; a
        # publishable row's numeric cells are plain already (a stricter pattern)
        unchecked = [c for c in _NUMBERS if c not in NUMERIC_COLUMNS]
        odd = (
            f"(CASE WHEN publishable THEN {_not_plain(unchecked)} "
            f"ELSE {_not_plain(_NUMBERS)} END) "
            f"OR NOT regexp_full_match(coalesce(started_utc, '{_EPOCH}'), '{_STAMP}')"
        )
        capacity = "false"
        if "measure" in col:  # capacity rows are kept apart, by _rows
            capacity = f"coalesce(measure, '') LIKE '%{CAPACITY}%'"
        odd += f" OR {capacity}"
        con = duckdb.connect()
        try:
            # one regex per line first: when every line is plain (and publishable), no
            # cell needs a check of its own, the numbers are read as numbers and the ends
            # as the catalog's names (no text of them kept, no cast); else, or when that
            # read fails (a name not the catalog's) or reads another number of rows (a
            # blank line), every cell as text, each checked
            # a file our writer marked as plain, as it left it: no line to check again
            marked = marked_rows(path) if as_is else None
            lines = marked
            if lines is None and first == _line(names):
                lines = _clean_lines(con, path, names, as_is)
            for clean in (True, False) if lines is not None else (False,):
                con.execute("DROP TABLE IF EXISTS raw")
                for name in ("cloud", "region"):
                    con.execute(f"DROP TYPE IF EXISTS {name}_t")
                    if clean:  # the catalog's names: any other, a failed read
                        known = ", ".join(_literal(v) for v in self._names(name))
                        con.execute(f"CREATE TYPE {name}_t AS ENUM ({known})")
                try:
                    con.execute(
                        "CREATE TEMP TABLE raw AS SELECT "
                        + ", ".join(_q(c) for c in names_read)
                        + ", "
                        + ", ".join(
                            _q(c) if clean else f"TRY_CAST({_q(c)} AS DOUBLE) AS {_q(c)}"
                            for c in _NUMBERS
                        )
                        + ", epoch_us(TRY_CAST(replace(started_utc, 'Z', '') AS TIMESTAMP)) "
                        f"/ 1e6 AS t, ({capacity if clean else odd}) AS odd, publishable, "
                        f"({evidence}) AS evidence FROM (SELECT *, "
                        f"{('true' if as_is else 'false') if clean else publishable} AS "
                        "publishable FROM read_csv(?, columns = ?, header = true, "
                        "auto_detect = false, delim = ',', quote = '\"', escape = '\"', "
                        "strict_mode = true, null_padding = false))",
                        [str(path), {n: _cell_type(n, clean) for n in names}],
                    )
                except duckdb.InterruptException:
                    raise  # ^C: never read again another way
                except duckdb.Error:
                    if clean:
                        continue
                    raise
                if not clean or con.execute("SELECT count(*) FROM raw").fetchone() == (lines,):
                    break
            if con.execute("SELECT count(*) FROM raw WHERE odd").fetchone() != (0,):
                return False
            # every name column coded by an ENUM of its distinct values (a dictionary
            # lookup per row: no join, so no sort to put the rows back in order)
            for name in ("sweep_id", "flags", "backend") if clean else _NAMES:
                of = (f"src_{name}", f"dst_{name}") if name in ("cloud", "region") else (name,)
                distinct = " UNION ".join(f"SELECT DISTINCT coalesce({c}, '') FROM raw" for c in of)
                con.execute(f"CREATE TYPE {name}_t AS ENUM ({distinct})")

            def values(enum: str) -> list[str]:
                found = con.execute(f"SELECT enum_range(NULL::{enum})").fetchone()
                return list(found[0]) if found else []

            clouds, regions = values("cloud_t"), values("region_t")
            if len(clouds) * len(regions) > _MAX_ENDS:
                return False  # names by the million: read row by row
            sweep_names, flag_names = values("sweep_id_t"), values("flags_t")
            backend_names = values("backend_t")
            got = con.execute(
                f"SELECT {_OK} AS ok, "
                + "".join(
                    # read as the catalog's names, NULL for an empty cell: "", the first
                    f"coalesce(enum_code({c}), 0) AS {c}, "
                    if clean
                    else f"enum_code(CAST(coalesce({c}, '') AS {name}_t)) AS {c}, "
                    for c, name in _END_NAMES.items()
                )
                + "enum_code(CAST(coalesce(sweep_id, '') AS sweep_id_t)) AS sweep, "
                "enum_code(CAST(coalesce(flags, '') AS flags_t)) AS flag, "
                "enum_code(CAST(coalesce(backend, '') AS backend_t)) AS backend, "
                # NULL (an empty cell) as NaN: plain arrays, no masks (a cell that reads as
                # NaN is not plain: the row is odd)
                + ", ".join(f"coalesce({_q(c)}, 'NaN'::DOUBLE) AS {_q(c)}" for c in _NUMBERS)
                + ", coalesce(t, 'NaN'::DOUBLE) AS t FROM raw"
            ).fetchnumpy()
            # the earliest start of each sweep's measured rows (the rows kept below), as
            # a time: `...:00.5Z` is later than `...:00Z`, though before it as text
            measured = f"{_OK} AND ({' OR '.join(f'{_q(c)} IS NOT NULL' for c in _MEASURES)})"
            first_start = {
                code: (stamp, t)
                for code, stamp, t in con.execute(
                    "SELECT enum_code(CAST(coalesce(sweep_id, '') AS sweep_id_t)), "
                    f"arg_min(started_utc, t), min(t) FROM raw WHERE {measured} GROUP BY 1"
                ).fetchall()
            }
            all_publishable, with_evidence = con.execute(
                "SELECT coalesce(bool_and(publishable), true), count(*) FILTER (WHERE evidence) "
                "FROM raw"
            ).fetchone() or (False, 1)
        except duckdb.InterruptException:
            raise  # ^C: not read row by row instead
        except duckdb.Error:
            return False
        finally:
            con.close()
        ok = np.asarray(got["ok"], dtype=bool)
        # each (cloud, region) of the ok rows' ends, coded cloud * len(regions) + region,
        # and the index of its catalog key (failed rows may name anything)
        width = max(len(regions), 1)
        src_end, dst_end = (
            got[f"{end}_cloud"].astype(np.int64) * width + got[f"{end}_region"]
            for end in ("src", "dst")
        )
        seen = np.zeros(max(len(clouds) * width, 1), dtype=bool)
        seen[src_end[ok]] = seen[dst_end[ok]] = True
        keys = {
            int(e): f"{clouds[e // width].strip().lower()}:{regions[e % width].strip()}"
            for e in np.flatnonzero(seen).tolist()
        }
        if any(k not in self.by_key for k in keys.values()):
            return False  # counted and named by _rows
        key_list = sorted(set(keys.values()))
        end_key = np.zeros(len(seen), dtype=np.int64)
        for e, k in keys.items():
            end_key[e] = key_list.index(k)
        n = len(got["ok"])
        self.rows_read += n
        p50, mean = _filled(got[RTT_COLUMN]), _filled(got[RTT_MEAN_COLUMN])  # the mean: a fallback
        thr, km = _filled(got["throughput_bps"]), _filled(got["distance_km"])
        if (
            np.any(p50 > MAX_RTT_MS) or np.any(mean > MAX_RTT_MS)
            or np.any(thr > MAX_THROUGHPUT_BPS) or np.any(km > MAX_DISTANCE_KM)
        ):  # fmt: skip
            self.rows_read -= n
            return False  # bad numbers: _rows names their lines
        rtt = np.where(np.isnan(p50), mean, p50)
        self.rtt_from_mean += int(np.count_nonzero(ok & np.isnan(p50) & ~np.isnan(mean)))
        measured = ok & ~(np.isnan(rtt) & np.isnan(thr))
        reasons = {
            "failed test": np.flatnonzero(~ok),
            "no RTT or throughput_bps": np.flatnonzero(ok & ~measured),
        }
        for reason, where in sorted(reasons.items(), key=lambda kv: kv[1][0] if len(kv[1]) else n):
            if len(where):
                self.skipped[reason] += len(where)
        rows = np.flatnonzero(measured)
        src, dst = end_key[src_end[rows]], end_key[dst_end[rows]]  # measured rows are ok
        km = km[rows]
        no_km = np.isnan(km)
        for a, b in {(int(x), int(y)) for x, y in zip(src[no_km], dst[no_km], strict=True)}:
            km[np.isnan(km) & (src == a) & (dst == b)] = self._distance(key_list[a], key_list[b])
        # regions and sweeps interned in order of first use, as _rows does
        ends_in_order = np.column_stack([src, dst]).ravel()
        region_id = np.zeros(len(key_list), dtype=np.int32)
        for end in analyze.first_order(ends_in_order):
            region_id[end] = self._region(key_list[end])
        sweep = np.asarray(got["sweep"], dtype=np.int64)[rows]
        sweep_id = np.zeros(len(sweep_names), dtype=np.int32)
        backend = np.asarray(got["backend"], dtype=np.int64)[rows]
        in_order = analyze.first_order(sweep)
        for code in in_order:
            name = sweep_names[code].strip() or default_sweep
            sweep_id[code] = self._sweep(name)
        for code in in_order:
            info = self.sweeps[self.data.sweeps[sweep_id[code]]]
            first, t = first_start.get(code) or ("", None)
            if first and t is not None and t < info.started_s:
                info.started_utc, info.started_s = str(first), t
            used = np.bincount(backend[sweep == code], minlength=len(backend_names))
            info.backends.update(backend_names[b] for b in np.flatnonzero(used).tolist())
        data = self.data
        data.src.frombytes(region_id[src].tobytes())  # type: ignore[attr-defined]
        data.dst.frombytes(region_id[dst].tobytes())  # type: ignore[attr-defined]
        data.sweep.frombytes(sweep_id[sweep].tobytes())  # type: ignore[attr-defined]
        data.tier.frombytes(bytes(4 * len(rows)))  # type: ignore[attr-defined]  # all default
        for column, values in (
            (data.distance_km, km),
            (data.rtt_ms, rtt[rows]),
            (data.throughput_bps, thr[rows]),
            (data.rtt_p90_ms, _filled(got["rtt_p90_ms"])[rows]),
            (data.loss_pct, _filled(got["ping_loss_pct"])[rows]),
            (data.rtt_samples, _filled(got["rtt_samples"])[rows]),
            (data.started_s, _filled(got["t"])[rows]),
        ):
            column.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())  # type: ignore[attr-defined]
        cells = [name.strip() for name in flag_names]
        codes = np.array([self._code(cell) for cell in cells] or [0], dtype=np.int32)
        self.flag_codes.frombytes(codes[np.asarray(got["flag"], dtype=np.int64)[rows]].tobytes())
        self.computed.frombytes(bytes(len(rows)))
        if as_is:  # _host_rows reads only such a file
            self.evidence[path] = int(with_evidence)
        if as_is and all_publishable and (marked == n or _plain_bytes(path, n)):
            self.publishable[path] = n
        return True

    def _rows(self, reader: Any, col: dict[str, int], default_sweep: str) -> list[tuple[int, str]]:
        """Accumulate the rows; returns (line, what) of each row dropped for a bad number."""
        c_sc, c_sr = col["src_cloud"], col["src_region"]
        c_dc, c_dr = col["dst_cloud"], col["dst_region"]
        c_rtt, c_mean = col.get(RTT_COLUMN), col.get(RTT_MEAN_COLUMN)
        c_thr = col.get("throughput_bps")
        c_flags = col.get("flags")
        c_inputs = [(c, col[c]) for c in FLAG_INPUT_COLUMNS if c in col]
        c_km, c_status = col.get("distance_km"), col.get("status")
        c_sweep, c_started = col.get("sweep_id"), col.get("started_utc")
        c_backend = col.get("backend")
        c_measure = col.get("measure")
        c_tier = col.get("network_tier")
        # the hovers' extras: a cell that does not parse is NaN, never a dropped row
        c_extra = [col.get(c) for c in ("rtt_p90_ms", "ping_loss_pct", "rtt_samples")]
        extras = (self.data.rtt_p90_ms, self.data.loss_pct, self.data.rtt_samples)
        times: dict[str, float] = {}
        width = max(col.values()) + 1
        d = self.data
        last_sweep, sweep_i = None, -1
        bad: list[tuple[int, str]] = []
        for row in reader:
            self.rows_read += 1
            if len(row) < width:
                if not any(cell.strip() for cell in row):
                    self.rows_read -= 1  # a blank line is not a row
                    continue
                self.skipped["short row"] += 1
                continue
            if c_status is not None and row[c_status] not in ("ok", ""):
                self.skipped["failed test"] += 1
                continue
            src = f"{row[c_sc].strip().lower()}:{row[c_sr].strip()}"
            dst = f"{row[c_dc].strip().lower()}:{row[c_dr].strip()}"
            known = True
            for key in (src, dst):
                if key not in self.by_key:
                    self.unknown[key] += 1
                    known = False
            if not known:
                self.skipped["unknown region"] += 1
                continue
            try:
                rtt = _number(row[c_rtt], MAX_RTT_MS) if c_rtt is not None else math.nan
                if math.isnan(rtt) and c_mean is not None:
                    rtt = _number(row[c_mean], MAX_RTT_MS)
                    if not math.isnan(rtt):
                        self.rtt_from_mean += 1
                thr = _number(row[c_thr], MAX_THROUGHPUT_BPS) if c_thr is not None else math.nan
                km = _number(row[c_km], MAX_DISTANCE_KM) if c_km is not None else math.nan
            except ValueError:
                self.skipped["bad number"] += 1
                # the header was read before the reader: its line 1 is the file's line 2
                bad.append((reader.line_num + 1, _bad_cell(row, col)))
                continue
            if c_measure is not None and row[c_measure].strip() == CAPACITY:
                # never in one aggregate with single_stream: its own table
                self.skipped["capacity measure (report.json: capacity)"] += 1
                flagged = c_flags is not None and throughput_invalid(row[c_flags])
                if not math.isnan(thr) and (self.include_flagged or not flagged):
                    self.capacity.setdefault(f"{src} -> {dst}", []).append(thr)
                continue
            if math.isnan(rtt) and math.isnan(thr):
                self.skipped["no RTT or throughput_bps"] += 1
                continue
            if math.isnan(km):
                km = self._distance(src, dst)
            if self.keep is not None and not self.keep(src, dst, km):
                self.skipped["filtered out"] += 1
                continue
            sweep_id = (row[c_sweep].strip() if c_sweep is not None else "") or default_sweep
            if sweep_id != last_sweep:
                last_sweep, sweep_i = sweep_id, self._sweep(sweep_id)
                info = self.sweeps[sweep_id]
            if c_backend is not None and row[c_backend] not in info.backends:
                info.backends.add(row[c_backend])
            d.src.append(self._region(src))
            d.dst.append(self._region(dst))
            d.sweep.append(sweep_i)
            if c_tier is not None:
                tier = normal_tier(row[c_tier])
            else:
                tier = for_sweep(row[c_sc], row[c_dc], self.gcp_tier)
            d.tier.append(self._tier(tier))  # type: ignore[attr-defined]
            d.distance_km.append(km)  # type: ignore[attr-defined]
            d.rtt_ms.append(rtt)  # type: ignore[attr-defined]
            d.throughput_bps.append(thr)  # type: ignore[attr-defined]
            for c, values in zip(c_extra, extras, strict=True):
                values.append(_extra(row[c]) if c is not None else math.nan)  # type: ignore[attr-defined]
            stamp = row[c_started] if c_started is not None else ""
            t = times.get(stamp)
            if t is None:
                t = times[stamp] = _epoch(stamp)
            d.started_s.append(t)  # type: ignore[attr-defined]
            if t < info.started_s:  # the earliest as a time (NaN: no time, never)
                info.started_utc, info.started_s = stamp, t
            if c_flags is not None:
                cell = row[c_flags].strip()
                self.computed.append(0)
            else:  # the row's own checks now, the asymmetry over all rows at the end
                own = {name: row[i] for name, i in c_inputs}
                cell = FLAG_SEPARATOR.join(row_flags({**own, "distance_km": km}))
                self.computed.append(1)
            self.flag_codes.append(self._code(cell))
        return bad

    def result(self, sources: list[str]) -> Loaded:
        self._add_asymmetry()
        loaded = Loaded(
            include_flagged=self.include_flagged,
            rtt_from_mean=self.rtt_from_mean,
            data=self.data,
            sweeps=self.sweeps,
            catalog=self.catalog,
            rows_read=self.rows_read,
            skipped=self.skipped,
            unknown_regions=self.unknown,
            sources=sources,
            warnings=self.warnings,
            capacity=self.capacity,
            evidence=self.evidence,
            publishable=self.publishable,
        )
        if not self.include_flagged:
            loaded.data = _leave_out_flagged(loaded, self.flag_codes, self.flag_names)
        return loaded

    def _code(self, cell: str) -> int:
        """The code of a flags cell (flag_names[code] is the cell)."""
        code = self._flag_code.get(cell)
        if code is None:
            code = self._flag_code[cell] = len(self.flag_names)
            self.flag_names.append(cell)
        return code

    def _add_asymmetry(self) -> None:
        """`asymmetric` on the rows whose flags were computed here (the files without a
        flags column): the two directions of a pair in one sweep, by their medians."""
        import numpy as np

        d = self.data
        index = np.flatnonzero(np.frombuffer(self.computed, dtype=np.int8)).tolist()
        rows = [
            {
                "sweep_id": d.sweeps[d.sweep[i]],
                "src_cloud": d.regions[d.src[i]],
                "dst_cloud": d.regions[d.dst[i]],
                "rtt_p50_ms": d.rtt_ms[i],
                "network_tier": d.tiers[d.tier[i]] if len(d.tier) == len(d) else "",
            }
            for i in index
        ]
        if not rows:
            return
        for j in asymmetric_rows(rows):
            i = index[j]
            cell = self.flag_names[self.flag_codes[i]]
            self.flag_codes[i] = self._code(
                FLAG_SEPARATOR.join(f for f in FLAGS if f == ASYMMETRIC or f in parse_flags(cell))
            )


def _leave_out_flagged(
    loaded: Loaded, codes: Sequence[int], names: Sequence[str]
) -> analyze.Measurements:
    """loaded.data with each measure's value left out (NaN) of the rows whose flags
    invalidate it, and without the rows where nothing valid is left; counts all of it
    into `loaded`. `codes`: each row's flags cell, as an index into `names`. By numpy,
    each distinct cell judged once."""
    import numpy as np

    m = loaded.data
    code = np.asarray(codes, dtype=np.int64)
    flagged = np.array([bool(name) for name in names])[code]
    loaded.rows_flagged = int(np.count_nonzero(flagged))
    if not loaded.rows_flagged:
        return m
    # each flag counted per row that has it, counters in order of the first row with it
    used, first, per = np.unique(code[flagged], return_index=True, return_counts=True)
    for k in np.argsort(first, kind="stable").tolist():
        for flag in parse_flags(names[int(used[k])]):
            loaded.flagged[flag] += int(per[k])
    rtt, thr = analyze.column(m.rtt_ms).copy(), analyze.column(m.throughput_bps).copy()
    bad_rtt = np.array([rtt_invalid(name) for name in names])[code] & np.isfinite(rtt)
    bad_thr = np.array([throughput_invalid(name) for name in names])[code] & np.isfinite(thr)
    firsts = []
    for measure, bad in ((RTT, bad_rtt), (THROUGHPUT, bad_thr)):
        if bad.any():
            firsts.append((int(np.argmax(bad)), measure, int(np.count_nonzero(bad))))
    for _row, measure, n in sorted(firsts):
        loaded.measures_flagged[measure] += n
    rtt[bad_rtt] = math.nan
    thr[bad_thr] = math.nan
    out = flagged & np.isnan(rtt) & np.isnan(thr)
    loaded.rows_flagged_out = int(np.count_nonzero(out))
    left = replace(m, rtt_ms=array("d", rtt.tobytes()), throughput_bps=array("d", thr.tobytes()))
    return _subset(left, ~out)


def _subset(m: analyze.Measurements, keep: Any) -> analyze.Measurements:
    """The rows `keep` (a mask or indices) of m (same interned regions and sweeps)."""
    import numpy as np

    def ints(values: Sequence[int]) -> array[int]:
        return array("i", np.asarray(values, dtype=np.int32)[keep].tobytes())

    def floats(values: Sequence[float]) -> array[float]:
        return array("d", analyze.column(values)[keep].tobytes())

    return analyze.Measurements(
        regions=m.regions,
        sweeps=m.sweeps,
        src=ints(m.src),  # type: ignore[arg-type]
        dst=ints(m.dst),  # type: ignore[arg-type]
        sweep=ints(m.sweep),  # type: ignore[arg-type]
        tiers=m.tiers,
        tier=ints(m.tier) if len(m.tier) == len(m) else array("i"),
        distance_km=floats(m.distance_km),
        rtt_ms=floats(m.rtt_ms),
        throughput_bps=floats(m.throughput_bps),
        **{
            name: floats(column)
            for name in ("rtt_p90_ms", "loss_pct", "rtt_samples", "started_s")
            if len(column := getattr(m, name)) == len(m)
        },
    )


# What _Reader._columns needs of a file, and what it reads only when plain.
_MAX_ENDS = 10_000_000  # clouds x regions named in one file, for the columnar reader
_MEASURES = (RTT_COLUMN, RTT_MEAN_COLUMN, "throughput_bps")  # a row with none is not used
_NUMBERS = (RTT_COLUMN, RTT_MEAN_COLUMN, "throughput_bps", "distance_km",
            "rtt_p90_ms", "ping_loss_pct", "rtt_samples")  # fmt: skip
_FAST_COLUMNS = (*REQUIRED_COLUMNS, *_NUMBERS, "sweep_id", "started_utc", "backend", "status",
                 "flags")  # fmt: skip
_PLAIN = PLAIN_NUMBER  # what float() and DuckDB read alike
_STAMP = STAMP_PATTERN
_EPOCH = "1970-01-01T00:00:00Z"
_OK = "coalesce(status, '') IN ('ok', '')"
_NAMES = ("cloud", "region", "sweep_id", "flags", "backend")  # coded by an ENUM each
# each end's cloud and region, and what names them
_END_NAMES = {f"{end}_{name}": name for end in ("src", "dst") for name in ("cloud", "region")}
_EVIDENCE_COLUMNS = (*ALLOWANCE_COLUMNS, *STEAL_COLUMNS)  # as _host_rows
_HEADER_LINE = MEASUREMENTS_HEADER
# Characters str.strip() may remove, ASCII ones (a file with others is not published as it is)
_BLANK = r"[ \t\x0b\x0c\x1c-\x1f]*"


def _not_plain(columns: Sequence[str]) -> str:
    """SQL true for a row where a cell of `columns` is neither empty nor a plain number."""
    if not columns:
        return "false"
    cells = ", ".join(_q(c) for c in columns)
    return f"NOT regexp_full_match(concat_ws(',', {cells}), '({_PLAIN}(,{_PLAIN})*)?')"


def _cell_type(name: str, clean: bool) -> str:
    """DuckDB's type of a column as _Reader._columns reads it when every line is plain
    (_clean_lines): a number of _NUMBERS as a number, an end's cloud and region as one of
    the catalog's (cloud_t, region_t); else every cell as text."""
    if clean and name in _NUMBERS:
        return "DOUBLE"
    if clean and name in _END_NAMES:
        return f"{_END_NAMES[name]}_t"
    return "VARCHAR"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _line(names: Sequence[str]) -> str:
    """The line of `names` as csv.writer writes it when none needs quoting."""
    return ",".join(names) + "\n"


def _line_pattern(names: Sequence[str], as_is: bool) -> str:
    """A regex a line of a file with the header `names` matches when its cells need no
    check each: no quote, its cells split at its commas, each number of _NUMBERS plain and
    its start a _STAMP. When `as_is` (this version's header), the lines of a plain file:
    results.PLAIN_LINE, what results' writer checks before it marks a file plain (each
    numeric cell as a site publishes it and src_cloud not blank, _publishable_sql true)."""
    if as_is:
        return PLAIN_LINE

    def cell(name: str) -> str:
        if name in _NUMBERS:
            return f"(?:{_PLAIN})?"
        if name == "started_utc":
            return f"(?:{_STAMP})?"
        return TEXT_CELL

    return ",".join(cell(name) for name in names)


def _clean_lines(con: Any, path: Path, names: Sequence[str], as_is: bool) -> int | None:
    """The number of lines after the header of `path` when each matches _line_pattern;
    None when one does not (or DuckDB cannot read the lines): then each cell is checked."""
    import duckdb

    try:
        found = con.execute(
            "SELECT count(*), bool_and(coalesce(regexp_full_match(line, "
            f"'{_line_pattern(names, as_is)}'), false)) FROM read_csv(?, "
            "columns = {'line': 'VARCHAR'}, header = true, auto_detect = false, delim = ?, "
            "quote = '', escape = '', strict_mode = true, null_padding = false)",
            [str(path), "\x01"],
        ).fetchone()
    except duckdb.InterruptException:
        raise  # ^C: no check of each cell instead
    except duckdb.Error:
        return None
    return int(found[0]) if found and found[1] is not False else None


def _publishable_sql() -> str:
    """SQL true for a row of this version's file that results.write_parsed_rows would
    copy as it is: every numeric cell empty or a plain number, and not a blank row (its
    src_cloud holds something). False rows are not dropped: the site then parses the
    file row by row, as it always did."""
    numbers = ", ".join(_q(c) for c in MEASUREMENT_COLUMNS if c in NUMERIC_COLUMNS)
    n = PUBLISHED_NUMBER
    return (
        f"(regexp_full_match(concat_ws(',', {numbers}), '({n}(,{n})*)?') "
        f"AND NOT regexp_full_match(coalesce(src_cloud, ''), '{_BLANK}'))"
    )


def _plain_bytes(path: Path, rows: int, chunk: int = 1 << 23) -> bool:
    """True when the bytes of `path` are what csv.writer writes of its rows: ASCII, no
    quote, carriage return or NUL, this version's header, a newline after each of its
    `rows` rows (so no blank line, and the last row is whole). Read `chunk` bytes at a
    time into one buffer (a 164 MB file is never all in memory at once)."""
    header = _HEADER_LINE.encode()
    buffer = bytearray(chunk)
    newlines, last, head = 0, b"", b""
    try:
        with path.open("rb") as f:
            while n := f.readinto(buffer):
                data = buffer if n == chunk else buffer[:n]
                if not data.isascii() or any(data.find(c) >= 0 for c in (b'"', b"\r", b"\x00")):
                    return False
                if len(head) < len(header):
                    head += bytes(data[: len(header) - len(head)])
                newlines += data.count(b"\n")
                last = bytes(data[-1:])
    except OSError:
        return False
    return head == header and last == b"\n" and newlines == rows + 1


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _filled(values: Any) -> Any:
    """A DuckDB column as float64 with NaN where it was NULL (an empty cell)."""
    import numpy as np

    if not np.ma.isMaskedArray(values):  # no NULL in it
        return np.asarray(values, dtype=np.float64)
    filled: Any = np.ma.filled(np.ma.asarray(values).astype(np.float64), np.nan)
    return filled


def _extra(text: str) -> float:
    """A hover's extra figure: NaN when empty or not a number."""
    try:
        return float(text) if text else math.nan
    except ValueError:
        return math.nan


def _epoch(stamp: str) -> float:
    """UNIX seconds of an ISO 8601 time (UTC without a zone); NaN when not one."""
    if not stamp:
        return math.nan
    try:
        t = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    except ValueError:
        return math.nan
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


def _number(text: str, limit: float) -> float:
    """A measured value from a CSV cell: NaN for an empty cell (not measured);
    ValueError for text, NaN, infinities, negative numbers and numbers above
    `limit`, which no RTT, throughput or distance can be (and which would
    overflow the fits)."""
    if not text or text.isspace():
        return math.nan
    value = float(text)
    if not 0.0 <= value <= limit:
        raise ValueError(text)
    return value


def _bad_cell(row: Sequence[str], col: dict[str, int]) -> str:
    """ "rtt_p50_ms '-3'": the first cell of `row` that _number refuses."""
    for name, limit in LIMITS.items():
        if name in col:
            try:
                _number(row[col[name]], limit)
            except ValueError:
                return f"{name} '{_shown(row[col[name]].strip()[:20])}'"
    return "?"


def _check_text(path: Path) -> None:
    """UserError for a file that is plainly not CSV text (compressed, binary, UTF-16)."""
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise UserError(f"{path}: cannot read measurements ({e.strerror})") from None
    for magic, what in _NOT_TEXT:
        if head.startswith(magic):
            raise UserError(f"{path} {what}")
    if b"\x00" in head:
        raise UserError(f"{path} is binary (NUL bytes), not CSV text: give a measurements CSV")


def _bad_utf8_line(path: Path) -> int:
    """The line number of the first line that is not UTF-8 (only on the error path)."""
    with path.open("rb") as f:
        for number, line in enumerate(f, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return 0


def _shown(text: str) -> str:
    """`text` for a one-line message: control characters (line breaks too) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _name(delimiter: str) -> str:
    return {"\t": "tab"}.get(delimiter, f"'{delimiter}'")


def _header(path: Path, line: str) -> tuple[str, dict[str, int]]:
    """The delimiter and the column index of a header line; UserError naming what
    was found when no delimiter yields the required columns."""
    tried = {}
    for delimiter in DELIMITERS:
        names = next(csv.reader([line], delimiter=delimiter), [])
        col: dict[str, int] = {}
        for i, name in enumerate(names):
            col.setdefault(name.strip(), i)
        if all(c in col for c in REQUIRED_COLUMNS) and any(c in col for c in METRIC_COLUMNS):
            return delimiter, col
        tried[delimiter] = col
    col = max(tried.values(), key=len)  # the reading that found the most columns
    delimiter = next(d for d, c in tried.items() if c is col)
    missing = [c for c in REQUIRED_COLUMNS if c not in col]
    need = ", ".join(missing) if missing else " or ".join(METRIC_COLUMNS)
    found = ", ".join(_shown(name) for name in list(col)[:8]) + (", ..." if len(col) > 8 else "")
    how = f" ({_name(delimiter)}-separated)" if len(col) > 1 else ""
    raise UserError(
        f"{path}: missing column(s) {need}: a measurements CSV needs "
        f"{', '.join(REQUIRED_COLUMNS)} and an RTT ({RTT_COLUMN}, or {RTT_MEAN_COLUMN} "
        "when only the mean is known) and/or throughput_bps; "
        f"found {len(col)} column(s){how}: {found[:200]}"
    )


def _bad_rows_warning(path: Path, bad: Sequence[tuple[int, str]]) -> str:
    lines = ", ".join(str(line) for line, _what in bad[:BAD_LINES_SHOWN])
    more = ", ..." if len(bad) > BAD_LINES_SHOWN else ""
    line, what = bad[0]
    return (
        f"{path}: {len(bad)} row(s) dropped for a bad number (line {line}: {what}; "
        f"lines {lines}{more}): values must be numbers from 0 to a plausible maximum "
        "(RTT 1 h, throughput 1 Pbit/s, distance 20,040 km), empty when not measured"
    )


def read_sweep_meta(sweep_dir: Path) -> dict[str, Any]:
    """sweep.json of a results folder, read through its record (results.load_record_file:
    a one-line error when it is damaged), or {} when there is none."""
    path = sweep_dir / SWEEP_FILE
    if not path.exists():
        return {}
    return load_record_file(path).to_json()


def sweep_dirs(results: Path) -> list[Path]:
    """Folders under `results` holding a measurements.csv, oldest sweep id first."""
    if not results.is_dir():
        return []
    found = (p.parent for p in results.glob("*/measurements.csv"))
    return sorted(p for p in found if not is_study_dir(p))  # a study is no sweep


def load_inputs(
    *,
    sweep_dirs_: Sequence[Path] = (),
    input_files: Sequence[Path] = (),
    catalog: Catalog | None = None,
    keep: PairPredicate | None = None,
    include_flagged: bool = False,
    include_injected: bool = False,
) -> Loaded:
    """Read sweeps' measurements.csv and/or external CSVs into one Loaded.

    `keep` (e.g. selection.pair_filter(spec)) drops rows before anything is
    computed; they are counted as "filtered out". Rows with flags (orchestrator.results.flags:
    read from the file's flags column, or computed when it has none) are left out and
    counted in `flagged`, unless `include_flagged`. The tests a sweep's emulation
    perturbed on purpose are found (`injected`); the summary leaves them out unless
    `include_injected`.
    """
    cat = catalog if catalog is not None else load_catalog(CATALOG)
    reader = _Reader(cat, keep, include_flagged)
    whole = None  # the key of a whole sweep folder's rows, taken before they are read
    if len(sweep_dirs_) == 1 and not input_files and keep is None:
        whole = (sweep_dirs_[0], cache.input_key(sweep_dirs_[0], cat, include_flagged))
    sources = []
    for sweep_dir in _once(sweep_dirs_, "--sweep", reader.warnings):
        csv_path = sweep_dir / "measurements.csv"
        if not csv_path.exists():
            raise UserError(
                f"{sweep_dir}: no measurements.csv: is '{sweep_dir.name}' a sweep id? "
                "(see the folders in results/)"
            )
        meta = read_sweep_meta(sweep_dir)
        options = meta.get("cloud_options")
        reader.gcp_tier = normal_tier(
            options.get("network_tier") if isinstance(options, dict) else None
        )
        reader.read(csv_path, sweep_dir.name)
        reader.gcp_tier = DEFAULT_TIER
        if sweep_dir.name in reader.sweeps:
            info = reader.sweeps[sweep_dir.name]
            info.meta = meta
            backend = meta.get("backend")
            if isinstance(backend, str) and backend:
                info.backends.add(backend)
            if isinstance(meta.get("started_utc"), str) and meta["started_utc"]:
                info.started_utc = meta["started_utc"]
        sources.append(str(csv_path))
    for path in _once(input_files, "--input", reader.warnings):
        reader.read(path, path.stem)
        sources.append(str(path))
    loaded = reader.result(sources)
    loaded.cache = None if include_injected else whole  # the cache holds the default report
    loaded.injected = injected_rows(loaded)
    loaded.include_injected = include_injected
    skipped = ", ".join(f"{n} {why}" for why, n in loaded.skipped.items()) or "none"
    debug(
        f"report: read {counted(len(sources), 'file')} ({', '.join(sources)}): "
        f"{counted(len(loaded.data), 'row')} kept; left out: {skipped}"
    )
    for sweep_dir in _once(sweep_dirs_, "--sweep", []):
        add_host_evidence(loaded, sweep_dir)
    return loaded


# What each amount of an injected effect moves: a delay the RTT and the window-bound
# throughput; a loss or a rate cap the throughput (a loss also the ping's loss, which
# no fit reads).
INJECTED_MOVES = {
    "delay_ms": (RTT, THROUGHPUT),
    "loss_pct": (THROUGHPUT,),
    "rate_mbit": (THROUGHPUT,),
}
_INJECTED_TEXT = {"delay_ms": "+{:g} ms one way", "loss_pct": "{:g} % loss each way",
                  "rate_mbit": "capped at {:g} Mbit/s"}  # fmt: skip


def sweep_injected(meta: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """What a sweep's emulation injected on purpose (sweep.json `emulation.injected`); a
    record from before that key lists its perturbations alone (its loss episodes were
    not recorded)."""
    emulation = meta.get("emulation")
    if not isinstance(emulation, Mapping):
        return []
    found = emulation.get("injected")
    if found is None:
        found = [{**p, "cause": "perturbation"} for p in emulation.get("perturbations") or ()]
    return [e for e in found if isinstance(e, Mapping) and isinstance(e.get("target"), str)]


def injected_rows(loaded: Loaded) -> dict[int, tuple[str, tuple[str, ...]]]:
    """Row -> (what was injected on its path, the measures that moves) for every row of
    a sweep whose emulation injected something on the row's pair (`A/B`, `A>B`: both
    directions of the pair; a host `A`: every path to and from it)."""
    d = loaded.data
    effects: dict[int, dict[frozenset[str] | str, tuple[str, tuple[str, ...]]]] = {}
    for k, name in enumerate(d.sweeps):
        info = loaded.sweeps.get(name)
        for e in sweep_injected(info.meta if info else {}):
            target = str(e["target"])
            amounts = [a for a in INJECTED_MOVES if e.get(a)]
            what = ", ".join(_INJECTED_TEXT[a].format(e[a]) for a in amounts)
            moves = tuple(
                m for m in FLAGGED_MEASURES if any(m in INJECTED_MOVES[a] for a in amounts)
            )
            ends = target.replace(">", "/").split("/")
            key: frozenset[str] | str = frozenset(ends) if len(ends) == 2 else target
            text = f"injected ({e.get('cause') or 'perturbation'} {target}: {what})"
            old = effects.setdefault(k, {}).get(key)
            if old is not None:
                text = f"{old[0]}; {text}"
                moves = tuple(m for m in FLAGGED_MEASURES if m in old[1] or m in moves)
            effects[k][key] = (text, moves)
    out: dict[int, tuple[str, tuple[str, ...]]] = {}
    if not effects:
        return out
    for i in range(len(d)):
        mine = effects.get(d.sweep[i])
        if not mine:
            continue
        src, dst = d.regions[d.src[i]], d.regions[d.dst[i]]
        found = [mine[k] for k in (frozenset((src, dst)), src, dst) if k in mine]
        if found:
            out[i] = (
                "; ".join(t for t, _m in found),
                tuple(m for m in FLAGGED_MEASURES if any(m in ms for _t, ms in found)),
            )
    return out


def fit_data(loaded: Loaded) -> analyze.Measurements:
    """The rows the summary and its fits read: every row, less the values the tests
    injected on purpose moved (unless include_injected)."""
    if loaded.include_injected or not loaded.injected:
        return loaded.data
    m = loaded.data
    rtt, thr = analyze.column(m.rtt_ms).copy(), analyze.column(m.throughput_bps).copy()
    for i, (_what, moves) in loaded.injected.items():
        if RTT in moves:
            rtt[i] = math.nan
        if THROUGHPUT in moves:
            thr[i] = math.nan
    return replace(m, rtt_ms=array("d", rtt.tobytes()), throughput_bps=array("d", thr.tobytes()))


def summaries_of(
    loaded: Loaded, orders: dict[str, Any]
) -> tuple[list[analyze.GroupSummary], list[analyze.PairOutlier]]:
    """The summary by cloud pair and the outliers of `loaded`, without what its tests
    injected on purpose moved (fit_data); `orders` serves only when nothing is left
    out (it holds the sorts of loaded.data's columns, which the charts reuse)."""
    data = fit_data(loaded)
    own = orders if data is loaded.data else {}
    return analyze.summarize(data, own), analyze.find_outliers(data, orders=own)


HOST_FLAGS_COLUMNS = ("sweep_id", "round", "src", "dst", "throughput_bps", "evidence")


def add_host_evidence(loaded: Loaded, sweep_dir: Path) -> None:
    """The tests of a sweep whose hosts' own counters moved, and its sentinel check
    (early against late results), each with a one-line warning when they say the hosts
    may have been measured rather than the path."""
    try:
        late = read_rows(sweep_dir / "sentinels.csv")
        sentinel_pairs = {pair_key(r) for r in late}
        path = sweep_dir / MEASUREMENTS_FILE
        # no sentinel and no row with host evidence (seen when the rows were read): none
        none = not sentinel_pairs and loaded.evidence.get(path) == 0
        rows = [] if none else _host_rows(path, sentinel_pairs)
        if rows is None:  # not this version's plain file: the strict reader says why
            rows = read_rows(sweep_dir / MEASUREMENTS_FILE)
    except UserError as e:
        loaded.warnings.append(f"host evidence not read: {e}")
        return
    flags = allowance_host_flags(rows)
    if flags:
        loaded.host_flags.extend(flags)
        loaded.warnings.append(
            f"{sweep_dir.name}: {len(flags)} tests where a host's own counters moved "
            "(allowance exceeded or CPU steal): they may measure the host, not the path "
            "(host-flags.csv)"
        )
    late_ok = [r for r in late if r.get("status") == "ok"]
    early = [r for r in rows if r.get("status") == "ok"]
    check = sentinel_check(early, late_ok)
    if check is not None:
        loaded.sentinels[sweep_dir.name] = check
        if check.flagged:
            loaded.warnings.append(
                f"{sweep_dir.name}: sentinel tests measured {check.drop:.0%} less at the "
                f"end ({check.late_bps / 1e6:,.1f} Mbit/s) than at the start "
                f"({check.early_bps / 1e6:,.1f} Mbit/s): late rounds may measure a drained "
                "host allowance, not the path"
            )


def _host_rows(path: Path, late: set[tuple[str, str]]) -> list[dict[str, str]] | None:
    """The rows of a measurements.csv that host evidence can use, read by DuckDB: those
    with a host counter or CPU steal cell, and the `ok` rows of the sentinel tests in
    `late`; every other row leaves the host flags and the sentinel check as they are.
    None when the file is not one DuckDB reads as store.read_rows would (another header,
    a damaged row): the caller then reads it whole."""
    import duckdb

    if not path.exists():
        return []
    try:
        with path.open(encoding="utf-8", newline="") as f:
            header = tuple(next(csv.reader([f.readline()]), []))
    except (OSError, UnicodeDecodeError):
        return None
    if header != MEASUREMENT_COLUMNS:
        return None
    evidence = " OR ".join(f"coalesce({c}, '') <> ''" for c in _EVIDENCE_COLUMNS)
    columns = {c: "VARCHAR" for c in header}
    con = duckdb.connect()
    try:
        con.execute("CREATE TEMP TABLE late (src VARCHAR, dst VARCHAR)")
        if late:
            con.executemany("INSERT INTO late VALUES (?, ?)", sorted(late))
        found = con.execute(
            "SELECT * FROM read_csv(?, columns = ?, header = true, auto_detect = false, "
            "delim = ',', quote = '\"', escape = '\"', strict_mode = true, "
            "null_padding = false) "
            f"WHERE {evidence} OR (status = 'ok' AND (src_cloud || ':' || src_region, "
            "dst_cloud || ':' || dst_region) IN (SELECT (src, dst) FROM late))",
            [str(path), columns],
        ).fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()
    return [{c: "" if v is None else v for c, v in zip(header, row, strict=True)} for row in found]


def _once(paths_: Sequence[Path], option: str, warnings: list[str]) -> list[Path]:
    """`paths_` without repeats (by resolved path), so no row is counted twice."""
    seen: set[Path] = set()
    out = []
    for path in paths_:
        key = path.resolve()
        if key in seen:
            warnings.append(f"{option} {path} given more than once: read once")
            continue
        seen.add(key)
        out.append(path)
    return out


# --- writing --------------------------------------------------------------------


def display_cell(column: str, value: Any, fmt: str) -> str:
    """A summary value for people (terminal table, site): `*_bps` columns in
    Mbit/s, a missing value (NaN) as '-', anything else through `fmt`."""
    if column.endswith("_bps") and isinstance(value, float):
        value = value / 1e6
    if isinstance(value, float) and not math.isfinite(value):
        return "-"
    return fmt.format(value)


def format_cell(column: str, value: Any) -> str:
    """A CSV cell: NaN and None are empty, numbers use the column's format."""
    if value is None:
        return ""
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        fmt = _FORMATS.get(column)
        return fmt.format(value) if fmt else repr(value)
    return str(value)


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[dict[str, Any]]) -> None:
    """Write rows atomically (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow([format_cell(c, row.get(c)) for c in columns])
    os.replace(tmp, path)


@dataclass
class Report:
    """What write_report produced; the CLI prints from it."""

    out_dir: Path
    loaded: Loaded
    summaries: list[analyze.GroupSummary]
    outliers: list[analyze.PairOutlier]
    charts: dict[str, Path] = field(default_factory=dict)  # name -> .html
    figures: dict[str, Any] = field(default_factory=dict)  # name -> figure JSON
    pngs: list[Path] = field(default_factory=list)
    png_skipped: str = ""  # why no PNGs were written, if none were


# What a report folder holds; `write_report` replaces only a folder of these.
REPORT_FILES = frozenset({"summary.csv", "outliers.csv", "report.json", "host-flags.csv", "charts"})


def write_report(
    loaded: Loaded,
    out_dir: Path,
    *,
    png: bool = True,
    log: Callable[[str], None] = lambda _msg: None,
) -> Report:
    """summary.csv, outliers.csv, report.json and the charts of `loaded` into out_dir.

    Built in a folder beside out_dir and swapped in whole (outdir.building): an
    earlier report's charts never linger beside new ones, and a failure leaves
    the earlier report as it was.
    """
    if len(loaded.data) == 0:
        raise UserError(_nothing_left(loaded))
    orders: dict[str, Any] = {}  # each column sorted once, for all that follows
    summaries, outliers = summaries_of(loaded, orders)
    report = Report(out_dir=out_dir, loaded=loaded, summaries=summaries, outliers=outliers)
    with building(out_dir, REPORT_FILES, "report") as tmp:
        _write_report_files(report, tmp, png=png, log=log, orders=orders)
    report.charts = {name: out_dir / p.relative_to(tmp) for name, p in report.charts.items()}
    report.pngs = [out_dir / p.relative_to(tmp) for p in report.pngs]
    if loaded.cache is not None:  # a whole sweep: what a site would compute again
        from orchestrator.report import charts

        sweep_dir, key = loaded.cache
        figures = {k: v for k, v in report.figures.items() if k != "timeseries"}
        cache.save(
            sweep_dir,
            sweep_products(
                loaded, summaries, outliers, figures, key, charts.MAX_POINTS, orders=orders
            ),
        )
    return report


def figure_data(fig: go.Figure | dict[str, Any]) -> dict[str, Any]:
    """A figure's JSON as Python data, NaN as null (JSON has no NaN); the charts build
    theirs as data already."""
    from orchestrator.report import charts

    return charts.figure_json(fig)


def sweep_products(
    loaded: Loaded,
    summaries: list[analyze.GroupSummary],
    outliers: list[analyze.PairOutlier],
    figures: dict[str, dict[str, Any]],
    key: str,
    max_points: int,
    orders: dict[str, Any] | None = None,
) -> cache.Products:
    """The cache entry (orchestrator.report.cache) of a whole sweep folder's report;
    `orders`, the columns' sorts its figures made (charts.Orders)."""
    from orchestrator.report import charts

    sweep_id = loaded.cache[0].name if loaded.cache is not None else ""
    info = loaded.sweeps.get(sweep_id)
    return cache.Products(
        key=key,
        sweep_id=sweep_id,
        max_points=max_points,
        emulated=loaded.emulated,
        started_utc=info.started_utc if info else "",
        backends=sorted(info.backends) if info else [],
        rows=len(loaded.data),
        regions=list(loaded.data.regions),
        sweeps=list(loaded.data.sweeps),
        started={s.id: s.started_utc or s.id for s in loaded.sweeps.values()},
        notes=notes(loaded),
        warnings=list(loaded.warnings),
        summaries=list(summaries),
        outliers=list(outliers),
        figures=cache.FigureSet.of({name: figure_data(fig) for name, fig in figures.items()}),
        medians=charts.sweep_medians(loaded.data, orders),
        verbatim_rows=(
            loaded.publishable.get(loaded.cache[0] / MEASUREMENTS_FILE, -1)
            if loaded.cache is not None
            else -1
        ),
    )


def _write_report_files(
    report: Report,
    folder: Path,
    *,
    png: bool,
    log: Callable[[str], None],
    orders: dict[str, Any] | None = None,
) -> None:
    from orchestrator.report import charts  # plotly is slow to import; only when charting

    loaded, summaries = report.loaded, report.summaries
    write_csv(folder / "summary.csv", analyze.SUMMARY_COLUMNS, (s.row() for s in summaries))
    write_csv(
        folder / "outliers.csv",
        analyze.OUTLIER_COLUMNS,
        (o.__dict__ for o in report.outliers),
    )
    (folder / "report.json").write_text(json.dumps(report_json(loaded, summaries), indent=2))
    write_csv(folder / "host-flags.csv", HOST_FLAGS_COLUMNS, loaded.host_flags)
    debug(
        f"report: {counted(len(summaries), 'summary row')}, "
        f"{counted(len(report.outliers), 'outlier')}, "
        f"{counted(len(loaded.host_flags), 'host flag')} written"
    )
    figures = report.figures = report_figures(loaded, summaries, orders=orders)
    chart_dir = folder / "charts"
    chart_dir.mkdir()
    # one plotly.min.js per results folder, not a 4.8 MB copy per sweep; a report
    # elsewhere (--out, an external file) keeps its own copy beside its charts
    shared = shared_plotly_js(report.out_dir)
    script: str = "directory"
    if shared is not None:
        script = os.path.relpath(shared, report.out_dir / "charts")
    import plotly.io

    for name, fig in figures.items():
        path = chart_dir / f"{name}.html"
        # the figure is plotly's JSON already (charts builds it as data): not validated again
        plotly.io.write_html(fig, path, include_plotlyjs=script, full_html=True, validate=False)
        report.charts[name] = path
        debug(f"report: chart {path.name}")
    if png:
        with step(f"rendering {counted(len(figures), 'PNG chart')} (kaleido, Chromium)", tell=log):
            report.pngs, report.png_skipped = charts.write_pngs(figures, chart_dir)
        if report.png_skipped:
            log(f"PNG charts skipped: {report.png_skipped}")
    else:
        report.png_skipped = "--no-png given"


ASSETS_DIR = "assets"  # under a results folder: what every sweep's report shares


def shared_plotly_js(out_dir: Path) -> Path | None:
    """results/assets/plotly-<version>.min.js for a report inside a results folder
    (results/<sweep>/report, results/all-sweeps/report), written once; None elsewhere."""
    sweep = out_dir.parent
    if out_dir.name != "report" or not (
        (sweep / "measurements.csv").exists() or sweep.name == "all-sweeps"
    ):
        return None
    import plotly
    from plotly.offline import get_plotlyjs

    path = sweep.parent / ASSETS_DIR / f"plotly-{plotly.__version__}.min.js"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(get_plotlyjs(), encoding="utf-8")
        os.replace(tmp, path)  # whole or absent, even with two reports at once
    return path


def report_figures(
    loaded: Loaded,
    summaries: Sequence[analyze.GroupSummary],
    max_points: int | None = None,
    orders: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Every chart of a report, by file name (without extension); at most
    `max_points` (default charts.MAX_POINTS) points per scatter. `orders` keeps the
    columns' sorts for a caller that needs them again (charts.Orders)."""
    import numpy as np

    from orchestrator.report import charts  # plotly is slow to import; only when charting

    if max_points is None:
        max_points = charts.MAX_POINTS

    m = loaded.data
    emulated = loaded.emulated
    figures: dict[str, dict[str, Any]] = {}
    groups = analyze.group_rows(m)
    by_name = {s.cloud_pair: s for s in summaries}
    cities = {r.key: r.city for r in loaded.catalog.regions}  # hovers name them
    for group in groups:  # GROUPS, then a cloud pair in another network tier
        if group == "all" or len(groups[group]):
            figures[f"distance-{re.sub(r'[^a-z0-9-]+', '-', group)}"] = charts.distance_figure(
                m,
                group,
                groups,
                by_name,
                emulated=emulated,
                max_points=max_points,
                cities=cities,
                injected=loaded.injected,
            )
    coords = {r.key: (r.lat, r.lon) for r in loaded.catalog.regions}
    orders = {} if orders is None else orders  # each column sorted once for every figure
    figures["heatmap-rtt"] = charts.heatmap_figure(
        m, coords, "rtt", emulated=emulated, cities=cities, orders=orders
    )
    if bool(np.isfinite(analyze.column(m.throughput_bps)).any()):  # latency-only: no empty chart
        figures["heatmap-throughput"] = charts.heatmap_figure(
            m, coords, "throughput", emulated=emulated, cities=cities, orders=orders
        )
    figures["map"] = charts.map_figure(m, coords, emulated=emulated, cities=cities, orders=orders)
    started = {s.id: s.started_utc or s.id for s in loaded.sweeps.values()}
    if len(m.sweeps) >= 2:
        figures["timeseries"] = charts.timeseries_figure(m, started, emulated=emulated)
    return figures


def report_json(loaded: Loaded, summaries: Sequence[analyze.GroupSummary]) -> dict[str, Any]:
    """Machine-readable counts and the summary (NaN as null)."""

    def clean(v: Any) -> Any:
        return None if isinstance(v, float) and not math.isfinite(v) else v

    return {
        "sources": loaded.sources,
        "sweeps": sorted(loaded.sweeps),
        "emulated": loaded.emulated,
        "rows_read": loaded.rows_read,
        "rows_used": len(loaded.data),
        "rows_skipped": dict(loaded.skipped),
        "rtt": RTT_DEFINITION,
        "rows_rtt_from_mean": loaded.rtt_from_mean,
        "include_flagged": loaded.include_flagged,
        "rows_flagged": loaded.rows_flagged,
        "rows_flagged_left_out": loaded.rows_flagged_out,
        "measures_flagged_left_out": {
            m: loaded.measures_flagged.get(m, 0) for m in FLAGGED_MEASURES
        },
        "flagged_left_out": {f: loaded.flagged.get(f, 0) for f in FLAGS},
        "flag_rules": FLAG_REASONS,
        "flag_invalidates": {f: list(INVALIDATES[f]) for f in FLAGS},
        "unknown_regions": dict(loaded.unknown_regions),
        "summary": [{k: clean(v) for k, v in s.row().items()} for s in summaries],
        "host_flags": len(loaded.host_flags),
        # emulated throughput is the real small-VM curve times this (None: not emulated)
        "emulated_rate_scale": DEFAULT_MODEL.scale if loaded.emulated else None,
        "injected": {
            "tests": len(loaded.injected),
            "left_out_of_summary": bool(loaded.injected) and not loaded.include_injected,
            "by_measure": {
                m: sum(m in moves for _w, moves in loaded.injected.values())
                for m in FLAGGED_MEASURES
            },
        },
        "sentinels": {k: v.to_dict() for k, v in loaded.sentinels.items()},
        "capacity": capacity_json(loaded),
    }


def capacity_json(loaded: Loaded) -> list[dict[str, Any]]:
    """Per directed pair with capacity tests: their median beside the median of the
    pair's single_stream tests (never pooled)."""
    if not loaded.capacity:
        return []
    d = loaded.data
    single: dict[str, list[float]] = {}
    for i in range(len(d)):
        if math.isfinite(d.throughput_bps[i]):
            key = f"{d.regions[d.src[i]]} -> {d.regions[d.dst[i]]}"
            single.setdefault(key, []).append(d.throughput_bps[i])
    return [
        {
            "pair": key,
            "capacity_tests": len(values),
            "capacity_median_bps": median(values),
            "single_stream_tests": len(single.get(key, [])),
            "single_stream_median_bps": median(single[key]) if key in single else None,
        }
        for key, values in sorted(loaded.capacity.items())
    ]


RTT_DEFINITION = (
    "the RTT of a test is the median of its samples (rtt_p50_ms); the mean (rtt_avg_ms) "
    "only for rows whose source published no median"
)


MEASURE_NAMES = {RTT: "RTT", THROUGHPUT: "throughput"}


def notes(loaded: Loaded) -> list[str]:
    """What the report left out for flags, and which rows' RTT is a mean: one line each."""
    lines = []
    if loaded.rows_flagged:
        why = "; ".join(
            f"{loaded.flagged[f]} {f} ({FLAG_REASONS[f]}: invalidates "
            f"{invalidates_text(f, MEASURE_NAMES)})"
            for f in FLAGS
            if loaded.flagged[f]
        )
        left = ", ".join(
            f"{MEASURE_NAMES[m]} of {n} rows"
            for m in FLAGGED_MEASURES
            if (n := loaded.measures_flagged[m])
        )
        lines.append(
            f"{loaded.rows_flagged} flagged rows: {why}; left out of every statistic and fit: "
            f"{left or 'nothing'} (a flag leaves out only what it invalidates); "
            "--include-flagged keeps them"
        )
    values = {RTT: loaded.data.rtt_ms, THROUGHPUT: loaded.data.throughput_bps}
    for m, name in MEASURE_NAMES.items():
        n = loaded.measures_flagged[m]
        if n and not any(math.isfinite(x) for x in values[m]):
            lines.append(
                f"{name}: not measured/flagged: every measured {name} ({n} rows) is flagged, "
                f"so no {name} figure is shown"
            )
    if loaded.emulated and any(math.isfinite(x) for x in loaded.data.throughput_bps):
        lines.append(
            f"throughput is {rate_scale_tag()}: the emulator carries the real small-VM "
            "curve times the rate scale (Methodology)"
        )
    if loaded.injected:
        kept = "kept in" if loaded.include_injected else "left out of"
        lines.append(
            f"{len(loaded.injected)} tests ran on paths perturbed on purpose by the emulator "
            "(loss episodes, perturbations; sweep.json emulation.injected): marked on the "
            f"charts, {kept} the summary and its fits"
            + ("" if loaded.include_injected else " (--include-injected keeps them)")
        )
    if loaded.rtt_from_mean:
        lines.append(
            f"{loaded.rtt_from_mean} rows give no median RTT (rtt_p50_ms): their RTT is the "
            "mean of their samples (rtt_avg_ms)"
        )
    return lines


def _nothing_left(loaded: Loaded) -> str:
    why = ", ".join(f"{n} {reason}" for reason, n in loaded.skipped.most_common())
    if loaded.rows_flagged_out:
        why += f"{', ' if why else ''}{loaded.rows_flagged_out} flagged (--include-flagged)"
    if loaded.rows_read == 0:
        return "no measurements in the input: run a sweep first or check --input"
    return (
        f"none of the {loaded.rows_read} measurements is usable ({why}): "
        "widen the filters or check the input"
    )


def default_out_dir(sweep_dirs_: Sequence[Path], input_files: Sequence[Path]) -> Path:
    """results/<id>/report for one sweep, results/all-sweeps/report for several,
    <input stem>-report beside an external file."""
    if input_files:
        first = input_files[0]
        return first.with_name(f"{first.stem}-report")
    if len(sweep_dirs_) == 1:
        return sweep_dirs_[0] / "report"
    return sweep_dirs_[0].parent / "all-sweeps" / "report"


def build_report(
    sweep_dir: Path,
    *,
    out_dir: Path | None = None,
    catalog: Catalog | None = None,
    png: bool = True,
    log: Callable[[str], None] = lambda _msg: None,
) -> Path:
    """The report of one finished sweep, under <sweep_dir>/report; returns that folder."""
    loaded = load_inputs(sweep_dirs_=[sweep_dir], catalog=catalog)
    out = out_dir if out_dir is not None else sweep_dir / "report"
    write_report(loaded, out, png=png, log=log)
    for line in [*loaded.warnings, *notes(loaded)]:
        log(f"report: {line}")
    return out
