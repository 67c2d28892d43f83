"""The options shared by plan, sweep, study and report, read into types: the selection
(`selection_spec`), the test parameters (`params_spec`) and where and how concurrently
a sweep runs (`RunOptions`).

Each takes its options by name (keyword-only, as the CLI and a profile spell them), so
a misspelt name is a TypeError where it is written, never a setting silently dropped.
Malformed values are one-line UserErrors that show the expected form. The click flags
that fill them live in `orchestrator.cli.options`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from orchestrator.core import UserError
from orchestrator.model import BACKEND_NAMES, CLOUDS, DEFAULT_BACKEND, Catalog
from orchestrator.plan.selection import Selection, SelectionSpec, max_regions_note, select
from orchestrator.results import CAPACITY, TestParams, parse_measures, parse_tests


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


def selection_spec(
    *,
    clouds: str | None = None,
    regions: str | None = None,
    exclude: str | None = None,
    no_opt_in: bool = False,
    cloud_pair: Sequence[str] = (),
    min_km: float | None = None,
    max_km: float | None = None,
    pairs: str | None = None,
    max_regions: int | None = None,
    spread: str | None = None,
    opt_in: bool = False,
) -> SelectionSpec:
    """A SelectionSpec from the selection options as given (comma-separated lists as text;
    None: not given)."""
    return SelectionSpec(
        clouds=parse_clouds(clouds, "--clouds") or CLOUDS,
        regions=option_list(regions, "--regions", "aws:us-east-1,gcp:us-east4"),
        exclude=option_list(exclude, "--exclude", "aws:me-south-1"),
        no_opt_in=bool(no_opt_in),
        cloud_pairs=tuple(dict.fromkeys(parse_cloud_pair(t) for t in cloud_pair)),
        min_km=min_km,
        max_km=max_km,
        pairs=parse_pairs(pairs),
        max_regions=max_regions,
        spread=spread or "bands",
        opt_in=bool(opt_in),
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


def params_spec(
    *,
    pings: int | None = None,
    ping_interval: float | None = None,
    duration: int | None = None,
    omit: int | None = None,
    streams: int | None = None,
    window: str | None = None,
    congestion: str | None = None,
    tests: str | None = None,
    measures: str | None = None,
) -> TestParams:
    """TestParams from the test options as given (None: not given, the default)."""
    defaults = TestParams()
    chosen = parse_measures(defaults.measures if measures is None else measures)
    if streams is not None and CAPACITY not in chosen:
        raise UserError(
            f"--streams {streams} sets the capacity measure's streams, and single_stream "
            "runs one: add --measures single_stream,capacity (or capacity)"
        )
    return TestParams(
        pings=defaults.pings if pings is None else pings,
        ping_interval_s=defaults.ping_interval_s if ping_interval is None else ping_interval,
        duration_s=defaults.duration_s if duration is None else duration,
        omit_s=defaults.omit_s if omit is None else omit,
        streams=defaults.streams if streams is None else streams,
        window=window,
        congestion=congestion,
        # given but empty is an error (parse_tests), never "the default"
        tests=defaults.tests if tests is None else parse_tests(tests),
        measures=chosen,
    )


@dataclass(frozen=True)
class RunOptions:
    """Where and on what a sweep runs, and how many slots per round (`plan.make_plan`
    applies them): --backend, --max-concurrent, --sequential, --emulated-type, --controller."""

    backend: str = DEFAULT_BACKEND
    max_concurrent: int | None = None  # None: the backend's default
    sequential: bool = False
    emulated_type: str | None = None
    controller: str | None = None  # a region key; None: next to the hosts

    def __post_init__(self) -> None:
        if self.backend not in BACKEND_NAMES:
            raise UserError(
                f"--backend '{self.backend}': expected one of {', '.join(BACKEND_NAMES)}"
            )
        if self.max_concurrent is not None and not self.max_concurrent >= 1:
            raise UserError(f"--max-concurrent {self.max_concurrent}: give 1 or more slots")
