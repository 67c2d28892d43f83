"""`history convert`'s and `history import`'s use cases without click, and `demo`'s plan and
use case."""

from __future__ import annotations

import csv

import pytest

from orchestrator.core.errors import UserError
from orchestrator.demo import DEMO_REGIONS, DemoRequest, demo_plan, make_demo
from orchestrator.exchange import importer
from orchestrator.exchange.public_data import BUILTIN, convert_file
from orchestrator.history import store as h


def test_convert_file_writes_the_builtin_file_and_counts_its_flags(tmp_path):
    done = convert_file("doit", BUILTIN, tmp_path / "d.csv")
    with (tmp_path / "d.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))  # the schema's columns and network_tier
    assert done.out == tmp_path / "d.csv" and done.rows == len(rows) > 1000
    flagged = sum(1 for r in rows if "asymmetric" in r["flags"])
    assert done.flagged["asymmetric"] == flagged and done.flagged["below_fibre_floor"] == 0


def test_import_source_says_which_import_it_replaced(tmp_path):
    results = tmp_path / "results"
    convert_file("doit", BUILTIN, tmp_path / "d.csv")
    first = importer.import_source(results, tmp_path / "d.csv", "doit", "2022-02")
    assert (first.replaced, first.store) == (None, h.store_path(results)) and first.rows > 1000
    with pytest.raises(UserError, match="pass --replace"):
        importer.import_source(results, tmp_path / "d.csv", "doit", "2022-02")
    again = importer.import_source(results, tmp_path / "d.csv", "doit", "2022-02", replace=True)
    assert again.replaced == "d.csv" and again.rows == first.rows


def test_demo_plan_checks_its_options_before_any_root_work():
    with pytest.raises(UserError, match="needs 8 clean sweeps before the change"):
        demo_plan(sweeps=11, change_from=5, min_runs=8)
    with pytest.raises(UserError, match="must name a pair"):
        demo_plan(sweeps=11, change_from=9, min_runs=8, perturb="aws:us-east-1,delay_ms=10")
    with pytest.raises(UserError, match="at least 3 regions"):
        demo_plan(sweeps=5, change_from=3, min_runs=2, regions="aws:us-east-1,gcp:europe-west1")


def test_demo_plan_defaults_are_the_documented_demo(monkeypatch):
    from orchestrator import emulator

    monkeypatch.setattr(emulator, "require_root", lambda: None)  # the rest of it is pure
    plan = demo_plan(sweeps=11, change_from=9, min_runs=8)
    assert plan.regions == DEMO_REGIONS and plan.detection.min_runs == 8
    assert plan.perturbation.text == "aws:us-east-1/gcp:europe-west1,delay_ms=10"


def test_make_demo_checks_its_options_before_it_writes_anything(tmp_path):
    out = tmp_path / "demo"
    with pytest.raises(UserError, match="needs 8 clean sweeps before the change"):
        make_demo(DemoRequest(out, sweeps=11, change_from=5), log=print)
    with pytest.raises(UserError, match="must name a pair"):
        make_demo(DemoRequest(out, perturb="aws:us-east-1,delay_ms=10"), log=print)
    assert not out.exists()


def test_make_demo_runs_the_checked_plan_into_out(tmp_path, monkeypatch):
    from orchestrator import demo, emulator

    monkeypatch.setattr(emulator, "require_root", lambda: None)
    ran, warned = [], []
    missed = ("the injected change aws:us-east-1 -> gcp:europe-west1 was not found",)

    def run_demo(plan, out, **how):
        ran.append((plan, out, how))
        return demo.DemoOutcome(("s1",), {}, missed, 1.0, None, plan)

    monkeypatch.setattr(demo, "run_demo", run_demo)
    outcome = make_demo(DemoRequest(tmp_path, sweeps=5, change_from=3, min_runs=2, replace=True,
                                    build_site=False), log=print, warn=warned.append)  # fmt: skip
    ((plan, out, how),) = ran
    assert (plan.sweeps, plan.change_from, plan.detection.min_runs) == (5, 3, 2)
    assert out == tmp_path and how == {"replace": True, "build_site": False, "log": print}
    assert outcome.problems == missed and warned == [f"demo check failed: {missed[0]}"]
