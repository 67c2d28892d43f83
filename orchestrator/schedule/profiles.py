"""Named sweep profiles: `schedules.yaml`, loaded and checked before anything is spent.

    profiles:
      latency:
        every: PT6H            # or cron: "0 */6 * * *"; UTC either way
        slip: PT10M            # start at a random time within this window after the tick
        tests: ping
        clouds: aws,gcp        # any selection option of `sweep`, e.g. regions, max_regions
        backend: cloud         # and its test parameters and cloud options
        budget_usd: 2          # per run (estimate x budget_margin)
        budget_usd_month: 200  # month-to-date actual spend plus the next run
        keep_raw_days: 30

Keys are the long option names of `interregion sweep` with '_' for '-'; lists may
be YAML lists. Every problem is one line naming the profile and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.core import paths
from orchestrator.core.errors import UserError
from orchestrator.core.textfile import load_yaml
from orchestrator.model import backends
from orchestrator.model.catalog import Catalog
from orchestrator.plan.option_names import SELECTION_OPTIONS, TEST_PARAMS_OPTIONS
from orchestrator.schedule.cadence import Cadence, check_every, parse_cron, parse_duration

DEFAULT_FILE = "schedules.yaml"
DEFAULT_BUDGET_MARGIN = 1.5

SELECTION_KEYS = SELECTION_OPTIONS
PARAM_KEYS = TEST_PARAMS_OPTIONS
RUN_KEYS = ("backend", "max_concurrent", "sequential", "controller")
CLOUD_KEYS = (
    "operator_cidr",
    "ttl",
    "network_tier",
    "aws_machine_type",
    "gcp_machine_type",
    "strict",
    "pin_from",
    "zones",
    "images",
    "gcp_project",
    "aws_profile",
)
# `pin_from: previous`: the profile's newest sweep that made hosts (from the ledger),
# what a cloud profile pins by default, so a change of zone or image never resets every
# pair's baseline (issue 21)
PIN_PREVIOUS = "previous"
SCHEDULE_KEYS = (
    "every",
    "cron",
    "slip",
    "budget_usd",
    "budget_usd_month",
    "budget_margin",
    "publish",
    "site",
    "keep_raw_days",
    "description",
)
KNOWN_KEYS = SELECTION_KEYS + PARAM_KEYS + RUN_KEYS + CLOUD_KEYS + SCHEDULE_KEYS
_LIST_KEYS = ("clouds", "regions", "exclude", "pairs", "tests", "measures")
# a systemd unit name and a cron.d file name (cron skips files with a '.' in the name)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class Profile:
    name: str
    cadence: Cadence
    slip_s: int
    budget_usd: float
    budget_usd_month: float
    budget_margin: float = DEFAULT_BUDGET_MARGIN
    publish: str | None = None
    site: str | None = None
    keep_raw_days: float | None = None
    options: dict[str, Any] = field(default_factory=dict)  # sweep's keyword arguments

    @property
    def backend(self) -> str:
        return str(self.options.get("backend", backends.DEFAULT))


class ProfileError(UserError):
    pass


def _fail(source: str, name: str, key: str, why: str) -> ProfileError:
    where = f"{source}: profile '{name}'" + (f", key '{key}'" if key else "")
    return ProfileError(f"{where}: {why}")


def _number(source: str, name: str, key: str, value: Any, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(source, name, key, f"{value!r} is not a number")
    if positive and not value > 0:
        raise _fail(source, name, key, f"{value:g} must be above 0")
    return float(value)


def sweep_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A profile's sweep settings as the keyword arguments `interregion sweep` passes."""
    options: dict[str, Any] = {}
    for key in SELECTION_KEYS + PARAM_KEYS + RUN_KEYS + CLOUD_KEYS:
        if key not in settings:
            continue
        value = settings[key]
        if key in _LIST_KEYS and isinstance(value, list | tuple):
            value = ",".join(str(v) for v in value)
        elif key == "cloud_pair":
            value = tuple(value) if isinstance(value, list | tuple) else (str(value),)
        elif key in ("ping_interval",) and isinstance(value, int):
            value = float(value)
        options[key] = value
    return options


def _typed_options(source: str, name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Each sweep option converted by the `sweep` command's own click type, so that a
    profile's `pings: twenty` is the same one-line error as `--pings twenty`."""
    import click

    # the option sets `sweep` is built from, not the command itself: its module imports
    # this one (sweep --profile)
    from orchestrator.clouds.options import cloud_options
    from orchestrator.plan.options import run_options, selection_options, test_params_options

    def options_of(**_: Any) -> None:
        """The sweep options a profile may set."""

    command = click.command()(
        selection_options(test_params_options(run_options(cloud_options(options_of))))
    )
    params = {p.name: p for p in command.params}
    typed: dict[str, Any] = {}
    for key, value in options.items():
        param = params.get(key)
        if param is None or value is None:
            typed[key] = value
            continue
        try:
            if param.multiple:
                typed[key] = tuple(param.type.convert(v, param, None) for v in value)
            else:
                typed[key] = param.type.convert(value, param, None)
        except click.BadParameter as e:
            raise _fail(source, name, key, e.message) from None
    return typed


def check_name(name: str, source: str = DEFAULT_FILE) -> str:
    """A profile's name as the units, the cron.d file and the workflow are named."""
    if not _NAME.fullmatch(name):
        raise _fail(
            source, name, "", "a name is letters, digits, '-' or '_' (up to 64): it names "
            "the systemd units, the cron.d file and the workflow"
        )  # fmt: skip
    return name


def parse_profile(
    name: str, settings: Any, catalog: Catalog | None, source: str = DEFAULT_FILE
) -> Profile:
    """Check one profile; with a catalog, also that its selection is not empty and its
    options are what `sweep` accepts."""
    check_name(name, source)
    if not isinstance(settings, dict):
        raise _fail(source, name, "", "expected a mapping of settings")
    for key, value in settings.items():
        if key not in KNOWN_KEYS:
            raise _fail(
                source, name, str(key), "unknown key (known: " + ", ".join(KNOWN_KEYS) + ")"
            )
        # `regions:` with no value would select the whole catalog: say it, or drop the key
        if value is None or (isinstance(value, str | list | tuple | dict) and not value):
            raise _fail(source, name, str(key), "has no value: give one or remove the key")
    if ("every" in settings) == ("cron" in settings):
        raise _fail(source, name, "every", "give one cadence: every (e.g. PT6H) or cron")
    try:
        if "every" in settings:
            key = "every"
            every_s = parse_duration(settings["every"])
            check_every(every_s, str(settings["every"]))
            cadence = Cadence(every_s=every_s)
        else:
            key = "cron"
            cadence = Cadence(cron=parse_cron(str(settings["cron"])))
        key = "slip"
        slip_s = parse_duration(settings.get("slip", "PT0S"))
    except UserError as e:
        raise _fail(source, name, key, str(e)) from None
    if slip_s > cadence.interval_s():
        raise _fail(source, name, "slip", "is longer than the interval between runs")
    for key in ("budget_usd", "budget_usd_month"):
        if key not in settings:
            raise _fail(source, name, key, "missing: a scheduled sweep needs a budget")
    keep = settings.get("keep_raw_days")
    publish = settings.get("publish")
    site = settings.get("site")
    if publish is not None and site is None:
        raise _fail(source, name, "site", "publish needs a site folder to build first")
    backend = settings.get("backend", backends.DEFAULT)
    if backend not in backends.NAMES:
        raise _fail(
            source, name, "backend", f"'{backend}': expected one of {', '.join(backends.NAMES)}"
        )
    options = sweep_options(settings)
    for key in ("zones", "images"):
        if key in settings:
            _check_pins(source, name, key, settings[key])
    if backends.is_cloud(backend) and "pin_from" not in settings:
        options["pin_from"] = PIN_PREVIOUS
    profile = Profile(
        name=name,
        cadence=cadence,
        slip_s=slip_s,
        budget_usd=_number(source, name, "budget_usd", settings["budget_usd"]),
        budget_usd_month=_number(source, name, "budget_usd_month", settings["budget_usd_month"]),
        budget_margin=_number(
            source, name, "budget_margin", settings.get("budget_margin", DEFAULT_BUDGET_MARGIN)
        ),
        publish=str(publish) if publish is not None else None,
        site=str(site) if site is not None else None,
        keep_raw_days=_number(source, name, "keep_raw_days", keep) if keep is not None else None,
        options=_typed_options(source, name, options),
    )
    if publish is not None:
        from orchestrator.site.publish import parse_target

        try:
            parse_target(str(publish))
        except UserError as e:
            raise _fail(source, name, "publish", str(e)) from None
    if catalog is not None:
        check_profile_sweep(profile, catalog, source)
    return profile


def _check_pins(source: str, name: str, key: str, value: Any) -> None:
    """`zones:` / `images:`, a mapping of region key (aws:us-east-1) -> zone or image id."""
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and ":" in k and isinstance(v, str) and v for k, v in value.items()
    ):
        raise _fail(
            source,
            name,
            key,
            "expected a mapping of region (aws:us-east-1) to "
            + ("zone (AZ ID or GCP zone)" if key == "zones" else "image id"),
        )


def check_profile_sweep(profile: Profile, catalog: Catalog, source: str = DEFAULT_FILE) -> None:
    """The profile's sweep options as `sweep` would read them; an empty selection is an error."""
    from orchestrator.clouds.options import cloud_options_from
    from orchestrator.plan.options import check_selection, params_from_options, spec_from_options

    opts = profile.options
    step = "selection"
    try:
        spec = spec_from_options(**opts)
        selection = check_selection(catalog, spec, profile.backend, lambda _m: None)
        step = "tests"
        params_from_options(**opts)
        step = "backend"
        if backends.is_cloud(profile.backend):
            cloud_options_from(**{**opts, "pin_from": None})  # its sweep: checked at run
    except UserError as e:
        # the sweep's own message names its flag (--min-km): that is the profile's key
        flag = re.search(r"--([a-z][a-z-]*)", str(e))
        key = flag.group(1).replace("-", "_") if flag else step
        raise _fail(source, profile.name, key, str(e)) from None
    if not selection.pairs:
        raise _fail(source, profile.name, "selection", "selects no pair of regions: widen it")


def write_sample(path: Path, force: bool = False) -> None:
    """Write the sample profiles (the package's schedules.yaml) to `path`; a file already
    there is kept unless `force` (then replaced whole; a symlink or a folder never is)."""
    from orchestrator.results import store

    path = Path(path)
    if (path.exists() or path.is_symlink()) and not force:
        raise UserError(
            f"{path} exists: keeping it; pass --force to replace it with the sample "
            "(its profiles are lost)"
        )
    store.write_atomic(path, paths.SAMPLE_SCHEDULES.read_text(encoding="utf-8"))


def load_profiles(path: Path, catalog: Catalog | None = None) -> dict[str, Profile]:
    path = Path(path)
    try:
        data = load_yaml(path, "profiles file")
    except FileNotFoundError:
        raise ProfileError(
            f"{path}: no such file: 'interregion schedule init --file {paths.shell_word(path)}' "
            f"writes a sample (profiles: {paths.DOCS / 'scheduled-sweeps.md'})"
        ) from None
    except UserError as e:
        raise ProfileError(str(e)) from None
    if not isinstance(data, dict) or not isinstance(data.get("profiles"), dict):
        raise ProfileError(f"{path}: expected a 'profiles:' mapping of name -> settings")
    unknown = sorted(set(data) - {"profiles"})
    if unknown:
        raise ProfileError(f"{path}: unknown top-level key '{unknown[0]}' (only 'profiles')")
    if not data["profiles"]:
        raise ProfileError(f"{path}: 'profiles' is empty: add one")
    return {
        str(n): parse_profile(str(n), s, catalog, str(path)) for n, s in data["profiles"].items()
    }


def get_profile(path: Path, name: str, catalog: Catalog | None = None) -> Profile:
    profiles = load_profiles(path, catalog)
    if name not in profiles:
        raise ProfileError(f"{path}: no profile '{name}' (known: {', '.join(sorted(profiles))})")
    return profiles[name]
