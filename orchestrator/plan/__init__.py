"""Planning a sweep before anything is spent: which regions and pairs, in which rounds (no VM
in two tests at once), with what test parameters, how long and at what cost.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.plan import add_sentinels`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.plan.allowance import (
        ALLOWANCE_COLUMNS,
        STEAL_COLUMNS,
        SentinelCheck,
        host_flags,
        mean_egress_bps,
        sentinel_check,
        shortfall_message,
        shortfalls,
    )
    from orchestrator.plan.option_names import (
        BIG_HOSTS,
        BIG_MINUTES,
        DEFAULT_BUDGET_USD,
        PREPARE_FORKS,
        SELECTION_OPTIONS,
        TEST_PARAMS_OPTIONS,
    )
    from orchestrator.plan.options import (
        RunOptions,
        check_selection,
        params_spec,
        parse_clouds,
        selection_spec,
    )
    from orchestrator.plan.ping_timing import (
        MIN_GAP_S,
        PER_HOST_S,
        PHASE_FORKS,
        REPLY_WAIT_S,
        START_MARGIN_S,
        launch_seconds,
        phase_seconds,
    )
    from orchestrator.plan.pricing import Pricing, load_pricing
    from orchestrator.plan.ramp import INITCWND_SEGMENTS, MSS_BYTES
    from orchestrator.plan.rounds import SENTINEL_SLOTS, Round, Slot, add_sentinels, schedule
    from orchestrator.plan.selection import Pair, SelectionSpec, pair_filter, pairs_per_band, select
    from orchestrator.plan.spend import over_budget, sweep_spend
    from orchestrator.plan.sweep_plan import (
        Estimate,
        Plan,
        TestParams,
        emulated_bandwidth,
        make_plan,
        pair_cap_bps,
        pair_rate_bps,
        pair_rtt_ms,
        round_overhead_s,
        round_seconds,
        slot_seconds,
        timings_key,
        vm_cost,
    )
    from orchestrator.plan.tuning import (
        TCP_BUFFER_MAX_BYTES,
        TUNED_BUFFER_BDP_FACTOR,
        bdp_bytes,
        line_rate_bps,
        tune_spec,
        tuned_buffer_bytes,
    )

__all__ = [
    "ALLOWANCE_COLUMNS",
    "BIG_HOSTS",
    "BIG_MINUTES",
    "DEFAULT_BUDGET_USD",
    "INITCWND_SEGMENTS",
    "MIN_GAP_S",
    "MSS_BYTES",
    "PER_HOST_S",
    "PHASE_FORKS",
    "PREPARE_FORKS",
    "REPLY_WAIT_S",
    "SELECTION_OPTIONS",
    "SENTINEL_SLOTS",
    "START_MARGIN_S",
    "STEAL_COLUMNS",
    "TCP_BUFFER_MAX_BYTES",
    "TEST_PARAMS_OPTIONS",
    "TUNED_BUFFER_BDP_FACTOR",
    "Estimate",
    "Pair",
    "Plan",
    "Pricing",
    "Round",
    "RunOptions",
    "SelectionSpec",
    "SentinelCheck",
    "Slot",
    "TestParams",
    "add_sentinels",
    "bdp_bytes",
    "check_selection",
    "emulated_bandwidth",
    "host_flags",
    "launch_seconds",
    "line_rate_bps",
    "load_pricing",
    "make_plan",
    "mean_egress_bps",
    "over_budget",
    "pair_cap_bps",
    "pair_filter",
    "pair_rate_bps",
    "pair_rtt_ms",
    "pairs_per_band",
    "params_spec",
    "parse_clouds",
    "phase_seconds",
    "round_overhead_s",
    "round_seconds",
    "schedule",
    "select",
    "selection_spec",
    "sentinel_check",
    "shortfall_message",
    "shortfalls",
    "slot_seconds",
    "sweep_spend",
    "timings_key",
    "tune_spec",
    "tuned_buffer_bytes",
    "vm_cost",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
