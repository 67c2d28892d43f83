"""Changes within 15 minutes: the store's judged-once detection on the mesh's 5-minute bins.

Each bin is one run of each directed pair (its value: the bin's median RTT), judged once
by orchestrator.history.changes (PathJudge, Judge: the same rules, pooled scales, host and
region roll-ups, episodes and notifications as sweeps) with the mesh's own rule, RULE:

- baseline: the last 12 bins (an hour) outside episodes; nothing judged before 6 (30 min);
- flag: a bin's median beyond max(3 x scale, 2 ms) of its baseline;
- confirm: 2 flagged bins in a row on the same side (k2 = 3.75): a change that starts
  inside a bin is confirmed when the second whole bin after it is judged, at most 10
  minutes after its start plus the collection's lag (a pull a minute);
- reverted after 2 bins back inside; new normal after 6 bins (30 min) at the new level.

A bin is judged once every host that reported in the last three collections has recorded
its last cycle (the bin is complete), or once it ended three collections ago (a dead host
does not hold the others back); bins are judged in time order, each after the last one
judged (`meta`: mesh_judged:<id>). A bin with fewer than MIN_SAMPLES replies is no run.
The rule counts bins, not minutes: a mesh with shorter bins (`--bin-seconds`, for
tests) keeps the same counts, so its times shrink with its bins.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from orchestrator.history import Params, Run, SeriesKey, judge_runs
from orchestrator.mesh.bins import utc

if TYPE_CHECKING:
    from orchestrator.mesh.lifecycle import MeshRequest
    from orchestrator.sweep import Sweep

RULE = Params(window_runs=12, min_runs=6, confirm_runs=2, revert_runs=2, new_normal_runs=6)
MIN_SAMPLES = 3
_JUDGED_KEY = "mesh_judged:{mesh}"


def run_id(mesh_id: str, t: int) -> str:
    return f"{mesh_id}@{utc(t).strftime('%Y%m%dT%H%M%SZ')}"


def final_through(hosts: dict[str, Any], request: MeshRequest, now: float) -> int:
    """The end (epoch s) of the latest bin that is complete (see the module)."""
    recent = [h for h in hosts.values() if not h.get("error") and "newest_t" in h]
    stale_end = int(now - 3 * request.collect_every_s)
    if not recent:
        return stale_end - stale_end % request.bin_s
    # a host's newest record is the start of its last cycle: the bins up to its end are done
    done = min(int(h["newest_t"]) + request.interval_s for h in recent)
    through = max(done, stale_end)
    return through - through % request.bin_s


def judge_final_bins(
    con: Any, sweep: Sweep, source: str, hosts: dict[str, Any], request: MeshRequest,
    now: float,
) -> int:  # fmt: skip
    """Judge every complete bin after the last judged one (inside the caller's
    transaction); returns the bins judged."""
    key = _JUDGED_KEY.format(mesh=sweep.id)
    row = con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    after = int(row[0]) if row else 0
    through = final_through(hosts, request, now)
    rows = con.execute(
        "SELECT epoch(t)::BIGINT, src, dst, rtt_p50_ms FROM mesh_bins "
        "WHERE source = ? AND mesh_id = ? AND epoch(t) >= ? AND epoch(t) + ? <= ? "
        "AND rtt_p50_ms IS NOT NULL AND received >= ? ORDER BY t, src, dst",
        [source, sweep.id, after, request.bin_s, through, MIN_SAMPLES],
    ).fetchall()
    runs: dict[int, list[tuple[SeriesKey, Run]]] = {}
    for t, src, dst, p50 in rows:
        runs.setdefault(t, []).append(
            (SeriesKey(source, sweep.backend, "rtt", src, dst),
             Run(run_id(sweep.id, t), datetime.fromtimestamp(t, UTC), float(p50), sweep.id))
        )  # fmt: skip
    judge_runs(con, [(run_id(sweep.id, t), rs) for t, rs in sorted(runs.items())], RULE)
    if through > after:
        con.execute("DELETE FROM meta WHERE key = ?", [key])
        con.execute("INSERT INTO meta VALUES (?, ?)", [key, str(through)])
    return len(runs)
