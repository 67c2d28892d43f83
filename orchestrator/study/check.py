"""The emulator check of a TCP study (issue 13 part 4): does an emulated study show the
relations its model says it should? Not evidence about clouds: the emulator is built
from the same model. What bench/study.py prints and tests/e2e/test_study.py asserts.

1. default falls about as 1/RTT beyond its knee (window x 8 / cap): its measured
   window, throughput x RTT, is within 20 % of the model's window;
2. tuned stays within 20 % of the cap where its buffer covers the BDP;
3. tuned >= default at every RTT >= 20 ms (5 % allowed for measurement noise);
4. P streams carry about P x default (within 25 %) until the cap;
5. on a pair with loss set, the ceiling of Mathis at the measured retransmission rate
   (or the window or cap if lower) explains what the default stream carried: within
   30 %, widened by the counting error of that rate (results.limiter.loss_band: k
   retransmissions leave p uncertain by 2/sqrt(k), the ceiling by its square root; a 3 s
   test at 1 Mbit/s and 1 % loss counts about 3 losses, which bound the ceiling from
   one side only). A stream that ignored the loss sends far more, counts far more
   losses and sits far above its band.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from orchestrator.netmodel import NetModel
from orchestrator.results import loss_band
from orchestrator.study.findings import PairResult
from orchestrator.study.variants import BASELINE, VARIANTS

KNEE_MARGIN = 1.25  # "beyond the knee": past 1.25 x the knee RTT, clear of the bend
WINDOW_TOLERANCE = 0.2
CAP_SHARE = 0.8
NOISE = 0.05
STREAMS_TOLERANCE = 0.25
TUNED_FROM_RTT_MS = 20.0


@dataclass(frozen=True)
class Relation:
    number: int
    text: str
    ok: bool
    checked: int  # pairs it was checked on (0: none qualified, which fails)
    detail: str


def knee_rtt_ms(model: NetModel) -> float:
    return model.window_bytes * 8.0 / model.rate_bps * 1000.0


def expected_bps(p: PairResult, variant: str, model: NetModel, lossy: bool = False) -> float:
    """What the model says the variant carries on this pair."""
    v = VARIANTS[variant]
    window = p.tuned_window_bytes if v.tuned else model.window_bytes
    bps = min(model.rate_bps, v.streams * window * 8.0 / (p.idle_rtt_ms / 1000.0))
    if lossy and p.loss_rate:
        bps = min(bps, v.streams * p.mathis_bps)
    return bps


def _median(p: PairResult, variant: str) -> float | None:
    v = p.variants.get(variant)
    return v.median_bps if v else None


def check(results: Sequence[PairResult], model: NetModel, lossy: Collection[str]) -> list[Relation]:
    """The five relations over a study's pairs; `lossy` names the pairs with loss set
    ("src->dst"), which only the fifth reads."""
    clean = [p for p in results if f"{p.src}->{p.dst}" not in lossy]
    out = []

    bad, n = [], 0
    for p in clean:
        d = _median(p, BASELINE)
        if d is None or p.idle_rtt_ms <= KNEE_MARGIN * knee_rtt_ms(model):
            continue
        n += 1
        window = d * p.idle_rtt_ms / 1000.0 / 8.0
        if abs(window - model.window_bytes) > WINDOW_TOLERANCE * model.window_bytes:
            bad.append(f"{p.src}->{p.dst} {window / 1e3:.0f} kB")
    out.append(
        Relation(
            1,
            "default falls as 1/RTT beyond its knee",
            n > 0 and not bad,
            n,
            "; ".join(bad) or f"window within 20 % of {model.window_bytes / 1e3:.0f} kB",
        )
    )

    bad, n = [], 0
    for p in clean:
        t = _median(p, "tuned")
        if t is None or p.tuned_window_bytes < p.bdp_bytes:
            continue
        n += 1
        if t < CAP_SHARE * model.rate_bps:
            bad.append(f"{p.src}->{p.dst} {t / 1e6:.1f} Mbit/s")
    out.append(
        Relation(
            2,
            "tuned within 20 % of the cap",
            n > 0 and not bad,
            n,
            "; ".join(bad) or "all at the cap",
        )
    )

    bad, n = [], 0
    for p in clean:
        t, d = _median(p, "tuned"), _median(p, BASELINE)
        if t is None or d is None or p.idle_rtt_ms < TUNED_FROM_RTT_MS:
            continue
        n += 1
        if t < (1 - NOISE) * d:
            bad.append(f"{p.src}->{p.dst} {t / 1e6:.1f} < {d / 1e6:.1f}")
    out.append(
        Relation(
            3, "tuned >= default from 20 ms", n > 0 and not bad, n, "; ".join(bad) or "everywhere"
        )
    )

    bad, n = [], 0
    for p in clean:
        d = _median(p, BASELINE)
        for name in ("p4", "p8"):
            m = _median(p, name)
            if m is None or d is None:
                continue
            n += 1
            want = min(model.rate_bps, VARIANTS[name].streams * d)
            if abs(m - want) > STREAMS_TOLERANCE * want:
                bad.append(f"{p.src}->{p.dst} {name} {m / 1e6:.1f} vs {want / 1e6:.1f}")
    out.append(
        Relation(
            4,
            "P streams carry P x default until the cap",
            n > 0 and not bad,
            n,
            "; ".join(bad) or "within 25 %",
        )
    )

    bad, n, detail = [], 0, "no lossy pair"
    for p in results:
        d = _median(p, BASELINE)
        if f"{p.src}->{p.dst}" not in lossy or d is None:
            continue
        n += 1
        ceiling = min(p.mathis_bps, p.default_ceiling_bps, model.rate_bps)
        low, high = loss_band(p.retransmits)
        band = f"band {low:.2f}-{high:.2f} x"
        if math.isinf(ceiling) or not low <= d / ceiling <= high:
            bad.append(f"{p.src}->{p.dst} {d / 1e6:.2f} vs {ceiling / 1e6:.2f} Mbit/s ({band})")
        detail = f"measured {d / 1e6:.2f}, ceiling {ceiling / 1e6:.2f} Mbit/s, {band}"
    out.append(
        Relation(
            5,
            "the loss ceiling explains a lossy pair",
            n > 0 and not bad,
            n,
            "; ".join(bad) or detail,
        )
    )
    return out


def table(results: Sequence[PairResult], model: NetModel, lossy: Collection[str]) -> list[str]:
    """Measured medians next to the model's expectation, one line per pair and variant."""
    lines = [
        f"{'pair':<40} {'rtt_ms':>7} {'variant':<8} {'runs':>4} {'measured':>9} "
        f"{'spread%':>7} {'model':>7} {'ratio':>6}"
    ]
    for p in results:
        is_lossy = f"{p.src}->{p.dst}" in lossy
        for v in p.variants.values():
            want = expected_bps(p, v.name, model, is_lossy)
            lines.append(
                f"{p.src + '->' + p.dst + (' (loss)' if is_lossy else ''):<40} "
                f"{p.idle_rtt_ms:>7.1f} {v.name:<8} {v.runs:>4} {v.median_bps / 1e6:>9.2f} "
                f"{v.spread_pct:>7.1f} {want / 1e6:>7.2f} {v.median_bps / want:>6.2f}"
            )
    return lines
