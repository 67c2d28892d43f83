"""Re-capture the ping-phase documents the stall tests read (run as root from the checkout).

`python tests/data/stall/capture.py`: brings up an emulation of 8 regions (id irstall,
seed 11), runs the agent's real ping phase on every host at once (20 pings 0.2 s apart,
as the demo), four times, and writes each run's documents to <scenario>.json here:

- clean: nothing done;
- machine: delayd, which carries every host-to-host packet, stopped for 150 ms (SIGSTOP,
  then SIGCONT) 1.5 s into the probing: every host delayed at once, as a busy machine
  does;
- host: every path to and from aws:us-east-1 given 75 ms more one way (emulator
  perturb) a second in, taken away a moment later: one host's tests delayed together;
- path: aws:us-east-1/gcp:europe-west1 given 10 ms more one way 1.5 s in and kept: a
  real route change on one pair, which must not read as a stall.

The emulation is taken down at the end, also on failure. tests/unit/results/test_stalls.py
pins what it reads off these files: update it after capturing again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
AGENT = ROOT / "playbooks" / "files" / "ir_agent.py"
ID = "irstall"
REGIONS = ("aws:us-east-1,gcp:us-east4,aws:us-west-2,gcp:europe-west1,aws:eu-west-1,"
           "aws:ap-northeast-1,aws:sa-east-1,aws:ap-southeast-2")  # fmt: skip
HOST = "aws:us-east-1"
PAIR = "aws:us-east-1/gcp:europe-west1"
PINGS, INTERVAL_S = 20, 0.2
ACT_AT_S = 1.5  # after the probing starts


def cli(*args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "orchestrator", *args], check=True, env=env)


def run_phase(spec: dict, act) -> dict:
    hosts = [(h["name"], h["address"]) for h in spec["hosts"]]
    start_at = time.time() + 4.0  # 8 agents start in 1-2 s on a busy machine
    procs, outs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, _address) in enumerate(hosts, start=1):
            peers = [{"name": p, "address": a} for p, a in hosts if p != name]
            part = {"host": name, "pings": PINGS, "ping_interval_s": INTERVAL_S,
                    "min_gap_s": 0.01, "reply_wait_s": 2.0, "peers": peers}  # fmt: skip
            out = Path(tmp) / f"{n}.json"
            cmd = ["ip", "netns", "exec", f"ir-{ID}-{n}", "python3", str(AGENT),
                   "--ping-phase", json.dumps(part), "--start-at", repr(start_at),
                   "--out", str(out)]  # fmt: skip
            procs.append(subprocess.Popen(cmd))
            outs.append(out)
        time.sleep(max(0.0, start_at + ACT_AT_S - time.time()))
        act()
        for p in procs:
            p.wait(timeout=60)
        docs = [json.loads(out.read_text()) for out in outs]
    return {"stalled_at_epoch_s": start_at + ACT_AT_S, "docs": docs}


def main() -> None:
    cli("emulator", "up", "--id", ID, "--seed", "11", "--regions", REGIONS)
    try:
        state = Path("/run/interregion") / ID
        spec = json.loads((state / "spec.json").read_text())
        delayd = int((state / "delayd.pid").read_text())

        def machine() -> None:
            os.kill(delayd, signal.SIGSTOP)
            time.sleep(0.15)
            os.kill(delayd, signal.SIGCONT)

        def host() -> None:
            cli("emulator", "perturb", "--id", ID, "--perturb", f"{HOST},delay_ms=75")
            cli("emulator", "perturb", "--id", ID)

        def path() -> None:
            cli("emulator", "perturb", "--id", ID, "--perturb", f"{PAIR},delay_ms=10")

        for name, act in (("clean", lambda: None), ("machine", machine), ("host", host),
                          ("path", path)):  # fmt: skip
            cli("emulator", "perturb", "--id", ID)
            doc = run_phase(spec, act)
            (HERE / f"{name}.json").write_text(json.dumps(doc) + "\n")
            print(f"{name}: {len(doc['docs'])} documents")
    finally:
        cli("emulator", "down", "--id", ID)


if __name__ == "__main__":
    main()
