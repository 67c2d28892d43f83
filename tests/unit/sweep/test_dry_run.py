"""launch.dry_run: `interregion plan`'s use case, called without the CLI: the plan from
the catalog and price files named, a round overhead bounded, shortfalls warned of or
refused with strict, the selection's notes said once the plan is made."""

from __future__ import annotations

import math

import pytest

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.plan.options import RunOptions
from orchestrator.plan.selection import SelectionSpec
from orchestrator.plan.sweep_plan import TestParams
from orchestrator.sweep import launch
from orchestrator.sweep.launch import SweepRequest

CLOSE = ("aws:us-east-1", "aws:us-east-2", "gcp:us-east4")


def _dry_run(request: SweepRequest, **kw):
    said: dict[str, list[str]] = {"note": [], "warn": []}
    plan = launch.dry_run(
        request,
        catalog_path=paths.CATALOG,
        pricing_path=paths.PRICING,
        note=said["note"].append,
        warn=said["warn"].append,
        **kw,
    )
    return plan, said


def test_a_burstable_plan_is_warned_of_and_refused_with_strict():
    request = SweepRequest(
        selection=SelectionSpec(regions=CLOSE),
        params=TestParams(duration_s=3),
        run=RunOptions(backend="local", emulated_type="emulated-t3.small-5s"),
    )
    plan, said = _dry_run(request)
    assert {s.host for s in plan.shortfalls} == set(CLOSE)
    (warning,) = said["warn"]
    assert "3 hosts send more on average than their machine type sustains" in warning
    with pytest.raises(UserError, match=r"\(--strict\)$"):
        _dry_run(request, strict=True)


def test_the_round_overhead_replaces_the_model_and_is_bounded():
    request = SweepRequest(selection=SelectionSpec(regions=CLOSE), params=TestParams(pings=5))
    modelled, said = _dry_run(request)
    assert said == {"note": [], "warn": []}
    slow, _ = _dry_run(request, round_overhead=600.0)
    assert slow.estimate.wall_s > modelled.estimate.wall_s + 500  # at least one round
    for bad in (-1.0, 86_401.0, math.nan):
        with pytest.raises(UserError, match="give 0 to 86,400 seconds"):
            _dry_run(request, round_overhead=bad)
