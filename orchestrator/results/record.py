"""sweep.json as types: the sweep's record, read once into dataclasses and written back
with the same keys, values and key order.

The file format does not change: `SweepRecord.from_json(doc).to_json() == doc` for every
record an earlier interregion wrote (tests/unit/results/test_record.py reads real ones
kept under tests/data/records/). Keys this version does not know are kept in `extra` and
written back in their place; a key a loaded record held is written back even when its
value is null. Times are aware UTC datetimes (core.times): parsed as the record is read
(a time that is not one is a one-line error naming the field) and, while unchanged,
written back as the text they were read from; a time set anew is written as
`core.times.stamp` writes it, to the millisecond (a schedule's `scheduled_utc` as `iso`,
to the second). The selection, the test parameters and the cloud options are read into
their types (results.settings: `SelectionSpec`, `TestParams`, `CloudOptions`) and, while
unchanged, written back as the JSON they were read from: a record written before a field
was added to one of them (`opt_in`, `measures`) keeps its bytes. Deep, rarely read parts
stay plain JSON: the tool versions, the plan's regions (`model.catalog.region_from_dict`
reads them), its rounds, slots, sentinels, host types, shortfalls and timings, a round's
slots, the `measure_runs` log, the emulation's perturbations, a study's estimate, pairs
and rounds.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from orchestrator.core import UserError, iso, read_utc, stamp
from orchestrator.results.schema import RESULTS_FORMAT_VERSION
from orchestrator.results.settings import CloudOptions, SelectionSpec, TestParams


class SweepStatus(StrEnum):
    """Where a sweep is: sweep.json's `status`."""

    PLANNED = "planned"
    PROVISIONED = "provisioned"
    PREPARED = "prepared"
    MEASURING = "measuring"
    MEASURED = "measured"
    DONE = "done"
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    TORN_DOWN = "torn down"

    @property
    def ended(self) -> bool:
        """Ended by the runner (done, interrupted, failed): teardown keeps this status."""
        return self in (SweepStatus.DONE, SweepStatus.INTERRUPTED, SweepStatus.FAILED)

    @property
    def finished(self) -> bool:
        """Nothing is running for it: ended, torn down, or never started."""
        return self.ended or self in (SweepStatus.TORN_DOWN, SweepStatus.PLANNED)


class StageStatus(StrEnum):
    """How one stage went: `stages.<name>.status`."""

    RUNNING = "running"
    DONE = "done"
    INTERRUPTED = "interrupted"
    FAILED = "failed"


def load_record_file(path: Path, sweep_id: str | None = None) -> SweepRecord:
    """The record at `path`: every reader of a sweep.json goes through here (`read_record`
    for scans, results.files.load_record for a sweep by its id). With `sweep_id`, also
    its format version and its id checked: a stage writes to the folder the record names.
    A one-line UserError naming the file when it is unreadable or not a sweep's record."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: unreadable ({e}): the results folder is damaged") from None
    if sweep_id is not None:
        # the version first: a record of another version need not be one this version reads
        version = doc.get("format_version") if isinstance(doc, dict) else None
        if version != RESULTS_FORMAT_VERSION:
            raise UserError(
                f"{path}: results format version {version}, this interregion reads version "
                f"{RESULTS_FORMAT_VERSION}: use the interregion release that wrote it"
            )
        if doc.get("sweep_id") != sweep_id:
            raise UserError(
                f"{path}: records sweep id '{doc.get('sweep_id')}', not '{sweep_id}' "
                "(renamed or copied folder?): give the folder its sweep's id"
            )
    return SweepRecord.from_json(doc, str(path))


def read_record(path: Path) -> SweepRecord | None:
    """The record at `path`, or None when it is unreadable or not a sweep's record: for
    scans over a results folder, which skip what they cannot read."""
    try:
        return load_record_file(path)
    except UserError:
        return None


# ---- a dataclass <-> a JSON object, keys kept in place ---------------------------------


def _from_json(cls: type[Any], doc: Mapping[str, Any], convert: Mapping[str, Any]) -> Any:
    """An instance of `cls` from `doc`: `convert` turns a field's JSON into its type;
    unknown keys go to `extra`, the order of all keys to `_keys`."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    names = {name for name in fields if name != "extra" and not name.startswith("_")}
    kwargs: dict[str, Any] = {}
    texts: dict[str, tuple[str, datetime]] = {}
    for name in names & set(doc):
        if "datetime" in str(fields[name].type):
            kwargs[name] = _time(name, str(fields[name].type), doc[name])
            if kwargs[name] is not None:
                texts[name] = (doc[name], kwargs[name])
            continue
        if name not in convert:
            problem = _type_problem(name, str(fields[name].type), doc[name])
            if problem:
                raise UserError(f"not a sweep record ({problem}): the results folder is damaged")
        kwargs[name] = convert[name](doc[name]) if name in convert else doc[name]
    extra = {k: v for k, v in doc.items() if k not in names}
    if texts:
        kwargs["_texts"] = texts
    return cls(**kwargs, extra=extra, _keys=tuple(doc))


def _time(name: str, annotation: str, value: Any) -> datetime | None:
    """Time field `name` from its JSON: null where the field may be, else a UTC time."""
    if value is None and "None" in annotation:
        return None
    try:
        return read_utc(value, name)
    except UserError as e:
        raise UserError(f"not a sweep record ({e}): the results folder is damaged") from None


_PLAIN_TYPES: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": (int, float),
    "bool": bool,
    "dict": dict,
    "Mapping": Mapping,
    "list": list,
}


def _type_problem(name: str, annotation: str, value: Any) -> str | None:
    """Why `value` cannot be field `name` of plain type `annotation` ('dict[str, Any] |
    None'), or None: kept state of the wrong type (`"params": null`) is found as it is
    read, not as a crash of every later command that reads the field."""
    kinds = [part.strip() for part in annotation.split("|")]
    if value is None:
        return None if "None" in kinds else f"{name}: null"
    for kind in (k for k in kinds if k != "None"):
        plain = _PLAIN_TYPES.get(kind.split("[", 1)[0])
        if plain is None:
            return None  # a type of its own (an enum): not checked here
        if isinstance(value, plain) and (plain is bool or not isinstance(value, bool)):
            return None
    return f"{name}: {json.dumps(value)[:40]} is not {annotation}"


def _to_json(self: Any, convert: Mapping[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """`self` as the JSON object it was read from: loaded keys in their order, then new
    ones in field order; None fields omitted unless loaded. A time is written as the text
    it was read from while unchanged, else by `convert` (`stamp` when it names none)."""
    loaded = set(self._keys)
    texts: Mapping[str, tuple[str, datetime]] = getattr(self, "_texts", {})
    out: dict[str, Any] = {}
    for f in dataclasses.fields(self):
        if f.name == "extra" or f.name.startswith("_"):
            continue
        value = getattr(self, f.name)
        if value is None and f.name not in loaded:
            continue
        if isinstance(value, datetime):
            read = texts.get(f.name)
            same = read is not None and read[1] == value
            out[f.name] = read[0] if same and read else convert.get(f.name, stamp)(value)
            continue
        out[f.name] = convert[f.name](value) if f.name in convert and value is not None else value
    out.update(self.extra)
    first = [k for k in self._keys if k in out]
    return {k: out[k] for k in [*first, *(k for k in out if k not in loaded)]}


def _keys_field() -> Any:
    return field(default=(), repr=False, compare=False)


def _plain(value: Any) -> Any:
    """A StrEnum as its string (json writes StrEnums as strings too; this keeps == exact)."""
    return str(value) if isinstance(value, StrEnum) else value


# ---- the parts ------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanEstimate:
    """The plan's estimate (`plan.estimate`), as `plan.sweep_plan.Estimate.to_dict` wrote it."""

    wall_s: float
    setup_s: float = 0.0
    bytes: int = 0
    vm_hours: float = 0.0
    egress_usd: float = 0.0
    vm_usd: float = 0.0
    cloud_cost_usd: float = 0.0
    cost_usd: float = 0.0
    bytes_by_cloud_pair: Mapping[str, int] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        estimate: Self = _from_json(cls, doc, {})
        return estimate

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {"bytes_by_cloud_pair": dict})


@dataclass(frozen=True)
class PlannedPair:
    """One directed pair of the plan (`plan.pairs`)."""

    src: str
    dst: str
    distance_km: float
    extra: Mapping[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        pair: Self = _from_json(cls, doc, {})
        return pair

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {})


@dataclass(frozen=True)
class PlanRecord:
    """The plan a sweep was made from (`plan`, `plan.sweep_plan.Plan.to_json`). Regions stay
    the catalog's dicts (`model.catalog.region_from_dict` reads them); rounds, slots,
    timings, sentinels and shortfalls stay plain JSON."""

    backend: str
    estimate: PlanEstimate
    regions: list[dict[str, Any]] = field(default_factory=list)
    pairs: list[PlannedPair] = field(default_factory=list)
    emulated: bool | None = None
    params: Mapping[str, Any] | None = None
    max_concurrent: int | None = None
    sequential: bool | None = None
    pricing_as_of: str | None = None
    controller: str | None = None  # region key; "" = next to the hosts
    controller_rtt_ms: float | None = None
    emulated_type: str | None = None
    timings: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        plan: Self = _from_json(
            cls,
            doc,
            {
                "estimate": PlanEstimate.from_json,
                "pairs": lambda ps: [PlannedPair.from_json(p) for p in ps],
            },
        )
        return plan

    def to_json(self) -> dict[str, Any]:
        return _to_json(
            self,
            {
                "estimate": PlanEstimate.to_json,
                "pairs": lambda ps: [p.to_json() for p in ps],
            },
        )


@dataclass(kw_only=True)
class Stage:
    """One stage's run (`stages.<name>`): when, how long, how it ended. Only its status
    is required: a stage noted by hand or by an older version may lack its times."""

    started_utc: datetime | None = None
    status: StageStatus
    ended_utc: datetime | None = None
    wall_s: float | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()
    _texts: dict[str, tuple[str, datetime]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        stage: Self = _from_json(cls, doc, {"status": StageStatus})
        return stage

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {"status": _plain})


@dataclass(frozen=True)
class RoundEntry:
    """One round run (an entry of `rounds`, sweep.events.ClosedRound.entry): a ping phase
    (`phase` "ping" with its `tests`) or a round of slots (`slots`, SlotPlan.to_dict)."""

    round: int
    kind: str  # main, resume, retry, study
    slots: list[Mapping[str, Any]] = field(default_factory=list)
    phase: str | None = None
    tests: list[list[str]] | None = None  # the phase's [src, dst] tests
    started_utc: datetime | None = None
    ended_utc: datetime | None = None
    wall_s: float | None = None
    slot_s: float | None = None
    overhead_s: float | None = None
    tests_ok: int | None = None
    tests_failed: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()
    _texts: Mapping[str, tuple[str, datetime]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def ping_phase(self) -> bool:
        return self.phase == "ping"

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        entry: Self = _from_json(cls, doc, {})
        return entry

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {})


@dataclass
class StudyRecord:
    """A TCP study's part of its record (`study`): what `study tcp` chose, then what its
    measure stage planned per pair (`pairs`: idle RTT, tuned buffer, order) and per round
    (`rounds`), and how its hosts' settings were restored (`restore`). Mutable: the
    measure stage adds those."""

    kind: str  # "tcp"
    variants: list[str]
    repeats: int
    seed: int
    max_buffer_bytes: int | None = None
    estimate: Mapping[str, Any] | None = None  # study.estimate's to_dict
    pairs: dict[str, dict[str, Any]] | None = None
    rounds: dict[str, Any] | None = None
    restore: dict[str, dict[str, Any]] | None = None  # per host: restored, or its error
    extra: dict[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()

    @classmethod
    def new(cls, **fields: Any) -> Self:
        """As `study tcp` first writes it: a null `max_buffer_bytes` too."""
        return cls(**fields, _keys=("kind", "variants", "repeats", "seed", "max_buffer_bytes"))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        study: Self = _from_json(cls, doc, {})
        return study

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {})


@dataclass(frozen=True)
class HostPlacement:
    """Where a host ran and from what (`placement.<region key>`)."""

    zone: str = ""
    image_id: str = ""
    machine_type: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        placed: Self = _from_json(cls, doc, {})
        return placed

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {})


@dataclass(frozen=True)
class EmulationRecord:
    """The emulated cloud's settings for a sweep (`emulation`): its seed and
    perturbations (each as `emulator.perturb.Perturbation.to_dict` wrote it), and what
    they inject on purpose between the sweep's regions (`injected`, as
    `emulator.stack.injected_effects` wrote it; None in records from before it)."""

    seed: int | None = None
    perturbations: list[Mapping[str, Any]] = field(default_factory=list)
    injected: list[Mapping[str, Any]] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        emulation: Self = _from_json(cls, doc, {})
        return emulation

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {})


@dataclass(frozen=True)
class ScheduleTrigger:
    """What started a scheduled tick's sweep (`schedule`, schedule.tick): its profile, how
    it was triggered ("timer" or "hand"), the due time it stands for (None by hand) and
    the hour it started at."""

    profile: str
    trigger: str
    scheduled_utc: datetime | None = None  # written to the second (`iso`)
    hour_utc: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()
    _texts: Mapping[str, tuple[str, datetime]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Self:
        trigger: Self = _from_json(cls, doc, {})
        return trigger

    def to_json(self) -> dict[str, Any]:
        return _to_json(self, {"scheduled_utc": iso})


@dataclass(frozen=True)
class Owner:
    """The process running a sweep whole (`owner_pid`, `owner_start_ticks`): its start time
    tells a reused pid from it. None ticks: the process's start was not readable."""

    pid: int
    start_ticks: int | None = None


NEW_KEYS = (
    "format_version", "sweep_id", "backend", "emulated", "created_utc", "status", "selection",
    "params", "max_concurrent", "sequential", "cloud_options", "plan", "versions", "stages",
    "rounds", "measure_runs",
)  # fmt: skip
"""The keys of a new record, in the order it has always written them."""


# ---- the record -----------------------------------------------------------------------


def _status(value: Any) -> SweepStatus:
    try:
        return SweepStatus(value)
    except ValueError:
        known = ", ".join(s.value for s in SweepStatus)
        raise UserError(f"sweep status {value!r} is not one of {known}") from None


@dataclass
class SweepRecord:
    """A sweep's sweep.json. Mutable: the stages update it and save it after each change."""

    sweep_id: str
    backend: str
    created_utc: datetime
    status: SweepStatus
    plan: PlanRecord
    format_version: int | None = None  # results.files.load_record checks it
    emulated: bool | None = None
    selection: SelectionSpec | None = None  # None: a record that kept none
    params: TestParams = field(default_factory=TestParams)
    max_concurrent: int | None = None
    sequential: bool = False
    cloud_options: CloudOptions | None = None
    versions: dict[str, str] = field(default_factory=dict)
    stages: dict[str, Stage] = field(default_factory=dict)
    rounds: list[RoundEntry] = field(default_factory=list)
    measure_runs: list[dict[str, Any]] = field(default_factory=list)
    study: StudyRecord | None = None
    schedule: ScheduleTrigger | None = None  # a scheduled tick's
    emulation: EmulationRecord | None = None
    owner_pid: int | None = None  # see `owner`
    owner_start_ticks: int | None = None
    budget_usd: float | None = None
    price_emulated: bool | None = None
    started_utc: datetime | None = None
    placement: dict[str, HostPlacement] | None = None
    control_dir: str | None = None
    stopped: str | None = None  # why measure stopped early (the budget)
    interrupted_by: str | None = None
    ended_utc: datetime | None = None
    wall_s: float | None = None
    abandoned_utc: datetime | None = None
    # the capacity measure's restore play: per host, restored or its error (sweep.restore)
    restore: dict[str, dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    _keys: tuple[str, ...] = _keys_field()
    # the times' texts as read, with their values then (`_to_json` writes them back)
    _texts: dict[str, tuple[str, datetime]] = field(default_factory=dict, repr=False, compare=False)
    # the typed fields' JSON as read, and their value then: written back as read while
    # the value is unchanged (see the module's docstring)
    _read: dict[str, tuple[Any, Any]] = field(default_factory=dict, repr=False, compare=False)

    def add(self, fields: Mapping[str, Any]) -> None:
        """Fields a caller keeps in the record beside the sweep's own (a tick's `schedule`,
        a study's `study`): its known fields by name, anything else in `extra`."""
        for name, value in fields.items():
            if name == "schedule":
                self.schedule = ScheduleTrigger.from_json(value) if value is not None else None
            elif name == "study":
                self.study = StudyRecord.from_json(value) if value is not None else None
            elif name in _NAMES:
                raise ValueError(f"sweep record field {name!r} is the sweep's own")
            else:
                self.extra[name] = value

    @classmethod
    def new(cls, **fields: Any) -> Self:
        """A record as `sweep.sweep_folder.create_sweep` first writes it: its keys in that order,
        null ones too (`cloud_options`, `max_concurrent`)."""
        return cls(**fields, _keys=NEW_KEYS)

    @property
    def owner(self) -> Owner | None:
        """The process that runs the sweep whole; None for stages run alone."""
        if not self.owner_pid:
            return None
        return Owner(int(self.owner_pid), self.owner_start_ticks)

    @owner.setter
    def owner(self, owner: Owner) -> None:
        self.owner_pid, self.owner_start_ticks = owner.pid, owner.start_ticks

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], where: str = "sweep.json") -> Self:
        """The record in `doc`; a one-line UserError naming `where` when it is not one."""
        if not isinstance(doc, Mapping):
            raise UserError(f"{where}: not a sweep record (a JSON object)")
        try:
            record: Self = _from_json(
                cls,
                doc,
                {
                    "status": _status,
                    "plan": PlanRecord.from_json,
                    "stages": lambda s: {k: Stage.from_json(v) for k, v in s.items()},
                    "rounds": lambda rs: [RoundEntry.from_json(r) for r in rs],
                    "study": StudyRecord.from_json,
                    "emulation": EmulationRecord.from_json,
                    "schedule": ScheduleTrigger.from_json,
                    "placement": lambda p: {k: HostPlacement.from_json(v) for k, v in p.items()},
                    **{name: _typed(name, of_json) for name, (of_json, _) in _SETTINGS.items()},
                },
            )
            record._read = {
                name: (doc[name], getattr(record, name)) for name in _SETTINGS if name in doc
            }
        except UserError as e:
            raise UserError(f"{where}: {e}") from None
        except (TypeError, AttributeError, ValueError, KeyError) as e:
            raise UserError(
                f"{where}: not a sweep record ({e}): the results folder is damaged"
            ) from None
        return record

    def to_json(self) -> dict[str, Any]:
        return _to_json(
            self,
            {
                "status": _plain,
                "plan": PlanRecord.to_json,
                "stages": lambda s: {k: v.to_json() for k, v in s.items()},
                "rounds": lambda rs: [r.to_json() for r in rs],
                "study": StudyRecord.to_json,
                "emulation": EmulationRecord.to_json,
                "schedule": ScheduleTrigger.to_json,
                "placement": lambda p: {k: v.to_json() for k, v in p.items()},
                **{name: self._written(name, to_json) for name, (_, to_json) in _SETTINGS.items()},
            },
        )

    def _written(self, name: str, to_json: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """Field `name`'s JSON: as it was read while its value is unchanged, else anew."""
        read = self._read.get(name)
        return lambda value: read[0] if read is not None and read[1] == value else to_json(value)


def _typed(name: str, of_json: Callable[[Mapping[str, Any]], Any]) -> Callable[[Any], Any]:
    """Field `name`'s type from its JSON object; the one-line error `_type_problem` gives
    for anything else, and the type's own (`--pings 0: ...`) for values it refuses."""

    def convert(value: Any) -> Any:
        problem = _type_problem(name, f"dict[str, Any]{_NULLABLE.get(name, '')}", value)
        if problem:
            raise UserError(f"not a sweep record ({problem}): the results folder is damaged")
        if value is None:
            return None
        try:
            return of_json(value)
        except UserError as e:
            raise UserError(f"not a sweep record ({name}: {e})") from None
        except TypeError as e:
            raise UserError(
                f"not a sweep record ({name}: {e}): the results folder is damaged"
            ) from None

    return convert


# the fields held as results.settings types: (from their JSON, to their JSON)
_SETTINGS: dict[str, tuple[Callable[[Mapping[str, Any]], Any], Callable[[Any], Any]]] = {
    "selection": (SelectionSpec.from_dict, SelectionSpec.to_dict),
    "params": (TestParams.from_dict, TestParams.to_dict),
    "cloud_options": (CloudOptions.from_dict, CloudOptions.to_dict),
}

_NULLABLE = {"selection": " | None", "cloud_options": " | None"}  # `params` may not be null


_NAMES = {f.name for f in dataclasses.fields(SweepRecord)}
