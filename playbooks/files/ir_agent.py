#!/usr/bin/env python3
"""interregion test agent: runs one host's whole part of one round, prints ONE JSON document.

Copied to every host by prepare.yml; python3 standard library only (cloud images have
nothing else). Usage: `python3 ir_agent.py '<part as JSON>'`. The part says the host's
role in its slot of the round:

- server: pings the peer, then serves two iperf3 tests (forward, then reverse) with
  one `iperf3 -s --json`, stopped when both results are out. It listens on its own
  test address (`address`, the one the client connects to) when that address is on
  one of its interfaces; a cloud's public address is NAT'd (not on the host), so
  there it listens on all and the stack's firewall limits who reaches it. The server only
  listens once its own pings are done, so the client's throughput tests cannot load
  the link while either side is still measuring idle RTT.
- client: waits a small random jitter, pings the peer, then runs `iperf3 -c` forward
  and reverse (`-R`, with the server's output so the sender's TCP figures are there).

The two ends of a slot meet however late either starts within its round (the
controller hands a round to its hosts one by one): the client retries "connection
refused" and "server is busy" until `meet_within_s` after it would have met an
on-time server, and the server waits as long for its client. A meeting still missed
is marked `peer_late`, which the orchestrator records as its own status, never as a
network failure. A server that cannot start at all ends as a failed test carrying
iperf3's message.

Around each throughput test both ends record the host's own evidence of a limit that is
not the path's (`host_sample`): the aggregate CPU line of /proc/stat (steal time), the
allowance counters of `ethtool -S` on the interface towards the peer (AWS ENA), and on
the emulated cloud its token bucket's counters (the part's `allowance_probe`: the
commands that print them, where ethtool has none). The client samples before and after
each of its tests; the server when it starts listening and after each test's result.

A part with `tune` (the TCP study's tuned variant) raises this host's TCP buffers for
its test and puts them back after: `tcp_rmem`/`tcp_wmem` as given, and on the emulated
cloud (`window_bytes`) the window clamp of its route lifted to match. The settings it
found are saved first (`tuned-<name>.json` beside the agent, kept while they differ), so
`python3 ir_agent.py --restore NAME` puts them back even after an interrupted round;
with nothing saved it changes nothing (`--tune '<tune>'` applies one alone).
`net.core.rmem_max` is never touched: on the emulated cloud it is the machine's.

`python3 ir_agent.py --facts` prints what prepare.yml records about the host instead.

`python3 ir_agent.py --ping-phase '<part>'` probes every peer of the part at once with
the agent's own ICMP echoes (one process per host): kernel receive timestamps
(SO_TIMESTAMPNS), replies matched by identifier and sequence, so every sample keeps
microseconds at every RTT (iputils ping prints whole ms from 100 ms up), with when its
probe left (`sent_s`, after the document's `t0_epoch_s`): a stall of the machine shows
as samples of many peers delayed at the same moment. Probes leave
the host at least `min_gap_s` apart, round-robin over the peers from a per-host offset,
so no peer gets a burst. With `--out PATH` the document goes to that file instead
(written whole, then renamed): the playbook starts the agents in the background and
collects the files after, each host's once its agent has exited (the start task holds
a lock the agent inherits: `flock` on the `.lock` beside `--out`). The agent begins
probing at `--start-at EPOCH` (else the part's `start_at_epoch_s`): when the controller
expects to have started every host.

`python3 ir_agent.py --mesh PART_FILE` runs the continuous mesh's prober until stopped
(SIGTERM; under systemd on cloud hosts): every `interval_s` (cycles aligned to the clock)
it sends `pings` echoes to every peer with the same kernel-timestamped ICMP socket as the
ping phase, spread evenly over the interval from a per-host phase, so the hosts' probes
interleave instead of bursting together. Each cycle of each peer becomes one line, once
its replies are in (or `reply_wait_s` passed), appended to `records-NNNNNN.jsonl` in the
part's `dir`: `{"t": cycle start (epoch s), "d": peer, "s": sent, "r": [rtt ms, ...]}`.
A file past `rotate_bytes` is closed and the next number begun; only the newest
`keep_files` are kept. `python3 ir_agent.py --mesh-read DIR NUMBER OFFSET` prints what
the controller has not pulled yet: for each file from NUMBER on, a line
`#file NUMBER START` and its whole lines from START (OFFSET for the first, 0 after);
with `--revive` after them (emulated hosts: no systemd there), it then starts the agent
again from the part it keeps in DIR (`mesh-part.json`) if DIR's agent is not running,
and says so on stderr. An agent stopped for longer than an interval (SIGSTOP, a
suspended VM) skips the probes it missed: their cycles are gaps, never a late burst.

Every tool output is kept verbatim; the orchestrator parses them. The agent never
exits non-zero for a failed test: one bad test must not stop the round.
"""

import json
import os
import queue
import random
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from datetime import datetime, timezone

AGENT_VERSION = 5  # 3: host samples around each throughput test; 4: ping phase to a file;
# 5: a part's `tune` (the TCP study's tuned buffers) and --restore. (iperf3 -i 0.999 did
# not bump it: the history fingerprints the ping phase by it, which did not change; each
# test's raw `cmd` shows the interval. Nor did the ping phase's send times, `sent_s`: the
# probing is the same, its document says a little more; nor did --mesh, which leaves every
# round and the ping phase as they were.)
RETRYABLE = ("Connection refused", "server is busy")
# iperf3's report interval on both ends. iperf3 zeroes its interval counters when the omit
# timer fires; with -i 1 its interval timer often fires just after, at the same boundary,
# and the last omitted second is missing from the JSON (3.12, --omit 2). A timer a little
# faster fires first, so at most the last ms of the omit go unlisted and the orchestrator
# can align sender and receiver on the bytes each listed (orchestrator.results.parse).
IPERF3_INTERVAL_S = "0.999"


def utc_now():
    # not datetime.UTC: cloud images may ship a python3 older than 3.11
    now = datetime.now(timezone.utc)  # noqa: UP017
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def run(cmd, timeout_s):
    """Run a tool; its output as received, with timestamps. A timeout is an answer too."""
    started = utc_now()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as e:
        rc = -9
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        err = f"timed out after {timeout_s:g} s"
    except OSError as e:
        rc, out, err = 127, "", str(e)
    return {
        "cmd": cmd,
        "rc": rc,
        "stdout": out,
        "stderr": err,
        "started_utc": started,
        "ended_utc": utc_now(),
    }


def ping(part):
    count, interval = part["pings"], part["ping_interval_s"]
    # no -w: with a deadline ping sends extra probes while replies are in flight (RTT >
    # interval) and reports them as loss; -W bounds the wait for the last replies instead
    cmd = [part.get("ping", "ping"), "-n", "-c", str(count), "-i", str(interval), "-W", "2"]
    cmd.append(part["peer_address"])
    return run(cmd, count * interval + 10)


def iperf3_error(stdout):
    try:
        return str(json.loads(stdout).get("error", ""))
    except (ValueError, AttributeError):
        return ""


def not_met_yet(stdout):
    """The server was not ready for this test, and nothing was measured: refused, busy,
    or reset before any data flowed (the server still closing the slot's previous test:
    seen on long paths, where the client hears the end of a test before the server has
    finished it)."""
    error = iperf3_error(stdout)
    if any(r in error for r in RETRYABLE):
        return True
    if "reset by peer" not in error:
        return False
    try:
        return not json.loads(stdout).get("intervals")
    except (ValueError, AttributeError):
        return False


def route_dev(address):
    """The interface this host reaches `address` through ("" when ip cannot say)."""
    found = re.search(r"\bdev (\S+)", run(["ip", "-o", "route", "get", address], 5)["stdout"])
    return found.group(1) if found else ""


def host_probe(part):
    """What host_sample reads on this host, found once per part."""
    return {"dev": route_dev(part["peer_address"]), "emulated": part.get("allowance_probe") or {}}


def host_sample(probe):
    """The host's counters now, as printed. Of `ethtool -S` only the allowance lines are
    kept: a full ENA listing is kilobytes per queue, four times per test on every host."""
    sample = {"at_utc": utc_now(), "proc_stat_cpu": ""}
    for line in read("/proc/stat").splitlines():
        if line.startswith("cpu "):
            sample["proc_stat_cpu"] = line
            break
    if probe.get("dev"):
        done = run(["ethtool", "-S", probe["dev"]], 5)
        lines = [ln for ln in done["stdout"].splitlines() if "allowance" in ln]
        sample["ethtool"] = {"rc": done["rc"], "stdout": "\n".join(lines), "stderr": done["stderr"]}
    for name, cmd in sorted(probe.get("emulated", {}).items()):
        done = run(cmd, 5)
        sample["emulated_" + name] = {"rc": done["rc"], "stdout": done["stdout"]}
    return sample


def client_test(part, reverse, give_up, probe=None):
    cmd = [part.get("iperf3", "iperf3"), "-c", part["peer_address"], "-p", str(part["port"])]
    cmd += ["-t", str(part["duration_s"]), "-O", str(part["omit_s"]), "-P", str(part["streams"])]
    cmd += ["-i", IPERF3_INTERVAL_S, "--json", "--get-server-output", "--connect-timeout", "3000"]
    if part.get("window"):
        cmd += ["-w", str(part["window"])]
    # default_congestion: the emulated cloud's host setting (a cloud image's default)
    congestion = part.get("congestion") or part.get("default_congestion")
    if congestion:
        cmd += ["-C", str(congestion)]
    if reverse:
        cmd.append("-R")
    timeout_s = part["omit_s"] + part["duration_s"] + 20
    attempts = 0
    before = host_sample(probe) if probe is not None else None
    while True:
        attempts += 1
        result = run(cmd, timeout_s)
        retryable = not_met_yet(result["stdout"])
        if not retryable or time.monotonic() > give_up:
            break
        time.sleep(0.1)
    test = {
        "direction": "reverse" if reverse else "forward",
        "attempts": attempts,
        # still refused at the meeting deadline: the server never listened in time
        "peer_late": retryable,
        "run": result,
    }
    if probe is not None:
        test.update(host_before=before, host_after=host_sample(probe))
    return test


def client(part, started):
    jitter_s = random.uniform(0, part.get("jitter_s", 0.0))
    time.sleep(jitter_s)
    # pings: 0 when the sweep's ping phase measured the idle RTT already
    pinged = ping(part) if part["pings"] else None
    # an on-time server listens once its own pings are done, as ours are now
    give_up = max(time.monotonic(), started + ping_s(part)) + part["meet_within_s"]
    probe = host_probe(part)
    tests = [client_test(part, False, give_up, probe)]
    if part.get("reverse", True):
        # a server that did not come up for the forward test will not for the reverse one
        gave_up = tests[0]["peer_late"]
        tests.append(client_test(part, True, 0 if gave_up else give_up, probe))
    return {"jitter_s": round(jitter_s, 3), "ping": pinged, "iperf3": tests}


def ping_s(part):
    return part["pings"] * part["ping_interval_s"]


def serve(cmd, tests, wait_s, on_result=None):
    """One iperf3 server for the slot's tests. It listens again as soon as a test ends,
    so the client's reverse test needs no retry; it is stopped once every test's
    result is out, or when no client came within `wait_s`."""
    runs, buf, started = [], "", utc_now()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        return [{"cmd": cmd, "rc": 127, "stdout": "", "stderr": str(e), "started_utc": started}]
    lines = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + wait_s
    why = ""
    while len(runs) < tests:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            why = f"no client test arrived within {wait_s:g} s"
            break
        if line is None:
            why = "iperf3 server exited"
            break
        buf += line
        if line.rstrip() != "}":  # iperf3 closes each JSON document on a line of its own
            continue
        try:
            doc, end = json.JSONDecoder().raw_decode(buf[buf.index("{") :])
        except ValueError:
            continue
        text = buf[buf.index("{") :][:end]
        failed = isinstance(doc, dict) and bool(doc.get("error"))
        runs.append(
            {
                "cmd": cmd,
                "rc": 1 if failed else 0,
                "stdout": text,
                "stderr": "",
                "started_utc": started,
                "ended_utc": utc_now(),
            }
        )
        buf, started = "", utc_now()
        if on_result is not None:
            on_result()
        if failed:
            break  # e.g. the port is taken: the client will say what it saw
    proc.terminate()
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if why:
        err = proc.stderr.read() if proc.stderr else ""
        rc = -9 if why.startswith("no client") else proc.returncode
        runs.append(
            {
                "cmd": cmd,
                "rc": rc,
                "stdout": buf,
                "stderr": (err + "\n" + why).strip(),
                "started_utc": started,
                "ended_utc": utc_now(),
            }
        )
    return runs


def local_address(address):
    """`address` if this host can bind to it (it is on one of its interfaces), else None."""
    if not address:
        return None
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((address, 0))
    except OSError:
        return None
    return address


def server(part):
    result = {"ping": ping(part) if part["pings"] else None}
    # the client may start up to meet_within_s late; then give it the time its tests need
    tests = 2 if part.get("reverse", True) else 1
    wait_s = part.get("serve_wait_s") or (
        part["meet_within_s"] + ping_s(part) + tests * (part["omit_s"] + part["duration_s"] + 10)
    )
    cmd = [part.get("iperf3", "iperf3"), "-s", "-i", IPERF3_INTERVAL_S, "--json"]
    cmd += ["-p", str(part["port"])]
    bind = local_address(part.get("address"))
    if bind:
        cmd += ["-B", bind]
    probe = host_probe(part)
    # one sample as it listens, one after each test: test k lies between k and k + 1
    samples = [host_sample(probe)]
    runs = serve(cmd, tests, wait_s, on_result=lambda: samples.append(host_sample(probe)))
    result["iperf3_server"] = runs
    result["host_samples"] = samples
    result["peer_late"] = any("no client test arrived" in r.get("stderr", "") for r in runs)
    return result


SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux; SCM_ has the same value
ICMP_PAYLOAD = b"interregion-ping" + bytes(40)  # 56 bytes of data, as iputils sends


def icmp_checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def echo_request(ident, seq):
    header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    check = icmp_checksum(header + ICMP_PAYLOAD)
    return struct.pack("!BBHHH", 8, 0, check, ident, seq) + ICMP_PAYLOAD


def icmp_socket():
    """An ICMP datagram socket (the kernel keeps the identifier), else a raw one (root)."""
    try:
        sock, kind = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP), "dgram"
    except OSError:
        sock, kind = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP), "raw"
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.setblocking(False)
    ident = sock.getsockname()[1] if kind == "dgram" else os.getpid() & 0xFFFF
    return sock, kind, ident


def echo_reply(data, kind):
    """(identifier, sequence) of an echo reply, None for any other ICMP message."""
    if kind == "raw":
        data = data[(data[0] & 0x0F) * 4 :]  # past the IPv4 header
    if len(data) < 8:
        return None
    kind_, _code, _check, ident, seq = struct.unpack("!BBHHH", data[:8])
    return (ident, seq) if kind_ == 0 else None


def probe_plan(host, peers, pings, interval_s, min_gap_s):
    """[(offset_s, peer index)] in sending order: round-robin over the peers, starting
    at a per-host offset, `gap` apart, so each peer gets a probe every `interval_s` at
    the earliest and this host never sends two within `min_gap_s`."""
    n = len(peers)
    if not n:
        return [], min_gap_s
    gap = max(min_gap_s, interval_s / n)
    first = zlib.crc32(host.encode()) % n
    order = [(first + j) % n for j in range(n)]
    return [((k * n + j) * gap, order[j]) for k in range(pings) for j in range(n)], gap


def ping_phase(part):
    peers = part["peers"]  # [{"name": region key, "address": test address}]
    plan, gap = probe_plan(
        part["host"], peers, part["pings"], part["ping_interval_s"], part.get("min_gap_s", 0.01)
    )
    if len(plan) >= 65536:
        raise SystemExit("ping phase: more than 65,535 probes; fewer pings or peers")
    sock, kind, ident = icmp_socket()
    by_address = {p["address"]: i for i, p in enumerate(peers)}
    rtts = [[] for _ in peers]
    sent_s = [[] for _ in peers]  # when each sample's probe left, after t0_ns
    sent = [0] * len(peers)
    in_flight = {}  # sequence -> (peer index, send time in ns)
    wait_s = part.get("reply_wait_s", 2.0)
    started, t0_ns = time.monotonic(), time.time_ns()
    next_probe = 0
    deadline = None
    try:
        while True:
            now = time.monotonic()
            while next_probe < len(plan) and started + plan[next_probe][0] <= now:
                peer = plan[next_probe][1]
                seq = next_probe + 1
                sent_ns = time.time_ns()
                try:
                    sock.sendto(echo_request(ident, seq), (peers[peer]["address"], 0))
                    in_flight[seq] = (peer, sent_ns)
                except OSError:
                    pass  # no route: counted as sent and lost, as ping does
                sent[peer] += 1
                next_probe += 1
            if next_probe == len(plan) and deadline is None:
                deadline = now + wait_s
            if deadline is not None and (not in_flight or now >= deadline):
                break
            due = deadline if next_probe == len(plan) else started + plan[next_probe][0]
            readable, _, _ = select.select([sock], [], [], max(0.0, due - time.monotonic()))
            if not readable:
                continue
            while True:
                try:
                    data, ancillary, _flags, source = sock.recvmsg(2048, 64)
                except (BlockingIOError, InterruptedError):
                    break
                received_ns = time.time_ns()
                for level, type_, value in ancillary:
                    if level == socket.SOL_SOCKET and type_ == SO_TIMESTAMPNS:
                        sec, nsec = struct.unpack("qq", value[:16])
                        received_ns = sec * 1_000_000_000 + nsec
                reply = echo_reply(data, kind)
                if reply is None or reply[0] != ident or reply[1] not in in_flight:
                    continue  # another prober's, a duplicate or not a reply
                peer, sent_ns = in_flight[reply[1]]
                if by_address.get(source[0]) != peer:
                    continue
                del in_flight[reply[1]]
                rtts[peer].append(round((received_ns - sent_ns) / 1e6, 4))
                sent_s[peer].append(round((sent_ns - t0_ns) / 1e9, 4))
    finally:
        sock.close()
    return {
        "probe": f"icmp-{kind}",
        "gap_s": round(gap, 4),
        "t0_epoch_s": round(t0_ns / 1e9, 6),
        "peers": {
            p["name"]: {
                "address": p["address"],
                "sent": sent[i],
                "rtt_ms": rtts[i],
                "sent_s": sent_s[i],
            }
            for i, p in enumerate(peers)
        },
    }


def phase_document(part, start_at=None):
    launched_utc = utc_now()
    # every host probes from the same moment, when the controller has started them all
    # (clocks of cloud hosts are NTP-synchronised; one that is off just starts off-time)
    start_at = part.get("start_at_epoch_s", 0) if start_at is None else start_at
    time.sleep(max(0.0, min(start_at - time.time(), 120.0)))
    doc = {
        "agent_version": AGENT_VERSION,
        "host": part["host"],
        "phase": "ping",
        "launched_utc": launched_utc,
        "started_utc": utc_now(),
    }
    try:
        doc.update(ping_phase(part))
    except (OSError, SystemExit) as exc:
        doc["error"] = f"ping phase: {exc}"
    doc["ended_utc"] = utc_now()
    return doc


def write_atomic(path, text):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def first_line(cmd):
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return ((done.stdout or done.stderr).strip().splitlines() or [""])[0]


def facts():
    net = "/proc/sys/net/ipv4/"
    return {
        "agent_version": AGENT_VERSION,
        "kernel": os.uname().release,
        "iperf3_version": first_line(["iperf3", "--version"]),
        "ping_version": first_line(["ping", "-V"]),
        "python_version": sys.version.split()[0],
        "tcp_congestion_control": read(net + "tcp_congestion_control"),
        "tcp_available_congestion_control": read(net + "tcp_available_congestion_control"),
        "tcp_rmem": read(net + "tcp_rmem"),
        "tcp_wmem": read(net + "tcp_wmem"),
        "missing_tools": [t for t in ("iperf3", "ping", "flock") if not shutil.which(t)],
        "agent_dir": os.path.dirname(os.path.abspath(__file__)),
    }


TUNED_SYSCTLS = ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem")


def saved_path(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), f"tuned-{name}.json")


def sysctl_path(key):
    return "/proc/sys/" + key.replace(".", "/")


def set_sysctl(key, value):
    """Write one sysctl of this host (its namespace on the emulated cloud): directly as
    root, else through sudo (cloud images' login user)."""
    if os.geteuid() == 0:
        with open(sysctl_path(key), "w") as f:
            f.write(value)
        return
    done = run(["sudo", "-n", "sysctl", "-q", "-w", f"{key}={value}"], 10)
    if done["rc"] != 0:
        raise OSError(f"sysctl {key}: {done['stderr'].strip() or done['rc']}")


def clamped_routes():
    """This host's routes that carry a window clamp (the emulated cloud's), as ip prints them."""
    out = run(["ip", "-o", "route", "show"], 5)["stdout"]
    return [ln.strip() for ln in out.splitlines() if re.search(r"\bwindow \d+", ln)]


def replace_route(line):
    done = run(["ip", "route", "replace", *line.split()], 5)
    if done["rc"] != 0:
        raise OSError(f"ip route replace {line}: {done['stderr'].strip()}")


def tune(spec):
    """Apply a part's `tune`; returns what the host then has. The first settings found
    are saved once: a second tune before a restore keeps the true originals."""
    path = saved_path(spec["name"])
    if not os.path.exists(path):
        saved = {"sysctls": {k: read(sysctl_path(k)) for k in TUNED_SYSCTLS}}
        saved["routes"] = clamped_routes() if spec.get("window_bytes") else []
        write_atomic(path, json.dumps(saved))
    for key in TUNED_SYSCTLS:
        set_sysctl(key, spec[key.rsplit(".", 1)[1]])
    if spec.get("window_bytes"):
        for line in clamped_routes():
            replace_route(re.sub(r"\bwindow \d+", f"window {int(spec['window_bytes'])}", line))
    return current_tuning()


def current_tuning():
    return {
        **{k: " ".join(read(sysctl_path(k)).split()) for k in TUNED_SYSCTLS},
        "routes": clamped_routes(),
    }


def restore(name):
    """Put back what tune() saved for `name`; nothing saved: nothing to do."""
    path = saved_path(name)
    if not os.path.exists(path):
        return {"restored": False, **current_tuning()}
    with open(path) as f:
        saved = json.load(f)
    for key, value in saved["sysctls"].items():
        if value:
            set_sysctl(key, value)
    for line in saved["routes"]:
        replace_route(line)
    os.remove(path)
    return {"restored": True, **current_tuning()}


# ---- the continuous mesh ---------------------------------------------------------------

MESH_FILE = "records-%06d.jsonl"
MESH_PART = "mesh-part.json"  # the agent's part, kept in its folder to start it again


def mesh_files(directory):
    """{number: path} of the record files in `directory`."""
    out = {}
    for name in os.listdir(directory) if os.path.isdir(directory) else ():
        m = re.fullmatch(r"records-(\d{6})\.jsonl", name)
        if m:
            out[int(m.group(1))] = os.path.join(directory, name)
    return out


def mesh_schedule(host, peers, pings, interval_s):
    """[(offset_s, peer index)] of one cycle: pings x peers probes evenly spread over the
    interval, round-robin over the peers, from a phase of this host's own (its name's
    CRC), so that hosts started together do not send together."""
    n = len(peers) * pings
    if not n:
        return []
    gap = interval_s / n
    phase = (zlib.crc32(host.encode()) % 1000) / 1000.0 * gap
    first = zlib.crc32(host.encode()) % len(peers)
    return [(phase + k * gap, (first + k) % len(peers)) for k in range(n)]


def mesh_ends_whole(path):
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


class MeshLog:
    """The append-only record files, rotated by size."""

    def __init__(self, directory, rotate_bytes, keep_files):
        self.directory, self.rotate_bytes, self.keep = directory, rotate_bytes, keep_files
        os.makedirs(directory, mode=0o700, exist_ok=True)
        files = mesh_files(directory)
        self.number = max(files) if files else 1
        # open for the agent's life, closed by close() or when the next file begins
        self.f = open(os.path.join(directory, MESH_FILE % self.number), "a")  # noqa: SIM115
        if self.f.tell() and not mesh_ends_whole(self.f.name):
            self.f.write("\n")  # an agent killed mid-line: its part is one bad line alone

    def write(self, lines):
        if not lines:
            return
        self.f.write("".join(lines))
        self.f.flush()
        if self.f.tell() >= self.rotate_bytes:
            self.f.close()
            self.number += 1
            self.f = open(os.path.join(self.directory, MESH_FILE % self.number), "a")  # noqa: SIM115
            for old in sorted(mesh_files(self.directory))[: -self.keep]:
                os.unlink(os.path.join(self.directory, MESH_FILE % old))

    def close(self):
        self.f.close()


def mesh(part, stop):
    """Probe every peer every interval until `stop()`; records appended as cycles end."""
    peers = part["peers"]
    interval = float(part.get("interval_s", 60))
    wait_s = float(part.get("reply_wait_s", 2.0))
    plan = mesh_schedule(part["host"], peers, int(part.get("pings", 5)), interval)
    rotate, keep = int(part.get("rotate_bytes", 8 << 20)), int(part.get("keep_files", 8))
    out = MeshLog(part["dir"], rotate, keep)
    sock, kind, ident = icmp_socket()
    by_address = {p["address"]: i for i, p in enumerate(peers)}
    cycles = {}  # cycle start -> [sent per peer, rtts per peer]
    in_flight = {}  # sequence -> (cycle, peer, send time ns)
    seq = 0
    cycle = int(time.time() // interval * interval)
    if plan and time.time() - cycle > plan[0][0]:
        cycle += int(interval)  # a partial first cycle would read as loss: start whole
    k = 0
    try:
        while not stop():
            now = time.time()
            if plan and now - (cycle + plan[k][0]) > interval:
                # stopped for longer than an interval (SIGSTOP, a suspended VM, the clock
                # stepped): the probes missed are not sent late in one burst, each cycle
                # read as all lost; they are skipped, and their cycles are gaps
                cycle, k = mesh_resume(plan, interval, now)
            while plan and cycle + plan[k][0] <= now:
                c = cycles.setdefault(cycle, ([0] * len(peers), [[] for _ in peers]))
                peer = plan[k][1]
                seq = seq % 65535 + 1
                sent_ns = time.time_ns()
                try:
                    sock.sendto(echo_request(ident, seq), (peers[peer]["address"], 0))
                    in_flight[seq] = (cycle, peer, sent_ns)
                except OSError:
                    pass  # no route: sent and lost
                c[0][peer] += 1
                k += 1
                if k == len(plan):
                    k, cycle = 0, cycle + int(interval)
            done = [t for t in cycles if t + interval + wait_s <= now]
            lines = []
            for t in sorted(done):
                sent, rtts = cycles.pop(t)
                for i, p in enumerate(peers):
                    if sent[i]:
                        lines.append(
                            json.dumps(
                                {"t": t, "d": p["name"], "s": sent[i], "r": rtts[i]},
                                separators=(",", ":"),
                            )
                            + "\n"
                        )
            if done:
                in_flight = {s: v for s, v in in_flight.items() if v[0] in cycles}
            out.write(lines)
            due = cycle + plan[k][0] if plan else now + 1.0
            readable, _, _ = select.select([sock], [], [], max(0.0, min(due - time.time(), 1.0)))
            while readable:
                try:
                    data, ancillary, _flags, source = sock.recvmsg(2048, 64)
                except (BlockingIOError, InterruptedError):
                    break
                received_ns = time.time_ns()
                for level, type_, value in ancillary:
                    if level == socket.SOL_SOCKET and type_ == SO_TIMESTAMPNS:
                        sec, nsec = struct.unpack("qq", value[:16])
                        received_ns = sec * 1_000_000_000 + nsec
                reply = echo_reply(data, kind)
                if reply is None or reply[0] != ident or reply[1] not in in_flight:
                    continue
                t, peer, sent_ns = in_flight[reply[1]]
                if by_address.get(source[0]) != peer or t not in cycles:
                    continue
                del in_flight[reply[1]]
                cycles[t][1][peer].append(round((received_ns - sent_ns) / 1e6, 4))
    finally:
        sock.close()
        out.close()


def mesh_resume(plan, interval, now):
    """(cycle, slot): the next slot of `plan` due at or after `now`."""
    cycle = now // interval * interval
    for k, (offset, _peer) in enumerate(plan):
        if cycle + offset >= now:
            return int(cycle), k
    return int(cycle + interval), 0


def mesh_agent_alive(directory):
    """Whether the agent of `directory` runs (stopped counts: it has not died): its pid
    file names a live process whose command is this agent's --mesh."""
    try:
        with open(os.path.join(directory, "agent.pid")) as f:
            pid = int(f.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, ValueError, IndexError):
        return False
    return b"--mesh" in argv and state != "Z"


def mesh_revive(directory):
    """Start the agent of `directory` again (from the part it kept there) when it is not
    running: on emulated hosts, where no systemd restarts it, each pull asks for this.
    Returns the new agent's pid, or None."""
    part = os.path.join(directory, MESH_PART)
    if mesh_agent_alive(directory) or not os.path.isfile(part):
        return None
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--mesh", part],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )  # fmt: skip
    for _ in range(50):  # its pid file: written once it has read its part
        if mesh_agent_alive(directory):
            break
        time.sleep(0.1)
    return child.pid


def mesh_read(directory, number, offset):
    """What the controller has not pulled: whole lines from (number, offset) on."""
    chunks = []
    for n, path in sorted(mesh_files(directory).items()):
        if n < number:
            continue
        start = offset if n == number else 0
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read()
        data = data[: data.rfind(b"\n") + 1]
        chunks.append(b"#file %d %d\n" % (n, start) + data)
    sys.stdout.buffer.write(b"".join(chunks))


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)  # unwinds through the finally that restores


def main(argv):
    if argv[1:2] == ["--tune"]:  # by hand and in tests; a study's parts carry `tune`
        sys.stdout.write(json.dumps(tune(json.loads(argv[2]))) + "\n")
        return 0
    if argv[1:2] == ["--restore"]:
        sys.stdout.write(json.dumps(restore(argv[2])) + "\n")
        return 0
    if argv[1:2] == ["--mesh"]:
        with open(argv[2]) as f:
            part = json.load(f)
        stopping = []
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, lambda s, _f: stopping.append(s))
        os.makedirs(part["dir"], mode=0o700, exist_ok=True)
        write_atomic(os.path.join(part["dir"], MESH_PART), json.dumps(part))
        with open(os.path.join(part["dir"], "agent.pid"), "w") as f:
            f.write(f"{os.getpid()}\n")
        mesh(part, lambda: bool(stopping))
        return 0
    if argv[1:2] == ["--mesh-read"]:
        mesh_read(argv[2], int(argv[3]), int(argv[4]))
        if argv[5:6] == ["--revive"]:
            pid = mesh_revive(argv[2])
            if pid is not None:
                sys.stderr.write(f"revived: the agent was not running; started again as {pid}\n")
        return 0
    if argv[1:] == ["--facts"]:
        sys.stdout.write(json.dumps(facts()) + "\n")
        return 0
    if argv[1:2] == ["--ping-phase"]:
        part = json.loads(argv[2])
        # --start-at EPOCH, --out PATH
        options = {argv[i]: argv[i + 1] for i in range(3, len(argv) - 1, 2)}
        start_at = options.get("--start-at")
        doc = phase_document(part, None if start_at is None else float(start_at))
        if "--out" in options:
            write_atomic(options["--out"], json.dumps(doc) + "\n")
        else:
            sys.stdout.write(json.dumps(doc) + "\n")
        return 0
    part = json.loads(argv[1])
    if len(argv) > 2:  # the host's own settings (inventory), e.g. allowance_probe
        part.update(json.loads(argv[2]))
    started = time.monotonic()
    doc = {
        "agent_version": AGENT_VERSION,
        "host": part["host"],
        "round": part["round"],
        "role": part["role"],
        "peer": part["peer"],
        "started_utc": utc_now(),
    }
    if part.get("tune"):
        # an interrupted round (ssh gone, SIGTERM) still restores on its way out
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, on_signal)
        try:
            doc["tuned"] = tune(part["tune"])
        except OSError as e:
            doc["tune_error"] = str(e)
            doc["restored"] = restore(part["tune"]["name"])
            doc["ended_utc"] = utc_now()
            sys.stdout.write(json.dumps(doc) + "\n")
            return 0
    try:
        doc.update(client(part, started) if part["role"] == "client" else server(part))
    finally:
        if part.get("tune"):
            doc["restored"] = restore(part["tune"]["name"])
    doc["ended_utc"] = utc_now()
    sys.stdout.write(json.dumps(doc) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
