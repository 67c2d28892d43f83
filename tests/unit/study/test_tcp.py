"""study.tcp: `study tcp`'s use case, called without the CLI: the request checked in one
line each, the study's own estimate (not a sweep's) planned, nothing written before
the run."""

from __future__ import annotations

import pytest

from orchestrator.core.errors import UserError
from orchestrator.plan.options import RunOptions
from orchestrator.plan.selection import SelectionSpec
from orchestrator.study.tcp import TcpStudyRequest, plan_tcp_study, run_tcp_study
from orchestrator.sweep.launch import SweepRequest

SWEEP = SweepRequest(
    selection=SelectionSpec(regions=("aws:us-east-1", "aws:eu-west-1")),
    run=RunOptions(backend="local"),
)


def test_the_plan_carries_the_studys_estimate_not_a_sweeps():
    notes: list[str] = []
    study = plan_tcp_study(TcpStudyRequest(SWEEP, variants="default,p4", repeats=3), notes.append)
    assert [v.name for v in study.variants] == ["default", "p4"] and study.repeats == 3
    assert study.estimate.tests == 1 * 2 * 3  # one pair (forward only), two variants, 3 repeats
    assert study.plan.estimate == study.estimate.estimate


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"variants": "default,warp"}, "warp"),
        ({"repeats": 1}, "repeats"),
        ({"budget_usd": 0.0}, "--budget-usd 0: must be above 0"),
        ({"budget_usd": float("nan")}, "must be above 0"),
    ],
)
def test_bad_requests_are_one_line(change, said):
    with pytest.raises(UserError) as e:
        plan_tcp_study(TcpStudyRequest(SWEEP, **change), print)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_a_results_path_that_is_a_file_is_refused_before_anything_is_made(tmp_path):
    study = plan_tcp_study(TcpStudyRequest(SWEEP, variants="default", repeats=3), print)
    (tmp_path / "results").write_text("not a folder")
    with pytest.raises(UserError):
        run_tcp_study(study, tmp_path / "results", build_report=False, log=print)
    assert (tmp_path / "results").read_text() == "not a folder"


def test_tcp_study_announces_the_plan_and_a_refusal_writes_nothing(tmp_path):
    from orchestrator.study.tcp import tcp_study

    shown = []

    def refuse(study):
        shown.append(study)
        raise UserError("not confirmed")

    request = TcpStudyRequest(SWEEP, variants="default,p4", repeats=3)
    with pytest.raises(UserError, match="not confirmed"):
        tcp_study(request, tmp_path, build_report=False, announce=refuse, note=print, log=print)
    (study,) = shown  # the study's own plan, what the budget question reads
    assert study.request is request and study.estimate.tests == 6
    assert list(tmp_path.iterdir()) == []  # no study folder, no lock


def test_tcp_study_checks_the_request_before_it_announces(tmp_path):
    from orchestrator.study.tcp import tcp_study

    shown = []
    with pytest.raises(UserError, match="warp"):
        tcp_study(TcpStudyRequest(SWEEP, variants="warp"), tmp_path, build_report=False,
                  announce=shown.append, note=print, log=print)  # fmt: skip
    assert shown == [] and list(tmp_path.iterdir()) == []
