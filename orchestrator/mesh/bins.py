"""The mesh's records -> the store's samples -> 5-minute bins per directed pair.

An agent writes one line per peer and cycle (`{"t", "d", "s", "r"}`: cycle start, peer,
echoes sent, reply RTTs in ms); `parse_pulled` reads what the controller pulled of one
host (the agent's `--mesh-read` output) into Samples and the position to pull from next.
`add_samples` writes them to `mesh_samples` and rolls every bin they touch into
`mesh_bins` again, in SQL: the bin's samples pooled, p50/p90/p99 by the store's sample
rule (orchestrator.history.metrics.min_samples: null below it), loss with its Wilson
score interval (95 %).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from orchestrator.core import WILSON_Z
from orchestrator.history import QUANTILES, min_samples

if TYPE_CHECKING:
    import duckdb

BIN_S = 300  # the bins' length: 5 minutes
PERCENTILES = ("p50", "p90", "p99")


@dataclass(frozen=True)
class Sample:
    """One agent cycle of one directed pair."""

    src: str
    dst: str
    t: int  # the cycle's start, epoch s
    sent: int
    rtt_ms: tuple[float, ...]


@dataclass(frozen=True)
class Position:
    """Where the next pull of a host starts: its record file's number and offset."""

    number: int = 0
    offset: int = 0


def parse_pulled(host: str, text: str, at: Position) -> tuple[list[Sample], Position, int]:
    """The samples in one host's pulled text and the position after them; also the number
    of lines that were not records (counted, skipped: a damaged line loses itself only)."""
    samples: list[Sample] = []
    position = at
    bad = 0
    for line in text.splitlines():
        if line.startswith("#file "):
            _, number, start = line.split()
            position = Position(int(number), int(start))
            continue
        position = Position(position.number, position.offset + len(line.encode()) + 1)
        try:
            doc = json.loads(line)
            rtts = tuple(float(x) for x in doc["r"])
            samples.append(Sample(host, str(doc["d"]), int(doc["t"]), int(doc["s"]), rtts))
        except (ValueError, KeyError, TypeError):
            bad += 1
    return samples, position, bad


def bin_start(t: int, bin_s: int = BIN_S) -> int:
    return t - t % bin_s


def _wilson_sql(lost: str, n: str, sign: str) -> str:
    z2 = WILSON_Z * WILSON_Z
    p = f"({lost})::DOUBLE / ({n})"
    centre = f"({p} + {z2} / (2.0 * ({n})))"
    half = f"{WILSON_Z} * sqrt({p} * (1 - {p}) / ({n}) + {z2} / (4.0 * ({n}) * ({n})))"
    return f"CASE WHEN ({n}) > 0 THEN ({centre} {sign} {half}) / (1 + {z2} / ({n})) END"


def _quantile_sql(stat: str) -> str:
    q = QUANTILES[stat]
    return (
        f"CASE WHEN len(xs) >= {min_samples(stat)} "
        f"THEN list_aggregate(xs, 'quantile_cont', {q}) END"
    )


# every bin of `touched` (a temp table of bin starts) rolled up again from mesh_samples
_ROLLUP = """
INSERT INTO mesh_bins
SELECT source, mesh_id, src, dst, b, sent, len(xs),
       {p50}, {p90}, {p99},
       list_sum(xs), CASE WHEN sent > 0 THEN (sent - len(xs))::DOUBLE / sent END,
       greatest(0.0, {lo}), least(1.0, {hi}), xs
FROM (
    SELECT source, mesh_id, src, dst, time_bucket(INTERVAL {bin_s} SECOND, t) AS b,
           sum(sent) AS sent, list_sort(flatten(list(rtt_ms))) AS xs
    FROM mesh_samples
    WHERE source = ? AND mesh_id = ?
      AND time_bucket(INTERVAL {bin_s} SECOND, t) IN (SELECT b FROM touched)
    GROUP BY ALL
)
"""


def rollup_sql(bin_s: int) -> str:
    return _ROLLUP.format(
        p50=_quantile_sql("p50"),
        p90=_quantile_sql("p90"),
        p99=_quantile_sql("p99"),
        lo=_wilson_sql("sent - len(xs)", "sent", "-"),
        hi=_wilson_sql("sent - len(xs)", "sent", "+"),
        bin_s=int(bin_s),
    )


def utc(t: int) -> datetime:
    return datetime.fromtimestamp(t, UTC).replace(tzinfo=None)


def _insert_samples(
    con: duckdb.DuckDBPyConnection, source: str, mesh_id: str, samples: Sequence[Sample]
) -> None:
    """In one bulk read of a JSON-lines file: executemany inserts row by row, and big
    lists as query parameters cost DuckDB seconds (an hour of a full catalog: 351,120)."""
    fd, tmp = tempfile.mkstemp(suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines(
                orjson.dumps({"src": s.src, "dst": s.dst, "t": s.t, "sent": s.sent,
                              "rtt_ms": s.rtt_ms}) + b"\n"
                for s in samples
            )  # fmt: skip
        con.execute(
            "INSERT INTO mesh_samples SELECT ?, ?, src, dst, make_timestamp(t * 1000000), "
            "sent, rtt_ms FROM read_json(?, format = 'newline_delimited', columns = {src: "
            "'VARCHAR', dst: 'VARCHAR', t: 'BIGINT', sent: 'INTEGER', rtt_ms: 'DOUBLE[]'})",
            [source, mesh_id, tmp],
        )
    finally:
        Path(tmp).unlink(missing_ok=True)


_FILE_LINE = re.compile(r"^#file [^\n]*\n?", re.MULTILINE)


def add_pulled(
    con: duckdb.DuckDBPyConnection,
    source: str,
    mesh_id: str,
    texts: Mapping[str, str],
    bin_s: int = BIN_S,
) -> int:
    """What was pulled of each host (host -> the agent's text, as --mesh-read printed it)
    into the store as it is, and its bins rolled up again (inside the caller's
    transaction); returns the bins touched. The text is read by DuckDB itself, its host
    named in each line by a plain replace: no line is parsed in Python (an hour of a full
    catalog is 351,120 lines). A damaged line is skipped, as parse_pulled counts it."""
    fd, tmp = tempfile.mkstemp(suffix=".jsonl")
    try:
        with os.fdopen(fd, "w") as f:
            for host, text in texts.items():
                body = _FILE_LINE.sub("", text)
                f.write(body.replace('{"t":', '{"h":' + json.dumps(host) + ',"t":'))
        con.execute("CREATE OR REPLACE TEMP TABLE pulled AS SELECT h, d, t, s, r FROM read_json("
                    "?, format = 'newline_delimited', ignore_errors = true, columns = {h: "
                    "'VARCHAR', d: 'VARCHAR', t: 'BIGINT', s: 'INTEGER', r: 'DOUBLE[]'}) "
                    "WHERE h IS NOT NULL AND d IS NOT NULL AND t IS NOT NULL AND s IS NOT NULL "
                    "AND r IS NOT NULL", [tmp])  # fmt: skip
    finally:
        Path(tmp).unlink(missing_ok=True)
    con.execute(
        "INSERT INTO mesh_samples SELECT ?, ?, h, d, make_timestamp(t * 1000000), s, r FROM pulled",
        [source, mesh_id],
    )
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE touched AS SELECT DISTINCT "
        f"time_bucket(INTERVAL {int(bin_s)} SECOND, make_timestamp(t * 1000000)) AS b FROM pulled"
    )
    con.execute("DROP TABLE pulled")
    return _rollup_touched(con, source, mesh_id, bin_s)


def _rollup_touched(con: duckdb.DuckDBPyConnection, source: str, mesh_id: str, bin_s: int) -> int:
    touched = con.execute("SELECT count(*) FROM touched").fetchone()
    con.execute(
        "DELETE FROM mesh_bins WHERE source = ? AND mesh_id = ? AND t IN (SELECT b FROM touched)",
        [source, mesh_id],
    )
    con.execute(rollup_sql(bin_s), [source, mesh_id])
    con.execute("DROP TABLE touched")
    return int(touched[0]) if touched else 0


def add_samples(
    con: duckdb.DuckDBPyConnection,
    source: str,
    mesh_id: str,
    samples: Sequence[Sample],
    bin_s: int = BIN_S,
) -> int:
    """Samples into the store and their bins rolled up again (inside the caller's
    transaction); returns the bins touched."""
    if not samples:
        return 0
    _insert_samples(con, source, mesh_id, samples)
    starts = sorted({bin_start(s.t, bin_s) for s in samples})
    con.execute("CREATE OR REPLACE TEMP TABLE touched (b TIMESTAMP)")
    con.executemany("INSERT INTO touched VALUES (?)", [(utc(b),) for b in starts])
    return _rollup_touched(con, source, mesh_id, bin_s)


def pairs_of(samples: Iterable[Sample]) -> set[tuple[str, str]]:
    return {(s.src, s.dst) for s in samples}
