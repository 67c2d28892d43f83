"""Rows of the ping phase: each source host's samples of its peers -> measurements rows.

Pure functions over the document each host's agent wrote (playbooks/files/ir_agent.py's
ping phase); the sweep's event reader and `collect` call them, and the history store
reads the samples back (`samples_of`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from orchestrator.results.collect import PING_FIELDS, RowContext, host_doc, one_line, row_base
from orchestrator.results.parse import summarize_probes


def peers_by_host(tests: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """{source: [destinations]} of the directed tests, in the order given."""
    out: dict[str, list[str]] = {}
    for src, dst in tests:
        out.setdefault(src, []).append(dst)
    return out


def host_rows(
    number: int, src: str, dsts: Sequence[str], text: str | None, ctx: RowContext
) -> list[dict[str, Any]]:
    """The rows of one source host's tests, from its raw document (None: no file)."""
    doc, why = host_doc(text)
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
        summary = summarize_probes(int(peer.get("sent", 0)), list(peer.get("rtt_ms", [])), probe)
        rows.append(
            {
                **base,
                "started_utc": doc.get("started_utc", ""),
                **{k: summary.get(k) for k in PING_FIELDS},
                "status": "ok" if summary["ok"] else "failed",
                "error": one_line(summary["error"]),
            }
        )
    return rows


def phase_rows(
    number: int,
    tests: Sequence[tuple[str, str]],
    texts: Mapping[str, str | None],
    ctx: RowContext,
    done: Mapping[str, list[dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """One row per directed test, in the order of `tests`, from its source host's samples
    of its destination; `texts` maps region key -> the host's raw document (None: no
    file). `done`: the rows of the hosts whose documents were read already (region key
    -> host_rows), as the tracker makes them while the others are still collected."""
    done = done or {}
    by_test = {}
    for src, dsts in peers_by_host(tests).items():
        rows = done[src] if src in done else host_rows(number, src, dsts, texts.get(src), ctx)
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
