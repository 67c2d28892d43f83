"""The measure stage: the planned tests, in exclusive rounds, through one playbook run.

Each run writes a playbook of its own (state/measure-NNN.yml) with one play per
round, targeting only that round's hosts and carrying only their parts (what
orchestrator.sweep.events reads back). So Ansible's work per round is one task per busy
host and grows with the round, not with the sweep: the controller's time and memory
per round stay flat however many rounds follow (tests/unit/sweep/test_measure.py checks the
input sizes, bench/sweep.py the time). Plays run one after the other, so rounds stay
in step and no host is ever in two tests at once.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.core import PLAYBOOKS, RunFailure, UserError, counted, stamp, utc_now
from orchestrator.drivers import (
    RoundProgress,
    View,
    check_interrupt,
    plain_view,
    run_playbook,
    write_playbook,
)
from orchestrator.model import Host, iperf3_port
from orchestrator.plan import (
    PHASE_FORKS,
    TCP_BUFFER_MAX_BYTES,
    Pair,
    Pricing,
    Slot,
    TestParams,
    line_rate_bps,
    load_pricing,
    over_budget,
    pair_rtt_ms,
    phase_seconds,
    round_seconds,
    schedule,
    timings_key,
    tune_spec,
    tuned_buffer_bytes,
)
from orchestrator.results import (
    CAPACITY,
    MEASUREMENTS_FILE,
    RAW_DIR,
    SINGLE_STREAM,
    SlotPlan,
    SweepStatus,
    add_round_rows,
    measure_of,
    merge_rows,
    ok_tests,
    pair_key,
    read_rows,
    safe_name,
    test_key,
    unmeasured_row,
    with_ping_phase,
    write_rows,
)
from orchestrator.sweep import sentinels
from orchestrator.sweep.events import ClosedRound, PlannedRound, RoundTracker
from orchestrator.sweep.pingphase import phase_parts, phase_play, write_parts
from orchestrator.sweep.restore import restore_hosts
from orchestrator.sweep.stages import load_hosts, row_context, state_folder, write_sweep_inventory
from orchestrator.sweep.sweep_folder import Sweep

# How long either end of a slot waits for the other beyond its own slot time: hosts
# of a round start within a second or so of each other (the controller hands the
# round out host by host), and a peer later than this is recorded as `peer-late`.
MEET_MARGIN_S = 10.0
JITTER_S = 0.2  # random delay before a client starts, so tests do not start in lock-step
ROUND_TASKS = "tasks/round.yml"  # under the playbooks
ROUND_TIMEOUT_MARGIN_S = 60  # Ansible's own bound on a round task, beyond the meeting


def slot_plans(
    round_no: int, slots: Sequence[Slot], measure: str = SINGLE_STREAM
) -> list[SlotPlan]:
    port = iperf3_port(round_no)
    return [
        SlotPlan(
            client=slot.pairs[0].src.key,
            server=slot.pairs[0].dst.key,
            reverse=len(slot.pairs) == 2,
            port=port,
            measure=measure,
        )
        for slot in slots
    ]


def agent_parts(
    round_no: int,
    slots: Sequence[SlotPlan],
    hosts: Mapping[str, Host],
    params: TestParams,
    pings: bool = True,
    timings: Mapping[str, Mapping[str, Any]] | None = None,
    streams: int | None = None,
    tuned: Mapping[str, int] | None = None,
    backend: str = "",
) -> dict[str, dict[str, Any]]:
    """{inventory host: the agent's part} of one round (both ends of every slot); with
    `pings` False the slot runs iperf3 alone (the ping phase measured the idle RTT).
    `timings` (the plan's, by "src->dst") sets each slot's omit: the longer ramp of its
    two directions; a pair without one keeps --omit. A slot runs its measure's streams
    (`streams` overrides, e.g. a study's variant); `tuned` ("src->dst": buffer bytes)
    gives both hosts of a slot buffers sized for its BDP (plan.tuning, on `backend`)."""
    common: dict[str, Any] = {
        "round": round_no,
        "pings": params.pings if pings else 0,
        "ping_interval_s": params.ping_interval_s,
        "duration_s": params.duration_s,
        "omit_s": params.omit_s,
        "window": params.window,
        "congestion": params.congestion,
        "meet_within_s": MEET_MARGIN_S,
        "jitter_s": JITTER_S,
    }
    parts: dict[str, dict[str, Any]] = {}
    for slot in slots:
        omit_s = max(
            [int((timings or {}).get(f"{a}->{b}", {}).get("omit_s", params.omit_s))
             for a, b in slot.tests],
            default=params.omit_s,
        )  # fmt: skip
        buffer = max(
            [int((tuned or {})[f"{a}->{b}"]) for a, b in slot.tests
             if f"{a}->{b}" in (tuned or {})],
            default=0,
        )  # fmt: skip
        for role, me, peer in (
            ("client", slot.client, slot.server),
            ("server", slot.server, slot.client),
        ):
            part = parts[safe_name(me)] = {
                **common,
                "host": me,
                "role": role,
                "address": hosts[me].address,  # the server listens on it
                "peer": peer,
                "peer_address": hosts[peer].address,
                "port": slot.port,
                "reverse": slot.reverse,
                "omit_s": omit_s,
                "streams": params.streams_of(slot.measure) if streams is None else streams,
            }
            if buffer:
                part["tune"] = tune_spec(safe_name(me), buffer, backend)
    return parts


def round_timeout_s(expected_s: float) -> int:
    return int(expected_s + MEET_MARGIN_S + ROUND_TIMEOUT_MARGIN_S)


def round_play(
    planned: PlannedRound,
    parts: Mapping[str, dict[str, Any]],
    playbooks: Path | None = None,
) -> dict[str, Any]:
    """One round as a play: only its hosts, only their parts. `playbooks`: the folder
    Ansible is shown the playbooks in (a `View`'s)."""
    tasks = (playbooks or PLAYBOOKS) / ROUND_TASKS
    return {
        "name": f"Round {planned.number}",
        "hosts": ":".join(sorted(parts)),
        "gather_facts": False,
        "vars": {
            # ir_parts: each host's part of this round, for the agent
            "ir_parts": dict(parts),
            # ir_round_timeout_s: Ansible's bound on the round task
            "ir_round_timeout_s": round_timeout_s(planned.expected_s),
        },
        "tasks": [{"ansible.builtin.import_tasks": str(tasks)}],
    }


def rounds_playbook(
    planned: Sequence[PlannedRound],
    hosts: Mapping[str, Host],
    params: TestParams,
    pings: bool = True,
    timings: Mapping[str, Mapping[str, Any]] | None = None,
    tuned: Mapping[str, int] | None = None,
    backend: str = "",
    playbooks: Path | None = None,
) -> list[dict[str, Any]]:
    """The playbook of one measure run: a play per round, in order."""
    return [
        round_play(
            r,
            agent_parts(
                r.number, r.slots, hosts, params, pings, timings, tuned=tuned, backend=backend
            ),
            playbooks,
        )
        for r in planned
    ]


def planned_controller_rtt_ms(sweep: Sweep) -> float:
    """The plan's RTT from the controller to its farthest host (0: next to them)."""
    return float(sweep.record.plan.controller_rtt_ms or 0.0)


def plan_ping_phase(tests: Sequence[Pair], first: int, sweep: Sweep) -> list[PlannedRound]:
    """A latency-only run: one round, the ping phase, with every test at once."""
    keys = [t.key for t in tests]
    params = sweep.params
    rtt_ms = planned_controller_rtt_ms(sweep)
    expected_s = round(phase_seconds(keys, params.pings, params.ping_interval_s, rtt_ms), 3)
    return [PlannedRound(first, [], expected_s, phase_tests=keys)]


def plan_rounds(
    tests: Sequence[Pair],
    first: int,
    sweep: Sweep,
    pings: bool = True,
    measure: str = SINGLE_STREAM,
) -> list[PlannedRound]:
    rounds = schedule(
        tests,
        max_concurrent=sweep.record.max_concurrent,
        sequential=sweep.record.sequential,
    )
    params = sweep.params
    return [
        PlannedRound(
            n,
            slot_plans(n, slots, measure),
            round(round_seconds(params, slots, pings, measure), 3),
        )
        for n, slots in enumerate(rounds, start=first)
    ]


def capacity_buffers(
    sweep: Sweep, tests: Sequence[Pair], rows: Sequence[Mapping[str, Any]]
) -> dict[str, int]:
    """Each capacity test's host buffers ("src->dst": tcp_rmem/tcp_wmem max): 2 x BDP at
    the hosts' line rate from the pair's idle RTT (its ping-phase median, else the
    model's), as the TCP study's tuned variant (plan.tuning)."""
    measured = {
        pair_key(r): float(r["rtt_p50_ms"])
        for r in rows
        if measure_of(r) == SINGLE_STREAM and r.get("rtt_p50_ms") not in (None, "")
    }
    rate = line_rate_bps(sweep.emulated, sweep.record.plan.emulated_type or None)
    return {
        f"{p.src.key}->{p.dst.key}": min(
            tuned_buffer_bytes(rate, measured.get(p.key) or pair_rtt_ms(p)), TCP_BUFFER_MAX_BYTES
        )
        for p in tests
    }


def next_round_no(sweep: Sweep) -> int:
    """After every recorded round and every raw folder (an interrupted round leaves one)."""
    numbers = [r.round for r in sweep.record.rounds]
    numbers += [int(p.name.split("-")[1]) for p in (sweep.dir / RAW_DIR).glob("round-*")]
    return max(numbers, default=0) + 1


class _Rows:
    """measurements.csv, kept in memory during a run and rewritten whole (atomically)
    after each round."""

    def __init__(self, sweep: Sweep, complete: Any = None) -> None:
        self.sweep = sweep
        self.complete = complete
        self.rows = read_rows(sweep.dir / MEASUREMENTS_FILE)

    def merge(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = add_round_rows(self.rows, rows, self.complete)
        write_rows(self.sweep.dir, self.rows, self.sweep.params.duration_s)


def run_tests(
    sweep: Sweep, hosts: Sequence[Host], tests: Sequence[Pair], kind: str, progress: RoundProgress
) -> None:
    """The ping phase first, while no throughput test runs anywhere; then the throughput
    rounds (each as the sweep's tests say)."""
    which = sweep.params.tests
    if "ping" in which and tests:
        run_rounds(sweep, hosts, tests, kind, progress, phase=True)
    if "throughput" in which and tests:
        run_rounds(sweep, hosts, tests, kind, progress)


def run_capacity(
    sweep: Sweep, hosts: Sequence[Host], tests: Sequence[Pair], kind: str, progress: RoundProgress
) -> None:
    """The capacity rounds of `tests` (after their ping phase and single_stream rounds):
    each slot's hosts get buffers sized for its BDP for the test and back after it; a
    restore play over every host follows, whatever happens."""
    if not tests:
        return
    try:
        run_rounds(sweep, hosts, tests, kind, progress, measure=CAPACITY)
    finally:
        sweep.record.restore = restore_hosts(sweep, hosts, "capacity-restore.yml")
        sweep.save()


def run_rounds(
    sweep: Sweep,
    hosts: Sequence[Host],
    tests: Sequence[Pair],
    kind: str,
    progress: RoundProgress,
    phase: bool = False,
    measure: str = SINGLE_STREAM,
) -> dict[str, Any]:
    """Measure `tests` in ONE ansible-playbook run: the ping phase (`phase`), or the
    throughput rounds of `measure` (iperf3 alone: the idle RTT is the ping phase's)."""
    check_interrupt()
    with plain_view(state_folder(sweep)) as view:
        return _run_rounds(view, sweep, hosts, tests, kind, progress, phase, measure)


def _run_rounds(
    view: View,
    sweep: Sweep,
    hosts: Sequence[Host],
    tests: Sequence[Pair],
    kind: str,
    progress: RoundProgress,
    phase: bool,
    measure: str,
) -> dict[str, Any]:
    by_name = {h.name: h for h in hosts}
    params = sweep.params
    with_phase = params.ping
    if phase:
        planned = plan_ping_phase(tests, next_round_no(sweep), sweep)
        keys = planned[0].phase_tests or []
        number = planned[0].number
        parts = phase_parts(keys, by_name, params.pings, params.ping_interval_s)
        folder = write_parts(state_folder(sweep) / f"phase-{number:03d}", parts)
        rtt_ms = planned_controller_rtt_ms(sweep)
        plays = [
            phase_play(
                number,
                list(parts),
                view.state / folder.name,
                planned[0].expected_s,
                rtt_ms,
                playbooks=view.playbooks,
            )
        ]
    else:
        # the idle RTT is the ping phase's: slots run iperf3 alone
        planned = plan_rounds(tests, next_round_no(sweep), sweep, False, measure)
        if kind == "main" and measure == SINGLE_STREAM:
            # the first round's first slots again at the end: host drain
            cap = 1 if sweep.record.sequential else sweep.record.max_concurrent
            before = len(planned)
            planned = sentinels.add_sentinel_rounds(planned, max_concurrent=cap)
            said = sentinels.describe(planned, before)
            if said:
                sweep.log(said)
        plan = sweep.record.plan
        timings = (
            plan.timings if measure == SINGLE_STREAM else plan.extra.get(timings_key(measure))
        ) or {}
        tuned = None
        if measure == CAPACITY:
            rows = read_rows(sweep.dir / MEASUREMENTS_FILE)
            tuned = capacity_buffers(sweep, tests, rows)
        plays = rounds_playbook(
            planned,
            by_name,
            params,
            False,
            timings,
            tuned=tuned,
            backend=sweep.backend,
            playbooks=view.playbooks,
        )
    state = state_folder(sweep)
    book = state / f"measure-{planned[0].number:03d}.yml"
    write_playbook(book, plays)
    # slots after the ping phase carry no RTT: their rows are completed from the phase's
    table = _Rows(sweep, with_ping_phase if with_phase and not phase else None)

    # read once per run, not per round, and only for a sweep that has a budget to keep
    budgeted = sweep.record.budget_usd and _priced(sweep)
    pricing = load_pricing() if budgeted else None

    def on_round(done: ClosedRound) -> None:
        state_folder(sweep)  # a sweep whose state vanished stops here
        table.merge(done.rows)
        sweep.record.rounds.append(done.entry(kind))
        sweep.save()
        progress.round_done(done.number, done.ok, len(done.rows) - done.ok, done.wall_s)
        check_budget(sweep, table.rows, done.number, pricing)

    tracker = RoundTracker(
        sweep.dir,
        list(by_name),
        {r.number: r for r in planned},
        row_context(sweep, hosts),
        on_round,
    )
    what = (
        f"{kind} ping phase" if phase else kind if measure == SINGLE_STREAM else f"{kind} {measure}"
    )
    progress.begin(what, len(planned), len(tests))
    # the ping phase's agents run in the background: its forks only start and collect
    # them, and a full catalog's hosts at once would cost the controller ~1 GiB
    forks = PHASE_FORKS if phase else max(len(p.hosts) for p in planned)
    started, started_utc = time.monotonic(), utc_now()
    try:
        rc = run_playbook(
            view.state / book.name,
            write_sweep_inventory(sweep, hosts, view),
            on_event=tracker.on_event,
            log_path=state / "ansible-measure.log",
            forks=forks,
            view=view,
        )
        tracker.close()
    finally:
        progress.end()
    wall_s = time.monotonic() - started
    slot_total_s = sum(p.expected_s for p in planned)
    summary = {
        "kind": kind,
        **({"phase": "ping"} if phase else {}),
        **({"measure": measure} if not phase else {}),
        "started_utc": stamp(started_utc),
        "ended_utc": stamp(utc_now()),
        "rounds": len(planned),
        "rounds_closed": len(tracker.closed),
        "tests": len(tests),
        "wall_s": round(wall_s, 3),
        "first_round_after_s": (
            round(tracker.first_round_at - started, 3) if tracker.first_round_at else None
        ),
        "rounds_x_slot_s": round(slot_total_s, 3),
        "overhead_ratio": round((wall_s - slot_total_s) / wall_s, 4) if wall_s else None,
        "ansible_rc": rc,
        "forks": forks,
    }
    sweep.record.measure_runs.append(summary)
    sweep.save()
    check_playbook_end(sweep, rc, len(tracker.closed), len(planned), state / "ansible-measure.log")
    return summary


def check_playbook_end(sweep: Sweep, rc: int, closed: int, planned: int, log: Path) -> None:
    """A rounds playbook that was killed, failed, or closed no round is a one-line error."""
    if rc != 0 or not closed:
        state_folder(sweep)  # Ansible fails too when the state under it vanished: say which
    if rc < 0:
        raise RunFailure(f"ansible-playbook was killed (signal {-rc}) during the rounds: see {log}")
    if rc not in (0, 2, 4) or not closed:
        raise RunFailure(
            f"ansible-playbook failed (rc {rc}) after {closed} of "
            f"{counted(planned, 'round')}: see {log}"
        )


class BudgetReached(RunFailure):
    """What the sweep moved reached its budget: it stops after the round, tears down."""


def check_budget(
    sweep: Sweep,
    rows: Sequence[dict[str, Any]],
    round_no: int,
    pricing: Pricing | None = None,
) -> None:
    """The hard stop: once the bytes moved so far (and the VMs' time) cost the sweep's
    `budget_usd` at list prices, no further round starts. Emulated sweeps cost nothing,
    unless the sweep asked to be priced as on the clouds (`sweep --price-emulated`)."""
    budget = sweep.record.budget_usd
    if not budget or not _priced(sweep):
        return
    regions = sweep.regions()
    pricing = pricing or load_pricing()
    started = sweep.record.started_utc or sweep.record.created_utc
    hours = max(0.0, (time.time() - started.timestamp()) / 3600)
    vm_usd = sum(pricing.clouds[r.cloud].vm_usd_per_hour * hours for r in regions.values())
    if not over_budget(
        [*rows, *sentinels.read_sentinel_rows(sweep.dir)],  # the repeats move bytes too
        pricing,
        float(budget),
        regions=regions,
        pings=sweep.params.pings,
        vm_usd_so_far=vm_usd,
    ):
        return
    why = (
        f"stopped after round {round_no}: what the sweep moved (and its VMs' time) reached "
        f"its budget of ${float(budget):g} at list prices; the measured rounds are kept"
    )
    sweep.record.stopped = why
    sweep.save()
    raise BudgetReached(why)


def _priced(sweep: Sweep) -> bool:
    return not sweep.emulated or bool(sweep.record.price_emulated)


def measure(sweep: Sweep, progress: RoundProgress | None = None, retry: bool = True) -> None:
    """Measure every planned test that has no ok row yet; retry the failures once."""
    progress = progress or RoundProgress()
    hosts = load_hosts(sweep)
    stages = sweep.record.stages
    provisioned = stages["provision"].started_utc if "provision" in stages else None
    torn = stages["teardown"].started_utc if "teardown" in stages else None
    if torn is not None and (provisioned is None or torn > provisioned):
        raise UserError(
            f"the hosts of sweep {sweep.id} were torn down: "
            f"continue with '{sweep.resume_command()}'"
        )
    with sweep.stage("measure"):
        sweep.record.status = SweepStatus.MEASURING
        todo = missing_tests(sweep)
        count = sum(len(t) for t in todo.values())
        if not count:
            sweep.log(f"sweep {sweep.id}: every test is measured already")
            return
        kind = "resume" if sweep.record.rounds else "main"
        planned = len(sweep.planned_pairs()) * len(todo)
        if count < planned:
            sweep.log(f"keeping {planned - count} ok tests, measuring the other {count}")
        run_measures(sweep, hosts, todo, kind, progress)
        failed = missing_tests(sweep, among=todo)
        count = sum(len(t) for t in failed.values())
        if count and retry:
            tests = counted(count, "failed test")
            sweep.log(f"retrying {tests} once: {why_failed(sweep, failed)}")
            run_measures(sweep, hosts, failed, "retry", progress)
        fill_unmeasured(sweep, hosts)
        sweep.record.status = SweepStatus.MEASURED


# how many failed tests the retry line names one by one before it counts the rest
NAMED_FAILURES = 5


def why_failed(sweep: Sweep, failed: Mapping[str, Sequence[Pair]]) -> str:
    """The tests a retry runs again and why each failed (its row's status and error, or
    no row at all), the first NAMED_FAILURES by name: the retry rule of docs/sweeps.md
    said where it is applied."""
    rows = read_rows(sweep.dir / MEASUREMENTS_FILE)
    last = {(*pair_key(r), measure_of(r)): r for r in rows}
    said = []
    for m, pairs in failed.items():
        for p in pairs:
            row = last.get((*p.key, m))
            if row is None:
                reason = "no result"
            else:
                error = " ".join(str(row.get("error") or "").split())[:80]
                reason = str(row.get("status") or "failed") + (f": {error}" if error else "")
            name = f"{p.key[0]} -> {p.key[1]}" + (f" ({m})" if len(failed) > 1 else "")
            said.append(f"{name} ({reason})")
    shown = "; ".join(said[:NAMED_FAILURES])
    more = len(said) - NAMED_FAILURES
    return shown + (f"; and {more} more (measurements.csv)" if more > 0 else "")


def measures_of(sweep: Sweep) -> tuple[str, ...]:
    """The measures the sweep's tests run: its throughput measures, or single_stream
    alone for a latency-only sweep (its ping rows)."""
    return sweep.params.measures if sweep.params.throughput else (SINGLE_STREAM,)


def missing_tests(
    sweep: Sweep, among: Mapping[str, Sequence[Pair]] | None = None
) -> dict[str, list[Pair]]:
    """{measure: the planned pairs (of `among`, else all) without an ok test of it}."""
    rows = read_rows(sweep.dir / MEASUREMENTS_FILE)
    out = {}
    for m in measures_of(sweep):
        done = ok_tests(rows, sweep.params.tests, m)
        pairs = sweep.planned_pairs() if among is None else among.get(m, [])
        out[m] = [p for p in pairs if p.key not in done]
    return out


def run_measures(
    sweep: Sweep,
    hosts: Sequence[Host],
    todo: Mapping[str, Sequence[Pair]],
    kind: str,
    progress: RoundProgress,
) -> None:
    """The ping phase and single_stream rounds of the pairs that lack them, then the
    capacity rounds of those that lack one."""
    run_tests(sweep, hosts, todo.get(SINGLE_STREAM, []), kind, progress)
    if sweep.params.throughput:
        run_capacity(sweep, hosts, todo.get(CAPACITY, []), kind, progress)


def fill_unmeasured(sweep: Sweep, hosts: Sequence[Host]) -> None:
    """Planned tests without any row (the play ended early) get a failed row saying so;
    so does a test whose ping phase ran but whose throughput round did not (keeping
    its RTT figures)."""
    rows = read_rows(sweep.dir / MEASUREMENTS_FILE)
    if sweep.params.throughput:
        why = "not measured: the play ended before its throughput round"
        rows = [
            {**r, "status": "failed", "error": why}
            if r.get("status") == "ok" and r.get("throughput_bps") in (None, "")
            and measure_of(r) in sweep.params.measures
            else r
            for r in rows
        ]  # fmt: skip
        write_rows(sweep.dir, rows, sweep.params.duration_s)
    have = {test_key(r) for r in rows}
    ctx = row_context(sweep, hosts)
    why = "not measured: the play ended before its round"
    missing = [
        unmeasured_row(p.src.key, p.dst.key, ctx, why, m)
        for m in measures_of(sweep)
        for p in sweep.planned_pairs()
        if (*p.key, m) not in have
    ]
    if missing:
        write_rows(sweep.dir, merge_rows(rows, missing), sweep.params.duration_s)
