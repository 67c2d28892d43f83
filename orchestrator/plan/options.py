"""Options shared by plan, sweep and report: the selection, the test parameters
and where and how concurrently a sweep runs (`run_options`).

`selection_options` adds the selection flags to a command and
`spec_from_options(**kwargs)` turns them into a SelectionSpec (extra keyword
arguments are ignored, so a command can pass all of its own). Likewise
`test_params_options` and `params_from_options`. Malformed values are
one-line UserErrors that show the expected form.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, TypeVar

import click

from orchestrator.core.errors import UserError
from orchestrator.model import backends
from orchestrator.model.backends import LOCAL_MAX_CONCURRENT
from orchestrator.model.catalog import CLOUDS, Catalog
from orchestrator.plan.selection import Selection, SelectionSpec, max_regions_note, select
from orchestrator.plan.sweep_plan import TestParams, parse_measures
from orchestrator.results.schema import CAPACITY

F = TypeVar("F", bound=Callable[..., Any])


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


def _apply(f: F, options: list[Callable[[F], F]]) -> F:
    for option in reversed(options):
        f = option(f)
    return f


def selection_options(f: F) -> F:
    """Add --clouds, --regions, --exclude, --no-opt-in, --cloud-pair, --min-km,
    --max-km, --pairs, --max-regions, --spread and --opt-in to a click command."""
    return _apply(f, [*_filters(), *_choosers()])


def filter_options(f: F) -> F:
    """The selection options that filter pairs already measured (a report). --max-regions
    and --spread choose regions for a sweep: left out of the help, and taken only so the
    command can say that in one line (`choosers_given`)."""
    return _apply(f, [*_filters(), *_choosers(hidden=True)])


def choosers_given(selection: dict[str, Any]) -> str | None:
    """The first of --max-regions, --spread, --opt-in given to a command that only filters."""
    for name in ("max_regions", "spread", "opt_in"):
        if selection.get(name) is not None:
            return "--" + name.replace("_", "-")
    return None


def _filters() -> list[Callable[[F], F]]:
    return [
        click.option(
            "--clouds",
            default=",".join(CLOUDS),
            show_default=True,
            metavar="LIST",
            help="Clouds to include, comma-separated.",
        ),
        click.option(
            "--regions",
            default=None,
            metavar="LIST",
            help="Only these regions, e.g. aws:us-east-1,gcp:europe-west1.",
        ),
        click.option("--exclude", default=None, metavar="LIST", help="Leave these regions out."),
        click.option(
            "--no-opt-in",
            is_flag=True,
            help="Skip AWS opt-in regions (they must be enabled per account).",
        ),
        click.option(
            "--cloud-pair",
            multiple=True,
            metavar="SRC:DST",
            help="Directed cloud pair, repeatable, e.g. aws:gcp. Default: all four.",
        ),
        click.option(
            "--min-km", type=FINITE, default=None, help="Shortest pair distance (inclusive)."
        ),
        click.option(
            "--max-km", type=FINITE, default=None, help="Longest pair distance (inclusive)."
        ),
        click.option(
            "--pairs",
            default=None,
            metavar="LIST",
            help="Explicit pairs a/b, comma-separated, e.g. aws:us-east-1/gcp:us-east4 "
            "(both directions unless --cloud-pair narrows them).",
        ),
    ]


def _choosers(hidden: bool = False) -> list[Callable[[F], F]]:
    return [
        click.option(
            "--max-regions",
            hidden=hidden,
            type=int,
            default=None,
            metavar="N",
            help="At most N regions whose pairs spread over the distance bands "
            "(<1000, 1000-3000, 3000-8000, >8000 km), the globe and both clouds.",
        ),
        click.option(
            "--spread",
            hidden=hidden,
            type=click.Choice(["bands", "globe"]),
            default=None,
            help="How --max-regions chooses: bands (default; every distance band, then "
            "the globe) or globe (farthest-point sampling alone, the older choice).",
        ),
        click.option(
            "--opt-in",
            hidden=hidden,
            is_flag=True,
            default=None,
            help="Let --max-regions choose AWS opt-in regions too (each must be enabled "
            "for the account first; without this flag it leaves them out).",
        ),
    ]


def test_params_options(f: F) -> F:
    """Add --pings, --ping-interval, --duration, --omit, --streams, --window,
    --congestion, --tests and --measures (what each test runs) to a click command."""
    defaults = TestParams()
    return _apply(
        f,
        [
            click.option(
                "--pings",
                type=int,
                default=defaults.pings,
                show_default=True,
                help="Pings per pair.",
            ),
            click.option(
                "--ping-interval",
                type=FINITE,
                default=defaults.ping_interval_s,
                show_default=True,
                help="Seconds between pings.",
            ),
            click.option(
                "--duration",
                type=click.IntRange(1),
                default=defaults.duration_s,
                show_default=True,
                help="iperf3 seconds measured per direction (whole seconds, at most 86400).",
            ),
            click.option(
                "--omit",
                type=click.IntRange(0),
                default=defaults.omit_s,
                show_default=True,
                help="iperf3 seconds skipped at the start (TCP slow start; whole seconds, "
                "at most 60).",
            ),
            click.option(
                "--streams",
                type=int,
                default=None,
                help="Parallel TCP streams (iperf3 -P) of the capacity measure  "
                f"[default: {defaults.streams}]; single_stream runs one.",
            ),
            click.option(
                "--window",
                default=None,
                help="TCP window (iperf3 -w), e.g. 4M or 256k (binary units, at most 512M).",
            ),
            click.option(
                "--congestion", default=None, help="TCP congestion control (iperf3 -C), e.g. cubic."
            ),
            click.option(
                "--tests",
                default=",".join(defaults.tests),
                show_default=True,
                metavar="LIST",
                help="What each pair runs: ping, throughput or ping,throughput "
                "(ping alone: a latency-only sweep, no iperf3 time or egress).",
            ),
            click.option(
                "--measures",
                default=",".join(defaults.measures),
                show_default=True,
                metavar="LIST",
                help="Throughput measures each pair runs: single_stream (one stream, the "
                "hosts' default settings), capacity (--streams streams, buffers sized for "
                "the BDP) or single_stream,capacity.",
            ),
        ],
    )


def run_options(f: F) -> F:
    """Add --backend, --max-concurrent, --sequential, --emulated-type and --controller
    (where and on what the sweep runs, how many slots per round) to a click command;
    `plan.make_plan` applies them."""
    return _apply(
        f,
        [
            click.option(
                "--backend",
                type=click.Choice(backends.NAMES),
                default=backends.DEFAULT,
                show_default=True,
                help="Where the hosts run: local = the emulated cloud on this machine.",
            ),
            click.option(
                "--max-concurrent",
                type=click.IntRange(min=1),
                default=None,
                metavar="K",
                help="At most K slots (region pairs) per round, so at most K iperf3 tests "
                "at once: a slot runs its two directions one after the other "
                f"(default: {LOCAL_MAX_CONCURRENT} on local, no cap on the clouds).",
            ),
            click.option(
                "--sequential", is_flag=True, help="One slot per round: one test at a time."
            ),
            click.option(
                "--emulated-type",
                metavar="TYPE",
                default=None,
                help="On local: the hosts' emulated machine type, e.g. emulated-t3.small (a "
                "burstable host: a token-bucket allowance under the cap; default: the "
                "emulator's cap alone).",
            ),
            click.option(
                "--controller",
                metavar="REGION",
                default=None,
                help="Where this machine (the controller) stands, e.g. aws:us-east-1: the "
                "plan's round overhead uses its modelled RTT to the farthest host, and on "
                "local the emulator delays controller-host traffic by it (default: next to "
                "the hosts).",
            ),
        ],
    )


def split_list(value: str | None) -> tuple[str, ...]:
    """'a, b,,c' -> ('a', 'b', 'c')."""
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def option_list(value: str | None, flag: str, example: str) -> tuple[str, ...]:
    """The items of a comma-separated option; None (not given) is ().

    A value given but empty ('', ',,') is an error: read as "no filter" it would
    select the whole catalog, the most expensive sweep there is.
    """
    if value is None:
        return ()
    items = split_list(value)
    if not items:
        raise UserError(
            f"{flag} {value!r} names nothing: give a list like {example} or leave it out"
        )
    return items


def parse_cloud_pair(text: str) -> tuple[str, str]:
    src, sep, dst = text.strip().lower().partition(":")
    if not sep or not src or not dst or ":" in dst:
        raise UserError(f"--cloud-pair '{text}': write it as SRC:DST, e.g. aws:gcp")
    for cloud in (src, dst):
        if cloud not in CLOUDS:
            raise UserError(
                f"--cloud-pair '{text}': unknown cloud '{cloud}' (known: {', '.join(CLOUDS)})"
            )
    return (src, dst)


def parse_pairs(text: str | None) -> tuple[tuple[str, str], ...]:
    pairs = []
    for item in option_list(text, "--pairs", "aws:us-east-1/gcp:us-east4"):
        a, sep, b = item.partition("/")
        if not sep or ":" not in a or ":" not in b or "/" in b:
            raise UserError(
                f"--pairs '{item}': write each pair as cloud:region/cloud:region, "
                "e.g. aws:us-east-1/gcp:us-east4"
            )
        pairs.append((a.strip(), b.strip()))
    return tuple(pairs)


def parse_clouds(text: str | None, flag: str) -> tuple[str, ...]:
    """Cloud names of a --clouds-like option, lower case, each once; None (not given) is ()."""
    clouds = tuple(c.lower() for c in option_list(text, flag, ",".join(CLOUDS)))
    for cloud in clouds:
        if cloud not in CLOUDS:
            raise UserError(f"{flag} '{cloud}': unknown cloud (known: {', '.join(CLOUDS)})")
    return tuple(dict.fromkeys(clouds))


def spec_from_options(**kwargs: Any) -> SelectionSpec:
    """A SelectionSpec from the keyword arguments click passes; others are ignored."""
    clouds = parse_clouds(kwargs.get("clouds"), "--clouds") or CLOUDS
    return SelectionSpec(
        clouds=clouds,
        regions=option_list(kwargs.get("regions"), "--regions", "aws:us-east-1,gcp:us-east4"),
        exclude=option_list(kwargs.get("exclude"), "--exclude", "aws:me-south-1"),
        no_opt_in=bool(kwargs.get("no_opt_in")),
        cloud_pairs=tuple(
            dict.fromkeys(parse_cloud_pair(t) for t in kwargs.get("cloud_pair") or ())
        ),
        min_km=kwargs.get("min_km"),
        max_km=kwargs.get("max_km"),
        pairs=parse_pairs(kwargs.get("pairs")),
        max_regions=kwargs.get("max_regions"),
        spread=kwargs.get("spread") or "bands",
        opt_in=bool(kwargs.get("opt_in")),
    )


def backend_problem(backend: str, spec: SelectionSpec, selection: Selection) -> str | None:
    """Why a one-cloud backend cannot host the selection, with advice that fixes it; None if it can.

    The advice depends on how the other cloud's regions got in: named explicitly,
    the only cloud of --clouds, or one of several clouds.
    """
    if backend not in CLOUDS:
        return None
    foreign = [r for r in selection.regions if r.cloud != backend]
    if not foreign:
        return None
    other = foreign[0].cloud
    named = {k for k in spec.regions} | {k for pair in spec.pairs for k in pair}
    explicit = [r.key for r in foreign if r.key in named]
    if explicit:
        return (
            f"--backend {backend} cannot host {explicit[0]}, named in --regions/--pairs: "
            f"leave the {other} regions out, or use --backend cloud for both clouds"
        )
    either = f"use --backend {other} (or cloud)"
    if backend not in spec.clouds:
        return (
            f"--backend {backend} cannot host {other} regions, and --clouds "
            f"{','.join(spec.clouds)} has no {backend}: {either}, or select {backend} "
            f"regions with --clouds {backend}"
        )
    same = f"--cloud-pair {backend}:{backend}"
    if len(foreign) == len(selection.regions):
        return (
            f"--backend {backend} cannot host {other} regions, the only ones --cloud-pair "
            f"leaves: {either}, or {same}"
        )
    if any(other in cloud_pair for cloud_pair in spec.cloud_pairs):
        keep = same
    else:
        keep = f"--clouds {backend}"
    return (
        f"--backend {backend} cannot host {foreign[0].key} ({len(foreign)} {other} regions "
        f"selected): keep to {backend} with {keep}, or use --backend cloud for both clouds"
    )


def check_selection(
    catalog: Catalog, spec: SelectionSpec, backend: str | None, note: Callable[[str], None]
) -> Selection:
    """Select, refuse a backend that cannot host the selection, and `note` what the
    user should know before anything is spent (--max-regions above what is left)."""
    selection = select(catalog, spec)
    problem = backend_problem(backend, spec, selection) if backend else None
    if problem:
        raise UserError(problem)
    text = max_regions_note(spec, selection)
    if text:
        note(text)
    return selection


def params_from_options(**kwargs: Any) -> TestParams:
    """TestParams from the keyword arguments click passes; others are ignored."""
    defaults = TestParams()
    measures = parse_measures(
        defaults.measures if kwargs.get("measures") is None else kwargs["measures"]
    )
    streams = kwargs.get("streams")
    if streams is not None and CAPACITY not in measures:
        raise UserError(
            f"--streams {streams} sets the capacity measure's streams, and single_stream "
            "runs one: add --measures single_stream,capacity (or capacity)"
        )
    return TestParams(
        pings=kwargs.get("pings", defaults.pings),
        ping_interval_s=kwargs.get("ping_interval", defaults.ping_interval_s),
        duration_s=kwargs.get("duration", defaults.duration_s),
        omit_s=kwargs.get("omit", defaults.omit_s),
        streams=defaults.streams if streams is None else streams,
        window=kwargs.get("window"),
        congestion=kwargs.get("congestion"),
        # given but empty is an error (parse_tests), never "the default"
        tests=defaults.tests if kwargs.get("tests") is None else kwargs["tests"],
        measures=measures,
    )
