"""What the mesh shows: each host's collection status, and the matrix over a window.

A window of the mesh's matrix pools the samples of its 5-minute bins (1H: 12 bins), so
its percentiles are those of the samples themselves, by the store's sample rule
(orchestrator.history.metrics.min_samples), and its loss is the sum of what was lost over
what was sent, with its Wilson interval. Mesh sources only: sweeps' sources have their
own matrix (`interregion matrix`), and the two are never pooled.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.core import UserError, iso, wilson
from orchestrator.history import MESH_WINDOWS as WINDOWS
from orchestrator.history import QUANTILES, mesh_sources, min_samples
from orchestrator.mesh.bins import BIN_S


@dataclass(frozen=True)
class HostStatus:
    name: str
    last_record_utc: datetime | None  # the start of its newest recorded cycle
    lag_s: float | None  # from the end of that cycle to its collection
    probes_per_s: float | None
    error: str

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "last_record_utc": iso(self.last_record_utc)
                if self.last_record_utc else None}  # fmt: skip


def host_status(status: dict[str, Any], interval_s: int) -> list[HostStatus]:
    out = []
    for name, h in sorted(status.get("hosts", {}).items()):
        newest, first = h.get("newest_t"), h.get("first_t")
        rate = None
        if newest is not None and first is not None:
            rate = round(h.get("probes", 0) / (newest - first + interval_s), 2)
        last = datetime.fromtimestamp(newest, UTC) if newest else None
        out.append(HostStatus(name, last, h.get("lag_s"), rate, h.get("error", "")))
    return out


@dataclass(frozen=True)
class MatrixCell:
    src: str
    dst: str
    samples: int
    sent: int
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    loss_ratio: float | None
    loss_lo: float
    loss_hi: float
    bins: int


def matrix(con: Any, source: str, window: str = "1H") -> tuple[datetime | None, list[MatrixCell]]:
    """Every directed pair of a mesh source over the window ending at its newest bin."""
    if window not in WINDOWS:
        raise UserError(f"--window {window}: one of {', '.join(WINDOWS)}")
    known = mesh_sources(con)
    if source not in known:
        raise UserError(
            f"--source {source}: no mesh data (mesh sources: {', '.join(known) or 'none'})"
        )
    end = con.execute("SELECT max(t) FROM mesh_bins WHERE source = ?", [source]).fetchone()[0]
    if end is None:
        return None, []
    qs = ", ".join(
        f"CASE WHEN len(xs) >= {min_samples(s)} THEN list_aggregate(xs, 'quantile_cont', "
        f"{QUANTILES[s]}) END"
        for s in ("p50", "p90", "p99")
    )
    rows = con.execute(
        f"SELECT src, dst, len(xs), sent, {qs}, received, bins FROM ("
        "SELECT src, dst, flatten(list(rtt_samples_ms)) AS xs, sum(sent) AS sent, "
        "sum(received) AS received, count(*) AS bins FROM mesh_bins WHERE source = ? "
        f"AND t > ?::TIMESTAMP - INTERVAL {WINDOWS[window] - BIN_S} SECOND GROUP BY src, dst"
        ") ORDER BY src, dst",
        [source, end],
    ).fetchall()
    cells = []
    for src, dst, n, sent, p50, p90, p99, received, nbins in rows:
        lo, hi = wilson(int(sent - received), int(sent)) if sent else (0.0, 1.0)
        loss = (sent - received) / sent if sent else None
        cells.append(
            MatrixCell(src, dst, int(n), int(sent), p50, p90, p99, loss, lo, hi, int(nbins))
        )
    return end, cells


@dataclass(frozen=True)
class MeshMatrix:
    """`mesh matrix`: a mesh source's pairs over a window ending at its newest bin."""

    source: str
    window: str
    end: datetime | None
    cells: tuple[MatrixCell, ...]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "window": self.window,
                "end_utc": self.end.isoformat() + "Z" if self.end else None,
                "cells": [asdict(c) for c in self.cells]}  # fmt: skip


def matrix_of(results: Path, source: str | None, window: str) -> MeshMatrix:
    """The matrix of `source` (None: the only mesh source of the store) over `window`."""
    from orchestrator.history import opened

    with opened(results, read_only=True) as con:
        known = mesh_sources(con)
        if not known:
            raise UserError(f"no mesh data in the store under {results}: "
                            "'interregion mesh up' starts a mesh, which fills it")  # fmt: skip
        if source is None:
            if len(known) != 1:
                raise UserError(f"give --source, one of: {', '.join(known)}")
            source = known[0]
        end, cells = matrix(con, source, window)
    return MeshMatrix(source, window, end, tuple(cells))


def pair_bins(
    con: Any, source: str, start: datetime | None = None, end: datetime | None = None,
    pair: tuple[str, str] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """A mesh source's bins per directed pair (both directions of `pair`, else every
    pair), from `start`
    to `end` (both kept; None: no bound), in time order: [{src, dst, t: [ISO 8601 bin
    starts], p50, p90, p99: [ms, None below the sample rule], loss: [%], received: [replies]}],
    in (src, dst) order. What the site's pair pages draw."""
    where: list[str] = ["source = ?"]
    params: list[Any] = [source]
    if start is not None:
        where.append("t >= ?")
        params.append(start)
    if end is not None:
        where.append("t <= ?")
        params.append(end)
    if pair is not None:
        where.append("((src = ? AND dst = ?) OR (src = ? AND dst = ?))")
        params += [pair[0], pair[1], pair[1], pair[0]]
    rows = con.execute(
        "SELECT src, dst, strftime(t, '%Y-%m-%dT%H:%M:%S.000Z'), round(rtt_p50_ms, 2), "
        "round(rtt_p90_ms, 2), round(rtt_p99_ms, 2), round(100 * loss_ratio, 2), received "
        f"FROM mesh_bins WHERE {' AND '.join(where)} ORDER BY src, dst, t",
        params,
    ).fetchall()
    out: list[dict[str, Any]] = []
    for src, dst, t, p50, p90, p99, loss, received in rows:
        if not out or (out[-1]["src"], out[-1]["dst"]) != (src, dst):
            out.append({"src": src, "dst": dst, "t": [], "p50": [], "p90": [], "p99": [],
                        "loss": [], "received": []})  # fmt: skip
        d = out[-1]
        for name, x in (("t", t), ("p50", p50), ("p90", p90), ("p99", p99), ("loss", loss),
                        ("received", int(received))):  # fmt: skip
            d[name].append(x)
    return out


def newest_bin(con: Any, source: str) -> datetime | None:
    row = con.execute("SELECT max(t) FROM mesh_bins WHERE source = ?", [source]).fetchone()
    return row[0] if row else None
