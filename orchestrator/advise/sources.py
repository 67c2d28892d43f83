"""Where `interregion advise` gets a pair's figures, newest first:

1. the history store (results/history.duckdb), when it has the pair;
2. else the newest sweep folder whose measurements.csv has it;
3. else the network model (orchestrator/netmodel/model.py), which is calibrated on
   public AWS/GCP measurements at their real scale.

Emulated tests are never used as figures: the emulation runs the real curve
scaled down (netmodel `scale`), so its throughput says nothing about a real
transfer. When only emulated tests of the pair exist, the answer comes from the
network model and says so. The reverse direction (B -> A) stands in when A -> B
was never measured, and is labelled.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from orchestrator.advise import spread
from orchestrator.advise.tcp_model import (
    ADVICE_FORMAT,
    ADVICE_VERSION,
    Advice,
    PathFacts,
    assumptions,
    buffer_note,
    default_window_from,
    loss_rate,
    sysctl_lines,
)
from orchestrator.core import UserError, parse_utc, stamp
from orchestrator.history import METRICS, opened, store_path, valid_sql
from orchestrator.model import Catalog, Region, is_emulated
from orchestrator.netmodel import (
    BURST_S,
    DEFAULT_MODEL,
    REAL_CAP_BPS,
    REAL_WINDOW_BYTES,
    default_routes,
    load_public_samples,
    pair_key,
    region_rtt_ms,
)
from orchestrator.plan import load_pricing
from orchestrator.report import sweep_dirs
from orchestrator.results import (
    DEFAULT_TIER,
    MEASUREMENTS_FILE,
    SWEEP_FILE,
    describe_tier,
    for_sweep,
    normal_tier,
    read_record,
    read_rows,
    reverse_tier,
    row_rtt_ms,
    rtt_invalid,
    throughput_invalid,
)

HISTORY, SWEEP, MODEL = "history", "sweep", "model"


@dataclass(frozen=True)
class Test:
    """One ok test of the pair (or of its reverse), as either store gives it."""

    sweep_id: str
    started_utc: datetime | None  # None: its row's time is not readable
    forward: bool  # A -> B (False: B -> A)
    emulated: bool
    rtt_ms: float | None  # idle RTT: median of the ping samples, else p50, else mean
    throughput_bps: float | None
    streams: int
    retransmits: int | None
    received_bytes: int | None
    loaded_rtt_ms: float | None
    source: str = ""  # the store's source name (measured, an import)
    settings: str = ""  # non-default iperf3 settings of its sweep ("-w 4M"), if any
    limiter: str = ""  # what limited its throughput (results.limiter), if known
    fingerprint: str = ""  # the store's fingerprint of its set-up ("" from a sweep folder)
    machine_types: str = ""  # "src type -> dst type"
    # the GCP network tiers of its ends, in its own direction (results.tiers)
    tier: str = DEFAULT_TIER

    @property
    def kind(self) -> tuple[bool, int, str, str, str]:
        """Tests of one kind may be pooled: direction, streams, settings, set-up, VMs."""
        return (self.forward, self.streams, self.settings, self.fingerprint, self.machine_types)


@dataclass(frozen=True)
class Evidence:
    """The figures chosen for one pair and where they come from."""

    kind: str  # HISTORY, SWEEP or MODEL
    detail: str  # one line naming the file, sweep and time
    test: Test | None = None  # None for the model
    notes: tuple[str, ...] = ()
    tests: tuple[Test, ...] = ()  # every test found of the pair (the throughput's pool)


# Throughput is a promise only from the median of at least this many tests of one kind.
MIN_THROUGHPUT_TESTS = 3
# The pair's RTT is the median of its real tests (of the chosen test's direction) over
# this window, ending at the newest of them: the history's 1M window.
RTT_WINDOW_DAYS = 30


@dataclass(frozen=True)
class RttFigure:
    """The RTT the advice uses from the pair's own tests, and what it is the median of."""

    rtt_ms: float
    tests: int
    first_utc: datetime | None
    last_utc: datetime | None
    sources: tuple[str, ...] = ()  # the store's sources of those tests ("" a sweep's own)
    rtts_ms: tuple[float, ...] = ()  # each test's RTT: the figure's spread

    @property
    def source(self) -> str:
        first, last = _shown(self.first_utc), _shown(self.last_utc)
        span = (
            f"the test of {last}"
            if self.tests == 1
            else f"{self.tests} tests from {first} to {last}"
        )
        named = [s for s in self.sources if s]
        of = f", source {', '.join(named)}" if named else ""
        return (
            f"the pair's own tests: the median of their idle RTTs over the {RTT_WINDOW_DAYS}-day "
            f"window ending at the newest ({span}{of})"
        )


def window_rtt(evidence: Evidence) -> RttFigure | None:
    """The median idle RTT of the pair's real tests in the chosen test's direction over the
    RTT_WINDOW_DAYS ending at the newest of them (a test without a readable time counts
    only if it is the chosen one); None without a chosen test with an RTT."""
    chosen = evidence.test
    if chosen is None or chosen.rtt_ms is None:
        return None
    same = [
        t for t in (*evidence.tests, chosen)
        if not t.emulated and t.forward == chosen.forward and t.rtt_ms is not None
        and t.rtt_ms > 0
    ]  # fmt: skip
    dated = [(t.started_utc, t) for t in same if t.started_utc is not None]
    if not dated:
        return RttFigure(
            chosen.rtt_ms,
            1,
            chosen.started_utc,
            chosen.started_utc,
            (chosen.source,),
            (chosen.rtt_ms,),
        )
    newest = max(when for when, _ in dated)
    start = newest - timedelta(days=RTT_WINDOW_DAYS)
    # one figure per test: the chosen test is in evidence.tests too
    window = {
        (t.sweep_id, t.started_utc): t for when, t in dated if start <= when <= newest
    }.values()
    ordered = sorted(window, key=_when)
    return RttFigure(
        statistics.median(t.rtt_ms or 0.0 for t in ordered),
        len(ordered),
        ordered[0].started_utc,
        ordered[-1].started_utc,
        tuple(sorted({t.source for t in ordered})),
        tuple(t.rtt_ms or 0.0 for t in ordered),
    )


def pool_notes(evidence: Evidence) -> tuple[str, ...]:
    """What the advice says of the tests it did not pool, or pooled as an allowance."""
    chosen = evidence.test
    if chosen is None or not chosen.throughput_bps:
        return ()
    pool = throughput_pool(evidence)
    if not pool:
        same = [t for t in evidence.tests if not t.emulated and t.kind == chosen.kind
                and t.throughput_bps]  # fmt: skip
        return (
            f"{len(same)} test(s) of this kind measured throughput (newest "
            f"{chosen.throughput_bps / 1e6:.1f} Mbit/s): shown as context, not used; a "
            f"throughput figure needs the median of at least {MIN_THROUGHPUT_TESTS} tests "
            "of one fingerprint, so the network model's window stands",
        )
    if sum(t.limiter == "allowance" for t in pool) * 2 > len(pool):
        return (
            "most of the pooled tests were limited by the VM's allowance, not the window: "
            "their rate is not read as a window",
        )
    return ()


def throughput_pool(evidence: Evidence) -> list[Test]:
    """The tests whose median throughput the advice may use: real ones of the chosen
    test's kind (direction, streams, settings, fingerprint, machine types) with a
    throughput; [] when fewer than MIN_THROUGHPUT_TESTS."""
    chosen = evidence.test
    if chosen is None or not chosen.throughput_bps:
        return []
    pool = [
        t for t in evidence.tests
        if not t.emulated and t.kind == chosen.kind and t.throughput_bps
    ]  # fmt: skip
    return pool if len(pool) >= MIN_THROUGHPUT_TESTS else []


def throughput_source(facts: PathFacts, pooled: int, sources: Iterable[str] = ()) -> str:
    """Where the advice's throughput comes from, in words (the `throughput from:` line),
    naming the store's sources of the pooled tests."""
    if facts.measured_bps:
        named = sorted({s for s in sources if s})
        of = f", source {', '.join(named)}" if named else ""
        return (
            f"measured: the median of {pooled} real tests of one kind (direction, streams, "
            f"settings, fingerprint, machine types{of})"
        )
    return (
        "network model: a small VM's line rate and default window fitted on public "
        f"AWS/GCP measurements (fewer than {MIN_THROUGHPUT_TESTS} real tests of one kind)"
    )


def pick(tests: Iterable[Test]) -> Test | None:
    """The newest usable real test: one with both RTT and throughput before one with
    RTT alone, the pair's own direction before the reverse. Emulated ones never."""
    real = [t for t in tests if not t.emulated and t.rtt_ms is not None and t.rtt_ms > 0]
    for want_throughput in (True, False):
        for forward in (True, False):
            found = [
                t
                for t in real
                if t.forward == forward
                and (not want_throughput or (t.throughput_bps is not None and t.throughput_bps > 0))
            ]
            if found:
                return max(found, key=_when)
    return None


def newest_emulated(tests: Iterable[Test]) -> Test | None:
    return max((t for t in tests if t.emulated), key=_when, default=None)


_NEVER = datetime.min.replace(tzinfo=UTC)


def _when(test: Test) -> datetime:
    """A test's time as a sort key: one without a readable time sorts first."""
    return test.started_utc or _NEVER


def _shown(moment: datetime | None) -> str:
    return stamp(moment) if moment else ""


def iperf3_settings(params: Mapping[str, Any] | None) -> str:
    """The sweep's iperf3 options (its record's `params`) that make a test not default TCP
    ('-w 4M -C bbr')."""
    if not isinstance(params, Mapping):
        return ""
    out = []
    if params.get("window"):
        out.append(f"-w {params['window']}")
    if params.get("congestion"):
        out.append(f"-C {params['congestion']}")
    return " ".join(out)


def _record_settings(text: str | None) -> str:
    """iperf3_settings of the record the history store kept as JSON (any version's)."""
    try:
        record = json.loads(text or "{}")
    except ValueError:
        return ""
    return iperf3_settings(record.get("params")) if isinstance(record, dict) else ""


def _int(value: Any) -> int | None:
    try:
        return None if value in (None, "") else int(float(value))
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    try:
        return None if value in (None, "") else float(value)
    except (TypeError, ValueError):
        return None


# ---- the history store ----------------------------------------------------------------


def history_tests(results: Path, src: str, dst: str) -> list[Test]:
    """Every ok test of src -> dst and dst -> src in the store, less the RTT or throughput
    its flags invalidate (as in every view); [] without a store."""
    path = store_path(results)
    if not path.exists():
        return []
    rtt = METRICS["rtt"].run_sql
    with opened(results, read_only=True) as con:
        rows = con.execute(
            f"SELECT m.sweep_id, m.started_utc, m.src = ? AS forward, s.emulated, "
            f"CASE WHEN {valid_sql('rtt')} THEN {rtt} END AS rtt, "
            f"CASE WHEN {valid_sql('throughput')} THEN m.throughput_bps END, "
            "m.streams, m.retransmits, m.bytes, "
            "m.tcp_rtt_ms, m.source, s.record, m.limiter, m.fingerprint, "
            "m.src_machine_type || ' -> ' || m.dst_machine_type, f.network_tier "
            "FROM measurements m JOIN sweeps s USING (sweep_id) "
            "LEFT JOIN fingerprints f ON f.fingerprint = m.fingerprint "
            "WHERE ((m.src = ? AND m.dst = ?) OR (m.src = ? AND m.dst = ?)) "
            "AND m.status = 'ok'",
            [src, src, dst, dst, src],
        ).fetchall()
    return [
        Test(
            sweep_id=sid,
            started_utc=t.replace(tzinfo=UTC) if t else None,  # the store's: naive UTC
            forward=bool(fwd),
            emulated=bool(emu),
            rtt_ms=_float(rtt_ms),
            throughput_bps=_float(bps),
            streams=_int(streams) or 1,
            retransmits=_int(retr),
            received_bytes=_int(nbytes),
            loaded_rtt_ms=_float(loaded),
            source=source,
            settings=_record_settings(record),
            limiter=limiter or "",
            fingerprint=fp or "",
            machine_types=types or "",
            tier=stored_tier(src if fwd else dst, dst if fwd else src, tier),
        )
        for (sid, t, fwd, emu, rtt_ms, bps, streams, retr, nbytes, loaded, source, record,
             limiter, fp, types, tier) in rows
    ]  # fmt: skip


def stored_tier(src: str, dst: str, tier: str | None) -> str:
    """A stored test's tier in its own direction: an import's fingerprint names the
    row's (PREMIUM/STANDARD), a sweep's the tier of all its GCP hosts."""
    if tier and "/" in tier:
        return normal_tier(tier)
    return for_sweep(src.split(":")[0], dst.split(":")[0], tier)


# ---- sweep folders --------------------------------------------------------------------


def _row_test(
    row: Mapping[str, str], forward: bool, sweep_id: str, settings: str, gcp_tier: Any = None
) -> Test:
    return Test(
        tier=for_sweep(row.get("src_cloud") or "", row.get("dst_cloud") or "", gcp_tier),
        sweep_id=row.get("sweep_id") or sweep_id,
        started_utc=parse_utc(row.get("started_utc")),
        forward=forward,
        emulated=is_emulated(row.get("backend")),
        rtt_ms=None if rtt_invalid(row.get("flags")) else row_rtt_ms(row),
        throughput_bps=(
            None if throughput_invalid(row.get("flags")) else _float(row.get("throughput_bps"))
        ),
        streams=_int(row.get("streams")) or 1,
        retransmits=_int(row.get("retransmits")),
        received_bytes=_int(row.get("bytes")),
        loaded_rtt_ms=_float(row.get("tcp_rtt_ms")),
        settings=settings,
        limiter=row.get("limiter") or "",
        machine_types=f"{row.get('src_machine_type') or ''} -> {row.get('dst_machine_type') or ''}",
    )


@dataclass
class SweepScan:
    """What the sweep folders gave: the pair's tests, and what was left out."""

    tests: list[Test]
    emulated_skipped: int = 0
    unreadable: list[str] = field(default_factory=list)  # one line each


def sweep_tests(results: Path, src: str, dst: str) -> SweepScan:
    """Tests of the pair from sweep folders, newest sweep first, stopping at the first
    sweep with a usable forward test. Emulated sweeps are counted, not read; a sweep
    whose measurements.csv cannot be read is left out and named."""
    scan = SweepScan([])
    for folder in reversed(sweep_dirs(Path(results))):
        record = read_record(folder / SWEEP_FILE)  # None: no readable record
        if record is not None and (record.emulated is True or is_emulated(record.backend)):
            scan.emulated_skipped += 1
            continue
        try:
            rows = read_rows(folder / MEASUREMENTS_FILE)
        except (UserError, OSError, UnicodeDecodeError, csv.Error) as e:
            scan.unreadable.append(f"sweep {folder.name} left out: {e}")
            continue
        for row in rows:
            if row.get("status") not in ("ok", None, ""):
                continue
            s = f"{row.get('src_cloud')}:{row.get('src_region')}"
            d = f"{row.get('dst_cloud')}:{row.get('dst_region')}"
            if (s, d) in ((src, dst), (dst, src)):
                settings = iperf3_settings(record.params.to_dict() if record else None)
                options = record.cloud_options if record else None
                tier = options.network_tier if options else None
                scan.tests.append(_row_test(row, s == src, folder.name, settings, tier))
        chosen = pick(scan.tests)
        if chosen is not None and chosen.forward and chosen.throughput_bps:
            probe = Evidence(SWEEP, "", chosen, (), tuple(scan.tests))
            if throughput_pool(probe):
                break
    return scan


# ---- choosing -------------------------------------------------------------------------


def _described(test: Test, where: str, src: str, dst: str) -> str:
    direction = "" if test.forward else f" (no {src} -> {dst} test: its reverse, {dst} -> {src})"
    what = "RTT and throughput" if test.throughput_bps else "RTT only (throughput modelled)"
    if test.throughput_bps and test.settings:
        what += f" (iperf3 {test.settings}: not default TCP, its window stands in for it)"
    source = f", source {test.source}" if test.source else ""
    when = _shown(test.started_utc)
    return f"{where}{source}: test of {when} in {test.sweep_id}, {what}{direction}"


def _emulated_note(test: Test | None, skipped: int, results: Path) -> list[str]:
    notes = []
    if test is not None:
        notes.append(
            f"emulated tests of this pair (newest {test.sweep_id}) are not used: the "
            "emulation is the network model scaled down, so its figures are not scaled back"
        )
    elif skipped:
        notes.append(
            f"{skipped} emulated sweep(s) under {results} not used: emulated figures are "
            "not scaled back"
        )
    return notes


def of_tier(tests: Iterable[Test], src: str, dst: str, tier: str) -> tuple[list[Test], int]:
    """The tests over ends of GCP network tier `tier` (the reverse direction's of the
    reversed tier), and how many of another tier were left out: tiers are never pooled."""
    want = for_sweep(src.split(":")[0], dst.split(":")[0], tier)
    kept, other = [], 0
    for t in tests:
        if t.tier == (want if t.forward else reverse_tier(want)):
            kept.append(t)
        else:
            other += 1
    return kept, other


def _tier_note(other: int, tier: str) -> list[str]:
    if not other:
        return []
    return [
        f"{other} test(s) of this pair over another GCP network tier left out: the advice "
        f"is for the {describe_tier(tier)} (--tier chooses another)"
    ]


def find_evidence(
    results: Path,
    src: str,
    dst: str,
    *,
    measured_only: bool = False,
    tier: str = DEFAULT_TIER,
) -> Evidence:
    """The figures for src -> dst over GCP network tier `tier`: store, else sweep
    folders, else the network model. With `measured_only`, no real test anywhere is a
    UserError saying how to get one."""
    results = Path(results)
    stored, other = of_tier(history_tests(results, src, dst), src, dst, tier)
    chosen = pick(stored)
    emulated = newest_emulated(stored)
    if chosen is not None:
        where = f"history store {store_path(results)}"
        found = Evidence(HISTORY, _described(chosen, where, src, dst), chosen, (), tuple(stored))
        said = (*_tier_note(other, tier), *_emulated_note(emulated, 0, results))
        return replace(found, notes=(*said, *pool_notes(found)))
    scan = sweep_tests(results, src, dst)
    scan.tests, more = of_tier(scan.tests, src, dst, tier)
    other += more
    chosen = pick(scan.tests)
    if chosen is not None:
        where = f"sweep {chosen.sweep_id} ({results / chosen.sweep_id / MEASUREMENTS_FILE})"
        found = Evidence(SWEEP, _described(chosen, where, src, dst), chosen, (), tuple(scan.tests))
        said = (
            *_tier_note(other, tier),
            *_emulated_note(emulated, 0, results),
            *scan.unreadable,
            *pool_notes(found),
        )
        return replace(found, notes=said)
    notes = [
        *_tier_note(other, tier),
        *_emulated_note(emulated, scan.emulated_skipped, results),
        *scan.unreadable,
    ]
    if measured_only:
        raise UserError(no_data_message(results, src, dst, bool(notes)))
    return Evidence(
        MODEL,
        "network model (orchestrator/netmodel): RTT from the route table, else the distance; "
        "a small VM's line rate and default window fitted on public AWS/GCP measurements",
        None,
        tuple(notes),
    )


def no_data_message(results: Path, src: str, dst: str, emulated_only: bool) -> str:
    clouds = {src.split(":")[0], dst.split(":")[0]}
    backend = clouds.pop() if len(clouds) == 1 else "cloud"
    only = " (only emulated ones, which are not scaled back)" if emulated_only else ""
    return (
        f"no measurements of {src} -> {dst} under {results}{only}: measure the pair with "
        f"'interregion sweep --backend {backend} --regions {src},{dst}', or import published "
        "data with 'interregion history import', or drop --measured-only to answer from "
        "the network model"
    )


def sender_baseline(catalog: Catalog | None, a: Region) -> dict[str, Any]:
    """The sustained rate of the sender's machine type (the catalog's type for its cloud,
    what sweeps run) when it is below its burst: regions.yaml's baseline."""
    if catalog is None:
        return {}
    name = catalog.machine_types.get(a.cloud, "")
    bandwidth = catalog.bandwidth.get(name)
    if bandwidth is None or bandwidth.baseline_bps >= bandwidth.burst_bps:
        return {"machine_type": name}
    return {"machine_type": name, "baseline_bps": bandwidth.baseline_bps, "burst_s": BURST_S}


def path_facts(
    evidence: Evidence,
    a: Region,
    b: Region,
    catalog: Catalog | None = None,
    tier: str = DEFAULT_TIER,
) -> PathFacts:
    """The model's inputs: the test's figures where there is a test, the network model's
    (at real scale: the fitted cap and window, not the emulator's) for the rest; with the
    catalog, the sender VM's baseline for long transfers."""
    test = evidence.test
    vm = sender_baseline(catalog, a)
    if test is None or test.rtt_ms is None:
        rtt, rtt_source = model_rtt(a, b, tier)
        return PathFacts(
            rtt_ms=rtt,
            line_rate_bps=REAL_CAP_BPS,
            default_window_bytes=REAL_WINDOW_BYTES,
            loss_rate=None,
            rtt_source=rtt_source,
            **vm,
        )
    own = window_rtt(evidence)
    assert own is not None  # the chosen test has an RTT
    pool = throughput_pool(evidence)
    measured = statistics.median(t.throughput_bps or 0.0 for t in pool) if pool else None
    allowance = bool(pool) and sum(t.limiter == "allowance" for t in pool) * 2 > len(pool)
    if not measured or allowance:
        # a VM's allowance is no window: the window stays the model's
        window: float = REAL_WINDOW_BYTES
    else:
        window = default_window_from(measured, own.rtt_ms, test.streams)
    retransmits = (
        statistics.median(t.retransmits for t in pool if t.retransmits is not None)
        if pool and any(t.retransmits is not None for t in pool)
        else None
    )
    received = (
        statistics.median(t.received_bytes for t in pool if t.received_bytes)
        if pool and any(t.received_bytes for t in pool)
        else None
    )
    return PathFacts(
        rtt_ms=own.rtt_ms,
        # a faster VM than the model's small one shows its own line rate
        line_rate_bps=max(REAL_CAP_BPS, measured or 0.0),
        default_window_bytes=window,
        loss_rate=loss_rate(_int(retransmits), _int(received)) if measured else None,
        loaded_rtt_ms=test.loaded_rtt_ms,
        measured_bps=measured,
        measured_streams=test.streams,
        rtt_source=own.source,
        rtt_tests=own.tests,
        **vm,
    )


def model_rtt(a: Region, b: Region, tier: str = DEFAULT_TIER) -> tuple[float, str]:
    """The RTT of a pair without a test of its own: the route table's of its GCP network
    tier (the public data's median for the pair in that tier), else the distance
    model's; with which one it is and its source."""
    table = default_routes(tier=tier)
    routed = table.get(a.key, b.key)
    if routed is not None:
        source = table.source_of.get(pair_key(a.key, b.key), "")
        return routed, (
            f"route table (netmodel.routes: the public measurements' median, source "
            f"{source}, {describe_tier(for_sweep(a.cloud, b.cloud, tier))})"
        )
    return region_rtt_ms(a, b, DEFAULT_MODEL), "distance model (no test, no route-table entry)"


def route_rtts(a: Region, b: Region, tier: str = DEFAULT_TIER) -> list[float]:
    """Every public RTT sample of the pair (both directions) in its GCP network tier."""
    want = for_sweep(a.cloud, b.cloud, tier)
    return [
        s.rtt_ms
        for s in load_public_samples().samples
        if (s.src, s.dst) in ((a.key, b.key), (b.key, a.key))
        and s.network_tier == (want if s.src == a.key else reverse_tier(want))
    ]


def spread_of(
    evidence: Evidence, facts: PathFacts, a: Region, b: Region, tier: str = DEFAULT_TIER
) -> spread.Spread:
    """The ranges of the advice's RTT and default window, each named by its source
    (advise.spread): the pair's own tests where the figure is theirs, else the public
    data of its tier, else the models' error."""
    own = window_rtt(evidence) if evidence.test is not None else None
    if own is not None and facts.rtt_tests:
        rtt = spread.rtt_range(own.rtts_ms, facts.rtt_ms, "of the pair's own tests' RTTs")
    else:
        rtt = spread.rtt_range(
            route_rtts(a, b, tier),
            facts.rtt_ms,
            f"public RTTs of the pair ({describe_tier(for_sweep(a.cloud, b.cloud, tier))})",
        )
    pooled = (
        [t.throughput_bps or 0.0 for t in throughput_pool(evidence)] if facts.measured_bps else []
    )
    window = spread.window_range(
        pooled, facts.rtt_ms, facts.measured_streams, facts.default_window_bytes
    )
    return spread.Spread(rtt, window)


def range_doc(advice_range: spread.AdviceRange) -> dict[str, Any]:
    """The advice JSON's `range`: each option's low-high time and what its ends assume."""
    s = advice_range.spread
    return {
        "rtt_ms": {"low": s.rtt_ms.low, "high": s.rtt_ms.high, "source": s.rtt_ms.source},
        "default_window_bytes": {
            "low": s.window_bytes.low,
            "high": s.window_bytes.high,
            "source": s.window_bytes.source,
        },
        "options": {
            o.name: dict(zip(("low_s", "high_s"), advice_range.times(o.name), strict=True))
            for o in advice_range.fast.options
        },
        "loss_rate_below": advice_range.loss_bound
        if math.isfinite(advice_range.loss_bound)
        else None,
    }


def egress_cost(size_bytes: int, a: Region, b: Region) -> dict[str, Any]:
    """Egress of `size_bytes` from a to b at list prices (infra/pricing.yaml)."""
    pricing = load_pricing()
    per_gb = pricing.egress_usd_per_gb(a, b)
    return {
        "egress_usd": round(size_bytes / 1e9 * per_gb, 2),
        "usd_per_gb": per_gb,
        "kind": pricing.egress_kind(a, b),
        "source": f"infra/pricing.yaml (list prices as of {pricing.as_of})",
    }


def vm_cost(
    advice: Advice, a: Region, b: Region, catalog: Catalog | None = None
) -> dict[str, Any] | None:
    """What the two VMs of the advice (the catalog's machine type at each end, as sweeps
    run) cost for each option's time at list prices (infra/pricing.yaml: instance, public
    IPv4 and disk); None when the advice names no VM (no catalog) or the pricing file
    prices another machine type than the one advised."""
    if catalog is None:
        return None
    pricing = load_pricing()
    ends = []
    for region in (a, b):
        prices = pricing.clouds[region.cloud]
        machine_type = catalog.machine_types.get(region.cloud, "")
        if not machine_type or machine_type != prices.machine_type:
            return None
        ends.append((region.key, machine_type, prices.vm_usd_per_hour))
    per_hour = sum(usd for _, _, usd in ends)
    return {
        "machine_types": {key: machine_type for key, machine_type, _ in ends},
        "usd_per_hour": round(per_hour, 6),
        "option_usd": {o.name: round(o.time_s / 3600.0 * per_hour, 2) for o in advice.options},
        "source": f"infra/pricing.yaml (instance, public IPv4 and disk, as of {pricing.as_of})",
    }


def advice_doc(
    advice: Advice,
    evidence: Evidence,
    src: str,
    dst: str,
    cost: dict[str, Any] | None = None,
    vm: dict[str, Any] | None = None,
    advice_range: spread.AdviceRange | None = None,
    tier: str = DEFAULT_TIER,
) -> dict[str, Any]:
    """The JSON of `interregion advise --json` (docs/advise.md); `cost` is the egress
    (egress_cost), `vm` the VMs' time (vm_cost), set under cost.vm."""
    facts = advice.facts
    test = evidence.test

    def finite(x: float) -> float | None:
        return x if math.isfinite(x) else None

    return {
        "format": ADVICE_FORMAT,
        "version": ADVICE_VERSION,
        "src": src,
        "dst": dst,
        "size_bytes": advice.size_bytes,
        "network_tier": for_sweep(src.split(":")[0], dst.split(":")[0], tier),
        "source": {
            "kind": evidence.kind,
            "detail": evidence.detail,
            "sweep_id": test.sweep_id if test else None,
            "started_utc": stamp(test.started_utc) if test and test.started_utc else None,
            "reverse_direction": bool(test and not test.forward),
            "throughput_measured": bool(facts.measured_bps),
            "throughput_tests": len(throughput_pool(evidence)),
        },
        "cost": None if cost is None else {**cost, "vm": vm},
        "path": {
            "rtt_ms": facts.rtt_ms,
            "rtt_source": facts.rtt_source,
            "throughput_source": throughput_source(
                facts,
                len(throughput_pool(evidence)),
                (t.source for t in throughput_pool(evidence)),
            ),
            "rtt_tests": facts.rtt_tests,
            "rtt_window_days": RTT_WINDOW_DAYS if facts.rtt_tests else None,
            "machine_type": facts.machine_type,
            "baseline_bps": facts.baseline_bps,
            "burst_s": facts.burst_s if facts.baseline_bps else None,
            "loaded_rtt_ms": facts.loaded_rtt_ms,
            "line_rate_bps": facts.line_rate_bps,
            "bdp_bytes": facts.bdp_bytes,
            "default_window_bytes": facts.default_window_bytes,
            "tuned_buffer_bytes": facts.tuned_buffer_bytes,
            "tuned_rmem_bytes": facts.tuned_rmem_bytes,
            "tuned_wmem_bytes": facts.tuned_wmem_bytes,
            "default_buffers_suffice": facts.default_buffers_suffice,
            "measured_bps": facts.measured_bps,
            "measured_streams": facts.measured_streams if facts.measured_bps else None,
            "loss_rate": facts.loss_rate,
            "mathis_bps": finite(facts.mathis_bps),
            "loss_model_fails": facts.loss_model_fails,
            "loss_ceiling_bps": finite(facts.loss_ceiling_bps),
        },
        "options": [
            {
                "name": o.name,
                "streams": o.streams,
                "window_bytes": o.window_bytes,
                "throughput_bps": o.throughput_bps,
                "limit": o.limit,
                "time_s": o.time_s,
                "files_time_s": o.files_time_s,
                "burst_s": o.burst_s,
                "sustained_bps": o.sustained_bps,
                "vm_usd": vm["option_usd"][o.name] if vm else None,
            }
            for o in advice.options
        ],
        "files": None
        if advice.files is None
        else {
            "count": advice.files.count,
            "file_bytes": advice.files.file_bytes,
            "tcp_handshake_s": advice.files.tcp_handshake_s,
            "tls_handshake_s": advice.files.tls_handshake_s,
            "slow_start_s": advice.files.slow_start_s,
            "per_file_overhead_s": advice.files.per_file_overhead_s,
            "reused_connection_s": advice.files.reused_connection_s,
            "new_connection_per_file_s": advice.files.new_connection_per_file_s,
        },
        "range": None if advice_range is None else range_doc(advice_range),
        "sysctl": sysctl_lines(facts),
        "buffers": buffer_note(facts),
        "notes": [*evidence.notes, *advice.notes],
        "assumptions": [*assumptions(facts), *_range_assumptions(advice_range)],
    }


def _range_assumptions(advice_range: spread.AdviceRange | None) -> list[str]:
    """What the range and the loss bound take for granted (advise.spread)."""
    if advice_range is None:
        return []
    s = advice_range.spread
    lines = [
        f"range: the fast end at RTT {s.rtt_ms.low:.1f} ms and a default window of "
        f"{s.window_bytes.high / 1e6:.2f} MB, the slow end at {s.rtt_ms.high:.1f} ms and "
        f"{s.window_bytes.low / 1e6:.2f} MB (RTT: {s.rtt_ms.source}; window: "
        f"{s.window_bytes.source})"
    ]
    if math.isfinite(advice_range.loss_bound):
        lines.append(
            f"loss: the default TCP estimate holds while loss stays below "
            f"p = {advice_range.loss_bound:.2g} (where Mathis's ceiling of one stream at "
            "this RTT falls to its rate); above it, loss limits the stream"
        )
    return lines
