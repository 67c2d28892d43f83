"""`interregion changes`'s use case (changes_report), the change documents it and the
site's changes page show (change_docs), and `history ingest --sweep`'s
(ingest_with_changes: the sweep stored, and how its configuration differs from each
pair's previous test)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.core import UserError
from orchestrator.history import changes as ch
from orchestrator.history import judgments, notify
from orchestrator.history.fingerprint import differences
from orchestrator.history.metrics import iso_utc
from orchestrator.history.views import CHANGE_RUNS

if TYPE_CHECKING:
    import duckdb

UNITS = {"rtt": "ms", "throughput": "bit/s"}  # the metrics change detection follows


@dataclass(frozen=True)
class ChangeDocs:
    """A detection's documents, each as `changes --json` gives it, in detection order."""

    episodes: list[dict[str, Any]]  # path events
    hosts: list[dict[str, Any]]  # host changes
    regions: list[dict[str, Any]]  # a region's paths toward one continent
    suspected: list[dict[str, Any]]
    configs: list[dict[str, Any]]  # configuration changes
    waiting: list[dict[str, Any]]  # pairs not judged yet, counted
    judged_pairs: int
    open: int  # events (path, host and region) still open


def change_docs(con: duckdb.DuckDBPyConnection, found: ch.Detection) -> ChangeDocs:
    return ChangeDocs(
        episodes=[ch.episode_doc(e, UNITS) for e in found.episodes],
        hosts=[ch.group_doc(x, UNITS) for x in found.hosts],
        regions=[ch.group_doc(x, UNITS) for x in found.groups],
        suspected=[ch.suspect_doc(x, UNITS) for x in found.suspects],
        configs=config_change_docs(con, found.config_changes),
        waiting=[ch.unjudged_doc(u) for u in found.waiting],
        judged_pairs=len(found.baselines),
        open=found.open,
    )


def config_change_docs(
    con: duckdb.DuckDBPyConnection, found: Sequence[Any]
) -> list[dict[str, Any]]:
    """changes.ConfigChange items grouped by source, backend, run and the fields that
    differ: [{source, backend, run, utc, fields: ["name: old -> new"], pairs: ["S/D"]}]."""
    from orchestrator.history import store as h

    fields = h.stored_fingerprints(
        con, sorted({c.old_fingerprint for c in found} | {c.new_fingerprint for c in found})
    )
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    diffs: dict[tuple[str, str], tuple[str, ...]] = {}  # one per fingerprint change
    for c in found:
        old, new = change = (c.old_fingerprint, c.new_fingerprint)
        if change not in diffs:
            diffs[change] = tuple(differences(fields.get(old, {}), fields.get(new, {})))
        key = (c.key.source, c.key.backend, c.run_id, diffs[change])
        group = groups.setdefault(key, {"source": c.key.source, "backend": c.key.backend,
                                        "run": c.run_id, "utc": iso_utc(c.t),
                                        "fields": list(diffs[change]), "pairs": {}})  # fmt: skip
        group["pairs"][f"{c.key.src}/{c.key.dst}"] = None  # each once (a new image: thousands)
    return [{**group, "pairs": list(group["pairs"])} for group in groups.values()]


@dataclass(frozen=True)
class ChangesRequest:
    results: Path
    since: datetime | None = None  # changes that started or closed from then
    sources: Sequence[str] = ()
    last_runs: int = CHANGE_RUNS
    baseline_runs: int | None = None  # None: the store's rule
    min_runs: int | None = None
    calibrate: bool | None = None
    url: str | None = None  # --notify
    notify_file: Path | None = None  # the URL's first line


@dataclass(frozen=True)
class ChangesReport:
    docs: ChangeDocs
    rule: ch.Params  # the rule in force
    calibration: ch.Calibration | None  # every source's together (None: nothing judged)

    def to_json(self) -> dict[str, Any]:
        d, p, c = self.docs, self.rule, self.calibration
        doc = {"open": d.open, "hosts": [*d.hosts, *d.regions], "episodes": d.episodes,
               "suspected": d.suspected, "configuration_changes": d.configs,
               "judged_pairs": d.judged_pairs, "not_judged": d.waiting,
               "rule": {"baseline_runs": p.window_runs, "min_runs": p.min_runs,
                        "calibrate": p.calibrate, "k1": p.k1, "k2": p.k2}}  # fmt: skip
        if c is not None:
            doc["calibration"] = {"judged_runs": c.judged, "beyond_4_5_scales": c.beyond,
                                  "rate": c.rate, "normal_rate": c.expected,
                                  "tail_inflation": round(c.inflation, 3), "k1": c.k1,
                                  "k2": c.k2}  # fmt: skip
        return doc


def changes_report(request: ChangesRequest, warn: Callable[[str], None]) -> ChangesReport:
    from orchestrator.history import store as h

    r = request
    if r.min_runs is not None and r.baseline_runs is not None and r.min_runs > r.baseline_runs:
        raise UserError(f"--min-runs {r.min_runs} is above --baseline-runs {r.baseline_runs}")
    url = r.url
    if r.notify_file is not None:
        if url:
            raise UserError(
                "give the URL once: --notify (or INTERREGION_NOTIFY_URL) or --notify-file"
            )
        url = notify.url_from_file(r.notify_file)
    if url:
        notify.check_url(url)
    with h.opened(r.results, read_only=True) as con:
        kept = judgments.rule(con)
    rule = replace(
        kept,
        window_runs=kept.window_runs if r.baseline_runs is None else r.baseline_runs,
        min_runs=kept.min_runs if r.min_runs is None else r.min_runs,
        calibrate=kept.calibrate if r.calibrate is None else r.calibrate,
    )
    if rule.min_runs > rule.window_runs:
        raise UserError(f"--min-runs {rule.min_runs} is above --baseline-runs {rule.window_runs}")
    with h.opened(r.results, read_only=not url and rule == kept) as con:
        if rule != kept:
            warn(
                f"the rule changed ({_rule_text(rule)}; it was {_rule_text(kept)}): every "
                "run of the store is judged again with it"
            )
            with h.transaction(con):
                judgments.set_rule(con, rule)
                judgments.rejudge(con)
        found = judgments.detection(con, r.sources, r.last_runs, r.since)
        docs = change_docs(con, found)
        if url:
            _notify(con, url, [*docs.hosts, *docs.regions, *docs.episodes], warn)
    return ChangesReport(docs, rule, ch.combined_calibration(found))


def _rule_text(p: ch.Params) -> str:
    calibrated = "calibrated k" if p.calibrate else f"k1 {p.k1:g}, k2 {p.k2:g}"
    return f"--baseline-runs {p.window_runs}, --min-runs {p.min_runs}, {calibrated}"


def _notify(
    con: duckdb.DuckDBPyConnection, url: str, docs: list[dict[str, Any]],
    warn: Callable[[str], None],
) -> None:  # fmt: skip
    """Each new or closed event POSTed once; one that fails is sent again next time."""
    from orchestrator.history import store as h

    sent = h.notified(con)
    for doc in docs:
        event = notify.event_of(doc, sent.get(doc["id"]))
        if event is None:
            continue
        problem = notify.post_json(url, {"type": "interregion.change", "event": event, **doc})
        if problem:
            shown = notify.redacted(url)
            warn(f"--notify {shown}: {problem}: episode {doc['id']} will be sent next time")
            continue
        h.mark_notified(con, doc["id"], doc["status"])


@dataclass(frozen=True)
class Ingested:
    sweep_id: str
    rows: int
    store: Path
    config_changes: list[tuple[list[str], int]]  # (the fields that differ, pairs)


def ingest_with_changes(results: Path, sweep_id: str, replace: bool = False) -> Ingested:
    from orchestrator.history import store as h

    rows = h.ingest_sweep(results, sweep_id, replace=replace)
    with h.opened(results, read_only=True) as con:
        return Ingested(sweep_id, rows, h.store_path(results), h.fingerprint_changes(con, sweep_id))
