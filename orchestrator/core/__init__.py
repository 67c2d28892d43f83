"""Foundations every layer uses: errors a user can act on, where the project's files live,
order statistics, geodesic distances, UTC times, and output folders that appear whole.

Public API: the names below, re-exported from the modules that define them;
other packages import only these (`from orchestrator.core import bucket_url`),
never a module of this package (tests/check_layers.py).

- `durations`: `DurationError`, `parse_seconds`.
- `errors`: `BAD_INPUT`, `RUN_FAILED`, `RunFailure`, `UserError`, `missing_extra`.
- `faces`: `lazy_getattr` (imported with the face: every lazy face's `__getattr__`).
- `gcpause`: `gc_paused`.
- `geo`: `FIBRE_RTT_MS_PER_KM`, `distance_km`, `fibre_rtt_ms`.
- `grammar`: `bucket_url`, `ceiling`, `github_repo`, `plain_text`, `script_safe`, `yaml_string`.
- `log`: `LOGGER`, `NORMAL`, `QUIET`, `VERBOSE`, `configure_log`, `counted`, `debug`, `info`,
  `is_verbose`, `log_stamp`, `say`, `step`, `warning`.
- `outdir`: `MANIFEST`, `building`, `check_only_ours`, `open_new`, `read_manifest`,
  `remove_within`, `reusing`, `within`, `write_manifest`.
- `paths`: `CATALOG`, `DATA`, `DOCS`, `INFRA`, `PLAYBOOKS`, `PRICING`, `RESULTS`,
  `SAMPLE_SCHEDULES`, `SCHEDULES`, `cache_home`, `shell_word`, `state_home`.
- `stats`: `BEYOND`, `NAN`, `WILSON_Z`, `median`, `min_samples_for`, `pearson_r`, `percentile`,
  `percentiles`, `quotable_percentiles`, `wilson`.
- `textfile`: `csv_errors`, `load_yaml`, `read_text`.
- `times`: `iso`, `iso_of_epoch`, `parse_utc`, `utc_now`.
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
    from orchestrator.core.times import iso, iso_of_epoch, parse_utc, utc_now

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
    "configure_log",
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
    "open_new",
    "parse_seconds",
    "parse_utc",
    "pearson_r",
    "percentile",
    "percentiles",
    "plain_text",
    "quotable_percentiles",
    "read_manifest",
    "read_text",
    "remove_within",
    "reusing",
    "say",
    "script_safe",
    "shell_word",
    "state_home",
    "step",
    "utc_now",
    "warning",
    "wilson",
    "within",
    "write_manifest",
    "yaml_string",
]

# Names whose modules import more than the standard library (see
# tests/check_layers.py): imported on first use (PEP 562), so that importing
# this package costs nothing a command does not use.
_LAZY = {
    "DurationError": ("orchestrator.core.durations", "DurationError"),
    "parse_seconds": ("orchestrator.core.durations", "parse_seconds"),
    "BAD_INPUT": ("orchestrator.core.errors", "BAD_INPUT"),
    "RUN_FAILED": ("orchestrator.core.errors", "RUN_FAILED"),
    "RunFailure": ("orchestrator.core.errors", "RunFailure"),
    "UserError": ("orchestrator.core.errors", "UserError"),
    "missing_extra": ("orchestrator.core.errors", "missing_extra"),
    "gc_paused": ("orchestrator.core.gcpause", "gc_paused"),
    "FIBRE_RTT_MS_PER_KM": ("orchestrator.core.geo", "FIBRE_RTT_MS_PER_KM"),
    "distance_km": ("orchestrator.core.geo", "distance_km"),
    "fibre_rtt_ms": ("orchestrator.core.geo", "fibre_rtt_ms"),
    "bucket_url": ("orchestrator.core.grammar", "bucket_url"),
    "ceiling": ("orchestrator.core.grammar", "ceiling"),
    "github_repo": ("orchestrator.core.grammar", "github_repo"),
    "plain_text": ("orchestrator.core.grammar", "plain_text"),
    "script_safe": ("orchestrator.core.grammar", "script_safe"),
    "yaml_string": ("orchestrator.core.grammar", "yaml_string"),
    "LOGGER": ("orchestrator.core.log", "LOGGER"),
    "NORMAL": ("orchestrator.core.log", "NORMAL"),
    "QUIET": ("orchestrator.core.log", "QUIET"),
    "VERBOSE": ("orchestrator.core.log", "VERBOSE"),
    "configure_log": ("orchestrator.core.log", "configure"),
    "counted": ("orchestrator.core.log", "counted"),
    "debug": ("orchestrator.core.log", "debug"),
    "info": ("orchestrator.core.log", "info"),
    "is_verbose": ("orchestrator.core.log", "is_verbose"),
    "log_stamp": ("orchestrator.core.log", "stamp"),
    "say": ("orchestrator.core.log", "say"),
    "step": ("orchestrator.core.log", "step"),
    "warning": ("orchestrator.core.log", "warning"),
    "MANIFEST": ("orchestrator.core.outdir", "MANIFEST"),
    "building": ("orchestrator.core.outdir", "building"),
    "check_only_ours": ("orchestrator.core.outdir", "check_only_ours"),
    "open_new": ("orchestrator.core.outdir", "open_new"),
    "read_manifest": ("orchestrator.core.outdir", "read_manifest"),
    "remove_within": ("orchestrator.core.outdir", "remove_within"),
    "reusing": ("orchestrator.core.outdir", "reusing"),
    "within": ("orchestrator.core.outdir", "within"),
    "write_manifest": ("orchestrator.core.outdir", "write_manifest"),
    "CATALOG": ("orchestrator.core.paths", "CATALOG"),
    "DATA": ("orchestrator.core.paths", "DATA"),
    "DOCS": ("orchestrator.core.paths", "DOCS"),
    "INFRA": ("orchestrator.core.paths", "INFRA"),
    "PLAYBOOKS": ("orchestrator.core.paths", "PLAYBOOKS"),
    "PRICING": ("orchestrator.core.paths", "PRICING"),
    "RESULTS": ("orchestrator.core.paths", "RESULTS"),
    "SAMPLE_SCHEDULES": ("orchestrator.core.paths", "SAMPLE_SCHEDULES"),
    "SCHEDULES": ("orchestrator.core.paths", "SCHEDULES"),
    "cache_home": ("orchestrator.core.paths", "cache_home"),
    "shell_word": ("orchestrator.core.paths", "shell_word"),
    "state_home": ("orchestrator.core.paths", "state_home"),
    "BEYOND": ("orchestrator.core.stats", "BEYOND"),
    "NAN": ("orchestrator.core.stats", "NAN"),
    "WILSON_Z": ("orchestrator.core.stats", "WILSON_Z"),
    "median": ("orchestrator.core.stats", "median"),
    "min_samples_for": ("orchestrator.core.stats", "min_samples_for"),
    "pearson_r": ("orchestrator.core.stats", "pearson_r"),
    "percentile": ("orchestrator.core.stats", "percentile"),
    "percentiles": ("orchestrator.core.stats", "percentiles"),
    "quotable_percentiles": ("orchestrator.core.stats", "quotable_percentiles"),
    "wilson": ("orchestrator.core.stats", "wilson"),
    "csv_errors": ("orchestrator.core.textfile", "csv_errors"),
    "load_yaml": ("orchestrator.core.textfile", "load_yaml"),
    "read_text": ("orchestrator.core.textfile", "read_text"),
    "iso": ("orchestrator.core.times", "iso"),
    "iso_of_epoch": ("orchestrator.core.times", "iso_of_epoch"),
    "parse_utc": ("orchestrator.core.times", "parse_utc"),
    "utc_now": ("orchestrator.core.times", "utc_now"),
}


__getattr__ = lazy_getattr(__name__, _LAZY)
