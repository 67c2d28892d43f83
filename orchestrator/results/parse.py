"""Tool output -> numbers: pure functions over the text iperf3 and ping printed.

Nothing here runs a tool or reads a file, so every branch is tested on real
captured outputs (`tests/data/`). A parser never raises on bad output: it
returns `ok: False` with an `error` that says what was wrong, because one
broken test must not stop a sweep.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.core import quotable_percentiles

CORRUPTED = "corrupted output"


def _failed(error: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": error, **extra}


# ---- iperf3 ---------------------------------------------------------------------------


def parse_iperf3(json_text: str, server_outputs: Sequence[str] = ()) -> dict[str, Any]:
    """One `iperf3 -c ... --json --get-server-output` document -> a test's throughput figures.

    Throughput is what the receiver got (`throughput_bps`) and what the sender put
    on the wire (`throughput_sender_bps`). The sender's kernel figures (mean TCP RTT,
    max congestion window) come from the sending side's streams: the client's own
    for a forward test, the server's output for a reverse (`-R`) test.

    With the receiver's intervals `throughput_bps` is its goodput over the sender's
    measured interval (align); with both ends' complete intervals (the server's in
    `server_output_json`, or in the one of `server_outputs`, the server's own `iperf3 -s
    --json` documents, of the same test) `bytes` is the receiver's count of the bytes the
    sender counted (`aligned` True). Otherwise `bytes` is the receiver's count over the
    sender's interval, or iperf3's own figures without its intervals.
    """
    try:
        doc = json.loads(json_text)
    except (json.JSONDecodeError, TypeError):
        return _failed(CORRUPTED)
    if not isinstance(doc, dict):
        return _failed(CORRUPTED)
    if doc.get("error"):
        return _failed(str(doc["error"]))
    try:
        return _iperf3_figures(doc, _server_doc(doc, server_outputs))
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
        return _failed(CORRUPTED)


def _server_doc(doc: dict[str, Any], server_outputs: Sequence[str]) -> dict[str, Any]:
    """The server's document of the test: the client's copy (--get-server-output), else
    the server's own output of the same test (by its cookie), else {}."""
    copy = doc.get("server_output_json")
    if isinstance(copy, dict) and copy.get("intervals"):
        return copy
    cookie = doc.get("start", {}).get("cookie")
    for text in server_outputs if cookie else ():
        if cookie not in text:
            continue
        try:
            own = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(own, dict) and own.get("start", {}).get("cookie") == cookie:
            return own
    return copy if isinstance(copy, dict) else {}


def _iperf3_figures(doc: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    test = doc["start"]["test_start"]
    reverse = bool(test.get("reverse", 0))
    end = doc["end"]
    received = end["sum_received"]
    sent = end["sum_sent"]
    if reverse:
        sender_streams = [s["sender"] for s in server.get("end", {}).get("streams", [])]
    else:
        sender_streams = [s["sender"] for s in end["streams"]]
    rtts_us = [s["mean_rtt"] for s in sender_streams if s.get("mean_rtt")]
    cwnds = [s["max_snd_cwnd"] for s in sender_streams if s.get("max_snd_cwnd")]
    # the client's measured interval, the one -t times: the server's clock runs about one
    # RTT longer (_sender_bps)
    seconds = float((received if reverse else sent)["seconds"])
    sender_doc, receiver_doc = (server, doc) if reverse else (doc, server)
    sender, receiver = end_count(sender_doc, True), end_count(receiver_doc, False)
    aligned = align(sender, receiver, seconds) if receiver and seconds > 0 else None
    # the receiver's count of the sender's bytes; without both ends' complete listings,
    # its bytes over the sender's interval (unaligned at the omit boundary)
    if aligned is None:
        received_bytes = int(received["bytes"])
    elif aligned.received_bytes is None:
        received_bytes = aligned.window_bytes
    else:
        received_bytes = aligned.received_bytes
    return {
        "ok": True,
        "error": "",
        "reverse": reverse,
        "throughput_bps": aligned.goodput_bps if aligned else float(received["bits_per_second"]),
        "throughput_sender_bps": _sender_bps(sent, received, reverse),
        "bytes": received_bytes,
        "retransmits": int(sent["retransmits"]) if "retransmits" in sent else None,
        # iperf3 reports RTT in microseconds; several streams: the mean of their means
        "tcp_rtt_ms": sum(rtts_us) / len(rtts_us) / 1000 if rtts_us else None,
        "max_cwnd_bytes": max(cwnds) if cwnds else None,
        "duration_s": seconds,
        "streams": int(test["num_streams"]),
        # beside the row, for the limiter (orchestrator.results.limiter): what the sender put on
        # the wire, its iperf3's CPU (percent of one core), the MSS and the version
        "sent_bytes": int(sent["bytes"]),
        # how much longer the sender's count ran than the receiver's (a reverse test's
        # server: about one RTT, _sender_bps)
        "sender_extra_s": max(0.0, float(sent["seconds"]) - float(received["seconds"]))
        if reverse
        else 0.0,
        "sender_cpu_pct": _sender_cpu_pct(end, reverse),
        "mss_bytes": int(doc["start"].get("tcp_mss_default") or 0) or None,
        "iperf3_version": str(doc["start"].get("version", "")),
        # whether `bytes` is aligned (align), and the omit boundary's backlog
        "aligned": aligned is not None and aligned.received_bytes is not None,
        "omit_backlog_bytes": aligned.omit_backlog_bytes if aligned else None,
        # what iperf3 printed as the receiver's rate: its bytes over its own clock
        "receiver_own_bps": float(received["bits_per_second"]),
    }


def _sender_bps(sent: dict[str, Any], received: dict[str, Any], reverse: bool) -> float:
    """What the sender put on the wire per second, over the interval the receiver's figure
    covers.

    iperf3's server keeps its clock from its own start until the client's end message
    reaches it, about one RTT longer than the client's. Forward, the server receives, and
    the data of that extra RTT reaches it, so each side's own rate is comparable. Reverse
    (`-R`), the server sends and the client stops reading at its own end: the server's
    last RTT carries at most what the path still takes, so its bits_per_second reads low
    by up to RTT / interval (4 % at 200 ms over 5 s). Its bytes are what it sent while the
    client counted, plus the little it sent after, so its rate is taken as those bytes
    over the client's (the receiver's) interval: at worst a little high, which the
    limiter allows for (sender_extra_s), never low enough to make the receiver ahead."""
    seconds = float(received["seconds"])
    if reverse and seconds > 0:
        return int(sent["bytes"]) * 8 / seconds
    return float(sent["bits_per_second"])


def _sender_cpu_pct(end: dict[str, Any], reverse: bool) -> float | None:
    """The sending iperf3's CPU over the test: the client's own (host_total) forward, the
    server's (remote_total) reverse."""
    cpu = end.get("cpu_utilization_percent") or {}
    value = cpu.get("remote_total" if reverse else "host_total")
    return float(value) if isinstance(value, (int, float)) else None


# ---- aligned accounting: both ends' counts of the same bytes --------------------------
#
# iperf3's sender counts the bytes it writes into its socket after the omit; bytes written
# during the omit that are still in its socket buffer (up to the whole send buffer) drain
# after the boundary, and the receiver counts them as they arrive. So each end's figure,
# taken alone, covers a different set of bytes: the receiver's can run ahead of the
# sender's by what was queued at the boundary, or fall behind by what is queued at the end.
# Both ends list their omitted intervals too, and TCP delivers in order: the receiver's
# whole count less what the sender wrote during the omit is its count of exactly the bytes
# the sender counted.
#
# iperf3 (3.12) zeroes its interval counters when the omit timer fires: an interval not
# yet reported then is lost from the listing. With -i 1 the timers often fire together at
# the boundary and a whole second goes (seen with --omit 2); the agent reports every
# AGENT_INTERVAL_S, so a timer fires just before the boundary and what is lost is the last
# few ms (360 listings of two sweeps stopped 0 to 3 ms short). An omitted listing that
# stops more than OMIT_GAP_S short of the boundary is incomplete, and that test's counts
# are not aligned. What an omit timer that fires late (a busy machine) lets the sender
# write after its last listed interval is in neither listing: the one way left for an
# aligned count to read above the sender's (flags.RECEIVER_EXCESS_FRACTION).
AGENT_INTERVAL_S = 0.999  # playbooks/files/ir_agent.py runs iperf3 -i with this
OMIT_GAP_S = 0.01


@dataclass(frozen=True)
class EndCount:
    """One end's own count of a test, from its intervals: the bytes of its omitted
    intervals, whether they reach the omit boundary (`omit_complete`), and every interval
    after them as (start_s, end_s, bytes) on its clock, which iperf3 restarts at the
    boundary."""

    omitted_bytes: int
    omit_complete: bool
    intervals: tuple[tuple[float, float, int], ...]

    @property
    def measured_bytes(self) -> int:
        return sum(b for _, _, b in self.intervals)

    @property
    def total_bytes(self) -> int:
        """Every byte this end counted over the connection, the omit included."""
        return self.omitted_bytes + self.measured_bytes

    def bytes_within(self, seconds: float) -> float:
        """The bytes of the first `seconds` after the omit boundary; an interval that
        straddles the bound counts pro rata (iperf3's last interval of a receiver is the
        time its clock ran past the sender's end)."""
        total = 0.0
        for start, end, nbytes in self.intervals:
            if end <= seconds:
                total += nbytes
            elif start < seconds < end:
                total += nbytes * (seconds - start) / (end - start)
        return total


def end_count(doc: Mapping[str, Any], sender: bool) -> EndCount | None:
    """The count of the end whose document `doc` is, when it is the sending (`sender`) or
    the receiving end; None when it is not that end, has no intervals, or its intervals
    after the omit do not add up to its own total (a server copy cut short:
    esnet/iperf#251)."""
    intervals = doc.get("intervals") or []
    sums = [i.get("sum") or {} for i in intervals if isinstance(i, dict)]
    if not sums or any(bool(s.get("sender")) != sender for s in sums):
        return None
    omitted = [s for s in sums if s.get("omitted")]
    after = tuple(
        (float(s["start"]), float(s["end"]), int(s["bytes"])) for s in sums if not s.get("omitted")
    )
    omit_s = float(((doc.get("start") or {}).get("test_start") or {}).get("omit") or 0)
    reached = float(omitted[-1]["end"]) if omitted else 0.0
    count = EndCount(
        omitted_bytes=sum(int(s["bytes"]) for s in omitted),
        omit_complete=reached >= omit_s - OMIT_GAP_S,
        intervals=after,
    )
    own = (doc.get("end") or {}).get("sum_sent" if sender else "sum_received") or {}
    if "bytes" not in own or int(own["bytes"]) != count.measured_bytes:
        return None
    return count


@dataclass(frozen=True)
class Alignment:
    """Sender and receiver counted over the same interval."""

    # the receiver's goodput over the sender's measured interval: its bytes in the first
    # `seconds` after its own omit boundary, over `seconds`
    goodput_bps: float
    # the receiver's bytes in that interval
    window_bytes: int
    # the receiver's count of the bytes the sender counted (TCP delivers in order): its
    # whole count less the bytes the sender wrote during the omit, >= 0; never above the
    # sender's count, unless a count is wrong. None when an end's omitted intervals are
    # incomplete
    received_bytes: int | None
    # what the sender wrote during its omit that the receiver read after its own omit
    # boundary: the receiver's own figure holds these and the sender's does not (negative
    # when the receiver's boundary came later and it read more in its omit); None as above
    omit_backlog_bytes: int | None


def align(sender: EndCount | None, receiver: EndCount, seconds: float) -> Alignment:
    """Both ends' counts over the sender's measured interval of `seconds` (the client's,
    which -t timed); the sender's count may be missing (its intervals were not kept)."""
    window = receiver.bytes_within(seconds)
    exact = sender is not None and sender.omit_complete and receiver.omit_complete
    return Alignment(
        goodput_bps=window * 8 / seconds,
        window_bytes=round(window),
        received_bytes=max(0, receiver.total_bytes - sender.omitted_bytes)
        if exact and sender is not None
        else None,
        omit_backlog_bytes=sender.omitted_bytes - receiver.omitted_bytes
        if exact and sender is not None
        else None,
    )


# ---- ping -----------------------------------------------------------------------------

_SAMPLE = re.compile(r"^\d+ bytes from .*? time=([\d.]+) ms(?!.*DUP!)")
_COUNTS = re.compile(r"(\d+) packets transmitted, (\d+) received")
_LOSS = re.compile(r"([\d.]+)% packet loss")
_SUMMARY = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
_UNREACHABLE = re.compile(r"Destination (Host|Net) Unreachable|Network is unreachable|unknown host")


_SAMPLES = re.compile(_SAMPLE.pattern, re.MULTILINE)  # every line's at once
# the line breaks splitlines splits at but \n (each looked for with `in`: a fifth of the
# time of one regex search for them all)
_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def ping_samples(text: str) -> list[float]:
    """Every reply's RTT (ms) in iputils `ping` output, in order; duplicates left out."""
    if any(c in text for c in _BREAKS):  # lines that only splitlines splits: one at a time
        return [float(m.group(1)) for line in text.splitlines() if (m := _SAMPLE.match(line))]
    return [float(x) for x in _SAMPLES.findall(text)]  # a history ingest's 5,852 files


def parse_ping(text: str) -> dict[str, Any]:
    """iputils `ping` output -> RTT statistics, loss and every sample (ms).

    p50/p90/p99 come from the samples themselves, not from ping's averages, each only
    where there are samples enough for it (core.stats.min_samples_for, the matrix's
    rule: p90 needs 100, p99 1,000); else NaN, a blank cell, with rtt_samples beside.
    A test where no reply came back is failed, with loss 100 %.
    """
    samples = ping_samples(text)
    counts = _COUNTS.search(text)
    if not counts:
        unreachable = _UNREACHABLE.search(text)
        if unreachable:
            return _failed(f"ping: {unreachable.group(0)}", ping_loss_pct=100.0, samples_ms=[])
        return _failed(f"ping: {CORRUPTED}", samples_ms=samples)
    transmitted, received = int(counts.group(1)), int(counts.group(2))
    loss = _LOSS.search(text)
    loss_pct = float(loss.group(1)) if loss else 100.0 * (1 - received / max(transmitted, 1))
    result: dict[str, Any] = {
        "transmitted": transmitted,
        "received": received,
        "ping_loss_pct": loss_pct,
        "samples_ms": samples,
    }
    if received == 0 or not samples:
        unreachable = _UNREACHABLE.search(text)
        why = unreachable.group(0) if unreachable else "no reply"
        return _failed(f"ping: {why} ({loss_pct:g}% loss)", **result)
    summary = _SUMMARY.search(text)
    if not summary:
        return _failed(f"ping: {CORRUPTED}", **result)
    low, avg, high, mdev = (float(g) for g in summary.groups())
    # Percentiles come from the samples as printed: from 100 ms on iputils prints
    # whole ms (the summary keeps us), so p99 may sit up to 0.5 ms past rtt_max_ms.
    # Clamping them to the summary would mix two resolutions and bias the tail.
    p10, p25, p50, p75, p90, p99 = quotable_percentiles(samples, (10, 25, 50, 75, 90, 99))

    return {
        "ok": True,
        "error": "",
        **result,
        "rtt_min_ms": low,
        "rtt_avg_ms": avg,
        "rtt_max_ms": high,
        "rtt_mdev_ms": mdev,
        "rtt_samples": len(samples),
        "rtt_p10_ms": p10,
        "rtt_p25_ms": p25,
        "rtt_p50_ms": p50,
        "rtt_p75_ms": p75,
        "rtt_p90_ms": p90,
        "rtt_p99_ms": p99,
    }


def summarize_probes(
    sent: int, samples_ms: list[float], probe: str = "icmp", left_out: int = 0
) -> dict[str, Any]:
    """The agent's own timed echoes (ping phase) -> the same figures as parse_ping.

    mdev as iputils computes it (the population standard deviation); loss from the
    probes sent against the replies matched. No reply at all is a failed test.
    `left_out`: replies received but not among `samples_ms` (in a host-wide stall,
    orchestrator.results.stalls): they count as received, not in any RTT figure.
    """
    received = len(samples_ms) + left_out
    loss_pct = 100.0 * (1 - received / sent) if sent else 100.0
    result: dict[str, Any] = {
        "transmitted": sent,
        "received": received,
        "ping_loss_pct": round(loss_pct, 3),
        "samples_ms": list(samples_ms),
    }
    if not sent:
        return _failed(f"{probe}: no probe was sent", **result)
    if not received:
        return _failed(f"{probe}: no reply ({loss_pct:g}% loss)", **result)
    if not samples_ms:
        return _failed(f"{probe}: every reply in a host-wide stall", **result)
    count = len(samples_ms)
    mean = sum(samples_ms) / count
    mdev = max(0.0, sum(x * x for x in samples_ms) / count - mean * mean) ** 0.5
    p10, p25, p50, p75, p90, p99 = quotable_percentiles(samples_ms, (10, 25, 50, 75, 90, 99))
    return {
        "ok": True,
        "error": "",
        **result,
        "rtt_min_ms": min(samples_ms),
        "rtt_avg_ms": round(mean, 4),
        "rtt_max_ms": max(samples_ms),
        "rtt_mdev_ms": round(mdev, 4),
        "rtt_samples": count,
        "rtt_p10_ms": p10,
        "rtt_p25_ms": p25,
        "rtt_p50_ms": p50,
        "rtt_p75_ms": p75,
        "rtt_p90_ms": p90,
        "rtt_p99_ms": p99,
    }


# ---- the host's own evidence: allowance counters and CPU steal ---------------------------

# The ENA driver's counters of packets queued or dropped because the instance went past
# its allowance (AWS: "Monitor network performance for ENA settings on your EC2
# instance"); `ethtool -S` prints one "name: value" line each.
ENA_ALLOWANCE_COUNTERS = ("bw_in_allowance_exceeded", "bw_out_allowance_exceeded",
                          "pps_allowance_exceeded")  # fmt: skip
_STAT_LINE = re.compile(r"^\s*([A-Za-z0-9_.\-\[\]]+):\s+(\d+)\s*$")


def parse_ethtool_stats(text: str) -> dict[str, int]:
    """`ethtool -S DEV` (whole, or only some of its lines) -> {counter: value}; {} when
    the device has no statistics or the text is not ethtool's."""
    stats = {}
    for line in (text or "").splitlines():
        match = _STAT_LINE.match(line)
        if match:
            stats[match.group(1)] = int(match.group(2))
    return stats


def allowance_counters(text: str) -> dict[str, int]:
    """The ENA allowance counters of an `ethtool -S` output; a device without them (veth,
    virtio: any non-ENA NIC, e.g. GCP's) gives {}."""
    stats = parse_ethtool_stats(text)
    return {k: stats[k] for k in ENA_ALLOWANCE_COUNTERS if k in stats}


def tc_allowance_counter(json_text: str) -> int | None:
    """The emulated allowance counter from `tc -s -j qdisc show dev DEV`: packets a token
    bucket (tbf) held back for want of tokens (`overlimits`) or dropped; None when the
    output has no tbf qdisc (no allowance on that device) or is not tc's JSON."""
    try:
        qdiscs = json.loads(json_text)
    except (json.JSONDecodeError, TypeError):
        return None
    if not isinstance(qdiscs, list):
        return None
    found = [q for q in qdiscs if isinstance(q, dict) and q.get("kind") == "tbf"]
    if not found:
        return None
    try:
        return sum(int(q.get("overlimits", 0)) + int(q.get("drops", 0)) for q in found)
    except (TypeError, ValueError):
        return None


def parse_proc_stat_cpu(text: str) -> tuple[int, int] | None:
    """The aggregate "cpu" line of /proc/stat -> (steal, total) in clock ticks; None when
    there is none. Total is user..steal: guest time is counted in user already."""
    for line in (text or "").splitlines():
        fields = line.split()
        if fields[:1] == ["cpu"]:
            try:
                ticks = [int(v) for v in fields[1:9]]
            except ValueError:
                return None
            if len(ticks) < 8:
                return None  # a kernel before 2.6.11 reports no steal
            return ticks[7], sum(ticks)
    return None


def steal_pct(before: str, after: str) -> float | None:
    """CPU steal between two /proc/stat readings, in percent of all CPU time; None when
    either reading is missing, or the counters did not advance (or went back: seen in a
    sandboxed /proc)."""
    a, b = parse_proc_stat_cpu(before), parse_proc_stat_cpu(after)
    if a is None or b is None:
        return None
    steal, total = b[0] - a[0], b[1] - a[1]
    if total <= 0 or steal < 0:
        return None
    return round(100.0 * steal / total, 3)


def counter_delta(before: int | None, after: int | None) -> int | None:
    """How far a counter moved; None when a reading is missing or it went back (the
    driver was reset between them: the move is unknown)."""
    if before is None or after is None or after < before:
        return None
    return after - before
