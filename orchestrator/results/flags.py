"""Physics and consistency checks on measurement rows: the `flags` column.

Pure functions over rows in the results schema (values as text or numbers), so a
sweep's collect, the public-data converters and every reader of a file that predates
the column compute the same flags. A row's flags are names from FLAGS joined by ';'
(empty: nothing found).

Each flag says what it invalidates (INVALIDATES): the row's RTT (with the rest of its
ping figures, loss and jitter), its throughput, or both. Reports, fits, the matrix and
the site leave a row out of a measure's figures only when one of its flags invalidates
that measure (`rtt_invalid`, `throughput_invalid`): a throughput flag leaves the row's
RTT in. `--include-flagged` keeps everything; they say how many and why.

- below_fibre_floor (both): an RTT statistic of the row (min, p50, mean, p90, p99, max)
  is below the fibre floor, 2 x distance / (c x 2/3), by more than FLOOR_TOLERANCE_MS:
  faster than light, so the row's ends are not the regions it names (or its tool is
  wrong), and nothing it says is about that pair.
- asymmetric (rtt): the two directions of a pair in one sweep, over ends of the same
  network tiers (a PREMIUM/STANDARD row against the STANDARD/PREMIUM reverse), differ
  in RTT by more than max(ASYMMETRY_MIN_MS, ASYMMETRY_FRACTION of the smaller).
- receiver_exceeds_sender (throughput): the receiver's count of the bytes the sender
  counted (`bytes`, aligned by parse.align) is more than RECEIVER_EXCESS_FRACTION above
  the sender's own count (throughput_sender_bps x duration_s) and by more than one
  congestion window (`max_cwnd_bytes`, the bytes in flight as the omit ended): a
  difference the omit boundary cannot explain, so a count is wrong. A row without
  `bytes` (an import) compares the two rates.
- duration_short (throughput): the measured interval is shorter than asked by more than
  DURATION_SHORT_FRACTION.
- few_samples (rtt): the RTT comes from fewer than MIN_RTT_SAMPLES echoes.
- host_stall (nothing more): some of the row's ping samples were delayed together with
  most of a host's tests, or every host's, at one moment (orchestrator.results.stalls):
  the machine stalled, not the path. Those samples are already left out of the row's
  figures (its percentiles, min, mean, max and mdev), so the flag leaves nothing else
  out. It is found in the round's raw documents, not in the row: `flag_rows` keeps it
  as the row has it (FROM_RAW).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import Any

from orchestrator.core import fibre_rtt_ms
from orchestrator.results import tiers

BELOW_FIBRE_FLOOR = "below_fibre_floor"
ASYMMETRIC = "asymmetric"
RECEIVER_EXCEEDS_SENDER = "receiver_exceeds_sender"
DURATION_SHORT = "duration_short"
FEW_SAMPLES = "few_samples"
HOST_STALL = "host_stall"
FLAGS: tuple[str, ...] = (
    BELOW_FIBRE_FLOOR,
    ASYMMETRIC,
    RECEIVER_EXCEEDS_SENDER,
    DURATION_SHORT,
    FEW_SAMPLES,
    HOST_STALL,
)
# Flags found in a round's raw output, not in the row alone: a row keeps them as it has them.
FROM_RAW: tuple[str, ...] = (HOST_STALL,)
SEPARATOR = ";"

# The measures a flag can invalidate. RTT stands for the ping's figures of the row (its
# RTT statistics, loss and jitter); THROUGHPUT for iperf3's.
RTT = "rtt"
THROUGHPUT = "throughput"
MEASURES: tuple[str, ...] = (RTT, THROUGHPUT)
INVALIDATES: dict[str, tuple[str, ...]] = {
    BELOW_FIBRE_FLOOR: (RTT, THROUGHPUT),
    ASYMMETRIC: (RTT,),
    RECEIVER_EXCEEDS_SENDER: (THROUGHPUT,),
    DURATION_SHORT: (THROUGHPUT,),
    FEW_SAMPLES: (RTT,),
    HOST_STALL: (),  # its stalled samples are out of the row's figures already
}

# Region coordinates are the cities the clouds name, not the data centres, which can
# lie up to ~100 km away at each end: 200 km of distance is 2 ms of round trip.
FLOOR_TOLERANCE_MS = 2.0
ASYMMETRY_MIN_MS = 5.0
ASYMMETRY_FRACTION = 0.10
# The aligned counts of a good test do not exceed the sender's (parse.align), unless the
# sender's omit timer fired late and what it wrote meanwhile is in no listing (one test of
# 232 on a machine at load 7 to 9 on 2 CPUs: +2.3 %); the 1 % keeps such small gaps from
# costing a row its throughput. A row written before
# the alignment holds the receiver's own count in `bytes`, which the omit boundary moves
# by -8 to +3 %: a reader that recomputes its flags may flag it; `collect` rebuilds such
# a sweep's rows, aligned, from raw/.
RECEIVER_EXCESS_FRACTION = 0.01
DURATION_SHORT_FRACTION = 0.05
# The median of fewer echoes is one or two samples' luck (the public sets: 5 and 10).
MIN_RTT_SAMPLES = 5

RTT_STATS = ("rtt_min_ms", "rtt_p50_ms", "rtt_avg_ms", "rtt_p90_ms", "rtt_p99_ms", "rtt_max_ms")

REASONS = {
    BELOW_FIBRE_FLOOR: "an RTT below the fibre floor 2 x distance / (c x 2/3) "
    f"by more than {FLOOR_TOLERANCE_MS:g} ms",
    ASYMMETRIC: "the two directions' RTTs differ by more than "
    f"max({ASYMMETRY_MIN_MS:g} ms, {ASYMMETRY_FRACTION:.0%})",
    RECEIVER_EXCEEDS_SENDER: f"the receiver counted over {RECEIVER_EXCESS_FRACTION:.0%} "
    "more of the sender's bytes than the sender sent (aligned at the omit boundary)",
    DURATION_SHORT: f"the measured interval over {DURATION_SHORT_FRACTION:.0%} shorter than asked",
    FEW_SAMPLES: f"fewer than {MIN_RTT_SAMPLES} RTT samples",
    HOST_STALL: "ping samples delayed at one moment with most of a host's tests (or every "
    "host's): the machine stalled, not the path; those samples are left out of the row's "
    "figures (max, mean, jitter, percentiles)",
}


def number(value: Any) -> float | None:
    """A cell as a float; None for empty, text, NaN or infinities."""
    if value is None or isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def row_rtt_ms(row: Mapping[str, Any]) -> float | None:
    """The RTT of a test: the median of its samples; the mean only when a source
    published no median (the public data sets)."""
    p50 = number(row.get("rtt_p50_ms"))
    return p50 if p50 is not None else number(row.get("rtt_avg_ms"))


def row_flags(row: Mapping[str, Any], asked_duration_s: float | None = None) -> list[str]:
    """The flags one row earns on its own (all but `asymmetric`), in FLAGS order."""
    found = []
    km = number(row.get("distance_km"))
    rtts = [x for x in (number(row.get(c)) for c in RTT_STATS) if x is not None]
    if km is not None and rtts and min(rtts) < fibre_rtt_ms(km) - FLOOR_TOLERANCE_MS:
        found.append(BELOW_FIBRE_FLOOR)
    if receiver_exceeds(row, window=True):
        found.append(RECEIVER_EXCEEDS_SENDER)
    measured = number(row.get("duration_s"))
    least = (asked_duration_s or 0.0) * (1.0 - DURATION_SHORT_FRACTION)
    if measured is not None and measured < least:
        found.append(DURATION_SHORT)
    samples = number(row.get("rtt_samples"))
    if samples is not None and samples < MIN_RTT_SAMPLES:
        found.append(FEW_SAMPLES)
    return found


def receiver_and_sender(row: Mapping[str, Any]) -> tuple[float, float] | None:
    """(receiver's, sender's) count of the same bytes, in one unit; None without them.

    `bytes` is the receiver's count of the bytes the sender counted (parse.align) and
    throughput_sender_bps x duration_s / 8 the sender's count. A row without `bytes` (an
    import) gives the two rates, throughput_bps and throughput_sender_bps, instead."""
    sent_bps = number(row.get("throughput_sender_bps"))
    if not sent_bps or sent_bps <= 0:
        return None
    received_bytes, seconds = number(row.get("bytes")), number(row.get("duration_s"))
    if received_bytes is not None and seconds and seconds > 0:
        return received_bytes, sent_bps * seconds / 8.0
    received = number(row.get("throughput_bps"))
    return None if received is None else (received, sent_bps)


def receiver_exceeds(
    row: Mapping[str, Any], fraction: float = RECEIVER_EXCESS_FRACTION, window: bool = False
) -> bool:
    """True when the receiver's count of the sender's bytes is more than `fraction` above
    the sender's own: a difference the omit boundary cannot explain. With `window`, a
    lead of up to one congestion window (`max_cwnd_bytes`) is explained too: the bytes in
    flight as the omit ended, which one end counted and the other did not (a slow, far
    path's whole lead: 70 KB of 1.9 MB at 3 Mbit/s over 330 ms, under one 260 KB window)."""
    counts = receiver_and_sender(row)
    if counts is None:
        return False
    received, sent = counts
    allowed = sent * fraction
    if window and number(row.get("bytes")) is not None:  # counts in bytes, not rates
        allowed = max(allowed, number(row.get("max_cwnd_bytes")) or 0.0)
    return received > sent + allowed


def asymmetric(a_ms: float, b_ms: float) -> bool:
    """True when two directions' RTTs differ by more than max(5 ms, 10 % of the smaller)."""
    return abs(a_ms - b_ms) > max(ASYMMETRY_MIN_MS, ASYMMETRY_FRACTION * min(a_ms, b_ms))


def _direction_key(row: Mapping[str, Any]) -> tuple[str, str, str, str]:
    src = f"{row.get('src_cloud', '')}:{row.get('src_region', '')}"
    dst = f"{row.get('dst_cloud', '')}:{row.get('dst_region', '')}"
    return (str(row.get("sweep_id") or ""), tiers.of_row(row), src, dst)


def asymmetric_rows(rows: Sequence[Mapping[str, Any]]) -> set[int]:
    """Indices of the rows whose reverse direction, in the same sweep and over ends of
    the same tiers, differs by more than the asymmetry bound: the reverse of a
    PREMIUM/STANDARD row is the STANDARD/PREMIUM row of the other direction
    (tiers.reverse). Several rows of one direction count by their median, so a repeat
    does not decide alone."""
    by_direction: dict[tuple[str, str, str, str], list[int]] = {}
    for i, row in enumerate(rows):
        if str(row.get("status") or "ok") != "ok" or row_rtt_ms(row) is None:
            continue
        by_direction.setdefault(_direction_key(row), []).append(i)
    medians = {}
    for key, idx in by_direction.items():
        values = sorted(v for v in (row_rtt_ms(rows[i]) for i in idx) if v is not None)
        mid = len(values) // 2
        medians[key] = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    found: set[int] = set()
    for (sweep, tier, src, dst), idx in by_direction.items():
        reverse = medians.get((sweep, tiers.reverse(tier), dst, src))
        if reverse is not None and asymmetric(medians[(sweep, tier, src, dst)], reverse):
            found.update(idx)
    return found


def flag_rows(
    rows: Sequence[Mapping[str, Any]], asked_duration_s: float | None = None
) -> list[str]:
    """The `flags` cell of every row, in order: computed, but for the flags FROM_RAW,
    which a row keeps as its cell has them."""
    asym = asymmetric_rows(rows)
    out = []
    for i, row in enumerate(rows):
        found = set(row_flags(row, asked_duration_s))
        if i in asym:
            found.add(ASYMMETRIC)
        found.update(f for f in parse(row.get("flags")) if f in FROM_RAW)
        out.append(SEPARATOR.join(f for f in FLAGS if f in found))
    return out


def set_flags(
    rows: Sequence[MutableMapping[str, Any]], asked_duration_s: float | None = None
) -> None:
    """Write the `flags` cell of every row in place."""
    for row, cell in zip(rows, flag_rows(rows, asked_duration_s), strict=True):
        row["flags"] = cell


def parse(cell: Any) -> list[str]:
    """The flags of a `flags` cell (none for an empty cell or a missing one)."""
    return [f for f in str(cell or "").split(SEPARATOR) if f]


def invalidated(cell: Any) -> set[str]:
    """The measures the flags of a `flags` cell invalidate. A name that is not in FLAGS
    (a later version's, or a typo in a file from elsewhere) invalidates every measure."""
    out: set[str] = set()
    for f in parse(cell):
        out.update(INVALIDATES.get(f, MEASURES))
    return out


def rtt_invalid(cell: Any) -> bool:
    """True when a flag of the `flags` cell invalidates the row's RTT (and its ping's
    loss and jitter): leave the row out of every RTT figure."""
    return RTT in invalidated(cell)


def throughput_invalid(cell: Any) -> bool:
    """True when a flag of the `flags` cell invalidates the row's throughput: leave the
    row out of every throughput figure."""
    return THROUGHPUT in invalidated(cell)


def invalidates_text(flag: str, names: Mapping[str, str] | None = None) -> str:
    """What a flag invalidates, for people: its measures' names joined by "and" (as
    `names` calls them), or "nothing else" for a flag whose samples are out already."""
    measures = INVALIDATES.get(flag, MEASURES)
    if not measures:
        return "nothing else (its samples are out of the row's figures already)"
    return " and ".join((names or {}).get(m, m) for m in measures)


def harmless(measure: str) -> tuple[str, ...]:
    """The flags that leave `measure` valid, in FLAGS order (for readers that filter in
    SQL: a row is valid for `measure` when every flag it has is one of these)."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}: one of {', '.join(MEASURES)}")
    return tuple(f for f in FLAGS if measure not in INVALIDATES[f])


def count(cells: Iterable[Any]) -> dict[str, int]:
    """Rows per flag over `flags` cells, in FLAGS order (a row may count under several)."""
    counts = dict.fromkeys(FLAGS, 0)
    for cell in cells:
        for f in parse(cell):
            counts[f] = counts.get(f, 0) + 1
    return counts
