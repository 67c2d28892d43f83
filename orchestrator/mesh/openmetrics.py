"""The store's mesh data as OpenMetrics text (`interregion metrics`), for node_exporter's
textfile collector or any scraper, following Prometheus naming, in base units:

    interregion_rtt_seconds          summary: quantiles 0.5, 0.9, 0.99 of the echoes of the
                                     last window (by the store's sample rule: a quantile
                                     with too few samples is absent), and _count, _sum of
                                     every reply since the mesh started
    interregion_loss_ratio           gauge: echoes lost / sent over the window
    interregion_probes_total         counter: echoes sent since the mesh started
    interregion_probe_failures_total counter: echoes never answered since the mesh started
    interregion_change_delta_seconds gauge: each open change episode of a path (change
                                     detection's), its new level less its old one

Labels: src_cloud, src_region, dst_cloud, dst_region, source (a mesh source of the store,
never pooled with another). A pair with no reply in the window has no RTT samples at
all, never a zero: its failures counter shows it.

Two formats of the same samples: OpenMetrics 1.0 (`openmetrics`, the default: `# UNIT`,
counter families named without `_total`, `# EOF`), and the Prometheus text format 0.0.4
(`prometheus`: what node_exporter's textfile collector and `promtool check metrics`
read, where a counter's family is named as its sample, `..._total`). Each format's own
parser reads its file without a warning; the other format's would not.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.core import UserError
from orchestrator.history import QUANTILES, min_samples
from orchestrator.mesh.bins import BIN_S
from orchestrator.mesh.mesh_views import WINDOWS, mesh_sources
from orchestrator.results import write_atomic

QUANTILE_STATS = ("p50", "p90", "p99")
FAMILIES = (
    "interregion_rtt_seconds",
    "interregion_loss_ratio",
    "interregion_probes",
    "interregion_probe_failures",
    "interregion_change_delta_seconds",
)
# every sample name a scraper sees
SAMPLE_NAMES = (
    "interregion_rtt_seconds", "interregion_rtt_seconds_count", "interregion_rtt_seconds_sum",
    "interregion_loss_ratio", "interregion_probes_total", "interregion_probe_failures_total",
    "interregion_change_delta_seconds",
)  # fmt: skip


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(source: str, src: str, dst: str, extra: str = "") -> str:
    sc, sr = src.split(":", 1)
    dc, dr = dst.split(":", 1)
    pairs = [("src_cloud", sc), ("src_region", sr), ("dst_cloud", dc), ("dst_region", dr),
             ("source", source)]  # fmt: skip
    text = ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)
    return "{" + text + (f",{extra}" if extra else "") + "}"


def _number(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() or abs(x) >= 1e15 else f"{x:.1f}"


def rows(con: Any, sources: Sequence[str], window: str) -> list[tuple[Any, ...]]:
    """Per source and directed pair: the window's quantiles (ms), sent, received, and the
    totals since the start (sent, received, RTT sum in ms)."""
    qs = ", ".join(
        f"CASE WHEN len(xs) >= {min_samples(s)} THEN list_aggregate(xs, 'quantile_cont', "
        f"{QUANTILES[s]}) END"
        for s in QUANTILE_STATS
    )
    return con.execute(
        f"WITH ends AS (SELECT source, max(t) AS end_t FROM mesh_bins GROUP BY source), "
        "w AS (SELECT b.source, src, dst, flatten(list(rtt_samples_ms)) AS xs, "
        "sum(sent) AS sent, sum(received) AS received FROM mesh_bins b JOIN ends e "
        f"USING (source) WHERE b.t > e.end_t - INTERVAL {WINDOWS[window] - BIN_S} SECOND "
        "GROUP BY ALL), "
        "total AS (SELECT source, src, dst, sum(sent) AS sent, sum(received) AS received, "
        "coalesce(sum(rtt_sum_ms), 0) AS rtt_sum FROM mesh_bins GROUP BY ALL) "
        f"SELECT t.source, t.src, t.dst, {qs}, w.sent, w.received, t.sent, t.received, "
        "t.rtt_sum FROM total t LEFT JOIN w USING (source, src, dst) "
        "WHERE t.source IN (SELECT unnest(?)) ORDER BY t.source, t.src, t.dst",
        [list(sources)],
    ).fetchall()


FORMATS = ("openmetrics", "prometheus")


def render(
    con: Any, window: str = "1H", sources: Sequence[str] = (), fmt: str = "openmetrics"
) -> str:
    """The exposition in `fmt` (OpenMetrics ends in `# EOF`)."""
    om = fmt == "openmetrics"
    chosen = list(sources) or mesh_sources(con)
    data = rows(con, chosen, window)
    rtt, loss, probes, failures = [], [], [], []
    for source, src, dst, p50, p90, p99, w_sent, w_recv, sent, recv, rtt_sum in data:
        for stat, value in zip(QUANTILE_STATS, (p50, p90, p99), strict=True):
            if value is not None:
                q = _labels(source, src, dst, f'quantile="{QUANTILES[stat]}"')
                rtt.append(f"interregion_rtt_seconds{q} {_number(value / 1000)}")
        labels = _labels(source, src, dst)
        rtt.append(f"interregion_rtt_seconds_count{labels} {_number(recv)}")
        rtt.append(f"interregion_rtt_seconds_sum{labels} {_number(rtt_sum / 1000)}")
        if w_sent:
            loss.append(f"interregion_loss_ratio{labels} {_number((w_sent - w_recv) / w_sent)}")
        probes.append(f"interregion_probes_total{labels} {_number(sent)}")
        failures.append(f"interregion_probe_failures_total{labels} {_number(sent - recv)}")
    changes = [
        f"interregion_change_delta_seconds{_labels(source, src, dst)} {_number((new - old) / 1000)}"
        for source, src, dst, old, new in con.execute(
            "SELECT source, src, dst, old_level, new_level FROM episodes WHERE status = 'open' "
            "AND metric = 'rtt' AND old_level IS NOT NULL AND new_level IS NOT NULL "
            "AND source IN (SELECT unnest(?)) ORDER BY source, src, dst",
            [chosen],
        ).fetchall()
    ]
    total = "" if om else "_total"
    out = [
        "# TYPE interregion_rtt_seconds summary",
        *(["# UNIT interregion_rtt_seconds seconds"] if om else []),
        f"# HELP interregion_rtt_seconds ICMP echo round-trip time between regions: quantiles "
        f"over the last {window}, count and sum of every reply since the mesh started.",
        *rtt,
        "# TYPE interregion_loss_ratio gauge",
        *(["# UNIT interregion_loss_ratio ratio"] if om else []),
        f"# HELP interregion_loss_ratio Echoes lost over echoes sent in the last {window}.",
        *loss,
        f"# TYPE interregion_probes{total} counter",
        f"# HELP interregion_probes{total} ICMP echoes sent since the mesh started.",
        *probes,
        f"# TYPE interregion_probe_failures{total} counter",
        f"# HELP interregion_probe_failures{total} ICMP echoes never answered since the mesh "
        "started.",
        *failures,
        "# TYPE interregion_change_delta_seconds gauge",
        *(["# UNIT interregion_change_delta_seconds seconds"] if om else []),
        "# HELP interregion_change_delta_seconds Open change episodes of a path's RTT median: "
        "new level less old level.",
        *changes,
        *(["# EOF"] if om else []),
    ]
    return "\n".join(out) + "\n"


def metrics(results: Path, window: str, fmt: str, out: Path | None = None) -> str:
    """`interregion metrics`: the exposition of every mesh source of the store under
    `results`, written whole to `out` when given (node_exporter's textfile collector)."""
    from orchestrator.history import opened

    if window not in WINDOWS:
        raise UserError(f"--window {window}: one of {', '.join(WINDOWS)}")
    with opened(results, read_only=True) as con:
        text = render(con, window, fmt=fmt)
    if out is not None:
        write_atomic(out, text)
    return text
