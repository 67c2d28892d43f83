"""The continuous mesh on the site's pair pages: its own section of each pair it probes,
never mixed with the sweeps' sources: its recent 5-minute bins with its change episodes,
and each episode with the bins around it, even once it left the recent window
(docs/reports-and-site.md). Drawn by assets/history.js (meshChart).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from orchestrator.history import SourceInfo, iso_utc, source_caption
from orchestrator.mesh import newest_bin, pair_bins
from orchestrator.site.html import esc as _e

MESH_PAIR_WINDOW = timedelta(days=1)  # 288 bins of 5 minutes
MESH_AROUND = timedelta(hours=1)  # an episode's bins: an hour each side
MESH_EPISODES = 10  # the newest episodes of a pair drawn with the bins around them
MESH_METRICS = {"rtt": "RTT (ms): p50, p90, p99 of each 5-minute bin", "loss": "loss (%)"}


def _time(iso: str) -> datetime:
    return datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")


def mesh_pair_data(
    con: Any,
    infos: Sequence[SourceInfo],
    marks: dict[tuple[str, str, str], list[Any]],
    pairs: dict[tuple[str, str], dict[str, Any]],
) -> None:
    """Each mesh source's entry on the pages of the pairs it holds bins of, added to
    `pairs` (history_pages.pair_data's) after the sweeps' sources; `marks`: the episodes
    per (source, a, b)."""
    for info in infos:
        newest = newest_bin(con, info.name)
        if newest is None:
            continue
        start = newest - MESH_PAIR_WINDOW + timedelta(minutes=5)
        for d in pair_bins(con, info.name, start, newest):
            key = (min(d["src"], d["dst"]), max(d["src"], d["dst"]))
            entries = pairs.setdefault(key, {"a": key[0], "b": key[1], "sources": {}})["sources"]
            if info.name not in entries:
                entries[info.name] = _entry(con, info, key, marks, start, newest)
            entries[info.name]["directions"].append(d)


def _entry(
    con: Any,
    info: SourceInfo,
    key: tuple[str, str],
    marks: dict[tuple[str, str, str], list[Any]],
    start: datetime,
    newest: datetime,
) -> dict[str, Any]:
    episodes = [e for e in marks.get((info.name, *key), []) if e["metric"] == "rtt"]
    episodes.sort(key=lambda e: e["started_utc"])
    # a path's episode marks each direction that moved: one change, its directions
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in episodes:
        grouped.setdefault((e["started_utc"], e.get("confirmed_utc") or ""), []).append(e)
    around = []
    for (started, confirmed), marked in sorted(grouped.items())[-MESH_EPISODES:]:
        first = _time(started) - MESH_AROUND
        last = _time(confirmed or started) + MESH_AROUND
        bins = pair_bins(con, info.name, first, last, pair=key)
        bins.sort(key=lambda d: d["src"] != key[0])
        around.append({"episodes": marked, "directions": bins})
    shown_from = iso_utc(start)
    return {
        "source": info.name,
        "kind": "mesh",
        "emulated": info.emulated,
        "caption": source_caption(
            {"source": info.name, "label": info.label, "emulated": info.emulated}
        ),
        "bin_s": 300,
        "window_start_utc": shown_from,
        "window_end_utc": iso_utc(newest),
        "directions": [],
        "episodes": [e for e in episodes if (e["closed_utc"] or "~") >= (shown_from or "")],
        "configuration_changes": [],
        "changes": around,
    }


def is_mesh(entry: dict[str, Any]) -> bool:
    return entry.get("kind") == "mesh"


def mesh_html(entry: dict[str, Any], n: int) -> str:
    """A mesh source's part of a pair page: its recent bins' charts, then each change
    with the bins around it."""
    parts = [
        f"<h2 class='caption'>{_e(entry['caption'])}: the continuous mesh</h2>\n"
        f"<p class='muted'>5-minute bins, {_e(entry['window_start_utc'] or '')} .. "
        f"{_e(entry['window_end_utc'] or '')}: each bin's percentiles of its echoes' RTTs "
        "(p90 needs 100 samples, p99 1,000: absent below that) and its loss. Shaded spans "
        "are the mesh's change episodes.</p>\n"
    ]
    for metric in MESH_METRICS:
        parts.append(
            f"<div class='chart pair-chart mesh-chart' id='pair-{n}-{metric}' "
            f"data-pair='pair-data' data-source='{n}' data-metric='{metric}' "
            "data-kind='mesh'></div>\n"
        )
    for i, change in enumerate(entry["changes"]):
        moved = ", ".join(
            f"{e['src']} → {e['dst']} {e['old_level']:g} → {e['new_level']:g} ms"
            if e.get("old_level") is not None and e.get("new_level") is not None
            else f"{e['src']} → {e['dst']}"
            for e in change["episodes"]
        )
        first = change["episodes"][0]
        confirmed = f", confirmed {first['confirmed_utc']}" if first.get("confirmed_utc") else ""
        parts.append(
            f"<h3 class='mesh-change' id='mesh-change-{n}-{i}'>Change from "
            f"{_e(first['started_utc'])}{_e(confirmed)} ({_e(first['status'])}): "
            f"{_e(moved)}</h3>\n"
            f"<div class='chart pair-chart mesh-chart' id='pair-{n}-change-{i}' "
            f"data-pair='pair-data' data-source='{n}' data-metric='rtt' data-kind='mesh' "
            f"data-change='{i}'></div>\n"
        )
    if not entry["changes"]:
        parts.append("<p class='muted'>No change of this pair judged by the mesh.</p>\n")
    return "".join(parts)
