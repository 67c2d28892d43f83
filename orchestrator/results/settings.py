"""What a sweep was asked to do, as its record keeps it: which regions and pairs
(`SelectionSpec`), what each test runs (`TestParams`) and how a cloud's hosts are made
(`CloudOptions`). Plain frozen values, read from sweep.json once (results.record) and
written back as the same JSON; the planner (orchestrator.plan) and the clouds
(orchestrator.clouds) take the same types, and re-export them on their faces.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from orchestrator.core import UserError
from orchestrator.model import CLOUDS
from orchestrator.results.schema import CAPACITY, MEASURES, SINGLE_STREAM

# iperf3's own limits on its arguments (esnet/iperf src/iperf.h and the checks in
# iperf_parse_arguments, src/iperf_api.c): beyond them it exits with a parameter error
# on every host, after the VMs are paid for.
IPERF3_MAX_STREAMS = 128  # MAX_STREAMS, -P
IPERF3_MAX_TIME_S = 86_400  # MAX_TIME, -t ("test duration too long")
IPERF3_MAX_OMIT_S = 60  # -O outside 0..60 is IEOMIT ("bogus value for --omit")
IPERF3_MAX_WINDOW_BYTES = 512 * 1024 * 1024  # MAX_TCP_BUFFER = 512 * MB, -w
# ping's (iputils) own limits: -c is a long; -i in ms must fit an int ("bad timing
# interval" above). They also keep pings x interval finite in the time model.
PING_MAX_COUNT = 2**63 - 1
PING_MAX_INTERVAL_S = 2_147_483
# iperf3 reads -w with unit_atof (src/units.c): binary units, either case.
_WINDOW_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}

TESTS = ("ping", "throughput")  # what a slot can run; a plan runs one or both
# The capacity measure's parallel streams unless --streams says otherwise: enough that
# the default window (2.53 MB on a small cloud VM) no longer binds at the RTTs a sweep
# meets (8 x 2.53 MB / 250 ms = 648 Mbit/s, 8 x 2.53 MB / 85 ms = 1.9 Gbit/s, against a
# small VM's ~1 Gbit/s) even where a host caps the tuned buffers, while each stream still
# carries over 100 Mbit/s of a 1 Gbit/s NIC (docs/sweeps.md).
CAPACITY_STREAMS = 8

_WINDOW = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([KMGTkmgt]?)$")
_CONGESTION = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class TestParams:
    """What one slot runs; the measurement engine reads the same object."""

    __test__ = False  # not a pytest test class despite the name

    pings: int = 20
    ping_interval_s: float = 0.2
    # iperf3 reads -t and -O with atoi: whole seconds only.
    duration_s: int = 5
    omit_s: int = 1
    # the capacity measure's parallel streams (iperf3 -P); single_stream runs one
    streams: int = CAPACITY_STREAMS
    window: str | None = None  # iperf3 -w, e.g. "4M"
    congestion: str | None = None  # iperf3 -C, e.g. "cubic"
    # ("ping",) is a latency-only plan: no iperf3 time, no iperf3 bytes
    tests: tuple[str, ...] = TESTS
    # which throughput measures each pair runs (schema.MEASURES), in that order
    measures: tuple[str, ...] = (SINGLE_STREAM,)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tests", parse_tests(self.tests))
        object.__setattr__(self, "measures", parse_measures(self.measures))
        for name, flag in (
            ("ping_interval_s", "--ping-interval"),
            ("duration_s", "--duration"),
            ("omit_s", "--omit"),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise UserError(f"{flag} {value!r}: must be a number of seconds")
            if not math.isfinite(value):
                raise UserError(f"{flag} {value}: must be a finite number of seconds")
        for name, flag in (("duration_s", "--duration"), ("omit_s", "--omit")):
            value = getattr(self, name)
            if value != int(value):
                raise UserError(f"{flag} {value:g}: iperf3 takes whole seconds, e.g. {int(value)}")
            # 5.0 from an older plan file is 5: iperf3 must be given "-t 5", not "-t 5.0".
            object.__setattr__(self, name, int(value))
        if not 1 <= self.pings <= PING_MAX_COUNT:
            raise UserError(f"--pings {self.pings}: ping sends 1 to {PING_MAX_COUNT:,}")
        if not 0 < self.ping_interval_s <= PING_MAX_INTERVAL_S:
            raise UserError(
                f"--ping-interval {self.ping_interval_s:g}: ping waits above 0 and up to "
                f"{PING_MAX_INTERVAL_S:,} s"
            )
        if not 1 <= self.duration_s <= IPERF3_MAX_TIME_S:
            raise UserError(
                f"--duration {self.duration_s}: iperf3 runs 1 to {IPERF3_MAX_TIME_S:,} s"
            )
        if not 0 <= self.omit_s <= IPERF3_MAX_OMIT_S:
            raise UserError(f"--omit {self.omit_s}: iperf3 skips 0 to {IPERF3_MAX_OMIT_S} s")
        if not 1 <= self.streams <= IPERF3_MAX_STREAMS:
            raise UserError(
                f"--streams {self.streams}: iperf3 runs 1 to {IPERF3_MAX_STREAMS} streams"
            )
        if self.window is not None:
            size = window_bytes(self.window)
            if not 0 < size <= IPERF3_MAX_WINDOW_BYTES:
                raise UserError(
                    f"--window '{self.window}': iperf3 takes above 0 and up to 512M "
                    f"({IPERF3_MAX_WINDOW_BYTES:,} bytes)"
                )
        if self.congestion is not None and not _CONGESTION.match(self.congestion):
            raise UserError(
                f"--congestion '{self.congestion}': write a Linux algorithm name like cubic"
            )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tests"] = list(self.tests)
        out["measures"] = list(self.measures)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestParams:
        """A record's params; one written before the measures measured single_stream alone."""
        fields = dict(data)
        fields.setdefault("measures", [SINGLE_STREAM])
        return cls(**fields)

    def streams_of(self, measure: str) -> int:
        """The streams a test of `measure` runs."""
        return self.streams if measure == CAPACITY else 1

    @property
    def throughput(self) -> bool:
        return "throughput" in self.tests

    @property
    def ping(self) -> bool:
        return "ping" in self.tests


def parse_tests(value: str | Sequence[str]) -> tuple[str, ...]:
    """'ping', 'throughput', 'ping,throughput' (or a list of them) -> the tests, in TESTS order."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names = {str(t).strip().lower() for t in items if str(t).strip()}
    unknown = sorted(names - set(TESTS))
    if not names:
        raise UserError(
            f"--tests {value if isinstance(value, str) else ','.join(map(str, value))!r} names "
            "nothing: write ping, throughput or ping,throughput, or leave it out"
        )
    if unknown:
        raise UserError(
            f"--tests {value if isinstance(value, str) else ','.join(map(str, value))!r}: "
            "write ping, throughput or ping,throughput"
        )
    return tuple(t for t in TESTS if t in names)


def parse_measures(value: str | Sequence[str]) -> tuple[str, ...]:
    """'single_stream', 'capacity', 'single_stream,capacity' (or a list) -> the measures,
    in MEASURES order."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names = {str(t).strip().lower() for t in items if str(t).strip()}
    shown = value if isinstance(value, str) else ",".join(map(str, value))
    if not names or names - set(MEASURES):
        raise UserError(
            f"--measures {shown!r}: write single_stream, capacity or single_stream,capacity"
        )
    return tuple(m for m in MEASURES if m in names)


def window_bytes(text: str) -> float:
    """An iperf3 -w size in bytes, read as iperf3 reads it: 4M = 4 x 1024^2, 256k = 256 x 1024."""
    match = _WINDOW.match(text)
    if not match:
        raise UserError(f"--window '{text}': write a size like 256K or 4M")
    return float(match.group(1)) * _WINDOW_UNITS[match.group(2).lower()]


@dataclass(frozen=True)
class SelectionSpec:
    """Everything the command line can say about what to measure."""

    clouds: tuple[str, ...] = CLOUDS
    regions: tuple[str, ...] = ()  # explicit "cloud:id" keys; () means every region
    exclude: tuple[str, ...] = ()
    no_opt_in: bool = False
    cloud_pairs: tuple[tuple[str, str], ...] = ()  # directed (src, dst); () means all four
    min_km: float | None = None
    max_km: float | None = None
    pairs: tuple[tuple[str, str], ...] = ()  # explicit; both directions unless cloud_pairs narrows
    max_regions: int | None = None
    spread: str = "bands"  # how --max-regions chooses: one of plan.selection.SPREADS
    # --max-regions may choose AWS opt-in regions (a new account must enable each first);
    # without it, only those --regions or --pairs name take part
    opt_in: bool = False

    def to_dict(self) -> dict[str, Any]:
        """As a record keeps it (sweep.json `selection`): tuples as JSON lists."""
        return {k: _json_list(v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SelectionSpec:
        """A record's selection; keys an earlier version wrote and this one does not
        know are left out, lists read back into tuples."""
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            if name not in known:
                continue
            if name in ("cloud_pairs", "pairs"):
                value = tuple(tuple(p) for p in value)
            elif isinstance(value, list):
                value = tuple(value)
            kwargs[name] = value
        return cls(**kwargs)


def _json_list(value: Any) -> Any:
    """A tuple (of tuples) as JSON lists, as json.dumps writes it."""
    return [_json_list(v) for v in value] if isinstance(value, tuple) else value


@dataclass(frozen=True)
class CloudOptions:
    """How a cloud sweep's hosts are made, as its record keeps them (`cloud_options`)."""

    operator_cidr: str | None = None  # None: detect the public address
    ttl_minutes: int | None = None  # None: from the sweep's estimate
    gcp_project: str | None = None  # None: GOOGLE_CLOUD_PROJECT or the ADC project
    aws_profile: str | None = None
    network_tier: str = "PREMIUM"
    machine_types: dict[str, str] = field(default_factory=dict)  # per-cloud overrides
    strict: bool = False
    owner: str | None = None
    # Pins (region key to zone / image id), e.g. from an earlier sweep's hosts.json
    # (`--pin-from`): AWS Availability Zone IDs and AMI ids, GCP zones and images.
    zones: dict[str, str] = field(default_factory=dict)
    images: dict[str, str] = field(default_factory=dict)
    pinned_from: str | None = None  # the sweep the pins came from, for the record

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CloudOptions:
        """The options a sweep record keeps (sweep.json `cloud_options`); keys an earlier
        version wrote and this one does not know are left out."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        """As a record keeps it (sweep.json `cloud_options`)."""
        return asdict(self)
