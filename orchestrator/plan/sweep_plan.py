"""A dry run: what a sweep would test, in which rounds, how long and at what cost.

Nothing here touches a cloud or the network. The same TestParams object tells
the measurement engine what one slot runs, and `slot_seconds` is the time model
both sides agree on.

A sweep measures its pings first, in the ping phase (orchestrator.sweep.pingphase: every
host probes all its peers at once; its busiest host's `pings x peers` probes, at least
MIN_GAP_S apart), then its throughput in exclusive rounds of slots, iperf3 alone. A plan
whose `tests` leave out ping or throughput drops that part, its time and its bytes.
Time model of one slot (both directions of a region pair), RTT from the network model
(the pings are in it only where a slot pings itself, `pings=True`):
  pings x ping interval + 1 RTT (the last reply)
  + per direction: omit + duration of iperf3 (forward, then reverse with -R)
    + IPERF3_PROTOCOL_RTTS x RTT (control connection, parameter exchange, data
      connection, start and the exchange of results: 7 round trips, measured
      through the emulator at 260 ms: 7.83 s for a 6 s test)
  + SLOT_MARGIN_S (process start, the test agent's jitter).
A round lasts as long as its slowest slot, plus the controller's overhead: handing
the round to its hosts one by one and collecting their results (ROUND_BASE_S +
ROUND_PER_HOST_S per host of the round, measured by bench/sweep.py), and the round
trips of one SSH command to the farthest host (ROUND_CONTROL_RTTS x the controller's
RTT, from the network model when the controller's location is given).

A throughput plan measures two slots of its first round again at its end (sentinels,
rounds.add_sentinels), and checks each host's mean egress over the sweep (its
expected bytes over the measuring time) against its machine type's baseline
(allowance.shortfalls): a host above it may be measured at its allowance, not the path.

Bytes are what the network model expects one stream to carry, times streams,
for omit + duration seconds per direction: on a cloud the smaller of the VM's
published egress cap (pricing.yaml) and the window a real small VM reaches over
that RTT (netmodel.REAL_WINDOW_BYTES / RTT, fitted on public measurements); on
the emulated cloud the emulator's own cap and window. Ping traffic is added
(84-byte IPv4 packets). Egress cost is priced on the cloud figure, also for a
local plan, so a local plan shows what the same sweep would cost for real.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from orchestrator.core import UserError, counted
from orchestrator.model import (
    CLOUD_SETUP_S,
    DEFAULT_BACKEND,
    Catalog,
    MachineBandwidth,
    Region,
    backend_info,
    region_to_dict,
)
from orchestrator.netmodel import DEFAULT_MODEL, REAL_WINDOW_BYTES, emulated_type, emulated_types
from orchestrator.plan.allowance import Shortfall, mean_egress_bps, shortfalls
from orchestrator.plan.ping_timing import phase_seconds
from orchestrator.plan.pricing import Pricing, load_pricing
from orchestrator.plan.ramp import Timing, timing_for
from orchestrator.plan.rounds import (
    Round,
    Slot,
    add_sentinels,
    lower_bound,
    schedule,
    sentinel_slots,
)
from orchestrator.plan.selection import Pair, Selection, SelectionSpec, pairs_per_band, select
from orchestrator.plan.tuning import line_rate_bps, tuned_buffer_bytes
from orchestrator.results import (
    CAPACITY,
    MEASURES,
    PING_PACKET_BYTES,
    SINGLE_STREAM,
    TestParams,
    window_bytes,
)

SLOT_MARGIN_S = 1.0
IPERF3_PROTOCOL_RTTS = 7
# The controller's cost per round (fitted on bench/sweep.py's local sweeps of 6 to 77
# regions): a fixed part, a part per busy host (Ansible forks a worker, an ssh client
# and the host a python3 for each), and the round trips of an SSH command over an open
# ControlMaster connection (open a channel, run, return) to the farthest host.
ROUND_BASE_S = 0.3
ROUND_PER_HOST_S = 0.02
ROUND_CONTROL_RTTS = 2


def slot_seconds(
    params: TestParams,
    directions: int = 2,
    rtt_ms: float = 0.0,
    pings: bool = True,
    measure: str = SINGLE_STREAM,
) -> float:
    """Expected length of one slot measuring `directions` (1 or 2) directed pairs by
    `measure`; with `pings` False the slot runs iperf3 alone (the sweep's ping phase
    measured the RTT)."""
    rtt_s = rtt_ms / 1000
    ping_s = params.pings * params.ping_interval_s + rtt_s if pings and params.ping else 0.0
    timing = timing_of(params, rtt_ms, measure)
    iperf3_s = timing.omit_s + timing.duration_s + IPERF3_PROTOCOL_RTTS * rtt_s
    return ping_s + (directions * iperf3_s if params.throughput else 0.0) + SLOT_MARGIN_S


def timing_of(params: TestParams, rtt_ms: float, measure: str = SINGLE_STREAM) -> Timing:
    """What a test over a path of `rtt_ms` skips and measures (orchestrator.plan.ramp): the
    omit covers slow start to the window a small cloud VM's default stream reaches (the
    window fitted on the public data, 2.53 MB; --window when given), never below --omit.
    A capacity test's streams each ramp to their share of the BDP at a small VM's line
    rate (their buffers are sized for it, plan.tuning). On the emulated cloud, whose
    window is scaled down, that errs long."""
    given = window_bytes(params.window) if params.window else None
    if measure == CAPACITY:
        rate = line_rate_bps(False)
        window = given or tuned_buffer_bytes(rate, rtt_ms) * DEFAULT_MODEL.window_efficiency
        return timing_for(
            rtt_ms, window, rate, streams=params.streams, omit_s=params.omit_s,
            duration_s=params.duration_s,
        )  # fmt: skip
    return timing_for(
        rtt_ms, given or REAL_WINDOW_BYTES, None, omit_s=params.omit_s,
        duration_s=params.duration_s,
    )  # fmt: skip


def pair_timings(
    pairs: Sequence[Pair], params: TestParams, measure: str = SINGLE_STREAM
) -> dict[str, dict[str, Any]]:
    """Each directed test's timing ("src->dst": rtt_ms, ramp_window_bytes, ramp_s, omit_s,
    duration_s) by `measure`, recorded in the plan."""
    return {
        f"{p.src.key}->{p.dst.key}": timing_of(params, pair_rtt_ms(p), measure).to_dict()
        for p in pairs
    }


def timings_key(measure: str) -> str:
    """Where the plan records a measure's timings: `timings` (single_stream, as before
    the measures), `capacity_timings`."""
    return "timings" if measure == SINGLE_STREAM else f"{measure}_timings"


def pair_rtt_ms(pair: Pair) -> float:
    """The expected RTT between a pair's two regions: its measured median in the public
    data where there is one (the route the emulator also builds), else the model's."""
    from orchestrator.netmodel import default_routes

    measured = default_routes().get(pair.src.key, pair.dst.key)
    if measured is not None:
        return measured
    return DEFAULT_MODEL.rtt_ms(pair.distance_km, pair.src.cloud != pair.dst.cloud)


def round_seconds(
    params: TestParams, slots: Sequence[Slot], pings: bool = True, measure: str = SINGLE_STREAM
) -> float:
    """A round lasts as long as its slowest slot."""
    return max(
        (
            slot_seconds(params, len(slot.pairs), pair_rtt_ms(slot.pairs[0]), pings, measure)
            for slot in slots
        ),
        default=0.0,
    )


def round_overhead_s(hosts: int, controller_rtt_ms: float = 0.0) -> float:
    """The controller's time for one round of `hosts` busy hosts."""
    return ROUND_BASE_S + ROUND_PER_HOST_S * hosts + ROUND_CONTROL_RTTS * controller_rtt_ms / 1000


def effective_max_concurrent(
    backend: str, max_concurrent: int | None, sequential: bool
) -> int | None:
    """The cap on tests per round a plan uses; None means no cap.

    The backend's default applies when none is given: on the emulated cloud
    LOCAL_MAX_CONCURRENT, beyond which the machine's CPUs, not the modelled network,
    would set the results; no cap on the clouds.
    """
    if max_concurrent is not None and sequential:
        raise UserError("--max-concurrent and --sequential both cap a round: give one")
    if max_concurrent is None and not sequential:
        return backend_info(backend).default_concurrency
    return max_concurrent


@dataclass(frozen=True)
class Estimate:
    wall_s: float  # measuring: all rounds, with their overhead
    setup_s: float  # provisioning, preparing and teardown
    bytes: float  # traffic all tests are expected to send
    vm_hours: float  # on the cloud, whatever the backend
    egress_usd: float  # on the cloud, whatever the backend
    vm_usd: float
    cloud_cost_usd: float  # what the plan would cost on the clouds
    cost_usd: float  # what it costs on this backend (0 when emulated)
    bytes_by_cloud_pair: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        out = {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}
        out["bytes_by_cloud_pair"] = {k: round(v) for k, v in self.bytes_by_cloud_pair.items()}
        out["bytes"] = round(self.bytes)
        return out


@dataclass(frozen=True)
class Plan:
    selection: Selection
    rounds: list[Round]
    lower_bound_rounds: int
    estimate: Estimate
    backend: str
    params: TestParams
    max_concurrent: int | None = None
    sequential: bool = False
    pricing_as_of: str = ""
    controller: str = ""  # region key of the controller's location; "" = next to the hosts
    controller_rtt_ms: float = 0.0  # its modelled RTT to the farthest host
    emulated_type: str = ""  # local: the hosts' emulated machine type
    # slots of the first round measured again at the end (rounds.add_sentinels), in a
    # round of their own when `sentinel_round`, else in the last round; `rounds` is the
    # schedule without them (every pair once)
    sentinels: tuple[Slot, ...] = ()
    sentinel_round: bool = False
    host_types: dict[str, str] | None = None  # region key -> machine type
    shortfalls: tuple[Shortfall, ...] = ()  # hosts sending above their type's baseline
    # the most rounds the retry of failed tests can take (every test failed), per measure
    retry_rounds: int = 0

    def shape(self) -> str:
        """What the measure stage runs, in words: the ping phase, the rounds, or both,
        with the sentinel round and the retry's bound (`extra_rounds` says why)."""
        rounds = f"{counted(len(self.rounds), 'round')} (lower bound {self.lower_bound_rounds})"
        if self.sentinel_round:
            rounds += " + 1 sentinel round"
        if len(self.params.measures) > 1:
            rounds += f", once per measure ({', '.join(self.params.measures)})"
        elif self.params.measures != (SINGLE_STREAM,):
            rounds += f" of {self.params.measures[0]}"
        if not self.params.throughput:
            return (
                "one ping phase (latency only: no exclusive rounds), "
                "+ one more for the tests that fail"
            )
        retries = self.retry_rounds * len(self.params.measures)
        shape = f"a ping phase, then {rounds}" if self.params.ping else rounds
        return f"{shape}, + up to {counted(retries, 'retry round')} if tests fail"

    def extra_rounds(self) -> list[str]:
        """Why a sweep can run more rounds than the schedule: the sentinels and the retry
        rule, one sentence each (what `plan` prints under its rounds; docs/sweeps.md)."""
        said = []
        if self.sentinels:
            names = ", ".join(" <> ".join(s.regions) for s in self.sentinels)
            where = "in one more round" if self.sentinel_round else "in the last round"
            said.append(
                f"sentinels: {counted(len(self.sentinels), 'slot')} of round 1 ({names}) run "
                f"again at the end, {where}: their late results, set against the early "
                "ones, show a host whose bandwidth fell during the sweep"
            )
        what = "ping phase" if not self.params.throughput else "rounds"
        said.append(
            "retries: a test without an ok result at the end of the sweep runs once more, "
            f"in {what} of the failed tests alone"
            + (
                f" (at most {counted(self.retry_rounds, 'round')} per measure, if every test "
                "failed)"
                if self.params.throughput
                else ""
            )
            + "; the sweep's log names each test and why it failed"
        )
        return said

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "emulated": backend_info(self.backend).emulated,
            "params": self.params.to_dict(),
            "regions": [region_to_dict(r) for r in self.selection.regions],
            "pairs": [p.to_dict() for p in self.selection.pairs],
            "pairs_per_band": pairs_per_band(self.selection.pairs),
            "rounds": [[p.to_dict() for slot in rnd for p in slot.pairs] for rnd in self.rounds],
            "round_slots": [[list(slot.regions) for slot in rnd] for rnd in self.rounds],
            "lower_bound_rounds": self.lower_bound_rounds,
            "max_concurrent": self.max_concurrent,
            "sequential": self.sequential,
            "estimate": self.estimate.to_dict(),
            "pricing_as_of": self.pricing_as_of,
            "controller": self.controller,
            "controller_rtt_ms": round(self.controller_rtt_ms, 3),
            "emulated_type": self.emulated_type,
            "sentinels": [list(s.regions) for s in self.sentinels],
            "sentinel_round": self.sentinel_round,
            "host_types": dict(self.host_types or {}),
            "allowance_shortfalls": [s.to_dict() for s in self.shortfalls],
            # each test's omit (the slow-start ramp) and measured interval, per measure:
            # `timings` always (single_stream's, as before the measures), the others'
            # only when the plan measures them
            **{
                timings_key(m): pair_timings(self.selection.pairs, self.params, m)
                if self.params.throughput and m in self.params.measures
                else {}
                for m in MEASURES
                if m == SINGLE_STREAM or m in self.params.measures
            },
            # added since: after every key an older record has, in the order they came
            "retry_rounds_max": self.retry_rounds * len(self.params.measures),
        }


def make_plan(
    catalog: Catalog,
    spec: SelectionSpec,
    params: TestParams | None = None,
    backend: str = DEFAULT_BACKEND,
    max_concurrent: int | None = None,
    sequential: bool = False,
    round_overhead: float | None = None,
    pricing: Pricing | None = None,
    controller: Region | None = None,
    emulated: str | None = None,
    machine_types: dict[str, str] | None = None,
) -> Plan:
    """Select, schedule and estimate; UserError on any contradiction.

    `emulated` names the hosts' emulated machine type (local only; None: the default);
    `machine_types` overrides the catalog's type per cloud (the cloud backends).

    `max_concurrent` None takes the backend's default (effective_max_concurrent).
    `round_overhead` (seconds per round) replaces the controller's modelled overhead
    (round_overhead_s), which the controller's modelled RTT to the farthest selected host
    feeds when its region (`controller`) is given.
    """
    params = params or TestParams()
    info = backend_info(backend)
    if round_overhead is not None and not (0 <= round_overhead < math.inf):
        raise UserError(f"--round-overhead {round_overhead:g} s: must be 0 or more")
    max_concurrent = effective_max_concurrent(backend, max_concurrent, sequential)
    selection = select(catalog, spec)
    other = [r.key for r in selection.regions if r.cloud not in info.clouds]
    if other:
        raise UserError(
            f"--backend {backend} cannot host {other[0]} ({len(other)} such regions): "
            f"add --clouds {','.join(info.clouds)} or a backend that hosts both clouds"
        )
    if emulated and not info.emulated:
        raise UserError(f"--emulated-type applies to --backend local, not {backend}")
    machine = emulated_type(emulated) if info.emulated else None
    rounds = schedule(selection.pairs, max_concurrent=max_concurrent, sequential=sequential)
    # what the throughput rounds measure: the schedule, then its sentinels again
    measured = rounds
    if params.throughput:
        measured = add_sentinels(rounds, max_concurrent=1 if sequential else max_concurrent)
    from orchestrator.netmodel import controller_rtt_ms as controller_rtt

    controller_rtt_ms = controller_rtt(controller, selection.regions) if controller else 0.0
    bound = lower_bound(selection.pairs, 1 if sequential else max_concurrent)
    pricing = pricing or load_pricing()
    estimate = estimate_cost(
        selection, measured, params, backend, pricing, round_overhead, controller_rtt_ms
    )
    if machine is not None:
        host_types = {r.key: machine.name for r in selection.regions}
        bandwidth = emulated_bandwidth()
    else:
        types = {**catalog.machine_types, **(machine_types or {})}
        host_types = {r.key: types.get(r.cloud, "") for r in selection.regions}
        bandwidth = catalog.bandwidth
    egress = mean_egress_bps(
        host_bytes(selection, measured, params, pricing, emulated=info.emulated),
        estimate.wall_s,
    )
    return Plan(
        selection=selection,
        rounds=rounds,
        lower_bound_rounds=bound,
        estimate=estimate,
        backend=backend,
        params=params,
        max_concurrent=max_concurrent,
        sequential=sequential,
        pricing_as_of=pricing.as_of,
        controller=controller.key if controller else "",
        controller_rtt_ms=controller_rtt_ms,
        emulated_type=machine.name if machine is not None else "",
        sentinels=tuple(sentinel_slots(measured)),
        sentinel_round=len(measured) > len(rounds),
        retry_rounds=retry_bound(selection.pairs, rounds, max_concurrent, sequential),
        host_types=host_types,
        shortfalls=tuple(shortfalls(egress, host_types, bandwidth)),
    )


def retry_bound(
    pairs: Sequence[Pair],
    rounds: Sequence[Round],
    max_concurrent: int | None,
    sequential: bool,
) -> int:
    """The most rounds a retry of failed tests can take: their schedule has at most Δ + 1
    rounds (ceil(slots / cap) with a cap), never more than its slots, and the failed
    tests' Δ and slots are at most the sweep's."""
    if sequential:
        return len(rounds)
    slots = sum(len(r) for r in rounds)
    return max(len(rounds), lower_bound(pairs, max_concurrent), min(lower_bound(pairs) + 1, slots))


def emulated_bandwidth() -> dict[str, MachineBandwidth]:
    """The emulated machine types as catalog entries (cloud "local"): their allowance."""
    return {
        t.name: MachineBandwidth(
            t.name,
            "local",
            t.baseline_bps,
            t.burst_bps,
            f"emulated: scaled from {t.scaled_from}" if t.scaled_from else "emulated",
        )
        for t in emulated_types().values()
    }


def host_bytes(
    selection: Selection,
    rounds: Sequence[Round],
    params: TestParams,
    pricing: Pricing,
    emulated: bool = False,
) -> dict[str, float]:
    """What each host is expected to send over the sweep: its tests as the source, and
    the sentinels' repeats."""
    sent = {r.key: 0.0 for r in selection.regions}
    for pair in selection.pairs:
        sent[pair.src.key] += pair_bytes(pair, params, pricing, emulated)
    for pair in (p for s in sentinel_slots(rounds) for p in s.pairs):  # single_stream only
        sent[pair.src.key] += pair_bytes(pair, params, pricing, emulated, [SINGLE_STREAM])
    return sent


def pair_bytes(
    pair: Pair,
    params: TestParams,
    pricing: Pricing,
    emulated: bool = False,
    measures: Sequence[str] | None = None,
) -> float:
    """What one directed pair is expected to send from src to dst: its pings and a test
    of each of `measures` (the params' by default)."""
    ping_bytes = params.pings * PING_PACKET_BYTES if params.ping else 0.0
    if not params.throughput:
        return ping_bytes
    iperf_bytes = 0.0
    for measure in params.measures if measures is None else measures:
        if measure == CAPACITY:  # buffers sized for the BDP: the sender's cap
            rate_bps = pair_cap_bps(pair, pricing, emulated)
        else:
            rate_bps = pair_rate_bps(pair, 1, pricing, emulated)
        timing = timing_of(params, pair_rtt_ms(pair), measure)
        iperf_bytes += rate_bps * (timing.omit_s + timing.duration_s) / 8
    return iperf_bytes + ping_bytes


def pair_rate_bps(pair: Pair, streams: int, pricing: Pricing, emulated: bool = False) -> float:
    """What `streams` default streams from src to dst are expected to carry: the sender's
    cap (pair_cap_bps), or the windows per RTT if lower."""
    rtt_ms = pair_rtt_ms(pair)
    if emulated:
        return DEFAULT_MODEL.expected_throughput_bps(rtt_ms, streams)
    window_bps = streams * REAL_WINDOW_BYTES * 8 / (rtt_ms / 1000)
    return min(pair_cap_bps(pair, pricing), window_bps)


def pair_cap_bps(pair: Pair, pricing: Pricing, emulated: bool = False) -> float:
    """The most src can send: the emulator's rate cap, or on a cloud the VM's published
    egress cap (pricing.yaml; a ceiling)."""
    return DEFAULT_MODEL.rate_bps if emulated else pricing.clouds[pair.src.cloud].max_egress_bps


def vm_cost(
    regions: Sequence[Region], wall_s: float, backend: str, pricing: Pricing
) -> tuple[float, float]:
    """(VM-hours, their USD) of measuring for `wall_s` plus setting up: what the clouds
    would bill, also for a local plan."""
    info = backend_info(backend)
    hours = (wall_s + (CLOUD_SETUP_S if info.emulated else info.setup_s)) / 3600
    return len(regions) * hours, sum(
        pricing.clouds[r.cloud].vm_usd_per_hour * hours for r in regions
    )


def estimate_cost(
    selection: Selection,
    rounds: Sequence[Round],
    params: TestParams,
    backend: str,
    pricing: Pricing,
    round_overhead: float | None = None,
    controller_rtt_ms: float = 0.0,
) -> Estimate:
    tests = params.tests

    def overhead(hosts: int) -> float:
        if round_overhead is not None:
            return round_overhead
        return round_overhead_s(hosts, controller_rtt_ms)

    wall_s = 0.0
    if "ping" in tests:  # the ping phase: every test at once, one round of all hosts
        keys = [p.key for p in selection.pairs]
        wall_s += phase_seconds(keys, params.pings, params.ping_interval_s, controller_rtt_ms)
    if "throughput" in tests:  # then the exclusive rounds, iperf3 alone, once per measure
        for measure in params.measures:
            # the sentinels repeat single_stream tests: a capacity run has none
            plain = rounds if measure == SINGLE_STREAM else [
                kept for rnd in rounds if (kept := [s for s in rnd if not s.sentinel])
            ]  # fmt: skip
            wall_s += sum(
                round_seconds(params, rnd, False, measure) + overhead(2 * len(rnd)) for rnd in plain
            )
    info = backend_info(backend)
    setup_s = info.setup_s
    total_bytes = 0.0
    egress_usd = 0.0
    by_pair: dict[str, float] = {}
    tests_of: list[tuple[Pair, list[str] | None]] = [(p, None) for p in selection.pairs]
    tests_of += [(p, [SINGLE_STREAM]) for s in sentinel_slots(rounds) for p in s.pairs]
    for pair, measures in tests_of:
        cloud_bytes = pair_bytes(pair, params, pricing, measures=measures)
        sent = (
            pair_bytes(pair, params, pricing, emulated=True, measures=measures)
            if info.emulated
            else cloud_bytes
        )
        total_bytes += sent
        by_pair[pair.cloud_pair] = by_pair.get(pair.cloud_pair, 0.0) + sent
        egress_usd += cloud_bytes / 1e9 * pricing.egress_usd_per_gb(pair.src, pair.dst)
    vm_hours, vm_usd = vm_cost(selection.regions, wall_s, backend, pricing)
    cloud_cost = egress_usd + vm_usd
    return Estimate(
        wall_s=wall_s,
        setup_s=setup_s,
        bytes=total_bytes,
        vm_hours=vm_hours,
        egress_usd=egress_usd,
        vm_usd=vm_usd,
        cloud_cost_usd=cloud_cost,
        cost_usd=0.0 if info.emulated else cloud_cost,
        bytes_by_cloud_pair=dict(sorted(by_pair.items())),
    )
