"""Emulated throughput labelled where it is shown, and the tests the emulator perturbed on
purpose (sweep.json emulation.injected) marked on the charts and left out of the summary
and its fits unless asked for (--include-injected)."""

from __future__ import annotations

import csv
import json
import math

from click.testing import CliRunner
from report_support import CATALOG, _sweep, write_catalog

from orchestrator.cli import main
from orchestrator.netmodel.model import DEFAULT_MODEL, rate_scale_tag
from orchestrator.report import analyze, charts
from orchestrator.report.build import (
    fit_data,
    load_inputs,
    notes,
    report_figures,
    report_json,
    summaries_of,
)
from testkit.synthetic import sweep_record

A, B = "aws:us-east-1", "aws:ap-southeast-2"  # the aws-aws pair a loss episode slowed


def injected_sweep(tmp_path, injected=None):
    """A synthetic emulated sweep whose A/B throughput is a tenth of what its path
    carries, recorded as a loss episode (as sweep.launch.create records one)."""
    folder = _sweep(tmp_path, "20261128T1900Z-1a1a", n=300)
    path = folder / "measurements.csv"
    rows = list(csv.DictReader(path.open()))
    for r in rows:
        if {f"{r['src_cloud']}:{r['src_region']}", f"{r['dst_cloud']}:{r['dst_region']}"} == {A, B}:
            r["throughput_bps"] = str(float(r["throughput_bps"]) / 10.0)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    episode = {"target": f"{B}/{A}", "loss_pct": 2.5, "cause": "loss episode"}
    effects = [episode] if injected is None else injected
    emulation = {"seed": 7, "perturbations": [], "injected": effects}
    record = sweep_record(folder.name, emulated=True, emulation=emulation)
    (folder / "sweep.json").write_text(json.dumps(record))
    return folder


def pair_rows(loaded):
    d = loaded.data
    return {i for i in range(len(d)) if {d.regions[d.src[i]], d.regions[d.dst[i]]} == {A, B}}


def test_injected_tests_are_found_and_left_out_of_the_summary_and_its_fits(tmp_path):
    folder = injected_sweep(tmp_path)
    loaded = load_inputs(sweep_dirs_=[folder], catalog=CATALOG)
    odd = pair_rows(loaded)
    assert len(odd) == 20 and set(loaded.injected) == odd  # both directions, every sweep row
    what, moves = loaded.injected[min(odd)]
    assert moves == ("throughput",)  # a loss moves the throughput, not the RTT
    assert what == f"injected (loss episode {B}/{A}: 2.5 % loss each way)"
    # the summary is that of the same rows without the injected throughputs
    summaries, _outliers = summaries_of(loaded, {})
    by = {s.cloud_pair: s for s in summaries}
    thr = analyze.column(loaded.data.throughput_bps).copy()
    kept = [i for i in range(len(thr)) if i not in odd and loaded.data.cloud_pair(i) == "aws-aws"]
    km = analyze.column(loaded.data.distance_km)
    expected = analyze.linear_fit(km[kept], [math.log10(x) for x in thr[kept]])
    assert by["aws-aws"].log_throughput_fit.slope == expected.slope
    assert by["aws-aws"].log_throughput_fit.n == len(kept)
    # RTT: untouched by a loss episode, every row in its fit
    assert math.isfinite(fit_data(loaded).rtt_ms[min(odd)])
    # with them, the slow pair pulls the fit down, as it did unmarked before
    loaded_all = load_inputs(sweep_dirs_=[folder], catalog=CATALOG, include_injected=True)
    with_them = {s.cloud_pair: s for s in summaries_of(loaded_all, {})[0]}
    assert with_them["aws-aws"].log_throughput_fit.n == len(kept) + len(odd)
    assert with_them["aws-aws"].log_throughput_fit.slope != expected.slope
    line = next(x for x in notes(loaded) if "perturbed on purpose" in x)
    assert "20 tests" in line and "left out of the summary" in line and "--include-injected" in line
    assert "kept in the summary" in next(x for x in notes(loaded_all) if "on purpose" in x)
    doc = report_json(loaded, summaries)
    assert doc["injected"] == {"tests": 20, "left_out_of_summary": True,
                               "by_measure": {"rtt": 0, "throughput": 20}}  # fmt: skip
    assert doc["emulated_rate_scale"] == DEFAULT_MODEL.scale


def test_injected_points_are_drawn_apart_and_throughput_hovers_say_the_rate_scale(tmp_path):
    folder = injected_sweep(tmp_path)
    loaded = load_inputs(sweep_dirs_=[folder], catalog=CATALOG)
    summaries, _outliers = summaries_of(loaded, {})
    figures = report_figures(loaded, summaries)
    traces = figures["distance-all"]["data"]
    marked = [t for t in traces if (t.get("meta") or {}).get("filter") == "injected"]
    # the loss moved throughput alone: the pair's RTT points stay with the others
    assert len(marked) == 1 and marked[0]["yaxis"] == "y2" and len(marked[0]["x"]) == 20
    assert marked[0]["marker"]["symbol"] == "x"
    assert all("injected (loss episode" in t for t in marked[0]["text"])
    points = [t for t in traces if (t.get("meta") or {}).get("filter") == "points"]
    assert sum(len(t["x"]) for t in points if t["yaxis"] == "y2") == len(loaded.data) - 20
    tag = rate_scale_tag()
    assert tag == "emulated: rate scale 0.0517, x19.4 = real"
    assert all(tag in t["hovertemplate"] for t in points + marked if t["yaxis"] == "y2")
    assert not any(tag in t["hovertemplate"] for t in points if t["yaxis"] == "y")
    assert tag in figures["heatmap-throughput"]["data"][0]["hovertemplate"]
    assert "rate scale 0.0517" in charts.EMULATED_NOTE
    # a delay perturbation on a host moves both measures of every path to and from it
    host = [{"target": A, "delay_ms": 10.0, "cause": "perturbation"}]
    loaded = load_inputs(sweep_dirs_=[injected_sweep(tmp_path, host)], catalog=CATALOG)
    d = loaded.data
    touching = {i for i in range(len(d)) if A in (d.regions[d.src[i]], d.regions[d.dst[i]])}
    assert set(loaded.injected) == touching
    assert {m for _w, m in loaded.injected.values()} == {("rtt", "throughput")}
    assert not any(math.isfinite(fit_data(loaded).rtt_ms[i]) for i in touching)


def test_a_record_from_before_injected_marks_its_perturbations(tmp_path):
    folder = injected_sweep(tmp_path)
    record = json.loads((folder / "sweep.json").read_text())
    record["emulation"] = {"seed": 7, "perturbations": [{"target": f"{A}>{B}", "rate_mbit": 5}]}
    (folder / "sweep.json").write_text(json.dumps(record))
    loaded = load_inputs(sweep_dirs_=[folder], catalog=CATALOG)
    assert set(loaded.injected) == pair_rows(loaded)
    assert next(iter(loaded.injected.values()))[0] == (
        f"injected (perturbation {A}>{B}: capped at 5 Mbit/s)"
    )


def test_the_report_command_labels_emulated_throughput_and_keeps_injected_when_asked(tmp_path):
    folder = injected_sweep(tmp_path)
    catalog = write_catalog(tmp_path / "regions.yaml")
    args = ["report", "--sweep", folder.name, "--results", str(tmp_path), "--no-png",
            "--catalog", str(catalog)]  # fmt: skip
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "emulated: rate scale 0.0517, x19.4 = real" in text
    assert "20 tests ran on paths perturbed on purpose" in text
    doc = json.loads((folder / "report" / "report.json").read_text())
    assert doc["injected"]["left_out_of_summary"] is True
    out = CliRunner().invoke(main, [*args, "--include-injected"])
    assert out.exit_code == 0, out.output
    doc = json.loads((folder / "report" / "report.json").read_text())
    assert doc["injected"]["left_out_of_summary"] is False
    assert next(s for s in doc["summary"] if s["cloud_pair"] == "aws-aws")["n"] > 0
