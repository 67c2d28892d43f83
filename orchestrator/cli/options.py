"""The flags shared by plan, sweep, study, report, history and preflight (`*_options`,
`catalog_option`, `catalog_read_option`, `results_option`), and their reading into the
library's types (`*_from`; `request_from`: the SweepRequest of a new sweep or study): click
lives here, the library takes the types.

Each reader names every option it reads: a command without one of them is a KeyError
here, never a default taken in silence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from orchestrator.cli.pathopt import UserPath
from orchestrator.clouds import NETWORK_TIERS, CloudFlags
from orchestrator.core import CATALOG, RESULTS, UserError, parse_since
from orchestrator.model import BACKEND_NAMES, CLOUDS, DEFAULT_BACKEND, LOCAL_MAX_CONCURRENT
from orchestrator.plan import RunOptions, SelectionSpec, TestParams, params_spec, selection_spec

if TYPE_CHECKING:  # what a command runs with, imported when it runs: not its --help's cost
    from orchestrator.sweep import Emulation, SweepRequest

F = TypeVar("F", bound=Callable[..., Any])
option = click.option


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


class UtcTime(click.ParamType):
    """A `--since` value (a UTC date or time) as an aware UTC datetime (core.parse_since:
    a one-line error naming the value and the forms it takes)."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value if isinstance(value, datetime) else parse_since(str(value))


UTC_TIME = UtcTime()


def stack(f: F, options: list[Callable[[F], F]]) -> F:
    """`f` with `options` added, the first one first in its help."""
    for one in reversed(options):
        f = one(f)
    return f


catalog_option = option("--catalog", type=UserPath(dir_okay=False), default=CATALOG,
                        show_default="regions.yaml", help="Region catalog file.")  # fmt: skip


def selection_options(f: F) -> F:
    """Add --clouds, --regions, --exclude, --no-opt-in, --cloud-pair, --min-km,
    --max-km, --pairs, --max-regions and --spread to a click command."""
    return stack(f, [*_filters(), *_choosers()])


def filter_options(f: F) -> F:
    """The selection options that filter pairs already measured (a report). --max-regions
    and --spread choose regions for a sweep: left out of the help, and taken only so the
    command can say that in one line (`filters_from`)."""
    return stack(f, [*_filters(), *_choosers(hidden=True)])


def catalog_read_option(help: str) -> Callable[[F], F]:
    """--catalog (INTERREGION_CATALOG) of a command that reads the catalog as it is."""
    return option("--catalog", type=UserPath(dir_okay=False, exists=True), default=CATALOG,
                  show_default=True, help=help)  # fmt: skip


def results_option(help: str, name: str = "results") -> Callable[[F], F]:
    """--results (INTERREGION_RESULTS), as `name`: `help` says what the command reads there."""
    return option("--results", name, type=UserPath(file_okay=False), default=RESULTS,
                  show_default=True, help=help)  # fmt: skip


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
    """Add --pings, --ping-interval, --duration, --omit, --streams, --window,
    --congestion, --tests and --measures (what each test runs) to a click command."""
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
    """Add --backend, --max-concurrent, --sequential, --emulated-type and --controller
    (where and on what the sweep runs, how many slots per round) to a click command;
    `plan.make_plan` applies them."""
    return stack(f, [
        option("--backend", type=click.Choice(BACKEND_NAMES), default=DEFAULT_BACKEND,
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
    """Add the flags of a sweep on real clouds to a click command."""
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


# ---- a command's parameters -> the library's types ------------------------------------


def _named(values: Mapping[str, Any], names: str) -> dict[str, Any]:
    return {name: values[name] for name in names.split()}


def selection_from(values: Mapping[str, Any]) -> SelectionSpec:
    """The SelectionSpec of a command with selection_options or filter_options."""
    names = "clouds regions exclude no_opt_in cloud_pair min_km max_km pairs max_regions spread"
    return selection_spec(**_named(values, names), opt_in=bool(values.get("opt_in")))


def filters_from(values: Mapping[str, Any], what: str) -> SelectionSpec:
    """The SelectionSpec of a command with filter_options (`what`: "a report", "a matrix"),
    refusing the first of --max-regions, --spread, --opt-in it was given."""
    refuse_given(values, ["max_regions", "spread", "opt_in"],
                 "{flag} chooses regions for a sweep: it does not filter " + what)  # fmt: skip
    return selection_from(values)


def params_from(values: Mapping[str, Any]) -> TestParams:
    """The TestParams of a command with test_params_options."""
    names = "pings ping_interval duration omit streams window congestion tests measures"
    return params_spec(**_named(values, names))


def run_from(values: Mapping[str, Any]) -> RunOptions:
    """The RunOptions of a command with run_options."""
    names = "backend max_concurrent sequential emulated_type controller"
    return RunOptions(**_named(values, names))


def emulation_from(values: Mapping[str, Any]) -> Emulation | None:
    """The Emulation of a command with cli/sweep.py's emulation_options (None: none asked
    for)."""
    from orchestrator.emulator import gather
    from orchestrator.sweep import Emulation

    return Emulation.given(values["emulation_seed"],
                           gather(values["perturb"], values["perturb_file"]))  # fmt: skip


def cloud_flags_from(values: Mapping[str, Any]) -> CloudFlags:
    """The CloudFlags of a command with cloud_options (defaults included)."""
    names = ("operator_cidr ttl network_tier aws_machine_type gcp_machine_type strict pin_from "
             "gcp_project aws_profile")  # fmt: skip
    return CloudFlags(**_named(values, names))


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
    """The cloud flags of the current command, or None when none was given on the
    command line (or in the environment), or it has none (`plan --strict` is its own):
    defaults alone change nothing."""
    ctx = click.get_current_context()
    flags: list[click.Parameter] = cloud_options(lambda: None).__click_params__  # type: ignore[attr-defined]
    names = [p.name for p in flags if p.name]
    if not set(names) <= {p.name for p in ctx.command.params} or not given_flag(values, names):
        return None
    return cloud_flags_from(values)


def request_from(values: Mapping[str, Any], emulation: Emulation | None) -> SweepRequest:
    """The SweepRequest of `sweep`, `study tcp` or `plan` (selection, test parameters, run
    and cloud options), with the emulation its --perturb and --emulation-seed make."""
    from orchestrator.sweep import SweepRequest

    return SweepRequest(selection=selection_from(values), params=params_from(values),
                        run=run_from(values), cloud=cloud_flags_given(values),
                        emulation=emulation)  # fmt: skip
