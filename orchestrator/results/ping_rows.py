"""Rows of the ping phase: each source host's samples of its peers -> measurements rows.

Pure functions over the document each host's agent wrote (playbooks/files/ir_agent.py's
ping phase); the sweep's event reader and `collect` call them, and the history store
reads the samples back (`samples_of`). The samples of a host-wide stall, found across
the round's documents (orchestrator.results.stalls), are left out of their row's
figures, and the row is flagged `host_stall`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from orchestrator.results.flags import HOST_STALL
from orchestrator.results.parse import summarize_probes
from orchestrator.results.raw_rows import PING_FIELDS, RowContext, host_doc, one_line, row_base


def peers_by_host(tests: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """{source: [destinations]} of the directed tests, in the order given."""
    out: dict[str, list[str]] = {}
    for src, dst in tests:
        out.setdefault(src, []).append(dst)
    return out


def host_rows(
    number: int,
    src: str,
    dsts: Sequence[str],
    text: str | None,
    ctx: RowContext,
    stalled: Mapping[tuple[str, str], AbstractSet[int]] | None = None,
) -> list[dict[str, Any]]:
    """The rows of one source host's tests, from its raw document (None: no file).
    `stalled`: (src, dst) -> the indices of its samples in a host-wide stall
    (stalls.find_stalls), left out of the row's figures and flagged."""
    doc, why = host_doc(text)
    stalled = stalled or {}
    rows = []
    for dst in dsts:
        base = row_base(src, dst, ctx, number)
        if doc is None:
            rows.append({**base, "status": "failed", "error": one_line(f"host {src} {why}")})
            continue
        peer = (doc.get("peers") or {}).get(dst)
        if doc.get("error"):
            error = one_line(f"host {src}: {doc['error']}")
            rows.append({**base, "status": "failed", "error": error})
            continue
        if not isinstance(peer, dict):
            rows.append({**base, "status": "failed", "error": f"host {src} did not probe {dst}"})
            continue
        probe = str(doc.get("probe", "icmp"))
        samples = list(peer.get("rtt_ms", []))
        out = stalled.get((src, dst), frozenset())
        kept = [x for i, x in enumerate(samples) if i not in out] if out else samples
        summary = summarize_probes(int(peer.get("sent", 0)), kept, probe, len(samples) - len(kept))
        rows.append(
            {
                **base,
                "started_utc": doc.get("started_utc", ""),
                **{k: summary.get(k) for k in PING_FIELDS},
                "status": "ok" if summary["ok"] else "failed",
                "error": one_line(summary["error"]),
                **({"flags": HOST_STALL} if out else {}),
            }
        )
    return rows


def round_stalls(texts: Mapping[str, str | None]) -> dict[tuple[str, str], set[int]]:
    """The host-wide stalls (stalls.find_stalls) of one ping phase, from every host's raw
    document (region key -> its text; None: no file)."""
    # here, not at the top: stalls needs numpy, which the planner (peers_by_host) and
    # every command's start-up would otherwise load too
    from orchestrator.results.stalls import find_stalls

    docs = {}
    for name, text in texts.items():
        doc, _why = host_doc(text)
        if doc is not None and not doc.get("error"):
            docs[name] = doc
    return find_stalls(docs)


def phase_rows(
    number: int,
    tests: Sequence[tuple[str, str]],
    texts: Mapping[str, str | None],
    ctx: RowContext,
    done: Mapping[str, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """One row per directed test, in the order of `tests`, from its source host's samples
    of its destination; `texts` maps region key -> the host's raw document (None: no
    file), for every host of the phase. `done`: the rows of the hosts whose documents
    were read already (region key -> host_rows), as the tracker makes them while the
    others are still collected: a host with samples in a host-wide stall, which only
    the whole round shows, has its rows made again."""
    done = done or {}
    stalled = round_stalls(texts)
    again = {src for src, _dst in stalled}
    by_test = {}
    for src, dsts in peers_by_host(tests).items():
        if src in done and src not in again:
            rows = done[src]
        else:
            rows = host_rows(number, src, dsts, texts.get(src), ctx, stalled)
        by_test.update({(src, dst): row for dst, row in zip(dsts, rows, strict=True)})
    return [by_test[(src, dst)] for src, dst in tests]


def samples_of(text: str | None) -> dict[str, list[float]]:
    """{peer: RTT samples in ms} of one host's ping-phase document (for history)."""
    try:
        doc = json.loads(text or "")
    except ValueError:
        return {}
    peers = doc.get("peers", {}) if isinstance(doc, dict) else {}
    return {name: list(p.get("rtt_ms", [])) for name, p in peers.items() if isinstance(p, dict)}
