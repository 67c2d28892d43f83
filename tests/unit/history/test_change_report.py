"""`interregion changes`' use case without click: the documents, the rule and its checks,
the JSON, and the lines the text renderer makes of it; `history show`'s and `matrix`'s
use cases, and `ingest --sweep`'s."""

from __future__ import annotations

from datetime import timedelta

import pytest
from history_support import STEP_A as A
from history_support import STEP_B as B
from history_support import STEP_T0 as T0
from history_support import make_sweep, sweep_id_at
from history_support import step_sweeps as _sweeps

from orchestrator.core.errors import UserError
from orchestrator.history import store as h
from orchestrator.history import views as v
from orchestrator.history.change_report import (
    ChangesRequest,
    change_docs,
    changes_report,
    ingest_with_changes,
)
from orchestrator.history.changes import Params
from orchestrator.plan.selection import SelectionSpec
from orchestrator.text import change_lines, matrix_table, pair_series


@pytest.fixture(scope="module")
def store_with_a_change(tmp_path_factory):
    results = tmp_path_factory.mktemp("changes")
    _sweeps(results, [150.0] * 10 + [160.0] * 3)
    return results


def test_an_open_path_event_its_documents_json_and_lines(store_with_a_change):
    warned: list[str] = []
    found = changes_report(ChangesRequest(store_with_a_change), warned.append)
    assert not warned  # the store's rule: nothing judged again
    (e,) = found.docs.episodes
    assert (e["src"], e["dst"], e["status"], e["unit"]) == (A, B, "open", "ms")
    assert found.docs.open == 1 and found.docs.judged_pairs == 4  # 2 directions x 2 metrics
    doc = found.to_json()
    assert doc["open"] == 1 and doc["episodes"] == [e] and doc["hosts"] == []
    assert doc["rule"] == {"baseline_runs": 28, "min_runs": 8, "calibrate": False,
                           "k1": 3.0, "k2": 3.75}  # fmt: skip
    lines = change_lines.render(found)
    assert lines[0].startswith(f"PATH OPEN         rtt        {A} <-> {B} (one direction) from ")
    assert lines[1] == (f"  {A} -> {B}: 150.1 ms -> 160.1 ms (+10.0 ms, +6.7 %); flag 2, confirm 2")
    assert lines[2].endswith("(did not move); flag 2, confirm 2")
    assert lines[-1] == "1 open"
    assert not any(line.startswith("CALIBRATION") for line in lines)


def test_the_site_and_the_cli_read_the_same_documents(store_with_a_change):
    found = changes_report(ChangesRequest(store_with_a_change), lambda line: None)
    with h.opened(store_with_a_change, read_only=True) as con:
        docs = change_docs(con, v.detection(con))
    assert docs == found.docs


def test_a_rule_given_judges_again_and_says_so_and_bad_rules_are_one_line(tmp_path):
    _sweeps(tmp_path, [150.0] * 6 + [160.0] * 3)
    with pytest.raises(UserError, match="--min-runs 9 is above --baseline-runs 5"):
        changes_report(ChangesRequest(tmp_path, baseline_runs=5, min_runs=9), print)
    with pytest.raises(UserError, match="--min-runs 30 is above --baseline-runs 28"):
        changes_report(ChangesRequest(tmp_path, min_runs=30), print)
    assert changes_report(ChangesRequest(tmp_path), print).docs.episodes == []  # 8 runs needed
    warned: list[str] = []
    found = changes_report(ChangesRequest(tmp_path, min_runs=4, baseline_runs=12), warned.append)
    assert found.rule == Params(window_runs=12, min_runs=4)
    (line,) = warned
    assert line.startswith("the rule changed (--baseline-runs 12, --min-runs 4, k1 3, k2 3.75;")
    assert [e["status"] for e in found.docs.episodes] == ["open"]
    with pytest.raises(UserError, match="give the URL once"):
        changes_report(
            ChangesRequest(tmp_path, url="http://127.0.0.1:9/x", notify_file=tmp_path / "u"),
            print,
        )


def test_a_configuration_change_names_its_fields(tmp_path):
    _sweeps(tmp_path, [150.0] * 9, kernels={8: "6.2"})
    found = changes_report(ChangesRequest(tmp_path), print)
    (config,) = found.docs.configs
    assert config["fields"] == [
        "src_kernel: 6.1.0-28-amd64 -> 6.2",
        "dst_kernel: 6.1.0-28-amd64 -> 6.2",
    ]
    assert found.docs.open == 0 and found.to_json()["configuration_changes"] == [config]
    lines = change_lines.render(found)
    assert lines[0].startswith(f"CONFIGURATION run {config['run']} (")
    assert lines[0].endswith("[emulated/local]: " + "; ".join(config["fields"]))
    assert lines[1] == "0 open"  # then the pairs waiting for runs of the new configuration


def test_no_run_judged_yet_says_so(tmp_path):
    _sweeps(tmp_path, [150.0])
    found = changes_report(ChangesRequest(tmp_path), print)
    lines = change_lines.render(found, calibration=True)
    assert lines[0].startswith("CALIBRATION 0 of 0 recent runs beyond 4.5 scales")
    assert lines[1:3] == ["no changes", "0 open"]
    assert lines[-1] == "no pair judged yet: nothing can have changed"
    assert "not judged: 2 pairs have 1 of the 8 runs needed (rtt, emulated)" in lines


def test_ingest_with_changes_names_the_fields_that_changed(tmp_path):
    _sweeps(tmp_path, [150.0] * 2)
    t = T0 + timedelta(hours=12)
    sweep_id = sweep_id_at(t, "0002")
    make_sweep(tmp_path, sweep_id, {(A, B): [150.0] * 20}, started=t, kernel="6.2")
    done = ingest_with_changes(tmp_path, sweep_id)
    assert (done.sweep_id, done.rows, done.store) == (sweep_id, 1, h.store_path(tmp_path))
    assert done.config_changes == [(["src_kernel: 6.1.0-28-amd64 -> 6.2",
                                     "dst_kernel: 6.1.0-28-amd64 -> 6.2"], 1)]  # fmt: skip


def test_pair_series_and_its_lines(store_with_a_change):
    series = v.pair_series(store_with_a_change, f"{A}/{B}")
    assert series.to_json()["src"] == A and len(series.to_json()["sources"][0]["runs"]) == 13
    lines = pair_series.render(series)
    assert lines[:2] == [f"{A} -> {B}: rtt (ms), window all",
                         "  source: EMULATED; 13 tests, 260 samples"]  # fmt: skip
    assert lines[-1].endswith("160.1  (20 samples)")
    both = v.pair_series(store_with_a_change, f"{A}/{B},{B}/{A}")
    assert [d["src"] for d in both.to_json()] == [A, B]
    with pytest.raises(UserError, match="elsewhere: no such folder"):
        v.pair_series(store_with_a_change / "elsewhere", f"{A}/{B}")
    (store_with_a_change / "empty").mkdir()
    with pytest.raises(UserError, match=r"no history store at .*'interregion history ingest --all"):
        v.pair_series(store_with_a_change / "empty", f"{A}/{B}")


def test_matrix_report_filters_pairs_and_renders_one_table_per_source(store_with_a_change):
    found = v.matrix_report(v.MatrixRequest(store_with_a_change, window="all"))
    (mx,) = found.to_json()["matrices"]
    assert {(c["src"], c["dst"]) for c in mx["cells"]} == {(A, B), (B, A)}
    parts = matrix_table.render(found.doc)
    assert parts[0].startswith("rtt p50 (ms), window all start .. ")  # type: ignore[union-attr]
    assert parts[0].endswith("; source: EMULATED")  # type: ignore[union-attr]
    assert matrix_table.csv_text(found.doc).splitlines()[0].startswith("source,emulated,")
    aws = SelectionSpec(cloud_pairs=(("aws", "aws"),))
    only_aws = v.MatrixRequest(store_with_a_change, selection=aws)
    assert v.matrix_report(only_aws).doc["matrices"][0]["cells"] == []
    assert matrix_table.render(v.matrix_report(only_aws).doc)[-1] == "no tests in the window"
