"""End to end: the budget's hard stop on the emulated cloud.

An emulated sweep costs nothing, so `--price-emulated` counts what it moves at the clouds'
list prices: with a budget that one round already exceeds, the sweep stops after that
round, tears down, records why, and keeps the round it measured. Real Terraform,
namespaces, Ansible over SSH and iperf3.
"""

from __future__ import annotations

import pytest
from e2e_support import SHORT, leftovers, only_sweep, record, rows, run_cli

pytestmark = [pytest.mark.root, pytest.mark.slow]

REGIONS = ("aws:us-east-1", "gcp:us-east4", "aws:eu-west-1", "gcp:europe-west1")


def test_a_sweep_stops_after_the_round_that_reaches_its_budget(tmp_path):
    out = run_cli(
        ["sweep", "--regions", ",".join(REGIONS), *SHORT, "--tests", "throughput",
         "--price-emulated", "--budget-usd", "0.000001", "--yes", "--no-report",
         "--results", str(tmp_path)]
    )  # fmt: skip
    sweep_dir = only_sweep(tmp_path)
    try:
        assert out.returncode == 1, out.stderr[-3000:]  # a failed run, not bad input
        last = out.stderr.strip().splitlines()[-1]
        assert last.startswith("error:") and "budget" in last and "round 1" in last, last
        meta = record(sweep_dir)
        assert meta["price_emulated"] is True and meta["budget_usd"] == 0.000001
        assert meta["stopped"].startswith("stopped after round 1:")
        # one round measured of the plan's three (4 regions: 12 tests, 2 slots a round)
        main = [r for r in meta["rounds"] if r["kind"] == "main"]
        assert len(main) == 1 and len(meta["plan"]["rounds"]) > 1
        ok = [k for k, r in rows(sweep_dir).items() if r["status"] == "ok"]
        assert len(ok) == main[0]["tests_ok"] >= 1  # the measured round is kept
        assert not any(r["kind"] == "retry" for r in meta["rounds"])  # nothing after it
    finally:
        # at once, no grace: the stopped playbook's every process (a worker forked as the
        # stop landed too: drivers.processes) is gone before the command returns
        left = leftovers(sweep_dir)
        if any(left.values()):
            run_cli(["teardown", "--sweep", sweep_dir.name, "--results", str(tmp_path)])
    assert not any(left.values()), left


def test_price_emulated_is_for_a_new_local_sweep(tmp_path):
    out = run_cli(
        ["sweep", "--backend", "aws", "--regions", "aws:us-east-1,aws:eu-west-1",
         "--price-emulated", "--yes", "--plan-only", "--results", str(tmp_path)]
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: --price-emulated applies to a new sweep on --backend local (a cloud sweep "
        "is priced anyway)"
    ]
    assert not list(tmp_path.iterdir())
