"""The package layout: layers in one direction, public faces pinned (issues 18 and 31).

`make lint` runs tests/check_layers.py on the checkout; these tests show that it
passes on the tree as it is and fails on a planted upward import, a planted import of
another package's module and a face that names a module, and pin each package's
`__all__` (the functions, types and constants other packages use): a change to a public
face is a change to this file too.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.core.faces import face_exports, lazy_getattr

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
import check_layers  # noqa: E402

PUBLIC = {
    "advise": [
        "AdviseRequest", "PathFacts", "WINDOW_EFFICIENCY", "advise_transfer", "format_bytes",
        "format_duration", "format_rate", "loss_limited_bps", "loss_rate", "sysctl_lines",
        "window_limited_bps",
    ],
    "cli": ["main"],
    "clouds": [
        "AwsApi", "CloudFlags", "CloudOptions", "GcpApi", "NETWORK_TIERS", "PreflightResult",
        "ReapReport", "SyncReport", "check_selection_on_clouds", "cloud_options_from",
        "leftover_warnings", "prepare_clouds", "reap_clouds", "require_sdks", "sync_catalog",
    ],
    "core": [
        "BAD_INPUT", "BEYOND", "CATALOG", "DATA", "DOCS", "DurationError", "FIBRE_RTT_MS_PER_KM",
        "INFRA", "LOGGER", "MANIFEST", "NAN", "NORMAL", "PLAYBOOKS", "PRICING", "QUIET", "RESULTS",
        "RUN_FAILED", "RunFailure", "SAMPLE_SCHEDULES", "SCHEDULES", "UserError", "VERBOSE",
        "WILSON_Z", "bucket_url", "building", "cache_home", "ceiling", "check_only_ours",
        "compact", "configure_log", "control_character_problem", "counted", "csv_errors", "debug",
        "distance_km", "fibre_rtt_ms", "gc_paused", "github_repo", "info", "is_verbose", "iso",
        "iso_of_epoch",
        "lazy_getattr", "load_yaml",
        "log_stamp", "median", "min_samples_for", "missing_extra", "of_epoch_ms", "open_new",
        "parse_compact",
        "parse_seconds", "parse_since", "parse_utc", "pearson_r", "percentile", "percentiles",
        "plain_text", "quotable_percentiles",
        "read_manifest", "read_text", "read_utc", "remove_within", "reusing", "say", "script_safe",
        "shell_word", "stamp", "state_home", "step", "utc_now", "warning", "wilson", "within",
        "write_manifest", "yaml_string",
    ],
    "drivers": [
        "Event", "Interrupted", "LockHeld", "ResultsLock", "RoundProgress", "SweepKeys",
        "TerraformStack", "View", "as_data", "check_interrupt", "close_control_sockets", "deferred",
        "ensure_sweep_keys", "interrupt_requested", "on_signal", "plain_view", "remove_views",
        "reset_interrupts", "results_lock", "run_playbook", "stop_all", "write_document",
        "write_known_hosts", "write_playbook",
    ],
    "emulator": [
        "DEFAULT_ID", "EmulationSettings", "EmulationSpec", "EmulationStatus",
        "HOST_CONGESTION_CONTROL", "HostSpec", "LOCAL_MAX_CONCURRENT", "PathSpec", "Perturbation",
        "UpRequest", "UpResult", "bring_up", "bring_up_spec", "check_hosts", "delayd_binary",
        "down", "emulation_id_for", "gather", "hosts_of", "local_variables", "parse_perturbation",
        "perturbation_ends", "process_start_ticks", "reap", "require_root", "reserve_subnet",
        "running_spec", "seed_for", "set_perturbations", "spec_probes", "status", "up",
    ],
    "exchange": [
        "Converted", "convert_file", "export_measurements", "import_source",
    ],
    "history": [
        "CHANGE_RUNS", "CellTable", "ChangesReport", "ChangesRequest", "Detection", "Filled",
        "HISTORY_FILE", "IMPORTS_DIR", "Ingested", "MATRIX_CSV_COLUMNS", "MAX_RUNS", "MESH_WINDOWS",
        "METRICS", "MatrixRequest", "NO_TIME", "OWN_SOURCES", "PERCENTILE_RULE", "PINGS_LOST_SQL",
        "PINGS_SENT_SQL", "PairSeries", "Params", "QUANTILES", "Run", "SITE_WINDOWS",
        "STATS", "SeriesKey", "SourceInfo", "StoreBusy", "UNITS", "change_docs", "changes_report",
        "combined_calibration", "detectable_change", "detection", "empty_table", "every_pair_since",
        "existing_results", "format_value", "import_batches", "ingest_all", "ingest_every_sweep",
        "ingest_sweep", "ingest_with_changes", "interrupt_queries", "iso_utc", "judge_runs",
        "loss_fields", "loss_text", "matrix_csv_rows", "matrix_report", "mesh_sources",
        "min_samples", "opened", "pair_names", "pair_series", "read_import_csv",
        "rebuild_history", "rebuild_store", "rule_in_force", "source_caption", "source_infos",
        "store_path", "transaction", "valid_sql", "window_bounds", "window_table", "with_store",
        "write_batches",
    ],
    "mesh": [
        "DEFAULT_ECHOES", "DEFAULT_INTERVAL_S", "HOURS_PER_MONTH", "MeshMatrix", "MeshPlan",
        "MeshRequest", "MeshStatus", "matrix_of", "mesh_down", "mesh_plan", "mesh_status",
        "metrics", "newest_bin", "pair_bins", "plan_mesh", "run_mesh", "serve_metrics",
    ],
    "model": [
        "BACKENDS", "BACKEND_NAMES", "BackendInfo", "CLOUDS", "CLOUD_NAMES", "CLOUD_SETUP_S",
        "Catalog", "DEFAULT_BACKEND", "Host", "IPERF3_PORTS", "LOCAL_MAX_CONCURRENT",
        "MachineBandwidth", "Region", "RegionListing", "backend_info", "hosts_from_output",
        "iperf3_port", "is_cloud", "is_emulated", "load_catalog", "pins_from_file", "placement",
        "region_from_dict", "region_listing", "region_order", "region_to_dict",
    ],
    "netmodel": [
        "BURST_S", "DEFAULT_MODEL", "DOIT_TEST_SECONDS", "EMPTY", "EmulatedType", "NetModel",
        "REAL_CAP_BPS", "REAL_WINDOW_BYTES", "RouteTable", "controller_rtt_ms", "default_routes",
        "emulated_type", "emulated_types", "load_public_samples", "one_way_delay_us", "pair_key",
        "pair_rtt_ms", "path_facts", "rate_scale_tag", "region_rtt_ms",
    ],
    "plan": [
        "ALLOWANCE_COLUMNS", "BIG_HOSTS", "BIG_MINUTES", "DEFAULT_BUDGET_USD", "PREPARE_FORKS",
        "Estimate", "INITCWND_SEGMENTS", "MIN_GAP_S", "MSS_BYTES",
        "PER_HOST_S", "PHASE_FORKS", "Pair", "Plan", "Pricing", "REPLY_WAIT_S", "Round",
        "RunOptions", "SELECTION_OPTIONS", "SENTINEL_SLOTS", "START_MARGIN_S", "STEAL_COLUMNS",
        "SelectionSpec", "SentinelCheck", "Slot", "TCP_BUFFER_MAX_BYTES", "TEST_PARAMS_OPTIONS",
        "TUNED_BUFFER_BDP_FACTOR", "TestParams", "add_sentinels", "bdp_bytes", "check_selection",
        "emulated_bandwidth", "host_flags", "launch_seconds", "line_rate_bps", "load_pricing",
        "make_plan", "mean_egress_bps", "over_budget", "pair_cap_bps", "pair_filter",
        "pair_rate_bps", "pair_rtt_ms", "pairs_per_band", "params_spec", "parse_clouds",
        "phase_seconds", "round_overhead_s", "round_seconds", "schedule", "select",
        "selection_spec", "sentinel_check", "shortfall_message", "shortfalls", "slot_seconds",
        "sweep_spend", "timings_key", "tune_spec", "tuned_buffer_bytes", "vm_cost",
    ],
    "publish": ["parse_target", "publish_site"],
    "report": [
        "FigureSet", "GROUPS", "GroupSummary", "INFLATION_MIN_KM", "MAX_POINTS", "MAX_SERIES",
        "Medians", "OUTLIER_COLUMNS", "OUTLIER_DOCS", "OUTLIER_MIN_EXCESS_MS", "PAIR_LABELS",
        "PairOutlier", "Products", "RTT_DEFINITION", "Report", "ReportRequest", "SUMMARY_COLUMNS",
        "SUMMARY_DOCS", "TABLE_NOTE", "build_report", "check_sources", "compact", "display_cell",
        "figure_data", "geo_assets_js", "input_key", "load_inputs", "load_products", "make_report",
        "prune_products", "read_sweep_meta", "report_figures", "report_notes", "save_products",
        "series_figure", "summaries_of", "sweep_dirs", "sweep_products", "table_cells",
        "timeseries_figure", "write_csv",
    ],
    "results": [
        "ASYMMETRIC", "CAPACITY", "CloudOptions", "DEFAULT_TIER", "EmulationRecord", "FAILED",
        "FEW_SAMPLES", "FLAGGED_MEASURES", "FLAGS", "FLAG_REASONS", "FLAG_SEPARATOR",
        "FLOOR_TOLERANCE_MS", "HOSTS_FILE", "HOST_STALL", "HostPlacement", "INVALIDATES",
        "LOSS_TOLERANCE", "MATHIS_C", "MEASUREMENTS_FILE", "MEASUREMENT_COLUMNS",
        "MEASUREMENT_DOCS", "MEASURES", "NETWORK_TIERS", "NUMERIC_COLUMNS", "Owner",
        "PING_PACKET_BYTES",
        "PING_PAYLOAD_BYTES", "PathFacts", "PlanRecord", "RAW_DIR", "RESULTS_FORMAT_VERSION", "RTT",
        "RTT_STATS", "RoundEntry", "RowContext", "SINGLE_STREAM", "SelectionSpec", "STATE_DIR",
        "STUDIES_DIR", "SWEEP_FILE", "SlotPlan", "Stage", "StageStatus", "StudyRecord",
        "SweepRecord", "SweepStatus", "THROUGHPUT", "TestParams", "YEARS", "add_round_rows",
        "asymmetric_rows", "check_results_for_sweeps", "check_sweep_id",
        "count_flags", "csv_text", "describe_tier", "flagged",
        "for_sweep", "format_value", "group_name", "harmless_flags", "host_doc", "host_rows",
        "invalidates_text", "is_default", "is_study_dir", "load_record", "loss_band",
        "make_state_dir", "mathis_bps", "measure_of", "merge_rows", "new_sweep_id", "normal_tier",
        "not_a_regular_file", "number_problem", "of_ends", "ok_tests", "pair_key", "parse_flags",
        "parse_measures", "parse_tests", "window_bytes", "parse_option", "peers_by_host",
        "phase_rows", "ping_samples", "raw_path", "read_raw_round", "read_record", "read_rows",
        "reverse_tier", "round_rows", "round_stalls", "row_flags", "row_rtt_ms", "rtt_invalid",
        "safe_name", "samples_of", "save_record", "set_flags", "sweep_dir", "test_key",
        "throughput_invalid", "unmeasured_row", "value_range", "with_ping_phase", "write_atomic",
        "write_json", "write_parsed_rows", "write_rows", "load_record_file", "ScheduleTrigger",
        "MEASUREMENTS_HEADER", "PLAIN_LINE", "PLAIN_NUMBER", "PUBLISHED_NUMBER", "STAMP_PATTERN",
        "TEXT_CELL", "marked_rows",
    ],
    "schedule": [
        "DEFAULT_FILE", "ScheduleStatus", "Written", "check_name", "export_named", "install_named",
        "reap_abandoned", "remove", "remove_named", "run_named", "schedule_status", "write_sample",
    ],
    "site": ["build_site"],
    "study": [
        "DEFAULT_REPEATS", "REPORT_FILE", "STUDIES_DIR", "TcpStudyPlan", "TcpStudyRequest",
        "VARIANTS", "plan_tcp_study", "run_tcp_study", "study_ids", "tcp_study",
    ],
    "sweep": [
        "ClosedRound", "Emulation", "Held", "MESH_DIR", "NOT_CONFIRMED", "PlannedRound",
        "Question", "RoundTracker",
        "Sweep", "SweepDone", "SweepRequest", "SweepRun", "agent_parts", "answer",
        "check_playbook_end",
        "cloud_options_for", "collect", "collect_sweep", "congestion_problem", "control_dir",
        "create", "dry_run", "existing_stacks", "load_hosts", "local_agent_dir", "locked",
        "mark_owner", "measure_stage", "measure_sweep", "next_round_no", "open_sweep",
        "owner_alive", "plan_for", "prepare", "prepare_sweep", "provision_stage",
        "provision_sweep", "questions", "restore_hosts", "resume", "round_play", "row_context",
        "run_new", "run_rounds", "run_sweep", "ssh_common_args", "start", "state_folder",
        "teardown_stage", "teardown_sweep", "write_sweep_inventory",
    ],
    "text": [
        "Announcement", "MATRIX_WIDTH", "TERMINAL_WIDTH", "announcement", "console",
        "converted_line", "csv_text", "demo_passed_line", "done_lines", "down_line",
        "emulator_status_lines",
        "filled_line", "ingest_lines", "mesh_matrix_lines", "mesh_plan_lines", "mesh_status_lines",
        "perturbed_lines", "plan_tables", "preflight_lines", "print_parts", "reap_lines",
        "reaped_lines", "reaped_sweeps_line", "rebuilt_line", "regions_table",
        "render_advice_table", "render_change_lines", "render_demo_outcome", "render_matrix_table",
        "render_pair_series", "render_report_tables", "schedule_status_lines",
        "sync_lines", "tick_line", "up_lines", "written_lines",
    ],
}  # fmt: skip


def packages() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "orchestrator").glob("*/__init__.py"))


@pytest.mark.slow
def test_the_tree_keeps_its_layers():
    assert [str(p) for p in check_layers.check(ROOT)] == []


def test_every_package_has_a_layer_and_a_pinned_face():
    assert sorted(PUBLIC) == packages()
    layered = {pkg for layer in check_layers.LAYERS for pkg in layer}
    assert set(packages()) <= layered


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_face_is_pinned(package):
    module = importlib.import_module(f"orchestrator.{package}")
    assert sorted(module.__all__) == sorted(PUBLIC[package])
    assert module.__doc__ and "Public API" in module.__doc__
    for name in module.__all__:  # every public name is there (a lazy face loads it), no module
        assert not inspect.ismodule(getattr(module, name)), name


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_a_lazy_face_gives_at_run_time_what_the_type_checker_sees(package):
    """A lazy face's `__getattr__` reads its `TYPE_CHECKING` imports, what mypy sees: each
    is in `__all__`, only plain `from module import name` imports are there (anything
    else would be invisible at run time), and each name resolves to its module's object."""
    path = ROOT / "orchestrator" / package / "__init__.py"
    module = importlib.import_module(f"orchestrator.{package}")
    if "lazy_getattr(__name__, __file__)" not in path.read_text():
        return  # an eager face (cli: `main`)
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module, ast.unparse(imp)
    lazy = face_exports(path)
    assert lazy and set(lazy) <= set(module.__all__)
    for name, (where, there) in lazy.items():
        assert getattr(module, name) is getattr(importlib.import_module(where), there), name


def test_a_name_left_out_of_the_type_checking_imports_is_not_there_at_run_time(tmp_path):
    # the one list: a name in __all__ alone is an AttributeError, not a silent None
    face = tmp_path / "__init__.py"
    face.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from orchestrator.core.faces import face_exports\n"
    )
    getter = lazy_getattr("planted", str(face))
    assert getter("face_exports") is face_exports
    with pytest.raises(AttributeError, match=r"planted.*lazy_getattr"):
        getter("lazy_getattr")


def test_at_most_six_modules_beside_the_packages():
    flat = [
        p.name
        for p in (ROOT / "orchestrator").glob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    ]
    assert len(flat) <= 6, flat


def test_no_package_holds_more_than_about_thirteen_modules():
    sizes = {
        pkg: len([p for p in (ROOT / "orchestrator" / pkg).glob("*.py") if p.stem != "__init__"])
        for pkg in packages()
    }
    assert max(sizes.values()) <= 14, sizes


def plant(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the package with `line` added to `module` (a path under orchestrator/)."""
    shutil.copytree(ROOT / "orchestrator", tmp_path / "orchestrator")
    target = tmp_path / "orchestrator" / module
    target.write_text(target.read_text() + f"\n\ndef _planted() -> None:\n    {line}\n")
    return tmp_path


def run_check(root: Path) -> subprocess.CompletedProcess[str]:
    script = ROOT / "tests" / "check_layers.py"
    return subprocess.run(
        [sys.executable, str(script), str(root)], capture_output=True, text=True, timeout=60
    )


def test_the_lint_step_passes_on_the_tree():
    done = run_check(ROOT)
    assert done.returncode == 0, done.stdout


def test_ruff_skips_no_folder_of_the_package_or_the_tests():
    """An exclude without a leading / matches a folder of that name anywhere: "results"
    (the sweeps' folder) also skipped orchestrator/results and tests/unit/results."""
    import tomllib

    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    excluded = settings["tool"]["ruff"].get("extend-exclude", [])
    ours = {p.name for top in ("orchestrator", "tests", "bench") for p in (ROOT / top).rglob("*")
            if p.is_dir()}  # fmt: skip
    assert not [e for e in excluded if not e.startswith("/") and e in ours], excluded


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "line", "said"),
    [
        # an upward import inside a function is still one
        ("core/stats.py", "from orchestrator.sweep import runner", "upward import: core ->"),
        ("plan/sweep_plan.py", "import orchestrator.emulator", "upward import: plan ->"),
        ("report/charts.py", "from orchestrator.history import store", "sibling import"),
        ("schedule/tick.py", "from orchestrator.cli import main", "only entry points may"),
        ("site/static_site.py", "from orchestrator.sweep.stages import _hosts_doc", "private"),
        ("sweep/stages.py", "from orchestrator.report.nowhere import x", "not in"),
        # a face names what is used: another package's module is never imported
        ("site/static_site.py", "from orchestrator.history.store import opened", "imports module"),
        ("study/run.py", "from orchestrator.sweep import runner", "imports module"),
        ("mesh/lifecycle.py", "import orchestrator.sweep.stages as stages", "imports module"),
        ("site/static_site.py", "from orchestrator.history import judge_sweeps", "not in"),
        # the library takes typed requests: click stays in the CLI
        ("plan/options.py", "import click", "only orchestrator.cli may"),
        ("schedule/profiles.py", "from click import Choice", "only orchestrator.cli may"),
        # the CLI parses, calls one use case, renders: no data library, query or child process
        ("cli/plan.py", "import numpy as np", "imports numpy: the CLI calls a use case"),
        ("cli/report.py", "import duckdb", "imports duckdb: the CLI calls a use case"),
        ("cli/schedule.py", "from subprocess import run", "imports subprocess: the CLI"),
        ("cli/plan.py", "import sqlite3", "imports sqlite3: the CLI calls a use case"),
        ("cli/study.py", "return 'SELECT rtt_ms FROM tests WHERE src = ?'", "SQL in the CLI"),
        ("cli/history.py", "from pandas import DataFrame", "imports pandas: the CLI calls"),
        ("cli/sweep.py", "import pyarrow.parquet as pq", "imports pyarrow.parquet: the CLI"),
        # a query over lines, and one with a replacement field
        ("cli/plan.py", 'q = """\n    SELECT src, dst\n    FROM tests\n"""', "SQL in the CLI"),
        ("cli/emulator.py", "return f'SELECT {cols} FROM tests'", "SQL in the CLI"),
    ],
)
def test_the_lint_step_fails_on_a_planted_import(tmp_path, module, line, said):
    done = run_check(plant(tmp_path, module, line))
    assert done.returncode == 1
    assert said in done.stdout and module.replace("/", ".").removesuffix(".py") in done.stdout


@pytest.mark.slow
def test_the_lint_step_fails_on_a_face_that_names_a_module(tmp_path):
    shutil.copytree(ROOT / "orchestrator", tmp_path / "orchestrator")
    face = tmp_path / "orchestrator" / "history" / "__init__.py"
    text = face.read_text()
    assert "__all__ = [\n" in text
    face.write_text(text.replace("__all__ = [\n", '__all__ = [\n    "store",\n', 1))
    done = run_check(tmp_path)
    assert done.returncode == 1
    assert "orchestrator.history" in done.stdout and "__all__ names module store" in done.stdout


def test_make_lint_runs_the_layer_check():
    makefile = (ROOT / "Makefile").read_text()
    lint = makefile.split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "tests/check_layers.py" in lint


def test_a_module_name_is_used_by_one_package_only():
    """A module's name says what it holds, without its package (`results.files`, not a
    second `store`); the CLI's modules are named after their commands, so they may repeat
    a library module's name (`cli/history.py` and `orchestrator/history/`)."""
    owners: dict[str, list[str]] = {}
    for path in (ROOT / "orchestrator").rglob("*.py"):
        package = path.parent.relative_to(ROOT / "orchestrator").as_posix()
        if path.stem in ("__init__", "__main__") or package == "cli":
            continue
        owners.setdefault(path.stem, []).append(package)
    assert {name: where for name, where in owners.items() if len(where) > 1} == {}
