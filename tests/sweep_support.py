"""A row context, a slot and the agent documents of one slot, as the collect tests use them."""

from __future__ import annotations

from pathlib import Path

from orchestrator.results.raw_rows import RowContext, SlotPlan

A, B = "aws:us-east-1", "gcp:europe-west1"

DATA = Path(__file__).resolve().parent / "data"


def read(name):
    return (DATA / name).read_text()


CTX = RowContext(
    sweep_id="20261122T0130Z-3fa2",
    backend="local",
    streams=1,
    machine_types={A: "emulated-50mbit", B: "emulated-50mbit"},
    distances_km={(A, B): 6234.0, (B, A): 6234.0},
)

SLOT = SlotPlan(client=A, server=B, reverse=True, port=5201)


def client_doc(forward="iperf3_forward.json", reverse="iperf3_reverse.json", attempts=1):
    return {
        "agent_version": 1,
        "host": A,
        "round": 1,
        "role": "client",
        "peer": B,
        "started_utc": "2026-11-22T01:30:00.000Z",
        "ping": {"stdout": read("ping_ok.txt"), "started_utc": "2026-11-22T01:30:00.100Z"},
        "iperf3": [
            {"direction": "forward", "attempts": attempts, "run": {"stdout": read(forward)}},
            {"direction": "reverse", "attempts": attempts, "run": {"stdout": read(reverse)}},
        ],
    }


def server_doc(ping="ping_loss.txt", server_runs=None):
    return {
        "agent_version": 1,
        "host": B,
        "round": 1,
        "role": "server",
        "peer": A,
        "started_utc": "2026-11-22T01:30:00.000Z",
        "ping": {"stdout": read(ping), "started_utc": "2026-11-22T01:30:00.200Z"},
        "iperf3_server": server_runs or [{"rc": 0, "stdout": "{}"}],
    }
