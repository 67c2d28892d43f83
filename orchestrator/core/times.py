"""Times, parsed once where they enter and formatted once where they leave.

Every time interregion writes is UTC, ISO 8601 with a `Z`: a sweep's record and its events
to the millisecond (`utc_now`, `stamp`), ledgers, schedules and JSON envelopes to the
second (`iso`). What it reads back (records, ledgers, `--since`) becomes an aware UTC
datetime in one place (`parse_utc`), or None when it is not a time.
"""

from __future__ import annotations

from datetime import UTC, datetime

SECONDS = "%Y-%m-%dT%H:%M:%SZ"


def stamp(moment: datetime) -> str:
    """`2026-11-22T01:30:00.123Z`: a record's time, to the millisecond."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def utc_now() -> str:
    """Now, as a record keeps it (`stamp`)."""
    return stamp(datetime.now(UTC))


def iso(moment: datetime) -> str:
    """`2026-11-22T01:30:00Z`: a time to the second."""
    return moment.astimezone(UTC).strftime(SECONDS)


def iso_of_epoch(epoch: float) -> str | None:
    """A Unix time to the second (`iso`); None for 0, a time never set."""
    return iso(datetime.fromtimestamp(epoch, UTC)) if epoch else None


def parse_utc(text: object) -> datetime | None:
    """An ISO 8601 time (a `Z` or an offset; none: taken as UTC) as an aware UTC datetime;
    None when `text` is not a string holding one."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
