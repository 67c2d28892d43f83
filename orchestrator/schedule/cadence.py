"""When a scheduled sweep is due: `every` on a UTC grid (a duration of core.durations),
or a cron line.

Pure functions of their arguments (no clock read here): `ticks(cadence, start, end)`
lists the due times, and the same cadence is turned into a systemd OnCalendar
expression and a cron line, so every way of installing a profile agrees on when.

A cron line has the 5 fields of cron (minute hour day-of-month month day-of-week), with
names (`MON-FRI`, `JAN,JUL`, any case) and the macros `@hourly`, `@daily` (`@midnight`),
`@weekly`, `@monthly`, `@yearly` (`@annually`). It is written out with numbers, which
every cron, systemd and GitHub Actions read the same way; croniter computes its due
times at run time. croniter's own extensions (`L`, `W`, `#`, `?`, `H`, a seconds
field) are refused: systemd and Actions have no equivalent.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from croniter import CroniterBadDateError, croniter

from orchestrator.core import DurationError, UserError, parse_seconds

DAY_S = 86_400
WEEK_S = 7 * DAY_S
# cron fields: name, smallest, largest
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12))
_DOW_NAMES = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# field index -> name -> number: months in field 3, weekdays in field 4
_NAMES = {
    3: {n.lower(): i + 1 for i, n in enumerate(_MONTH_NAMES)},
    4: {n.lower(): i for i, n in enumerate(_DOW_NAMES)},
}
MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
# the ticks a cron line's shortest gap is looked for in (a year of a weekly line)
_GAP_TICKS = 60


def parse_duration(text: object) -> int:
    """A profile's `every` or `slip` in whole seconds: `PT6H`, `6h`, `P1W`, `90m`
    (the one grammar of core.durations)."""
    try:
        seconds = parse_seconds(text)
    except DurationError as e:
        raise UserError(str(e)) from None
    if seconds != int(seconds):
        raise UserError(f"'{text}' is not a whole number of seconds")
    return int(seconds)


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

    def matches(self, t: datetime) -> bool:
        """Whether the minute of `t` is a due time (the sets the exports are written from)."""
        return t.minute in self.minutes and t.hour in self.hours and self.matches_day(t)

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


def _numbers(field: str, index: int, line: str) -> str:
    """A field with its month or weekday names written as numbers: MON-FRI -> 1-5."""
    names = _NAMES.get(index, {})

    def number(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        if word not in names:
            known = "JAN-DEC in the month field, SUN-SAT in the weekday field"
            raise UserError(f"cron '{line}': '{match.group(0)}' is not a name cron knows ({known})")
        return str(names[word])

    return re.sub(r"[A-Za-z]+", number, field)


def parse_cron(line: str) -> Cron:
    text = " ".join(str(line).split())
    if text.startswith("@"):
        if text.lower() not in MACROS:
            raise UserError(f"cron '{line}': unknown macro (known: {', '.join(MACROS)})")
        text = MACROS[text.lower()]
    fields = text.split()
    if len(fields) != 5:
        raise UserError(
            f"cron '{line}': expected 5 fields (minute hour day month weekday), got {len(fields)}"
        )
    fields = [_numbers(f, i, str(line)) for i, f in enumerate(fields)]
    minutes, hours, days, months = (
        _field(f, n, lo, hi, line) for f, (n, lo, hi) in zip(fields, _FIELDS, strict=False)
    )
    weekdays = _field(fields[4], "day of week", 0, 7, line)
    if fields[4] == "*" and not any(d <= _MONTH_DAYS[m] for m in months for d in days):
        raise UserError(
            f"cron '{line}': no month listed has any of the days listed, so it would never "
            "run: give a day of month that exists in one of the months"
        )
    text = " ".join(fields)
    if not croniter.is_valid(text):  # what croniter cannot run is refused now, not at a tick
        raise UserError(f"cron '{line}': not a cron line croniter can run")
    return Cron(
        text=text,
        minutes=minutes,
        hours=hours,
        days=days,
        months=months,
        weekdays=frozenset(d % 7 for d in weekdays),  # 7 is Sunday too
        days_any=fields[2] == "*",
        weekdays_any=fields[4] == "*",
    )


def cron_ticks(cron: Cron, start: datetime, end: datetime) -> Iterator[datetime]:
    """Due times t with start < t <= end, in order (croniter's)."""
    if end <= start:
        return
    found = croniter(cron.text, start.astimezone(UTC))
    while (t := found.get_next(datetime)) <= end:
        yield t


def _cron_prev(cron: Cron, now: datetime) -> datetime | None:
    """The latest due time at or before `now`."""
    minute = now.astimezone(UTC).replace(second=0, microsecond=0)
    if cron.matches(minute):
        return minute
    try:
        return croniter(cron.text, minute).get_prev(datetime)
    except CroniterBadDateError:
        return None


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
        if self.cron is not None:
            t = _cron_prev(self.cron, now)
            return t if t is not None and (now - t).total_seconds() <= lookback_s else None
        if self.every_s:
            lookback_s = self.every_s
        found = self.ticks(now - timedelta(seconds=lookback_s + 1), now)
        return found[-1] if found else None

    def next_tick(self, now: datetime) -> datetime | None:
        if self.cron is not None:
            return next(cron_ticks(self.cron, now, now + timedelta(days=366)), None)
        horizon = self.every_s or 366 * DAY_S
        found = self.ticks(now, now + timedelta(seconds=horizon))
        return found[0] if found else None

    def interval_s(self) -> int:
        """The grid interval, or the shortest gap of a cron line over two weeks."""
        if self.every_s:
            return self.every_s
        assert self.cron is not None
        start = datetime(2026, 1, 5, tzinfo=UTC)
        found = list(
            itertools.islice(cron_ticks(self.cron, start, start + timedelta(days=14)), _GAP_TICKS)
        )
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
