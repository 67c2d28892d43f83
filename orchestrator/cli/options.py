"""What the commands share: `UserPath`, the type of every path option; the options several
commands declare, and their reading into the library's types (`*_from`, each naming every
option it reads: a KeyError here, never a default taken in silence; the types imported only
then, not by --help); and the --json output (docs/development.md: its envelope).
"""

from __future__ import annotations

import inspect
import json
import math
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from orchestrator.core import (
    CATALOG,
    RESULTS,
    SCHEDULES,
    UserError,
    control_character_problem,
    iso,
    parse_since,
    utc_now,
)
from orchestrator.model import BACKEND_NAMES, CLOUDS, DEFAULT_BACKEND, LOCAL_MAX_CONCURRENT
from orchestrator.results import NETWORK_TIERS, TestParams

if TYPE_CHECKING:  # what a command runs with, imported when it runs: not its --help's cost
    from orchestrator.clouds import CloudFlags
    from orchestrator.plan import SelectionSpec
    from orchestrator.sweep import Emulation, SweepRequest

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
C = TypeVar("C", bound=click.Command)
option = click.option
SCHEMA = "interregion/v1"


class UserPath(click.Path):
    """click.Path that returns an absolute pathlib.Path (nothing downstream, e.g. Terraform
    in another folder, sees a relative one) and refuses a control character (a newline
    would start a new line in a unit file or an inventory)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("path_type", Path)
        super().__init__(**kwargs)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = os.fsdecode(value) if isinstance(value, str | bytes | os.PathLike) else value
        if isinstance(text, str):
            problem = control_character_problem(text)
            if problem:
                self.fail(f"{text!r} {problem}", param, ctx)
        checked = super().convert(value, param, ctx)
        return Path(os.path.abspath(os.fsdecode(checked)))


def folder_or_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """The callback of `publish --to`: a folder made absolute as by UserPath, a URL as is."""
    if value is None or "://" in value or not value.strip():
        return value  # an empty value is the command's own one-line error
    problem = control_character_problem(value)
    if problem:
        raise click.BadParameter(f"{value!r} {problem}", ctx, param)
    return os.path.abspath(value)


class FiniteFloat(click.ParamType):
    """A number that is neither infinite nor NaN (click's float takes "inf" and "nan":
    `--budget-usd inf` would be a budget nothing exceeds)."""

    name = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


FINITE = FiniteFloat()


def utc_time(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    """The callback of `--since`: a UTC date or time as an aware UTC datetime (parse_since)."""
    return None if value is None else parse_since(value)


def examples(*lines: str) -> Callable[[C], C]:
    """A command's examples, the end of its --help (its epilog; a line with a newline goes
    on, indented, on the next)."""

    def add(command: C) -> C:
        shown = "\n".join("  " + line.replace("\n", "\n  ") for line in lines)
        command.epilog = f"\b\nExample{'s' if len(lines) > 1 else ''}:\n{shown}"
        return command

    return add


def stack(f: F, options: list[Callable[[F], F]]) -> F:
    """`f` with `options` added, the first one first in its help."""
    for one in reversed(options):
        f = one(f)
    return f


# The common options, one variable each whatever the command (docs/development.md)
ENVVARS = {"--results": "INTERREGION_RESULTS", "--backend": "INTERREGION_BACKEND",
           "--catalog": "INTERREGION_CATALOG", "--file": "INTERREGION_SCHEDULES"}  # fmt: skip


def common_option(flag: str, *names: str, **kwargs: Any) -> Callable[[F], F]:
    """One of the common options, read from its variable (ENVVARS) when not given."""
    return option(flag, *names, envvar=ENVVARS[flag], show_envvar=True, **kwargs)


catalog_option = common_option("--catalog", type=UserPath(dir_okay=False),
                               default=CATALOG, show_default=True,
                               help="Region catalog file.")  # fmt: skip
results_option = common_option("--results", type=UserPath(file_okay=False), default=RESULTS,
                               show_default=True,
                               help="Folder of the sweeps and history.duckdb.")  # fmt: skip
file_option = common_option("--file", "schedules", type=UserPath(dir_okay=False),
                            default=SCHEDULES, show_default=SCHEDULES.name,
                            help="The profiles file.")  # fmt: skip
include_flagged_option = option(
    "--include-flagged", is_flag=True,
    help="Keep the tests with flags (below the fibre floor, asymmetric, ...; docs/results.md); "
    "by default a test's RTT or throughput its flags invalidate is left out and counted.",
)  # fmt: skip
no_report_option = option("--no-report", is_flag=True, help="Do not build the report at the end.")


def selection_options(f: F) -> F:
    """The options that choose a sweep's regions and pairs."""
    return stack(f, [*_filters(), *_choosers()])


def filter_options(f: F) -> F:
    """The selection options that filter pairs already measured; those that choose regions
    for a sweep are hidden, taken only to be refused in one line (`filters_from`)."""
    return stack(f, [*_filters(), *_choosers(hidden=True)])


def _filters() -> list[Callable[[F], F]]:
    return [
        option("--clouds", default=",".join(CLOUDS), show_default=True, metavar="LIST",
               help="Clouds to include, comma-separated."),
        option("--regions", default=None, metavar="LIST",
               help="Only these regions, e.g. aws:us-east-1,gcp:europe-west1."),
        option("--exclude", default=None, metavar="LIST", help="Leave these regions out."),
        option("--no-opt-in", is_flag=True,
               help="Skip AWS opt-in regions (they must be enabled per account)."),
        option("--cloud-pair", multiple=True, metavar="SRC:DST",
               help="Directed cloud pair, repeatable, e.g. aws:gcp. Default: all four."),
        option("--min-km", type=FINITE, default=None, help="Shortest pair distance (inclusive)."),
        option("--max-km", type=FINITE, default=None, help="Longest pair distance (inclusive)."),
        option("--pairs", default=None, metavar="LIST",
               help="Explicit pairs a/b, comma-separated, e.g. aws:us-east-1/gcp:us-east4 "
               "(both directions unless --cloud-pair narrows them)."),
    ]  # fmt: skip


def _choosers(hidden: bool = False) -> list[Callable[[F], F]]:
    return [
        option("--max-regions", hidden=hidden, type=int, default=None, metavar="N",
               help="At most N regions whose pairs spread over the distance bands "
               "(<1000, 1000-3000, 3000-8000, >8000 km), the globe and both clouds."),
        option("--spread", hidden=hidden, type=click.Choice(["bands", "globe"]), default=None,
               help="How --max-regions chooses: bands (default; every distance band, then "
               "the globe) or globe (farthest-point sampling alone, the older choice)."),
        option("--opt-in", hidden=hidden, is_flag=True, default=None,
               help="Let --max-regions choose AWS opt-in regions too (each must be enabled "
               "for the account first; without this flag it leaves them out)."),
    ]  # fmt: skip


def test_params_options(f: F) -> F:
    """The options of what each test runs."""
    d = TestParams()
    return stack(f, [
        option("--pings", type=int, default=d.pings, show_default=True, help="Pings per pair."),
        option("--ping-interval", type=FINITE, default=d.ping_interval_s, show_default=True,
               help="Seconds between pings."),
        option("--duration", type=click.IntRange(1), default=d.duration_s, show_default=True,
               help="iperf3 seconds measured per direction (whole seconds, at most 86400)."),
        option("--omit", type=click.IntRange(0), default=d.omit_s, show_default=True,
               help="iperf3 seconds skipped at the start (TCP slow start; whole seconds, "
               "at most 60)."),
        option("--streams", type=int, default=None,
               help="Parallel TCP streams (iperf3 -P) of the capacity measure  "
               f"[default: {d.streams}]; single_stream runs one."),
        option("--window", default=None,
               help="TCP window (iperf3 -w), e.g. 4M or 256k (binary units, at most 512M)."),
        option("--congestion", default=None,
               help="TCP congestion control (iperf3 -C), e.g. cubic."),
        option("--tests", default=",".join(d.tests), show_default=True, metavar="LIST",
               help="What each pair runs: ping, throughput or ping,throughput "
               "(ping alone: a latency-only sweep, no iperf3 time or egress)."),
        option("--measures", default=",".join(d.measures), show_default=True, metavar="LIST",
               help="Throughput measures each pair runs: single_stream (one stream, the "
               "hosts' default settings), capacity (--streams streams, buffers sized for "
               "the BDP) or single_stream,capacity."),
    ])  # fmt: skip


def run_options(f: F) -> F:
    """Where and on what the sweep runs, how many slots per round (`plan.make_plan`)."""
    return stack(f, [
        common_option("--backend", type=click.Choice(BACKEND_NAMES), default=DEFAULT_BACKEND,
                      show_default=True,
                      help="Where the hosts run: local = the emulated cloud on this machine."),
        option("--max-concurrent", type=click.IntRange(min=1), default=None, metavar="K",
               help="At most K slots (region pairs) per round, so at most K iperf3 tests "
               "at once: a slot runs its two directions one after the other "
               f"(default: {LOCAL_MAX_CONCURRENT} on local, no cap on the clouds)."),
        option("--sequential", is_flag=True, help="One slot per round: one test at a time."),
        option("--emulated-type", metavar="TYPE", default=None,
               help="On local: the hosts' emulated machine type, e.g. emulated-t3.small (a "
               "burstable host: a token-bucket allowance under the cap; default: the "
               "emulator's cap alone)."),
        option("--controller", metavar="REGION", default=None,
               help="Where this machine (the controller) stands, e.g. aws:us-east-1: the "
               "plan's round overhead uses its modelled RTT to the farthest host, and on "
               "local the emulator delays controller-host traffic by it (default: next to "
               "the hosts)."),
    ])  # fmt: skip


def account_options(f: F) -> F:
    return stack(f, [
        option("--aws-profile", default=None, help="AWS profile (default: AWS_PROFILE)."),
        option("--gcp-project", default=None,
               help="GCP project (default: GOOGLE_CLOUD_PROJECT or ADC)."),
    ])  # fmt: skip


def cloud_options(f: F) -> F:
    """The flags of a sweep on the real clouds."""
    return stack(f, [
        account_options,  # first in the help
        option("--operator-cidr", default=None, metavar="CIDR",
               help="Address SSH is opened to (default: your detected public address /32)."),
        option("--ttl", default=None, metavar="DURATION",
               help="Dead-man switch: hosts delete themselves after this (e.g. 3h; "
               "default: (the estimate + 15 min) x 1.5, 30 min to 2 days)."),
        option("--network-tier", type=click.Choice(NETWORK_TIERS, case_sensitive=False),
               default="premium", show_default=True,
               help="GCP network tier of the hosts' addresses."),
        option("--aws-machine-type", default=None, help="Override the catalog's AWS type."),
        option("--gcp-machine-type", default=None, help="Override the catalog's GCP type."),
        option("--strict", is_flag=True,
               help="Fail when a region fails preflight instead of dropping it with a warning."),
        option("--pin-from", default=None, metavar="SWEEP_ID",
               help="Run each host in the zone and on the image its region's host had in that "
               "earlier sweep (read from its hosts.json)."),
    ])  # fmt: skip


def perturb_options(f: F) -> F:
    """--perturb (repeatable) and --perturb-file: changes set on purpose (emulator.perturb)."""
    return stack(f, [
        option("--perturb", multiple=True, metavar="TARGET,KEY=VALUE",
               help="A change on the emulated network: TARGET is A/B (both ways), 'A>B' or a "
               "host A; KEY is delay_ms (extra one-way), loss_pct or rate_mbit. Repeatable. "
               "E.g. aws:us-east-1/gcp:europe-west1,delay_ms=10."),
        option("--perturb-file", type=UserPath(dir_okay=False), default=None,
               help="A YAML file of perturbations (a list of target plus delay_ms, loss_pct, "
               "rate_mbit)."),
    ])  # fmt: skip


def emulation_options(f: F) -> F:
    """Those of a command that starts an emulated cloud of its own (emulation_from)."""
    return stack(f, [perturb_options, option(
        "--emulation-seed", type=click.IntRange(min=0), default=None,
        help="Local: seed of the emulated cloud's run-to-run variation (default: from the "
        "id; recorded)."),
    ])  # fmt: skip


def ask_options(f: F) -> F:
    """--yes and --budget-usd of a command that provisions (sweep, study tcp)."""
    from orchestrator.plan import BIG_HOSTS, BIG_MINUTES, DEFAULT_BUDGET_USD  # option_names

    return stack(f, [
        option("--yes", is_flag=True,
               help=f"Do not ask, even above the budget or past {BIG_HOSTS} hosts or "
               f"{BIG_MINUTES} min (needed then when not on a terminal)."),
        option("--budget-usd", type=FINITE, default=DEFAULT_BUDGET_USD, show_default=True,
               help="Ask before provisioning when the estimated cost is above this."),
    ])  # fmt: skip


# ---- a command's parameters -> the library's types ------------------------------------


def built(build: Callable[..., T], values: Mapping[str, Any], leave: str = "") -> T:
    """`build` given the command's value of each of its arguments but those in `leave` (no
    option sets them): a KeyError for one the command lacks, never a default taken in silence."""
    names = [name for name in inspect.signature(build).parameters if name not in leave.split()]
    return build(**{name: values[name] for name in names})


def selection_from(values: Mapping[str, Any]) -> SelectionSpec:
    """The SelectionSpec of a command with selection_options or filter_options."""
    from orchestrator.plan import selection_spec

    return built(selection_spec, values)


def filters_from(values: Mapping[str, Any], what: str) -> SelectionSpec:
    """The SelectionSpec of a command with filter_options (`what`: "a report", "a matrix"),
    refusing the first of --max-regions, --spread, --opt-in it was given."""
    refuse_given(values, ["max_regions", "spread", "opt_in"],
                 "{flag} chooses regions for a sweep: it does not filter " + what)  # fmt: skip
    return selection_from(values)


def emulation_from(values: Mapping[str, Any]) -> Emulation | None:
    """The Emulation of a command with emulation_options (None: none asked for)."""
    from orchestrator.emulator import gather
    from orchestrator.sweep import Emulation

    return Emulation.given(values["emulation_seed"],
                           gather(values["perturb"], values["perturb_file"]))  # fmt: skip


def cloud_flags_from(values: Mapping[str, Any]) -> CloudFlags:
    """The CloudFlags of a command with cloud_options (defaults included)."""
    from orchestrator.clouds import CloudFlags

    return built(CloudFlags, values, leave="zones images")  # a profile's, by region


NOT_DEFAULT = tuple(s for s in ParameterSource if s is not ParameterSource.DEFAULT)


def given_flag(values: Mapping[str, Any], names: Iterable[str],
               sources: Collection[ParameterSource] = NOT_DEFAULT) -> str | None:  # fmt: skip
    """The first option of `names` the current command has and was given from `sources`
    (by default: anywhere but its default), as its flag (`--max-regions`); None: none."""
    ctx = click.get_current_context()
    found = [n for n in names if n in values and ctx.get_parameter_source(n) in sources]
    return "--" + found[0].replace("_", "-") if found else None


def refuse_given(values: Mapping[str, Any], names: Iterable[str], why: str,
                 sources: Collection[ParameterSource] = NOT_DEFAULT) -> None:  # fmt: skip
    """The one-line error `why` (its `{flag}`: the flag) when the current command was given
    one of the options `names` from `sources` (given_flag)."""
    if flag := given_flag(values, names, sources):
        raise UserError(why.format(flag=flag))


def cloud_flags_given(values: Mapping[str, Any]) -> CloudFlags | None:
    """The cloud flags of the current command; None when it has none (`plan --strict` is its
    own) or none was given (defaults alone change nothing)."""
    ctx = click.get_current_context()
    flags: list[click.Parameter] = cloud_options(lambda: None).__click_params__  # type: ignore[attr-defined]
    names = [p.name for p in flags if p.name]
    if not set(names) <= {p.name for p in ctx.command.params} or not given_flag(values, names):
        return None
    return cloud_flags_from(values)


def request_from(values: Mapping[str, Any], emulation: Emulation | None) -> SweepRequest:
    """The SweepRequest of `sweep`, `study tcp`, `plan` or `mesh up`, with `emulation` (the
    default TestParams for a command without test_params_options)."""
    from orchestrator.plan import RunOptions, params_spec
    from orchestrator.sweep import SweepRequest

    params = built(params_spec, values) if "pings" in values else TestParams()
    return SweepRequest(selection=selection_from(values), params=params,
                        run=built(RunOptions, values), cloud=cloud_flags_given(values),
                        emulation=emulation)  # fmt: skip


def json_flag(help: str) -> Callable[[F], F]:
    """`--json` (as `as_json`) of a command that prints a result's own JSON (echo_result)."""
    return option("--json", "as_json", is_flag=True, help=help)


def json_option(f: F) -> F:
    """`--json` of a listing command: the answer in the versioned envelope (emit)."""
    return json_flag(f"Print JSON in the {SCHEMA} envelope.")(f)


def emit(data: Any) -> None:
    """Print `data` in the envelope, named after the running command (`regions sync`)."""
    command = " ".join(click.get_current_context().command_path.split()[1:])  # no program name
    doc = {"schema": SCHEMA, "command": command, "generated_at": iso(utc_now()), "data": data}
    click.echo(json.dumps(doc, indent=2, default=str))


def echo_result(found: Any, as_json: bool, render: Callable[[Any], Iterable[Any]],
                indent: int = 1, width: int = 0, markup: bool = False) -> None:  # fmt: skip
    """Print `found.to_json()` with `as_json`; else `render(found)`: text lines, or with a
    `width` the parts (lines and tables) text.print_parts draws."""
    if as_json:
        click.echo(json.dumps(found.to_json(), indent=indent))
    elif width:
        from orchestrator.text import print_parts

        print_parts(render(found), width, markup=markup)
    else:
        click.echo("\n".join(render(found)))


def echo_listing(data: Any, as_json: bool, lines: Iterable[str]) -> None:
    """Print `data` in the envelope with `as_json` (emit), else the text `lines`."""
    if as_json:
        emit(data)
    else:
        click.echo("\n".join(lines))
