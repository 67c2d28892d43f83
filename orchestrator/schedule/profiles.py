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
be YAML lists. Each profile is read into the same SweepRequest `sweep` builds from its
flags (orchestrator.sweep.launch), its values checked as the flags' are. Every problem
(an unknown key, a misspelt one, a value of the wrong kind) is one line naming the
profile and the key.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.clouds import NETWORK_TIERS, CloudFlags
from orchestrator.core import (
    DOCS,
    SAMPLE_SCHEDULES,
    UserError,
    bucket_url,
    ceiling,
    load_yaml,
    shell_word,
)
from orchestrator.model import Catalog, backend_info, is_cloud, is_emulated
from orchestrator.plan import (
    SELECTION_OPTIONS,
    TEST_PARAMS_OPTIONS,
    RunOptions,
    check_selection,
    params_spec,
    selection_spec,
)
from orchestrator.schedule.cadence import Cadence, check_every, parse_cron, parse_duration
from orchestrator.sweep import SweepRequest

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
    request: SweepRequest = field(default_factory=SweepRequest)  # what each run sweeps

    @property
    def backend(self) -> str:
        return self.request.backend


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


# ---- a profile's YAML values, each read as its `sweep` flag reads it --------------------

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _integer(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value.strip()):
        return int(value)
    raise UserError(f"{value!r} is not a valid integer")


def _finite(value: object) -> float:
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UserError(f"{value!r} is not a number") from None
    if not math.isfinite(number):
        raise UserError(f"{value!r} is not a finite number")
    return number


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in _TRUE + _FALSE:
        return str(value).strip().lower() in _TRUE
    raise UserError(f"{value!r} is not a valid boolean (true or false)")


def _text(value: object) -> str:
    if isinstance(value, dict | list | tuple | bool):
        raise UserError(f"{value!r}: expected a single value")
    return str(value)


def _listed(value: object) -> str:
    """A list option: a YAML list or the flag's comma-separated text."""
    if isinstance(value, list | tuple):
        return ",".join(_text(v) for v in value)
    return _text(value)


def _repeated(value: object) -> tuple[str, ...]:
    """A repeatable flag (cloud_pair): a YAML list or one value."""
    items = value if isinstance(value, list | tuple) else [value]
    return tuple(_text(v) for v in items)


def _one_of(*choices: str) -> Callable[[object], str]:
    def read(value: object) -> str:
        text = _text(value)
        if text.lower() not in choices:
            raise UserError(f"{text!r} is not one of {', '.join(choices)}")
        return text.lower()

    return read


def _pins(what: str) -> Callable[[object], dict[str, str]]:
    """`zones:` / `images:`, a mapping of region key (aws:us-east-1) -> zone or image id."""

    def read(value: object) -> dict[str, str]:
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and ":" in k and isinstance(v, str) and v for k, v in value.items()
        ):
            raise UserError(f"expected a mapping of region (aws:us-east-1) to {what}")
        return dict(value)

    return read


# each sweep key and how its value is read (what the flag's click type does on the CLI)
_READ: dict[str, Callable[[object], Any]] = {
    "clouds": _listed,
    "regions": _listed,
    "exclude": _listed,
    "no_opt_in": _flag,
    "cloud_pair": _repeated,
    "min_km": _finite,
    "max_km": _finite,
    "pairs": _listed,
    "max_regions": _integer,
    "pings": _integer,
    "ping_interval": _finite,
    "duration": _integer,
    "omit": _integer,
    "streams": _integer,
    "window": _text,
    "congestion": _text,
    "tests": _listed,
    "measures": _listed,
    "backend": _text,  # RunOptions names the backends
    "max_concurrent": _integer,
    "sequential": _flag,
    "controller": _text,
    "operator_cidr": _text,
    "ttl": _text,
    "network_tier": _one_of(*NETWORK_TIERS),
    "aws_machine_type": _text,
    "gcp_machine_type": _text,
    "strict": _flag,
    "pin_from": _text,
    "zones": _pins("zone (AZ ID or GCP zone)"),
    "images": _pins("image id"),
    "gcp_project": _text,
    "aws_profile": _text,
}


def sweep_request(source: str, name: str, settings: dict[str, object]) -> SweepRequest:
    """A profile's sweep keys as the SweepRequest `sweep` would build from the same
    flags; a cloud profile pins what its previous sweep ran on unless it says
    `pin_from`. Every problem is one line naming the key."""
    values: dict[str, Any] = {}
    for key in SELECTION_KEYS + PARAM_KEYS + RUN_KEYS + CLOUD_KEYS:
        if key in settings:
            try:
                values[key] = _READ[key](settings[key])
                most = ceiling(key)
                if _READ[key] is _integer and abs(values[key]) > most:
                    raise UserError(f"{values[key]} is out of range (at most {most:,})")
            except UserError as e:
                raise _fail(source, name, key, str(e)) from None

    def given(keys: tuple[str, ...]) -> dict[str, Any]:
        return {k: values[k] for k in keys if k in values}

    step = "selection"
    try:
        selection = selection_spec(**given(SELECTION_KEYS))
        step = "tests"
        params = params_spec(**given(PARAM_KEYS))
        step = "backend"
        run = RunOptions(**given(RUN_KEYS))
        cloud = given(CLOUD_KEYS)
        if is_emulated(run.backend) and cloud:
            step = next(iter(cloud))
            raise UserError(f"applies to a cloud backend (aws, gcp or cloud), not {run.backend}")
        if is_cloud(run.backend):
            cloud.setdefault("pin_from", PIN_PREVIOUS)
        request = SweepRequest(
            selection=selection,
            params=params,
            run=run,
            cloud=CloudFlags(**cloud) if cloud else None,
        )
    except UserError as e:
        raise _fail(source, name, _key_of(e, step), str(e)) from None
    return request


def _key_of(error: UserError, step: str) -> str:
    """The key a check's message is about: the flag it names (--min-km is min_km)."""
    flag = re.search(r"--([a-z][a-z-]*)", str(error))
    return flag.group(1).replace("-", "_") if flag else step


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
    request = sweep_request(source, name, settings)
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
        request=request,
    )
    if publish is not None:
        from orchestrator.publish import parse_target

        try:
            parse_target(str(publish))
            if "://" in str(publish):  # it reaches a workflow's env: a bucket's grammar
                bucket_url(str(publish), "publish:")
        except UserError as e:
            raise _fail(source, name, "publish", str(e)) from None
    if catalog is not None:
        check_profile_sweep(profile, catalog, source)
    return profile


def check_profile_sweep(profile: Profile, catalog: Catalog, source: str = DEFAULT_FILE) -> None:
    """The profile's selection against the catalog, as `sweep` would check it; an empty
    selection is an error. The cloud flags that need no cloud are checked too (its
    pins: at run, from the ledger)."""
    from dataclasses import replace

    from orchestrator.clouds import cloud_options_from, require_sdks

    request = profile.request
    step = "selection"
    try:
        selection = check_selection(catalog, request.selection, profile.backend, lambda _m: None)
        step = "backend"
        backend = backend_info(profile.backend)
        if not backend.emulated:  # the SDKs its runs need, as a sweep checks them
            require_sdks(backend.clouds)
        if request.cloud is not None:
            cloud_options_from(replace(request.cloud, pin_from=None), Path("."))
    except UserError as e:
        raise _fail(source, profile.name, _key_of(e, step), str(e)) from None
    if not selection.pairs:
        raise _fail(source, profile.name, "selection", "selects no pair of regions: widen it")


def write_sample(path: Path, force: bool = False) -> None:
    """Write the sample profiles (the package's schedules.yaml) to `path`; a file already
    there is kept unless `force` (then replaced whole; a symlink or a folder never is)."""
    from orchestrator.results import write_atomic

    path = Path(path)
    if (path.exists() or path.is_symlink()) and not force:
        raise UserError(
            f"{path} exists: keeping it; pass --force to replace it with the sample "
            "(its profiles are lost)"
        )
    write_atomic(path, SAMPLE_SCHEDULES.read_text(encoding="utf-8"))


def load_profiles(path: Path, catalog: Catalog | None = None) -> dict[str, Profile]:
    path = Path(path)
    try:
        data = load_yaml(path, "profiles file")
    except FileNotFoundError:
        raise ProfileError(
            f"{path}: no such file: 'interregion schedule init --file {shell_word(path)}' "
            f"writes a sample (profiles: {DOCS / 'scheduled-sweeps.md'})"
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


def profile_named(path: Path, name: str) -> Profile:
    """A profile of the file `path`, its selection checked against the region catalog."""
    from orchestrator.model import load_catalog

    return get_profile(path, name, load_catalog())


def get_profile(path: Path, name: str, catalog: Catalog | None = None) -> Profile:
    profiles = load_profiles(path, catalog)
    if name not in profiles:
        raise ProfileError(f"{path}: no profile '{name}' (known: {', '.join(sorted(profiles))})")
    return profiles[name]
