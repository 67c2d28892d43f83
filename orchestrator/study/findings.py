"""A TCP study's results per pair, its recommendation, and the per cloud pair fit of
throughput = min(cap, W / RTT): pure functions over study.csv's rows, then the files
(study_summary.csv, study.md, study.html).

The physics is orchestrator.advise's (BDP, window and Mathis ceilings, the sysctl
lines); this module only puts the measured variants beside it.
"""

from __future__ import annotations

import html
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.advise import (
    WINDOW_EFFICIENCY,
    PathFacts,
    loss_limited_bps,
    loss_rate,
    sysctl_lines,
    window_limited_bps,
)
from orchestrator.core import UserError
from orchestrator.model import is_emulated
from orchestrator.netmodel import DEFAULT_MODEL, REAL_WINDOW_BYTES
from orchestrator.plan import bdp_bytes
from orchestrator.results import HOSTS_FILE, StudyRecord, is_study_dir, write_atomic
from orchestrator.results import STUDIES_DIR as STORE_STUDIES_DIR
from orchestrator.study.variants import BASELINE, VARIANTS

if TYPE_CHECKING:  # the site reads study reports without loading the sweep's stages
    from orchestrator.sweep import Sweep

STUDIES_DIR = STORE_STUDIES_DIR  # under a results folder: the studies, apart from the sweeps
SUMMARY_FILE = "study_summary.csv"
REPORT_FILE = "study.md"
PAGE_FILE = "study.html"
NEAR_CAP = 0.8  # a variant within 20 % of the line rate fills the path


@dataclass(frozen=True)
class VariantResult:
    name: str
    runs: int
    median_bps: float
    min_bps: float
    max_bps: float
    gain: float | None  # median over the default's median

    @property
    def spread_pct(self) -> float:
        return 100.0 * (self.max_bps - self.min_bps) / self.median_bps if self.median_bps else 0.0


# Loaded minus idle RTT is queueing only above this many ping mdevs, and above this floor
# (ping's printed resolution, and the smoothed RTT's own rounding).
QUEUE_NOISE_FACTOR = 2.0
QUEUE_MIN_MS = 0.1


@dataclass(frozen=True)
class PairResult:
    src: str
    dst: str
    idle_rtt_ms: float
    loaded_rtt_ms: float | None
    line_rate_bps: float
    default_window_bytes: float
    tuned_buffer_bytes: int
    loss_rate: float | None
    variants: dict[str, VariantResult] = field(default_factory=dict)
    rtt_noise_ms: float | None = None  # the idle RTT's ping mdev (median over the tests)
    retransmits: float | None = None  # the default stream's retransmissions (median per test)

    @property
    def queueing_ms(self) -> float | None:
        """Loaded minus idle RTT when it is positive beyond the RTT noise (QUEUE_NOISE_FACTOR
        x the ping mdev, at least QUEUE_MIN_MS); None otherwise: no queueing measured."""
        if self.loaded_rtt_ms is None:
            return None
        extra = self.loaded_rtt_ms - self.idle_rtt_ms
        noise = max(QUEUE_NOISE_FACTOR * (self.rtt_noise_ms or 0.0), QUEUE_MIN_MS)
        return extra if extra > noise else None

    def queueing_text(self) -> str:
        if self.loaded_rtt_ms is None:
            return "no loaded RTT"
        if self.queueing_ms is not None:
            return f"queueing {self.queueing_ms:.1f} ms"
        noise = max(QUEUE_NOISE_FACTOR * (self.rtt_noise_ms or 0.0), QUEUE_MIN_MS)
        return f"no queueing measured (loaded - idle within {noise:.1f} ms of RTT noise)"

    @property
    def bdp_bytes(self) -> float:
        return bdp_bytes(self.line_rate_bps, self.idle_rtt_ms)

    @property
    def default_ceiling_bps(self) -> float:
        return window_limited_bps(self.default_window_bytes, self.idle_rtt_ms)

    @property
    def tuned_window_bytes(self) -> float:
        return self.tuned_buffer_bytes * WINDOW_EFFICIENCY

    @property
    def tuned_ceiling_bps(self) -> float:
        return window_limited_bps(self.tuned_window_bytes, self.idle_rtt_ms)

    @property
    def mathis_bps(self) -> float:
        return loss_limited_bps(self.idle_rtt_ms, self.loss_rate)

    @property
    def limit(self) -> str:
        """What holds one default stream back: the line rate, loss or the window."""
        ceilings = {
            "line rate": self.line_rate_bps,
            "window": self.default_ceiling_bps,
            "loss": self.mathis_bps,
        }
        return min(ceilings, key=lambda k: ceilings[k])

    def facts(self) -> PathFacts:
        default = self.variants.get(BASELINE)
        return PathFacts(
            rtt_ms=self.idle_rtt_ms,
            line_rate_bps=self.line_rate_bps,
            default_window_bytes=self.default_window_bytes,
            loss_rate=self.loss_rate,
            loaded_rtt_ms=self.loaded_rtt_ms,
            measured_bps=default.median_bps if default else None,
        )

    def streams(self) -> int:
        """The fewest measured streams within 20 % of the line rate, else what the
        default's per-stream rate says it takes."""
        for name in sorted(self.variants, key=lambda n: VARIANTS[n].streams):
            v = self.variants[name]
            if VARIANTS[name].streams > 1 and v.median_bps >= NEAR_CAP * self.line_rate_bps:
                return VARIANTS[name].streams
        default = self.variants.get(BASELINE)
        if default is None or not default.median_bps:
            return 1
        return max(1, math.ceil(NEAR_CAP * self.line_rate_bps / default.median_bps))

    def recommendation(self) -> list[str]:
        """Sysctl lines and a stream count; when loss limits the path, says so instead
        of asking for more memory."""
        default = self.variants.get(BASELINE)
        if default and default.median_bps >= NEAR_CAP * self.line_rate_bps:
            return ["nothing to tune: one default stream fills the line rate"]
        streams = self.streams()
        if self.limit == "loss":
            return [
                f"loss, not the window, limits this path (Mathis ceiling "
                f"{self.mathis_bps / 1e6:.1f} Mbit/s at {100 * (self.loss_rate or 0):.3f} % "
                "retransmitted): more buffer memory will not help; "
                f"use {streams} parallel streams (each has its own loss ceiling)"
            ]
        return [
            *sysctl_lines(self.facts()),
            "(rmem_max/wmem_max only for programs that set their own socket buffers)",
            f"or {streams} parallel streams with default settings",
        ]


def _floats(rows: Iterable[Mapping[str, Any]], column: str) -> list[float]:
    return [float(r[column]) for r in rows if r.get(column) not in (None, "")]


def pair_results(
    rows: Sequence[Mapping[str, Any]],
    pairs: Mapping[str, Mapping[str, Any]],
    default_window_bytes: float,
) -> list[PairResult]:
    """Every pair's figures from its ok rows; the pair plan gives idle RTT and buffers."""
    out = []
    for name, info in pairs.items():
        mine = [
            r for r in rows
            if f"{r['src_cloud']}:{r['src_region']}->{r['dst_cloud']}:{r['dst_region']}" == name
            and r.get("status") == "ok" and r.get("throughput_bps") not in (None, "")
        ]  # fmt: skip
        by_variant: dict[str, list[Mapping[str, Any]]] = {}
        for r in mine:
            by_variant.setdefault(str(r["variant"]), []).append(r)
        base = by_variant.get(BASELINE, [])
        base_median = statistics.median(_floats(base, "throughput_bps")) if base else None
        variants = {}
        for vname, vrows in sorted(by_variant.items(), key=lambda kv: list(VARIANTS).index(kv[0])):
            bps = _floats(vrows, "throughput_bps")
            median = statistics.median(bps)
            variants[vname] = VariantResult(
                vname, len(bps), median, min(bps), max(bps),
                median / base_median if base_median else None,
            )  # fmt: skip
        rates = [
            loss_rate(int(float(r["retransmits"])), int(float(r["bytes"])))
            for r in base
            if r.get("retransmits") not in (None, "") and r.get("bytes") not in (None, "")
        ]
        known = [p for p in rates if p is not None]
        counts = [float(r["retransmits"]) for r in base if r.get("retransmits") not in (None, "")]
        loaded = _floats(base, "tcp_rtt_ms")
        mdevs = _floats(mine, "rtt_mdev_ms")
        out.append(
            PairResult(
                src=str(info["src"]),
                dst=str(info["dst"]),
                idle_rtt_ms=float(info["idle_rtt_ms"]),
                loaded_rtt_ms=statistics.median(loaded) if loaded else None,
                line_rate_bps=float(info["line_rate_bps"]),
                default_window_bytes=default_window_bytes,
                tuned_buffer_bytes=int(info["tuned_buffer_bytes"]),
                loss_rate=statistics.median(known) if known else None,
                variants=variants,
                rtt_noise_ms=statistics.median(mdevs) if mdevs else None,
                retransmits=statistics.median(counts) if counts else None,
            )
        )
    return sorted(out, key=lambda p: p.idle_rtt_ms)


# ---- the physical fit per cloud pair ----------------------------------------------------


@dataclass(frozen=True)
class CapWindowFit:
    clouds: str  # "aws-gcp"
    samples: int
    cap_bps: float
    window_bytes: float
    mean_error_pct: float

    def predict_bps(self, rtt_ms: float) -> float:
        return min(self.cap_bps, window_limited_bps(self.window_bytes, rtt_ms))


def fit_cap_window(points: Sequence[tuple[float, float]], clouds: str = "") -> CapWindowFit:
    """throughput = min(cap, W / RTT) from (rtt_ms, bps) points, by least relative error
    over the candidate caps and windows the points themselves give (each point is at
    its cap or at its window, bps x RTT / 8)."""
    usable = [(rtt, bps) for rtt, bps in points if rtt > 0 and bps > 0]
    if len(usable) < 2:
        raise UserError(f"{clouds or 'the fit'}: needs at least 2 measured pairs")
    caps = sorted({bps for _, bps in usable})
    windows = sorted({bps * rtt / 1000.0 / 8.0 for rtt, bps in usable})

    def error(cap: float, window: float) -> float:
        return statistics.fmean(
            abs(min(cap, window * 8.0 / (rtt / 1000.0)) - bps) / bps for rtt, bps in usable
        )

    best = min(((error(c, w), c, w) for c in caps for w in windows), key=lambda t: t[0])
    return CapWindowFit(clouds, len(usable), best[1], best[2], round(100.0 * best[0], 2))


def cloud_pair_fits(results: Sequence[PairResult]) -> list[CapWindowFit | str]:
    """Per cloud pair (aws-aws, aws-gcp, ...): the fit of its default streams, or why not."""
    groups: dict[str, list[tuple[float, float]]] = {}
    for p in results:
        default = p.variants.get(BASELINE)
        if default is None:
            continue
        key = "-".join(sorted((p.src.split(":")[0], p.dst.split(":")[0])))
        groups.setdefault(key, []).append((p.idle_rtt_ms, default.median_bps))
    out: list[CapWindowFit | str] = []
    for key, points in sorted(groups.items()):
        try:
            out.append(fit_cap_window(points, key))
        except UserError as e:
            out.append(str(e))
    return out


# ---- files ---------------------------------------------------------------------------------


def summary_rows(results: Sequence[PairResult], study_id: str) -> list[dict[str, Any]]:
    """study_summary.csv: one row per pair and variant, units in the names."""
    rows = []
    for p in results:
        for v in p.variants.values():
            rows.append(
                {
                    "study_id": study_id,
                    "src": p.src,
                    "dst": p.dst,
                    "idle_rtt_ms": round(p.idle_rtt_ms, 3),
                    "loaded_rtt_ms": _r(p.loaded_rtt_ms, 3),
                    "queueing_ms": _r(p.queueing_ms, 3),
                    "bdp_bytes": round(p.bdp_bytes),
                    "default_window_bytes": round(p.default_window_bytes),
                    "tuned_buffer_bytes": p.tuned_buffer_bytes,
                    "default_ceiling_bps": round(p.default_ceiling_bps),
                    "tuned_ceiling_bps": round(p.tuned_ceiling_bps),
                    "retransmit_rate": _r(p.loss_rate, 6),
                    "mathis_ceiling_bps": "" if math.isinf(p.mathis_bps) else round(p.mathis_bps),
                    "variant": v.name,
                    "runs": v.runs,
                    "throughput_median_bps": round(v.median_bps),
                    "throughput_min_bps": round(v.min_bps),
                    "throughput_max_bps": round(v.max_bps),
                    "gain_over_default": _r(v.gain, 3),
                    "limit": p.limit,
                }
            )
    return rows


def _r(value: float | None, digits: int) -> Any:
    return "" if value is None else round(value, digits)


def _mbit(bps: float) -> str:
    return "-" if math.isinf(bps) else f"{bps / 1e6:.1f}"


def report_text(
    results: Sequence[PairResult], sweep_id: str, backend: str, study: StudyRecord
) -> str:
    """study.md: `study` is the record's `study` part (variants, repeats, seed)."""
    lines = [
        f"# TCP study {sweep_id}",
        "",
        f"Backend {backend}; variants {', '.join(study.variants)}, each "
        f"{study.repeats} times per pair in an order shuffled per pair (seed "
        f"{study.seed}). Idle RTT from the ping phase; loaded RTT is iperf3's under the "
        "default stream: the difference is called queueing only when it is above twice the "
        "idle RTT's noise (ping mdev). Throughput in Mbit/s.",
        "",
    ]
    if is_emulated(backend):
        lines += [
            "Emulated cloud: the emulator is built from the same model, so this checks the "
            "emulator, it is no evidence about clouds.",
            "",
        ]
    for p in results:
        if not p.variants:
            lines += [
                f"## {p.src} -> {p.dst}",
                "",
                f"No measured test: see the error column of study.csv, and measure this pair "
                f"again with 'interregion study tcp --regions {p.src},{p.dst}'.",
                "",
            ]
            continue
        lines += [
            f"## {p.src} -> {p.dst}",
            "",
            f"- idle RTT {p.idle_rtt_ms:.1f} ms, loaded RTT "
            + (f"{p.loaded_rtt_ms:.1f} ms" if p.loaded_rtt_ms is not None else "-")
            + f" ({p.queueing_text()})"
            + f"; BDP at {p.line_rate_bps / 1e6:g} Mbit/s: {p.bdp_bytes / 1e3:.0f} kB",
            f"- window ceilings: default {_mbit(p.default_ceiling_bps)} "
            f"({p.default_window_bytes / 1e3:.0f} kB), tuned {_mbit(p.tuned_ceiling_bps)} "
            f"(buffers {p.tuned_buffer_bytes / 1e3:.0f} kB)",
            f"- loss ceiling (Mathis, {100 * (p.loss_rate or 0):.4f} % retransmitted): "
            f"{_mbit(p.mathis_bps)}; limit of one default stream: {p.limit}",
            "",
            "| variant | runs | median | min-max | spread % | gain |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for v in p.variants.values():
            gain = f"{v.gain:.2f}x" if v.gain is not None else "-"
            lines.append(
                f"| {v.name} | {v.runs} | {_mbit(v.median_bps)} | {_mbit(v.min_bps)}-"
                f"{_mbit(v.max_bps)} | {v.spread_pct:.0f} | {gain} |"
            )
        lines += ["", "Recommendation:", "", *(f"    {x}" for x in p.recommendation()), ""]
    lines += ["## throughput = min(cap, W / RTT) per cloud pair (default streams)", ""]
    for fit in cloud_pair_fits(results):
        if isinstance(fit, str):
            lines.append(f"- {fit}")
        else:
            lines.append(
                f"- {fit.clouds}: cap {_mbit(fit.cap_bps)} Mbit/s, W {fit.window_bytes / 1e3:.0f} "
                f"kB over {fit.samples} pairs (mean error {fit.mean_error_pct:.1f} %)"
            )
    return "\n".join(lines) + "\n"


def page_html(text: str, title: str) -> str:
    """The report as a static page: its text, escaped, tables as tables."""
    body: list[str] = []
    in_table = False
    for line in text.splitlines():
        if line.startswith("|") != in_table:
            in_table = line.startswith("|")
            body.append("<table>" if in_table else "</table>")
        if line.startswith(("# ", "| ---")) or not line.strip():
            continue
        if line.startswith("## "):
            body.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("|"):
            cells = [html.escape(c.strip()) for c in line.strip("|").split("|")]
            body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        elif line.startswith("    "):
            body.append(f"<pre>{html.escape(line.strip())}</pre>")
        else:
            body.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        body.append("</table>")
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title></head><body>"
        f"<h1>{html.escape(title)}</h1>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def default_window(backend: str, facts: Mapping[str, Any]) -> float:
    """One default stream's window: the emulator's clamp, else the hosts' tcp_rmem max
    times the share TCP turns into window (the smallest host's)."""
    if is_emulated(backend):
        return DEFAULT_MODEL.window_bytes
    maxima = [
        int(str(f["tcp_rmem"]).split()[-1]) for f in facts.values() if str(f.get("tcp_rmem", ""))
    ]
    return min(maxima) * WINDOW_EFFICIENCY if maxima else float(REAL_WINDOW_BYTES)


def build_study_report(sweep: Sweep) -> Path:
    """study_summary.csv, study.md and study.html from study.csv and the record."""
    import json

    study = sweep.record.study
    path = sweep.dir / "study.csv"
    if study is None or not study.pairs or not path.exists():
        raise UserError(
            f"study {sweep.id} has no measured tests: run 'interregion study tcp' again"
        )
    from orchestrator.study.run import read_table, table_text

    rows = read_table(path)
    hosts = sweep.dir / HOSTS_FILE
    facts = json.loads(hosts.read_text()).get("facts", {}) if hosts.exists() else {}
    results = pair_results(rows, study.pairs, default_window(sweep.backend, facts))
    summary = summary_rows(results, sweep.id)
    columns = list(summary[0]) if summary else ["study_id"]
    write_atomic(sweep.dir / SUMMARY_FILE, table_text(summary, columns))
    text = report_text(results, sweep.id, sweep.backend, study)
    write_atomic(sweep.dir / REPORT_FILE, text)
    write_atomic(sweep.dir / PAGE_FILE, page_html(text, f"TCP study {sweep.id}"))
    sweep.log(f"study report: {sweep.dir / REPORT_FILE}")
    return sweep.dir / REPORT_FILE


def study_ids(studies: Path) -> list[str]:
    """The studies under `studies` that have a page, in id order (a sweep is no study)."""
    if not studies.is_dir():
        return []
    found = (p.parent for p in studies.glob(f"*/{PAGE_FILE}"))
    return sorted(p.name for p in found if is_study_dir(p))
