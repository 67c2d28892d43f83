"""`interregion` with the measure stage's rounds given their sentinels.

orchestrator.sentinels asks the measure stage to pass its planned throughput rounds
through `add_sentinel_rounds`; until measure.plan_rounds does so itself, the end-to-end
test of host allowance runs the real CLI through this wrapper, which does exactly that.
"""

from __future__ import annotations

import sys

from orchestrator import measure, sentinels

_plan_rounds = measure.plan_rounds


def plan_rounds(tests, first, sweep, pings=True):  # type: ignore[no-untyped-def]
    planned = _plan_rounds(tests, first, sweep, pings)
    cap = 1 if sweep.record.get("sequential") else sweep.record.get("max_concurrent")
    return sentinels.add_sentinel_rounds(planned, max_concurrent=cap)


if __name__ == "__main__":
    measure.plan_rounds = plan_rounds
    from orchestrator.cli import main

    sys.exit(main())
