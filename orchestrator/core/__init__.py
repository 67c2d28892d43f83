"""Foundations every layer uses: errors a user can act on, where the project's files live,
order statistics, geodesic distances, UTC times, and output folders that appear whole.

Public API: the names in `__all__`, each imported from the module that defines it in the
`TYPE_CHECKING` block below and loaded when first used (core.faces). Other packages import
only these (`from orchestrator.core import bucket_url`), never a module of this package
(tests/check_layers.py).
"""

from typing import TYPE_CHECKING

from orchestrator.core.faces import lazy_getattr

if TYPE_CHECKING:
    from orchestrator.core.durations import DurationError, parse_seconds
    from orchestrator.core.errors import BAD_INPUT, RUN_FAILED, RunFailure, UserError, missing_extra
    from orchestrator.core.gcpause import gc_paused
    from orchestrator.core.geo import FIBRE_RTT_MS_PER_KM, distance_km, fibre_rtt_ms
    from orchestrator.core.grammar import (
        bucket_url,
        ceiling,
        control_character_problem,
        github_repo,
        plain_text,
        script_safe,
        yaml_string,
    )
    from orchestrator.core.log import (
        LOGGER,
        NORMAL,
        QUIET,
        VERBOSE,
        counted,
        debug,
        info,
        is_verbose,
        say,
        step,
        warning,
    )
    from orchestrator.core.log import configure as configure_log
    from orchestrator.core.log import stamp as log_stamp
    from orchestrator.core.outdir import (
        MANIFEST,
        building,
        check_only_ours,
        open_new,
        read_manifest,
        remove_within,
        reusing,
        within,
        write_manifest,
    )
    from orchestrator.core.paths import (
        CATALOG,
        DATA,
        DOCS,
        INFRA,
        PLAYBOOKS,
        PRICING,
        RESULTS,
        SAMPLE_SCHEDULES,
        SCHEDULES,
        cache_home,
        shell_word,
        state_home,
    )
    from orchestrator.core.stats import (
        BEYOND,
        NAN,
        WILSON_Z,
        median,
        min_samples_for,
        pearson_r,
        percentile,
        percentiles,
        quotable_percentiles,
        wilson,
    )
    from orchestrator.core.textfile import csv_errors, load_yaml, read_text
    from orchestrator.core.times import (
        compact,
        iso,
        iso_of_epoch,
        of_epoch_ms,
        parse_compact,
        parse_since,
        parse_utc,
        read_utc,
        stamp,
        utc_now,
    )

__all__ = [
    "BAD_INPUT",
    "BEYOND",
    "CATALOG",
    "DATA",
    "DOCS",
    "FIBRE_RTT_MS_PER_KM",
    "INFRA",
    "LOGGER",
    "MANIFEST",
    "NAN",
    "NORMAL",
    "PLAYBOOKS",
    "PRICING",
    "QUIET",
    "RESULTS",
    "RUN_FAILED",
    "SAMPLE_SCHEDULES",
    "SCHEDULES",
    "VERBOSE",
    "WILSON_Z",
    "DurationError",
    "RunFailure",
    "UserError",
    "bucket_url",
    "building",
    "cache_home",
    "ceiling",
    "check_only_ours",
    "compact",
    "configure_log",
    "control_character_problem",
    "counted",
    "csv_errors",
    "debug",
    "distance_km",
    "fibre_rtt_ms",
    "gc_paused",
    "github_repo",
    "info",
    "is_verbose",
    "iso",
    "iso_of_epoch",
    "lazy_getattr",
    "load_yaml",
    "log_stamp",
    "median",
    "min_samples_for",
    "missing_extra",
    "of_epoch_ms",
    "open_new",
    "parse_compact",
    "parse_seconds",
    "parse_since",
    "parse_utc",
    "pearson_r",
    "percentile",
    "percentiles",
    "plain_text",
    "quotable_percentiles",
    "read_manifest",
    "read_text",
    "read_utc",
    "remove_within",
    "reusing",
    "say",
    "script_safe",
    "shell_word",
    "stamp",
    "state_home",
    "step",
    "utc_now",
    "warning",
    "wilson",
    "within",
    "write_manifest",
    "yaml_string",
]


# a name loads its module when first imported (core.faces)
__getattr__ = lazy_getattr(__name__, __file__)
