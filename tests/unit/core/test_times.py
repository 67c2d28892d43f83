"""core.times: the one place times are parsed and formatted, with known answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from orchestrator.core.errors import UserError
from orchestrator.core.times import (
    compact,
    iso,
    iso_of_epoch,
    of_epoch_ms,
    parse_compact,
    parse_since,
    parse_utc,
    read_utc,
    stamp,
    utc_now,
)


def test_a_record_stamp_is_utc_to_the_millisecond():
    moment = datetime(2026, 11, 22, 1, 30, 5, 123999, tzinfo=UTC)
    assert stamp(moment) == "2026-11-22T01:30:05.123Z"  # truncated, not rounded
    plus_two = moment.astimezone(timezone(timedelta(hours=2)))
    assert stamp(plus_two) == "2026-11-22T01:30:05.123Z"
    now = utc_now()
    assert now.utcoffset() == timedelta(0) and now.microsecond % 1000 == 0
    assert parse_utc(stamp(now)) == now  # a time set now equals itself read back
    assert stamp(datetime(2026, 11, 22, tzinfo=UTC)) == "2026-11-22T00:00:00.000Z"


def test_a_stored_time_in_milliseconds_reads_back_exactly():
    import random

    rng = random.Random(1)
    first, last = datetime(1990, 1, 1, tzinfo=UTC), datetime(2242, 1, 1, tzinfo=UTC)
    span_ms = int((last - first).total_seconds() * 1000)
    for _ in range(20_000):  # every millisecond of the results' years, as its datetime
        moment = first + timedelta(milliseconds=rng.randrange(span_ms))
        ms = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
        assert of_epoch_ms(ms) == moment and of_epoch_ms(ms).tzinfo is UTC
    assert stamp(of_epoch_ms(1_795_311_005_123)) == "2026-11-22T01:30:05.123Z"


def test_iso_is_to_the_second_and_an_unset_epoch_is_none():
    assert iso(datetime(2026, 11, 22, 1, 30, 59, 999999, tzinfo=UTC)) == "2026-11-22T01:30:59Z"
    assert iso_of_epoch(1_795_306_200) == "2026-11-22T00:10:00Z"
    assert iso_of_epoch(0) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-22T01:30:05.123Z", datetime(2026, 11, 22, 1, 30, 5, 123000, tzinfo=UTC)),
        ("2026-11-22T03:30:05+02:00", datetime(2026, 11, 22, 1, 30, 5, tzinfo=UTC)),
        ("2026-11-22T01:30:05", datetime(2026, 11, 22, 1, 30, 5, tzinfo=UTC)),  # taken as UTC
        (" 2026-11-22T01:30:05Z ", datetime(2026, 11, 22, 1, 30, 5, tzinfo=UTC)),
        ("", None),
        ("yesterday", None),
        ("2026-13-01T00:00:00Z", None),
        (None, None),
        (1_795_397_400, None),
    ],
)
def test_a_time_read_back_is_an_aware_utc_datetime_or_none(text, expected):
    got = parse_utc(text)
    assert got == expected
    if got is not None:
        assert got.utcoffset() == timedelta(0)


def test_a_time_that_must_be_one_is_a_one_line_error_naming_the_value_and_the_format():
    assert read_utc("2026-11-22T01:30:05.123Z") == datetime(2026, 11, 22, 1, 30, 5, 123000, UTC)
    for bad, shown in [("soon", "'soon'"), (None, "'None'"), ("", "''"), (17, "'17'")]:
        with pytest.raises(UserError) as caught:
            read_utc(bad, "ended_utc")
        assert str(caught.value) == (
            f"ended_utc {shown} is not a UTC time like 2026-11-22T01:30:00.123Z"
        )
    assert parse_utc("0001-01-01T00:00:00+01:00") is None  # before the calendar in UTC
    with pytest.raises(UserError) as caught:
        read_utc("2026-11-22\nT01:30Z" + "x" * 60, "created_utc")
    assert str(caught.value).startswith("created_utc '2026-11-22?T01:30Zxxx")
    assert "\n" not in str(caught.value) and "x" * 30 not in str(caught.value)


def test_a_sweep_ids_time_is_to_the_minute_and_reads_back():
    moment = datetime(2026, 11, 22, 1, 30, 59, tzinfo=UTC)
    assert compact(moment) == "20261122T0130Z"
    assert compact(moment.astimezone(timezone(timedelta(hours=-5)))) == "20261122T0130Z"
    assert parse_compact("20261122T0130Z-3fa2") == datetime(2026, 11, 22, 1, 30, tzinfo=UTC)
    assert parse_compact(compact(moment)) == moment.replace(second=0)
    with pytest.raises(UserError, match="sweep id 'latest' does not start with a UTC time like"):
        parse_compact("latest")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
        ("2026-11-01T06:00Z", datetime(2026, 11, 1, 6, tzinfo=UTC)),
        ("2026-11-01T06:00", datetime(2026, 11, 1, 6, tzinfo=UTC)),
        ("2026-11-01 06:00:00", datetime(2026, 11, 1, 6, tzinfo=UTC)),
        ("2026-11-01T08:00+02:00", datetime(2026, 11, 1, 6, tzinfo=UTC)),
    ],
)
def test_a_since_value_is_a_date_or_a_time(text, expected):
    assert parse_since(text) == expected


def test_a_since_value_that_is_not_a_time_names_it_and_the_forms_taken():
    with pytest.raises(UserError) as caught:
        parse_since("last tuesday")
    assert str(caught.value) == (
        "--since 'last tuesday': give a UTC date or time, e.g. 2026-11-01 or 2026-11-01T06:00Z"
    )
