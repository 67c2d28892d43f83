"""A mesh's rows in a history store, as the controller writes them: samples collected a
bin at a time, each complete bin judged (orchestrator.mesh.detect), the mesh's row in
`sweeps`, and the pulls' positions in `meta`; one path steps up 10 ms near the end."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

from orchestrator.history import store
from orchestrator.mesh import bins, collect, detect
from orchestrator.mesh.lifecycle import MeshRequest

T0 = 1_800_000_000  # a bin start (2027-01-15T08:00:00Z)
HOSTS = ("aws:us-east-1", "gcp:europe-west1", "aws:ap-northeast-1")
LEVEL = {frozenset(HOSTS[:2]): 89.7, frozenset(HOSTS[::2]): 168.5, frozenset(HOSTS[1:]): 230.3}
CHANGED = frozenset(HOSTS[:2])
STEP_BIN = 16
BINS = 20
MESH_ID = "mesh-20270115T080000Z-m1"
SOURCE = "mesh-emulated"


def samples(
    bins_n: int = BINS, step_bin: int = STEP_BIN, lost_echoes: bool = True
) -> list[bins.Sample]:
    """Every pair's 5 echoes a minute; with `lost_echoes`, one minute of one host lost two."""
    rng = random.Random(7)
    out = []
    for b in range(bins_n):
        for minute in range(5):
            t = T0 + b * 300 + minute * 60
            for src in HOSTS:
                for dst in HOSTS:
                    if src == dst:
                        continue
                    pair = frozenset((src, dst))
                    level = LEVEL[pair] + (10.0 if pair == CHANGED and b >= step_bin else 0.0)
                    rtts = [round(level + abs(rng.gauss(0, 0.3)), 4) for _ in range(5)]
                    if lost_echoes and (b, minute, src) == (3, 2, HOSTS[0]):
                        rtts = rtts[:3]  # two echoes lost
                    out.append(bins.Sample(src, dst, t, 5, tuple(rtts)))
    return out


def add_mesh(con, bins_n: int = BINS) -> None:
    """The mesh collected and judged a bin at a time into `con`, as collect.collect does."""
    record = SimpleNamespace(format_version=1, to_json=lambda: {"sweep_id": MESH_ID})
    mesh = SimpleNamespace(id=MESH_ID, backend="local", emulated=True, record=record)
    request = MeshRequest(interval_s=60, collect_every_s=120)
    every = samples(bins_n)
    for b in range(bins_n):
        chunk = [s for s in every if T0 + b * 300 <= s.t < T0 + (b + 1) * 300]
        with store.transaction(con):
            collect.register_source(con, mesh, SOURCE)
            bins.add_samples(con, SOURCE, MESH_ID, chunk)
            for host in HOSTS:
                key = f"mesh_position:{MESH_ID}:{host}"
                con.execute("DELETE FROM meta WHERE key = ?", [key])
                con.execute("INSERT INTO meta VALUES (?, ?)", [key, json.dumps([1, 100 * b])])
            hosts = {h: {"newest_t": T0 + b * 300 + 240, "error": ""} for h in HOSTS}
            detect.judge_final_bins(con, mesh, SOURCE, hosts, request, T0 + b * 300 + 301)
