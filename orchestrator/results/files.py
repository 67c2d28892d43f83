"""The results folder of a sweep: `results/<sweep-id>/`, written so a crash loses little.

    sweep.json         the sweep's record: format version, parameters, selection, plan,
                       versions, backend, stage and round timings (the results contract)
    hosts.json         the hosts (host contract) and the facts prepare recorded
    measurements.csv   one row per directed test, columns schema.MEASUREMENT_COLUMNS
    measurements.plain.json  the writer's mark that measurements.csv is plain (plain_file)
    raw/round-NNN/     every host's agent output for that round, as received
    state/             private: SSH keys, known_hosts, Terraform state, inventory, logs

Every file is written to a temporary name and renamed over the old one, so a
reader (or a crash) sees the previous complete version or the new one, never half.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, compact, csv_errors, read_text, utc_now
from orchestrator.results import flags
from orchestrator.results.plain_file import PLAIN_MARK, mark_text, plain_rows
from orchestrator.results.record import SweepRecord, load_record_file, read_record
from orchestrator.results.schema import (
    MEASUREMENT_COLUMNS,
    SINGLE_STREAM,
    measure_of,
    older_contract,
)

SWEEP_FILE = "sweep.json"
HOSTS_FILE = "hosts.json"
MEASUREMENTS_FILE = "measurements.csv"
RAW_DIR = "raw"
STATE_DIR = "state"

_SWEEP_ID = re.compile(r"^\d{8}T\d{4}Z-[0-9a-f]{4}$")


def new_sweep_id(now: datetime | None = None, suffix: str | None = None) -> str:
    """`20261122T0130Z-3fa2`: sorts by start time; the random suffix keeps ids unique."""
    return f"{compact(now or utc_now())}-{suffix or secrets.token_hex(2)}"


def not_a_regular_file(path: Path) -> str | None:
    """What `path` is when it exists and is not a regular file ("a FIFO", ...), else None."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None  # nothing there (or no folder): the write says what is wrong
    for test, kind in (
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return None


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same folder and a rename,
    over a regular file only: a FIFO, a device, a symlink or a folder there is refused
    (one line), never replaced."""
    path = Path(path)
    problem = not_a_regular_file(path)
    if problem:
        raise UserError(f"{path} is {problem}: give the path of a regular file, or a new one")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


# ---- measurements.csv ------------------------------------------------------------------


def format_value(value: Any) -> str:
    """CSV text of one value: empty for missing, plain decimals, no float noise."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return repr(round(value, 6))
    return str(value)


def csv_text(rows: Iterable[Mapping[str, Any]], extra: tuple[str, ...] = ()) -> str:
    """measurements.csv text; `extra` columns (an import's own fields) after the contract's."""
    columns = (*MEASUREMENT_COLUMNS, *extra)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        unknown = set(row) - set(columns)
        if unknown:
            raise ValueError(f"row has columns outside the contract: {sorted(unknown)}")
        writer.writerow({c: format_value(row.get(c)) for c in columns})
    return out.getvalue()


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a measurements.csv (all values as text); [] when there is none yet.
    One-line errors for a file that is not UTF-8 text, a header of another version and
    a row with fewer or more cells than the header (a truncated file), by line number."""
    path = Path(path)
    if not path.exists():
        return []
    reader = csv.reader(io.StringIO(read_text(path, "measurements CSV"), newline=""))
    with csv_errors(str(path), reader):
        return _rows_of(path, reader)


def _rows_of(path: Path, reader: Any) -> list[dict[str, str]]:
    header = tuple(next(reader, ()))
    # written before some columns were added: they are empty, the rest is the same
    previous = older_contract(header)
    if header != MEASUREMENT_COLUMNS and not previous:
        raise UserError(
            f"{path}: columns differ from this version's results contract: "
            "it was written by another version of interregion"
        )
    rows = []
    for cells in reader:
        if not cells:
            continue
        if len(cells) != len(header):
            raise UserError(
                f"{path}: line {reader.line_num} has {len(cells)} of {len(header)} cells "
                "(a truncated or damaged file): restore it, or rebuild it from raw/ with "
                "'interregion collect'"
            )
        row = dict(zip(header, cells, strict=True))
        if previous:
            row = {c: row.get(c, "") for c in MEASUREMENT_COLUMNS}
            row["measure"] = measure_of(row)  # before the column: every row was one
        rows.append(row)
    return rows


def pair_key(row: Mapping[str, Any]) -> tuple[str, str]:
    """(src, dst) region keys of a row: the identity of a directed test in a sweep."""
    return (f"{row['src_cloud']}:{row['src_region']}", f"{row['dst_cloud']}:{row['dst_region']}")


def test_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """(src, dst, measure) of a row: the identity of a test in a sweep (a pair has one
    single_stream test and, when the sweep measures it, one capacity test)."""
    return (*pair_key(row), measure_of(row))


def merge_rows(
    old: Iterable[Mapping[str, Any]], new: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One row per test (directed pair and measure): a newer attempt replaces an older
    one, except that a failed retry never replaces an ok result. Sorted by round, then
    source and destination."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {test_key(r): dict(r) for r in old}
    for row in new:
        key = test_key(row)
        if key in merged and merged[key].get("status") == "ok" and row.get("status") != "ok":
            continue
        merged[key] = dict(row)
    return sorted(merged.values(), key=lambda r: (int(r.get("round") or 0), test_key(r)))


def add_round_rows(
    old: Iterable[Mapping[str, Any]],
    new: Iterable[Mapping[str, Any]],
    complete: Any = None,
) -> list[dict[str, Any]]:
    """merge_rows, except that with `complete(old_row, new_row)` a new row that carries no
    RTT (a single_stream throughput slot after the sweep's ping phase) is completed from
    the row it replaces (the same test's ping-phase row) and always replaces it: it holds
    both. A capacity row keeps no RTT: the pair's RTT is its single_stream row's."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {test_key(r): dict(r) for r in old}
    rest = []
    for row in new:
        key = test_key(row)
        if (
            complete is not None
            and key in merged
            and row.get("rtt_avg_ms") in (None, "")
            and key[2] == SINGLE_STREAM
        ):
            merged[key] = complete(merged[key], row)
        else:
            rest.append(row)
    return merge_rows(merged.values(), rest)


def ok_tests(
    rows: Iterable[Mapping[str, Any]],
    tests: Iterable[str] = ("ping",),
    measure: str = SINGLE_STREAM,
) -> set[tuple[str, str]]:
    """The pairs whose `measure` test was measured to the end: an ok row, with its
    throughput when the sweep measures throughput (a ping-phase row alone is half of
    such a test)."""
    throughput = "throughput" in tuple(tests)
    return {
        pair_key(r)
        for r in rows
        if r.get("status") == "ok"
        and measure_of(r) == measure
        and (not throughput or r.get("throughput_bps") not in (None, ""))
    }


def write_rows(
    sweep_dir: Path, rows: Iterable[Mapping[str, Any]], asked_duration_s: float | None = None
) -> None:
    """measurements.csv of a sweep, each row's `flags` computed from all of them (the
    asymmetry check needs both directions)."""
    text = csv_text(flagged(rows, asked_duration_s))
    write_measurements(Path(sweep_dir) / MEASUREMENTS_FILE, text)


def write_measurements(path: Path, text: str) -> None:
    """Write a measurements.csv's `text` (write_atomic), and beside it the mark that says
    it is plain when it is (results.plain_file: then the report reads it without checking
    each line again); a mark left there by an earlier write is removed first."""
    path = Path(path)
    mark = path.with_name(PLAIN_MARK)
    rows = plain_rows(text)
    with contextlib.suppress(OSError):
        mark.unlink()  # never beside a file it does not describe
    write_atomic(path, text)
    if rows is not None and not_a_regular_file(mark) is None:
        write_atomic(mark, mark_text(path, rows))


def flagged(
    rows: Iterable[Mapping[str, Any]], asked_duration_s: float | None = None
) -> list[dict[str, Any]]:
    """Copies of `rows` with their `flags` computed (orchestrator.results.flags)."""
    out = [dict(r) for r in rows]
    flags.set_flags(out, asked_duration_s)
    return out


# ---- the sweep record -----------------------------------------------------------------


# What the tools a sweep hands its folder to cannot take, even quoted: ssh expands
# ${NAME} in its file options with no escape for it, and Ansible templates {{ }}, {% %}
# and {# #} in inventory values; a control character (a newline) starts a new line in
# every file the path is written into.
_TOOL_UNSAFE = re.compile(r"[\x00-\x1f\x7f]|\$\{|\{\{|\{%|\{#")


def tool_path_problem(path: Path | str) -> str | None:
    """Why ssh or Ansible cannot take a path inside a sweep's folder, or None.

    Anything else (spaces, quotes, %, $, non-ASCII) is quoted for each tool."""
    found = _TOOL_UNSAFE.search(str(path))
    if found is None:
        return None
    return f"holds {found.group()!r}, which ssh or Ansible would expand: use a folder without it"


def check_results_for_sweeps(results: Path) -> None:
    """Refuse, before anything is created, a results folder a sweep cannot run in."""
    problem = tool_path_problem(Path(results).absolute())
    if problem:
        raise UserError(f"--results {str(results)!r} {problem}")


def check_sweep_id(sweep_id: str) -> str:
    """`sweep_id` if it has the form new_sweep_id makes; it names a folder under results/,
    so anything else (`../x`, `a/b`) is refused before it reaches a path."""
    if not _SWEEP_ID.fullmatch(sweep_id):
        raise UserError(f"sweep id '{sweep_id}' is not of the form 20261122T0130Z-3fa2")
    return sweep_id


def sweep_dir(results: Path, sweep_id: str) -> Path:
    return Path(results) / check_sweep_id(sweep_id)


def make_state_dir(sweep_dir_: Path) -> Path:
    """state/ of a sweep, private to its owner (0700): it holds the SSH keys and the
    Terraform state, which contains the hosts' throwaway private key."""
    path = Path(sweep_dir_) / STATE_DIR
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.chmod(0o700)  # mkdir's mode is cut by the umask, and an older folder may be wider
    return path


# Studies (`study tcp`) live under <results>/studies/<id>/, apart from the sweeps; their
# sweep.json carries a "study" part. A sweep reader never takes one, nor a study reader
# a sweep.
STUDIES_DIR = "studies"


def is_study_dir(folder: Path) -> bool:
    """Whether a run folder holds a study (its record says so); unreadable: no."""
    record = read_record(Path(folder) / SWEEP_FILE)
    return record is not None and record.study is not None


def load_record(results: Path, sweep_id: str) -> SweepRecord:
    """The typed sweep.json of an existing sweep; one-line errors for a results folder that
    does not exist (whose `ls` a hint would send the user to), bad or unknown ids, damaged
    records and other versions."""
    if not Path(results).is_dir():
        raise UserError(
            f"no results folder {results}: pass --results with the folder sweep {sweep_id} is in"
        )
    directory = sweep_dir(results, sweep_id)
    path = directory / SWEEP_FILE
    if not path.exists():
        known = sorted(p.parent.name for p in Path(results).glob(f"*/{SWEEP_FILE}"))
        hint = f" (latest: {known[-1]})" if known else ""
        raise UserError(f"unknown sweep id '{sweep_id}' in {results}{hint}: see 'ls {results}'")
    return load_record_file(path, sweep_id)


def save_record(results: Path, record: Mapping[str, Any]) -> None:
    write_json(sweep_dir(results, record["sweep_id"]) / SWEEP_FILE, record)


def raw_path(sweep_dir_: Path, round_no: int, host_name: str) -> Path:
    return Path(sweep_dir_) / RAW_DIR / f"round-{round_no:03d}" / f"{safe_name(host_name)}.json"


def safe_name(host_name: str) -> str:
    """A host name usable as a file or inventory name: `aws:us-east-1` -> `aws_us-east-1`."""
    return host_name.replace(":", "_")


def read_raw_round(sweep_dir_: Path, round_no: int) -> dict[str, str]:
    """{file stem: text} of the raw outputs of one round (empty when the round never ran)."""
    folder = Path(sweep_dir_) / RAW_DIR / f"round-{round_no:03d}"
    if not folder.is_dir():
        return {}
    return {p.stem: p.read_text() for p in sorted(folder.glob("*.json"))}
