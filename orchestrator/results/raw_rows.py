"""From one round's raw agent outputs to measurements.csv rows (pure functions).

A slot is measured by its two hosts: the client (the first directed pair's source)
pings and runs iperf3 forward and, when both directions are selected, reverse (`-R`);
the server pings back and serves. So the row of client -> server takes the client's
pings and the forward test, and the row of server -> client the server's pings and
the reverse test (whose sender, the server, is in the client's JSON via
--get-server-output). Both ends' intervals align the two counts at the omit boundary
(parse.align); the server's own iperf3 output stands in for the client's copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import orjson

from orchestrator.results.limiter import PathFacts, classify
from orchestrator.results.parse import (
    CORRUPTED,
    allowance_counters,
    counter_delta,
    parse_iperf3,
    parse_ping,
    steal_pct,
    tc_allowance_counter,
)
from orchestrator.results.schema import CAPACITY, MEASUREMENT_COLUMNS, SINGLE_STREAM


def _columns(first: str, last: str) -> tuple[str, ...]:
    """The contract's columns from `first` to `last`, both included."""
    start, end = MEASUREMENT_COLUMNS.index(first), MEASUREMENT_COLUMNS.index(last)
    return MEASUREMENT_COLUMNS[start : end + 1]


PING_FIELDS = _columns("rtt_min_ms", "ping_loss_pct")
# duration_s sits among the test's settings in the contract, but iperf3 reports it
IPERF3_FIELDS = (*_columns("throughput_bps", "max_cwnd_bytes"), "duration_s")
MAX_ERROR_CHARS = 300
# A row's status: measured; failed (the network, a host or a tool said no); or the two
# hosts of a slot never met within their round (our orchestration's fault, not data).
OK, FAILED, PEER_LATE = "ok", "failed", "peer-late"


@dataclass(frozen=True)
class SlotPlan:
    """What one slot of a round runs: who is client and server, which directions."""

    client: str  # region key, e.g. "aws:us-east-1"
    server: str
    reverse: bool  # also measure server -> client (iperf3 -R)
    port: int
    # a sentinel's late repeat (orchestrator.sweep.sentinels): its rows go to sentinels.csv
    sentinel: bool = False
    # the throughput measure the slot runs (schema.MEASURES); a round entry written before
    # capacity existed has none: single_stream
    measure: str = SINGLE_STREAM

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def tests(self) -> list[tuple[str, str]]:
        both = [(self.client, self.server), (self.server, self.client)]
        return both if self.reverse else both[:1]


@dataclass(frozen=True)
class RowContext:
    """What every row of a sweep shares, and the per-host and per-pair constants."""

    sweep_id: str
    backend: str
    streams: int  # the capacity measure's parallel streams (single_stream runs one)
    machine_types: Mapping[str, str]  # region key -> machine type
    distances_km: Mapping[tuple[str, str], float]
    # (src, dst) -> what the two hosts allow (netmodel.path_facts), for the limiter
    path_facts: Mapping[tuple[str, str], PathFacts] = field(default_factory=dict)


def host_doc(text: str | bytes | None) -> tuple[dict[str, Any] | None, str]:
    """A raw file's text (or its bytes, UTF-8) -> (the agent's document, "") or (None,
    why there is none)."""
    if text is None:
        return None, "no result from the host"
    try:
        doc = orjson.loads(text)  # the agent's one-line document: 3 times json's speed
    except ValueError:  # not strict JSON (json takes NaN), or not alone in the file
        doc = _lenient_doc(text.decode(errors="replace") if isinstance(text, bytes) else text)
        if doc is None:
            return None, f"{CORRUPTED} from the agent"
    if not isinstance(doc, dict):
        return None, f"{CORRUPTED} from the agent"
    if "ansible_event" in doc:
        return None, f"{doc['ansible_event']}: {doc.get('msg') or 'no message'}"
    if "agent_version" not in doc:
        return None, f"{CORRUPTED} from the agent"
    return doc, ""


def _lenient_doc(text: str) -> Any:
    """The document of a raw file that is not strict JSON alone: json's reading of it, or
    of its last line that starts with "{" (a login banner or a shell warning around the
    agent's one-line document); None for none."""
    try:
        return json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines() if line.lstrip().startswith("{")]
        try:
            return json.loads(lines[-1]) if lines else None
        except ValueError:
            return None


def one_line(text: str) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 3] + "..."


def _server_error(server: dict[str, Any] | None) -> str:
    """Why the server side could not serve, from its own iperf3 output, if it says."""
    for run in (server or {}).get("iperf3_server", []):
        if run.get("rc") not in (0, None):
            parsed = parse_iperf3(run.get("stdout", ""))
            return parsed["error"] if parsed["error"] != CORRUPTED else run.get("stderr", "")
    return ""


def _iperf3(client: dict[str, Any], index: int, server: dict[str, Any] | None) -> dict[str, Any]:
    tests = client.get("iperf3") or []
    if index >= len(tests):
        return {"ok": False, "error": f"iperf3 {('forward', 'reverse')[index]} test not run"}
    test = tests[index]
    # the server's own documents: its intervals when the client's copy lacks them
    served = [str(r.get("stdout") or "") for r in (server or {}).get("iperf3_server", [])]
    result = parse_iperf3(test.get("run", {}).get("stdout", ""), served)
    if not result["ok"]:
        error = result["error"]
        if error == CORRUPTED and test.get("run", {}).get("stderr"):
            error += f" ({test['run']['stderr']})"
        why = _server_error(server)
        attempts = test.get("attempts", 1)
        server_late = bool((server or {}).get("peer_late"))
        if test.get("peer_late") and server is not None and (server_late or not why):
            # both ends ran, the server's iperf3 was fine: they never met in time
            return {
                **result,
                "peer_late": True,
                "error": f"{PEER_LATE}: {slot_server(client)} was not listening within the "
                f"round's meeting window ({attempts} attempts: {error})",
            }
        if "Connection refused" in error and (attempts > 1 or why):
            error = f"iperf3 server never started ({attempts} attempts): {error}"
        if why:
            error += f"; server: {why}"
        result = {**result, "error": f"iperf3: {error}"}
    return result


def slot_server(client: dict[str, Any]) -> str:
    return str(client.get("peer", "the server"))


def _ping(doc: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
    run = (doc or {}).get("ping") or {}
    return parse_ping(run.get("stdout", "") + run.get("stderr", "")), run.get("started_utc", "")


def planned_streams(ctx: RowContext, measure: str) -> int:
    """The streams a test of `measure` runs: the sweep's for capacity, else one."""
    return ctx.streams if measure == CAPACITY else 1


def row_base(
    src: str, dst: str, ctx: RowContext, round_no: int, measure: str = SINGLE_STREAM
) -> dict[str, Any]:
    """The fields that say which test a row is, measured or not."""
    src_cloud, src_region = src.split(":", 1)
    dst_cloud, dst_region = dst.split(":", 1)
    return {
        "sweep_id": ctx.sweep_id,
        "backend": ctx.backend,
        "src_cloud": src_cloud,
        "src_region": src_region,
        "dst_cloud": dst_cloud,
        "dst_region": dst_region,
        "distance_km": round(ctx.distances_km[(src, dst)], 1),
        "measure": measure,
        "streams": planned_streams(ctx, measure),
        "src_machine_type": ctx.machine_types.get(src, ""),
        "dst_machine_type": ctx.machine_types.get(dst, ""),
        "round": round_no,
    }


def slot_rows(
    round_no: int, slot: SlotPlan, texts: Mapping[str, str | None], ctx: RowContext
) -> list[dict[str, Any]]:
    """The rows (one per directed test) of one slot, from its hosts' raw outputs."""
    docs = {key: host_doc(texts.get(key)) for key in (slot.client, slot.server)}
    client, client_why = docs[slot.client]
    server, server_why = docs[slot.server]
    rows = []
    for index, (src, dst) in enumerate(slot.tests):
        errors: list[str] = []
        late = False
        measured: dict[str, Any] = {}
        pinger, pinger_why = docs[src]
        if pinger is None:
            errors.append(f"host {src} {pinger_why}")
            started = ""
        elif pinger.get("ping") is None:
            started = ""  # no pings in the slot: the sweep's ping phase measured them
        else:
            ping, started = _ping(pinger)
            measured.update({k: ping.get(k) for k in PING_FIELDS})
            if not ping["ok"]:
                errors.append(ping["error"])
        if client is None:
            if src != slot.client:  # not said already
                errors.append(f"host {slot.client} {client_why}")
        else:
            result = _iperf3(client, index, server)
            if result["ok"]:
                measured.update({k: result.get(k) for k in IPERF3_FIELDS})
                # what iperf3 ran (an older sweep's single test may have run several)
                measured["streams"] = result.get("streams") or planned_streams(ctx, slot.measure)
                measured.update(host_columns(index, client, server))
                measured.update(limiter_columns(measured, ctx, src, dst, result, slot.measure))
            elif result.get("peer_late"):
                late = True
                errors.append(result["error"])
            else:
                if server is None and dst == slot.server:
                    result["error"] += f"; host {slot.server} {server_why}"
                errors.append(result["error"])
        rows.append(
            {
                **row_base(src, dst, ctx, round_no, slot.measure),
                "started_utc": started or (client or server or {}).get("started_utc", ""),
                **measured,
                "status": row_status(errors, late),
                "error": one_line("; ".join(errors)),
            }
        )
    return rows


def limiter_columns(
    measured: Mapping[str, Any],
    ctx: RowContext,
    src: str,
    dst: str,
    test: Mapping[str, Any],
    measure: str = SINGLE_STREAM,
) -> dict[str, Any]:
    """`limiter` and `limiter_detail` of a measured test (orchestrator.results.limiter). The RTT is
    the slot's own ping when it pinged, else the sender's TCP RTT (the sweep's ping phase
    is merged into the row later). A capacity test's hosts had buffers sized for twice the
    BDP at line rate, so the default window is not its bound: it is not tried."""
    row = dict(measured)
    facts = ctx.path_facts.get((src, dst), PathFacts())
    if measure == CAPACITY:
        facts = replace(facts, window_bytes=None)
    found = classify(row, test, facts)
    return found.to_row() if found else {}


# ---- the hosts' own evidence around a test ----------------------------------------------


def sample_counters(sample: Mapping[str, Any] | None) -> dict[str, int]:
    """One host sample of the agent -> its allowance counters: ENA's from ethtool, else the
    emulated ones (`emulated_bw_out`, `emulated_bw_in`: a token bucket's tc counters)."""
    if not sample:
        return {}
    found = allowance_counters(str((sample.get("ethtool") or {}).get("stdout", "")))
    for direction in ("bw_out", "bw_in"):
        name = f"{direction}_allowance_exceeded"
        emulated = sample.get(f"emulated_{direction}")
        if name not in found and emulated:
            value = tc_allowance_counter(str(emulated.get("stdout", "")))
            if value is not None:
                found[name] = value
    return found


def host_window(
    before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, side: str, out: str
) -> dict[str, Any]:
    """The row fields of one host (`side`: src or dst) over one test: its CPU steal, and
    how far its counters moved in the test's direction (`out`: bw_out for the sender,
    bw_in for the receiver); None where a reading is missing."""
    before, after = before or {}, after or {}  # an older agent took no samples
    a, b = sample_counters(before), sample_counters(after)
    bw = f"{out}_allowance_exceeded"
    bw_column = f"{side}_{out}_allowance_exceeded_packets"
    return {
        f"{side}_cpu_steal_pct": steal_pct(
            str(before.get("proc_stat_cpu", "")), str(after.get("proc_stat_cpu", ""))
        ),
        bw_column: counter_delta(a.get(bw), b.get(bw)),
        f"{side}_pps_allowance_exceeded_packets": counter_delta(
            a.get("pps_allowance_exceeded"), b.get("pps_allowance_exceeded")
        ),
    }


def host_columns(
    index: int, client: Mapping[str, Any] | None, server: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The host evidence columns of a slot's test `index` (0: forward, client -> server;
    1: reverse): the client sampled around each of its tests, the server when it began
    listening and after each result, so its test k lies between samples k and k + 1."""
    tests = (client or {}).get("iperf3") or []
    test = tests[index] if index < len(tests) else {}
    Sample = Mapping[str, Any] | None
    mine: tuple[Sample, Sample] = (test.get("host_before"), test.get("host_after"))
    samples = (server or {}).get("host_samples") or []
    theirs: tuple[Sample, Sample] = (None, None)
    if len(samples) >= index + 2:
        theirs = (samples[index], samples[index + 1])
    src, dst = (mine, theirs) if index == 0 else (theirs, mine)
    return {
        **host_window(src[0], src[1], "src", "bw_out"),
        **host_window(dst[0], dst[1], "dst", "bw_in"),
    }


def row_status(errors: Sequence[str], late: bool) -> str:
    """ok; `peer-late` when the only problem is a meeting our own hosts missed; failed."""
    if not errors:
        return OK
    return PEER_LATE if late and len(errors) == 1 else FAILED


def with_ping_phase(phase_row: Mapping[str, Any], slot_row: Mapping[str, Any]) -> dict[str, Any]:
    """A throughput slot's row (no ping fields) completed by the same test's row from the
    sweep's ping phase: the slot's round, both parts' figures, the worse status, both
    errors, and the phase row's flags (those found in raw output, `host_stall`, are
    kept as the row has them; the others are computed again when written)."""
    row = dict(slot_row)
    row.update({k: phase_row.get(k) for k in PING_FIELDS})
    if phase_row.get("flags"):
        row["flags"] = phase_row["flags"]
    row["started_utc"] = phase_row.get("started_utc") or slot_row.get("started_utc", "")
    statuses = (phase_row.get("status"), slot_row.get("status"))
    row["status"] = next((s for s in (FAILED, PEER_LATE) if s in statuses), OK)
    errors = [str(e) for e in (phase_row.get("error"), slot_row.get("error")) if e]
    row["error"] = one_line("; ".join(errors))
    return row


def round_rows(
    round_no: int, slots: Sequence[SlotPlan], texts: Mapping[str, str | None], ctx: RowContext
) -> list[dict[str, Any]]:
    """All rows of one round; `texts` maps region key -> raw text (None: no file)."""
    return [row for slot in slots for row in slot_rows(round_no, slot, texts, ctx)]


def unmeasured_row(
    src: str, dst: str, ctx: RowContext, why: str, measure: str = SINGLE_STREAM
) -> dict[str, Any]:
    """A planned test that never ran (the sweep stopped first): failed, with the reason."""
    return {**row_base(src, dst, ctx, 0, measure), "status": "failed", "error": why}
