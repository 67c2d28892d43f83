"""A sweep's results: the `measurements.csv` contract, the sweep's results folder, and pure
functions from tool output (iperf3, ping) to rows.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.results import add_round_rows`), never a module of this
package (tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.results.files import (
        HOSTS_FILE,
        MEASUREMENTS_FILE,
        RAW_DIR,
        STATE_DIR,
        STUDIES_DIR,
        SWEEP_FILE,
        add_round_rows,
        check_results_for_sweeps,
        check_sweep_id,
        csv_text,
        flagged,
        format_value,
        is_study_dir,
        load_record,
        make_state_dir,
        merge_rows,
        new_sweep_id,
        not_a_regular_file,
        ok_tests,
        pair_key,
        raw_path,
        read_raw_round,
        read_rows,
        safe_name,
        save_record,
        sweep_dir,
        test_key,
        write_atomic,
        write_json,
        write_rows,
    )
    from orchestrator.results.flags import (
        ASYMMETRIC,
        FEW_SAMPLES,
        FLAGS,
        FLOOR_TOLERANCE_MS,
        HOST_STALL,
        INVALIDATES,
        RTT,
        RTT_STATS,
        THROUGHPUT,
        asymmetric_rows,
        invalidates_text,
        row_flags,
        row_rtt_ms,
        rtt_invalid,
        set_flags,
        throughput_invalid,
    )
    from orchestrator.results.flags import MEASURES as FLAGGED_MEASURES
    from orchestrator.results.flags import REASONS as FLAG_REASONS
    from orchestrator.results.flags import SEPARATOR as FLAG_SEPARATOR
    from orchestrator.results.flags import count as count_flags
    from orchestrator.results.flags import harmless as harmless_flags
    from orchestrator.results.flags import parse as parse_flags
    from orchestrator.results.limiter import (
        LOSS_TOLERANCE,
        MATHIS_C,
        PathFacts,
        loss_band,
        mathis_bps,
    )
    from orchestrator.results.parse import ping_samples
    from orchestrator.results.parsed_rows import write_parsed_rows
    from orchestrator.results.ping_rows import (
        host_rows,
        peers_by_host,
        phase_rows,
        round_stalls,
        samples_of,
    )
    from orchestrator.results.plain_file import HEADER_LINE as MEASUREMENTS_HEADER
    from orchestrator.results.plain_file import (
        PLAIN_LINE,
        PLAIN_NUMBER,
        PUBLISHED_NUMBER,
        marked_rows,
    )
    from orchestrator.results.plain_file import STAMP as STAMP_PATTERN
    from orchestrator.results.plain_file import TEXT as TEXT_CELL
    from orchestrator.results.raw_rows import (
        FAILED,
        RowContext,
        SlotPlan,
        host_doc,
        round_rows,
        unmeasured_row,
        with_ping_phase,
    )
    from orchestrator.results.record import (
        EmulationRecord,
        HostPlacement,
        Owner,
        PlanRecord,
        RoundEntry,
        ScheduleTrigger,
        Stage,
        StageStatus,
        StudyRecord,
        SweepRecord,
        SweepStatus,
        load_record_file,
        read_record,
    )
    from orchestrator.results.schema import (
        CAPACITY,
        MEASUREMENT_COLUMNS,
        MEASUREMENT_DOCS,
        MEASURES,
        NUMERIC_COLUMNS,
        PING_PACKET_BYTES,
        PING_PAYLOAD_BYTES,
        RESULTS_FORMAT_VERSION,
        SINGLE_STREAM,
        YEARS,
        measure_of,
        number_problem,
        value_range,
    )
    from orchestrator.results.settings import (
        CloudOptions,
        SelectionSpec,
        TestParams,
        parse_measures,
        parse_tests,
        window_bytes,
    )
    from orchestrator.results.tiers import DEFAULT as DEFAULT_TIER
    from orchestrator.results.tiers import (
        NETWORK_TIERS,
        for_sweep,
        group_name,
        is_default,
        of_ends,
        parse_option,
    )
    from orchestrator.results.tiers import describe as describe_tier
    from orchestrator.results.tiers import normal as normal_tier
    from orchestrator.results.tiers import reverse as reverse_tier

__all__ = [
    "ASYMMETRIC",
    "CAPACITY",
    "DEFAULT_TIER",
    "FAILED",
    "FEW_SAMPLES",
    "FLAGGED_MEASURES",
    "FLAGS",
    "FLAG_REASONS",
    "FLAG_SEPARATOR",
    "FLOOR_TOLERANCE_MS",
    "HOSTS_FILE",
    "HOST_STALL",
    "INVALIDATES",
    "LOSS_TOLERANCE",
    "MATHIS_C",
    "MEASUREMENTS_FILE",
    "MEASUREMENTS_HEADER",
    "MEASUREMENT_COLUMNS",
    "MEASUREMENT_DOCS",
    "MEASURES",
    "NETWORK_TIERS",
    "NUMERIC_COLUMNS",
    "PING_PACKET_BYTES",
    "PING_PAYLOAD_BYTES",
    "PLAIN_LINE",
    "PLAIN_NUMBER",
    "PUBLISHED_NUMBER",
    "RAW_DIR",
    "RESULTS_FORMAT_VERSION",
    "RTT",
    "RTT_STATS",
    "SINGLE_STREAM",
    "STAMP_PATTERN",
    "STATE_DIR",
    "STUDIES_DIR",
    "SWEEP_FILE",
    "TEXT_CELL",
    "THROUGHPUT",
    "YEARS",
    "CloudOptions",
    "EmulationRecord",
    "HostPlacement",
    "Owner",
    "PathFacts",
    "PlanRecord",
    "RoundEntry",
    "RowContext",
    "ScheduleTrigger",
    "SelectionSpec",
    "SlotPlan",
    "Stage",
    "StageStatus",
    "StudyRecord",
    "SweepRecord",
    "SweepStatus",
    "TestParams",
    "add_round_rows",
    "asymmetric_rows",
    "check_results_for_sweeps",
    "check_sweep_id",
    "count_flags",
    "csv_text",
    "describe_tier",
    "flagged",
    "for_sweep",
    "format_value",
    "group_name",
    "harmless_flags",
    "host_doc",
    "host_rows",
    "invalidates_text",
    "is_default",
    "is_study_dir",
    "load_record",
    "load_record_file",
    "loss_band",
    "make_state_dir",
    "marked_rows",
    "mathis_bps",
    "measure_of",
    "merge_rows",
    "new_sweep_id",
    "normal_tier",
    "not_a_regular_file",
    "number_problem",
    "of_ends",
    "ok_tests",
    "pair_key",
    "parse_flags",
    "parse_measures",
    "parse_option",
    "parse_tests",
    "peers_by_host",
    "phase_rows",
    "ping_samples",
    "raw_path",
    "read_raw_round",
    "read_record",
    "read_rows",
    "reverse_tier",
    "round_rows",
    "round_stalls",
    "row_flags",
    "row_rtt_ms",
    "rtt_invalid",
    "safe_name",
    "samples_of",
    "save_record",
    "set_flags",
    "sweep_dir",
    "test_key",
    "throughput_invalid",
    "unmeasured_row",
    "value_range",
    "window_bytes",
    "with_ping_phase",
    "write_atomic",
    "write_json",
    "write_parsed_rows",
    "write_rows",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
