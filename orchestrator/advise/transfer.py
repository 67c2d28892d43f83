"""`interregion advise`'s use case: one request in, the advice and its JSON document out.

AdviseRequest           the two regions, the size and the optional file count and
                        stream count as given (text: checked here, each in one line),
                        whether only measurements may answer, the GCP tier, and
                        where the results and the catalog are
advise_transfer(req)    -> TransferAdvice: the evidence found (history store, else
                        sweep folders, else the network model), the advice, its range
                        and the document `advise --json` prints (docs/advise.md)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.advise import sources, spread
from orchestrator.advise import tcp_model as model
from orchestrator.core import CATALOG, RESULTS, UserError
from orchestrator.model import Catalog, Region, load_catalog
from orchestrator.results import parse_option


@dataclass(frozen=True)
class AdviseRequest:
    src: str
    dst: str
    size: str  # "100GB", "1.5TiB" (tcp_model.parse_size_bytes)
    files: str | None = None
    streams: str | None = None
    measured_only: bool = False
    tier: str = "premium"
    results: Path = RESULTS
    catalog: Path = CATALOG


@dataclass(frozen=True)
class TransferAdvice:
    """The advice for one transfer: where its figures came from (`evidence`), each
    option's time (`advice`), how far they can be off (`range`) and the document."""

    evidence: sources.Evidence
    advice: model.Advice
    range: spread.AdviceRange
    doc: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The document `advise --json` prints (docs/advise.md)."""
        return self.doc


def _region(catalog: Catalog, key: str, flag: str) -> Region:
    try:
        return catalog.get(key.strip())
    except UserError as e:
        raise UserError(f"{flag}: {e}") from None


def advise_transfer(request: AdviseRequest) -> TransferAdvice:
    """How long moving `request.size` from `src` to `dst` takes with default TCP, tuned
    buffers and parallel streams, and what a new connection per file costs."""
    try:
        network_tier = parse_option(request.tier)
    except ValueError as e:
        raise UserError(f"--tier: {e}") from None
    size_bytes = model.parse_size_bytes(request.size)
    n_streams = (
        model.parse_count("--streams", request.streams, "stream")
        if request.streams
        else model.DEFAULT_STREAMS
    )
    n_files = (
        model.parse_count("--files", request.files, "file") if request.files is not None else None
    )
    regions = load_catalog(request.catalog)
    a = _region(regions, request.src, "--from")
    b = _region(regions, request.dst, "--to")
    if a.key == b.key:
        raise UserError(f"--from and --to are both {a.key}: give two different regions")
    evidence = sources.find_evidence(
        request.results, a.key, b.key, measured_only=request.measured_only, tier=network_tier
    )
    facts = sources.path_facts(evidence, a, b, regions, network_tier)
    advice = model.advise(facts, size_bytes, n_streams, n_files)
    ranged = spread.advice_range(
        facts,
        sources.spread_of(evidence, facts, a, b, network_tier),
        size_bytes,
        n_streams,
        n_files,
        advice,
    )
    cost = sources.egress_cost(size_bytes, a, b)
    vm = sources.vm_cost(advice, a, b, regions)
    doc = sources.advice_doc(advice, evidence, a.key, b.key, cost, vm, ranged, network_tier)
    return TransferAdvice(evidence, advice, ranged, doc)
