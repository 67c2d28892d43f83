"""Times, parsed once where they enter and formatted once where they leave.

Inside interregion a time is an aware UTC `datetime`; text exists only at the edges.
Every time interregion writes is UTC with a `Z`: a sweep's record and its events to the
millisecond (`stamp`), ledgers, schedules and JSON envelopes to the second (`iso`), a
sweep id's time to the minute (`compact`, `20261122T0130Z`). What it reads back becomes
an aware UTC datetime here: a record's or a ledger's time (`read_utc`, a one-line
UserError naming the value; `parse_utc`, None, for scans that skip what is not a time),
a sweep id's (`parse_compact`), a `--since` value (`parse_since`), a store's time read as
whole milliseconds since the epoch (`of_epoch_ms`).
"""

from __future__ import annotations

from datetime import UTC, datetime

from orchestrator.core.errors import UserError

SECONDS = "%Y-%m-%dT%H:%M:%SZ"
COMPACT = "%Y%m%dT%H%MZ"
STAMP_EXAMPLE = "2026-11-22T01:30:00.123Z"


def utc_now() -> datetime:
    """Now, aware UTC, to the whole millisecond a record keeps (`stamp`): a time set now
    equals the same time read back from the file."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def stamp(moment: datetime) -> str:
    """`2026-11-22T01:30:00.123Z`: a record's time, to the millisecond (truncated)."""
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    # isoformat, not strftime: change detection writes one per path judged (2x faster)
    return moment.isoformat(timespec="milliseconds")[:23] + "Z"


def iso(moment: datetime) -> str:
    """`2026-11-22T01:30:00Z`: a time to the second."""
    return moment.astimezone(UTC).strftime(SECONDS)


def iso_of_epoch(epoch: float) -> str | None:
    """A Unix time to the second (`iso`); None for 0, a time never set."""
    return iso(datetime.fromtimestamp(epoch, UTC)) if epoch else None


def of_epoch_ms(ms: int) -> datetime:
    """Whole milliseconds since the epoch (DuckDB's `epoch_ms` of a stored TIMESTAMP) as
    an aware UTC datetime. Exact: below 2^33 s (the year 2242) a double is within half a
    microsecond of ms / 1000, which fromtimestamp rounds to the microsecond; and 3x faster
    than reading the TIMESTAMP and setting its zone (a full sweep's judging reads 12,000)."""
    return datetime.fromtimestamp(ms / 1000, UTC)


def compact(moment: datetime) -> str:
    """`20261122T0130Z`: a sweep id's time, to the minute."""
    return moment.astimezone(UTC).strftime(COMPACT)


def parse_utc(text: object) -> datetime | None:
    """An ISO 8601 time (a `Z` or an offset; none: taken as UTC) as an aware UTC datetime;
    None when `text` is not a string holding one."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    try:
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except OverflowError:  # year 1 or 9999 moved past the calendar by its offset
        return None


def read_utc(text: object, what: str = "time") -> datetime:
    """`parse_utc`, for a time that must be one: a one-line UserError naming `what`, the
    value and the format expected otherwise."""
    moment = parse_utc(text)
    if moment is None:
        raise UserError(f"{what} {_shown(text)} is not a UTC time like {STAMP_EXAMPLE}")
    return moment


def parse_compact(text: str, what: str = "sweep id") -> datetime:
    """A sweep id's time (`20261122T0130Z`, or the id itself: `20261122T0130Z-3fa2`)."""
    try:
        return datetime.strptime(text[:14], COMPACT).replace(tzinfo=UTC)
    except (ValueError, TypeError):
        raise UserError(
            f"{what} {_shown(text)} does not start with a UTC time like 20261122T0130Z"
        ) from None


def parse_since(text: str) -> datetime:
    """A `--since` value: a UTC date (its midnight) or time, `2026-11-01`,
    `2026-11-01T06:00Z`, `2026-11-01 06:00:00` (no offset: UTC)."""
    moment = parse_utc(text)
    if moment is None:
        raise UserError(
            f"--since {_shown(text)}: give a UTC date or time, e.g. 2026-11-01 or 2026-11-01T06:00Z"
        )
    return moment


def _shown(value: object) -> str:
    """The value in an error's one line: quoted, cut at 40 characters, printable."""
    text = value if isinstance(value, str) else repr(value)
    return "'" + "".join(c if c.isprintable() else "?" for c in text[:40]) + "'"
