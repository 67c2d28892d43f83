"""Tool output -> numbers: pure functions over the text iperf3 and ping printed.

Nothing here runs a tool or reads a file, so every branch is tested on real
captured outputs (`tests/data/`). A parser never raises on bad output: it
returns `ok: False` with an `error` that says what was wrong, because one
broken test must not stop a sweep.
"""

from __future__ import annotations

import json
import re
from typing import Any

from orchestrator.core.stats import percentiles

CORRUPTED = "corrupted output"


def _failed(error: str, **extra: Any) -> dict[str, Any]:
    return {"ok": False, "error": error, **extra}


# ---- iperf3 ---------------------------------------------------------------------------


def parse_iperf3(json_text: str) -> dict[str, Any]:
    """One `iperf3 -c ... --json [--get-server-output]` document -> a test's throughput figures.

    Throughput is what the receiver got (`throughput_bps`) and what the sender put
    on the wire (`throughput_sender_bps`). The sender's kernel figures (mean TCP RTT,
    max congestion window) come from the sending side's streams: the client's own
    for a forward test, the server's output for a reverse (`-R`) test.
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
        return _iperf3_figures(doc)
    except (KeyError, TypeError, ValueError, IndexError):
        return _failed(CORRUPTED)


def _iperf3_figures(doc: dict[str, Any]) -> dict[str, Any]:
    test = doc["start"]["test_start"]
    reverse = bool(test.get("reverse", 0))
    end = doc["end"]
    received = end["sum_received"]
    sent = end["sum_sent"]
    if reverse:
        server = doc.get("server_output_json") or {}
        sender_streams = [s["sender"] for s in server.get("end", {}).get("streams", [])]
    else:
        sender_streams = [s["sender"] for s in end["streams"]]
    rtts_us = [s["mean_rtt"] for s in sender_streams if s.get("mean_rtt")]
    cwnds = [s["max_snd_cwnd"] for s in sender_streams if s.get("max_snd_cwnd")]
    return {
        "ok": True,
        "error": "",
        "reverse": reverse,
        "throughput_bps": float(received["bits_per_second"]),
        "throughput_sender_bps": _sender_bps(sent, received, reverse),
        "bytes": int(received["bytes"]),
        "retransmits": int(sent["retransmits"]) if "retransmits" in sent else None,
        # iperf3 reports RTT in microseconds; several streams: the mean of their means
        "tcp_rtt_ms": sum(rtts_us) / len(rtts_us) / 1000 if rtts_us else None,
        "max_cwnd_bytes": max(cwnds) if cwnds else None,
        # the client's measured interval, the one -t times: the server's clock runs about
        # one RTT longer (_sender_bps)
        "duration_s": float((received if reverse else sent)["seconds"]),
        "streams": int(test["num_streams"]),
        # beside the row, for the limiter (orchestrator.limiter): what the sender put on
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


# ---- ping -----------------------------------------------------------------------------

_SAMPLE = re.compile(r"^\d+ bytes from .*? time=([\d.]+) ms(?!.*DUP!)")
_COUNTS = re.compile(r"(\d+) packets transmitted, (\d+) received")
_LOSS = re.compile(r"([\d.]+)% packet loss")
_SUMMARY = re.compile(r"= ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms")
_UNREACHABLE = re.compile(r"Destination (Host|Net) Unreachable|Network is unreachable|unknown host")


def ping_samples(text: str) -> list[float]:
    """Every reply's RTT (ms) in iputils `ping` output, in order; duplicates left out."""
    return [float(m.group(1)) for line in text.splitlines() if (m := _SAMPLE.match(line))]


def parse_ping(text: str) -> dict[str, Any]:
    """iputils `ping` output -> RTT statistics, loss and every sample (ms).

    p50/p90/p99 come from the samples themselves, not from ping's averages.
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
    p10, p25, p50, p75, p90, p99 = percentiles(samples, (10, 25, 50, 75, 90, 99))

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


def summarize_probes(sent: int, samples_ms: list[float], probe: str = "icmp") -> dict[str, Any]:
    """The agent's own timed echoes (ping phase) -> the same figures as parse_ping.

    mdev as iputils computes it (the population standard deviation); loss from the
    probes sent against the replies matched. No reply at all is a failed test.
    """
    received = len(samples_ms)
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
    mean = sum(samples_ms) / received
    mdev = max(0.0, sum(x * x for x in samples_ms) / received - mean * mean) ** 0.5
    p10, p25, p50, p75, p90, p99 = percentiles(samples_ms, (10, 25, 50, 75, 90, 99))
    return {
        "ok": True,
        "error": "",
        **result,
        "rtt_min_ms": min(samples_ms),
        "rtt_avg_ms": round(mean, 4),
        "rtt_max_ms": max(samples_ms),
        "rtt_mdev_ms": round(mdev, 4),
        "rtt_samples": received,
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
