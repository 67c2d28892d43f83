"""Running a TCP study: the sweep's stages around a measure stage of its own.

A study is a sweep folder (sweep.json, hosts, raw/, the sweep's provision, prepare and
teardown) whose record has a `study` part. Its measure stage runs the ping phase
first (the idle RTT every tuned buffer is sized from), then each pair's variants in
exclusive rounds: the sweep's schedule, each round played once per test of the
pairs' shuffled orders. A tuned test carries its buffers in both hosts' parts; the
agent raises them for that test and puts them back; a restore play over every host
follows the rounds, also after an interrupt or an error.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from orchestrator.core import UserError
from orchestrator.drivers import RoundProgress, plain_view, run_playbook, write_playbook
from orchestrator.model import Host, iperf3_port, is_emulated
from orchestrator.plan import (
    Pair,
    line_rate_bps,
    pair_rtt_ms,
    schedule,
    slot_seconds,
    tune_spec,
    tuned_buffer_bytes,
)
from orchestrator.results import (
    FAILED,
    HOSTS_FILE,
    MEASUREMENT_COLUMNS,
    RowContext,
    SlotPlan,
    StudyRecord,
    SweepStatus,
    format_value,
    host_doc,
    pair_key,
    read_raw_round,
    read_rows,
    round_rows,
    safe_name,
    write_atomic,
)
from orchestrator.study.variants import (
    VARIANTS,
    Variant,
    check_buffer,
    forward_rounds,
    host_buffer_limit,
    run_order,
)
from orchestrator.sweep import (
    ClosedRound,
    PlannedRound,
    RoundTracker,
    Sweep,
    agent_parts,
    check_playbook_end,
    congestion_problem,
    load_hosts,
    next_round_no,
    restore_hosts,
    round_play,
    row_context,
    run_rounds,
    state_folder,
    write_sweep_inventory,
)

STUDY_FILE = "study.csv"
STUDY_COLUMNS = (
    "variant",
    "repeat",
    "congestion",
    "idle_rtt_ms",
    "tuned_buffer_bytes",
    "host_tcp_rmem_max_bytes",
)
ROW_COLUMNS = (*MEASUREMENT_COLUMNS, *STUDY_COLUMNS)


def table_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A long CSV of `columns` (units in the names), values as store formats them."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: format_value(row.get(c)) for c in columns})
    return out.getvalue()


def read_table(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def study_part(sweep: Sweep) -> StudyRecord:
    study = sweep.record.study
    if study is None:
        raise UserError(f"{sweep.id} is a sweep, not a study: use 'interregion sweep' commands")
    return study


def variants_of(sweep: Sweep) -> list[Variant]:
    return [VARIANTS[n] for n in study_part(sweep).variants]


def forward_tests(pairs: Sequence[Pair], sweep: Sweep) -> list[list[Pair]]:
    """The study's tests by the sweep's exclusive rounds: one forward test per slot."""
    rounds = schedule(
        pairs,
        max_concurrent=sweep.record.max_concurrent,
        sequential=sweep.record.sequential,
    )
    return forward_rounds(rounds)


def check_plan_buffers(
    pairs: Sequence[Pair], backend: str, emulated: str | None, max_buffer_bytes: int | None
) -> None:
    """Before anything is provisioned: every tuned buffer, sized from the model's RTT,
    fits what the hosts can set."""
    rate = line_rate_bps(is_emulated(backend), emulated)
    limit = host_buffer_limit(max_buffer_bytes)
    for pair in pairs:
        rtt = pair_rtt_ms(pair)
        check_buffer(f"{pair.src.key}->{pair.dst.key}", tuned_buffer_bytes(rate, rtt), rtt, limit)


def idle_rtts(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], float]:
    """Each directed test's idle RTT from the ping phase (its median)."""
    found = {}
    for row in rows:
        value = row.get("rtt_p50_ms")
        if value not in (None, ""):
            found[pair_key(row)] = float(value)
    return found


def pair_plan(
    tests: Sequence[Pair], sweep: Sweep, measured: Mapping[tuple[str, str], float]
) -> dict[str, dict[str, Any]]:
    """Per pair: its idle RTT (the ping phase's, else the model's, saying which), the
    tuned buffer sized from it, and its shuffled order of tests."""
    study = study_part(sweep)
    variants = variants_of(sweep)
    rate = line_rate_bps(sweep.emulated, sweep.record.plan.emulated_type)
    limit = host_buffer_limit(study.max_buffer_bytes)
    out = {}
    for pair in tests:
        rtt = measured.get(pair.key)
        source = "ping phase"
        if rtt is None:
            rtt, source = pair_rtt_ms(pair), "network model (the ping phase has no RTT)"
        rtt = round(rtt, 3)
        buffer = tuned_buffer_bytes(rate, rtt)
        name = f"{pair.src.key}->{pair.dst.key}"
        check_buffer(name, buffer, rtt, limit)
        out[name] = {
            "src": pair.src.key,
            "dst": pair.dst.key,
            "idle_rtt_ms": rtt,
            "idle_rtt_source": source,
            "line_rate_bps": rate,
            "tuned_buffer_bytes": buffer,
            "order": run_order(pair.src.key, pair.dst.key, variants, study.repeats, study.seed),
        }
    return out


def study_rounds(
    by_round: Sequence[Sequence[Pair]],
    pairs: Mapping[str, Mapping[str, Any]],
    sweep: Sweep,
    hosts: Mapping[str, Host],
    first: int,
) -> tuple[list[PlannedRound], list[dict[str, Any]], dict[int, dict[str, list[Any]]]]:
    """The rounds, their plays and what each slot runs: [round][client] = [variant, repeat]."""
    params = sweep.params
    planned, plays, meta = [], [], {}
    n = first
    for tests in by_round:
        per_test = len(next(iter(pairs.values()))["order"])
        for j in range(per_test):
            port = iperf3_port(n)
            slots, parts, what = [], {}, {}
            for pair in tests:
                info = pairs[f"{pair.src.key}->{pair.dst.key}"]
                name, repeat = info["order"][j]
                variant = VARIANTS[name]
                slot = SlotPlan(pair.src.key, pair.dst.key, reverse=False, port=port)
                slots.append(slot)
                what[pair.src.key] = [name, repeat]
                vparams = replace(
                    params, streams=variant.streams, congestion=variant.congestion or None
                )
                got = agent_parts(n, [slot], hosts, vparams, pings=False, streams=variant.streams)
                if variant.tuned:
                    for alias, part in got.items():
                        part["tune"] = tune_spec(alias, info["tuned_buffer_bytes"], sweep.backend)
                parts.update(got)
            expected = max(
                slot_seconds(params, 1, pairs[f"{p.src.key}->{p.dst.key}"]["idle_rtt_ms"], False)
                for p in tests
            )
            round_ = PlannedRound(n, slots, round(expected, 3))
            planned.append(round_)
            plays.append(round_play(round_, parts))
            meta[n] = what
            n += 1
    return planned, plays, meta


def _rmem_max(doc: Mapping[str, Any] | None) -> int | None:
    """The receive buffer max the server had during its test (tuned, else as found)."""
    tuned = (doc or {}).get("tuned") or {}
    text = str(tuned.get("net.ipv4.tcp_rmem", ""))
    return int(text.split()[-1]) if text.split() else None


def study_rows(
    round_no: int,
    slots: Sequence[SlotPlan],
    texts: Mapping[str, str | None],
    ctx: RowContext,
    what: Mapping[str, Sequence[Any]],
    pairs: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """One round's rows from its hosts' raw outputs, each with its variant, repeat, idle
    RTT and buffers: what study.csv holds, rebuildable from raw/ and the record."""
    rows = []
    for row in round_rows(round_no, slots, texts, ctx):
        src, dst = pair_key(row)
        name, repeat = what[src]
        variant = VARIANTS[name]
        info = pairs[f"{src}->{dst}"]
        client, _ = host_doc(texts.get(src))
        server, _ = host_doc(texts.get(dst))
        tune_error = (client or {}).get("tune_error") or (server or {}).get("tune_error")
        if tune_error:
            row = {**row, "status": FAILED, "error": f"tuning failed: {tune_error}"}
        rows.append(
            {
                **row,
                "streams": variant.streams,
                "variant": name,
                "repeat": repeat,
                "congestion": variant.congestion,
                "idle_rtt_ms": info["idle_rtt_ms"],
                "tuned_buffer_bytes": info["tuned_buffer_bytes"] if variant.tuned else "",
                "host_tcp_rmem_max_bytes": _rmem_max(server) if variant.tuned else "",
            }
        )
    return rows


def check_congestion(sweep: Sweep) -> None:
    """Every congestion control a variant asks for is available on every host."""
    doc = json.loads((sweep.dir / HOSTS_FILE).read_text())
    available = {
        n: str(f.get("tcp_available_congestion_control", ""))
        for n, f in doc.get("facts", {}).items()
    }
    for variant in variants_of(sweep):
        problem = variant.congestion and congestion_problem(variant.congestion, available)
        if problem:
            raise UserError(f"variant {variant.name}: {problem} (nothing was measured)")


def measure_study(sweep: Sweep, progress: RoundProgress | None = None) -> None:
    """The ping phase, then every pair's variants in exclusive rounds; the hosts'
    settings are restored at the end whatever happens."""
    progress = progress or RoundProgress()
    hosts = load_hosts(sweep)
    by_name = {h.name: h for h in hosts}
    study = study_part(sweep)
    check_congestion(sweep)
    with sweep.stage("measure"):
        sweep.record.status = SweepStatus.MEASURING
        by_round = forward_tests(sweep.planned_pairs(), sweep)
        tests = [p for r in by_round for p in r]
        run_rounds(sweep, hosts, tests, "main", progress, phase=True)
        pairs = pair_plan(tests, sweep, idle_rtts(read_rows(sweep.dir / "measurements.csv")))
        study.pairs = pairs
        first = next_round_no(sweep)
        planned, plays, meta = study_rounds(by_round, pairs, sweep, by_name, first)
        study.rounds = {str(k): v for k, v in meta.items()}
        sweep.save()
        try:
            run_study_rounds(sweep, hosts, planned, plays, meta, pairs, progress)
        finally:
            if any(VARIANTS[v].tuned for v in study.variants):
                study.restore = restore_hosts(sweep, hosts, "study-restore.yml")
                sweep.save()
        sweep.record.status = SweepStatus.MEASURED


def run_study_rounds(
    sweep: Sweep,
    hosts: Sequence[Host],
    planned: Sequence[PlannedRound],
    plays: list[dict[str, Any]],
    meta: Mapping[int, Mapping[str, Sequence[Any]]],
    pairs: Mapping[str, Mapping[str, Any]],
    progress: RoundProgress,
) -> None:
    state = state_folder(sweep)
    book = state / f"study-{planned[0].number:03d}.yml"
    write_playbook(book, plays)
    ctx = row_context(sweep, hosts)
    path = sweep.dir / STUDY_FILE
    rows: list[dict[str, Any]] = []

    def on_round(done: ClosedRound) -> None:
        state_folder(sweep)
        raw = read_raw_round(sweep.dir, done.number)
        texts = {name: raw.get(safe_name(name)) for name in hosts_of(done.slots)}
        new = study_rows(done.number, done.slots, texts, ctx, meta[done.number], pairs)
        rows.extend(new)
        write_atomic(path, table_text(rows, ROW_COLUMNS))
        sweep.record.rounds.append(done.entry("study"))
        sweep.save()
        ok = sum(r["status"] == "ok" for r in new)
        progress.round_done(done.number, ok, len(new) - ok, done.wall_s)

    tracker = RoundTracker(
        sweep.dir, [h.name for h in hosts], {r.number: r for r in planned}, ctx, on_round
    )
    progress.begin("study", len(planned), len(planned) * len(planned[0].slots))
    started = time.monotonic()
    try:
        with plain_view(state) as view:
            rc = run_playbook(
                view.state / book.name,
                write_sweep_inventory(sweep, hosts, view),
                on_event=tracker.on_event,
                log_path=state / "ansible-study.log",
                forks=max(len(p.hosts) for p in planned),
                view=view,
            )
        tracker.close()
    finally:
        progress.end()
    sweep.record.measure_runs.append(
        {
            "kind": "study",
            "rounds": len(planned),
            "rounds_closed": len(tracker.closed),
            "wall_s": round(time.monotonic() - started, 3),
            "ansible_rc": rc,
        }
    )
    sweep.save()
    check_playbook_end(sweep, rc, len(tracker.closed), len(planned), state / "ansible-study.log")


def hosts_of(slots: Sequence[SlotPlan]) -> list[str]:
    return [name for slot in slots for name in (slot.client, slot.server)]
