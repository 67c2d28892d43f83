"""When a scheduled sweep is due: ISO 8601 durations, `every` on a UTC grid, cron lines.

Pure functions of their arguments (no clock read here): `ticks(cadence, start, end)`
lists the due times, and the same cadence is turned into a systemd OnCalendar
expression and a cron line, so every way of installing a profile agrees on when.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from orchestrator.core.errors import UserError

DAY_S = 86_400
WEEK_S = 7 * DAY_S
_DURATION = re.compile(r"^P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>\d+)S)?)?$")
# cron fields: name, smallest, largest
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12))
_DOW_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")


def parse_duration(text: str) -> int:
    """'PT6H' -> 21600 seconds; 'P1D', 'PT30M', 'PT1H30M', 'PT0S'. Days are 24 h (UTC)."""
    match = _DURATION.match(str(text).strip().upper())
    if not match or str(text).strip().upper() in ("P", "PT") or str(text).upper().endswith("T"):
        raise UserError(f"'{text}' is not an ISO 8601 duration like PT6H, PT30M or P1D")
    parts = {k: int(v) for k, v in match.groupdict().items() if v}
    return (
        parts.get("d", 0) * DAY_S
        + parts.get("h", 0) * 3600
        + parts.get("m", 0) * 60
        + parts.get("s", 0)
    )


def check_every(seconds: int, text: str) -> None:
    """A grid interval systemd, cron and Actions all express: minutes dividing an hour,
    hours dividing a day, one day or one week."""
    ok = (
        (seconds % 60 == 0 and 0 < seconds <= 3600 and 3600 % seconds == 0)
        or (seconds % 3600 == 0 and 0 < seconds <= DAY_S and DAY_S % seconds == 0)
        or seconds == WEEK_S
    )
    if not ok:
        raise UserError(
            f"'{text}' is not a grid interval: use minutes dividing an hour (PT15M), hours "
            "dividing a day (PT6H), P1D or P7D, or write a cron line"
        )


@dataclass(frozen=True)
class Cron:
    """A 5-field cron line (minute hour day-of-month month day-of-week), UTC."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_any: bool  # '*' in day of month
    weekdays_any: bool  # '*' in day of week

    def matches_day(self, day: datetime) -> bool:
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.days_any or self.weekdays_any:
            return dom and dow
        return dom or dow  # cron: both restricted means either


def _field(text: str, name: str, low: int, high: int, line: str) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        base, slash, step_text = item.partition("/")
        try:
            step = int(step_text) if slash else 1
            if base == "*":
                start, stop = low, high
            elif "-" in base:
                a, b = base.split("-", 1)
                start, stop = int(a), int(b)
            else:
                start = int(base)
                stop = high if slash else start
        except ValueError:
            raise UserError(
                f"cron '{line}': {name} '{item}' is not a number, range or step"
            ) from None
        if step < 1 or not (low <= start <= stop <= high):
            raise UserError(f"cron '{line}': {name} '{item}' is outside {low}-{high}")
        values.update(range(start, stop + 1, step))
    return frozenset(values)


_MONTH_DAYS = {
    1: 31,
    2: 29,
    3: 31,
    4: 30,
    5: 31,
    6: 30,
    7: 31,
    8: 31,
    9: 30,
    10: 31,
    11: 30,
    12: 31,
}


def parse_cron(line: str) -> Cron:
    fields = str(line).split()
    if len(fields) != 5:
        raise UserError(
            f"cron '{line}': expected 5 fields (minute hour day month weekday), got {len(fields)}"
        )
    minutes, hours, days, months = (
        _field(f, n, lo, hi, line) for f, (n, lo, hi) in zip(fields, _FIELDS, strict=False)
    )
    weekdays = _field(fields[4], "day of week", 0, 7, line)
    if fields[4] == "*" and not any(d <= _MONTH_DAYS[m] for m in months for d in days):
        raise UserError(
            f"cron '{line}': no month listed has any of the days listed, so it would never "
            "run: give a day of month that exists in one of the months"
        )
    return Cron(
        text=" ".join(fields),
        minutes=minutes,
        hours=hours,
        days=days,
        months=months,
        weekdays=frozenset(d % 7 for d in weekdays),  # 7 is Sunday too
        days_any=fields[2] == "*",
        weekdays_any=fields[4] == "*",
    )


def cron_ticks(cron: Cron, start: datetime, end: datetime) -> Iterator[datetime]:
    """Due times t with start < t <= end, in order."""
    day = start.replace(hour=0, minute=0, second=0, microsecond=0)
    while day <= end:
        if cron.matches_day(day):
            for hour in sorted(cron.hours):
                for minute in sorted(cron.minutes):
                    t = day.replace(hour=hour, minute=minute)
                    if start < t <= end:
                        yield t
        day += timedelta(days=1)


@dataclass(frozen=True)
class Cadence:
    every_s: int | None = None  # on the UTC grid: multiples of it since the epoch
    cron: Cron | None = None

    def ticks(self, start: datetime, end: datetime) -> list[datetime]:
        """Due times t with start < t <= end (UTC), in order."""
        if self.cron is not None:
            return list(cron_ticks(self.cron, start, end))
        assert self.every_s
        step = self.every_s
        # the week grid starts on a Monday (1970-01-05), as systemd's and cron's do
        offset = 4 * DAY_S if step == WEEK_S else 0
        first = (int(start.timestamp()) - offset) // step * step + step + offset
        return [
            datetime.fromtimestamp(t, UTC) for t in range(first, int(end.timestamp()) + 1, step)
        ]

    def last_tick(self, now: datetime, lookback_s: int = 2 * 366 * DAY_S) -> datetime | None:
        """The latest due time at or before `now`."""
        if self.every_s:
            lookback_s = self.every_s
        found = self.ticks(now - timedelta(seconds=lookback_s + 1), now)
        return found[-1] if found else None

    def next_tick(self, now: datetime) -> datetime | None:
        horizon = self.every_s or 366 * DAY_S
        found = self.ticks(now, now + timedelta(seconds=horizon))
        return found[0] if found else None

    def interval_s(self) -> int:
        """The grid interval, or the shortest gap of a cron line over two weeks."""
        if self.every_s:
            return self.every_s
        start = datetime(2026, 1, 5, tzinfo=UTC)
        found = self.ticks(start, start + timedelta(days=14))
        gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(found)]
        return int(min(gaps)) if gaps else WEEK_S


def cron_line(cadence: Cadence, minute: int | None = None) -> str:
    """The cadence as a cron schedule; `minute` replaces a top-of-the-hour minute."""
    if cadence.cron is not None:
        fields = cadence.cron.text.split()
        if minute is not None and fields[0] == "0":
            fields[0] = str(minute)
        return " ".join(fields)
    step = cadence.every_s or 0
    m = str(minute if minute is not None else 0)
    if step < 3600:
        minutes = f"{minute % (step // 60)}-59/{step // 60}" if minute else f"*/{step // 60}"
        return f"{minutes} * * * *"
    if step < DAY_S:
        return f"{m} */{step // 3600} * * *"
    if step == DAY_S:
        return f"{m} 0 * * *"
    return f"{m} 0 * * 1"


def _systemd_field(values: frozenset[int], low: int, high: int, width: int = 2) -> str:
    if values == frozenset(range(low, high + 1)):
        return "*"
    return ",".join(f"{v:0{width}d}" for v in sorted(values))


def on_calendar(cadence: Cadence) -> str:
    """A systemd OnCalendar expression for the cadence, in UTC."""
    if cadence.cron is None:
        step = cadence.every_s or 0
        if step < 3600:
            return f"*-*-* *:00/{step // 60}:00 UTC"
        if step < DAY_S:
            return f"*-*-* 00/{step // 3600}:00:00 UTC"
        if step == DAY_S:
            return "*-*-* 00:00:00 UTC"
        return "Mon *-*-* 00:00:00 UTC"
    c = cadence.cron
    if not c.days_any and not c.weekdays_any:
        raise UserError(
            f"cron '{c.text}': a day of month and a day of week together mean either in cron "
            "but both in systemd: restrict only one of them"
        )
    dow = "" if c.weekdays_any else ",".join(_DOW_NAMES[d] for d in sorted(c.weekdays)) + " "
    months = _systemd_field(c.months, 1, 12)
    days = _systemd_field(c.days, 1, 31)
    hours = _systemd_field(c.hours, 0, 23)
    minutes = _systemd_field(c.minutes, 0, 59)
    return f"{dow}*-{months}-{days} {hours}:{minutes}:00 UTC"


def iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
